//! Choosing and ordering records for crates with hundreds of kernels: `--kernel REGEX`,
//! `--file GLOB`, `--sort`.

use std::path::Path;

use clap::ValueEnum;
use regex::Regex;

use crate::record::Record;

/// `--sort`: which records come first.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// Most registers per thread first.
    Registers,
    /// Most spill bytes (stores + loads) first.
    Spills,
    /// Lowest occupancy first (kernels that cannot launch at their block size lead).
    Occupancy,
    /// By kernel name, then arch.
    Name,
}

/// A file pattern: `*` and `?` match within one path component, `**` across components,
/// `[abc]`/`[!abc]` a character class. A pattern without `/` matches the file name; one with `/`
/// the path relative to the crate root or to the kernel folder.
#[derive(Debug, Clone)]
pub struct Glob {
    text: String,
    regex: Regex,
}

impl Glob {
    /// Compiles `pattern`; the error says what is wrong with it.
    pub fn new(pattern: &str) -> Result<Glob, String> {
        let mut re = String::from("^");
        let chars: Vec<char> = pattern.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '*' if chars.get(i + 1) == Some(&'*') => {
                    // `**/` also matches no folder at all (`**/a.cu` matches `a.cu`).
                    if chars.get(i + 2) == Some(&'/') {
                        re.push_str("(?:.*/)?");
                        i += 3;
                    } else {
                        re.push_str(".*");
                        i += 2;
                    }
                    continue;
                }
                '*' => re.push_str("[^/]*"),
                '?' => re.push_str("[^/]"),
                '[' => {
                    let close = chars[i + 1..].iter().position(|&c| c == ']').map(|p| p + i + 1);
                    let Some(close) = close.filter(|&c| c > i + 1) else {
                        return Err(format!("`{pattern}`: `[` at character {} has no closing `]`", i + 1));
                    };
                    re.push('[');
                    let mut body: &[char] = &chars[i + 1..close];
                    if let Some(('!' | '^', rest)) = body.split_first() {
                        re.push('^');
                        body = rest;
                    }
                    for &c in body {
                        // Inside a class only these are special to the regex syntax.
                        if matches!(c, '\\' | '[' | ']' | '&' | '~' | '^') {
                            re.push('\\');
                        }
                        re.push(c);
                    }
                    re.push(']');
                    i = close + 1;
                    continue;
                }
                c => re.push_str(&regex::escape(&c.to_string())),
            }
            i += 1;
        }
        re.push('$');
        let regex = Regex::new(&re).map_err(|e| format!("`{pattern}`: {e}"))?;
        Ok(Glob { text: pattern.to_string(), regex })
    }

    /// Whether `file` (relative to the crate root, `/`-separated) matches; `kernel_dir` is the
    /// crate's kernel folder.
    pub fn matches(&self, file: &str, kernel_dir: Option<&Path>) -> bool {
        if !self.text.contains('/') {
            let name = file.rsplit('/').next().unwrap_or(file);
            return self.regex.is_match(name);
        }
        if self.regex.is_match(file) {
            return true;
        }
        let dir = kernel_dir.map(|d| d.to_string_lossy().replace('\\', "/"));
        let in_dir = dir.as_deref().and_then(|d| file.strip_prefix(d.trim_end_matches('/'))?.strip_prefix('/'));
        in_dir.is_some_and(|rel| self.regex.is_match(rel))
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// `--kernel` and `--file` together: a record is shown when it matches both.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Matched (unanchored) against the display name and the qualified name.
    pub kernel: Option<Regex>,
    /// Matched against the source file.
    pub file: Option<Glob>,
}

impl Filter {
    /// Whether `r` is selected; `kernel_dir` is its crate's kernel folder.
    pub fn matches(&self, r: &Record, kernel_dir: Option<&Path>) -> bool {
        self.matches_kernel(&r.display_name, &r.qualified, &r.file, kernel_dir)
    }

    /// Whether a kernel with these names, in `file`, is selected.
    pub fn matches_kernel(&self, display_name: &str, qualified: &str, file: &str, kernel_dir: Option<&Path>) -> bool {
        let kernel_ok = self.kernel.as_ref().is_none_or(|re| re.is_match(display_name) || re.is_match(qualified));
        kernel_ok && self.file.as_ref().is_none_or(|g| g.matches(file, kernel_dir))
    }

    /// Whether anything is filtered.
    pub fn is_active(&self) -> bool {
        self.kernel.is_some() || self.file.is_some()
    }

    /// `--kernel 'x' --file 'y'`, for messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(re) = &self.kernel {
            parts.push(format!("--kernel '{}'", re.as_str()));
        }
        if let Some(g) = &self.file {
            parts.push(format!("--file '{}'", g.as_str()));
        }
        parts.join(" ")
    }
}

/// Orders `records` by `key`; equal records keep their order (source order, lowest arch first).
pub fn sort(records: &mut [&Record], key: SortKey) {
    let spills = |r: &Record| r.ptxas.resources.spill_stores + r.ptxas.resources.spill_loads;
    // A kernel that cannot launch at its block size has no occupancy at all: it sorts first.
    let occupancy = |r: &Record| if r.occupancy.launch_error.is_some() { -1.0 } else { r.occupancy.percent };
    match key {
        SortKey::Registers => records.sort_by_key(|r| std::cmp::Reverse(r.ptxas.resources.registers)),
        SortKey::Spills => records.sort_by_key(|r| std::cmp::Reverse(spills(r))),
        SortKey::Occupancy => records.sort_by(|a, b| occupancy(a).total_cmp(&occupancy(b))),
        SortKey::Name => records.sort_by(|a, b| (&a.display_name, a.arch).cmp(&(&b.display_name, b.arch))),
    }
}

/// `--kernel`'s parser: a regular expression, refused with the reason when malformed.
pub fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| e.to_string())
}

/// `--file`'s parser.
pub fn parse_glob(s: &str) -> Result<Glob, String> {
    Glob::new(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names_without_a_slash_and_paths_with_one() {
        let g = Glob::new("*.cu").unwrap();
        assert!(g.matches("kernels/sub/affine.cu", None));
        assert!(!g.matches("kernels/affine.cuh", None));
        let g = Glob::new("sub/*.cu").unwrap();
        assert!(g.matches("kernels/sub/a.cu", Some(Path::new("kernels"))), "relative to the kernel folder");
        assert!(!g.matches("kernels/sub/deep/a.cu", Some(Path::new("kernels"))), "* stays in one folder");
        let g = Glob::new("kernels/**/a.cu").unwrap();
        assert!(g.matches("kernels/a.cu", None));
        assert!(g.matches("kernels/x/y/a.cu", None));
        let g = Glob::new("q?ant[!x].cu").unwrap();
        assert!(g.matches("kernels/quant1.cu", None));
        assert!(!g.matches("kernels/quantx.cu", None));
        let g = Glob::new("a+b(1).cu").unwrap();
        assert!(g.matches("k/a+b(1).cu", None), "regex characters are literal");
        assert!(Glob::new("[abc.cu").unwrap_err().contains("no closing `]`"));
    }
}

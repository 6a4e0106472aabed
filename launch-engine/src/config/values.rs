//! The readers of launch's own settings in Cargo.toml (block sizes, byte counts, arches,
//! toolchains, flags, defines, patterns, paths), each with the error the user sees.

use std::path::{Path, PathBuf};

use crate::quantity::Quantity;
use launch::Arch;
use toml_edit::{Key, Value};

use super::document::{Doc, Node, Ref};
use super::flags::{self, Mapped};
use crate::error::{Error, Location};
use crate::toolchain::pin::{self, Pin};

impl Doc<'_> {
    /// `threads`: a block size, 1 to 1024 (`crate::quantity::Quantity::BlockSize`).
    pub(super) fn block_size(&self, node: &Node) -> Result<u32, Error> {
        self.quantity(node, Quantity::BlockSize)
    }

    /// An integer checked by the rule of `q`, the one every entry point of `q` applies, shown as
    /// written (`0x1000`) when out of range.
    pub(super) fn quantity(&self, node: &Node, q: Quantity) -> Result<u32, Error> {
        let (low, high) = q.bounds();
        let n = self.integer(node, &format!("an integer from {low} to {high}"))?;
        q.check(n).map_err(|mut e| {
            e.value = self.shown(node);
            self.error(node.span.clone(), &node.path, e.to_string())
        })
    }

    /// `max-spill-bytes`, `dynamic-smem`: 0 to `u32::MAX`.
    pub(super) fn bytes(&self, node: &Node) -> Result<u32, Error> {
        const EXPECTED: &str = "a non-negative integer number of bytes";
        let n = self.integer(node, EXPECTED)?;
        u32::try_from(n).map_err(|_| {
            let message = format!("{} is not a byte count; expected {EXPECTED} (0 to {})", self.shown(node), u32::MAX);
            self.error(node.span.clone(), &node.path, message)
        })
    }

    /// `toolchain = "13.0"` → its pin; anything else names the pinned lines.
    pub(super) fn toolchain(&self, node: &Node) -> Result<Pin, Error> {
        let name = self.string(node, "a toolchain version string such as \"12.9\"")?;
        // Exactly a pin's name: `" 12.9"` is refused (with the hint below), as every value with spaces is.
        Pin::named(name).ok_or_else(|| {
            // `13`, `13.x`, `v13.0`, `13.0.88`, ` 12.9`: the pin of that major.
            let major = name.trim().trim_start_matches(['v', 'V']).split('.').next().unwrap_or("");
            let hint = pin::PINS
                .iter()
                .find(|p| major == p.major.to_string())
                .map(|p| format!(" (did you mean \"{}\"?)", p.name))
                .unwrap_or_default();
            let message =
                format!("{} is not a pinned toolchain{hint}; valid choices: {}", self.shown(node), pin::names());
            self.error(node.span.clone(), &node.path, message)
        })
    }

    /// `arch = ["sm_90", ...]` → sorted, deduplicated arches, each one `toolchain` can target.
    pub(super) fn arches(&self, list: &Node, toolchain: &Pin) -> Result<Vec<Arch>, Error> {
        let items = self.array(list, "a list of arch names such as [\"sm_90\"]")?;
        if items.is_empty() {
            return Err(self.error(
                list.span.clone(),
                &list.path,
                format!(
                    "the list is empty; name at least one GPU architecture; valid choices: {}",
                    launch::KNOWN_ARCHES.join(", ")
                ),
            ));
        }
        let mut arches = Vec::new();
        for a in &items {
            let name = self.string(a, "an arch name such as \"sm_90\"")?;
            let arch = name.parse::<Arch>().map_err(|e| self.error(a.span.clone(), &a.path, e.to_string()))?;
            if !toolchain.can_target(arch) {
                return Err(self.error(a.span.clone(), &a.path, untargetable(arch, toolchain)));
            }
            arches.push(arch);
        }
        arches.sort();
        arches.dedup();
        Ok(arches)
    }

    /// `min-driver = "12.4"`: a CUDA release of `launch::compat::TOOLKITS`.
    pub(super) fn cuda_version(&self, node: &Node) -> Result<launch::compat::CudaVersion, Error> {
        let text = self.string(node, "a CUDA version string such as \"12.4\"")?;
        crate::compat::parse_version(text).map_err(|e| {
            let message = format!("{e} (the oldest driver the crate must run on, as its CUDA version)");
            self.error(node.span.clone(), &node.path, message)
        })
    }

    /// `ptx-consts = "ptx.rs"` → the file name and where it is written: one file directly under
    /// `OUT_DIR` (no folder, so it can never replace another output), a Rust file.
    pub(super) fn ptx_consts(&self, node: &Node) -> Result<(String, Location), Error> {
        let name = self.string(node, "a file name such as \"ptx.rs\"")?;
        let bad = |why: &str| {
            let message = format!("`{}` {why}; write a file name such as \"ptx.rs\"", name.escape_debug());
            self.error(node.span.clone(), &node.path, message)
        };
        if name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(bad("is not a plain file name (the file is written directly under OUT_DIR)"));
        }
        if name.len() <= 3 || !name.ends_with(".rs") || name.chars().any(char::is_control) {
            return Err(bad("is not the name of a Rust file (`<name>.rs`)"));
        }
        Ok((name.to_string(), super::document::location(self.path, self.text, node.span.clone())))
    }

    /// `cache-remote = "s3://bucket/prefix"` → the URL and where it is written. A password in it is
    /// refused: Cargo.toml is committed and published; credentials come from the environment.
    pub(super) fn cache_remote(&self, node: &Node) -> Result<(crate::cache::RemoteUrl, String), Error> {
        let text = self.string(node, "a URL such as \"s3://bucket/prefix\"")?;
        let url = crate::cache::RemoteUrl::parse(text).map_err(|m| self.error(node.span.clone(), &node.path, m))?;
        if url.has_password() {
            let message = "a password in Cargo.toml is published with the crate: remove it, and give credentials \
                           through LAUNCH_CACHE_REMOTE (webdav) or the AWS environment (s3)";
            return Err(self.error(node.span.clone(), &node.path, message.to_string()));
        }
        Ok((url, super::document::location(self.path, self.text, node.span.clone()).to_string()))
    }

    /// `flags = [...]` → the mapped flags, each with the element it came from; a refused flag is
    /// an error at its element.
    pub(super) fn nvrtc_flags<'n>(&self, list: &Node<'n>) -> Result<Vec<(Node<'n>, Mapped)>, Error> {
        let items = self.strings(list, "a list of compiler options such as [\"-std=c++17\"]")?;
        let texts: Vec<&str> = items.iter().map(|(_, s)| *s).collect();
        let mapped = flags::map_nvrtc_located(&texts).map_err(|r| self.refused(&items, r))?;
        Ok(mapped.into_iter().map(|(i, m)| (items[i].0.clone_node(), m)).collect())
    }

    /// `ptxas-flags = [...]` → canonical ptxas options.
    pub(super) fn ptxas_flags(&self, list: &Node) -> Result<Vec<String>, Error> {
        let items = self.strings(list, "a list of ptxas options such as [\"-O3\"]")?;
        let texts: Vec<&str> = items.iter().map(|(_, s)| *s).collect();
        flags::map_ptxas(&texts).map_err(|r| self.refused(&items, r))
    }

    pub(super) fn refused(&self, items: &[(Node, &str)], r: flags::Refused) -> Error {
        match items.get(r.index) {
            Some((node, _)) => self.error(node.span.clone(), &node.path, r.message),
            None => self.error(None, "flags", r.message),
        }
    }

    /// `types`: C++ type names → Rust paths (`crate::Params`, `::other_crate::Params`).
    pub(super) fn rust_types(&self, t: &Node) -> Result<std::collections::BTreeMap<String, String>, Error> {
        let entries =
            self.table(t, "a table of C++ type names and Rust paths such as { Params = \"crate::Params\" }")?;
        let mut types = std::collections::BTreeMap::new();
        for (name, _) in entries.iter() {
            let Some((key, item)) = entries.get_key_value(name) else { continue };
            let Some(value) = t.entry(key, item) else { continue };
            let path = self.string(&value, "a Rust path such as \"crate::Params\"")?;
            if !is_rust_path(path) {
                let message = format!(
                    "`{path}` is not a Rust type path; expected one such as \"crate::Params\" (identifiers joined by `::`)"
                );
                return Err(self.error(value.span.clone(), &value.path, message));
            }
            types.insert(name.trim().to_string(), path.to_string());
        }
        Ok(types)
    }

    /// A table of macro definitions, in the order written.
    pub(super) fn defines(&self, d: &Node) -> Result<Vec<(String, Option<String>)>, Error> {
        let entries = self.table(d, "a table of macro definitions such as { N = 128 }")?;
        let mut defines = Vec::new();
        for (name, _) in entries.iter() {
            let Some((key, item)) = entries.get_key_value(name) else { continue };
            let Some(value) = d.entry(key, item) else { continue };
            if !is_identifier(name) {
                let message = format!(
                    "`{name}` is not a C identifier; expected a macro name of letters, digits and `_`, not starting with a digit"
                );
                return Err(self.error(key.span().or(value.span.clone()), &value.path, message));
            }
            defines.push((name.to_string(), self.define_value(&value)?));
        }
        Ok(defines)
    }

    /// A file's `arch`: names from the crate's own list.
    pub(super) fn arch_subset(&self, list: &Node, crate_arches: &[Arch]) -> Result<Vec<Arch>, Error> {
        let items = self.array(list, "a list of arch names such as [\"sm_90\"]")?;
        if items.is_empty() {
            let message = "the list is empty; to leave files out, use `exclude`".to_string();
            return Err(self.error(list.span.clone(), &list.path, message));
        }
        let mut arches = Vec::new();
        for a in &items {
            let name = self.string(a, "an arch name such as \"sm_90\"")?;
            let arch = name.parse::<Arch>().map_err(|e| self.error(a.span.clone(), &a.path, e.to_string()))?;
            if !crate_arches.contains(&arch) {
                let listed: Vec<String> = crate_arches.iter().map(|a| a.to_string()).collect();
                let message = format!(
                    "`{arch}` is not in the crate's `arch` ({}); a file's `arch` chooses among those",
                    listed.join(", ")
                );
                return Err(self.error(a.span.clone(), &a.path, message));
            }
            arches.push(arch);
        }
        arches.sort();
        arches.dedup();
        Ok(arches)
    }

    /// A file pattern (an `exclude` entry): relative, not empty, `./` and a trailing `/` dropped.
    pub(super) fn pattern(&self, node: &Node, expected: &str) -> Result<String, Error> {
        let s = self.string(node, expected)?;
        self.check_pattern(s).map_err(|message| self.error(node.span.clone(), &node.path, message))
    }

    /// The pattern of a `[package.metadata.launch.file."<pattern>"]` table.
    pub(super) fn pattern_key(&self, node: &Node, key: &Key, pattern: &str) -> Result<String, Error> {
        self.check_pattern(pattern).map_err(|message| self.error(key.span().or(node.span.clone()), &node.path, message))
    }

    pub(super) fn check_pattern(&self, s: &str) -> Result<String, String> {
        let trimmed = s.trim_start_matches("./").trim_end_matches('/');
        if trimmed.is_empty() {
            Err(format!("`{s}` names no file; expected a file, folder or pattern relative to the kernel folder"))
        } else if trimmed.starts_with('/') || Path::new(trimmed).is_absolute() {
            Err(format!("`{s}` is absolute; expected a file, folder or pattern relative to the kernel folder"))
        } else {
            Ok(trimmed.to_string())
        }
    }

    /// A folder path relative to Cargo.toml (whether it exists is checked by the caller).
    pub(super) fn relative_path(&self, node: &Node, expected: &str) -> Result<PathBuf, Error> {
        let s = self.string(node, expected)?;
        let message = if s.is_empty() {
            format!("\"\" is an empty path; expected {expected}")
        } else if Path::new(s).is_absolute() {
            format!("`{s}` is absolute; use a path relative to Cargo.toml so the crate builds anywhere")
        } else {
            return Ok(PathBuf::from(s));
        };
        Err(self.error(node.span.clone(), &node.path, message))
    }

    /// An include folder: relative to Cargo.toml, or absolute (an installed toolkit's or wheel's
    /// headers, used as given; cache keys hold its headers' content, not its place).
    pub(super) fn include_path(&self, node: &Node, expected: &str) -> Result<PathBuf, Error> {
        let s = self.string(node, expected)?;
        if s.is_empty() {
            return Err(self.error(
                node.span.clone(),
                &node.path,
                format!("\"\" is an empty path; expected {expected}"),
            ));
        }
        Ok(PathBuf::from(s))
    }

    /// A `defines` value → the text after `-DNAME=`, or `None` for `-DNAME`.
    pub(super) fn define_value(&self, node: &Node) -> Result<Option<String>, Error> {
        let bad = |message: String| Err(self.error(node.span.clone(), &node.path, message));
        match node.r {
            Ref::Value(Value::String(s)) => {
                let v = s.value();
                if v.contains(['\n', '\r', '\0']) {
                    return bad(format!(
                        "{} has a line break or NUL; a macro value must be one line",
                        self.shown(node)
                    ));
                }
                Ok(Some(v.to_string()))
            }
            Ref::Value(Value::Integer(i)) => Ok(Some(i.value().to_string())),
            Ref::Value(Value::Float(f)) => {
                let x = *f.value();
                if !x.is_finite() {
                    return bad(format!("{} is not a finite number; C has no literal for it", self.shown(node)));
                }
                // `{:?}` keeps the point (`1.0`, `1e-7`), so a float stays a float in C.
                Ok(Some(format!("{x:?}")))
            }
            Ref::Value(Value::Boolean(b)) => Ok(if *b.value() { None } else { Some("0".to_string()) }),
            _ => Err(self.wrong_type(node, "a string, integer, floating-point number or boolean (the macro's value)")),
        }
    }
}

/// Why `toolchain` cannot build `arch`, and which pinned toolchains can.
pub(super) fn untargetable(arch: Arch, toolchain: &Pin) -> String {
    let can: Vec<String> = pin::PINS.iter().filter(|p| p.can_target(arch)).map(|p| format!("\"{}\"", p.name)).collect();
    let default = if *toolchain == pin::DEFAULT { "the default " } else { "" };
    let instead = match can.as_slice() {
        [] => "no pinned toolchain can".to_string(),
        [one] => format!("toolchain {one} can (set `toolchain = {one}`)"),
        many => format!("toolchains {} can", many.join(", ")),
    };
    format!("{default}toolchain \"{}\" cannot target `{arch}`; {instead}", toolchain.name)
}

/// Why `path` is not a usable folder (`does not exist`, `is a file, not a folder`, ...), or `None`.
pub(super) fn folder_problem(path: &Path) -> Option<String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some("does not exist".into()),
        Err(e) => return Some(format!("cannot be read: {e}")),
    };
    if meta.is_dir() {
        return None;
    }
    if meta.is_file() {
        return Some("is a file, not a folder".into());
    }
    if !meta.file_type().is_symlink() {
        return Some("is not a folder (it is a special file)".into());
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some(format!("is a symbolic link to {}, which is not a folder", link_chain(path).0)),
        Err(e) => Some(link_problem(path, &e)),
    }
}

/// The targets of the chain of links starting at `path`, as written (`` `a` → `b` ``), and
/// whether the chain comes back to a link it has passed (or is too long to follow).
pub(super) fn link_chain(path: &Path) -> (String, bool) {
    let mut seen = vec![path.to_path_buf()];
    let mut chain = Vec::new();
    let mut at = path.to_path_buf();
    while let Ok(target) = std::fs::read_link(&at) {
        chain.push(format!("`{}`", target.display()));
        let next = at.parent().unwrap_or(Path::new("")).join(&target);
        // Linux gives up after 40 links; so does this.
        if seen.contains(&next) || chain.len() > 40 {
            return (chain.join(" → "), true);
        }
        seen.push(next.clone());
        at = next;
    }
    (chain.join(" → "), false)
}

/// Why a link cannot be followed: a loop, a missing target, or the OS's reason. The OS error for
/// a loop (ELOOP) has no stable `io::ErrorKind`, so the chain is followed here.
pub(super) fn link_problem(path: &Path, e: &std::io::Error) -> String {
    let (chain, looped) = link_chain(path);
    if looped {
        format!("is a symbolic-link loop (it points to {chain}, back to itself)")
    } else if e.kind() == std::io::ErrorKind::NotFound {
        format!("is a symbolic link to {chain}, which does not exist")
    } else {
        format!("is a symbolic link to {chain}, which cannot be followed: {e}")
    }
}

pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// `crate::Params`, `::dep::m::Params`, `Params`: identifiers joined by `::` (no generics, which
/// the generated code would have to spell).
fn is_rust_path(path: &str) -> bool {
    let rest = path.strip_prefix("::").unwrap_or(path);
    !rest.is_empty() && rest.split("::").all(is_identifier)
}

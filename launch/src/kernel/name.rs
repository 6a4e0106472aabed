//! The one kernel-name matcher: what a kernel name a user writes names among a crate's kernels,
//! wherever it is written — a `[package.metadata.launch.kernel."<key>"]` or `tune` table,
//! `cargo launch explore KERNEL`, [`find`](super::find) at run time. Pure string logic over the
//! names a kernel carries ([`Names`]); the places differ only in what they do with the answer
//! (a settings table applies to every kernel it names exactly; the others want one).
//!
//! The forms, strongest first (see [`Match`]): the file and a name (`kernels/a.cu::ov(float*)`,
//! or the file's trailing path components, `a.cu::ov(float*)`), the file and the bare function
//! name (`a.cu::ov`), the symbol (`_Z2ovPf`), the demangled name (`ov(float*)`), the bare
//! function name (`ov`). A name that names some kernel by one of the exact forms (file and name,
//! symbol, demangled name) names those only; else it names every kernel whose bare name it is,
//! and when that is several, which one it means is the user's to say.

/// The names one kernel carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Names<'a> {
    /// Its entry symbol (mangled for a C++ kernel).
    pub symbol: &'a str,
    /// Its demangled name (the symbol itself for an `extern "C"` kernel).
    pub demangled: &'a str,
    /// Its file, relative to the crate root (`kernels/a.cu`).
    pub file: &'a str,
}

impl Names<'_> {
    /// Its qualified name, `kernels/a.cu::ov(float*)`: names it alone in its crate.
    pub fn qualified(&self) -> String {
        format!("{}::{}", self.file, self.demangled)
    }
}

/// How a name names a kernel, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    /// Its file and its symbol or demangled name (`kernels/a.cu::ov(float*)`).
    Qualified,
    /// Its file and its bare function name (`a.cu::ov`).
    QualifiedBare,
    /// Its symbol (`_Z2ovPf`).
    Symbol,
    /// Its demangled name (`ov(float*)`).
    Demangled,
    /// Its bare function name (`ov`).
    Bare,
}

impl Match {
    /// Whether this form names the kernel whatever other kernels there are (a bare name names
    /// one only when no other kernel has it).
    pub fn is_exact(self) -> bool {
        matches!(self, Match::Qualified | Match::Symbol | Match::Demangled)
    }
}

/// The function's own name, without return type, namespaces, template arguments or parameters:
/// `void ns::gemv<float, 32>(float const*)` → `gemv`; an `extern "C"` kernel's name is itself.
pub fn bare_name(demangled: &str) -> &str {
    let bytes = demangled.as_bytes();
    let (mut depth, mut start, mut end) = (0usize, 0usize, demangled.len());
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            // The parameters open after a name; other brackets are skipped.
            b'(' if depth == 0 && i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || b"_>".contains(&bytes[i - 1])) => {
                end = i;
                break;
            }
            b'(' | b'<' | b'{' | b'[' => depth += 1,
            b')' | b'>' | b'}' | b']' => depth = depth.saturating_sub(1),
            b' ' | b':' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    let name = &demangled[start.min(end)..end];
    // What precedes the first bracket of the name.
    name.split(['<', '(', '{', '[']).next().unwrap_or(name)
}

/// How `name` names the kernel `k`, `None` when it does not. The file ends at the first `.cu::`
/// (a demangled name may hold `::` itself) and is the kernel's file or its trailing path
/// components.
pub fn matches(name: &str, k: Names<'_>) -> Option<Match> {
    let (qualified, n) = match name.find(".cu::") {
        Some(at) => {
            let path = &name[..at + 3];
            let in_file = k.file == path || k.file.strip_suffix(path).is_some_and(|rest| rest.ends_with('/'));
            if !in_file {
                return None;
            }
            (true, &name[at + 5..])
        }
        None => (false, name),
    };
    let bare = !n.is_empty() && n == bare_name(k.demangled);
    match (qualified, n == k.symbol || n == k.demangled, bare) {
        (true, true, _) => Some(Match::Qualified),
        (true, false, true) => Some(Match::QualifiedBare),
        (false, true, _) => Some(if n == k.symbol { Match::Symbol } else { Match::Demangled }),
        (false, false, true) => Some(Match::Bare),
        _ => None,
    }
}

/// The kernels of `kernels` that `name` names, by index: every one it names exactly, else every
/// one whose bare name (alone or after the file) it is.
pub fn named<'a>(name: &str, kernels: impl IntoIterator<Item = Names<'a>>) -> Vec<usize> {
    let found: Vec<(usize, Match)> =
        kernels.into_iter().enumerate().filter_map(|(i, k)| matches(name, k).map(|m| (i, m))).collect();
    let exact = found.iter().any(|(_, m)| m.is_exact());
    found.into_iter().filter(|(_, m)| m.is_exact() == exact).map(|(i, _)| i).collect()
}

/// The one kernel of `kernels` that `name` names (see [`named`]).
///
/// # Errors
/// [`super::FindError::NotFound`] when it names none; [`super::FindError::Ambiguous`] with their qualified
/// names when it names several.
pub fn resolve<'a>(name: &str, kernels: &[Names<'a>]) -> Result<usize, super::FindError> {
    match named(name, kernels.iter().copied()).as_slice() {
        [one] => Ok(*one),
        [] => Err(super::FindError::NotFound { name: name.to_string() }),
        many => Err(super::FindError::Ambiguous {
            name: name.to_string(),
            candidates: many.iter().map(|&i| kernels[i].qualified()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_drop_return_type_namespaces_templates_and_parameters() {
        assert_eq!(bare_name("void (anonymous namespace)::gemm<X<1>, 2>(int)"), "gemm");
        assert_eq!(bare_name("void ns::F<int>::operator()(int)"), "operator");
        assert_eq!(bare_name("void k<main::{lambda(int)#1}>(int)"), "k");
        assert_eq!(bare_name("ov(float*)"), "ov");
        assert_eq!(bare_name("fill"), "fill");
    }
}

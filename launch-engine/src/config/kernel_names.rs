//! The names a `[package.metadata.launch.kernel."<key>"]` table may give a C++ kernel besides its
//! symbol and qualified name: its demangled name, and its bare function name when only one kernel
//! has it; and the closest keys that a table naming no kernel is shown.

use std::collections::BTreeMap;

pub use launch::kernel::name::bare_name;
use launch::kernel::name::Names;

use launch_schema::manifest::KernelEntry;

/// The names `k` carries, for `launch`'s one name matcher ([`launch::kernel::name`]): symbol,
/// demangled name (the tail of its qualified name: its display name may be qualified) and file.
pub fn names_of(k: &KernelEntry) -> Names<'_> {
    let demangled = k.qualified.strip_prefix(k.file.as_str()).and_then(|r| r.strip_prefix("::"));
    Names { symbol: &k.name, demangled: demangled.unwrap_or(&k.display_name), file: &k.file }
}

/// The kernels of `kernels` that `name` names, by index, as every place that takes a kernel
/// name reads it ([`launch::kernel::name::named`]).
pub fn named(name: &str, kernels: &[KernelEntry]) -> Vec<usize> {
    launch::kernel::name::named(name, kernels.iter().map(names_of))
}

/// How many kernels have each bare name.
pub(crate) fn bare_counts(kernels: &[KernelEntry]) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for k in kernels {
        *counts.entry(bare_name(&k.display_name)).or_insert(0) += 1;
    }
    counts
}

/// The shortest key that names `k` alone among `kernels`: its bare name when no other kernel has
/// it, else its qualified name.
fn key_for(k: &KernelEntry, counts: &BTreeMap<&str, usize>) -> String {
    let bare = bare_name(&k.display_name);
    if counts.get(bare) == Some(&1) {
        bare.to_string()
    } else {
        k.qualified.clone()
    }
}

/// Up to five keys, each naming one kernel of `kernels`, closest to `key` first: kernels whose
/// bare name is the key's, then those whose bare name holds it or is held by it, then those within
/// a small edit distance of it. Empty when none is close.
pub fn closest_kernel_keys(key: &str, kernels: &[KernelEntry]) -> Vec<String> {
    let wanted = bare_name(key.rsplit("::").next().unwrap_or(key)).to_ascii_lowercase();
    let counts = bare_counts(kernels);
    let mut scored: Vec<(usize, String)> = Vec::new();
    for k in kernels {
        let bare = bare_name(&k.display_name).to_ascii_lowercase();
        let score = if bare == wanted {
            0
        } else if !wanted.is_empty() && (bare.contains(&wanted) || wanted.contains(&bare)) {
            1
        } else {
            let d = crate::suggest::edit_distance(&wanted, &bare);
            if d > (wanted.len() / 3).max(2) {
                continue;
            }
            1 + d
        };
        let candidate = key_for(k, &counts);
        if !scored.iter().any(|(_, c)| *c == candidate) {
            scored.push((score, candidate));
        }
    }
    scored.sort();
    scored.into_iter().take(5).map(|(_, c)| c).collect()
}

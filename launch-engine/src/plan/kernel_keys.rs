//! The exact names a `[package.metadata.launch.kernel."<key>"]` table may give a kernel, read by
//! `launch`'s one name matcher ([`launch::kernel::name`]): its qualified name, `path::bare`, its
//! symbol, its demangled name and its bare function name (the bare forms only where they name
//! one kernel).

use launch::kernel::name::{self, Match};

use crate::config::{self, names_of, Config};
use crate::error::Error;
use launch_schema::manifest::KernelEntry;

/// Per kernel, the keys of the kernel tables that name it, strongest form first
/// ([`Match`]'s order: qualified, `path::bare`, symbol, demangled, bare). A key names every
/// kernel it names exactly (one `extern "C"` name in two files names both); a bare name that
/// several kernels share names none here ([`refuse_ambiguous`] refuses it first).
pub(super) fn keys_naming(c: &Config, kernels: &[KernelEntry]) -> Vec<Vec<String>> {
    let names: Vec<name::Names<'_>> = kernels.iter().map(names_of).collect();
    let mut out: Vec<Vec<(Match, String)>> = vec![Vec::new(); kernels.len()];
    // Every key, patterns too: `scale(float*)` is a glob and a demangled name.
    for key in c.kernel.keys() {
        let hits = name::named(key, names.iter().copied());
        let ambiguous =
            hits.len() > 1 && hits.iter().any(|&i| name::matches(key, names[i]).is_some_and(|m| !m.is_exact()));
        if ambiguous {
            continue;
        }
        for i in hits {
            if let Some(m) = name::matches(key, names[i]) {
                out[i].push((m, key.clone()));
            }
        }
    }
    out.into_iter()
        .map(|mut keys| {
            keys.sort();
            keys.into_iter().map(|(_, key)| key).collect()
        })
        .collect()
}

/// Fails at the first table whose key names no kernel exactly (symbol, demangled or qualified
/// name) but is the bare name (or `path::bare`) of several: which one it means is the user's to
/// say.
pub(super) fn refuse_ambiguous(c: &Config, kernels: &[KernelEntry]) -> Result<(), Error> {
    let names: Vec<name::Names<'_>> = kernels.iter().map(names_of).collect();
    for key in c.kernel.keys().filter(|key| !config::is_pattern(key)) {
        let hits = name::named(key, names.iter().copied());
        let bare = hits.iter().all(|&i| name::matches(key, names[i]).is_some_and(|m| !m.is_exact()));
        if hits.len() > 1 && bare {
            let listed: Vec<&str> = hits.iter().map(|&i| kernels[i].qualified.as_str()).collect();
            let location = c
                .places
                .kernels
                .get(key)
                .cloned()
                .unwrap_or(crate::error::Location::File { path: c.manifest_path.clone(), at: None });
            return Err(Error::Config {
                location,
                key: format!("package.metadata.launch.kernel.{}", quoted(key)),
                message: format!(
                    "`{key}` is the name of {} kernels; write one's qualified name (or its symbol) as the key: {}",
                    hits.len(),
                    listed.join("; ")
                ),
            });
        }
    }
    Ok(())
}

/// A TOML key as written: bare when it can be, else quoted.
fn quoted(name: &str) -> String {
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

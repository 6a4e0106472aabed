//! The exact names a `[package.metadata.launch.kernel."<key>"]` table may give a kernel: its
//! qualified name, `path::bare`, its symbol, its demangled name and its bare function name (the
//! last two forms only where they name one kernel).

use std::collections::BTreeMap;

use crate::config::{self, bare_name, Config};
use crate::error::Error;
use launch_schema::manifest::KernelEntry;

/// How many kernels have each bare name, in the crate and per file.
pub(super) struct Counts {
    crate_wide: BTreeMap<String, usize>,
    per_file: BTreeMap<(String, String), usize>,
}

impl Counts {
    pub(super) fn of(kernels: &[KernelEntry]) -> Counts {
        let crate_wide = config::bare_counts(kernels).into_iter().map(|(b, n)| (b.to_string(), n)).collect();
        let mut per_file = BTreeMap::new();
        for k in kernels {
            *per_file.entry((k.file.clone(), bare_name(&k.display_name).to_string())).or_insert(0) += 1;
        }
        Counts { crate_wide, per_file }
    }
}

/// The keys that name `k` exactly, strongest first: the qualified name, `path::bare` (when `k` is
/// the file's only kernel of that bare name), the symbol, the demangled name, and the bare name
/// (when `k` is the crate's only kernel of that name).
pub(super) fn exact_keys(k: &KernelEntry, counts: &Counts) -> Vec<String> {
    let bare = bare_name(&k.display_name).to_string();
    let mut keys = vec![k.qualified.clone()];
    if counts.per_file.get(&(k.file.clone(), bare.clone())) == Some(&1) {
        keys.push(format!("{}::{bare}", k.file));
    }
    keys.push(k.name.clone());
    keys.push(k.display_name.clone());
    if counts.crate_wide.get(&bare) == Some(&1) {
        keys.push(bare);
    }
    keys
}

/// Fails at the first table whose key is no kernel's symbol, demangled or qualified name but the
/// bare name (or `path::bare`) of several kernels: which one it means is the user's to say.
pub(super) fn refuse_ambiguous(c: &Config, kernels: &[KernelEntry]) -> Result<(), Error> {
    for key in c.kernel.keys().filter(|key| !config::is_pattern(key)) {
        let whole = |k: &KernelEntry| [&k.name, &k.display_name, &k.qualified].contains(&key);
        if kernels.iter().any(whole) {
            continue;
        }
        let named: Vec<&KernelEntry> = kernels
            .iter()
            .filter(|k| {
                let bare = bare_name(&k.display_name);
                key == bare || *key == format!("{}::{bare}", k.file)
            })
            .collect();
        if named.len() > 1 {
            let listed: Vec<&str> = named.iter().map(|k| k.qualified.as_str()).collect();
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
                    named.len(),
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

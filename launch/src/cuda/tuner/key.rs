//! What identifies a tuning run in the cache besides the problem: the candidates' code (hashed
//! once per kernel and process) and the device.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::cuda::check::DeviceInfo;
#[cfg(doc)]
use crate::tune::TuneKey;
use crate::tune::{kernel_hash, DeviceKey, StableHasher};
use crate::Kernel;

impl From<&DeviceInfo> for DeviceKey {
    fn from(info: &DeviceInfo) -> DeviceKey {
        DeviceKey {
            name: info.name.clone(),
            compute_capability: info.limits.compute_capability(),
            driver_version: info.driver_version,
        }
    }
}

/// `kernel`, then its variants.
pub(super) fn with_variants(kernel: &'static Kernel) -> Vec<&'static Kernel> {
    std::iter::once(kernel).chain(kernel.variants()).collect()
}

/// The candidates' code: [`kernel_hash`] of the first when all share its module (so the key
/// equals [`TuneKey::new`]'s), else of each module's first candidate, combined. Hashing a module
/// reads all its images, so the hash is computed once per kernel and process.
pub(super) fn candidates_hash(candidates: &[&'static Kernel]) -> u64 {
    let Some(first) = candidates.first() else { return kernel_hash_once(&EMPTY) };
    if candidates.iter().all(|k| std::ptr::eq(k.module, first.module)) {
        return kernel_hash_once(first);
    }
    let mut h = StableHasher::new();
    h.field(b"candidates");
    let mut seen: Vec<*const crate::Module> = Vec::new();
    for k in candidates {
        if !seen.contains(&(k.module as *const _)) {
            seen.push(k.module);
            h.word(kernel_hash_once(k));
        }
    }
    h.finish()
}

static EMPTY_MODULE: crate::Module = crate::Module { file: "", cubins: &[], ptx_arch: None, ptx: "", extra_ptx: &[] };
pub(super) static EMPTY: Kernel = Kernel {
    name: "",
    demangled: "",
    line: 0,
    module: &EMPTY_MODULE,
    contract: None,
    host_threads: 0,
    resources: &[],
    variants: &[],
    params: None,
};

fn kernel_hash_once(kernel: &'static Kernel) -> u64 {
    static HASHES: OnceLock<Mutex<HashMap<usize, u64>>> = OnceLock::new();
    let map = HASHES.get_or_init(Default::default);
    let address = kernel as *const Kernel as usize;
    if let Some(&h) = map.lock().unwrap_or_else(|p| p.into_inner()).get(&address) {
        return h;
    }
    let h = kernel_hash(kernel);
    map.lock().unwrap_or_else(|p| p.into_inner()).insert(address, h);
    h
}

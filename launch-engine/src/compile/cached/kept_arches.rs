//! The arches of a host compile that finished, kept in the local kernel cache until the compile
//! finishes as a whole (issue 32, class 11; see `compile::host::steps`). Each arch's work is one
//! entry under a part key of the compile's key, so it is found only by a compile of the same
//! file, headers, flags, toolchain and arch list (CUB names its kernels after the whole list),
//! whatever the checkout's path. Local only: a remote store gets whole compiles, never halves;
//! removed when the compile finishes (its whole entries hold everything then).

use launch::Arch;

use crate::cache::{self, Cache, Entry, Key, Lookup};
use crate::compile::host::steps::{self, ArchWork, Kept};

/// The kept arches of the compile under `key`.
pub(super) struct KeptArches<'a> {
    pub cache: &'a Cache,
    pub key: Key,
    /// The log placeholders (`cached::placeholders`).
    pub pairs: &'a [(String, &'static str)],
}

/// The part key of `arch`'s kept work (not [`cache::part_key`]'s arch part: that is a finished
/// compile's record of the arch).
fn part(key: &Key, arch: Arch) -> Key {
    cache::part_key(key, &format!("{arch} nvcc steps"))
}

impl Kept for KeptArches<'_> {
    fn load(&self, arch: Arch) -> Option<ArchWork> {
        let Lookup::Hit(e) = self.cache.load_only_local(&part(&self.key, arch)) else { return None };
        let files = steps::unpack(&e.cubin)?;
        Some(ArchWork { files, log: cache::from_placeholders(&e.nvrtc_log, self.pairs) })
    }

    fn store(&self, arch: Arch, work: &ArchWork) {
        let entry = Entry {
            ptx: String::new(),
            cubin: steps::pack(&work.files),
            ptxas_log: String::new(),
            nvrtc_log: cache::to_placeholders(&work.log, self.pairs),
            probes: String::new(),
        };
        let _ = self.cache.store_only_local(&part(&self.key, arch), &entry);
    }

    fn forget(&self, arch: Arch) {
        self.cache.remove_only_local(&part(&self.key, arch));
    }
}

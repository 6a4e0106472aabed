//! What a tuning result is valid for: [`TuneKey`], and the stable hashes it is made of.

use crate::{Contract, ContractSource, Kernel};

/// A 64-bit hash that is the same on every platform, build and run (unlike `std`'s `DefaultHasher`,
/// whose output may change between Rust releases): a cache file written by one build must be found
/// by the next. FNV-1a's multiply-xor, fed eight bytes at a time (little-endian) so that hashing a
/// module's cubins stays cheap, with a splitmix64 finaliser so every input bit reaches every output
/// bit. Not for adversarial input: the cache stores the full key and compares it on every read, so
/// a collision costs a miss, never a wrong answer.
#[derive(Clone, Debug)]
pub(crate) struct StableHasher(u64);

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

impl Default for StableHasher {
    fn default() -> Self {
        StableHasher(FNV_OFFSET)
    }
}

impl StableHasher {
    /// A hasher in its initial state.
    pub(crate) fn new() -> StableHasher {
        StableHasher::default()
    }

    /// Feeds `bytes`, preceded by their length, so that `("ab", "c")` and `("a", "bc")` differ.
    pub(crate) fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.word(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            self.word(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(w));
        }
        self
    }

    /// Feeds one number.
    pub(crate) fn word(&mut self, w: u64) -> &mut Self {
        self.0 = (self.0 ^ w).wrapping_mul(FNV_PRIME).rotate_left(23);
        self
    }

    /// The hash.
    pub(crate) fn finish(&self) -> u64 {
        // splitmix64's finaliser.
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The content hash of a kernel: its symbol name and every image of its module (each cubin with
/// its arch, the fallback PTX and the extra PTX). A rebuilt kernel whose code changed gets a new
/// hash; a rebuild that produced the same images keeps it. Costs one pass over the module's
/// images (about a millisecond per few megabytes): compute it once per kernel, not per launch.
pub(crate) fn kernel_hash(kernel: &Kernel) -> u64 {
    let mut h = StableHasher::new();
    h.field(b"kernel").field(kernel.name.as_bytes());
    let m = kernel.module;
    h.word(m.cubins.len() as u64);
    // Arches are hashed as their names (`sm_90a`), as when they were strings: the hash names
    // users' cache files (pinned by `the_kernel_and_variant_hashes_are_pinned`).
    for c in m.cubins {
        h.field(c.arch.to_string().as_bytes()).field(c.bytes);
    }
    // The fallback PTX, then the extra ones; a module without PTX hashes an empty name and text.
    h.word(m.extra_ptx.len() as u64 + 1);
    h.field(m.ptx_arch.map(|a| a.to_string()).unwrap_or_default().as_bytes()).field(m.ptx.as_bytes());
    for p in m.extra_ptx {
        h.field(p.arch.to_string().as_bytes()).field(p.text.as_bytes());
    }
    h.finish()
}

/// The hash of a variant set: each variant's symbol name and contract, in name order (the set's
/// order does not matter). Adding, removing or re-contracting a variant changes it.
pub(crate) fn variants_hash(variants: &[&Kernel]) -> u64 {
    let mut sorted: Vec<(&str, Option<Contract>)> = variants.iter().map(|k| (k.name, k.contract)).collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut h = StableHasher::new();
    h.field(b"variants").word(sorted.len() as u64);
    for (name, contract) in sorted {
        h.field(name.as_bytes());
        match contract {
            None => h.word(0),
            Some(c) => {
                let source = match c.source {
                    ContractSource::Annotation => 1,
                    ContractSource::LaunchBounds => 2,
                };
                // `u64::MAX` for an absent number: no real value of a u32 field can take it.
                let n = |v: Option<u32>| v.map_or(u64::MAX, u64::from);
                h.word(source).word(n(c.threads)).word(n(c.min_blocks)).word(n(c.max_regs)).word(u64::from(c.exact))
            }
        };
    }
    h.finish()
}

/// The device a result was measured on. A different GPU model, compute capability or driver can
/// change which variant is fastest, so each is part of the key. With feature `cudarc`,
/// `DeviceKey::from(device.info())` (the impl is in `launch::cuda`, which uses this module, so
/// that this one does not use it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeviceKey {
    /// `cuDeviceGetName` (`NVIDIA H200`).
    pub name: String,
    /// Compute capability (`(9, 0)`).
    pub compute_capability: (u32, u32),
    /// `cuDriverGetVersion` (13000 = CUDA 13.0).
    pub driver_version: i32,
}

/// Everything a tuning result depends on. Two runs with equal keys may share the winner; a change
/// in any part is a miss.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TuneKey {
    /// The content hash of the kernel being tuned: its symbol name and every image of its module
    /// (a rebuild that changed its code changes it).
    pub kernel: u64,
    /// The hash of the variants timed: each one's symbol name and contract, in name order.
    pub variants: u64,
    /// The device.
    pub device: DeviceKey,
    /// The caller's problem key, e.g. an input-size bucket (`n<=2^20`): the winner for one size
    /// need not win at another.
    pub problem: String,
}

impl TuneKey {
    /// The key for `kernel` with `variants` on `device` for `problem`.
    pub fn new(kernel: &Kernel, variants: &[&Kernel], device: DeviceKey, problem: impl Into<String>) -> TuneKey {
        TuneKey { kernel: kernel_hash(kernel), variants: variants_hash(variants), device, problem: problem.into() }
    }

    /// The hash of the whole key: the cache file's name.
    pub fn hash(&self) -> u64 {
        let mut h = StableHasher::new();
        h.word(self.kernel).word(self.variants);
        h.field(self.device.name.as_bytes());
        h.word(u64::from(self.device.compute_capability.0)).word(u64::from(self.device.compute_capability.1));
        // The driver version's bits, sign included.
        h.word(u64::from(self.device.driver_version as u32));
        h.field(self.problem.as_bytes());
        h.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Arch, Cubin, Module, PtxText, Variant};

    const SM_90: Arch = Arch::new(9, 0, Variant::Base);

    const PINNED_EMPTY: u64 = 0x8eae_55a5_3adb_7034;
    const PINNED_TEXT: u64 = 0xf92d_4b1a_bb9c_6a8f;

    #[test]
    fn the_hash_is_stable_and_length_delimited() {
        // Pinned: a change here orphans every cache file users have.
        assert_eq!(StableHasher::new().field(b"").finish(), PINNED_EMPTY);
        assert_eq!(StableHasher::new().field(b"cargo-launch tune").word(90).finish(), PINNED_TEXT);
        let ab_c = StableHasher::new().field(b"ab").field(b"c").finish();
        let a_bc = StableHasher::new().field(b"a").field(b"bc").finish();
        assert_ne!(ab_c, a_bc);
        // A trailing zero byte is not the same as no byte.
        assert_ne!(StableHasher::new().field(b"a").finish(), StableHasher::new().field(b"a\0").finish());
    }

    const fn module(cubin: &'static [Cubin]) -> Module {
        Module { file: "k.cu", cubins: cubin, ptx_arch: Some(SM_90), ptx: ".entry k", extra_ptx: &[] }
    }
    static M1: Module = module(&[Cubin { arch: SM_90, bytes: b"\x7fELF one" }]);
    static M2: Module = module(&[Cubin { arch: SM_90, bytes: b"\x7fELF two" }]);
    const fn kernel(name: &'static str, module: &'static Module, contract: Option<Contract>) -> Kernel {
        Kernel {
            name,
            demangled: name,
            line: 1,
            module,
            contract,
            host_threads: 256,
            resources: &[],
            variants: &[],
            params: None,
        }
    }
    const C128: Contract = Contract {
        source: ContractSource::Annotation,
        threads: Some(128),
        min_blocks: None,
        max_regs: None,
        exact: true,
    };
    const C128_R64: Contract = Contract { max_regs: Some(64), ..C128 };
    static K1: Kernel = kernel("k", &M1, None);
    static K2: Kernel = kernel("k", &M2, None);
    static K1_OTHER_NAME: Kernel = kernel("k2", &M1, None);
    static V_A: Kernel = kernel("k_t128", &M1, Some(C128));
    static V_B: Kernel = kernel("k_t128_r64", &M1, Some(C128_R64));
    static V_B_RECONTRACTED: Kernel = kernel("k_t128_r64", &M1, Some(C128));

    #[test]
    fn the_kernel_hash_follows_the_images_and_the_name() {
        assert_eq!(kernel_hash(&K1), kernel_hash(&K1));
        assert_ne!(kernel_hash(&K1), kernel_hash(&K2));
        assert_ne!(kernel_hash(&K1), kernel_hash(&K1_OTHER_NAME));
    }

    /// The key follows every byte of a module of several megabytes, its first and its last: a
    /// rebuilt cubin that differs anywhere is another kernel to the tune cache. (How long the
    /// hash takes is a measurement, not a property: no test asserts it.)
    #[test]
    fn the_kernel_hash_covers_every_byte_of_a_large_module() {
        let big = |patch: Option<usize>| {
            let mut bytes = vec![0x5a; 4 << 20];
            if let Some(at) = patch {
                bytes[at] ^= 1;
            }
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            let cubins: &'static [Cubin] = Box::leak(Box::new([Cubin { arch: SM_90, bytes }]));
            let module: &'static Module =
                Box::leak(Box::new(Module { file: "big.cu", cubins, ptx_arch: Some(SM_90), ptx: "", extra_ptx: &[] }));
            kernel_hash(Box::leak(Box::new(kernel("big", module, None))))
        };
        let base = big(None);
        assert_eq!(base, big(None));
        for at in [0, 1 << 20, (4 << 20) - 1] {
            assert_ne!(base, big(Some(at)), "a change at byte {at} is not in the key");
        }
    }

    /// Pinned: the kernel hash is a cache file's name, so a change orphans every tune cache users
    /// have. Covers each arch a module carries (cubins, the fallback PTX, extra PTX) and a module
    /// without PTX, whose fallback is hashed as an empty arch name and an empty text.
    #[test]
    fn the_kernel_and_variant_hashes_are_pinned() {
        static EXTRA: &[PtxText] = &[PtxText { arch: Arch::new(10, 0, Variant::Specific), text: ".entry k_100" }];
        static FULL: Module = Module {
            file: "k.cu",
            cubins: &[
                Cubin { arch: SM_90, bytes: b"\x7fELF 90" },
                Cubin { arch: Arch::new(12, 0, Variant::Family), bytes: b"\x7fELF 120" },
            ],
            ptx_arch: Some(SM_90),
            ptx: ".entry k",
            extra_ptx: EXTRA,
        };
        static NO_PTX: Module = Module {
            file: "k.cu",
            cubins: &[Cubin { arch: Arch::new(9, 0, Variant::Specific), bytes: b"\x7fELF" }],
            ptx_arch: None,
            ptx: "",
            extra_ptx: &[],
        };
        static NOTHING: Module = Module { file: "", cubins: &[], ptx_arch: None, ptx: "", extra_ptx: &[] };
        let got = [
            kernel_hash(&kernel("k", &FULL, None)),
            kernel_hash(&kernel("k", &NO_PTX, None)),
            kernel_hash(&kernel("", &NOTHING, None)),
            kernel_hash(&K1),
            variants_hash(&[&V_A, &V_B]),
        ];
        let pinned = [
            0x4050_96bc_3367_0c1c,
            0x98ef_6822_1b80_ece2,
            0x3086_831d_fbdb_3eca,
            0x1677_53b4_e0d0_374e,
            0xe79d_edda_2682_324c,
        ];
        assert_eq!(got.map(|h| format!("{h:#x}")), pinned.map(|h: u64| format!("{h:#x}")));
    }

    #[test]
    fn the_variant_hash_is_of_a_set_of_names_and_contracts() {
        assert_eq!(variants_hash(&[&V_A, &V_B]), variants_hash(&[&V_B, &V_A]));
        assert_ne!(variants_hash(&[&V_A, &V_B]), variants_hash(&[&V_A]));
        assert_ne!(variants_hash(&[&V_A, &V_B]), variants_hash(&[&V_A, &V_B_RECONTRACTED]));
        assert_ne!(variants_hash(&[]), variants_hash(&[&K1]));
    }
}

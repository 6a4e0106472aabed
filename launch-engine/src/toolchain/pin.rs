//! The pinned toolchains in one table: per CUDA line (`toolchain = "12.9"`, `"13.0"`), the wheels
//! `cargo launch setup` installs (package, version, the sha256 and measured size of each
//! platform's file) and the compute capabilities its NVRTC can target. A new pin changes this file
//! only.

use launch::Arch;

/// One pinned PyPI wheel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wheel {
    /// The package (`nvidia-cuda-nvrtc-cu12`).
    pub package: &'static str,
    /// Its exact version.
    pub version: &'static str,
    /// sha256 of the `manylinux` x86_64 wheel file.
    pub sha256_x86_64: &'static str,
    /// sha256 of the `manylinux` aarch64 (sbsa) wheel file.
    pub sha256_aarch64: &'static str,
    /// Size of the x86_64 file, bytes (measured when pinned; setup says how much it downloads).
    pub bytes_x86_64: u64,
    /// Size of the aarch64 file, bytes.
    pub bytes_aarch64: u64,
    /// The folder it installs under `nvidia/` (`cuda_nvrtc`; every CUDA 13 wheel: `cu13`).
    pub folder: &'static str,
    /// What the build takes from it.
    pub provides: &'static str,
}

/// One pinned CUDA line: what `toolchain = "<name>"` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pin {
    /// The `toolchain` value (`13.0`).
    pub name: &'static str,
    /// The CUDA major version: any toolchain of this major serves a crate that asks for `name`.
    pub major: u32,
    /// ptxas's exact version, checked after installing; it names the install folder.
    pub version: &'static str,
    /// Every wheel, in install order.
    pub wheels: &'static [Wheel],
    /// The compute capabilities ([`Arch::sm`]) its NVRTC targets, as `nvrtcGetSupportedArchs`
    /// lists them (measured); `a`/`f` variants count as their base.
    pub targets: &'static [u32],
    /// The libraries whose headers `cargo launch setup --with` can install beside it.
    pub libraries: &'static [Library],
}

/// NVRTC 12.9: CUDA C++ to PTX.
pub const NVRTC: Wheel = Wheel {
    package: "nvidia-cuda-nvrtc-cu12",
    version: "12.9.86",
    sha256_x86_64: "210cf05005a447e29214e9ce50851e83fc5f4358df8b453155d5e1918094dcb4",
    sha256_aarch64: "096d4de6bda726415dfaf3198d4f5c522b8e70139c97feef5cd2ca6d4cd9cead",
    bytes_x86_64: 89_568_129,
    bytes_aarch64: 44_528_905,
    folder: "cuda_nvrtc",
    provides: "libnvrtc.so.12 (CUDA C++ to PTX)",
};

/// ptxas 12.9: PTX to cubin, and the `-v` resource report (this wheel has no nvcc).
pub const NVCC: Wheel = Wheel {
    package: "nvidia-cuda-nvcc-cu12",
    version: "12.9.86",
    sha256_x86_64: "5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0",
    sha256_aarch64: "44e1eca4d08926193a558d2434b1bf83d57b4d5743e0c431c0c83d51da1df62b",
    bytes_x86_64: 40_546_229,
    bytes_aarch64: 39_411_138,
    folder: "cuda_nvcc",
    provides: "bin/ptxas (PTX to cubin and the -v report)",
};

/// The CUDA 12.9 runtime headers (`cuda_fp16.h`, `cuda_runtime.h`) kernels include.
pub const RUNTIME: Wheel = Wheel {
    package: "nvidia-cuda-runtime-cu12",
    version: "12.9.79",
    sha256_x86_64: "25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3",
    sha256_aarch64: "83469a846206f2a733db0c42e223589ab62fd2fabac4432d2f8802de4bded0a4",
    bytes_x86_64: 3_493_179,
    bytes_aarch64: 3_515_012,
    folder: "cuda_runtime",
    provides: "include/ (the CUDA headers)",
};

/// CCCL 12.9's headers (`cuda/std/...`, `cub/...`).
pub const CCCL: Wheel = Wheel {
    package: "nvidia-cuda-cccl-cu12",
    version: "12.9.27",
    sha256_x86_64: "37869e17ce2e1ecec6eddf1927cca0f8c34e64fd848d40453df559091e2d7117",
    sha256_aarch64: "d7898b38aa68beaa234d48f0868273702342a196d6e2e9d0ef058dca2390ebea",
    bytes_x86_64: 3_152_243,
    bytes_aarch64: 3_152_245,
    folder: "cuda_cccl",
    provides: "include/ (libcu++, CUB, Thrust)",
};

/// nvdisasm, for `cargo launch report --spills` (SASS with source lines), in both toolchains: it
/// has no 12.x or 13.0 wheel, reads older cubins (12.9's included), and only 13.4.92 and newer
/// mark spill code (`SpillRefill`), which is how spills are told from a kernel's local arrays.
pub const NVDISASM: Wheel = Wheel {
    package: "nvidia-cuda-nvdisasm",
    version: "13.5.37",
    sha256_x86_64: "d3fdbdd49fa53e2e4aacd3db8259d052bd2b049ececdcb69e92e083c6728e7ca",
    sha256_aarch64: "a3a8248074edb9fba63b74c38a5416b712a91ab09e70b8ab37186c3d293fc605",
    bytes_x86_64: 5_170_654,
    bytes_aarch64: 5_156_579,
    folder: "cu13",
    provides: "bin/nvdisasm (SASS with source lines and spill marks)",
};

/// The CUDA 12.9 wheels, in install order.
pub const WHEELS: [Wheel; 5] = [NVRTC, NVCC, RUNTIME, CCCL, NVDISASM];

/// The CUDA 13.0 wheels, in install order. From 13.0 on NVIDIA names them without a `-cu13`
/// suffix and they all install into `nvidia/cu13/{bin,lib,include}`, CCCL in `include/cccl`.
/// nvcc needs nvvm (cicc, libdevice) and the crt headers, so those come too; and [`NVDISASM`].
pub const WHEELS_13_0: [Wheel; 7] = [
    Wheel {
        package: "nvidia-cuda-nvrtc",
        version: "13.0.88",
        sha256_x86_64: "ad9b6d2ead2435f11cbb6868809d2adeeee302e9bb94bcf0539c7a40d80e8575",
        sha256_aarch64: "d27f20a0ca67a4bb34268a5e951033496c5b74870b868bacd046b1b8e0c3267b",
        bytes_x86_64: 90_215_200,
        bytes_aarch64: 43_015_449,
        folder: "cu13",
        provides: "lib/libnvrtc.so.13 (CUDA C++ to PTX)",
    },
    Wheel {
        package: "nvidia-cuda-nvcc",
        version: "13.0.88",
        sha256_x86_64: "56fe502eb77625a12f25172caa3cdddb4e4c8ba2c8c17dba44b164761b380f03",
        sha256_aarch64: "c7ff28f86a24effdc6c034fa15230c549a273e4771b10a7fec14996f8cf3307f",
        bytes_x86_64: 37_384_532,
        bytes_aarch64: 32_455_430,
        folder: "cu13",
        provides: "bin/ptxas, bin/nvcc, bin/nvlink, bin/fatbinary",
    },
    Wheel {
        package: "nvidia-cuda-runtime",
        version: "13.0.96",
        sha256_x86_64: "7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548",
        sha256_aarch64: "ef9bcbe90493a2b9d810e43d249adb3d02e98dd30200d86607d8d02687c43f55",
        bytes_x86_64: 2_243_632,
        bytes_aarch64: 2_261_060,
        folder: "cu13",
        provides: "include/ (the CUDA headers), lib/libcudart",
    },
    Wheel {
        package: "nvidia-cuda-cccl",
        version: "13.0.85",
        sha256_x86_64: "e0da7ad981f3a8aff08241b5bfc1af868742a63e2762f53a5171c492ef242649",
        sha256_aarch64: "6f0203e29fed809ee2b7fe9b1344df66ecab990c37d6a2e0e189b26d6c97ed7c",
        bytes_x86_64: 3_120_526,
        bytes_aarch64: 3_120_528,
        folder: "cu13",
        provides: "include/cccl/ (libcu++, CUB, Thrust)",
    },
    Wheel {
        package: "nvidia-cuda-crt",
        version: "13.0.88",
        sha256_x86_64: "2c8043c7c9e02492716426e9919fc78d2c5b3b2a7a768a88e952676b08aa55a4",
        sha256_aarch64: "ee2ea2a97073e02ee62bb27841f437332be2c248e3eac013df07997ada39c003",
        bytes_x86_64: 134_086,
        bytes_aarch64: 134_086,
        folder: "cu13",
        provides: "include/crt/ (the headers cuda_runtime.h and nvcc include)",
    },
    Wheel {
        package: "nvidia-nvvm",
        version: "13.0.88",
        sha256_x86_64: "c5f41ffeb6466944a026dfa5317d7d85355c119bbec279205d22f1869d1054e0",
        sha256_aarch64: "c4376a291d72d22a315d9d2f69bdae8f8cd83a627f75bad395cee49a0fe65dc1",
        bytes_x86_64: 61_601_415,
        bytes_aarch64: 59_234_185,
        folder: "cu13",
        provides: "nvvm/ (cicc and libdevice, which nvcc runs)",
    },
    NVDISASM,
];

/// The CUDA 13.5 wheels, in install order: as 13.0's (everything in `nvidia/cu13`). CCCL has its
/// own version line from 13.3 on; this is the newest the package index had when pinned.
pub const WHEELS_13_5: [Wheel; 7] = [
    Wheel {
        package: "nvidia-cuda-nvrtc",
        version: "13.5.37",
        sha256_x86_64: "86b4d68058807988b7d9af5b44917a0601e9c337f35ccd657bfb3c759ff8d8bc",
        sha256_aarch64: "36e4fa2a8ada293f5693d308e531c196ab6f91cf7a0ff479bf96a537d43a6096",
        bytes_x86_64: 58_185_930,
        bytes_aarch64: 56_419_462,
        folder: "cu13",
        provides: "lib/libnvrtc.so.13 (CUDA C++ to PTX)",
    },
    Wheel {
        package: "nvidia-cuda-nvcc",
        version: "13.5.37",
        sha256_x86_64: "f5c4f7ead5d964fb4af42bbf1e6d3ec3c1e6e9d83b53749f691d387e7fcaa3a7",
        sha256_aarch64: "588eda18eb5076ae859fe272844b526459228af22df0b117f54eec3aa82bc9c8",
        bytes_x86_64: 47_028_279,
        bytes_aarch64: 40_745_418,
        folder: "cu13",
        provides: "bin/ptxas, bin/nvcc, bin/nvlink, bin/fatbinary",
    },
    Wheel {
        package: "nvidia-cuda-runtime",
        version: "13.5.37",
        sha256_x86_64: "df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d",
        sha256_aarch64: "de2dc5a7367974228b0a69588a9acc9340d3768bef1bf38bf0801eb08497cd2d",
        bytes_x86_64: 2_504_024,
        bytes_aarch64: 2_520_010,
        folder: "cu13",
        provides: "include/ (the CUDA headers), lib/libcudart",
    },
    Wheel {
        package: "nvidia-cuda-cccl",
        version: "13.3.5.0.6",
        sha256_x86_64: "d5230098fa2df5021e1a00c0c4eee41797671a91119d31e892463e5ccf3ee326",
        sha256_aarch64: "6f30b8076b3e69951c459c94ae190bde51924b320076ebaec376d36848b4c76e",
        bytes_x86_64: 4_113_651,
        bytes_aarch64: 4_113_650,
        folder: "cu13",
        provides: "include/cccl/ (libcu++, CUB, Thrust)",
    },
    Wheel {
        package: "nvidia-cuda-crt",
        version: "13.5.37",
        sha256_x86_64: "e898b7f73d3035fa89915a3f7bf3b54a73e90249746111aed295822c4729bb29",
        sha256_aarch64: "9ed2c565fdf3244fa6719769a80a466b85bfd4b1467ea339353bc91c971d09e0",
        bytes_x86_64: 166_163,
        bytes_aarch64: 166_163,
        folder: "cu13",
        provides: "include/crt/ (the headers cuda_runtime.h and nvcc include)",
    },
    Wheel {
        package: "nvidia-nvvm",
        version: "13.5.37",
        sha256_x86_64: "c41bfa362e407405163f103c2229f0765f8cc2ed7d148b754dc77f228bf7e070",
        sha256_aarch64: "b659bd3115b7ac7ec8931e67d0e2c0dd09cd35b08a6a7372df6f8f22c67da80a",
        bytes_x86_64: 75_141_406,
        bytes_aarch64: 71_213_582,
        folder: "cu13",
        provides: "nvvm/ (cicc and libdevice, which nvcc runs)",
    },
    NVDISASM,
];

/// A CUDA library whose headers `cargo launch setup --with <name>` installs beside a toolchain:
/// its wheel of one CUDA line. Only the headers are used (device code such as cuRAND's
/// `curand_kernel.h` is header-only; nothing links the library), so setup installs the wheel in a
/// folder of its own and the build adds its `include` to the toolchain's search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Library {
    /// The `--with` name (`curand`).
    pub name: &'static str,
    /// The wheel of this CUDA line; its `folder` holds `include/`.
    pub wheel: Wheel,
}

/// cuRAND 12.9 (`curand_kernel.h`: `curand_init`, `curand_uniform`, ... in device code). The
/// wheel's size is its shared libraries; the headers are 2 MB of it.
pub const CURAND_12_9: Library = Library {
    name: "curand",
    wheel: Wheel {
        package: "nvidia-curand-cu12",
        version: "10.3.10.19",
        sha256_x86_64: "49b274db4780d421bd2ccd362e1415c13887c53c214f0d4b761752b8f9f6aa1e",
        sha256_aarch64: "de663377feb1697e1d30ed587b07d5721fdd6d2015c738d7528a6002a6134d37",
        bytes_x86_64: 68_295_626,
        bytes_aarch64: 68_292_066,
        folder: "curand",
        provides: "include/curand*.h (cuRAND's device API)",
    },
};

/// NVTX 12.9 (`nvtx3/nvToolsExt.h`, header-only).
pub const NVTX_12_9: Library = Library {
    name: "nvtx",
    wheel: Wheel {
        package: "nvidia-nvtx-cu12",
        version: "12.9.79",
        sha256_x86_64: "fec150986817f2b4e7eed72ed059f2dcb9ba3856b9a96134e448eac946a6952f",
        sha256_aarch64: "d1f258e752294acdb4f61c3d31fee87bd0f60e459f1e2f624376369b524cd15d",
        bytes_x86_64: 85_504,
        bytes_aarch64: 86_120,
        folder: "nvtx",
        provides: "include/nvtx3/ (NVTX ranges and marks)",
    },
};

/// cuRAND of CUDA 13.0 (as 12.9's, in `nvidia/cu13/include`).
pub const CURAND_13_0: Library = Library {
    name: "curand",
    wheel: Wheel {
        package: "nvidia-curand",
        version: "10.4.0.35",
        sha256_x86_64: "1aee33a5da6e1db083fe2b90082def8915f30f3248d5896bcec36a579d941bfc",
        sha256_aarch64: "133df5a7509c3e292aaa2b477afd0194f06ce4ea24d714d616ff36439cee349a",
        bytes_x86_64: 59_544_258,
        bytes_aarch64: 61_962_106,
        folder: "cu13",
        provides: "include/curand*.h (cuRAND's device API)",
    },
};

/// NVTX of CUDA 13.0.
pub const NVTX_13_0: Library = Library {
    name: "nvtx",
    wheel: Wheel {
        package: "nvidia-nvtx",
        version: "13.0.85",
        sha256_x86_64: "4936d1d6780fbe68db454f5e72a42ff64d1fd6397df9f363ae786930fd5c1cd4",
        sha256_aarch64: "cb7780edb6b14107373c835bf8b72e7a178bac7367e23da7acb108f973f157a6",
        bytes_x86_64: 148_047,
        bytes_aarch64: 148_878,
        folder: "cu13",
        provides: "include/nvtx3/ (NVTX ranges and marks)",
    },
};

/// CUDA 12.9, the default: what the seed article used.
pub const CUDA_12_9: Pin = Pin {
    name: "12.9",
    major: 12,
    version: "12.9.86",
    wheels: &WHEELS,
    targets: &[50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121],
    libraries: &[CURAND_12_9, NVTX_12_9],
};

/// CUDA 13.0: drops sm_50–sm_72 (and sm_101, renamed sm_110), adds sm_88 and sm_110. (`launch`
/// does not know sm_88, a chip with no occupancy row yet, so no crate can ask for it.)
pub const CUDA_13_0: Pin = Pin {
    name: "13.0",
    major: 13,
    version: "13.0.88",
    wheels: &WHEELS_13_0,
    targets: &[75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121],
    libraries: &[CURAND_13_0, NVTX_13_0],
};

/// CUDA 13.5, the newest 13.x the package index had when pinned: installed only when a crate (or
/// `setup --toolchain 13.5`) chooses it. Its NVRTC targets 13.0's arches and sm_107 (measured;
/// `launch` does not know sm_107 yet, as sm_88). Its PTX (ISA 9.5) needs a 13.5 driver to JIT
/// (`launch::compat`); the CUDA 13.0 libraries' headers serve it.
pub const CUDA_13_5: Pin = Pin {
    name: "13.5",
    major: 13,
    version: "13.5.37",
    wheels: &WHEELS_13_5,
    targets: &[75, 80, 86, 87, 88, 89, 90, 100, 103, 107, 110, 120, 121],
    libraries: &[CURAND_13_0, NVTX_13_0],
};

/// Every pinned line, oldest first.
pub const PINS: [Pin; 3] = [CUDA_12_9, CUDA_13_0, CUDA_13_5];

/// The toolchain of a crate that names none.
pub const DEFAULT: Pin = CUDA_12_9;

/// The default toolchain's version: NVRTC's and ptxas's, which the seed article used.
pub const PINNED_VERSION: &str = DEFAULT.version;

impl Pin {
    /// The pin a `toolchain` value names (`"13.0"`).
    pub fn named(name: &str) -> Option<Pin> {
        PINS.into_iter().find(|p| p.name == name)
    }

    /// Whether its NVRTC can target `arch` (`a`/`f` variants as their base).
    pub fn can_target(&self, arch: Arch) -> bool {
        self.targets.contains(&arch.sm())
    }

    /// The pip requirements file of the pin: each wheel `==` its version, with both platforms'
    /// hashes (`pip install --require-hashes` then installs nothing else).
    pub fn requirements(&self) -> String {
        self.wheels.iter().map(Wheel::requirement).collect()
    }

    /// What setup downloads on this machine's platform, bytes.
    pub fn download_bytes(&self) -> u64 {
        self.wheels.iter().map(Wheel::bytes).sum()
    }

    /// The library `--with <name>` installs for this line.
    pub fn library(&self, name: &str) -> Option<Library> {
        self.libraries.iter().copied().find(|l| l.name == name)
    }
}

impl Wheel {
    /// The size of this machine's platform's file, bytes.
    pub fn bytes(&self) -> u64 {
        if cfg!(target_arch = "aarch64") {
            self.bytes_aarch64
        } else {
            self.bytes_x86_64
        }
    }

    /// Its line of a pip requirements file: `==` its version, both platforms' hashes.
    pub fn requirement(&self) -> String {
        format!(
            "{}=={} \\\n    --hash=sha256:{} \\\n    --hash=sha256:{}\n",
            self.package, self.version, self.sha256_x86_64, self.sha256_aarch64
        )
    }
}

/// The `--with` names some pinned line can install (`curand`, `nvtx`), each once.
pub fn library_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for l in PINS.iter().flat_map(|p| p.libraries) {
        if !names.contains(&l.name) {
            names.push(l.name);
        }
    }
    names
}

/// The supported `toolchain` values, for messages: `"12.9", "13.0"`.
pub fn names() -> String {
    PINS.iter().map(|p| format!("\"{}\"", p.name)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The requirements file setup writes for 12.9: as it was when setup.rs held it, plus nvdisasm.
    #[test]
    fn the_12_9_requirements_file_is_unchanged_but_for_nvdisasm() {
        let before = "\
nvidia-cuda-nvrtc-cu12==12.9.86 \\
    --hash=sha256:210cf05005a447e29214e9ce50851e83fc5f4358df8b453155d5e1918094dcb4 \\
    --hash=sha256:096d4de6bda726415dfaf3198d4f5c522b8e70139c97feef5cd2ca6d4cd9cead
nvidia-cuda-nvcc-cu12==12.9.86 \\
    --hash=sha256:5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0 \\
    --hash=sha256:44e1eca4d08926193a558d2434b1bf83d57b4d5743e0c431c0c83d51da1df62b
nvidia-cuda-runtime-cu12==12.9.79 \\
    --hash=sha256:25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3 \\
    --hash=sha256:83469a846206f2a733db0c42e223589ab62fd2fabac4432d2f8802de4bded0a4
nvidia-cuda-cccl-cu12==12.9.27 \\
    --hash=sha256:37869e17ce2e1ecec6eddf1927cca0f8c34e64fd848d40453df559091e2d7117 \\
    --hash=sha256:d7898b38aa68beaa234d48f0868273702342a196d6e2e9d0ef058dca2390ebea
nvidia-cuda-nvdisasm==13.5.37 \\
    --hash=sha256:d3fdbdd49fa53e2e4aacd3db8259d052bd2b049ececdcb69e92e083c6728e7ca \\
    --hash=sha256:a3a8248074edb9fba63b74c38a5416b712a91ab09e70b8ab37186c3d293fc605
";
        assert_eq!(CUDA_12_9.requirements(), before);
    }

    /// Both lines, both platforms: every wheel has two sha256 and two sizes, the set has NVRTC,
    /// ptxas, the runtime headers and CCCL, and ptxas's wheel is the pin's version.
    #[test]
    fn every_pin_has_both_platforms_and_the_wheels_the_build_needs() {
        for pin in PINS {
            for w in pin.wheels {
                for h in [w.sha256_x86_64, w.sha256_aarch64] {
                    assert!(h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()), "{}: {h}", w.package);
                }
                assert!(w.bytes_x86_64 > 100_000 && w.bytes_aarch64 > 100_000, "{}", w.package);
                // nvdisasm is the one tool taken from a newer line (see NVDISASM).
                if w.package != NVDISASM.package {
                    assert!(w.version.starts_with(&format!("{}.", pin.major)), "{} {}", w.package, w.version);
                }
            }
            let has = |prefix: &str| pin.wheels.iter().find(|w| w.package.starts_with(prefix));
            for needed in ["nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-cuda-cccl"] {
                assert!(has(needed).is_some(), "{}: no {needed}", pin.name);
            }
            assert_eq!(has("nvidia-cuda-nvcc").map(|w| w.version), Some(pin.version), "{}", pin.name);
            assert!(pin.version.starts_with(&format!("{}.", pin.name)), "{}", pin.name);
            assert_eq!(Pin::named(pin.name), Some(pin));
            // Requirements: one `==` line per wheel, each with both hashes.
            let req = pin.requirements();
            assert_eq!(req.matches("==").count(), pin.wheels.len());
            assert_eq!(req.matches("--hash=sha256:").count(), 2 * pin.wheels.len());
        }
        assert_eq!(DEFAULT.name, "12.9");
        assert_eq!(PINNED_VERSION, NVCC.version);
        assert_eq!(Pin::named("13"), None);
        assert_eq!(names(), "\"12.9\", \"13.0\", \"13.5\"");
        // 13.0 brings nvcc's companions and nvdisasm (items that compile host code and map spills).
        for p in ["nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-nvdisasm"] {
            assert!(CUDA_13_0.wheels.iter().any(|w| w.package == p), "{p}");
        }
        // Measured: about 142 MB for 12.9, 200 MB for 13.0 and 192 MB for 13.5 on x86_64.
        let x86 = |p: Pin| p.wheels.iter().map(|w| w.bytes_x86_64).sum::<u64>();
        assert_eq!((x86(CUDA_12_9), x86(CUDA_13_0), x86(CUDA_13_5)), (141_930_434, 199_870_045, 192_310_107));
    }

    /// The header wheels `setup --with` installs: both platforms pinned, of the line's major
    /// folder layout (`nvidia/<name>/include` for 12.x, `nvidia/cu13/include` for 13.x), the same
    /// names on every line.
    #[test]
    fn every_library_is_pinned_for_both_platforms_in_its_lines_layout() {
        for pin in PINS {
            for l in pin.libraries {
                let w = l.wheel;
                for h in [w.sha256_x86_64, w.sha256_aarch64] {
                    assert!(h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()), "{}: {h}", w.package);
                }
                let folder = if pin.major >= 13 { format!("cu{}", pin.major) } else { l.name.to_string() };
                assert_eq!(w.folder, folder, "{}", w.package);
                assert_eq!(w.package.ends_with("-cu12"), pin.major == 12, "{}", w.package);
                assert_eq!(pin.library(l.name), Some(*l));
            }
            let names: Vec<&str> = pin.libraries.iter().map(|l| l.name).collect();
            assert_eq!(names, library_names(), "{}", pin.name);
        }
        // Measured: cuRAND's wheels are its shared libraries and 2 MB of headers.
        assert_eq!((CURAND_12_9.wheel.bytes_x86_64, CURAND_13_0.wheel.bytes_x86_64), (68_295_626, 59_544_258));
        assert_eq!(CUDA_13_0.library("cublas"), None);
    }

    #[test]
    fn cuda_13_drops_maxwell_to_volta_and_adds_thor() {
        let arch = |s: &str| s.parse::<Arch>().unwrap();
        for old in ["sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72"] {
            assert!(CUDA_12_9.can_target(arch(old)) && !CUDA_13_0.can_target(arch(old)), "{old}");
        }
        assert!(CUDA_12_9.can_target(arch("sm_101f")) && !CUDA_13_0.can_target(arch("sm_101f")));
        for new in ["sm_110", "sm_110f", "sm_110a"] {
            assert!(!CUDA_12_9.can_target(arch(new)) && CUDA_13_0.can_target(arch(new)), "{new}");
        }
        for both in ["sm_75", "sm_90a", "sm_100f", "sm_103", "sm_121f"] {
            assert!(CUDA_12_9.can_target(arch(both)) && CUDA_13_0.can_target(arch(both)), "{both}");
        }
        // 13.5's NVRTC (measured with nvrtcGetSupportedArchs) adds sm_107 to 13.0's list.
        assert!(CUDA_13_0.targets.iter().all(|c| CUDA_13_5.targets.contains(c)));
        let extra: Vec<u32> = CUDA_13_5.targets.iter().copied().filter(|c| !CUDA_13_0.targets.contains(c)).collect();
        assert_eq!(extra, [107]);
        // Every known arch some pin can target, but for 12.x's sm_101, which 13.0 renamed sm_110.
        for name in launch::KNOWN_ARCHES {
            assert!(PINS.iter().any(|p| p.can_target(arch(name))), "{name}");
        }
    }
}

//! The pinned toolchain in one table: the wheels `cargo launch setup` installs (package, version,
//! the sha256 of each platform's file) and the folder each one puts under `nvidia/`, which
//! discovery looks in. A new pin changes this file only.

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
    /// The folder it installs under `nvidia/` (`cuda_nvrtc`).
    pub folder: &'static str,
    /// What the build takes from it.
    pub provides: &'static str,
}

/// NVRTC: CUDA C++ to PTX.
pub const NVRTC: Wheel = Wheel {
    package: "nvidia-cuda-nvrtc-cu12",
    version: "12.9.86",
    sha256_x86_64: "210cf05005a447e29214e9ce50851e83fc5f4358df8b453155d5e1918094dcb4",
    sha256_aarch64: "096d4de6bda726415dfaf3198d4f5c522b8e70139c97feef5cd2ca6d4cd9cead",
    folder: "cuda_nvrtc",
    provides: "libnvrtc.so.12 (CUDA C++ to PTX)",
};

/// ptxas: PTX to cubin, and the `-v` resource report.
pub const NVCC: Wheel = Wheel {
    package: "nvidia-cuda-nvcc-cu12",
    version: "12.9.86",
    sha256_x86_64: "5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0",
    sha256_aarch64: "44e1eca4d08926193a558d2434b1bf83d57b4d5743e0c431c0c83d51da1df62b",
    folder: "cuda_nvcc",
    provides: "bin/ptxas (PTX to cubin and the -v report)",
};

/// The CUDA runtime headers (`cuda_fp16.h`, `cuda_runtime.h`) kernels include.
pub const RUNTIME: Wheel = Wheel {
    package: "nvidia-cuda-runtime-cu12",
    version: "12.9.79",
    sha256_x86_64: "25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3",
    sha256_aarch64: "83469a846206f2a733db0c42e223589ab62fd2fabac4432d2f8802de4bded0a4",
    folder: "cuda_runtime",
    provides: "include/ (the CUDA headers)",
};

/// CCCL's headers (`cuda/std/...`, `cub/...`).
pub const CCCL: Wheel = Wheel {
    package: "nvidia-cuda-cccl-cu12",
    version: "12.9.27",
    sha256_x86_64: "37869e17ce2e1ecec6eddf1927cca0f8c34e64fd848d40453df559091e2d7117",
    sha256_aarch64: "d7898b38aa68beaa234d48f0868273702342a196d6e2e9d0ef058dca2390ebea",
    folder: "cuda_cccl",
    provides: "include/ (libcu++, CUB, Thrust)",
};

/// Every pinned wheel, in install order.
pub const WHEELS: [Wheel; 4] = [NVRTC, NVCC, RUNTIME, CCCL];

/// The toolchain's version: NVRTC's and ptxas's, which the seed article used.
pub const PINNED_VERSION: &str = NVRTC.version;

/// The pip requirements file of the pin: each wheel `==` its version, with both platforms' hashes
/// (`pip install --require-hashes` then installs nothing else).
pub fn requirements() -> String {
    WHEELS
        .iter()
        .map(|w| {
            format!(
                "{}=={} \\\n    --hash=sha256:{} \\\n    --hash=sha256:{}\n",
                w.package, w.version, w.sha256_x86_64, w.sha256_aarch64
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The requirements file setup writes, byte for byte as it was when setup.rs held it.
    #[test]
    fn the_requirements_file_is_unchanged() {
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
";
        assert_eq!(requirements(), before);
    }

    #[test]
    fn every_hash_is_a_sha256_and_ptxas_is_the_pinned_version() {
        for w in WHEELS {
            for h in [w.sha256_x86_64, w.sha256_aarch64] {
                assert!(h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()), "{}: {h}", w.package);
            }
        }
        // Setup checks the installed ptxas against PINNED_VERSION.
        assert_eq!(NVCC.version, PINNED_VERSION);
    }
}

//! The headers of NVIDIA's CUDA libraries (`curand_kernel.h`, `cublasLt.h`, `nvtx3/...`) in one
//! table: which library a header is, the PyPI wheel that ships it on each CUDA line, and whether
//! `cargo launch setup --with <name>` installs it (the pinned ones, `toolchain::pin::Library`).
//! It depends on no other module: `error` shows its notes, and `toolchain` needs `error` (a unit
//! test checks [`LINES`] and the `--with` names against the pins).
//!
//! A kernel that includes one the toolchain does not have fails with the compiler's bare "cannot
//! open source file" (NVRTC) or "No such file or directory" (nvcc); [`notes`] turns that into a
//! note naming the library, the wheel and the command that installs it, and it is attached where
//! a compile error is shown (`Error::Compile`'s text), so both compilers get it.

/// One library's headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LibraryHeaders {
    /// The library as NVIDIA names it (`cuRAND`).
    pub library: &'static str,
    /// The header names it has: a `.h` file whose name starts with one of these, or, for a
    /// prefix ending in `/`, anything under that folder (`nvtx3/`).
    pub prefixes: &'static [&'static str],
    /// Header names that start with a prefix but are another library's (`cusparseLt.h`).
    pub except: &'static [&'static str],
    /// Its wheel for CUDA 12 (`nvidia-curand-cu12`).
    pub wheel_12: &'static str,
    /// Its wheel for CUDA 13 (`nvidia-curand`).
    pub wheel_13: &'static str,
    /// The `cargo launch setup --with` name that installs it, for the libraries setup pins.
    pub with: Option<&'static str>,
    /// Its extra of NVIDIA's `cuda-toolkit` metapackage, which pins the library's wheel to one
    /// CUDA release (`cuda-toolkit[cublas]==13.0.*`), for the toolkit's own libraries: their CUDA
    /// 13 wheels carry no CUDA line in their name, so a plain `pip install` takes the newest.
    pub toolkit_extra: Option<&'static str>,
}

/// The pinned CUDA lines by major (`toolchain::pin::PINS`); a note names the first of the
/// compiler's major as the `--toolchain` value.
pub const LINES: [(u32, &str); 3] = [(12, "12.9"), (13, "13.0"), (13, "13.5")];

/// Every library whose headers kernels are known to include. The wheel names were checked
/// against PyPI (and, for the pinned ones, their file lists).
pub const LIBRARIES: &[LibraryHeaders] = &[
    LibraryHeaders { with: Some("curand"), ..lib("cuRAND", &["curand"], &[], "nvidia-curand-cu12", "nvidia-curand") },
    LibraryHeaders { with: Some("nvtx"), ..lib("NVTX", &["nvtx3/"], &[], "nvidia-nvtx-cu12", "nvidia-nvtx") },
    LibraryHeaders {
        toolkit_extra: Some("cublas"),
        ..lib("cuBLAS", &["cublas"], &[], "nvidia-cublas-cu12", "nvidia-cublas")
    },
    lib("cuSPARSELt", &["cusparseLt"], &[], "nvidia-cusparselt-cu12", "nvidia-cusparselt-cu13"),
    LibraryHeaders {
        toolkit_extra: Some("cusparse"),
        ..lib("cuSPARSE", &["cusparse"], &["cusparseLt"], "nvidia-cusparse-cu12", "nvidia-cusparse")
    },
    LibraryHeaders {
        toolkit_extra: Some("cufft"),
        ..lib("cuFFT", &["cufft"], &[], "nvidia-cufft-cu12", "nvidia-cufft")
    },
    LibraryHeaders {
        toolkit_extra: Some("cusolver"),
        ..lib("cuSOLVER", &["cusolver"], &[], "nvidia-cusolver-cu12", "nvidia-cusolver")
    },
    lib("NCCL", &["nccl"], &[], "nvidia-nccl-cu12", "nvidia-nccl-cu13"),
    lib("cuDNN", &["cudnn"], &[], "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"),
    lib("NVSHMEM", &["nvshmem"], &[], "nvidia-nvshmem-cu12", "nvidia-nvshmem-cu13"),
];

const fn lib(
    library: &'static str,
    prefixes: &'static [&'static str],
    except: &'static [&'static str],
    wheel_12: &'static str,
    wheel_13: &'static str,
) -> LibraryHeaders {
    LibraryHeaders { library, prefixes, except, wheel_12, wheel_13, with: None, toolkit_extra: None }
}

impl LibraryHeaders {
    /// Whether `header` (as the `#include` names it) is one of this library's.
    pub fn has(&self, header: &str) -> bool {
        let starts = |p: &str| header.starts_with(p);
        let ours = self.prefixes.iter().any(|p| {
            if p.ends_with('/') {
                starts(p)
            } else {
                starts(p) && !header.contains('/') && header.ends_with(".h")
            }
        });
        ours && !self.except.iter().any(|e| starts(e))
    }

    /// Its wheel on CUDA `major`.
    pub fn wheel(&self, major: u32) -> &'static str {
        if major >= 13 {
            self.wheel_13
        } else {
            self.wheel_12
        }
    }
}

/// The library `header` belongs to, if it is one of [`LIBRARIES`]'.
pub fn library_of(header: &str) -> Option<&'static LibraryHeaders> {
    LIBRARIES.iter().find(|l| l.has(header))
}

/// The note for a missing `header` of a CUDA library, when the toolchain that missed it is of
/// CUDA `major` (`None`: not known, both lines are named).
pub fn note(header: &str, major: Option<u32>) -> Option<String> {
    let lib = library_of(header)?;
    let toolkit = "or add a CUDA toolkit's include folder of the same CUDA line to `include` in \
                   [package.metadata.launch] (`include = [\"/usr/local/cuda/include\"]`)";
    let line = major.and_then(|m| LINES.iter().find(|(major, _)| *major == m));
    let Some(&(major, line)) = line else {
        return Some(format!(
            "`{header}` is {}'s, shipped in the `{}` wheel (CUDA 12) or `{}` (CUDA 13): `cargo launch setup \
             --toolchain <line> --with <library>` installs the pinned ones beside the toolchain; {toolkit}",
            lib.library, lib.wheel_12, lib.wheel_13
        ));
    };
    let wheel = lib.wheel(major);
    // `pip install nvidia-cublas` takes the newest release, of whatever CUDA line: pinned to the
    // toolchain's by NVIDIA's metapackage where the library is one of the toolkit's.
    let install = match lib.toolkit_extra {
        Some(extra) => format!(
            "`pip install \"cuda-toolkit[{extra}]=={line}.*\"` (NVIDIA's metapackage, which pins `{wheel}` to the \
             CUDA {line} release; `pip install {wheel}` alone installs the newest, of another CUDA line)"
        ),
        None => format!("`pip install {wheel}` for CUDA {line}"),
    };
    Some(match lib.with {
        Some(with) => format!(
            "`{header}` is {}'s, shipped in the `{wheel}` wheel: `cargo launch setup --toolchain {line} --with {with}` \
             installs it pinned beside the toolchain, and the build then finds its headers by itself; {toolkit}",
            lib.library
        ),
        None => format!(
            "`{header}` is {}'s, shipped in the `{wheel}` wheel (which `cargo launch setup` does not install): \
             {install} and add its include folder (under `nvidia/` in site-packages) \
             to `include` in [package.metadata.launch], as an absolute path; {toolkit}",
            lib.library
        ),
    })
}

/// The notes for every missing library header a compiler's `log` reports: NVRTC's (and nvcc's
/// front end's) `cannot open source file "X"`, the host preprocessor's `X: No such file or
/// directory`. `compiler` (`NVRTC 13.0.88`, `nvcc 12.9.86`) tells the CUDA line.
pub fn notes(compiler: &str, log: &str) -> Vec<String> {
    let major = major_of(compiler);
    let mut out: Vec<String> = Vec::new();
    for l in log.lines() {
        let Some(header) = missing_header(l) else { continue };
        if let Some(n) = note(header, major) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// The header a compiler message says it cannot find.
fn missing_header(line: &str) -> Option<&str> {
    if let Some((_, rest)) = line.split_once("cannot open source file \"") {
        return rest.split('"').next();
    }
    // gcc: `a.cu:1:10: fatal error: curand_kernel.h: No such file or directory`.
    let before = line.strip_suffix(": No such file or directory")?;
    before.rsplit(": ").next().map(str::trim)
}

/// The CUDA major of `compiler`'s first version number (`NVRTC 13.0.88` → 13).
fn major_of(compiler: &str) -> Option<u32> {
    compiler
        .split_whitespace()
        .find(|w| w.contains('.') && w.starts_with(|c: char| c.is_ascii_digit()))?
        .split('.')
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::pin::{self, Pin};

    #[test]
    fn headers_map_to_their_library_and_its_wheel_per_line() {
        let wheel = |h: &str, line: Pin| library_of(h).map(|l| l.wheel(line.major));
        assert_eq!(wheel("curand_kernel.h", pin::CUDA_13_0), Some("nvidia-curand"));
        assert_eq!(wheel("curand_kernel.h", pin::CUDA_12_9), Some("nvidia-curand-cu12"));
        assert_eq!(wheel("curand.h", pin::CUDA_12_9), Some("nvidia-curand-cu12"));
        assert_eq!(wheel("nvtx3/nvToolsExt.h", pin::CUDA_13_0), Some("nvidia-nvtx"));
        assert_eq!(wheel("cublasLt.h", pin::CUDA_13_0), Some("nvidia-cublas"));
        assert_eq!(wheel("cublas_v2.h", pin::CUDA_12_9), Some("nvidia-cublas-cu12"));
        assert_eq!(wheel("cusparse.h", pin::CUDA_13_0), Some("nvidia-cusparse"));
        assert_eq!(wheel("cusparseLt.h", pin::CUDA_13_0), Some("nvidia-cusparselt-cu13"));
        assert_eq!(wheel("cufft.h", pin::CUDA_12_9), Some("nvidia-cufft-cu12"));
        assert_eq!(wheel("cusolverDn.h", pin::CUDA_13_0), Some("nvidia-cusolver"));
        assert_eq!(wheel("nccl.h", pin::CUDA_13_0), Some("nvidia-nccl-cu13"));
        assert_eq!(wheel("cudnn.h", pin::CUDA_12_9), Some("nvidia-cudnn-cu12"));
        assert_eq!(wheel("nvshmem.h", pin::CUDA_13_0), Some("nvidia-nvshmem-cu13"));
        // Not a library's: the user's own, the toolkit's, the MathDx header-only libraries.
        for other in ["my_curand.h", "cuda_fp16.h", "cufftdx.hpp", "cublasdx.hpp", "sub/curand_kernel.h", "curand"] {
            assert_eq!(library_of(other), None, "{other}");
        }
    }

    /// Every pinned library is in the table, with the wheel that line pins and its `--with`
    /// name; the table's lines are the pinned ones.
    #[test]
    fn every_pinned_library_is_in_the_table_for_its_line() {
        for line in pin::PINS {
            assert!(LINES.contains(&(line.major, line.name)), "{}", line.name);
            for l in line.libraries {
                let t = LIBRARIES.iter().find(|t| t.wheel(line.major) == l.wheel.package);
                assert_eq!(t.and_then(|t| t.with), Some(l.name), "{} {}", line.name, l.wheel.package);
            }
        }
        assert_eq!(LINES.len(), pin::PINS.len());
        let with: Vec<&str> = LIBRARIES.iter().filter_map(|t| t.with).collect();
        assert_eq!(pin::library_names(), with);
    }

    #[test]
    fn the_note_names_the_header_the_wheel_and_the_command() {
        let n = note("curand_kernel.h", Some(13)).unwrap();
        assert!(n.starts_with("`curand_kernel.h` is cuRAND's, shipped in the `nvidia-curand` wheel"), "{n}");
        assert!(n.contains("`cargo launch setup --toolchain 13.0 --with curand`"), "{n}");
        assert!(n.contains("include = [\"/usr/local/cuda/include\"]"), "{n}");
        let n = note("curand_kernel.h", Some(12)).unwrap();
        assert!(n.contains("`nvidia-curand-cu12`") && n.contains("--toolchain 12.9 --with curand"), "{n}");
        // A library setup does not pin: pip and `include`.
        let n = note("cublasLt.h", Some(12)).unwrap();
        assert!(n.contains("`nvidia-cublas-cu12` wheel (which `cargo launch setup` does not install)"), "{n}");
        assert!(n.contains("`pip install \"cuda-toolkit[cublas]==12.9.*\"`") && !n.contains("--with"), "{n}");
        // Issue 32 class 11: pinned to the toolchain's CUDA line (`nvidia-cublas` alone is the newest).
        let n = note("cublas_v2.h", Some(13)).unwrap();
        assert!(n.contains("`pip install \"cuda-toolkit[cublas]==13.0.*\"`"), "{n}");
        assert!(n.contains("`pip install nvidia-cublas` alone installs the newest"), "{n}");
        // A library outside the toolkit's metapackage keeps its CUDA major in its wheel's name.
        let n = note("nccl.h", Some(13)).unwrap();
        assert!(n.contains("`pip install nvidia-nccl-cu13` for CUDA 13.0"), "{n}");
        let n = note("cufft.h", None).unwrap();
        assert!(n.contains("`nvidia-cufft-cu12` wheel (CUDA 12) or `nvidia-cufft` (CUDA 13)"), "{n}");
        assert_eq!(note("kernels.cuh", Some(12)), None);
    }

    #[test]
    fn notes_read_nvrtc_and_nvcc_logs_once_per_header() {
        let nvrtc = "kernels/a.cu(1): catastrophic error: cannot open source file \"curand_kernel.h\"\n  \
                     #include <curand_kernel.h>\n\nkernels/b.cu(1): catastrophic error: cannot open source file \
                     \"curand_kernel.h\"\n";
        let n = notes("NVRTC 13.0.88", nvrtc);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].contains("--toolchain 13.0 --with curand"), "{n:?}");
        let gcc = "kernels/host.cu:2:10: fatal error: nvtx3/nvToolsExt.h: No such file or directory\n";
        let n = notes("nvcc 12.9.86", gcc);
        assert!(n.len() == 1 && n[0].contains("`nvidia-nvtx-cu12`") && n[0].contains("--with nvtx"), "{n:?}");
        assert!(notes("NVRTC 12.9.86", "kernels/a.cu(3): error: identifier \"x\" is undefined\n").is_empty());
        assert!(notes("NVRTC 12.9.86", "cannot open source file \"mine.cuh\"\n").is_empty());
    }
}

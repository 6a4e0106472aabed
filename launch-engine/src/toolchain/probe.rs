//! Where NVRTC, ptxas, the CUDA headers and CCCL are in one root: the pip wheels of a CUDA major
//! (12.x: `nvidia/cuda_nvrtc/lib`, `nvidia/cuda_nvcc/bin`, ...; 13.x: all in `nvidia/cu13/{bin,lib,
//! include}`, CCCL in `include/cccl`), else a CUDA toolkit (`bin/ptxas`, `lib64/libnvrtc.so`; 13.x
//! toolkits keep CCCL in `include/cccl` too).

use std::path::{Path, PathBuf};

use super::{Origin, Toolchain};

/// The files one layout keeps the toolchain in, the first existing of each list used.
struct Layout {
    what: String,
    nvrtc: Vec<PathBuf>,
    ptxas: PathBuf,
    include: PathBuf,
    cccl: PathBuf,
}

/// The pip wheels of CUDA `major` under `root` (a `pip --target` folder or site-packages).
fn wheels(root: &Path, major: u32) -> Layout {
    let nvidia = root.join("nvidia");
    let lib = format!("libnvrtc.so.{major}");
    if major <= 12 {
        Layout {
            what: format!("the CUDA {major} wheels (nvidia/cuda_nvrtc, nvidia/cuda_nvcc)"),
            nvrtc: vec![nvidia.join("cuda_nvrtc/lib").join(lib)],
            ptxas: nvidia.join("cuda_nvcc/bin/ptxas"),
            include: nvidia.join("cuda_runtime/include"),
            cccl: nvidia.join("cuda_cccl/include"),
        }
    } else {
        let cu = nvidia.join(format!("cu{major}"));
        Layout {
            what: format!("the CUDA {major} wheels (nvidia/cu{major})"),
            nvrtc: vec![cu.join("lib").join(lib)],
            ptxas: cu.join("bin/ptxas"),
            include: cu.join("include"),
            cccl: cu.join("include/cccl"),
        }
    }
}

/// The headers every compile reads, where CUDA `major`'s wheels keep them under `root`: the
/// runtime's `cuda_runtime.h` and `cuda_fp16.h`, CCCL's `cuda/std/version`.
pub(super) fn header_markers(root: &Path, major: u32) -> Vec<PathBuf> {
    let layout = wheels(root, major);
    vec![
        layout.include.join("cuda_runtime.h"),
        layout.include.join("cuda_fp16.h"),
        layout.cccl.join("cuda/std/version"),
    ]
}

/// A CUDA toolkit at `root`, of any major (the caller checks ptxas's).
fn toolkit(root: &Path) -> Layout {
    Layout {
        what: "a CUDA toolkit".into(),
        nvrtc: ["lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"]
            .iter()
            .map(|d| root.join(d).join("libnvrtc.so"))
            .collect(),
        ptxas: root.join("bin/ptxas"),
        include: root.join("include"),
        cccl: root.join("include/cccl"),
    }
}

/// Checks one root for CUDA `major`'s wheels, then a toolkit; the error lists what is missing.
pub(super) fn probe(root: &Path, origin: Origin, major: u32) -> Result<Toolchain, String> {
    match crate::env::path_kind(root) {
        crate::env::PathKind::Folder => {}
        crate::env::PathKind::Missing => return Err("does not exist".into()),
        other => return Err(format!("{}, not a toolchain folder", other.describe())),
    }
    let mut missing = Vec::new();
    for (n, layout) in [wheels(root, major), toolkit(root)].into_iter().enumerate() {
        let nvrtc = layout.nvrtc.iter().find(|p| p.is_file());
        let ptxas = Some(&layout.ptxas).filter(|p| p.is_file());
        match (nvrtc, ptxas) {
            // `cargo launch setup` installs CCCL since it pins it: an install without it is one an
            // earlier cargo-launch made, to be upgraded rather than used.
            (Some(_), Some(_)) if n == 0 && origin == Origin::Cache && !has_cccl(&layout.cccl) => {
                return Err(format!(
                    "installed by an earlier cargo-launch, without CCCL ({}): run `cargo launch setup` to upgrade it",
                    shown(root, &layout.cccl)
                ));
            }
            (Some(n), Some(p)) => {
                let include = Some(layout.include)
                    .filter(|i| i.join("cuda_runtime.h").is_file() || i.join("cuda_fp16.h").is_file());
                return Ok(Toolchain {
                    root: root.to_path_buf(),
                    origin,
                    nvrtc: n.clone(),
                    ptxas: p.clone(),
                    include,
                    cccl_include: Some(layout.cccl).filter(|i| has_cccl(i)),
                    libraries: Vec::new(),
                    nvrtc_version: String::new(),
                    ptxas_version: String::new(),
                });
            }
            (n, p) => {
                if n.is_none() {
                    missing.push(shown(root, &layout.nvrtc[0]));
                }
                if p.is_none() {
                    missing.push(shown(root, &layout.ptxas));
                }
            }
        }
    }
    let mut outcome = format!("no {}", missing.join(", no "));
    // The wheels of another line, to say why they were not taken.
    for other in (12..=major + 1).filter(|m| *m != major) {
        let layout = wheels(root, other);
        if layout.nvrtc[0].is_file() && layout.ptxas.is_file() {
            outcome.push_str(&format!("; it holds {}, not CUDA {major}'s", layout.what));
        }
    }
    Err(outcome)
}

/// `path` relative to `root`, `/`-separated.
fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

/// Whether `include` holds CCCL (`cuda/std/version`).
pub(super) fn has_cccl(include: &Path) -> bool {
    include.join("cuda/std/version").is_file()
}

//! Finding NVRTC and ptxas, with no GPU and no CUDA install required.
//!
//! Discovery order (the first folder that has both wins):
//! 1. `LAUNCH_TOOLCHAIN`, an explicit root (never falls through when set);
//! 2. the cargo-launch cache, where `cargo launch setup` installs NVIDIA's pinned PyPI wheels;
//! 3. the same wheels in Python site-packages (`VIRTUAL_ENV`, then `python3`'s site dirs);
//! 4. `CUDA_HOME`, `CUDA_PATH`; 5. `/usr/local/cuda`; 6. the folder above `ptxas` on `PATH`.
//!
//! Steps 3–6 are skipped when `LAUNCH_NO_SYSTEM_TOOLCHAIN=1`.

use std::path::{Path, PathBuf};

use crate::env::Env;
use crate::error::{Error, Searched};
use crate::process::Tool;

pub mod pin;

pub use pin::PINNED_VERSION;

/// Where a toolchain was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `LAUNCH_TOOLCHAIN`.
    Override,
    /// The cargo-launch cache.
    Cache,
    /// Python site-packages.
    SitePackages,
    /// `CUDA_HOME` / `CUDA_PATH` / `/usr/local/cuda` / `PATH`.
    Toolkit,
}

/// A usable NVRTC + ptxas pair.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// The folder it was found in.
    pub root: PathBuf,
    /// How it was found.
    pub origin: Origin,
    /// The NVRTC shared library.
    pub nvrtc: PathBuf,
    /// The ptxas executable.
    pub ptxas: PathBuf,
    /// CUDA headers (`cuda_fp16.h`, ...) if present: passed to NVRTC as an include path.
    pub include: Option<PathBuf>,
    /// CCCL's headers (`cuda/std/...`, `cub/...`) when they are a folder of their own (the
    /// `nvidia-cuda-cccl` wheel); searched after `include`. A toolkit has them in `include`.
    pub cccl_include: Option<PathBuf>,
    /// NVRTC's exact version where known (`12.9.86` from the wheel's metadata), else `major.minor`.
    pub nvrtc_version: String,
    /// ptxas's version (`12.9.86`, from `ptxas --version`).
    pub ptxas_version: String,
}

/// The cache root: `LAUNCH_CACHE_DIR`, else `$XDG_CACHE_HOME/cargo-launch`, else
/// `$HOME/.cache/cargo-launch`.
pub fn cache_dir(env: &Env) -> Option<PathBuf> {
    if let Some(d) = env.get("LAUNCH_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = env.get("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("cargo-launch"));
    }
    env.get("HOME").map(|h| PathBuf::from(h).join(".cache").join("cargo-launch"))
}

/// Where `cargo launch setup` installs the pinned toolchain.
pub fn pinned_dir(env: &Env) -> Option<PathBuf> {
    cache_dir(env).map(|c| c.join("toolchain").join(format!("cuda-{PINNED_VERSION}")))
}

/// Finds a toolchain, or says everywhere it looked.
pub fn discover(env: &Env) -> Result<Toolchain, Error> {
    let mut searched = Vec::new();

    if let Some(root) = env.get("LAUNCH_TOOLCHAIN") {
        let root = PathBuf::from(root);
        return match probe(&root, Origin::Override) {
            Ok(t) => finish_or_searched(t, "LAUNCH_TOOLCHAIN", searched),
            Err(outcome) => {
                searched.push(Searched { source: "LAUNCH_TOOLCHAIN".into(), path: Some(root), outcome });
                Err(Error::ToolchainNotFound { searched })
            }
        };
    }

    let mut candidates: Vec<(String, PathBuf, Origin)> = Vec::new();
    match pinned_dir(env) {
        Some(dir) => candidates.push(("cargo-launch cache".into(), dir, Origin::Cache)),
        None => searched.push(Searched {
            source: "cargo-launch cache".into(),
            path: None,
            outcome: "neither LAUNCH_CACHE_DIR, XDG_CACHE_HOME nor HOME is set".into(),
        }),
    }

    if env.flag("LAUNCH_NO_SYSTEM_TOOLCHAIN") {
        searched.push(Searched {
            source: "system locations".into(),
            path: None,
            outcome: "skipped (LAUNCH_NO_SYSTEM_TOOLCHAIN is set)".into(),
        });
    } else {
        for dir in site_packages(env, &mut searched) {
            candidates.push(("Python site-packages".into(), dir, Origin::SitePackages));
        }
        for var in ["CUDA_HOME", "CUDA_PATH"] {
            match env.get(var) {
                Some(v) => candidates.push((var.into(), PathBuf::from(v), Origin::Toolkit)),
                None => searched.push(Searched { source: var.into(), path: None, outcome: "not set".into() }),
            }
        }
        candidates.push(("default CUDA location".into(), PathBuf::from("/usr/local/cuda"), Origin::Toolkit));
        match env.untracked("PATH").and_then(|p| which_in("ptxas", &p)) {
            Some(ptxas) => {
                let root = ptxas.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
                candidates.push(("ptxas on PATH".into(), root, Origin::Toolkit));
            }
            None => searched.push(Searched { source: "PATH".into(), path: None, outcome: "no `ptxas` on PATH".into() }),
        }
    }

    for (source, dir, origin) in candidates {
        match probe(&dir, origin) {
            Ok(t) => return finish_or_searched(t, &source, searched),
            Err(outcome) => searched.push(Searched { source, path: Some(dir), outcome }),
        }
    }
    Err(Error::ToolchainNotFound { searched })
}

/// The toolchain in exactly this root (wheel or toolkit layout), versions filled in.
pub fn at(root: &Path, origin: Origin) -> Result<Toolchain, Error> {
    match probe(root, origin) {
        Ok(t) => finish_or_searched(t, "toolchain root", Vec::new()),
        Err(outcome) => Err(Error::ToolchainNotFound {
            searched: vec![Searched { source: "toolchain root".into(), path: Some(root.to_path_buf()), outcome }],
        }),
    }
}

/// Checks one root for the wheel layout, then the toolkit layout.
fn probe(root: &Path, origin: Origin) -> Result<Toolchain, String> {
    if !root.is_dir() {
        return Err("does not exist".into());
    }
    let wheel = root.join("nvidia");
    let layouts = [
        // pip --target / site-packages: the wheels of the pin (or their CUDA 13 versions).
        (
            vec![
                wheel.join(pin::NVRTC.folder).join("lib/libnvrtc.so.12"),
                wheel.join(pin::NVRTC.folder).join("lib/libnvrtc.so.13"),
            ],
            vec![wheel.join(pin::NVCC.folder).join("bin/ptxas")],
            vec![wheel.join(pin::RUNTIME.folder).join("include")],
        ),
        // CUDA toolkit
        (
            vec![
                root.join("lib64/libnvrtc.so"),
                root.join("lib/libnvrtc.so"),
                root.join("targets/x86_64-linux/lib/libnvrtc.so"),
                root.join("targets/sbsa-linux/lib/libnvrtc.so"),
            ],
            vec![root.join("bin/ptxas")],
            vec![root.join("include")],
        ),
    ];
    let mut missing = Vec::new();
    for (nvrtcs, ptxases, includes) in layouts {
        let nvrtc = nvrtcs.iter().find(|p| p.is_file());
        let ptxas = ptxases.iter().find(|p| p.is_file());
        match (nvrtc, ptxas) {
            // `cargo launch setup` installs CCCL since it pins it: an install without it is one an
            // earlier cargo-launch made, to be upgraded rather than used.
            (Some(_), Some(_))
                if origin == Origin::Cache && !has_cccl(&wheel.join(pin::CCCL.folder).join("include")) =>
            {
                return Err("installed by an earlier cargo-launch, without CCCL (nvidia/cuda_cccl): run \
                            `cargo launch setup` to upgrade it"
                    .into());
            }
            (Some(n), Some(p)) => {
                return Ok(Toolchain {
                    root: root.to_path_buf(),
                    origin,
                    nvrtc: n.clone(),
                    ptxas: p.clone(),
                    include: includes
                        .into_iter()
                        .find(|i| i.join("cuda_runtime.h").is_file() || i.join("cuda_fp16.h").is_file()),
                    // The wheel's own folder; CUDA 13 toolkits keep CCCL in include/cccl.
                    cccl_include: [wheel.join(pin::CCCL.folder).join("include"), root.join("include/cccl")]
                        .into_iter()
                        .find(|i| has_cccl(i)),
                    nvrtc_version: String::new(),
                    ptxas_version: String::new(),
                });
            }
            (n, p) => {
                if n.is_none() {
                    missing.push(nvrtcs[0].strip_prefix(root).unwrap_or(&nvrtcs[0]).display().to_string());
                }
                if p.is_none() {
                    missing.push(ptxases[0].strip_prefix(root).unwrap_or(&ptxases[0]).display().to_string());
                }
            }
        }
    }
    Err(format!("no {}", missing.join(", no ")))
}

/// Whether `include` holds CCCL (`cuda/std/version`).
pub fn has_cccl(include: &Path) -> bool {
    include.join("cuda/std/version").is_file()
}

/// [`finish`], where a ptxas that cannot be run (not executable, wrong CPU) ends the search as a
/// place searched that names where it came from. The tool's error text already holds the OS
/// reason, and `ToolchainNotFound` has no source, so a `{:#}` chain prints the reason once.
fn finish_or_searched(t: Toolchain, source: &str, mut searched: Vec<Searched>) -> Result<Toolchain, Error> {
    let root = t.root.clone();
    finish(t).map_err(|e| {
        searched.push(Searched { source: source.into(), path: Some(root), outcome: e.to_string() });
        Error::ToolchainNotFound { searched }
    })
}

/// Fills in the versions: ptxas from `--version`, NVRTC from the wheel's dist-info or the
/// library's file name (and NVRTC itself, once loaded, in `compile`).
fn finish(mut t: Toolchain) -> Result<Toolchain, Error> {
    let out = Tool::new(&t.ptxas).arg("--version").timeout(crate::process::PROBE_TIMEOUT).run()?;
    t.ptxas_version = parse_ptxas_version(&out.stdout)
        .or_else(|| parse_ptxas_version(&out.stderr))
        .unwrap_or_else(|| "unknown".into());
    t.nvrtc_version = nvrtc_version_from_files(&t).unwrap_or_default();
    Ok(t)
}

/// `Cuda compilation tools, release 12.9, V12.9.86` → `12.9.86`.
pub fn parse_ptxas_version(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.split(", V").nth(1)?;
        Some(v.trim().to_string())
    })
}

fn nvrtc_version_from_files(t: &Toolchain) -> Option<String> {
    // Wheel: <root>/nvidia_cuda_nvrtc_cu12-12.9.86.dist-info next to <root>/nvidia.
    if let Ok(rd) = std::fs::read_dir(&t.root) {
        let mut found: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let rest = name.strip_prefix("nvidia_cuda_nvrtc_cu1")?;
                let ver = rest.get(2..)?.strip_suffix(".dist-info")?;
                Some(ver.to_string())
            })
            .collect();
        found.sort();
        if let Some(v) = found.pop() {
            return Some(v);
        }
    }
    // Toolkit: libnvrtc.so -> libnvrtc.so.12 -> libnvrtc.so.12.9.86.
    let real = std::fs::canonicalize(&t.nvrtc).ok()?;
    let name = real.file_name()?.to_string_lossy().into_owned();
    let v = name.strip_prefix("libnvrtc.so.")?;
    (v.matches('.').count() >= 2).then(|| v.to_string())
}

/// Python site-packages folders that may hold the wheels.
fn site_packages(env: &Env, searched: &mut Vec<Searched>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(venv) = env.get("VIRTUAL_ENV") {
        let lib = PathBuf::from(venv).join("lib");
        if let Ok(rd) = std::fs::read_dir(&lib) {
            let mut found: Vec<PathBuf> =
                rd.filter_map(|e| e.ok()).map(|e| e.path().join("site-packages")).filter(|p| p.is_dir()).collect();
            found.sort();
            dirs.extend(found);
        }
    }
    let python = python(env);
    let script = "import site, sys\nfor p in site.getsitepackages() + [site.getusersitepackages()]: print(p)";
    match Tool::new(&python).args(["-c", script]).timeout(crate::process::PROBE_TIMEOUT).run() {
        Ok(out) => dirs.extend(out.stdout.lines().filter(|l| !l.trim().is_empty()).map(PathBuf::from)),
        Err(e) => searched.push(Searched {
            source: "Python site-packages".into(),
            path: None,
            outcome: format!("could not ask `{}`: {e}", python.display()),
        }),
    }
    dirs.dedup();
    dirs
}

/// The Python interpreter: `LAUNCH_PYTHON` or `python3`.
pub fn python(env: &Env) -> PathBuf {
    env.get("LAUNCH_PYTHON").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("python3"))
}

fn which_in(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path).map(|d| d.join(name)).find(|p| p.is_file())
}

impl Toolchain {
    /// `NVRTC 12.9.86, ptxas 12.9.86 (cargo-launch cache: /home/u/.cache/...)`.
    pub fn describe(&self) -> String {
        let origin = match self.origin {
            Origin::Override => "LAUNCH_TOOLCHAIN",
            Origin::Cache => "cargo-launch cache",
            Origin::SitePackages => "Python site-packages",
            Origin::Toolkit => "CUDA toolkit",
        };
        format!("NVRTC {}, ptxas {} ({origin}: {})", self.nvrtc_version, self.ptxas_version, self.root.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_version_line_is_parsed() {
        let text = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCopyright (c) 2005-2025 NVIDIA Corporation\nBuilt on Tue_May_27_02:18:05_PDT_2025\nCuda compilation tools, release 12.9, V12.9.86\nBuild cuda_12.9.r12.9/compiler.36037853_0\n";
        assert_eq!(parse_ptxas_version(text).as_deref(), Some("12.9.86"));
        assert_eq!(parse_ptxas_version("garbage"), None);
    }

    #[test]
    fn probe_reports_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let e = probe(dir.path(), Origin::Cache).unwrap_err();
        assert!(e.contains("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"), "{e}");
        assert!(e.contains("bin/ptxas"), "{e}");
        assert_eq!(probe(&dir.path().join("nope"), Origin::Cache).unwrap_err(), "does not exist");
    }

    #[test]
    fn a_cache_install_without_cccl_is_to_be_upgraded_and_cccl_is_found_when_there() {
        let dir = tempfile::tempdir().unwrap();
        for (folder, file) in [("nvidia/cuda_nvrtc/lib", "libnvrtc.so.12"), ("nvidia/cuda_nvcc/bin", "ptxas")] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
            std::fs::write(dir.path().join(folder).join(file), b"").unwrap();
        }
        let e = probe(dir.path(), Origin::Cache).unwrap_err();
        assert!(e.contains("without CCCL") && e.contains("cargo launch setup"), "{e}");
        // Elsewhere CCCL is optional.
        assert_eq!(probe(dir.path(), Origin::Override).unwrap().cccl_include, None);
        let cccl = dir.path().join("nvidia/cuda_cccl/include");
        std::fs::create_dir_all(cccl.join("cuda/std")).unwrap();
        std::fs::write(cccl.join("cuda/std/version"), b"").unwrap();
        assert_eq!(probe(dir.path(), Origin::Cache).unwrap().cccl_include, Some(cccl));
    }

    #[cfg(unix)]
    #[test]
    fn a_ptxas_that_cannot_start_names_its_source_and_the_reason_once() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("nvidia/cuda_nvrtc/lib");
        let bin = dir.path().join("nvidia/cuda_nvcc/bin");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(lib.join("libnvrtc.so.12"), b"").unwrap();
        std::fs::write(bin.join("ptxas"), b"#!/bin/sh\n").unwrap(); // not executable
        let t = probe(dir.path(), Origin::Override).unwrap();
        let e = finish_or_searched(t, "LAUNCH_TOOLCHAIN", Vec::new()).unwrap_err();
        assert!(matches!(e, Error::ToolchainNotFound { .. }), "{e:?}");
        let text = format!("{:#}", anyhow_like(&e));
        assert!(text.contains(&format!("- LAUNCH_TOOLCHAIN: {}: could not start `", dir.path().display())), "{text}");
        assert_eq!(text.matches("Permission denied").count(), 1, "{text}");
    }

    /// The message and every source below it, as `{:#}` of anyhow prints them.
    fn anyhow_like(e: &dyn std::error::Error) -> String {
        let mut s = e.to_string();
        let mut cur = e.source();
        while let Some(c) = cur {
            s.push_str(&format!(": {c}"));
            cur = c.source();
        }
        s
    }
}

//! Finding NVRTC and ptxas, with no GPU and no CUDA install required.
//!
//! A crate asks for a CUDA line (`toolchain = "13.0"`, default `"12.9"`, see [`pin`]); any
//! toolchain of that major serves it. Discovery order (the first folder that has one wins):
//! 1. `LAUNCH_TOOLCHAIN`, an explicit root (never falls through when set: a toolchain of another
//!    major there is an error);
//! 2. the cargo-launch cache, where `cargo launch setup` installs each pinned set side by side
//!    (`toolchain/cuda-12.9.86/`, `toolchain/cuda-13.0.88/`);
//! 3. the same wheels in Python site-packages (`VIRTUAL_ENV`, then `python3`'s site dirs);
//! 4. `CUDA_HOME`, `CUDA_PATH`; 5. `/usr/local/cuda`; 6. the folder above `ptxas` on `PATH`.
//!
//! Steps 3–6 are skipped when `LAUNCH_NO_SYSTEM_TOOLCHAIN=1`; there a toolchain of another major
//! is passed over (and said) rather than used.

use std::path::{Path, PathBuf};

use crate::env::{var, Env};
use crate::error::{Error, Searched};
use crate::process::Tool;

mod integrity;
pub mod pin;
mod probe;
#[cfg(test)]
mod tests;

pub use integrity::{damage, Role};
pub use pin::{Pin, PINNED_VERSION};

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
    /// CCCL's headers (`cuda/std/...`, `cub/...`) when they are a folder of their own (the 12.x
    /// `nvidia-cuda-cccl-cu12` wheel, `include/cccl` of CUDA 13); searched after `include`.
    pub cccl_include: Option<PathBuf>,
    /// The include folders of CUDA libraries' wheels (cuRAND, NVTX) for it: those `cargo launch
    /// setup --with` installed beside it, and a 12.x wheel root's own (`nvidia/curand/include`);
    /// searched after CCCL, found by [`discover_for`] only.
    pub libraries: Vec<PathBuf>,
    /// NVRTC's exact version where known (`12.9.86` from the wheel's metadata), else `major.minor`.
    pub nvrtc_version: String,
    /// ptxas's version (`12.9.86`, from `ptxas --version`).
    pub ptxas_version: String,
}

/// The cache root: `LAUNCH_CACHE_DIR`, else `$XDG_CACHE_HOME/cargo-launch`, else
/// `$HOME/.cache/cargo-launch`.
pub fn cache_dir(env: &Env) -> Option<PathBuf> {
    if let Some(d) = env.get(var::LAUNCH_CACHE_DIR) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = env.get(var::XDG_CACHE_HOME) {
        return Some(PathBuf::from(d).join("cargo-launch"));
    }
    env.get(var::HOME).map(|h| PathBuf::from(h).join(".cache").join("cargo-launch"))
}

/// Where `cargo launch setup` installs the default pinned toolchain.
pub fn pinned_dir(env: &Env) -> Option<PathBuf> {
    pin_dir(env, &pin::DEFAULT)
}

/// Where `cargo launch setup --toolchain <pin.name>` installs `pin`: `toolchain/cuda-<version>`
/// in the cache, one folder per pin (12.9's is where it always was).
pub fn pin_dir(env: &Env, pin: &Pin) -> Option<PathBuf> {
    cache_dir(env).map(|c| c.join("toolchain").join(format!("cuda-{}", pin.version)))
}

/// Where `cargo launch setup --toolchain <pin.name> --with <library>` installs the library's
/// wheel: a folder of its own beside the toolchain's (`toolchain/cuda-13.0.88-curand`), so
/// reinstalling either leaves the other alone.
pub fn library_dir(env: &Env, pin: &Pin, library: &pin::Library) -> Option<PathBuf> {
    cache_dir(env).map(|c| c.join("toolchain").join(format!("cuda-{}-{}", pin.version, library.name)))
}

/// The include folder of `library`'s wheel installed (`pip --target`) in `dir`.
pub fn library_include(dir: &Path, library: &pin::Library) -> PathBuf {
    dir.join("nvidia").join(library.wheel.folder).join("include")
}

/// Whether `dir` holds a complete install of `library` at its pinned version (setup's marker
/// and pip's `<name>-<version>.dist-info`).
pub fn library_installed(dir: &Path, library: &pin::Library) -> bool {
    let w = &library.wheel;
    dir.join(".complete").is_file()
        && dir.join(format!("{}-{}.dist-info", w.package.replace('-', "_"), w.version)).is_dir()
        && library_include(dir, library).is_dir()
}

/// `t` with the include folders of `pin`'s libraries that are there: in its own wheel root,
/// then installed beside it in the cache.
fn with_libraries(env: &Env, mut t: Toolchain, pin: &Pin) -> Toolchain {
    let mut found = Vec::new();
    for library in pin.libraries {
        let own = library_include(&t.root, library);
        if own.is_dir() {
            found.push(own);
        }
        if let Some(dir) = library_dir(env, pin, library).filter(|d| library_installed(d, library)) {
            found.push(library_include(&dir, library));
        }
    }
    // A 13.x wheel's library headers share the toolchain's own include folder.
    found.retain(|d| Some(d) != t.include.as_ref());
    found.dedup();
    t.libraries = found;
    t
}

/// Finds a toolchain for the default pin, or says everywhere it looked.
pub fn discover(env: &Env) -> Result<Toolchain, Error> {
    discover_for(env, &pin::DEFAULT)
}

/// Finds a toolchain of `pin`'s CUDA major, or says everywhere it looked; with the include
/// folders of the CUDA libraries installed for it ([`Toolchain::libraries`]).
pub fn discover_for(env: &Env, pin: &Pin) -> Result<Toolchain, Error> {
    discover_toolchain(env, pin).map(|t| with_libraries(env, t, pin))
}

fn discover_toolchain(env: &Env, pin: &Pin) -> Result<Toolchain, Error> {
    let mut searched = Vec::new();
    let not_found =
        |searched| Error::ToolchainNotFound { toolchain: pin.name, default: pin.name == pin::DEFAULT.name, searched };

    let memo = cache_dir(env);
    let memo = memo.as_deref();
    if let Some(root) = env.get(var::LAUNCH_TOOLCHAIN) {
        let root = PathBuf::from(root);
        searched.push(match probe::probe(&root, Origin::Override, pin.major) {
            Ok(t) => match judge(t, "LAUNCH_TOOLCHAIN", pin, memo) {
                Verdict::Use(t) => return Ok(t),
                Verdict::OtherMajor(s) | Verdict::Broken(s) => s,
            },
            Err(outcome) => Searched { source: "LAUNCH_TOOLCHAIN".into(), path: Some(root), outcome },
        });
        return Err(not_found(searched));
    }

    let mut candidates: Vec<(String, PathBuf, Origin)> = Vec::new();
    match pin_dir(env, pin) {
        Some(dir) => candidates.push(("cargo-launch cache".into(), dir, Origin::Cache)),
        None => searched.push(Searched {
            source: "cargo-launch cache".into(),
            path: None,
            outcome: "neither LAUNCH_CACHE_DIR, XDG_CACHE_HOME nor HOME is set".into(),
        }),
    }

    if env.flag(var::LAUNCH_NO_SYSTEM_TOOLCHAIN)? {
        searched.push(Searched {
            source: "system locations".into(),
            path: None,
            outcome: "skipped (LAUNCH_NO_SYSTEM_TOOLCHAIN is set)".into(),
        });
    } else {
        for dir in site_packages(env, &mut searched) {
            candidates.push(("Python site-packages".into(), dir, Origin::SitePackages));
        }
        for (name, value) in env.each(var::CUDA_HOME) {
            match value {
                Some(v) => candidates.push((name.into(), PathBuf::from(v), Origin::Toolkit)),
                None => searched.push(Searched { source: name.into(), path: None, outcome: "not set".into() }),
            }
        }
        candidates.push(("default CUDA location".into(), PathBuf::from("/usr/local/cuda"), Origin::Toolkit));
        match on_path("ptxas", env) {
            Some(ptxas) => {
                let (root, origin) = root_of_ptxas(&ptxas);
                candidates.push(("ptxas on PATH".into(), root, origin));
            }
            None => searched.push(Searched { source: "PATH".into(), path: None, outcome: "no `ptxas` on PATH".into() }),
        }
    }

    for (source, dir, origin) in candidates {
        match probe::probe(&dir, origin, pin.major) {
            Ok(t) => match judge(t, &source, pin, memo) {
                Verdict::Use(t) => return Ok(t),
                Verdict::OtherMajor(s) => searched.push(s),
                Verdict::Broken(s) => {
                    searched.push(s);
                    return Err(not_found(searched));
                }
            },
            Err(outcome) => searched.push(Searched { source, path: Some(dir), outcome }),
        }
    }
    Err(not_found(searched))
}

/// The toolchain of `pin`'s CUDA major in exactly this root (wheel or toolkit layout), versions
/// filled in.
pub fn at(root: &Path, origin: Origin, pin: &Pin) -> Result<Toolchain, Error> {
    let searched = match probe::probe(root, origin, pin.major) {
        Ok(t) => match judge(t, "toolchain root", pin, None) {
            Verdict::Use(t) => return Ok(t),
            Verdict::OtherMajor(s) | Verdict::Broken(s) => s,
        },
        Err(outcome) => Searched { source: "toolchain root".into(), path: Some(root.to_path_buf()), outcome },
    };
    Err(Error::ToolchainNotFound {
        toolchain: pin.name,
        default: pin.name == pin::DEFAULT.name,
        searched: vec![searched],
    })
}

/// `name` on `PATH` (never announced to cargo: see [`var::PATH`]).
pub fn on_path(name: &str, env: &Env) -> Option<PathBuf> {
    env.on_path(name)
}

/// What a found toolchain is good for.
enum Verdict {
    /// Use it.
    Use(Toolchain),
    /// Another CUDA major than the pin's: passed over, unless `LAUNCH_TOOLCHAIN` named it.
    OtherMajor(Searched),
    /// A file of it is damaged ([`integrity`]), or its ptxas cannot be run (not executable, wrong
    /// CPU): the search ends there, as a place searched that names where it came from. The tool's error text already holds the OS reason,
    /// and `ToolchainNotFound` has no source, so a `{:#}` chain prints the reason once.
    Broken(Searched),
}

/// Checks every file of `t` the build loads or runs, [`finish`]es it and checks its major against
/// `pin`'s. `memo`: the cache root, where the files' verified digests are remembered.
fn judge(t: Toolchain, source: &str, pin: &Pin, memo: Option<&Path>) -> Verdict {
    let root = t.root.clone();
    let searched = |outcome| Searched { source: source.into(), path: Some(root.clone()), outcome };
    let override_ = t.origin == Origin::Override;
    // ptxas first, which `finish` runs; the rest once its version is known (it names the
    // builtins library NVRTC needs when that is missing).
    if let Some(why) = damage(&t.ptxas, Role::Program, memo) {
        return Verdict::Broken(searched(format!("{} is damaged ({why}); {}", t.ptxas.display(), reinstall(t.origin))));
    }
    let t = match finish(t) {
        Ok(t) => t,
        Err(e) => return Verdict::Broken(searched(e.to_string())),
    };
    if t.major().is_some_and(|m| m != pin.major) {
        return Verdict::OtherMajor(searched(format!(
            "holds CUDA {} (ptxas {}), but toolchain = \"{}\" needs CUDA {}.x{}",
            t.ptxas_version.split('.').take(2).collect::<Vec<_>>().join("."),
            t.ptxas_version,
            pin.name,
            pin.major,
            if override_ {
                "; point LAUNCH_TOOLCHAIN at one, or change `toolchain` in [package.metadata.launch]"
            } else {
                ""
            }
        )));
    }
    match damaged_file(&t, pin.major, memo) {
        Some(why) => Verdict::Broken(searched(why)),
        None => Verdict::Use(t),
    }
}

/// The toolchain root a `ptxas` found on PATH belongs to: a toolkit's (`<root>/bin/ptxas`), or,
/// for a wheel's (`<site>/nvidia/cu13/bin/ptxas`, `<site>/nvidia/cuda_nvcc/bin/ptxas`), the folder
/// holding `nvidia/`, where its NVRTC wheel lies beside it.
fn root_of_ptxas(ptxas: &Path) -> (PathBuf, Origin) {
    let bin_parent = ptxas.parent().and_then(Path::parent).unwrap_or(Path::new(""));
    let wheel = bin_parent.file_name().and_then(|n| n.to_str()).is_some_and(|n| n == "cu13" || n == "cuda_nvcc")
        && bin_parent.parent().and_then(Path::file_name).is_some_and(|n| n == "nvidia");
    match bin_parent.parent().and_then(Path::parent).filter(|_| wheel) {
        Some(site) => (site.to_path_buf(), Origin::SitePackages),
        None => (bin_parent.to_path_buf(), Origin::Toolkit),
    }
}

/// The first file of `t` that the build loads, runs or reads and that is damaged, with the fix:
/// NVRTC, its builtins (which NVRTC loads when it compiles), ptxas, the header folders, and,
/// where a pinned wheel's RECORD lists them, the headers every kernel's compile reads
/// (`cuda_runtime.h`, `cuda_fp16.h`, CCCL's `cuda/std/version`). Before anything is loaded or run:
/// a library cut short kills the process that maps it.
fn damaged_file(t: &Toolchain, major: u32, memo: Option<&Path>) -> Option<String> {
    let dir = t.nvrtc.parent().unwrap_or(Path::new("."));
    let mut builtins: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("libnvrtc-builtins.so"))
        .map(|e| e.path())
        .collect();
    builtins.sort();
    if builtins.is_empty() {
        // Named as NVRTC names it: `libnvrtc-builtins.so.<major>.<minor>` of its version (its
        // wheel's, its file name's, else ptxas's: one toolchain).
        let version = nvrtc_version_from_files(t)
            .or_else(|| Some(t.ptxas_version.clone()).filter(|v| v.split('.').count() >= 2))
            .map(|v| v.split('.').take(2).collect::<Vec<_>>().join("."));
        builtins.push(dir.join(format!("libnvrtc-builtins.so.{}", version.as_deref().unwrap_or("*"))));
    }
    let mut files: Vec<(PathBuf, Role)> = vec![(t.nvrtc.clone(), Role::Loaded)];
    files.extend(builtins.into_iter().map(|b| (b, Role::Loaded)));
    files.push((t.ptxas.clone(), Role::Program));
    files.extend(t.include.iter().chain(&t.cccl_include).map(|i| (i.clone(), Role::Headers)));
    let pinned = probe::header_markers(&t.root, major).into_iter().filter(|h| crate::cache::recorded(h).is_some());
    files.extend(pinned.map(|h| (h, Role::Loaded)));
    let (path, why) = files.into_iter().find_map(|(p, role)| damage(&p, role, memo).map(|why| (p, why)))?;
    Some(format!("{} is damaged ({why}); {}", path.display(), reinstall(t.origin)))
}

/// How to get an intact toolchain instead of a damaged one from `origin`.
pub(crate) fn reinstall(origin: Origin) -> &'static str {
    match origin {
        Origin::Override => "point LAUNCH_TOOLCHAIN at an intact toolchain, or unset it and run `cargo launch setup`",
        Origin::Cache => "run `cargo launch setup`, which installs it again",
        Origin::SitePackages | Origin::Toolkit => {
            "reinstall it, or run `cargo launch setup` (the cargo-launch cache is searched first)"
        }
    }
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
    // Wheel: <root>/nvidia_cuda_nvrtc_cu12-12.9.86.dist-info (CUDA 13: nvidia_cuda_nvrtc-13.0.88)
    // next to <root>/nvidia; site-packages may hold both lines, so only this major's counts.
    let major = t.major().map(|m| format!("{m}."));
    if let Ok(rd) = std::fs::read_dir(&t.root) {
        let mut found: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let rest = name.strip_prefix("nvidia_cuda_nvrtc")?.strip_suffix(".dist-info")?;
                let rest = rest.strip_prefix("_cu12").unwrap_or(rest);
                let ver = rest.strip_prefix('-')?;
                major.as_deref().is_none_or(|m| ver.starts_with(m)).then(|| ver.to_string())
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
    if let Some(venv) = env.get(var::VIRTUAL_ENV) {
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

/// The Python interpreter: `LAUNCH_PYTHON`, else `python3` as found on `PATH` (the bare name
/// when it is not there, so the error names it).
pub fn python(env: &Env) -> PathBuf {
    match env.get(var::LAUNCH_PYTHON) {
        Some(p) => PathBuf::from(p),
        None => on_path("python3", env).unwrap_or_else(|| PathBuf::from("python3")),
    }
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

    /// The CUDA major of its ptxas (`13` for `13.0.88`); `None` before the version is known.
    pub fn major(&self) -> Option<u32> {
        self.ptxas_version.split('.').next()?.parse().ok()
    }

    /// `nvcc` beside ptxas (CUDA 13 wheels and toolkits have it; the 12.9 wheel does not).
    pub fn nvcc(&self) -> Option<PathBuf> {
        self.beside_ptxas("nvcc")
    }

    /// `nvdisasm` beside ptxas (the CUDA 13 pin installs it; toolkits have it).
    pub fn nvdisasm(&self) -> Option<PathBuf> {
        self.beside_ptxas("nvdisasm")
    }

    fn beside_ptxas(&self, name: &str) -> Option<PathBuf> {
        Some(self.ptxas.with_file_name(name)).filter(|p| p.is_file())
    }
}

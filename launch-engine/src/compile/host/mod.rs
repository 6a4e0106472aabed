//! `host = ["launch.cu", "moe/*.cu"]`: kernel files that hold host code (launch syntax
//! `<<<...>>>`, `extern "C"` launchers calling the CUDA runtime), which NVRTC cannot compile.
//!
//! Each such file is compiled once, by the toolchain's `nvcc`, for all its arches
//! ([`nvcc`]): the object the crate links, and from the same run the PTX, cubins and
//! `ptxas -v` lines the report reads, so the reported code is the linked code. The compile is a
//! job like NVRTC's: cached by content (the file, its headers, the options, the arches, nvcc's
//! version and the host compiler's identity), scheduled with the device jobs through the same
//! jobserver tokens, its kernels embedded as `launch::Kernel` statics as well and checked by
//! `check`. In a build script the objects, cached or fresh, are archived into one static library
//! (`launch_host_<package>`, `crate::link::library`) that cargo links into the crate, with the toolchain's
//! static CUDA runtime (`libcudart_static.a`), so the binary needs the driver only. Each file is
//! its own whole-program nvcc compile, unless its flags say `-rdc=true` (separable compilation:
//! the link stage then runs nvcc's device link over those files, `crate::link::device`).
//!
//! nvcc needs a host C++ compiler, found as `cc` finds one (`CXX`, else `c++`); it is passed as
//! `-ccbin` only when it is not the compiler nvcc would take by itself (`g++` on `PATH`).

pub mod nvcc;
pub mod steps;
mod symbols;

use std::path::{Path, PathBuf};

use crate::compile::Compiler;
use crate::config::{Config, HostPattern};
use crate::env::{var, Env};
use crate::error::Error;
use crate::plan::{host_pattern_error, PlannedFile};
use crate::process::Tool;
use crate::toolchain::{on_path, Toolchain};

/// One host file's object.
#[derive(Debug)]
pub struct HostObject {
    /// The file, relative to the crate root.
    pub file: String,
    /// The object's bytes.
    pub object: Vec<u8>,
}

/// What compiling `host` files needs besides the toolchain's NVRTC and ptxas.
#[derive(Clone, Debug)]
pub struct Tools {
    /// The toolchain's nvcc.
    pub nvcc: PathBuf,
    /// `nvcc 13.0.88`, as messages and cache keys name it.
    pub nvcc_name: String,
    /// The host C++ compiler, resolved.
    pub cxx: PathBuf,
    /// What the host compiler says it is (the first line of `--version`): its part of cache keys,
    /// where its path has no place.
    pub cxx_id: String,
    /// `-ccbin` for nvcc: the host compiler when nvcc would not take it by itself.
    pub ccbin: Option<PathBuf>,
    /// The folder of `libcudart_static.a`.
    pub cudart_dir: Option<PathBuf>,
}

/// NVRTC options that nvcc does not have: left out of host files' nvcc commands (the rest of the
/// canonical NVRTC spellings in `flags` are nvcc's as well).
const NVRTC_ONLY: &[&str] = &[
    "--modify-stack-limit",
    "--builtin-move-forward",
    "--builtin-initializer-list",
    "--device-w",
    "--device-int128",
    "--minimal",
    "--no-source-include",
];

/// nvcc, the host compiler and the static CUDA runtime, or a located error saying which is
/// missing. `cxx`: the host compiler as `cc` found it (see [`host_compiler`]).
/// `first`: the first `host` entry, where the errors point.
pub fn tools(
    config: &Config,
    first: &HostPattern,
    toolchain: &Toolchain,
    cxx: Result<PathBuf, String>,
    env: &Env,
) -> Result<Tools, Error> {
    let Some(nvcc) = toolchain.nvcc() else {
        let pin = config.toolchain.name;
        let message = if toolchain.major().is_some_and(|m| m < 13) {
            format!(
                "`host` files are compiled with nvcc, and the CUDA {} toolchain found ({}) has none: the 12.9 wheels ship NVRTC and ptxas only; set `toolchain = \"13.0\"` (its wheels include nvcc; `cargo launch setup --toolchain 13.0`), or point LAUNCH_TOOLCHAIN at a CUDA toolkit with nvcc",
                pin,
                toolchain.root.display()
            )
        } else {
            format!(
                "`host` files are compiled with nvcc, and there is none beside ptxas in {}; run `cargo launch setup --toolchain {pin}` again, or point LAUNCH_TOOLCHAIN at a CUDA toolkit with nvcc",
                toolchain.ptxas.parent().unwrap_or(&toolchain.root).display()
            )
        };
        // The 12.9 line has no nvcc at all: the crate's `toolchain` is what to change (its
        // configuration); a 13.x install without it is a damaged toolchain.
        return Err(if toolchain.major().is_some_and(|m| m < 13) {
            host_pattern_error(first, message)
        } else {
            missing_tool(first, message)
        });
    };
    // Never run a damaged nvcc (issue 32, class 1): named, with the way out, before it runs.
    let memo = crate::toolchain::cache_dir(env);
    if let Some(why) = crate::toolchain::damage(&nvcc, crate::toolchain::Role::Program, memo.as_deref()) {
        let fix = crate::toolchain::reinstall(toolchain.origin);
        let message = format!("`host` files are compiled with nvcc, and {} is damaged ({why}); {fix}", nvcc.display());
        return Err(missing_tool(first, message));
    }
    let cxx = cxx.map_err(|why| missing_tool(first, format!(
        "`host` files need a host C++ compiler (nvcc compiles their host code with it), and {why}; install g++ or clang++, or set CXX to one"
    )))?;
    // Asked once per install (memoised by the file's stamp): a rerun starts no tool to ask.
    let nvcc_version = crate::cache::tool_answer(&nvcc, "--version", memo.as_deref(), || {
        let out = Tool::new(&nvcc).arg("--version").timeout(crate::process::PROBE_TIMEOUT).run().ok()?;
        crate::toolchain::parse_ptxas_version(&out.stdout)
    })
    .unwrap_or_else(|| toolchain.ptxas_version.clone());
    // nvcc takes `g++` from PATH unless told otherwise.
    let nvcc_default = on_path("g++", env).and_then(|p| std::fs::canonicalize(p).ok());
    let ccbin = (std::fs::canonicalize(&cxx).ok() != nvcc_default || nvcc_default.is_none()).then(|| cxx.clone());
    let cudart_dir = cudart_dir(&nvcc);
    let cxx_id = crate::cache::tool_answer(&cxx, "--version", memo.as_deref(), || {
        let out = Tool::new(&cxx).arg("--version").timeout(crate::process::PROBE_TIMEOUT).run().ok()?;
        out.stdout.lines().next().map(str::to_string)
    })
    .unwrap_or_else(|| format!("unknown ({})", cxx.display()));
    Ok(Tools { nvcc, nvcc_name: format!("nvcc {nvcc_version}"), cxx, cxx_id, ccbin, cudart_dir })
}

/// The host C++ compiler: in a build script as the `cc` crate chooses it (`CXX` and its target
/// forms, else `c++`), elsewhere `CXX` or `c++` on `PATH`; resolved on `PATH`. The error says
/// what was looked for.
pub fn host_compiler(env: &Env) -> Result<PathBuf, String> {
    let wanted = if env.is_build_script() {
        let mut b = cc::Build::new();
        b.cpp(true).cargo_metadata(false).cargo_warnings(false);
        match b.try_get_compiler() {
            Ok(tool) => tool.path().to_path_buf(),
            Err(e) => return Err(format!("the `cc` crate found none ({e})")),
        }
    } else {
        env.get(var::CXX).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("c++"))
    };
    if wanted.components().count() > 1 {
        return if wanted.is_file() { Ok(wanted) } else { Err(format!("`{}` does not exist", wanted.display())) };
    }
    let name = wanted.to_string_lossy().into_owned();
    on_path(&name, env).ok_or_else(|| format!("`{name}` (the `cc` crate's choice: CXX, else c++) is not on PATH"))
}

/// A located toolchain problem at the `host` entry `p` (exit 3 from `cargo launch`).
pub(crate) fn missing_tool(p: &HostPattern, message: String) -> Error {
    Error::HostTools { location: p.location.clone(), key: p.key.clone(), message }
}

/// `libcudart_static.a` beside nvcc: `lib` of the 13.x wheels, `lib64` or
/// `targets/<cpu>-linux/lib` of toolkits.
fn cudart_dir(nvcc: &Path) -> Option<PathBuf> {
    let top = nvcc.parent()?.parent()?;
    let mut dirs = vec![top.join("lib"), top.join("lib64")];
    for cpu in ["x86_64", "sbsa", "aarch64"] {
        dirs.push(top.join("targets").join(format!("{cpu}-linux")).join("lib"));
    }
    dirs.into_iter().find(|d| d.join("libcudart_static.a").is_file())
}

/// The nvcc options of a host file's job, without the arch: include folders, defines, the flags
/// nvcc has, then nvcc's own options of `flags` (crate's, then file tables'). With `portable`,
/// paths as in [`Compiler::options`] and the compilers' names first, not their paths (they are
/// part of the cache key).
pub fn options(compiler: &Compiler, tools: &Tools, file: &PlannedFile, portable: bool) -> Vec<String> {
    let config = compiler.config();
    let show = |p: &Path| {
        if portable {
            compiler.portable(p)
        } else {
            p.display().to_string()
        }
    };
    let mut options = Vec::new();
    if portable {
        options.push(format!("#{}", tools.nvcc_name));
        options.push(format!("#host compiler {}", tools.cxx_id));
    } else if let Some(ccbin) = &tools.ccbin {
        options.push(format!("-ccbin={}", ccbin.display()));
    }
    for dir in config.include_path() {
        options.push(format!("-I{}", show(&dir)));
    }
    // nvcc finds the toolchain's own headers; the library headers installed beside it it does not.
    for dir in &compiler.toolchain.libraries {
        options.push(format!("-I{}", show(dir)));
    }
    let settings = &file.settings;
    options.extend(settings.defines.iter().map(|(name, value)| match value {
        Some(v) => format!("-D{name}={v}"),
        None => format!("-D{name}"),
    }));
    options.extend(settings.flags.iter().filter_map(|f| nvcc_flag(f)));
    options.extend(settings.nvcc_flags.iter().cloned());
    options
}

/// An NVRTC option (canonical spelling, see `flags`) as nvcc spells it, `None` when nvcc has none.
fn nvcc_flag(flag: &str) -> Option<String> {
    let name = flag.split('=').next().unwrap_or(flag);
    if NVRTC_ONLY.contains(&name) {
        return None;
    }
    // What nvcc users write for it (see `flags`: NVRTC's form of `--expt-relaxed-constexpr`).
    if name == "--device-as-default-execution-space" {
        return Some("--expt-relaxed-constexpr".into());
    }
    Some(flag.to_string())
}

/// The manifest's record of the host files.
pub fn record(tools: &Tools, files: &[&PlannedFile], library: Option<&str>) -> Vec<launch_schema::manifest::HostFile> {
    files
        .iter()
        .map(|f| launch_schema::manifest::HostFile {
            file: f.source.file.clone(),
            compiler: format!("{} (host compiler {})", tools.nvcc_name, tools.cxx.display()),
            library: library.map(str::to_string),
        })
        .collect()
}

#[cfg(test)]
mod tests;

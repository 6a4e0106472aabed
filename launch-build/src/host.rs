//! `host = ["launch.cu", "moe/*.cu"]`: kernel files that hold host code (launch syntax
//! `<<<...>>>`, `extern "C"` launchers calling the CUDA runtime), which NVRTC cannot compile.
//!
//! Each such file is compiled twice, both times with the toolchain's `nvcc`:
//! * for the report, per arch, like any kernel file: `nvcc -ptx` (the device side only) gives the
//!   PTX, and launch-build's own ptxas run gives the cubin and the `-v` report. These are the
//!   commands nvcc runs inside a full compile (same `cicc` options, same `ptxas -arch=sm_XX`), so
//!   the numbers are the library's. They are jobs like NVRTC's: cached by content (the file, its
//!   headers, the options, the toolchain, nvcc's version and host compiler), run in parallel,
//!   their kernels embedded as `launch::Kernel` statics as well, checked by `check`.
//! * for the program, once: through the `cc` crate, host code and all, with
//!   `-gencode arch=compute_XX,code=sm_XX` for each of the file's arches, into one static library
//!   (`launch_host_<package>`) that cargo links into the crate, with the toolchain's static CUDA
//!   runtime (`libcudart_static.a`), so the binary needs the driver only. Each file is its own
//!   whole-program nvcc compile (no relocatable device code), as in the report pass. This runs
//!   whenever the build script runs (cargo runs it when an input changed); only in build scripts.
//!
//! nvcc needs a host C++ compiler, found as `cc` finds one (`CXX`, else `c++`); it is passed as
//! `-ccbin` only when it is not the compiler nvcc would take by itself (`g++` on `PATH`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cargo_directives;
use crate::compile::{sanitize, Compiler, HostFrontEnd, Job};
use crate::config::{Config, HostPattern};
use crate::env::Env;
use crate::error::Error;
use crate::plan::{host_pattern_error, PlannedFile};
use crate::process::Tool;
use crate::toolchain::{on_path, Toolchain};

/// What compiling `host` files needs besides the toolchain's NVRTC and ptxas.
#[derive(Clone, Debug)]
pub struct Tools {
    /// The toolchain's nvcc.
    pub nvcc: PathBuf,
    /// `nvcc 13.0.88`, as messages and cache keys name it.
    pub nvcc_name: String,
    /// The host C++ compiler, resolved.
    pub cxx: PathBuf,
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
    "--brief-diagnostics",
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
    let cxx = cxx.map_err(|why| missing_tool(first, format!(
        "`host` files need a host C++ compiler (nvcc compiles their host code with it), and {why}; install g++ or clang++, or set CXX to one"
    )))?;
    let nvcc_version = Tool::new(&nvcc)
        .arg("--version")
        .timeout(crate::process::PROBE_TIMEOUT)
        .run()
        .ok()
        .and_then(|o| crate::toolchain::parse_ptxas_version(&o.stdout))
        .unwrap_or_else(|| toolchain.ptxas_version.clone());
    // nvcc takes `g++` from PATH unless told otherwise.
    let nvcc_default = on_path("g++", env).and_then(|p| std::fs::canonicalize(p).ok());
    let ccbin = (std::fs::canonicalize(&cxx).ok() != nvcc_default || nvcc_default.is_none()).then(|| cxx.clone());
    let cudart_dir = cudart_dir(&nvcc);
    Ok(Tools { nvcc, nvcc_name: format!("nvcc {nvcc_version}"), cxx, ccbin, cudart_dir })
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
        env.get("CXX").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("c++"))
    };
    if wanted.components().count() > 1 {
        return if wanted.is_file() { Ok(wanted) } else { Err(format!("`{}` does not exist", wanted.display())) };
    }
    let name = wanted.to_string_lossy().into_owned();
    on_path(&name, env).ok_or_else(|| format!("`{name}` (the `cc` crate's choice: CXX, else c++) is not on PATH"))
}

/// A located toolchain problem at the `host` entry `p` (exit 3 from `cargo launch`).
fn missing_tool(p: &HostPattern, message: String) -> Error {
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

/// The nvcc options of a host file's job, without the arch: include folders, defines, then the
/// flags nvcc has. With `portable`, paths as in [`Compiler::options`] and the compilers' names
/// first (they are part of the cache key).
fn options(compiler: &Compiler, tools: &Tools, file: &PlannedFile, portable: bool) -> Vec<String> {
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
    }
    if let Some(ccbin) = &tools.ccbin {
        options.push(format!("-ccbin={}", ccbin.display()));
    }
    for dir in std::iter::once(&config.kernel_dir).chain(&config.include_dirs) {
        options.push(format!("-I{}", show(&compiler.root().join(dir))));
    }
    // nvcc has the toolchain's own headers; the libraries' installed beside it it is told of.
    for dir in &compiler.toolchain.libraries {
        options.push(format!("-I{}", show(dir)));
    }
    let settings = &file.settings;
    options.extend(settings.defines.iter().map(|(name, value)| match value {
        Some(v) => format!("-D{name}={v}"),
        None => format!("-D{name}"),
    }));
    options.extend(settings.flags.iter().filter_map(|f| nvcc_flag(f)));
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

/// nvcc in NVRTC's place for the host files' jobs.
impl HostFrontEnd for Tools {
    fn options(&self, compiler: &Compiler, job: &Job, portable: bool) -> Vec<String> {
        options(compiler, self, job.file, portable)
    }

    fn ptx(&self, compiler: &Compiler, job: &Job) -> Result<(String, String), Error> {
        ptx(compiler, self, job)
    }
}

/// The device side of `job`'s file for its arch's virtual architecture: `nvcc -ptx`. Returns the
/// PTX and nvcc's messages (its warnings), with the crate root taken out of paths.
fn ptx(compiler: &Compiler, tools: &Tools, job: &Job) -> Result<(String, String), Error> {
    let file = &job.file.source.file;
    let arch = job.arch.to_string();
    let work = compiler.work_dir();
    std::fs::create_dir_all(work).map_err(Error::io("create folder", work))?;
    let out = work.join(format!("{}.{}.nvcc.ptx", sanitize(file), job.arch));
    let _ = std::fs::remove_file(&out);
    let tool = Tool::new(&tools.nvcc)
        .arg("-ptx")
        .args(compiler.options(job, false))
        .arg(&job.file.source.path)
        .arg("-o")
        .arg(&out)
        .timeout(compiler.timeout());
    if compiler.debug() {
        cargo_directives::launch_build_warning(&tool.to_string());
    }
    let (status, output) =
        tool.run_unchecked().map_err(|e| crate::compile::for_job(e, &tools.nvcc_name, file, &arch))?;
    let root = format!("{}/", compiler.root().display());
    let log = format!("{}{}", output.stdout, output.stderr).replace(&root, "");
    if !status.success() {
        return Err(Error::Compile { compiler: tools.nvcc_name.clone(), file: file.clone(), arch, log });
    }
    let ptx = std::fs::read_to_string(&out).map_err(crate::compile::work_file("read nvcc output", &out, file))?;
    let _ = std::fs::remove_file(&out);
    Ok((ptx, log))
}

/// Compiles every host file, host code and all, through `cc` into one static library and tells
/// cargo to link it and the static CUDA runtime. Build scripts only (`cc` reads cargo's
/// variables). Returns the library's name.
pub fn link(
    compiler: &Compiler,
    tools: &Tools,
    first: &HostPattern,
    files: &[&PlannedFile],
    package: &str,
) -> Result<String, Error> {
    let started = Instant::now();
    let Some(cudart_dir) = &tools.cudart_dir else {
        return Err(missing_tool(
            first,
            format!(
                "`host` files link the static CUDA runtime, and there is no libcudart_static.a beside {} (looked in lib, lib64 and targets/<cpu>-linux/lib); `cargo launch setup --toolchain 13.0` installs it",
                tools.nvcc.display()
            ),
        ));
    };
    let mut objects = Vec::new();
    for f in files {
        let mut b = base_build(tools);
        // No `-G`, `-g` or warning flags of cc's: device code as in the report pass.
        b.flag("-O2");
        for o in options(compiler, tools, f, false) {
            b.flag(o);
        }
        for o in &f.settings.ptxas_flags {
            b.flag("-Xptxas").flag(o);
        }
        for a in &f.arches {
            b.flag("-gencode").flag(format!("arch={},code={a}", a.virtual_name()));
        }
        b.file(&f.source.path);
        let objs = b.try_compile_intermediates().map_err(|e| cc_error(tools, f, e))?;
        objects.extend(objs);
    }
    let name = format!("launch_host_{}", package.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
    let mut lib = base_build(tools);
    lib.objects(objects);
    lib.try_compile(&name).map_err(|e| Error::Compile {
        compiler: format!("{} (through cc)", tools.nvcc_name),
        file: files.first().map(|f| f.source.file.clone()).unwrap_or_default(),
        arch: String::new(),
        log: e.to_string(),
    })?;
    // The CUDA runtime the launchers call, linked statically: the binary needs the driver only.
    cargo_directives::rustc_link_search(cudart_dir);
    cargo_directives::rustc_link_lib("static=cudart_static");
    for l in ["dl", "rt", "pthread"] {
        cargo_directives::rustc_link_lib(l);
    }
    if compiler.debug() {
        cargo_directives::launch_build_warning(&format!(
            "linked {} host file(s) into lib{name}.a in {} ms",
            files.len(),
            started.elapsed().as_millis()
        ));
    }
    Ok(name)
}

/// A `cc` build with nvcc as the compiler and none of cc's own flags (they are gcc's, and nvcc
/// refuses them): position-independent host code, for Rust's PIE binaries.
fn base_build(tools: &Tools) -> cc::Build {
    let mut b = cc::Build::new();
    b.cuda(true)
        .compiler(&tools.nvcc)
        .no_default_flags(true)
        .warnings(false)
        .extra_warnings(false)
        .cudart("none")
        .flag("-Xcompiler")
        .flag("-fPIC");
    b
}

fn cc_error(tools: &Tools, f: &PlannedFile, e: cc::Error) -> Error {
    Error::Compile {
        compiler: format!("{} (through cc; its messages are the warnings above)", tools.nvcc_name),
        file: f.source.file.clone(),
        arch: f.arches.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "),
        log: e.to_string(),
    }
}

/// The manifest's record of the host files.
pub fn record(tools: &Tools, files: &[&PlannedFile], library: Option<&str>) -> Vec<crate::manifest::HostFile> {
    files
        .iter()
        .map(|f| crate::manifest::HostFile {
            file: f.source.file.clone(),
            compiler: format!("{} (host compiler {})", tools.nvcc_name, tools.cxx.display()),
            library: library.map(str::to_string),
        })
        .collect()
}

#[cfg(test)]
mod tests;

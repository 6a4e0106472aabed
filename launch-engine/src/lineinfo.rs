//! A kernel file compiled again with source-line information, on request only (`cargo launch
//! report --spills`): NVRTC with `--generate-line-info`, ptxas with `-lineinfo`, every other
//! option exactly the build's ([`Compiler::options`], [`Compiler::ptxas_options`], the `@launch`
//! contracts applied the same way). Line info adds `.loc` directives to the PTX and a line table
//! to the cubin; the instructions are the build's (the project's end-to-end tests compare the
//! SASS). The normal build never comes here.
//!
//! [`nvdisasm`] finds and runs NVIDIA's disassembler on the result.

pub mod nvdisasm;

use std::path::{Path, PathBuf};
use std::time::Duration;

use launch::Arch;

use crate::cache::{self, HeaderDigests, KeyInputs};
use crate::compile::cached;
use crate::compile::{self, Compiler, Job};
use crate::config::Config;
use crate::contract::{self, Annotation};
use crate::env::Env;
use crate::error::Error;
use crate::nvrtc::Nvrtc;
use crate::plan::{Plan, PlannedFile};
use crate::prepare;
use crate::process::Tool;
use crate::source;
use crate::toolchain::{self, Toolchain};

/// What one file × arch compiled to.
#[derive(Debug)]
pub struct Compiled {
    /// NVRTC's PTX (with `.loc` lines when compiled with line info), contracts applied.
    pub ptx: String,
    /// ptxas's cubin.
    pub cubin: Vec<u8>,
    /// What `ptxas -v` printed.
    pub ptxas_log: String,
}

impl Compiled {
    /// ptxas's `Used N registers` per entry, from its `-v` log; empty where the log cannot be read.
    pub fn registers(&self) -> std::collections::BTreeMap<String, u32> {
        let log = crate::ptxas_log::parse(&self.ptxas_log).ok();
        log.iter().flat_map(|l| &l.entries).map(|e| (e.name.clone(), e.resources.registers)).collect()
    }
}

/// A kernel file ready to compile: the source as the build compiles it and its contracts.
struct Prepared<'p> {
    file: &'p PlannedFile,
    text: String,
    annotations: Vec<Annotation>,
    /// The headers NVRTC takes from memory, as in the build.
    headers: Vec<(String, String)>,
}

/// Compiles single files of one crate as its build does, with or without line info.
pub struct Recompiler {
    compiler: Compiler,
    nvrtc: Nvrtc,
    /// The build's plan: each file's settings as the build resolves them.
    plan: Plan,
    /// `LAUNCH_COMPILE_TIMEOUT`, as the build reads it: for NVRTC, ptxas and nvdisasm alike.
    timeout: Duration,
    /// The cache root, where the build memoises the tools' digests (see `cache::tool_digest`).
    memo_dir: Option<PathBuf>,
}

impl Recompiler {
    /// Finds the crate's toolchain (its `toolchain` setting) and loads NVRTC. `work_dir` holds
    /// ptxas's input and output files and our standard headers.
    pub fn new(env: &Env, config: &Config, work_dir: &Path) -> Result<Recompiler, Error> {
        let toolchain = toolchain::discover_for(env, &config.toolchain)?;
        let nvrtc = Nvrtc::load(&toolchain.nvrtc)?;
        let settings = compile::Settings::from_env(env)?;
        let compiler = Compiler::new(toolchain, config, work_dir.to_path_buf(), settings)?;
        let plan = Plan::resolve(config.clone())?;
        Ok(Recompiler { compiler, nvrtc, plan, timeout: settings.timeout, memo_dir: toolchain::cache_dir(env) })
    }

    /// The toolchain it compiles with.
    pub fn toolchain(&self) -> &Toolchain {
        &self.compiler.toolchain
    }

    /// The file (`kernels/poly.cu`, relative to the crate) read and prepared as the build does.
    fn prepare(&self, file: &str) -> Result<Prepared<'_>, Error> {
        let planned = self.plan.file(file).ok_or_else(|| Error::Io {
            path: self.plan.root().join(file),
            action: "find among the kernel files",
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })?;
        let p = prepare::file(&self.plan, planned)?;
        let headers = prepare::nvrtc_headers(&self.plan, planned)?;
        Ok(Prepared { file: planned, text: p.applied.text, annotations: p.annotations, headers })
    }

    /// A content key of compiling `file` for `arch` with line info: the build's key inputs
    /// (source, every header's content, options, contracts, toolchain) with the line-info
    /// options added. Cheap: reads and hashes, compiles nothing.
    pub fn key(&self, file: &str, arch: Arch) -> Result<String, Error> {
        let p = self.prepare(file)?;
        let job = Job { file: p.file, text: &p.text, annotations: &p.annotations, headers: &p.headers, arch };
        let c = &self.compiler;
        let mut digests = HeaderDigests::default();
        let mut headers: Vec<(String, [u8; 32])> =
            source::dependencies(&p.file.source.path, &c.include_search(&job), c.root())?
                .iter()
                .map(|h| (c.portable(h), digests.digest(h)))
                .collect();
        headers.sort();
        let options = with_line_info(c.options(&job, true), true);
        let ptxas_options = ptxas_with_line_info(c.ptxas_options(&job), true);
        let arch = arch.to_string();
        let id = cached::toolchain_id(c, self.memo_dir.as_deref());
        let key = cache::key(&KeyInputs {
            file: &p.file.source.file,
            text: &p.text,
            headers: &headers,
            options: &options,
            ptxas_options: &ptxas_options,
            arch: &arch,
            annotations: &p.annotations,
            toolchain: &id,
        });
        Ok(key.to_string())
    }

    /// Compiles `file` for `arch` as the build does, adding line info when `line_info`.
    pub fn compile(&self, file: &str, arch: Arch, line_info: bool) -> Result<Compiled, Error> {
        self.compile_as(file, arch, line_info, false)
    }

    /// Compiles `file` for `arch` with line info as the build does, but with every entry's
    /// contract directives (`.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`) removed from the
    /// PTX before ptxas: what the code asks for when nothing bounds it (`report --pressure` shows
    /// where a register budget cuts it). The crate's own ptxas options stay, a `--maxrregcount`
    /// among them.
    pub fn compile_unbounded(&self, file: &str, arch: Arch) -> Result<Compiled, Error> {
        self.compile_as(file, arch, true, true)
    }

    fn compile_as(&self, file: &str, arch: Arch, line_info: bool, unbounded: bool) -> Result<Compiled, Error> {
        let p = self.prepare(file)?;
        let job = Job { file: p.file, text: &p.text, annotations: &p.annotations, headers: &p.headers, arch };
        let c = &self.compiler;
        let options = with_line_info(c.options(&job, false), line_info);
        let nvrtc_name = format!("NVRTC {}", c.toolchain.nvrtc_version);
        let timeout = self.timeout;
        let compiled = {
            let _in_root = InDir::enter(self.plan.root())?;
            self.nvrtc.compile_ptx_within(&p.text, &p.file.source.file, &p.headers, &options, timeout)
        }
        .ok_or_else(|| Error::ToolTimedOut {
            tool: nvrtc_name.clone(),
            command: format!("`{}`", compile::nvrtc_command_line(&p.file.source.file, &options)),
            file: Some(p.file.source.file.clone()),
            arch: Some(arch.to_string()),
            timeout,
        })?;
        let (ptx, _log) = compiled.map_err(|f| Error::Compile {
            compiler: nvrtc_name,
            file: p.file.source.file.clone(),
            arch: arch.to_string(),
            log: f.log,
        })?;
        let mut ptx = contract::apply_to_ptx(&ptx, &p.annotations);
        if unbounded {
            ptx = crate::ptx::without_contracts(&ptx).map_err(|e| Error::Report {
                file: p.file.source.file.clone(),
                arch: arch.to_string(),
                reason: format!("its PTX cannot be written without the contract directives: {e}"),
            })?;
        }
        let work = c.work_dir();
        std::fs::create_dir_all(work).map_err(Error::io("create folder", work))?;
        // Two `--spills` runs may share the folder: each writes files of its own.
        let kind = match (line_info, unbounded) {
            (_, true) => "unbounded",
            (true, false) => "lineinfo",
            (false, false) => "plain",
        };
        let stem = format!("{}.{arch}.{kind}.{}", compile::sanitize(&p.file.source.file), std::process::id());
        let ptx_path = work.join(format!("{stem}.ptx"));
        let cubin_path = work.join(format!("{stem}.cubin"));
        let file = &p.file.source.file;
        std::fs::write(&ptx_path, &ptx).map_err(compile::work_file("write", &ptx_path, file))?;
        let _ = std::fs::remove_file(&cubin_path);
        let out = Tool::new(&c.toolchain.ptxas)
            .arg(format!("-arch={arch}"))
            .arg("-v")
            .args(ptxas_with_line_info(c.ptxas_options(&job), line_info))
            .arg(&ptx_path)
            .arg("-o")
            .arg(&cubin_path)
            .timeout(timeout)
            .run()
            .map_err(|e| match e {
                Error::ToolFailed { stderr, .. } => Error::Compile {
                    compiler: format!("ptxas {}", c.toolchain.ptxas_version),
                    file: p.file.source.file.clone(),
                    arch: arch.to_string(),
                    log: stderr,
                },
                other => other,
            })?;
        let cubin = std::fs::read(&cubin_path).map_err(compile::work_file("read ptxas output", &cubin_path, file))?;
        let _ = std::fs::remove_file(&ptx_path);
        let _ = std::fs::remove_file(&cubin_path);
        Ok(Compiled { ptx, cubin, ptxas_log: out.stderr })
    }

    /// The longest one tool run may take (`LAUNCH_COMPILE_TIMEOUT`).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The folder it writes in.
    pub fn work_dir(&self) -> PathBuf {
        self.compiler.work_dir().to_path_buf()
    }
}

/// The process in another working directory until dropped.
///
/// NVRTC looks a quoted `#include` up first in the directory of the name it compiles, and the
/// build names a file relative to the package (`kernels/a.cu`), so that lookup is against the
/// process's directory: the build script's is the package root (cargo runs it there), while
/// `cargo launch` runs anywhere — from a folder with a `kernels/a.cuh` of its own (another copy
/// of the crate, a `diff --rev` worktree's working tree) NVRTC would read that one. The
/// recompile runs NVRTC from the root, as the build does (the CLI compiles one file at a time).
struct InDir(PathBuf);

impl InDir {
    fn enter(dir: &Path) -> Result<InDir, Error> {
        let before = std::env::current_dir().map_err(Error::io("read the working directory", dir))?;
        std::env::set_current_dir(dir).map_err(Error::io("enter", dir))?;
        Ok(InDir(before))
    }
}

impl Drop for InDir {
    fn drop(&mut self) {
        let _ = std::env::set_current_dir(&self.0);
    }
}

/// NVRTC's options with `--generate-line-info` appended when `on`.
fn with_line_info(mut options: Vec<String>, on: bool) -> Vec<String> {
    if on {
        options.push("--generate-line-info".into());
    }
    options
}

/// ptxas's added options with `-lineinfo` appended when `on` (ptxas writes the line table only
/// when asked, whatever `.loc` lines the PTX has).
fn ptxas_with_line_info(mut options: Vec<String>, on: bool) -> Vec<String> {
    if on {
        options.push("-lineinfo".into());
    }
    options
}

//! Compiling kernel files: per file and arch, NVRTC turns CUDA C++ into PTX for that arch's
//! virtual architecture, then ptxas assembles the cubin and prints its `-v` report.
//!
//! Each (file, arch) pair is one independent [`Job`], so jobs can be cached by content and run in
//! parallel; nothing here depends on the order they run in.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use launch::Arch;

use crate::config::Config;
use crate::contract::{self, Annotation};
use crate::env::{var, Env};
use crate::error::Error;
use crate::headers;
use crate::nvrtc::Nvrtc;
use crate::plan::PlannedFile;
use crate::process::{self, quote, Tool};
use crate::ptxas_log::{self, PtxasLog, Severity};
use crate::toolchain::Toolchain;

/// One kernel file to compile for one arch.
#[derive(Clone, Debug)]
pub struct Job<'a> {
    /// The file, as planned (its settings, whether it is a `host` file).
    pub file: &'a PlannedFile,
    /// Its text with the `@launch` contracts applied (same line numbers as the file).
    pub text: &'a str,
    /// Its validated `@launch` annotations.
    pub annotations: &'a [Annotation],
    /// Headers NVRTC takes from memory, `(include name, text)`: those it cannot read from disk as
    /// written ([`crate::prepare::nvrtc_headers`]); none for a `host` file.
    pub headers: &'a [(String, String)],
    /// Target arch.
    pub arch: Arch,
}

/// What one job produced.
#[derive(Debug)]
pub struct JobOutput {
    /// The PTX NVRTC produced for the arch's virtual architecture.
    pub ptx: String,
    /// The cubin ptxas produced.
    pub cubin: Vec<u8>,
    /// The parsed `ptxas -v` report.
    pub report: PtxasLog,
    /// NVRTC warnings (its log on success), verbatim.
    pub nvrtc_log: String,
    /// What ptxas printed on stderr, verbatim: `report` is parsed from it (the cache stores this
    /// text, not the parsed form).
    pub ptxas_log: String,
    /// Each `extern "C"` entry of the PTX with the lowered name of its signature probe
    /// ([`crate::signature`]); `None` where NVRTC gave none (the probe did not compile).
    pub probes: Vec<(String, Option<String>)>,
}

/// How long the two compilers took for one job.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobTiming {
    /// The `nvrtcCompileProgram` call (and reading back the PTX).
    pub nvrtc: Duration,
    /// The ptxas process, start to exit.
    pub ptxas: Duration,
}

/// An include folder passed to NVRTC, with the form used in cache keys.
#[derive(Clone, Debug)]
struct IncludeDir {
    path: PathBuf,
    portable: String,
}

/// What the caller decides once the compiler, the host tools and every job's key are known,
/// before anything is read from the cache ([`crate::fresh`] keeps the previous outputs when
/// nothing changed).
pub enum Decision<K> {
    /// Nothing to read or compile: `K` says what the caller keeps instead.
    Keep(K),
    /// Build; with the digest of the inputs to remember beside the outputs, if any.
    Build(Option<String>),
}

/// What the compile stage gives: its outputs, or what the caller kept instead ([`Decision`]).
pub enum Step<T, K> {
    /// The stage ran.
    Done(T),
    /// The caller's [`Decision::Keep`].
    Kept(K),
}

/// What the environment says about how to compile.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// `LAUNCH_BUILD_DEBUG`: print every compiler command as a cargo warning.
    pub debug: bool,
    /// `LAUNCH_COMPILE_TIMEOUT`: the longest one NVRTC compile or one ptxas run may take.
    pub timeout: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { debug: false, timeout: process::DEFAULT_TIMEOUT }
    }
}

impl Settings {
    /// Reads `LAUNCH_BUILD_DEBUG` and `LAUNCH_COMPILE_TIMEOUT`.
    pub fn from_env(env: &Env) -> Result<Settings, Error> {
        Ok(Settings { debug: env.flag(var::LAUNCH_BUILD_DEBUG)?, timeout: env.compile_timeout()? })
    }
}

/// The loaded toolchain plus the options every job shares.
pub struct Compiler {
    /// The toolchain.
    pub toolchain: Toolchain,
    nvrtc: Nvrtc,
    supported: Vec<i32>,
    root: PathBuf,
    include_dirs: Vec<IncludeDir>,
    /// The crate-wide settings (the `host` files' include folders); per-file ones come with each job.
    config: Config,
    work_dir: PathBuf,
    debug: bool,
    timeout: Duration,
    /// The folder of our standard headers (headers.rs), `None` with `std-headers = false`.
    std_headers: Option<PathBuf>,
}

impl Compiler {
    /// Loads NVRTC and prepares the shared options. `work_dir` (under `OUT_DIR`) holds ptxas's
    /// input and output files.
    pub fn new(
        mut toolchain: Toolchain,
        config: &Config,
        work_dir: PathBuf,
        settings: Settings,
    ) -> Result<Compiler, Error> {
        let nvrtc = Nvrtc::load(&toolchain.nvrtc)?;
        let (major, minor) = nvrtc.version();
        if toolchain.nvrtc_version.is_empty() {
            toolchain.nvrtc_version = format!("{major}.{minor}");
        }
        let root = config.root().to_path_buf();
        let mut include_dirs = Vec::new();
        // A folder outside the crate and the toolchain (an absolute `include`) is `$INCLUDE<n>` in
        // keys: its headers are keyed by content, never by where the folder is. So is a folder of
        // the toolchain's outside its root (a library's headers installed beside it) wherever it
        // lies, inside the crate too (`LAUNCH_CACHE_DIR=./cache`): the toolchain's files are never
        // crate files. `n` counts in search order, so it does not depend on where anything lies.
        let mut outside = 0;
        let mut portable = |path: &Path, of_toolchain: bool| {
            let p = portable_path(path, &root, &toolchain.root);
            if p.starts_with(TOOLCHAIN) || p.starts_with("$STD_HEADERS") || (p.starts_with(CRATE) && !of_toolchain) {
                return p;
            }
            outside += 1;
            format!("$INCLUDE{}", outside - 1)
        };
        for path in config.include_path() {
            include_dirs.push(IncludeDir { portable: portable(&path, false), path });
        }
        // Then the toolkit's headers and CCCL's, with our standard headers (headers.rs) around
        // them: the few that replace a toolkit header NVRTC cannot compile before, the rest last,
        // so the crate's own and NVIDIA's headers win over them.
        let std_headers = if config.std_headers { Some(headers::install(&work_dir)?) } else { None };
        let ours_first = std_headers.as_ref().map(|d| d.join(headers::FIRST));
        let ordered = ours_first.iter().chain(&toolchain.include).chain(&toolchain.cccl_include);
        for inc in ordered.chain(&toolchain.libraries).chain(&std_headers) {
            include_dirs.push(IncludeDir { portable: portable(inc, true), path: inc.clone() });
        }
        let supported = nvrtc.supported_archs();
        let Settings { debug, timeout } = settings;
        let config = config.clone();
        Ok(Compiler { toolchain, nvrtc, supported, root, include_dirs, config, work_dir, debug, timeout, std_headers })
    }

    /// The configuration the jobs are compiled with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The longest one compile may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether every command is printed (`LAUNCH_BUILD_DEBUG`).
    pub fn debug(&self) -> bool {
        self.debug
    }

    /// Fails unless the toolchain can target every arch (`a`/`f` variants count as their base).
    pub fn check_arches(&self, arches: &[Arch]) -> Result<(), Error> {
        for a in arches {
            let cc = a.sm() as i32;
            if !self.supported.is_empty() && !self.supported.contains(&cc) {
                return Err(Error::UnsupportedArch {
                    arch: a.to_string(),
                    toolchain: format!("NVRTC {}", self.toolchain.nvrtc_version),
                    supported: self.supported.iter().map(|c| format!("sm_{c}")).collect(),
                });
            }
        }
        Ok(())
    }

    /// The crate root the options are relative to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder ptxas reads and writes in.
    pub fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    /// NVRTC's own `(major, minor)`.
    pub fn nvrtc_api_version(&self) -> (i32, i32) {
        self.nvrtc.version()
    }

    /// The folders NVRTC searches for `job`'s includes, in NVRTC's order: the file's own folder,
    /// the kernel folder, the `include` folders, the toolkit headers; each once.
    pub fn include_search(&self, job: &Job) -> Vec<PathBuf> {
        self.includes(job).into_iter().map(|d| d.path).collect()
    }

    /// `path` as cache keys hold it: [`portable_path`], and a path in a folder keyed as
    /// `$INCLUDE<n>` (outside the crate and the toolchain's root, or the toolchain's own wherever
    /// it lies) under that name. The toolchain's folders are matched before the crate root, so a
    /// toolchain installed inside the crate is keyed as itself, never as crate files.
    pub fn portable(&self, path: &Path) -> String {
        let p = portable_path(path, &self.root, &self.toolchain.root);
        if p.starts_with('$') && !p.starts_with(CRATE) {
            return p;
        }
        // The deepest folder that holds it: a library folder may lie inside an `include` one.
        let folder = self
            .include_dirs
            .iter()
            .filter(|d| d.portable.starts_with("$INCLUDE") && path.starts_with(&d.path))
            .max_by_key(|d| d.path.components().count());
        match folder {
            Some(d) => under(path, &d.path, &d.portable).unwrap_or(p),
            None => p,
        }
    }

    /// [`Compiler::include_search`] with the portable forms. A top-level file's folder is the
    /// kernel folder: it is searched once.
    fn includes(&self, job: &Job) -> Vec<IncludeDir> {
        // Quoted includes resolve against the including file's folder first, as in a C compiler.
        let own = job
            .file
            .source
            .path
            .parent()
            .map(|dir| IncludeDir { portable: self.portable(dir), path: dir.to_path_buf() });
        let mut out: Vec<IncludeDir> = Vec::new();
        for d in own.into_iter().chain(self.include_dirs.iter().cloned()) {
            if !out.iter().any(|o| o.path == d.path) {
                out.push(d);
            }
        }
        out
    }

    /// The NVRTC options of `job`: arch, include folders, the file's defines (crate-wide, then
    /// its file tables'), then its flags. With `portable`, paths under the crate root are written
    /// `$CRATE/...` and paths under the toolchain root `$TOOLCHAIN/...`: that form goes into cache
    /// keys, so a key does not depend on where the crate is checked out. Both forms come from this
    /// one function, so the key cannot miss an option the compiler sees.
    pub fn options(&self, job: &Job, portable: bool) -> Vec<String> {
        let mut options = vec![format!("--gpu-architecture={}", job.arch.virtual_name())];
        for d in self.includes(job) {
            let shown = if portable { d.portable } else { d.path.display().to_string() };
            options.push(format!("--include-path={shown}"));
        }
        let settings = &job.file.settings;
        options.extend(settings.defines.iter().map(|(name, value)| match value {
            Some(v) => format!("--define-macro={name}={v}"),
            None => format!("--define-macro={name}"),
        }));
        // nvcc's implicit include, for NVRTC (headers.rs).
        if self.std_headers.is_some() {
            options.push(format!("--pre-include={}", headers::PRELUDE));
        }
        options.extend(settings.flags.iter().cloned());
        options
    }

    /// The options launch-build adds to ptxas's own for `job` (`ptxas-flags`, `-Xptxas`): they
    /// belong in the job's cache key with [`Compiler::options`].
    pub fn ptxas_options(&self, job: &Job) -> Vec<String> {
        job.file.settings.ptxas_flags.clone()
    }

    /// NVRTC's log without the warnings our standard headers cause (see [`headers::filter_log`]).
    fn filter_log(&self, log: &str) -> String {
        match &self.std_headers {
            Some(dir) => headers::filter_log(log, dir),
            None => log.to_string(),
        }
    }

    /// NVRTC's PTX of `job` and its log (warnings).
    fn nvrtc_ptx(&self, job: &Job) -> Result<(String, String), Error> {
        let file = &job.file.source.file;
        let arch = job.arch.to_string();
        let options = self.options(job, false);
        let nvrtc_line = nvrtc_command_line(file, &options);
        if self.debug {
            crate::cargo_directives::launch_build_warning(&nvrtc_line);
        }
        let nvrtc_name = format!("NVRTC {}", self.toolchain.nvrtc_version);
        let compiled =
            self.nvrtc.compile_ptx_within(job.text, file, job.headers, &options, self.timeout).ok_or_else(|| {
                Error::ToolTimedOut {
                    tool: nvrtc_name.clone(),
                    command: format!("`{nvrtc_line}`"),
                    file: Some(file.clone()),
                    arch: Some(arch.clone()),
                    timeout: self.timeout,
                }
            })?;
        let (ptx, nvrtc_log) = compiled.map_err(|f| Error::Compile {
            compiler: nvrtc_name.clone(),
            file: file.clone(),
            arch: arch.clone(),
            log: headers::explain(&self.filter_log(&f.log), self.std_headers.is_some(), || {
                Some(crate::prepare::host_side(&self.config, job.file, job.text))
            }),
        })?;
        Ok((ptx, self.filter_log(&nvrtc_log)))
    }

    /// The lowered name of each `extern "C"` entry's signature probe, from a second, front-end
    /// only compile of the job's source with the probe template added. A C++ entry's mangled
    /// name holds its types already. Never fails the job: a probe that does not compile (an
    /// `extern "C"` kernel declared in a namespace, which `decltype` at file scope cannot name)
    /// leaves its kernels' signatures unknown.
    fn probe(&self, job: &Job, ptx: &str) -> Vec<(String, Option<String>)> {
        // The signature is read from the lowest arch that has the kernel (`assemble::params`),
        // then held to every arch's PTX. Another arch has kernels the lowest lacks only under an
        // arch guard (`#if __CUDA_ARCH__ >= 900`): without one in the file, the lowest arch's
        // probe is all there is to know, and the other jobs skip theirs (a guard in a header is
        // not looked for; such a kernel says why it has no signature).
        let lowest = job.file.arches.first() == Some(&job.arch);
        if !lowest && !job.text.contains("__CUDA_ARCH__") {
            return Vec::new();
        }
        let kernels: Vec<String> =
            crate::ptx::entries(ptx).into_iter().map(|e| e.name).filter(|n| !n.starts_with("_Z")).collect();
        if kernels.is_empty() {
            return Vec::new();
        }
        let mut options = self.options(job, false);
        options.push("-fdevice-syntax-only".into());
        let source = format!("{}{}", job.text, crate::signature::PROBE);
        let expressions: Vec<String> = kernels.iter().map(|k| crate::signature::probe_expression(k)).collect();
        let file = &job.file.source.file;
        let lowered = self
            .nvrtc
            .lowered_names_within(&source, file, job.headers, &options, &expressions, self.timeout)
            .and_then(Result::ok)
            .unwrap_or_else(|| vec![None; kernels.len()]);
        kernels.into_iter().zip(lowered).collect()
    }

    /// Runs one job: NVRTC to PTX, ptxas to cubin, then parses ptxas's report; also returns how
    /// long each compiler took.
    pub fn run_timed(&self, job: &Job) -> Result<(JobOutput, JobTiming), Error> {
        let file = &job.file.source.file;
        let arch = job.arch.to_string();
        let started = Instant::now();
        // A `host` file compiles with nvcc instead, all its arches at once (`host::nvcc`).
        let (ptx, nvrtc_log) = self.nvrtc_ptx(job)?;
        let probes = self.probe(job, &ptx);
        let nvrtc_time = started.elapsed();

        // `.maxnreg` cannot be written next to `__launch_bounds__` in CUDA C++ (NVRTC refuses it).
        let ptx = contract::apply_to_ptx(&ptx, job.annotations);
        std::fs::create_dir_all(&self.work_dir).map_err(Error::io("create folder", &self.work_dir))?;
        let stem = format!("{}.{}", sanitize(file), job.arch);
        let ptx_path = self.work_dir.join(format!("{stem}.ptx"));
        let cubin_path = self.work_dir.join(format!("{stem}.cubin"));
        std::fs::write(&ptx_path, &ptx).map_err(work_file("write", &ptx_path, file))?;
        let _ = std::fs::remove_file(&cubin_path);
        let tool = Tool::new(&self.toolchain.ptxas)
            .arg(format!("-arch={}", job.arch))
            .arg("-v")
            .args(self.ptxas_options(job))
            .arg(&ptx_path)
            .arg("-o")
            .arg(&cubin_path)
            .timeout(self.timeout);
        if self.debug {
            crate::cargo_directives::launch_build_warning(&tool.to_string());
        }
        let ptxas_name = format!("ptxas {}", self.toolchain.ptxas_version);
        let started = Instant::now();
        let (status, out) = tool.run_unchecked().map_err(|e| for_job(e, &ptxas_name, file, &arch))?;
        let ptxas_time = started.elapsed();
        let (log, stdout) = (out.stderr, out.stdout);
        let compile_error = |log: String| Error::Compile {
            compiler: ptxas_name.clone(),
            file: file.clone(),
            arch: arch.clone(),
            log: with_ptx_notes(job, &ptx, &log),
        };
        // Success is decided by the exit status, not by the text (reference/ptxas-output.md §1).
        if !status.success() {
            return Err(compile_error(log));
        }
        let report = parse_report(job, &log)?;
        if report.diagnostics.iter().any(|d| matches!(d.severity, Severity::Error | Severity::Fatal)) {
            return Err(compile_error(log));
        }
        let cubin = match std::fs::read(&cubin_path) {
            Ok(cubin) => cubin,
            // A ptxas that exits 0 without writing its output is broken: show what it said.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Compile {
                    compiler: ptxas_name.clone(),
                    file: file.clone(),
                    arch: arch.clone(),
                    log: no_output_log(&tool, &cubin_path, &stdout, &log),
                })
            }
            Err(e) => return Err(work_file("read ptxas output", &cubin_path, file)(e)),
        };
        let _ = std::fs::remove_file(&ptx_path);
        let _ = std::fs::remove_file(&cubin_path);
        Ok((
            JobOutput { ptx, cubin, report, nvrtc_log, ptxas_log: log, probes },
            JobTiming { nvrtc: nvrtc_time, ptxas: ptxas_time },
        ))
    }
}

/// A compiler run's timeout, named after the compiler (`ptxas 12.9.86`) with the job's file and
/// arch; other errors as they are.
pub(crate) fn for_job(e: Error, tool: &str, file: &str, arch: &str) -> Error {
    match e {
        Error::ToolTimedOut { command, timeout, .. } => Error::ToolTimedOut {
            tool: tool.to_string(),
            command,
            file: Some(file.to_string()),
            arch: Some(arch.to_string()),
            timeout,
        },
        other => other,
    }
}

/// The NVRTC compile as `LAUNCH_BUILD_DEBUG` and messages show it: file and options, each quoted
/// like a command line's arguments.
pub fn nvrtc_command_line(file: &str, options: &[String]) -> String {
    let mut line = format!("NVRTC {}", quote(file));
    for o in options {
        line.push(' ');
        line.push_str(&quote(o));
    }
    line
}

/// The message of a ptxas that exited 0 but wrote no cubin: what it printed, on either stream.
fn no_output_log(tool: &Tool, cubin: &Path, stdout: &str, stderr: &str) -> String {
    let printed: Vec<&str> = [stdout, stderr].into_iter().map(str::trim_end).filter(|s| !s.trim().is_empty()).collect();
    let said = if printed.is_empty() {
        "it printed nothing".to_string()
    } else {
        format!("it printed:\n{}", printed.join("\n"))
    };
    format!("ptxas exited successfully but produced no output: `{}` was not written by {tool}; {said}", cubin.display())
}

/// Parses the `ptxas -v` report of `job` (also used for reports read back from the cache).
pub fn parse_report(job: &Job, log: &str) -> Result<PtxasLog, Error> {
    ptxas_log::parse(log).map_err(|e| Error::Report {
        file: job.file.source.file.clone(),
        arch: job.arch.to_string(),
        reason: e.to_string(),
    })
}

/// The crate root's name in keys.
const CRATE: &str = "$CRATE";
/// The toolchain root's name in keys.
const TOOLCHAIN: &str = "$TOOLCHAIN";

/// `path` with the toolchain root replaced by `$TOOLCHAIN` and the crate root by `$CRATE`
/// (`/`-separated), else as it is. The toolchain root first: a toolchain installed inside the
/// crate (a cache folder in the workspace, the target folder) is the toolchain, not crate files,
/// so two installs of it at two places give one key.
pub fn portable_path(path: &Path, root: &Path, toolchain_root: &Path) -> String {
    // Our standard headers' folder lies under OUT_DIR: its digest, not its place, goes in keys.
    if let Some(p) = headers::portable(path) {
        return p;
    }
    [(toolchain_root, TOOLCHAIN), (root, CRATE)]
        .into_iter()
        .find_map(|(base, name)| under(path, base, name))
        .unwrap_or_else(|| path.display().to_string())
}

/// `path` under `base` written as `name/rel` (`/`-separated), `None` when it is not under it.
fn under(path: &Path, base: &Path, name: &str) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    Some(rel.components().fold(name.to_string(), |s, c| format!("{s}/{}", c.as_os_str().to_string_lossy())))
}

/// A file-name-safe, one-to-one form of a relative path: `kernels/sub/a.cu` → `kernels+sub+a.cu`.
/// `/` becomes `+`; any other character outside `[A-Za-z0-9._-]` becomes `_` and then a short
/// hash of the path is appended, so two files never share an output name
/// (`kernels/a.b.cu` and `kernels/a/b.cu` stay apart). A name longer than [`MAX_NAME`] bytes (a
/// kernel many folders deep) is shortened by [`bounded`], so no work file or output name grows
/// with the source path.
pub fn sanitize(rel: &str) -> String {
    bounded(&sanitize_whole(rel), rel)
}

/// The longest name [`sanitize`] gives, in bytes: with an arch, a process id and an extension
/// added, a work file's name stays far below the 255 bytes a file name may have.
pub const MAX_NAME: usize = 100;

/// `name` (made from `original`) as it is when it has at most [`MAX_NAME`] bytes; else its
/// first and last bytes around a hash of `original`: `kernels+a+b-<16 hex>-y+z+f.cu`, unique
/// for every `original` and still readable at both ends.
pub fn bounded(name: &str, original: &str) -> String {
    use sha2::{Digest, Sha256};
    const HEAD: usize = 30;
    const TAIL: usize = MAX_NAME - HEAD - 18;
    if name.len() <= MAX_NAME {
        return name.to_string();
    }
    let digest = Sha256::digest(original.as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    // Cut on character boundaries (a name that is not ASCII comes out a little shorter).
    let head = (0..=HEAD).rev().find(|&i| name.is_char_boundary(i)).unwrap_or(0);
    let tail = (name.len() - TAIL..name.len()).find(|&i| name.is_char_boundary(i)).unwrap_or(name.len());
    format!("{}-{hash}-{}", &name[..head], &name[tail..])
}

/// An I/O error on a work file of the job of `file` (a kernel file, relative to the crate): the
/// work file's name is ours, so the error names the user's file too.
pub(crate) fn work_file(action: &'static str, path: &Path, file: &str) -> impl FnOnce(std::io::Error) -> Error {
    let (path, file) = (path.to_path_buf(), file.to_string());
    move |e| Error::Io { path, action, source: std::io::Error::new(e.kind(), format!("{e} (a work file of `{file}`)")) }
}

/// [`sanitize`] before it is bounded.
fn sanitize_whole(rel: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut lossy = false;
    let mut out: String = rel
        .chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') => c,
            '/' => '+',
            _ => {
                lossy = true;
                '_'
            }
        })
        .collect();
    if lossy {
        let digest = Sha256::digest(rel.as_bytes());
        out.push('-');
        out.extend(digest[..4].iter().map(|b| format!("{b:02x}")));
    }
    out
}

pub(crate) mod cached;
pub mod host;
mod ptx_notes;
pub mod scheduler;
mod stage;
pub mod stats;
#[cfg(test)]
mod tests;

pub use ptx_notes::with_ptx_notes;
pub use stage::{run, Compiled, FileOutputs};

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
use crate::error::Error;
use crate::nvrtc::Nvrtc;
use crate::process::Tool;
use crate::ptxas_log::{self, PtxasLog, Severity};
use crate::toolchain::Toolchain;

/// A kernel source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// Path relative to the crate root, `/`-separated (used in messages and the manifest).
    pub file: String,
    /// Absolute path.
    pub path: PathBuf,
}

/// One kernel file to compile for one arch.
#[derive(Clone, Debug)]
pub struct Job<'a> {
    /// The file.
    pub source: &'a SourceFile,
    /// Its text with the `@launch` contracts applied (same line numbers as the file).
    pub text: &'a str,
    /// Its validated `@launch` annotations.
    pub annotations: &'a [Annotation],
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

/// The loaded toolchain plus the options every job shares.
pub struct Compiler {
    /// The toolchain.
    pub toolchain: Toolchain,
    nvrtc: Nvrtc,
    supported: Vec<i32>,
    root: PathBuf,
    include_dirs: Vec<IncludeDir>,
    defines: Vec<String>,
    work_dir: PathBuf,
    debug: bool,
}

impl Compiler {
    /// Loads NVRTC and prepares the shared options. `work_dir` (under `OUT_DIR`) holds ptxas's
    /// input and output files.
    pub fn new(mut toolchain: Toolchain, config: &Config, work_dir: PathBuf, debug: bool) -> Result<Compiler, Error> {
        let nvrtc = Nvrtc::load(&toolchain.nvrtc)?;
        let (major, minor) = nvrtc.version();
        if toolchain.nvrtc_version.is_empty() {
            toolchain.nvrtc_version = format!("{major}.{minor}");
        }
        let root = config.root().to_path_buf();
        let mut include_dirs = Vec::new();
        for dir in std::iter::once(&config.kernel_dir).chain(&config.include_dirs) {
            let path = root.join(dir);
            include_dirs.push(IncludeDir { portable: portable_path(&path, &root, &toolchain.root), path });
        }
        if let Some(inc) = &toolchain.include {
            include_dirs.push(IncludeDir { portable: portable_path(inc, &root, &toolchain.root), path: inc.clone() });
        }
        let defines = config
            .defines
            .iter()
            .map(|(name, value)| match value {
                Some(v) => format!("--define-macro={name}={v}"),
                None => format!("--define-macro={name}"),
            })
            .collect();
        let supported = nvrtc.supported_archs();
        Ok(Compiler { toolchain, nvrtc, supported, root, include_dirs, defines, work_dir, debug })
    }

    /// Fails unless the toolchain can target every arch (`a`/`f` variants count as their base).
    pub fn check_arches(&self, arches: &[Arch]) -> Result<(), Error> {
        for a in arches {
            let cc = (a.major * 10 + a.minor) as i32;
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
    /// the kernel folder, the `include` folders, the toolkit headers.
    pub fn include_search(&self, job: &Job) -> Vec<PathBuf> {
        job.source
            .path
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .chain(self.include_dirs.iter().map(|d| d.path.clone()))
            .collect()
    }

    /// The NVRTC options of `job`. With `portable`, paths under the crate root are written
    /// `$CRATE/...` and paths under the toolchain root `$TOOLCHAIN/...`: that form goes into cache
    /// keys, so a key does not depend on where the crate is checked out. Both forms come from this
    /// one function, so the key cannot miss an option the compiler sees.
    pub fn options(&self, job: &Job, portable: bool) -> Vec<String> {
        let mut options = vec![format!("--gpu-architecture={}", job.arch.virtual_name())];
        // Quoted includes resolve against the including file's folder first, as in a C compiler.
        if let Some(dir) = job.source.path.parent() {
            let shown =
                if portable { portable_path(dir, &self.root, &self.toolchain.root) } else { dir.display().to_string() };
            options.push(format!("--include-path={shown}"));
        }
        for d in &self.include_dirs {
            let shown = if portable { d.portable.clone() } else { d.path.display().to_string() };
            options.push(format!("--include-path={shown}"));
        }
        options.extend(self.defines.iter().cloned());
        options
    }

    /// Runs one job: NVRTC to PTX, ptxas to cubin, then parses ptxas's report.
    pub fn run(&self, job: &Job) -> Result<JobOutput, Error> {
        self.run_timed(job).map(|(out, _)| out)
    }

    /// [`Compiler::run`], also returning how long each compiler took.
    pub fn run_timed(&self, job: &Job) -> Result<(JobOutput, JobTiming), Error> {
        let file = &job.source.file;
        let options = self.options(job, false);
        if self.debug {
            println!("cargo:warning=launch-build: NVRTC {} {}", file, options.join(" "));
        }
        let started = Instant::now();
        let (ptx, nvrtc_log) = self.nvrtc.compile_ptx(job.text, file, &options).map_err(|f| Error::Compile {
            compiler: format!("NVRTC {}", self.toolchain.nvrtc_version),
            file: file.clone(),
            arch: job.arch.to_string(),
            log: f.log,
        })?;
        let nvrtc_time = started.elapsed();

        // `.maxnreg` cannot be written next to `__launch_bounds__` in CUDA C++ (NVRTC refuses it).
        let ptx = contract::apply_to_ptx(&ptx, job.annotations);
        std::fs::create_dir_all(&self.work_dir).map_err(Error::io("create folder", &self.work_dir))?;
        let stem = format!("{}.{}", sanitize(file), job.arch);
        let ptx_path = self.work_dir.join(format!("{stem}.ptx"));
        let cubin_path = self.work_dir.join(format!("{stem}.cubin"));
        std::fs::write(&ptx_path, &ptx).map_err(Error::io("write", &ptx_path))?;
        let _ = std::fs::remove_file(&cubin_path);
        let tool = Tool::new(&self.toolchain.ptxas)
            .arg(format!("-arch={}", job.arch))
            .arg("-v")
            .arg(&ptx_path)
            .arg("-o")
            .arg(&cubin_path);
        if self.debug {
            println!("cargo:warning=launch-build: {tool}");
        }
        let started = Instant::now();
        let (status, out) = tool.run_unchecked()?;
        let ptxas_time = started.elapsed();
        let log = out.stderr;
        let compile_error = |log: String| Error::Compile {
            compiler: format!("ptxas {}", self.toolchain.ptxas_version),
            file: file.clone(),
            arch: job.arch.to_string(),
            log,
        };
        // Success is decided by the exit status, not by the text (reference/ptxas-output.md §1).
        if !status.success() {
            return Err(compile_error(log));
        }
        let report = parse_report(job, &log)?;
        if report.diagnostics.iter().any(|d| matches!(d.severity, Severity::Error | Severity::Fatal)) {
            return Err(compile_error(log));
        }
        let cubin = std::fs::read(&cubin_path).map_err(Error::io("read ptxas output", &cubin_path))?;
        let _ = std::fs::remove_file(&ptx_path);
        let _ = std::fs::remove_file(&cubin_path);
        Ok((
            JobOutput { ptx, cubin, report, nvrtc_log, ptxas_log: log },
            JobTiming { nvrtc: nvrtc_time, ptxas: ptxas_time },
        ))
    }
}

/// Parses the `ptxas -v` report of `job` (also used for reports read back from the cache).
pub fn parse_report(job: &Job, log: &str) -> Result<PtxasLog, Error> {
    ptxas_log::parse(log).map_err(|e| Error::Report {
        file: job.source.file.clone(),
        arch: job.arch.to_string(),
        reason: e.to_string(),
    })
}

/// `path` with the crate root replaced by `$CRATE` and the toolchain root by `$TOOLCHAIN`
/// (`/`-separated), else as it is.
pub fn portable_path(path: &Path, root: &Path, toolchain_root: &Path) -> String {
    for (base, name) in [(root, "$CRATE"), (toolchain_root, "$TOOLCHAIN")] {
        if let Ok(rel) = path.strip_prefix(base) {
            let mut s = name.to_string();
            for c in rel.components() {
                s.push('/');
                s.push_str(&c.as_os_str().to_string_lossy());
            }
            return s;
        }
    }
    path.display().to_string()
}

/// A file-name-safe, one-to-one form of a relative path: `kernels/sub/a.cu` → `kernels+sub+a.cu`.
/// `/` becomes `+`; any other character outside `[A-Za-z0-9._-]` becomes `_` and then a short
/// hash of the path is appended, so two files never share an output name
/// (`kernels/a.b.cu` and `kernels/a/b.cu` stay apart).
pub fn sanitize(rel: &str) -> String {
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

/// Every `.cu` file under the kernel folder, recursively, sorted (never directory order).
pub fn kernel_files(root: &Path, kernel_dir: &Path) -> Result<Vec<SourceFile>, Error> {
    let mut files = Vec::new();
    let mut stack = vec![root.join(kernel_dir)];
    while let Some(dir) = stack.pop() {
        let rd = std::fs::read_dir(&dir).map_err(Error::io("list", &dir))?;
        for e in rd {
            let e = e.map_err(Error::io("list", &dir))?;
            let p = e.path();
            // file_type does not follow symbolic links: a link cycle under kernels/ cannot loop.
            if e.file_type().map_err(Error::io("list", &dir))?.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "cu") {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let file = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
            SourceFile { file, path }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_files_are_sorted_recursive_and_relative() {
        let d = tempfile::tempdir().unwrap();
        let k = d.path().join("kernels");
        std::fs::create_dir_all(k.join("sub")).unwrap();
        for f in ["b.cu", "a.cu", "sub/c.cu", "h.cuh", "notes.txt"] {
            std::fs::write(k.join(f), "").unwrap();
        }
        let files: Vec<String> =
            kernel_files(d.path(), Path::new("kernels")).unwrap().into_iter().map(|s| s.file).collect();
        assert_eq!(files, ["kernels/a.cu", "kernels/b.cu", "kernels/sub/c.cu"]);
    }

    #[test]
    fn sanitize_keeps_names_readable() {
        assert_eq!(sanitize("kernels/sub/a.cu"), "kernels+sub+a.cu");
        assert_ne!(sanitize("kernels/a.b.cu"), sanitize("kernels/a/b.cu"));
        let spaced = sanitize("kernels/sub dir/a.cu");
        assert!(
            spaced.starts_with("kernels+sub_dir+a.cu-") && spaced.len() == "kernels+sub_dir+a.cu-".len() + 8,
            "{spaced}"
        );
        assert_ne!(spaced, sanitize("kernels/sub_dir/a.cu"));
        assert_ne!(sanitize("kernels/a+b.cu"), sanitize("kernels/a/b.cu"));
    }
}

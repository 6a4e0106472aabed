//! The errors of launch-build. Every variant names the file, tool or key involved and, where there
//! is one, the fix.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// One place the toolchain discovery looked, and why it was not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Searched {
    /// What was tried (`LAUNCH_TOOLCHAIN`, `cargo-launch cache`, `CUDA_HOME`, ...).
    pub source: String,
    /// The folder looked at, if any.
    pub path: Option<PathBuf>,
    /// Why it was not used.
    pub outcome: String,
}

/// Everything that can go wrong while building kernels.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A build-script variable cargo always sets is missing: not running under cargo.
    NotBuildScript(&'static str),
    /// `[package.metadata.launch]` is missing or wrong. `location` is `Cargo.toml:LINE:COL` where known.
    Config {
        /// `path/Cargo.toml[:line:col]`.
        location: String,
        /// The key at fault, dotted (`package.metadata.launch.arch`).
        key: String,
        /// What is wrong and the valid choices.
        message: String,
    },
    /// No NVRTC + ptxas pair was found.
    ToolchainNotFound {
        /// Every place looked at, in order.
        searched: Vec<Searched>,
    },
    /// The toolchain cannot target an arch the crate asks for.
    UnsupportedArch {
        /// The arch.
        arch: String,
        /// Toolchain description.
        toolchain: String,
        /// What it supports.
        supported: Vec<String>,
    },
    /// A program does not exist.
    ToolNotFound {
        /// The program.
        tool: String,
    },
    /// A program exists but could not be started (permissions, wrong CPU architecture, ...).
    ToolStart {
        /// The command, in backticks.
        command: String,
        /// The OS error.
        source: io::Error,
    },
    /// A program ran and failed.
    ToolFailed {
        /// The command, in backticks.
        command: String,
        /// `exit status: N`.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A program (or NVRTC's compile) ran longer than its time limit and was killed.
    ToolTimedOut {
        /// The tool: `ptxas 12.9.86`, `NVRTC 12.9.86`, or the program's file name.
        tool: String,
        /// The command, in backticks (or the NVRTC call).
        command: String,
        /// The kernel file being compiled, relative to the crate, when there is one.
        file: Option<String>,
        /// The arch being compiled, when there is one.
        arch: Option<String>,
        /// The limit it ran out of (`LAUNCH_COMPILE_TIMEOUT`).
        timeout: Duration,
    },
    /// The NVRTC shared library could not be loaded or lacks a symbol.
    NvrtcLoad {
        /// The library.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A kernel failed to compile; `log` is the compiler's own output (file(line): error: ...).
    Compile {
        /// Which compiler (`NVRTC 12.9.86`, `ptxas 12.9.86`).
        compiler: String,
        /// The kernel file, relative to the crate.
        file: String,
        /// The arch being compiled.
        arch: String,
        /// The compiler's messages.
        log: String,
    },
    /// ptxas output that could not be understood.
    Report {
        /// The kernel file.
        file: String,
        /// The arch.
        arch: String,
        /// What was wrong.
        reason: String,
    },
    /// Kernels that break a rule (duplicate names, bad `@launch`, ...): one line per problem,
    /// each starting with `file:line:col`.
    Kernels(Vec<String>),
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The OS error.
        source: io::Error,
    },
}

impl Error {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, action, source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotBuildScript(var) => write!(
                f,
                "`{var}` is not set: launch_build::build() must run from a build script (build.rs) under cargo"
            ),
            Error::Config { location, key, message } => write!(f, "{location}: `{key}`: {message}"),
            Error::ToolchainNotFound { searched } => {
                writeln!(f, "no CUDA toolchain (NVRTC + ptxas) found. Searched, in order:")?;
                for s in searched {
                    match &s.path {
                        Some(p) => writeln!(f, "  - {}: {}: {}", s.source, p.display(), s.outcome)?,
                        None => writeln!(f, "  - {}: {}", s.source, s.outcome)?,
                    }
                }
                write!(
                    f,
                    "fix: run `cargo launch setup` (installs NVIDIA's pinned 12.9 wheels into the cache, no GPU or CUDA install needed), \
                     or set LAUNCH_TOOLCHAIN to a folder holding them, or CUDA_HOME to a CUDA toolkit"
                )
            }
            Error::UnsupportedArch { arch, toolchain, supported } => {
                write!(f, "{toolchain} cannot target `{arch}`; it supports: {}", supported.join(", "))
            }
            Error::ToolNotFound { tool } => write!(f, "`{tool}` not found"),
            Error::ToolStart { command, source } => write!(f, "could not start {command}: {source}"),
            Error::ToolFailed { command, status, stderr } => {
                write!(f, "{command} failed ({status})")?;
                if !stderr.trim().is_empty() {
                    write!(f, "\n--- stderr\n{}", stderr.trim_end())?;
                }
                Ok(())
            }
            Error::ToolTimedOut { tool, command, file, arch, timeout } => {
                write!(f, "{tool} ")?;
                match (file, arch) {
                    (Some(file), Some(arch)) => write!(f, "compiling {file} for {arch} ")?,
                    (Some(file), None) => write!(f, "compiling {file} ")?,
                    _ => {}
                }
                write!(
                    f,
                    "did not finish within {} and was killed: {command}\n\
                     fix: if it is not stuck, allow it longer with LAUNCH_COMPILE_TIMEOUT=<seconds> (the default is {})",
                    seconds(*timeout),
                    seconds(crate::process::DEFAULT_TIMEOUT)
                )
            }
            Error::NvrtcLoad { path, reason } => write!(f, "cannot load NVRTC from {}: {reason}", path.display()),
            Error::Compile { compiler, file, arch, log } => {
                write!(f, "{compiler} failed to compile {file} for {arch}:\n{}", log.trim_end())
            }
            Error::Report { file, arch, reason } => {
                write!(f, "cannot read the ptxas report of {file} for {arch}: {reason}")
            }
            Error::Kernels(lines) => {
                for (i, l) in lines.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{l}")?;
                }
                Ok(())
            }
            Error::Io { path, action, source } => write!(f, "failed to {action} `{}`: {source}", path.display()),
        }
    }
}

/// `2 s`, `0.5 s`.
fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::ToolStart { source, .. } | Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

//! The errors of launch-build. Every variant names the file, tool or key involved and, where there
//! is one, the fix.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

// `ErrorKind`: what kind of failure an `Error` is (`Error::kind`), the type a failed build's
// diagnostics document records it with.
pub use launch_schema::diagnostics::{Diagnostic, ErrorKind, Severity};

mod diagnostics;
mod kind;
pub use diagnostics::DIAGNOSTICS_FILE;

/// Where a configuration value was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// An environment variable (the error's key names it).
    Environment,
    /// A file (`Cargo.toml`), at the 1-based line and column of the value where known.
    File {
        /// The file, as given to [`crate::Config::load`].
        path: PathBuf,
        /// 1-based line and column.
        at: Option<(u32, u32)>,
    },
}

/// `path/Cargo.toml:12:9`, `path/Cargo.toml` or `environment`.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Environment => f.write_str("environment"),
            Location::File { path, at: None } => write!(f, "{}", path.display()),
            Location::File { path, at: Some((line, col)) } => write!(f, "{}:{line}:{col}", path.display()),
        }
    }
}

/// One place the toolchain discovery looked, and why it was not used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Searched {
    /// What was tried (`LAUNCH_TOOLCHAIN`, `cargo-launch cache`, `CUDA_HOME`, ...).
    pub source: String,
    /// The folder looked at, if any.
    pub path: Option<PathBuf>,
    /// Why it was not used.
    pub outcome: String,
}

/// Everything that can go wrong while building kernels. Callers that must handle every error
/// deliberately match its [`ErrorKind`] ([`Error::kind`]): a new variant is no breaking change.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A build-script variable cargo always sets is missing: not running under cargo.
    NotBuildScript(&'static str),
    /// `[package.metadata.launch]` (or a `LAUNCH_*` variable) is missing or wrong.
    Config {
        /// `path/Cargo.toml[:line:col]`, or the environment.
        location: Location,
        /// The key at fault, dotted (`package.metadata.launch.arch`).
        key: String,
        /// What is wrong and the valid choices.
        message: String,
    },
    /// The toolchain lacks what `host` files need (nvcc beside ptxas, the static CUDA runtime),
    /// or there is no host C++ compiler: a toolchain problem, located at the `host` entry that
    /// asks for them.
    HostTools {
        /// `path/Cargo.toml:line:col` of the `host` entry.
        location: Location,
        /// The entry, dotted (`package.metadata.launch.host[0]`).
        key: String,
        /// What is missing and how to get it.
        message: String,
    },
    /// No NVRTC + ptxas pair was found.
    ToolchainNotFound {
        /// The `toolchain` asked for (`12.9`, the default, or `13.0`).
        toolchain: &'static str,
        /// Whether it is the default toolchain (then `cargo launch setup` needs no `--toolchain`).
        default: bool,
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
    /// Kernels that break a rule (duplicate names, bad `@launch`, host code, a source that is not
    /// text, ...): every problem found, each at its `file:line:col`.
    Kernels(Vec<Diagnostic>),
    /// Kernel files failed to compile: every failure of the build (all jobs ran), one entry per
    /// failing file, in file order. See [`FileFailure`].
    Failed(Vec<FileFailure>),
    /// A file the build reads (a kernel file, a header a kernel file includes, Cargo.toml) is not
    /// a regular file of at most 64 MiB: a FIFO, a folder, a device, a socket, a broken link, a
    /// link loop, an oversize file. Its kind is [`ErrorKind::Config`]: it is the user's input.
    InputFile {
        /// The file, relative to the crate where it lies in it.
        file: String,
        /// What it is instead (`a FIFO, not a file`, ``a broken link to `x` ``).
        what: String,
        /// Where it was named, when not read on its own: the `#include` line (the including file
        /// relative to the crate, 1-based line and column).
        at: Option<(String, u32, u32)>,
        /// How to fix it.
        fix: String,
    },
    /// The crate's prebuilt kernels (`launch-prebuilt/`, see `prebuilt`) cannot be used (they do
    /// not match the sources, a file is damaged, or there are none) and the build may not or
    /// cannot compile from source instead.
    Prebuilt {
        /// The folder.
        folder: PathBuf,
        /// What is wrong with it: one entry per changed input (`kernels/poly.cu changed`) or
        /// damaged file.
        problems: Vec<String>,
        /// Why the build did not compile from source instead: `LAUNCH_PREBUILT=require`, or the
        /// toolchain error's text.
        instead: String,
        /// Whether it failed for want of a toolchain (its kind is then [`ErrorKind::Toolchain`],
        /// else [`ErrorKind::Build`]).
        no_toolchain: bool,
    },
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

/// The failures of one kernel file: one error per distinct message, each naming every arch that
/// gave it (a [`Error::Compile`]'s `arch` is then `sm_80, sm_90`), in the order the arches are listed.
#[derive(Debug)]
#[non_exhaustive]
pub struct FileFailure {
    /// The kernel file, relative to the crate.
    pub file: String,
    /// One error per distinct message (per-file errors: compile, timeout, unreadable report).
    pub errors: Vec<Error>,
}

/// At most this many failing files are shown in full; the rest are counted and named.
pub const MAX_FAILED_FILES_SHOWN: usize = 20;

impl FileFailure {
    /// Groups the failed jobs `(file, arch, error)`, given in job order (file by file), into one
    /// entry per file, merging errors that are the same for several arches (the same message once
    /// the arch's name is taken out of it).
    pub fn group(failed: Vec<(String, String, Error)>) -> Vec<FileFailure> {
        let mut files: Vec<FileFailure> = Vec::new();
        // Per file: (error, its arches, its message with the arch taken out).
        let mut groups: Vec<Vec<(Error, Vec<String>, String)>> = Vec::new();
        for (file, arch, error) in failed {
            if files.last().is_none_or(|f| f.file != file) {
                files.push(FileFailure { file, errors: Vec::new() });
                groups.push(Vec::new());
            }
            let same = without_arch(&error.to_string(), &arch);
            let list = groups.last_mut().expect("pushed with its file");
            match list.iter_mut().find(|(_, _, s)| *s == same) {
                Some((_, arches, _)) => arches.push(arch),
                None => list.push((error, vec![arch], same)),
            }
        }
        for (f, list) in files.iter_mut().zip(groups) {
            f.errors = list.into_iter().map(|(e, arches, _)| e.for_arches(&arches.join(", "))).collect();
        }
        files
    }
}

/// `text` with every mention of `arch` replaced, so messages of two arches compare equal when
/// they differ only by the arch's name (a ptxas log names `x.cu.sm_80.ptx`).
fn without_arch(text: &str, arch: &str) -> String {
    if arch.is_empty() {
        text.to_string()
    } else {
        text.replace(arch, "\u{0}arch")
    }
}

/// `kernels/a.cu:12: error: identifier "x" is undefined` from the first error in a compiler log:
/// NVRTC writes `file(line): error: ...`, our notes `file:line:col: ...`; else the first line
/// that says `error`.
fn first_error(log: &str) -> Option<String> {
    let mut fallback = None;
    for line in log.lines().map(str::trim) {
        // `path(LINE): error: message` (also `catastrophic error`).
        if let Some(open) = line.find("): ").and_then(|close| line[..close].rfind('(').map(|o| (o, close))) {
            let (o, close) = open;
            let number = &line[o + 1..close];
            let rest = &line[close + 3..];
            if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) && rest.contains("error") {
                return Some(format!("{}:{number}: {rest}", &line[..o]));
            }
        }
        if fallback.is_none() && line.to_ascii_lowercase().contains("error") {
            fallback = Some(line.to_string());
        }
    }
    fallback
}

impl Error {
    /// The same error for a list of arches (`sm_80, sm_90`), where it names one.
    fn for_arches(self, arches: &str) -> Error {
        match self {
            Error::Compile { compiler, file, log, .. } => Error::Compile { compiler, file, arch: arches.into(), log },
            Error::Report { file, reason, .. } => Error::Report { file, arch: arches.into(), reason },
            Error::ToolTimedOut { tool, command, file, arch: Some(_), timeout } => {
                Error::ToolTimedOut { tool, command, file, arch: Some(arches.into()), timeout }
            }
            other => other,
        }
    }

    /// One line for the summary of a failed build: where the first error is and what it says.
    fn summary(&self, file: &str) -> String {
        match self {
            Error::Compile { compiler, arch, log, .. } => match first_error(log) {
                Some(e) if e.starts_with(file) => format!("{e} ({compiler}, {arch})"),
                Some(e) => format!("{file}: {e} ({compiler}, {arch})"),
                None => format!("{file}: {compiler} failed ({arch})"),
            },
            other => {
                let text = other.to_string();
                format!("{file}: {}", text.lines().next().unwrap_or(""))
            }
        }
    }

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
            Error::Config { location, key, message } | Error::HostTools { location, key, message } => {
                write!(f, "{location}: `{key}`: {message}")
            }
            Error::ToolchainNotFound { toolchain, default, searched } => {
                let default = *default;
                if default {
                    writeln!(f, "no CUDA toolchain (NVRTC + ptxas) found. Searched, in order:")?;
                } else {
                    writeln!(f, "no CUDA {toolchain} toolchain (NVRTC + ptxas, toolchain = \"{toolchain}\") found. Searched, in order:")?;
                }
                for s in searched {
                    match &s.path {
                        Some(p) => writeln!(f, "  - {}: {}: {}", s.source, p.display(), s.outcome)?,
                        None => writeln!(f, "  - {}: {}", s.source, s.outcome)?,
                    }
                }
                let setup = if default { String::new() } else { format!(" --toolchain {toolchain}") };
                write!(
                    f,
                    "fix: run `cargo launch setup{setup}` (installs NVIDIA's pinned {toolchain} wheels into the cache, no GPU or CUDA install needed), \
                     or set LAUNCH_TOOLCHAIN to a folder holding them, or CUDA_HOME to a CUDA {} toolkit",
                    toolchain.split('.').next().unwrap_or(toolchain)
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
                    write!(f, "\n--- stderr\n{}", bounded(stderr.trim_end()))?;
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
                writeln!(f, "did not finish within {} and was killed: {command}", seconds(*timeout))?;
                if file.is_some() {
                    write!(
                        f,
                        "fix: if it is not stuck, allow it longer with LAUNCH_COMPILE_TIMEOUT=<seconds> (the default is {})",
                        seconds(crate::timeouts::DEFAULT_TIMEOUT)
                    )
                } else if *timeout == crate::timeouts::PROBE_TIMEOUT {
                    // A question such as `--version`: no setting helps.
                    write!(f, "fix: it should answer at once; the tool is broken or stuck: point LAUNCH_TOOLCHAIN at a working one")
                } else {
                    write!(f, "fix: check that the tool can run here and is not waiting for input or the network")
                }
            }
            Error::NvrtcLoad { path, reason } => write!(f, "cannot load NVRTC from {}: {reason}", path.display()),
            Error::Compile { compiler, file, arch, log } => {
                write!(f, "{compiler} failed to compile {file} for {arch}:\n{}", bounded(log.trim_end()))?;
                // After the (bounded) log, so a long log cannot cut it off; here so that NVRTC's
                // and nvcc's errors both get it.
                for note in crate::library_headers::notes(compiler, log) {
                    write!(f, "\nnote: {note}")?;
                }
                Ok(())
            }
            Error::Report { file, arch, reason } => {
                write!(f, "cannot read the ptxas report of {file} for {arch}: {reason}")
            }
            Error::Kernels(list) => {
                for (i, l) in list.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{l}")?;
                }
                Ok(())
            }
            Error::Failed(files) => failed(f, files),
            Error::InputFile { file, what, at, fix } => {
                if let Some((including, line, col)) = at {
                    write!(f, "{including}:{line}:{col}: ")?;
                }
                write!(f, "`{file}` is {what}; {fix}")
            }
            Error::Prebuilt { folder, problems, instead, .. } => prebuilt_text(f, folder, problems, instead),
            Error::Io { path, action, source } => write!(f, "failed to {action} `{}`: {source}", path.display()),
        }
    }
}

/// [`Error::Prebuilt`]'s text: what is wrong (at most 10 problems, the rest counted), why the
/// build did not compile instead, and the two ways out.
fn prebuilt_text(
    f: &mut fmt::Formatter<'_>,
    folder: &std::path::Path,
    problems: &[String],
    instead: &str,
) -> fmt::Result {
    let shown: Vec<&str> = problems.iter().take(10).map(String::as_str).collect();
    let more = problems.len().saturating_sub(shown.len());
    let more = if more > 0 { format!("; and {more} more") } else { String::new() };
    let instead = if instead.is_empty() { String::new() } else { format!("\n{instead}") };
    write!(
        f,
        "the crate's prebuilt kernels in `{}` cannot be used: {}{more}{instead}\n\
         The crate's authors refresh them with `cargo launch prebuild`; to build the kernels from source \
         instead, install the toolchain with `cargo launch setup` (and leave LAUNCH_PREBUILT unset or set it \
         to `ignore`).",
        folder.display(),
        shown.join("; ")
    )
}

/// One failure as it always read; several as a summary (one line per failing file, with the
/// first error's `file:line`) followed by each compiler's messages, at most
/// [`MAX_FAILED_FILES_SHOWN`] files.
fn failed(f: &mut fmt::Formatter<'_>, files: &[FileFailure]) -> fmt::Result {
    if let [only] = files {
        if let [e] = only.errors.as_slice() {
            return write!(f, "{e}");
        }
    }
    let shown = &files[..files.len().min(MAX_FAILED_FILES_SHOWN)];
    let plural = if files.len() == 1 { "" } else { "s" };
    writeln!(f, "{} kernel file{plural} failed to compile:", files.len())?;
    for file in shown {
        for e in &file.errors {
            writeln!(f, "  {}", e.summary(&file.file))?;
        }
    }
    let hidden = &files[shown.len()..];
    if !hidden.is_empty() {
        let names: Vec<&str> = hidden.iter().take(10).map(|h| h.file.as_str()).collect();
        let etc = if hidden.len() > names.len() { ", ..." } else { "" };
        writeln!(
            f,
            "  ... and {} more file{} (messages not shown): {}{etc}",
            hidden.len(),
            if hidden.len() == 1 { "" } else { "s" },
            names.join(", ")
        )?;
    }
    let blocks: Vec<String> =
        shown.iter().flat_map(|file| &file.errors).map(|e| e.to_string().trim_end().to_string()).collect();
    write!(f, "\n{}", blocks.join("\n\n"))
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

/// Lines of a tool's log shown at each end of an error: a runaway tool (hundreds of MB of output)
/// must not flood the build log; the first errors and the last lines are what a reader needs.
const LOG_LINES_SHOWN: usize = 200;

/// `log` with its middle left out when it has more than 2 × [`LOG_LINES_SHOWN`] lines (or lines
/// so long that it exceeds 64 KiB at either end), saying how much was left out.
fn bounded(log: &str) -> std::borrow::Cow<'_, str> {
    const BYTES: usize = 64 * 1024;
    let lines: Vec<&str> = log.lines().collect();
    if lines.len() <= 2 * LOG_LINES_SHOWN && log.len() <= 2 * BYTES {
        return std::borrow::Cow::Borrowed(log);
    }
    let clip = |l: &str| -> String {
        let end = (0..=l.len().min(BYTES / LOG_LINES_SHOWN)).rev().find(|&i| l.is_char_boundary(i)).unwrap_or(0);
        if end < l.len() {
            format!("{}…", &l[..end])
        } else {
            l.to_string()
        }
    };
    if lines.len() < 2 {
        return std::borrow::Cow::Owned(format!("{} ({} bytes)", clip(log), log.len()));
    }
    let shown = LOG_LINES_SHOWN.min(lines.len() / 2);
    let head: Vec<String> = lines[..shown].iter().map(|l| clip(l)).collect();
    let tail: Vec<String> = lines[lines.len() - shown..].iter().map(|l| clip(l)).collect();
    let left_out = lines.len() - 2 * shown;
    std::borrow::Cow::Owned(format!(
        "{}\n… {left_out} lines ({} bytes in all) left out …\n{}",
        head.join("\n"),
        log.len(),
        tail.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nvrtc(file: &str, arch: &str, log: &str) -> (String, String, Error) {
        let e =
            Error::Compile { compiler: "NVRTC 12.9.86".into(), file: file.into(), arch: arch.into(), log: log.into() };
        (file.into(), arch.into(), e)
    }

    /// Issue 10 item 5: each failing file once, identical messages of several arches merged.
    #[test]
    fn failures_group_by_file_and_by_message_across_arches() {
        let a = "kernels/a.cu(2): error: identifier \"x\" is undefined\n\n1 error detected";
        let files = FileFailure::group(vec![
            nvrtc("kernels/a.cu", "sm_80", a),
            nvrtc("kernels/a.cu", "sm_90", a),
            nvrtc("kernels/b.cu", "sm_80", "kernels/b.cu(7): error: only on sm_80"),
            nvrtc("kernels/b.cu", "sm_90", "kernels/b.cu(9): error: only on sm_90"),
            // A ptxas log that differs only by the arch in the work file's name.
            (
                "kernels/c.cu".into(),
                "sm_80".into(),
                Error::Compile {
                    compiler: "ptxas 12.9.86".into(),
                    file: "kernels/c.cu".into(),
                    arch: "sm_80".into(),
                    log: "ptxas /w/c.cu.sm_80.ptx, line 4; error   : bad".into(),
                },
            ),
            (
                "kernels/c.cu".into(),
                "sm_90".into(),
                Error::Compile {
                    compiler: "ptxas 12.9.86".into(),
                    file: "kernels/c.cu".into(),
                    arch: "sm_90".into(),
                    log: "ptxas /w/c.cu.sm_90.ptx, line 4; error   : bad".into(),
                },
            ),
        ]);
        let shape: Vec<(&str, usize)> = files.iter().map(|f| (f.file.as_str(), f.errors.len())).collect();
        assert_eq!(shape, [("kernels/a.cu", 1), ("kernels/b.cu", 2), ("kernels/c.cu", 1)]);
        let text = Error::Failed(files).to_string();
        assert!(text.starts_with("3 kernel files failed to compile:\n"), "{text}");
        for expected in [
            "  kernels/a.cu:2: error: identifier \"x\" is undefined (NVRTC 12.9.86, sm_80, sm_90)\n",
            "  kernels/b.cu:7: error: only on sm_80 (NVRTC 12.9.86, sm_80)\n",
            "  kernels/b.cu:9: error: only on sm_90 (NVRTC 12.9.86, sm_90)\n",
            "NVRTC 12.9.86 failed to compile kernels/a.cu for sm_80, sm_90:\nkernels/a.cu(2): error",
            "ptxas 12.9.86 failed to compile kernels/c.cu for sm_80, sm_90:\n",
        ] {
            assert!(text.contains(expected), "expected `{expected}` in:\n{text}");
        }
        assert_eq!(text.matches("failed to compile kernels/a.cu").count(), 1, "{text}");
    }

    #[test]
    fn one_failure_reads_as_it_always_did() {
        let (_, _, e) = nvrtc("kernels/a.cu", "sm_90", "kernels/a.cu(2): error: x");
        let single = e.to_string();
        let files = FileFailure::group(vec![nvrtc("kernels/a.cu", "sm_90", "kernels/a.cu(2): error: x")]);
        assert_eq!(Error::Failed(files).to_string(), single);
    }

    #[test]
    fn past_the_cap_files_are_counted_and_named_not_shown() {
        let n = MAX_FAILED_FILES_SHOWN + 3;
        let failed = (0..n)
            .map(|i| nvrtc(&format!("kernels/k{i:02}.cu"), "sm_90", &format!("kernels/k{i:02}.cu(1): error: e{i}")));
        let text = Error::Failed(FileFailure::group(failed.collect())).to_string();
        assert!(text.starts_with(&format!("{n} kernel files failed to compile:")), "{text}");
        assert!(
            text.contains("... and 3 more files (messages not shown): kernels/k20.cu, kernels/k21.cu, kernels/k22.cu"),
            "{text}"
        );
        assert!(text.contains("failed to compile kernels/k19.cu"), "{text}");
        assert!(!text.contains("failed to compile kernels/k20.cu"), "{text}");
        // File order, as given.
        assert!(text.find("k03.cu:1").unwrap() < text.find("k04.cu:1").unwrap());
    }

    #[test]
    fn a_runaway_log_is_cut_in_the_middle() {
        // Before: a ptxas that printed 300 MB put all of it into the error (308 MB of output).
        let log: String = (0..100_000).map(|i| format!("ptxas info    : garbage line {i}\n")).collect();
        let shown = bounded(&log);
        assert!(shown.len() < 32 * 1024, "{}", shown.len());
        assert!(shown.starts_with("ptxas info    : garbage line 0\n"));
        assert!(shown.contains("… 99600 lines ("), "{shown}");
        assert!(shown.ends_with("garbage line 99999"));
        let one = "x".repeat(1_000_000);
        assert!(bounded(&one).len() < 2048);
        assert_eq!(bounded("short\nlog"), "short\nlog");
    }

    #[test]
    fn a_probe_that_times_out_does_not_point_at_the_compile_limit() {
        // Before: a `ptxas --version` stuck for the 60 s probe limit was told to raise
        // LAUNCH_COMPILE_TIMEOUT, which does not apply to probes.
        let probe = Error::ToolTimedOut {
            tool: "ptxas".into(),
            command: "`ptxas --version`".into(),
            file: None,
            arch: None,
            timeout: crate::timeouts::PROBE_TIMEOUT,
        };
        let text = probe.to_string();
        assert!(text.contains("it should answer at once") && !text.contains("LAUNCH_COMPILE_TIMEOUT"), "{text}");
        let compile = Error::ToolTimedOut {
            tool: "ptxas".into(),
            command: "`ptxas`".into(),
            file: Some("kernels/a.cu".into()),
            arch: Some("sm_90".into()),
            timeout: std::time::Duration::from_secs(2),
        };
        assert!(compile.to_string().contains("LAUNCH_COMPILE_TIMEOUT=<seconds>"));
    }
}

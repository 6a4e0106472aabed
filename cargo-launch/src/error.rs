//! The errors of `cargo launch` and the one table of its exit codes. Each error says its own code
//! ([`Error::exit_code`]); `--help`, the crate docs and the book's exit-code page (`docs/src/reference/exit-codes.md`) come
//! from (or are tested against) [`EXIT_CODES`], so the codes are written down once.

/// Success.
pub const OK: u8 = 0;
/// `cargo launch check` found errors (or warnings under `--deny warnings`): the gate's verdict;
/// `prebuild --verify` found a difference; or `diff --fail-on regression` found a regression.
pub const CHECK_FAILED: u8 = 1;
/// Bad command line, bad or missing `[package.metadata.launch]`, no launch-build package, or a
/// baseline that cannot be read or is damaged.
pub const USAGE: u8 = 2;
/// No CUDA toolchain.
pub const NO_TOOLCHAIN: u8 = 3;
/// The build failed, or an unexpected error.
pub const FAILURE: u8 = 4;

/// Every exit code and what it means, in the book's words (`docs/src/reference/exit-codes.md`).
pub const EXIT_CODES: [(u8, &str); 5] = [
    (OK, "success"),
    (CHECK_FAILED, "`check` found errors (or warnings with `--deny warnings`): the gate's verdict; `prebuild --verify` found the shipped kernels differ from a compile from source; `diff --fail-on regression` found a kernel that lost occupancy, gained spills or stopped launching; `doctor` found a problem that does not block builds"),
    (
        USAGE,
        "bad command line (an unknown flag, package or arch, a `--manifest-path` that is not there); bad or missing \
         `[package.metadata.launch]` (also in a package that builds with launch-build but has no table, and what only \
         the build script can judge: a tune table or `host` pattern that matches no kernel or file, a tune grid too \
         large once compiled); a documented environment variable with a bad value; a selection with no launch-build \
         package; a baseline path that is not a regular file (also for `--bless`), or a \
         baseline that is unreadable, not UTF-8 or damaged; a path a command writes (`init`, `new`, `--bless`, \
         `--plot`, `setup`'s cache) that cannot be written there (checked before any work: nothing is written)",
    ),
    (
        NO_TOOLCHAIN,
        "no CUDA toolchain found and none could be installed; `LAUNCH_TOOLCHAIN` set to something other than a folder \
         with a working one (nothing is installed then); a toolchain without what `host` files need (nvcc, the \
         static CUDA runtime) or no host C++ compiler; `doctor` found a toolchain problem that blocks builds",
    ),
    (
        FAILURE,
        "the build failed (a kernel did not compile: NVRTC, ptxas or a bad `@launch`; cargo failed), or an \
         unexpected error (such as a write that fails midway; what it created is removed)",
    ),
];

/// Why `cargo launch` did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A usage or configuration error (exit 2).
    #[error("{}", message(.0))]
    Usage(anyhow::Error),
    /// A command line clap rejected and already explained (exit 2).
    #[error("bad command line")]
    UsagePrinted,
    /// No CUDA toolchain, or none could be installed (exit 3).
    #[error("{}", message(.0))]
    NoToolchain(anyhow::Error),
    /// `check` found errors; the findings are already printed (exit 1).
    #[error("the check found errors")]
    CheckFailed,
    /// The build failed: cargo (and so a build script) failed. `failures`: the located errors the
    /// failed build scripts wrote (`OUT_DIR/launch/diagnostics.json`), where found, each with its
    /// error's kind, which gives the exit code ([`build_code`]): 2 for a configuration error found
    /// by a build script, 3 for a toolchain problem, else 4.
    #[error("{}", message(.error))]
    Build {
        /// What failed.
        error: anyhow::Error,
        /// Per package whose kernels did not build, its errors.
        failures: Vec<BuildFailure>,
    },
    /// Anything else: an I/O failure, a bug (exit 4).
    #[error("{}", message(.0))]
    Failure(anyhow::Error),
}

impl Error {
    /// The process's exit code for this error (see [`EXIT_CODES`]).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::CheckFailed => CHECK_FAILED,
            Error::Usage(_) | Error::UsagePrinted => USAGE,
            Error::NoToolchain(_) => NO_TOOLCHAIN,
            Error::Build { failures, .. } => build_code(failures),
            Error::Failure(_) => FAILURE,
        }
    }

    /// The error to print, `None` when it was printed already.
    pub fn cause(&self) -> Option<&anyhow::Error> {
        match self {
            Error::Usage(e) | Error::NoToolchain(e) | Error::Build { error: e, .. } | Error::Failure(e) => Some(e),
            Error::UsagePrinted | Error::CheckFailed => None,
        }
    }

    /// Writing to a closed pipe (`cargo launch report | head`): not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        self.cause().is_some_and(|e| {
            e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            })
        })
    }
}

/// One package whose kernels did not build, with the located errors its build script wrote.
#[derive(Debug)]
pub struct BuildFailure {
    /// The package.
    pub package: String,
    /// Its root folder (the diagnostics' files are relative to it).
    pub root: std::path::PathBuf,
    /// The errors, in the order the build met them.
    pub diagnostics: Vec<launch::schema::diagnostics::Diagnostic>,
    /// The kind of the build script's error, as it recorded it (`None`: a document without one).
    pub kind: Option<launch_build::error::ErrorKind>,
}

/// The one table from the kind of a launch-build error to the exit code, wherever the error was
/// found (in this process, or in a build script that recorded it). Matched exhaustively, so a new
/// kind must be placed here before this compiles.
pub fn kind_code(kind: launch_build::error::ErrorKind) -> u8 {
    use launch_build::error::ErrorKind;
    match kind {
        ErrorKind::Config => USAGE,
        ErrorKind::Toolchain => NO_TOOLCHAIN,
        ErrorKind::Build | ErrorKind::Io => FAILURE,
    }
}

/// The exit code of a failed build: the code of the kind its build scripts recorded
/// ([`kind_code`]) when every failure found recorded one and they agree; else (no document
/// written, an old one, packages failing for different reasons) [`FAILURE`].
pub fn build_code(failures: &[BuildFailure]) -> u8 {
    let mut codes = failures.iter().map(|f| f.kind.map_or(FAILURE, kind_code));
    match codes.next() {
        Some(first) if codes.all(|c| c == first) => first,
        _ => FAILURE,
    }
}

/// `?` on a launch-build error gives it the exit code of its kind ([`kind_code`], which matches
/// the kind exhaustively, unlike `launch_build::Error`, which may grow variants).
impl From<launch_build::Error> for Error {
    fn from(error: launch_build::Error) -> Error {
        match kind_code(error.kind()) {
            USAGE => Error::Usage(error.into()),
            NO_TOOLCHAIN => Error::NoToolchain(error.into()),
            _ => Error::Failure(error.into()),
        }
    }
}

/// `?` on an unexpected failure (I/O, a bug) makes it exit 4.
impl From<anyhow::Error> for Error {
    fn from(error: anyhow::Error) -> Error {
        Error::Failure(error)
    }
}

/// The error and its causes, joined by `: ` as `{:#}` does, leaving out a cause whose text the
/// message already holds (errors that print their own source, such as a tool that could not
/// start, would otherwise say "Permission denied" twice).
pub fn message(error: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// The `Exit codes:` section of `--help`: the table, each meaning wrapped to the terminal-friendly
/// width under its code.
pub fn help_text() -> String {
    const WIDTH: usize = 96;
    let mut s = String::from("Exit codes:\n");
    for (code, meaning) in EXIT_CODES {
        let mut line = format!("  {code} ");
        for word in meaning.split(' ') {
            if line.len() + 1 + word.len() > WIDTH && line.trim().len() > 1 {
                s.push_str(&line);
                s.push('\n');
                line = String::from("    ");
            }
            line.push(' ');
            line.push_str(word);
        }
        s.push_str(&line);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_the_message_is_printed_once() {
        let io = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let e = launch_build::Error::ToolStart { command: "`ptxas --version`".into(), source: io };
        let text = message(&anyhow::Error::new(e));
        assert_eq!(text.matches("permission denied").count(), 1, "{text}");
        let e = anyhow::Error::new(std::io::Error::other("disk full")).context("cannot write `x`");
        assert_eq!(message(&e), "cannot write `x`: disk full");
        assert_eq!(Error::Failure(e).to_string(), "cannot write `x`: disk full");
    }

    #[test]
    fn every_error_has_a_code_of_the_table() {
        let any = || anyhow::anyhow!("x");
        let errors = [
            (Error::Usage(any()), USAGE),
            (Error::UsagePrinted, USAGE),
            (Error::NoToolchain(any()), NO_TOOLCHAIN),
            (Error::CheckFailed, CHECK_FAILED),
            (Error::Build { error: any(), failures: Vec::new() }, FAILURE),
            (Error::Failure(any()), FAILURE),
        ];
        for (e, code) in errors {
            assert_eq!(e.exit_code(), code, "{e:?}");
            assert!(EXIT_CODES.iter().any(|(c, _)| *c == code), "{code} is not in the table");
            // The silent ones were explained already (clap's usage, the findings).
            assert_eq!(e.cause().is_none(), matches!(e, Error::UsagePrinted | Error::CheckFailed));
        }
        let codes: Vec<u8> = EXIT_CODES.iter().map(|(c, _)| *c).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4], "the codes are distinct and in order");
    }

    #[test]
    fn each_kind_of_launch_build_error_has_its_code() {
        use launch_build::error::{ErrorKind, Location};
        let errors = [
            (
                launch_build::Error::Config { location: Location::Environment, key: "k".into(), message: "m".into() },
                USAGE,
            ),
            (launch_build::Error::ToolNotFound { tool: "ptxas".into() }, NO_TOOLCHAIN),
            (launch_build::Error::Kernels(Vec::new()), FAILURE),
            (
                launch_build::Error::Io { path: "x".into(), action: "read", source: std::io::Error::other("gone") },
                FAILURE,
            ),
        ];
        let mut kinds = Vec::new();
        for (e, code) in errors {
            kinds.push(e.kind());
            let text = e.to_string();
            let e = Error::from(e);
            assert_eq!(e.exit_code(), code, "{e:?}");
            assert_eq!(e.to_string(), text, "the message is launch-build's");
        }
        assert_eq!(kinds, [ErrorKind::Config, ErrorKind::Toolchain, ErrorKind::Build, ErrorKind::Io], "one of each");
    }

    /// A failed build exits with the code of the kind its build script recorded, whatever the
    /// process that found the error; without a document (or with one of an older build script,
    /// or packages failing for different reasons) it is a failed build.
    #[test]
    fn a_failed_build_exits_with_the_code_of_its_recorded_kind() {
        use launch_build::error::ErrorKind;
        let failure = |kind| BuildFailure { package: "p".into(), root: "/p".into(), diagnostics: Vec::new(), kind };
        let build = |failures| Error::Build { error: anyhow::anyhow!("x"), failures };
        let cases = [
            (vec![failure(Some(ErrorKind::Config))], USAGE),
            (vec![failure(Some(ErrorKind::Toolchain))], NO_TOOLCHAIN),
            (vec![failure(Some(ErrorKind::Build))], FAILURE),
            (vec![failure(Some(ErrorKind::Io))], FAILURE),
            (vec![failure(None)], FAILURE),
            (Vec::new(), FAILURE),
            (vec![failure(Some(ErrorKind::Config)), failure(Some(ErrorKind::Config))], USAGE),
            (vec![failure(Some(ErrorKind::Config)), failure(Some(ErrorKind::Build))], FAILURE),
            (vec![failure(Some(ErrorKind::Config)), failure(None)], FAILURE),
        ];
        for (failures, code) in cases {
            let e = build(failures);
            assert_eq!(e.exit_code(), code, "{e:?}");
        }
    }

    #[test]
    fn a_closed_pipe_is_success_wherever_it_is_in_the_chain() {
        let pipe =
            anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe)).context("writing the output");
        assert!(Error::from(pipe).is_broken_pipe());
        assert!(!Error::from(anyhow::anyhow!("disk full")).is_broken_pipe());
        assert!(!Error::CheckFailed.is_broken_pipe());
    }

    /// The README's `## Exit codes` table, row for row, is [`EXIT_CODES`].
    #[test]
    fn the_readme_table_is_the_exit_code_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
        let readme = std::fs::read_to_string(&path).unwrap();
        let section = readme.split("\n## Exit codes\n").nth(1).expect("the README has an `## Exit codes` section");
        let rows: Vec<(u8, String)> = section
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2) // the header and its `|---|` line
            .map(|l| {
                let cells: Vec<&str> = l.trim_matches('|').splitn(2, '|').map(str::trim).collect();
                (cells[0].parse().unwrap_or_else(|_| panic!("not a code: {l}")), cells[1].to_string())
            })
            .collect();
        let table: Vec<(u8, String)> = EXIT_CODES.iter().map(|(c, m)| (*c, m.to_string())).collect();
        assert_eq!(rows, table, "README.md's exit-code table differs from error::EXIT_CODES");
    }

    #[test]
    fn the_help_lists_every_code_once_within_the_width() {
        let help = help_text();
        for (code, _) in EXIT_CODES {
            assert_eq!(help.lines().filter(|l| l.starts_with(&format!("  {code}  "))).count(), 1, "{help}");
        }
        assert!(help.lines().all(|l| l.chars().count() <= 96 || !l.trim().contains(' ')), "{help}");
        assert!(help.contains("the gate's verdict"), "{help}");
    }
}

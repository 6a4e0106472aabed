//! The `cargo launch` subcommand: reports registers, spills and exact occupancy of every CUDA
//! kernel of a crate, per arch, without a GPU; installs the toolchain.
//!
//! # Exit codes
//! See [`exit`].
#![forbid(unsafe_code)]

pub mod baseline;
pub mod cargo;
pub mod check;
pub mod cli;
pub mod init;
pub mod occupancy_cmd;
pub mod plot;
mod records;
pub mod render;
pub mod report;
mod sarif;
pub mod select;
pub mod setup;
mod toolchain;

#[cfg(test)]
mod fuzz;

use std::process::ExitCode;

/// Documented exit codes of `cargo launch`.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The build failed (a kernel did not compile, cargo failed) or an unexpected error.
    pub const FAILURE: u8 = 1;
    /// Bad command line, bad or missing `[package.metadata.launch]`, no launch-build package
    /// selected, or a baseline that cannot be read or is damaged.
    pub const USAGE: u8 = 2;
    /// No CUDA toolchain was found and none could be installed, or `LAUNCH_TOOLCHAIN` points to
    /// none (nothing is installed then).
    pub const NO_TOOLCHAIN: u8 = 3;
    /// `cargo launch check` found errors (or warnings under `--deny warnings`).
    pub const CHECK_FAILED: u8 = 1;
}

/// An error that carries its exit code.
#[derive(Debug)]
pub struct Exit {
    /// The code.
    pub code: u8,
    /// The message; `None` when it was already printed (clap's usage errors).
    pub error: Option<anyhow::Error>,
}

impl Exit {
    /// An error with a given code.
    pub fn new(code: u8, error: impl Into<anyhow::Error>) -> Exit {
        Exit { code, error: Some(error.into()) }
    }

    /// An exit code whose message was already printed.
    pub fn silent(code: u8) -> Exit {
        Exit { code, error: None }
    }
}

impl From<anyhow::Error> for Exit {
    fn from(error: anyhow::Error) -> Exit {
        Exit { code: exit::FAILURE, error: Some(error) }
    }
}

/// Runs the command line of this process.
pub fn main_impl() -> ExitCode {
    match cli::run(std::env::args_os()) {
        Ok(()) => ExitCode::from(exit::OK),
        Err(Exit { code, error: None }) => ExitCode::from(code),
        Err(Exit { code, error: Some(error) }) => {
            // A closed pipe (`cargo launch report | head`) is not a failure.
            let broken_pipe = error.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::from(exit::OK);
            }
            eprintln!("error: {}", message(&error));
            ExitCode::from(code)
        }
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
    }
}

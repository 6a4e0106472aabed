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
pub mod occupancy_cmd;
pub mod plot;
pub mod render;
pub mod report;
pub mod setup;

use std::process::ExitCode;

/// Documented exit codes of `cargo launch`.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The build failed (a kernel did not compile, cargo failed) or an unexpected error.
    pub const FAILURE: u8 = 1;
    /// Bad command line or bad `[package.metadata.launch]`.
    pub const USAGE: u8 = 2;
    /// No CUDA toolchain was found and none could be installed.
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
            eprintln!("error: {error:#}");
            ExitCode::from(code)
        }
    }
}

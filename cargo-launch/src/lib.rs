//! The `cargo launch` subcommand: reports registers, spills and exact occupancy of every CUDA
//! kernel of a crate, per arch, without a GPU; installs the toolchain.
//!
//! The one public item is [`main_impl`], the binary's `main`. Its exit codes are listed by
//! `cargo launch --help` and in the README, both from the one table in `error.rs`.
//!
//! Modules depend on each other in one direction: this file dispatches to the commands
//! (`report`, `check`, `occupancy_cmd`, `setup`, `init`), the commands use `cli`'s argument
//! types and the leaf modules (`error`, `words`, `records`, ...), never the other way round.
#![forbid(unsafe_code)]

mod baseline;
mod calculator;
mod cargo;
mod check;
mod check_render;
mod cli;
mod compat_check;
mod error;
mod explore;
mod explore_plot;
mod init;
mod occupancy_cmd;
mod package_rules;
mod plot;
mod records;
mod render;
mod report;
mod sarif;
mod select;
mod setup;
mod spills;
mod svg;
mod toolchain;
mod words;

#[cfg(test)]
mod fuzz;

use std::ffi::OsString;
use std::process::ExitCode;

use cli::Command;
use error::{message, Error};

/// Runs the command line of this process.
pub fn main_impl() -> ExitCode {
    match run(std::env::args_os()) {
        Ok(()) => ExitCode::from(error::OK),
        // A closed pipe (`cargo launch report | head`) is not a failure.
        Err(e) if e.is_broken_pipe() => ExitCode::from(error::OK),
        Err(e) => {
            if let Some(cause) = e.cause() {
                eprintln!("error: {}", message(cause));
            }
            ExitCode::from(e.exit_code())
        }
    }
}

/// Parses `args` (argv including the program name) and runs the command.
fn run(args: impl IntoIterator<Item = OsString>) -> Result<(), Error> {
    let Some(command) = cli::parse(args)? else { return Ok(()) };
    match command {
        Command::Report(a) => report::run(&a),
        Command::Check(a) => check::run(&a),
        Command::Setup(a) => setup::run_args(&a),
        Command::Occupancy(a) => occupancy_cmd::run(&a),
        Command::Explore(a) => explore::run(&a),
        Command::Init(a) => init::init(&a),
        Command::New(a) => init::new(&a),
    }
}

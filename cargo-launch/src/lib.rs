//! The `cargo launch` subcommand: reports registers, spills and exact occupancy of every CUDA
//! kernel of a crate, per arch, without a GPU; installs the toolchain.
//!
//! The public items are [`main_impl`], the binary's `main`, and, for the reference pages the
//! project generates from them (`docs/src/reference/`), the command line's definition
//! ([`command`]) and the exit codes ([`EXIT_CODES`]), which `cargo launch --help` lists too.
//!
//! Layout, in one direction: this file parses the command line (`cli`) and dispatches to
//! `commands/` (`report`, `check`, `explore`, `occupancy`, `init`/`new`, `setup`, `cache`, `prebuild`,
//! `diff`, `coverage`, `doctor`), one module per subcommand. The commands use the services — `toolchain` (find or install the CUDA
//! toolchains), `cargo` (select the packages once, build them, read their manifests), `records`
//! (manifest × config → analysed rows), `spills`, `compat_check`, `baseline`, `calculator`,
//! `select` — and write through `output/` (the report's text, SARIF, SVG and the plots). The
//! leaves are `error` (the one exit-code table), `words` (phrases several outputs share) and
//! `stdout` (the one writer of stdout, which a closed pipe ends quietly).
//! Nothing below a command uses a command, and `output` uses no command.
#![forbid(unsafe_code)]
// Tests may be long tables of cases; the 100-line limit is for the code they test.
#![cfg_attr(test, allow(clippy::too_many_lines))]

mod baseline;
mod calculator;
mod cargo;
mod cli;
mod commands;
mod compat_check;
mod destination;
mod diff;
mod error;
mod gpus;
mod line_info;
mod output;
mod package_rules;
mod pressure;
mod records;
mod regression;
mod select;
mod spills;
mod stdout;
mod toolchain;
mod words;

#[cfg(test)]
mod fuzz;

use std::ffi::OsString;
use std::process::ExitCode;

use cli::Command;
use commands::{cache, check, coverage, diff as diff_cmd, doctor, explore, init, occupancy, prebuild, report, setup};
pub use error::EXIT_CODES;
use error::{message, Error};

/// The `cargo launch` command line as clap defines it: every subcommand, argument and help text.
pub fn command() -> clap::Command {
    cli::command()
}

/// Runs the command line of this process.
pub fn main_impl() -> ExitCode {
    match run(std::env::args_os()) {
        // A closed stdout (`cargo launch report | head`) is no error: `stdout` ends the output
        // quietly and the command exits with its own code.
        Ok(()) => ExitCode::from(error::OK),
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
    // Every documented variable's value, before any work: a bad one is a usage error (exit 2)
    // here as in the build script, whichever command would have read it.
    launch_engine::tooling::Env::cli().check()?;
    match command {
        Command::Report(a) => report::run(&a),
        Command::Check(a) => check::run(&a),
        Command::Setup(a) => setup::run(&a),
        Command::Occupancy(a) => occupancy::run(&a),
        Command::Explore(a) => explore::run(&a),
        Command::Init(a) => init::init(&a),
        Command::New(a) => init::new(&a),
        Command::Prebuild(a) => prebuild::run(&a),
        Command::Cache(a) => cache::run(&a),
        Command::Coverage(a) => coverage::run(&a),
        Command::Doctor(a) => doctor::run(&a),
        Command::Diff(a) => diff_cmd::run(&a),
    }
}

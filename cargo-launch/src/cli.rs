//! Command-line definitions. `cargo launch <cmd>` arrives as `cargo-launch launch <cmd>`; a direct
//! `cargo-launch <cmd>` works too.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use launch::Arch;

use crate::{exit, report, setup, Exit};

const AFTER_HELP: &str = "\
Exit codes:
  0  success
  1  a kernel did not compile, cargo failed, or an unexpected error
  2  bad command line or bad [package.metadata.launch]
  3  no CUDA toolchain found and none could be installed

Environment:
  LAUNCH_TOOLCHAIN             explicit toolchain root (pip --target folder or CUDA toolkit)
  LAUNCH_CACHE_DIR             cache root (default $XDG_CACHE_HOME/cargo-launch or ~/.cache/cargo-launch)
  LAUNCH_NO_SYSTEM_TOOLCHAIN   1: use only LAUNCH_TOOLCHAIN and the cache
  LAUNCH_NO_AUTO_SETUP         1: never install the toolchain automatically
  LAUNCH_PYTHON                Python interpreter for site-packages and setup (default python3)
  CARGO_NET_OFFLINE            true: never download
";

#[derive(Parser, Debug)]
#[command(name = "cargo", bin_name = "cargo", disable_help_subcommand = true)]
enum CargoCli {
    Launch(Launch),
}

/// Registers, spills and exact occupancy of every CUDA kernel of a crate, per GPU arch, without a GPU.
///
/// The crate's build.rs is `fn main() { launch_build::build() }` and its Cargo.toml lists
/// `[package.metadata.launch] arch = ["sm_90", ...]`. `cargo launch report` builds it through
/// cargo (reusing cargo's cache) and prints, for every kernel and arch, its launch contract, the
/// `ptxas -v` lines and the occupancy at the block size it is launched with.
#[derive(Args, Debug)]
#[command(version, after_help = AFTER_HELP)]
pub struct Launch {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build the package(s) and print every kernel's contract, ptxas report and occupancy per arch.
    Report(ReportArgs),
    /// Install the pinned NVRTC + ptxas 12.9.86 wheels from PyPI into the cache (no GPU, no CUDA install).
    Setup(SetupArgs),
}

/// Which packages to build, as `cargo build` takes them.
#[derive(Args, Debug, Clone, Default)]
pub struct PackageArgs {
    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// Package(s) to report on (repeatable).
    #[arg(short, long = "package", value_name = "SPEC")]
    pub packages: Vec<String>,
    /// Every package of the workspace.
    #[arg(long)]
    pub workspace: bool,
}

/// Output format.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// For people.
    #[default]
    Text,
    /// One JSON document on stdout, for tools.
    Json,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    pub packages: PackageArgs,
    /// Only these arches (comma-separated or repeated), e.g. --arch sm_90,sm_100.
    #[arg(long, value_delimiter = ',', value_name = "ARCH", value_parser = parse_arch)]
    pub arch: Vec<Arch>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Fail instead of installing the toolchain when none is found.
    #[arg(long)]
    pub no_setup: bool,
}

#[derive(Args, Debug)]
pub struct SetupArgs {
    /// Reinstall even if the toolchain is already in the cache.
    #[arg(long)]
    pub force: bool,
}

fn parse_arch(s: &str) -> Result<Arch, String> {
    s.trim().parse::<Arch>().map_err(|e| e.to_string())
}

/// Parses `args` (argv including the program name) and runs the command.
pub fn run(args: impl IntoIterator<Item = OsString>) -> Result<(), Exit> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    // `cargo-launch report` (run directly) → `cargo launch report`.
    if args.get(1).is_none_or(|a| a != "launch") {
        args.insert(1.min(args.len()), "launch".into());
    }
    let CargoCli::Launch(cli) = match CargoCli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let code = e.exit_code();
            let _ = e.print();
            return if code == 0 { Ok(()) } else { Err(Exit::silent(exit::USAGE)) };
        }
    };
    match cli.command {
        Command::Report(a) => report::run(&a),
        Command::Setup(a) => setup::run(a.force).map(|_| ()),
    }
}

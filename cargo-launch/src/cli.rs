//! Command-line definitions. `cargo launch <cmd>` arrives as `cargo-launch launch <cmd>`; a direct
//! `cargo-launch <cmd>` works too.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use launch::occupancy::Carveout;
use launch::Arch;
use launch_engine::quantity::Quantity;
use launch_engine::tooling::toolchain::{pin, Pin};
use launch_schema::occupancy::Variable;

use crate::error::{self, Error};
use crate::select;

/// Exit codes, then every environment variable from the one table that documents them.
fn after_help() -> String {
    let mut s = format!("{}\nEnvironment:\n", error::help_text());
    for v in launch_engine::tooling::DOCUMENTED {
        s.push_str(&format!("  {:<28} {}\n", v.name, v.effect));
    }
    s
}

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
#[command(version, after_help = after_help())]
pub struct Launch {
    #[command(subcommand)]
    command: Command,
}

/// A parsed command line: the subcommand and its arguments.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build the package(s) and print every kernel's contract, ptxas report and occupancy per arch.
    Report(ReportArgs),
    /// CI gate: fail where a launch cannot succeed (error 701), spills exceed the budget,
    /// resources regressed against the baseline, or the toolchain cannot target an arch.
    Check(CheckArgs),
    /// Install a pinned toolchain's wheels (NVRTC, ptxas, headers, nvdisasm; 12.9 unless --toolchain)
    /// into the cache (no GPU, no CUDA install).
    Setup(SetupArgs),
    /// NVIDIA's Occupancy Calculator for a hypothetical kernel: blocks, warps and occupancy per SM,
    /// every limit, the largest launchable and the suggested block size; sweeps and an SVG plot.
    Occupancy(OccupancyArgs),
    /// Compare launch contracts for one kernel, per arch: its PTX compiled once, each contract
    /// written into it and assembled by ptxas; registers, spills, stack and occupancy per variant,
    /// the frontier of occupancy against spills, and the cliff from the current build.
    Explore(ExploreArgs),
    /// Set up an existing crate: [package.metadata.launch], build.rs, the launch and launch-build
    /// dependencies and a kernel folder with an example kernel, each only where missing.
    Init(InitArgs),
    /// Create a crate like the template: kernels/, build.rs, [package.metadata.launch], src/.
    New(NewArgs),
    /// Ship the kernels: compile them from source and write launch-prebuilt/ (cubins, PTX,
    /// manifest, a key of every input), which builds then embed without any toolchain.
    Prebuild(PrebuildArgs),
    /// The local kernel cache: where it is, its entries, size and limit, the hit rate of the last
    /// builds and the remote store; `prune` it to its limit or `clear` it.
    Cache(CacheArgs),
    /// Which GPUs run the kernels and how: a cubin, the PTX by JIT (and whether a driver takes
    /// its ISA) or nothing, per kernel; the bytes per arch and the smallest arch list.
    Coverage(CoverageArgs),
    /// Is this machine set up? Each pinned toolchain (hashes, NVRTC and its builtins, ptxas,
    /// nvdisasm, CCCL), the environment, the cache, the GPU driver, the crate's configuration.
    Doctor(DoctorArgs),
    /// What changed per kernel × arch between two toolchains (--toolchain 12.9..13.0), a git
    /// revision and the working tree (--rev REV), or two `report --format json` files.
    Diff(DiffArgs),
}

/// `cargo launch doctor`.
#[derive(Args, Debug)]
#[command(after_help = "\
Checks each pinned toolchain as builds would find it: its files against the wheels' RECORD hashes,
NVRTC loading with its builtins (it compiles an empty kernel), ptxas and nvdisasm running, CCCL's
headers; the documented environment variables that are set; the cache folder (writable, entries,
size); the GPU driver, read from the driver library (libcuda.so.1, cuDriverGetVersion) when one
loads, against the crate's min-driver and its PTX; and, in a crate, its [package.metadata.launch].
Every problem comes with its fix. Exit 0 when healthy, 3 when a toolchain problem blocks builds,
1 for any other problem.")]
pub struct DoctorArgs {
    /// Path to a crate's Cargo.toml (default: the current folder's, when it has
    /// [package.metadata.launch]).
    #[arg(long, value_name = "PATH", value_parser = parse_manifest_path)]
    pub manifest_path: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// `cargo launch coverage`.
#[derive(Args, Debug)]
#[command(after_help = "\
For each GPU (a name from cargo-launch's table of GPUs, or an arch such as sm_86 for its compute
capability), what the driver loads of each kernel: a cubin (same compute-capability major, same or
older minor: sm_80's runs on 8.6 and 8.9, not 9.0; `a` cubins only on their own chip), else the
lowest PTX that runs there, which the driver JIT-compiles on first load (and refuses with error 222
when its PTX ISA is newer than the driver), else nothing (error 209). Kernels that differ (arch-gated
kernels, per-file arch tables, tune variants) are listed apart. Then the bytes each arch embeds and
the smallest arch list that runs every listed GPU natively, with its size.

Without --gpu: T4, A100, RTX 3090, Jetson AGX Orin, L4, H100, B200, B300, RTX 5090, DGX Spark.

Example:
  cargo launch coverage --gpu \"A100,H100,L4,RTX 4090,B200,RTX 5090,Jetson AGX Orin,T4\" --driver 12.4")]
pub struct CoverageArgs {
    #[command(flatten)]
    pub packages: PackageArgs,
    /// GPUs (comma-separated or repeated): names such as \"RTX 4090\" or arches such as sm_86.
    #[arg(long, value_delimiter = ',', value_name = "GPU", value_parser = parse_gpu)]
    pub gpu: Vec<String>,
    /// The driver to predict for, as its CUDA version (12.4; `nvidia-smi` shows it); default: any
    /// driver new enough for what is embedded.
    #[arg(long, value_name = "VERSION", value_parser = parse_cuda_version)]
    pub driver: Option<launch::compat::CudaVersion>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Fail instead of installing the toolchain when none is found.
    #[arg(long)]
    pub no_setup: bool,
}

/// `--gpu NAME`: a GPU of launch's table or an arch, exactly as written (no empty entry, no
/// spaces around a name), refused when it is read.
fn parse_gpu(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("an empty GPU name (write comma-separated names such as \"A100,H100\")".into());
    }
    if s.trim() != s {
        return Err(format!(
            "`{}` has spaces around it (write comma-separated names such as \"A100,H100\")",
            s.escape_debug()
        ));
    }
    crate::gpus::lookup(s).map(|_| s.to_string()).map_err(|e| e.to_string())
}

fn parse_cuda_version(s: &str) -> Result<launch::compat::CudaVersion, String> {
    launch_engine::compat::parse_version(s).map_err(|e| e.to_string())
}

/// `cargo launch diff`'s output formats.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffFormat {
    /// For people.
    #[default]
    Text,
    /// One JSON document on stdout (`launch_schema::diff::Document`), for tools.
    Json,
    /// A pull-request comment: a summary table and the details collapsed, under 60 KB.
    Markdown,
}

/// `cargo launch diff`.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("sides").required(true).args(["files", "toolchain", "rev"])))]
#[command(after_help = "\
Per kernel × arch, only what changed: registers, spill stores and loads, stack, static shared
memory, occupancy at the launch block size, the next-block cliff, the largest launchable block,
and every launch at the block size that fails now (error 701) or works now; most impact first,
with totals. Kernels are paired by package, file and symbol; one whose file moved is paired as
moved; kernels added, removed or renamed are listed, not compared.

--toolchain OLD..NEW builds the selected packages with each pinned toolchain whatever their
`toolchain` key says (LAUNCH_TOOLCHAIN_PIN), each into target/launch-diff/<toolchain>, through
the kernel cache, for the arches both toolchains can target; both are installed when missing
unless --no-setup. --rev REV checks the revision out into a temporary git worktree (removed
afterwards), builds it into target/launch-diff/rev and compares it with the working tree.

Example:
  cargo launch diff --toolchain 12.9..13.0
  cargo launch diff --rev origin/main --format markdown --fail-on regression
  cargo launch diff old.json new.json")]
pub struct DiffArgs {
    /// Two `cargo launch report --format json` documents: OLD NEW.
    #[arg(value_name = "FILE", num_args = 2)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub packages: PackageArgs,
    /// Two pinned toolchains, OLD..NEW (12.9..13.0).
    #[arg(long, value_name = "OLD..NEW", value_parser = parse_pin_pair)]
    pub toolchain: Option<(Pin, Pin)>,
    /// A git revision (a commit, branch or tag) compared with the working tree.
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// `--fail-on regression`: exit 1 when a kernel lost occupancy, gained spills or stopped
    /// launching at its block size.
    #[arg(long = "fail-on", value_name = "WHAT", value_parser = ["regression"])]
    pub fail_on: Option<String>,
    /// With --toolchain or --rev: also each side's live registers by source line (as `report
    /// --pressure`), and the lines whose live registers changed most. Two `report --pressure
    /// --format json` documents are compared so without it.
    #[arg(long)]
    pub pressure: bool,
    /// Do not install a toolchain when one is missing (exit 3 instead).
    #[arg(long)]
    pub no_setup: bool,
}

/// `cargo launch prebuild`.
#[derive(Args, Debug)]
#[command(after_help = "\
Writes launch-prebuilt/ beside each selected package's Cargo.toml: the outputs of a from-source
build for the arches the crate lists (cubins, fallback PTX, tune variants, the manifest) and
prebuilt.json, the key of everything they depend on (kernel files, included crate headers,
[package.metadata.launch], arches, the pinned toolchain) with each file's SHA-256. The same sources
always give the same bytes, on any machine; an unchanged folder is not rewritten.

A build whose sources match the key embeds the folder and runs no compiler: no toolchain, no
Python, no network, no cache. When they do not match it compiles from source (warning which file
changed) or, without a toolchain, fails naming the file and this command. LAUNCH_PREBUILT=ignore
always compiles from source, =require never does. `cargo launch check` fails on a stale folder.

Commit the folder and let it go into the package (`cargo package --list` shows it); the command
prints what each arch costs and warns when the folder alone would pass crates.io's 10 MB limit.
Host files (`host = [...]`) are linked by nvcc and the host compiler: such crates build from source.

--verify compiles everything again without the kernel cache, compares with the folder byte for
byte, writes nothing, and exits 1 naming every difference. Shipped binaries are as trustworthy as
the person who ran --verify on them; users who trust no shipped binary set LAUNCH_PREBUILT=ignore.

Example:
  cargo launch prebuild
  cargo launch prebuild --verify
  cargo launch prebuild -p my-kernels --format json")]
pub struct PrebuildArgs {
    #[command(flatten)]
    pub packages: PackageArgs,
    /// Compile from source without the kernel cache and compare with launch-prebuilt/ byte for
    /// byte; write nothing; exit 1 on any difference.
    #[arg(long)]
    pub verify: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Do not install the toolchain when none is found (exit 3 instead).
    #[arg(long)]
    pub no_setup: bool,
}

/// `cargo launch explore`.
#[derive(Args, Debug)]
#[command(after_help = "\
Variants: the kernel's current contract, no contract, and `--max-regs cliffs` (the default): for
the block size, every register cap at which the resident blocks per SM change, with the
min_blocks ptxas can honour there. --threads, --min-blocks and --max-regs N,... add the grid of
their combinations. Nothing is recompiled by NVRTC: the build's PTX of each arch (from the kernel
cache) gets each contract's directives, and ptxas assembles it, several at once; each result is
kept in the kernel cache, so a second run assembles nothing (stderr says how many came from it).

--plot FILE.svg draws one panel per arch: registers per thread (top) and spill bytes, stores +
loads (bottom) against each variant's max_regs, occupancy dashed on the right axis, one colour
per block size (--threads). Variants without max_regs stand right of the axis in labelled slots
(current, no contract, no cap, min_blocks N); filled marks are on the frontier, hollow ones are
not, the current build is ringed, a variant ptxas refused is a cross, and the red dashed line is
the cliff from the current build. The file is written whole or not at all (its folder must
exist); the table or JSON still goes to stdout.

Example:
  cargo launch explore poly_eval --arch sm_90,sm_100
  cargo launch explore poly_eval --threads 256,512 --max-regs 64,128 --format json
  cargo launch explore poly_eval --threads 128,256 --plot explore.svg")]
pub struct ExploreArgs {
    /// The kernel, written in full: its symbol (mangled, for C++), its demangled name or its qualified
    /// name `path/file.cu::name` (not the shortened name the report's table may print).
    #[arg(value_name = "KERNEL")]
    pub kernel: String,
    #[command(flatten)]
    pub packages: PackageArgs,
    /// Only these arches (comma-separated or repeated); default: the crate's arches the kernel is
    /// compiled for.
    #[arg(long, value_delimiter = ',', value_name = "ARCH", value_parser = parse_arch)]
    pub arch: Vec<Arch>,
    /// Block sizes to try, multiples of 32 from 32 to 1024 (default: the contract's, else the host's).
    #[arg(long, value_delimiter = ',', value_name = "N", allow_negative_numbers = true, value_parser = parse_contract_threads)]
    pub threads: Vec<u32>,
    /// `min_blocks` values to try, 1..=32.
    #[arg(long = "min-blocks", value_delimiter = ',', value_name = "N", allow_negative_numbers = true)]
    #[arg(value_parser = parse_min_blocks)]
    pub min_blocks: Vec<u32>,
    /// `max_regs` values to try, 16..=255, or `cliffs` (the default).
    #[arg(long = "max-regs", value_delimiter = ',', value_name = "N|cliffs", allow_negative_numbers = true)]
    #[arg(value_parser = parse_max_regs)]
    pub max_regs: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also draw the variants to this SVG file: registers and spill bytes against the register
    /// cap, occupancy on a second axis, one panel per arch (see below).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Also each variant's peak of live registers (nvdisasm's life ranges of its cubin, cached in
    /// the target folder), beside the registers ptxas allocated. JSON: `live_peak`.
    #[arg(long)]
    pub pressure: bool,
    /// Do not install the toolchain when none is found (exit 3 instead).
    #[arg(long)]
    pub no_setup: bool,
}

/// `cargo launch init`.
#[derive(Args, Debug)]
#[command(after_help = "\
Adds what is missing and leaves the rest as it is: a [package.metadata.launch] table (arch =
[\"sm_80\", \"sm_90\"], with a comment on what to list), `fn main() { launch_build::build() }` in
build.rs (an existing build.rs is left alone, and the output says what to add to it), the launch
dependency and the launch-build build dependency, and the kernel folder with an example kernel (an
existing folder gets none). Cargo.toml keeps its formatting and comments. It prints what it did and
what is left to do.

Example:
  cargo launch init
  cargo launch init --kernels cuda --manifest-path my-crate/Cargo.toml")]
pub struct InitArgs {
    /// The crate's Cargo.toml, or the crate's folder (default: ./Cargo.toml).
    #[arg(long, value_name = "PATH", value_parser = parse_init_manifest_path)]
    pub manifest_path: Option<PathBuf>,
    /// Kernel folder, relative to Cargo.toml (default: kernels).
    #[arg(long, value_name = "DIR")]
    pub kernels: Option<String>,
    /// The cargo-launch checkout holding launch/ and launch-build/, for the path dependencies
    /// (default: the checkout this binary was built from).
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
}

/// `cargo launch new`.
#[derive(Args, Debug)]
#[command(after_help = "\
Writes a crate like the project's template/ into a new folder (one that exists is refused; a name
cargo would refuse is refused too): a Cargo.toml with [package.metadata.launch], build.rs, the
template's kernels/ and src/, and a .gitignore. The crate is written beside the folder and renamed
into place when complete, so a failure leaves nothing behind.

Example:
  cargo launch new gemm-lab
  cargo launch report --manifest-path gemm-lab/Cargo.toml")]
pub struct NewArgs {
    /// The new crate's folder; its last component is the package name.
    #[arg(value_name = "NAME")]
    pub path_or_name: PathBuf,
    /// The cargo-launch checkout holding launch/ and launch-build/, for the path dependencies
    /// (default: the checkout this binary was built from).
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
}

/// Which packages to build, as `cargo build` takes them.
#[derive(Args, Debug, Clone, Default)]
pub struct PackageArgs {
    /// Path to the Cargo.toml of the package or workspace (default: the one cargo finds from the
    /// current folder). Without -p or --workspace its package is selected, or, for a virtual
    /// manifest, the workspace's default members.
    #[arg(long, value_name = "PATH", value_parser = parse_manifest_path)]
    pub manifest_path: Option<PathBuf>,
    /// A package of the workspace to select, by name (repeatable); one that is not a member is a
    /// usage error listing the members.
    #[arg(short, long = "package", value_name = "NAME")]
    pub packages: Vec<String>,
    /// Select every package of the workspace (those that do not build with launch-build have no
    /// kernels and are passed over; a selection with none that does is a usage error).
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

/// `cargo launch report`.
#[derive(Args, Debug)]
#[command(after_help = "\
Builds the selected packages with `cargo check` (the build scripts run exactly as in `cargo build`
and share its results, so a built crate reports at once) and prints, per kernel and arch: the launch
contract, the `ptxas -v` lines, the occupancy at the contract's block size (or the host's, for a
kernel without one) with what limits it, and the largest block that launches. Filters (--kernel,
--file) and --sort apply to the JSON too. Without a toolchain it installs the pinned one first,
unless --no-setup.

Example:
  cargo launch report
  cargo launch report --arch sm_90,sm_100 --summary --sort occupancy
  cargo launch report --kernel '^gemm_' --spills
  cargo launch report --workspace --format json")]
pub struct ReportArgs {
    #[command(flatten)]
    pub packages: PackageArgs,
    /// Only these arches (comma-separated or repeated), e.g. --arch sm_90,sm_100. Arches the
    /// crate does not list are compiled into target/launch-arch/, leaving the normal build alone.
    #[arg(long, value_delimiter = ',', value_name = "ARCH", value_parser = parse_arch)]
    pub arch: Vec<Arch>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// One line per kernel × arch: registers, spill bytes, stack, occupancy at the block size,
    /// what limits it, the largest block. The default above 40 records.
    #[arg(long, conflicts_with = "detailed")]
    pub summary: bool,
    /// Every ptxas line, the contract and the arithmetic per kernel × arch. The default up to 40
    /// records.
    #[arg(long)]
    pub detailed: bool,
    /// Only kernels whose name or `path/file.cu::name` matches this regular expression.
    #[arg(long, value_name = "REGEX", value_parser = select::parse_regex)]
    pub kernel: Option<regex::Regex>,
    /// Only kernels of files matching this glob (`*.cu`, `sub/*.cu`, `**/gemm*`); without `/` it
    /// matches the file name, with `/` the path from the crate root or the kernel folder.
    #[arg(long, value_name = "GLOB", value_parser = select::parse_glob)]
    pub file: Option<select::Glob>,
    /// Order of the records (default: source order, lowest arch first).
    #[arg(long, value_enum, value_name = "KEY")]
    pub sort: Option<select::SortKey>,
    /// For each kernel × arch that spills: the source lines of its spill stores and loads (each
    /// such file compiled again with line info and read with nvdisasm; cached in the target
    /// folder). JSON: `spills_by_line`.
    #[arg(long)]
    pub spills: bool,
    /// For each kernel × arch: the live registers by source line — the peak after any
    /// instruction beside ptxas's allocation, and the lines that hold the most (each file
    /// compiled again with line info, nvdisasm's life ranges joined with its line table; cached
    /// in the target folder); for a kernel that spills under its register budget, also the
    /// lines above the budget in the same code compiled without its contract. Needs cubins that
    /// nvdisasm 13 can follow (CUDA 13's; CUDA 12.9's for sm_100). JSON: `pressure`.
    #[arg(long)]
    pub pressure: bool,
    /// Fail instead of installing the toolchain when none is found.
    #[arg(long)]
    pub no_setup: bool,
}

/// `check`'s output formats.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CheckFormat {
    /// For people.
    #[default]
    Text,
    /// One JSON document on stdout, for tools.
    Json,
    /// A SARIF 2.1.0 log on stdout, for GitHub code scanning and SARIF viewers.
    Sarif,
}

/// `cargo launch check`.
#[derive(Args, Debug)]
#[command(after_help = "\
Compiles every kernel for the --arch list, with no GPU, and prints one line per finding (kind,
file:line, kernel, arch and the arithmetic), then a summary. Errors (exit 1): `launch` (the kernel
cannot launch at its contract's threads, or the host block size: error 701), `spills` (over
max-spill-bytes), `regression` (registers, spills, stack or static shared memory grew, or occupancy
fell, against the committed baseline), `arch` (an arch the toolchain cannot target), `driver`
(nothing embedded for an arch would load on min-driver). Warnings (exit 0 unless --deny warnings):
`contract`, `spills` without a budget, `unbounded` kernels, `max-regs`, `empty`, `baseline`.
Kernels that do not build exit 4, each located error an `error[compile]` finding; usage and
configuration errors exit 2.

Example:
  cargo launch check --bless
  cargo launch check --deny warnings
  cargo launch check --format sarif > launch.sarif")]
pub struct CheckArgs {
    #[command(flatten)]
    pub packages: PackageArgs,
    /// Arches to compile and check (comma-separated or repeated), including ones the crate does
    /// not list; default: the crate's `arch` list.
    #[arg(long, value_delimiter = ',', value_name = "ARCH", value_parser = parse_arch)]
    pub arch: Vec<Arch>,
    /// Output format: text, json, or sarif (SARIF 2.1.0 for GitHub code scanning).
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Write the baseline (registers, spills, stack, shared memory, occupancy per kernel × arch)
    /// instead of comparing against it.
    #[arg(long)]
    pub bless: bool,
    /// Baseline file, which must exist unless --bless (default: launch-baseline.txt next to each
    /// package's Cargo.toml; when that is absent, the summary says no baseline was compared).
    #[arg(long, value_name = "PATH")]
    pub baseline: Option<PathBuf>,
    /// `--deny warnings`: warnings fail the check too.
    #[arg(long, value_name = "LINT", value_parser = ["warnings"])]
    pub deny: Vec<String>,
    /// List every finding; without it, more than 10 findings of one kind are one line with a
    /// count and the first names (JSON always lists all).
    #[arg(short, long)]
    pub verbose: bool,
    /// Spill findings point at the source line with the most spill code instead of the kernel's
    /// definition (the spilling files compiled again with line info, as `report --spills` does).
    #[arg(long)]
    pub spills: bool,
    /// Fail instead of installing the toolchain when none is found.
    #[arg(long)]
    pub no_setup: bool,
}

/// `cargo launch setup`.
#[derive(Args, Debug)]
#[command(after_help = "\
Installs NVIDIA's wheels of the pinned CUDA line with pip (hashes pinned; python3 -m pip install
--target, or LAUNCH_PYTHON's) into <cache>/toolchain/ (<cache>: LAUNCH_CACHE_DIR, else
$XDG_CACHE_HOME/cargo-launch, else ~/.cache/cargo-launch), in a temporary folder renamed into place
when complete, under a lock. Builds find it there by themselves: the build script never downloads.
`report`, `check` and the other building commands run this by themselves when no toolchain is
found, unless --no-setup, LAUNCH_NO_AUTO_SETUP=1, CARGO_NET_OFFLINE=true or LAUNCH_TOOLCHAIN is set.
Needs Python 3 with pip and the package index once; `cargo launch doctor` checks the result.

Example:
  cargo launch setup
  cargo launch setup --toolchain 12.9 --toolchain 13.0
  cargo launch setup --toolchain 13.0 --with curand")]
pub struct SetupArgs {
    /// Reinstall even if the toolchain is already in the cache.
    #[arg(long)]
    pub force: bool,
    /// The pinned CUDA line to install: 12.9 (the default), 13.0 or 13.5; repeatable, each installs
    /// side by side in the cache.
    #[arg(long = "toolchain", value_name = "VERSION", value_parser = parse_pin)]
    pub toolchains: Vec<Pin>,
    /// Also install a CUDA library's headers beside each toolchain, pinned, for kernels that
    /// include them; the build then finds them by itself. `curand` (curand_kernel.h: the wheel is
    /// 68 MB for 12.9, 60 MB for 13.0, of which only the 2 MB of headers are kept) or `nvtx`
    /// (nvtx3/, under 1 MB); repeatable, or comma-separated.
    #[arg(long = "with", value_name = "LIBRARY", value_delimiter = ',', value_parser = parse_library)]
    pub with: Vec<String>,
}

/// `cargo launch cache`.
#[derive(Args, Debug)]
#[command(after_help = "\
The cache is <cache>/kernels/ (<cache>: LAUNCH_CACHE_DIR, else $XDG_CACHE_HOME/cargo-launch, else
~/.cache/cargo-launch). Its limit is LAUNCH_CACHE_MAX_SIZE (default 5G; 0 for none): after a build
that stored entries, the least recently used go until 90% of it is left. Each build through the
cache adds a line to <cache>/kernel-builds.tsv, from which the hit rates come. `clear` removes the
entries, the compile times and that log; the toolchains under <cache>/toolchain/ stay.")]
pub struct CacheArgs {
    /// What to do (default: show).
    #[command(subcommand)]
    pub action: Option<CacheAction>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text, global = true)]
    pub format: Format,
}

/// `cargo launch cache <action>`.
#[derive(Subcommand, Debug, Clone, Copy)]
pub enum CacheAction {
    /// Location, entries, bytes, limit, the hit rate of the last builds and the remote store.
    Show,
    /// Remove the least recently used entries while the cache is over its limit, down to 90% of it.
    Prune {
        /// The limit to prune to, instead of LAUNCH_CACHE_MAX_SIZE's: bytes or a number with K, M,
        /// G or T (powers of 1024), such as 500M or 5G; 0 for no limit.
        #[arg(long, value_name = "SIZE", value_parser = parse_max_size)]
        max_size: Option<MaxSize>,
    },
    /// Remove every entry, the compile times and the build log (the toolchains stay).
    Clear,
}

/// A size limit; `None`: no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxSize(pub Option<u64>);

fn parse_max_size(s: &str) -> Result<MaxSize, String> {
    launch_engine::tooling::cache::parse_size(s).map(MaxSize)
}

/// Which input the calculator's graphs vary.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// Threads per block, 32..=1024 by 32 (plus the given block size).
    Threads,
    /// Registers per thread, every count 0..=255.
    Registers,
    /// Shared memory per block (static + dynamic), 0 to the arch's opt-in limit by 512 bytes
    /// (plus the given amount).
    Smem,
}

impl From<Sweep> for Variable {
    fn from(s: Sweep) -> Variable {
        match s {
            Sweep::Threads => Variable::Threads,
            Sweep::Registers => Variable::Registers,
            Sweep::Smem => Variable::Smem,
        }
    }
}

/// `cargo launch occupancy`: the inputs of NVIDIA's Occupancy Calculator.
#[derive(Args, Debug)]
#[command(after_help = OCCUPANCY_AFTER_HELP)]
pub struct OccupancyArgs {
    /// GPU architecture, e.g. sm_90 (a/f variants use their base compute capability).
    #[arg(long, value_name = "ARCH", value_parser = parse_arch)]
    pub arch: Arch,
    /// Threads per block, 1..=1024.
    #[arg(long, value_name = "N", default_value = "256", allow_negative_numbers = true, value_parser = parse_threads)]
    pub threads: u32,
    /// Registers per thread as ptxas reports them ("Used N registers"), 0..=255.
    #[arg(long, value_name = "N", default_value = "32", allow_negative_numbers = true, value_parser = parse_registers)]
    pub registers: u32,
    /// Static shared memory per block in bytes ("N bytes smem"; at most 48K). Accepts a K suffix (= 1024).
    #[arg(long, value_name = "BYTES", default_value = "0", allow_negative_numbers = true, value_parser = parse_bytes)]
    pub static_smem: u32,
    /// Dynamic shared memory per block in bytes (the launch's third parameter). Above 48K minus the
    /// static size the kernel is assumed to have opted in (cudaFuncSetAttribute). Accepts a K suffix.
    #[arg(long, value_name = "BYTES", default_value = "0", allow_negative_numbers = true)]
    #[arg(value_parser = parse_dynamic_smem)]
    pub dynamic_smem: u32,
    /// CTA barriers per block as ptxas reports them ("used N barriers"), 0..=16; limits blocks on CC >= 9.0.
    #[arg(long, value_name = "N", default_value = "1", allow_negative_numbers = true, value_parser = parse_barriers)]
    pub barriers: u32,
    /// Shared-memory carveout preference: `default` or a percentage 0..=100 of the largest carveout.
    #[arg(long, value_name = "PERCENT", default_value = "default", allow_negative_numbers = true)]
    #[arg(value_parser = parse_carveout)]
    pub carveout: Carveout,
    /// Print one of the calculator's three graphs as data, the given point marked.
    #[arg(long, value_enum, value_name = "VARIABLE")]
    pub sweep: Option<Sweep>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also draw the three graphs (occupancy against block size, registers and shared memory) to
    /// this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

const OCCUPANCY_AFTER_HELP: &str = "\
Defaults: 256 threads, 32 registers, no shared memory, 1 barrier, default carveout.
The numbers are those of cuda_occupancy.h (CUDA 12.9) and the driver's occupancy API.

Examples:
  cargo launch occupancy --arch sm_90 --registers 167 --threads 256
  cargo launch occupancy --arch sm_90 --registers 167 --sweep threads --format json
  cargo launch occupancy --arch sm_86 --static-smem 16K --plot occupancy.svg
";

/// A non-negative integer no larger than `max`, with `what` in the message.
fn parse_count(s: &str, what: &str, min: u64, max: u64) -> Result<u32, String> {
    let n: u64 = s.trim().parse().map_err(|_| format!("{what} must be a whole number from {min} to {max}"))?;
    if n < min || n > max {
        return Err(format!("{what} must be from {min} to {max}"));
    }
    Ok(n as u32)
}

/// `occupancy --threads`: a block size (`launch_engine::quantity`, as everywhere).
fn parse_threads(s: &str) -> Result<u32, String> {
    Quantity::BlockSize.parse(s).map_err(|e| e.to_string())
}

/// `explore --threads`: a contract's threads, as `@launch` and tune grids take them.
fn parse_contract_threads(s: &str) -> Result<u32, String> {
    Quantity::Threads.parse(s).map_err(|e| e.to_string())
}

/// `explore --min-blocks`, as `@launch` and tune grids take it.
fn parse_min_blocks(s: &str) -> Result<u32, String> {
    Quantity::MinBlocks.parse(s).map_err(|e| e.to_string())
}

/// `explore --max-regs`: a cap, as `@launch` and tune grids take it, or `cliffs`.
fn parse_max_regs(s: &str) -> Result<String, String> {
    let t = s.trim();
    if t == "cliffs" {
        return Ok(t.to_string());
    }
    Quantity::MaxRegs.parse(t).map(|n| n.to_string()).map_err(|e| format!("{e}; or `cliffs`"))
}

/// `occupancy --dynamic-smem`: bytes (a K suffix allowed) within what any GPU gives a block.
fn parse_dynamic_smem(s: &str) -> Result<u32, String> {
    // Not bytes at all (`-1`, `x`): the quantity's own wording, as for every other bad value.
    let n = parse_bytes(s).map_err(|e| Quantity::DynamicSmem.parse(s).err().map_or(e, |e| e.to_string()))?;
    Quantity::DynamicSmem.check(i64::from(n)).map_err(|mut e| {
        e.value = s.trim().to_string();
        e.to_string()
    })
}

fn parse_registers(s: &str) -> Result<u32, String> {
    // ptxas never assigns more than 255 registers per thread.
    parse_count(s, "registers per thread", 0, 255)
}

fn parse_barriers(s: &str) -> Result<u32, String> {
    // A CTA has 16 named barriers (bar.sync 0..15).
    parse_count(s, "barriers per block", 0, 16)
}

/// Bytes, optionally with a `K`/`KB`/`KiB` suffix meaning 1024. The arch-dependent upper limit is
/// checked once the arch is known; this only rejects what no arch allows (over 1 GiB).
fn parse_bytes(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let (digits, unit) = match ["kib", "kb", "k"].iter().find(|suffix| lower.ends_with(*suffix)) {
        Some(suffix) => (&t[..t.len() - suffix.len()], 1024u64),
        None => (t, 1),
    };
    let msg = "shared memory must be a whole number of bytes (optionally with a K suffix, = 1024)";
    let n: u64 = digits.trim().parse().map_err(|_| msg.to_string())?;
    n.checked_mul(unit)
        .filter(|b| *b <= 1 << 30)
        .map(|b| b as u32)
        .ok_or_else(|| "more shared memory than any GPU has per block (the most is 232448 bytes, 227K)".to_string())
}

fn parse_carveout(s: &str) -> Result<Carveout, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("default") {
        return Ok(Carveout::Default);
    }
    let pct = parse_count(t.strip_suffix('%').unwrap_or(t), "the carveout (percent)", 0, 100)
        .map_err(|e| format!("{e}, or `default`"))?;
    Ok(Carveout::Percent(pct as i32))
}

/// `--manifest-path`: a `Cargo.toml` with `[package]` or `[workspace]`, checked when the command
/// line is read, so that a file that is not there or is no crate's is a usage error (exit 2) for
/// every command before any work or check (`cargo metadata`, a toolchain, doctor's checks).
fn parse_manifest_path(value: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(value);
    let fix = "pass the path of a crate's or a workspace's Cargo.toml";
    let refuse = |why: &str| Err(format!("{why}; {fix}"));
    match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() => return refuse("it is a folder"),
        Ok(m) if !m.is_file() => return refuse("it is not a regular file"),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return refuse("no such file"),
        Err(e) => return refuse(&e.to_string()),
    }
    if path.file_name().is_none_or(|n| n != "Cargo.toml") {
        return refuse("cargo takes only a file named Cargo.toml");
    }
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => return refuse("it is not UTF-8 text"),
        Err(e) => return refuse(&e.to_string()),
    };
    let doc = match text.parse::<toml_edit::DocumentMut>() {
        Ok(d) => d,
        Err(e) => return refuse(&format!("it is not TOML ({})", e.message().trim_end_matches('.'))),
    };
    if !["package", "workspace"].iter().any(|t| doc.get(t).is_some_and(toml_edit::Item::is_table_like)) {
        return refuse("it has neither [package] nor [workspace]");
    }
    Ok(path)
}

/// `init --manifest-path`: as [`parse_manifest_path`], or a crate's folder that holds one (init
/// sets up a crate, and its folder is what a user has at hand); the folder's Cargo.toml is checked.
fn parse_init_manifest_path(value: &str) -> Result<PathBuf, String> {
    let folder = PathBuf::from(value);
    if folder.is_dir() && folder.join("Cargo.toml").is_file() {
        return parse_manifest_path(&folder.join("Cargo.toml").to_string_lossy());
    }
    parse_manifest_path(value)
}

fn parse_arch(s: &str) -> Result<Arch, String> {
    s.trim().parse::<Arch>().map_err(|e| e.to_string())
}

/// `--toolchain VERSION`: a pinned line, else the choices.
fn parse_pin(value: &str) -> Result<Pin, String> {
    Pin::named(value.trim())
        .ok_or_else(|| format!("`{value}` is not a pinned toolchain; valid choices: {}", pin::names()))
}

/// `12.9..13.0`: two different pinned toolchains.
fn parse_pin_pair(value: &str) -> Result<(Pin, Pin), String> {
    let (a, b) = value
        .split_once("..")
        .ok_or_else(|| format!("`{value}` is not OLD..NEW; write two pinned toolchains such as 12.9..13.0"))?;
    let (a, b) = (parse_pin(a)?, parse_pin(b)?);
    if a == b {
        return Err(format!("`{value}` names one toolchain twice; write two different ones such as 12.9..13.0"));
    }
    Ok((a, b))
}

fn parse_library(value: &str) -> Result<String, String> {
    let names = pin::library_names();
    let v = value.trim().to_ascii_lowercase();
    if names.contains(&v.as_str()) {
        Ok(v)
    } else {
        Err(format!("`{value}` is not a library setup installs; valid choices: {}", names.join(", ")))
    }
}

/// `cargo launch` as clap defines it, built (`cargo launch report` is each subcommand's name in
/// its usage), for the reference pages generated from it.
pub fn command() -> clap::Command {
    let mut cargo = CargoCli::command();
    cargo.build();
    cargo.find_subcommand("launch").cloned().expect("`cargo launch` is the one subcommand of `cargo`")
}

/// Parses `args` (argv including the program name). `None`: clap printed `--help` or
/// `--version`, nothing more to do; a bad command line is explained on stderr and returned as
/// [`Error::UsagePrinted`].
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Option<Command>, Error> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    // `cargo-launch report` (run directly) → `cargo launch report`.
    if args.get(1).is_none_or(|a| a != "launch") {
        args.insert(1.min(args.len()), "launch".into());
    }
    match CargoCli::try_parse_from(&args) {
        Ok(CargoCli::Launch(cli)) => Ok(Some(cli.command)),
        Err(e) => {
            let code = e.exit_code();
            let _ = e.print();
            if code == 0 {
                Ok(None)
            } else {
                Err(Error::UsagePrinted)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use launch_engine::quantity::{Quantity, QUANTITIES};

    use super::*;

    /// Issue 19, item 3: every quantity a flag takes is refused at every command that takes it with
    /// the rule `@launch`, Cargo.toml and tune grids apply (`launch_engine::quantity`), as a usage error
    /// (exit 2) naming the flag. Before, `explore --threads 0|2000 --min-blocks 0|99` were taken
    /// (ptxas's raw error, or a `min_blocks` no GPU meets on the frontier).
    #[test]
    fn every_quantity_is_refused_alike_at_every_flag() {
        let mut cases = 0;
        for q in QUANTITIES {
            let (bad, flags): (&[&str], &[(&str, &str)]) = match q {
                Quantity::Threads => (&["0", "-32", "100", "1056", "2000", "x"], &[("explore", "--threads")]),
                Quantity::BlockSize => (&["0", "-1", "1025", "2000", "x"], &[("occupancy", "--threads")]),
                Quantity::MinBlocks => (&["0", "-1", "33", "99", "x"], &[("explore", "--min-blocks")]),
                Quantity::MaxRegs => (&["0", "8", "15", "256", "x"], &[("explore", "--max-regs")]),
                Quantity::DynamicSmem => (&["-1", "232449", "1000000", "x"], &[("occupancy", "--dynamic-smem")]),
            };
            for v in bad {
                for (command, flag) in flags {
                    let args = match *command {
                        "explore" => vec!["cargo", "launch", "explore", "k", flag, v],
                        _ => vec!["cargo", "launch", "occupancy", "--arch", "sm_90", flag, v],
                    };
                    let e = CargoCli::try_parse_from(&args).map(|_| ()).unwrap_err();
                    let message = e.to_string();
                    let rule = q.parse(v).unwrap_err().to_string();
                    assert_eq!(e.exit_code(), 2, "{message}");
                    assert!(message.contains(&format!("for '{flag} ")), "{message}");
                    assert!(message.contains(&rule), "{q:?} {v}: {message}\n{rule}");
                    cases += 1;
                }
            }
        }
        assert_eq!(cases, 25);
    }
}

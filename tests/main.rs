//! The end-to-end test binary of the launch-tests crate: each module runs the real `cargo-launch`
//! binary (built once per run, see `support::binary`) on fixture crates copied to temporary folders
//! (or on the template in place). Tests of one library alone live with it (launch/tests/).

mod support;

/// `cargo launch report` on the template reproduces the seed article's numbers.
mod report;

/// `cargo launch check`: launch failures, spill budgets, baselines, arches, annotations.
mod check;

/// Kernel tables name C++ kernels by demangled and bare names (newcomer review finding 1).
mod cpp_names;

/// `check` on kernels that do not build: located `compile` findings in text, JSON and SARIF.
mod check_build_failure;

/// `cargo launch explore`: contracts written into the PTX and assembled by ptxas, per arch.
mod explore;

/// Bad configuration, broken kernels and a missing toolchain give the documented errors.
mod errors;

/// Issue 32, class 1: every damaged toolchain file is a toolchain error naming it, never a crash.
mod damaged_toolchain;

/// Every configuration error names its key path, `Cargo.toml:LINE:COL`, the value and what is expected.
mod config_errors;

/// Issue 19 item 2: the exit code follows the error's kind wherever it is found (every documented
/// variable and every key the build script judges, with a bad value).
mod exit_kinds;

/// `cargo launch occupancy`: the calculator as a command.
mod occupancy_cmd;

/// Issue 20: prebuilt kernels shipped in the crate, used by builds with no toolchain.
mod prebuilt;

/// The kernel cache (each invalidation rule, damaged entries, a killed build, two builds at once,
/// checkout-independent outputs) and jobserver parallelism (`-j1` is serial).
mod cache;

/// `cargo launch cache` (show, prune, clear) and the local cache's size limit in builds.
mod cache_cmd;

/// Issue 21: the remote kernel cache (S3 and WebDAV) against real servers started by the tests.
mod remote_cache;

/// Issue 21 item 7: the tuner's winners on the same remote store (S3 and WebDAV), through the tune
/// cache's API.
mod tune_remote;

/// Misbehaving tools and failed builds: a hanging ptxas is stopped at `LAUNCH_COMPILE_TIMEOUT`, a
/// ptxas that writes nothing is named, inline-asm errors point at the kernel, no stray statistics.
mod tools;

/// The book's CI recipe, read out of docs/src/guide/ci.md and run against the binary.
mod ci_recipe;

/// The documentation's GitHub Actions recipe for the shared kernel cache, read out of the document
/// and run against a real S3 server: a push fills it, another checkout compiles 0 jobs, a pull
/// request writes nothing.
mod shared_cache_recipe;

/// The standard headers and CCCL given to NVRTC; `std-headers = false`; host-only headers.
mod headers;

/// CUDA library headers (`curand_kernel.h`): the note naming the wheel, `cargo launch setup --with`.
mod library_headers;

/// Issue 11 hardening of contracts and sources: bounds written anywhere or through macros, compiler
/// messages without inserted code, non-UTF-8 sources, warnings for folders and files without kernels.
mod contracts_hardening;

/// Issue 10 naming: one kernel name in several files, macro-generated kernels at their invocation,
/// kernels that only some arches' builds have.
mod real_kernels_naming;

/// Issue 10: nvcc-style flags, `exclude`, per-file settings and host files on a real-looking folder.
mod real_kernels_config;

/// Issue 10's CLI for hundreds of kernels and first use: the compact report, filters, grouped
/// `check` findings, `--arch` builds that leave the normal build alone, `init` and `new`.
mod cli_scale;

/// Issue 10 item 5: every failing file of a build once, with its arches; compiler warnings once
/// per compile, never from the cache.
mod build_output;

/// Issue 10's real-world test: candle-kernels 0.11.1 unmodified, every record equal to cuobjdump's.
mod candle_kernels;

/// Issue 34: the book's candle recipe on the published candle-kernels: its API, PTX, cubins and
/// every MoE/GGUF launcher, built by launch-build.
mod candle_recipe;

/// Issue 14 item 2: `min-driver`; `check`'s `driver` findings and `report`'s driver line on fixtures.
mod driver_compat;

/// Issue 14 item 1: `toolchain = "13.0"` next to 12.9: the template's numbers, arches a toolchain
/// cannot target, a toolchain of the wrong major.
mod toolchains;

/// Issue 33 item 1: kernel parameters recovered from the compiler and held to the PTX.
mod signatures;

/// Issue 32 class 9: recursion's stack, recorded as the driver reports it with every toolchain.
mod recursive_stack;

/// CUDA's own launch bounds that differ per arch (CUB's): each arch's record and contract its own.
mod arch_bounds;

/// `[package.metadata.launch.tune.<kernel>]`: variants embedded at build time with explore's
/// numbers, `KERNEL.variants()`, no ptxas run on a rebuild, `check` on every variant.
mod tune_variants;

/// Issue 35: `report --pressure`, live registers by source line.
mod pressure;

/// Issue 33 item 6: dfdx's and mistralrs-quant's kernels, fetched, all typed.
mod real_signatures;

/// Issue 33 item 2: wrong typed launches do not compile, and say which kernel and parameter.
mod typed_launch;

/// Issue 14 item 4: `report --spills` and `check --spills` on the template (the lines of
/// `poly.cuh` that spill), and line info changing no instruction.
mod spills;

/// Issue 14 item 3: `host = [...]` files compiled with nvcc through `cc`, linked into the crate,
/// their kernels reported and checked with the numbers of that compile.
mod host_files;

/// Issue 25 items 1 and 3: one nvcc compile per host file for all its arches, cached like any job;
/// CUB kernels once, under the linked names.
mod host_cache;

/// Issue 32 class 11: the arches of a host compile that finished are kept when it is stopped.
mod host_resume;

/// Host code reached through a crate header is found before compiling, at the `#include`; a
/// `host` launcher file without kernels builds without a warning.
mod host_detect;

/// nvcc's own options in `flags` (`--expt-extended-lambda`, `--default-stream`, `-Xcompiler`, ...)
/// reach `host` files; device files leave the host-side ones out.
mod host_flags;

/// Issue 32 class 11: `-rdc=true` `host` files, device-linked into the library; the program links
/// and the report has the device link's numbers.
mod host_rdc;

/// Issue 19 items 1 and 6: no file kind hangs the build, each is named; kernels many folders deep.
mod input_files;

/// Issue 19 item 5: every writing command × a target it cannot write: exit 2 before any work,
/// nothing created or changed; `init` and `new` write all or nothing.
mod writes;

/// Issue 19 item 7: warnings about entries that match nothing carry `Cargo.toml:LINE:COL`.
mod located_warnings;

/// Template-heavy kernels with names of hundreds of characters: short in text, whole in JSON,
/// short hashed Rust statics.
mod long_names;

/// Issue 20 item 4: the three crates' package metadata, READMEs and license texts, what each
/// package ships, and a crate made by `new` that `cargo package` takes.
mod packaging;

/// `cargo launch coverage`: per GPU, a cubin, PTX by JIT (refused by an old driver) or nothing.
mod coverage;

/// Issue 32 classes 4 and 7: no command prints a password in any position; every variable and flag
/// that takes a URL, a size, a list, a mode or a folder refuses a malformed value (exit 2, named).
mod secrets_and_bad_input;

/// Issue 32 class 2: every command × every `--format` with stdout closed early: no panic, no
/// exit 101, no signal, nothing said about the pipe.
mod closed_stdout;

/// Issue 32 class 6: exit codes as the table says: a `--manifest-path` that is no crate's at every
/// command, `prebuild` under another toolchain pin, `cache clear`/`prune` that cannot remove.
mod exit_table;

/// `cargo launch doctor`: a missing or damaged toolchain, NVRTC builtins missing, a cache not writable.
mod doctor;

/// Issue 24 item 1: `cargo launch diff` between two toolchains, a git revision and the working
/// tree, or two report documents.
mod diff;

/// Issue 32 class 8: one kernel-name matcher for every place that takes a kernel name (kernel
/// tables, tune tables, `explore`) × every form of a name, on the C++ overloads of `cpp_names`.
mod kernel_names;

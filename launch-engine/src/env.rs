//! Every read of the environment, in one place.
//!
//! Every variable cargo-launch reads is one entry of one table ([`variables!`] below): its name,
//! whether a change of it reruns the build script, what it does, and how its value is judged.
//! [`Env`]'s reads take the entry's typed handle ([`var`]), never a string, so a variable the
//! table lacks does not compile, and whether a read prints `cargo:rerun-if-env-changed=NAME`
//! follows from the entry, not from which method a call site picked. `PATH` never reruns: it
//! changes between shells and IDEs and would rerun the script on every build (cc-rs#1215).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use launch::Arch;

use crate::cargo_directives;
use crate::error::{Error, Location};
use crate::process::DEFAULT_TIMEOUT;

/// One environment variable of the table: one that cargo-launch documents ([`DOCUMENTED`]), or one
/// it reads but does not own (cargo's, the system's, CI's, the tests'). Made only here: a value
/// of this type is an entry of the table, and is what [`Env`]'s reads take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnvVar {
    /// Its name (`CUDA_HOME / CUDA_PATH`: two names, one meaning; [`EnvVar::names`] has each).
    pub name: &'static str,
    /// Whether a change of it reruns the build script: a build script's read of it prints
    /// `cargo:rerun-if-env-changed`. Variables that change no output (the cache's limit, the
    /// remote store), `cargo launch`'s own, the run-time ones, cargo's own (cargo ignores the
    /// line for those) and `PATH` do not.
    pub reruns: bool,
    /// What it does; for a variable we do not own, what we read it for.
    pub effect: &'static str,
    names: &'static [&'static str],
    judge: Judge,
}

/// How a variable's value is judged, and whether we document it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Judge {
    /// Documented; [`Env::check`] judges it up front with this grammar.
    Checked(Grammar),
    /// Documented; judged where it is used, by what this names.
    Elsewhere(&'static str),
    /// Not ours, so not documented by us. `scrubbed`: the tests remove it from the processes they
    /// run, because it would change what those do.
    NotOurs { scrubbed: bool },
}

impl EnvVar {
    /// Each of its names, in the order they are looked at (`CUDA_HOME`, then `CUDA_PATH`).
    pub fn names(&self) -> &'static [&'static str] {
        self.names
    }

    /// Whether cargo-launch documents it (`cargo launch --help`, the reference page).
    pub fn is_documented(&self) -> bool {
        !matches!(self.judge, Judge::NotOurs { .. })
    }

    /// Whether the tests remove it from the processes they run: every documented variable (a
    /// developer's `LAUNCH_CACHE_REMOTE` must not change what a test sees) and what cargo and CI
    /// give a process.
    pub fn is_scrubbed(&self) -> bool {
        !matches!(self.judge, Judge::NotOurs { scrubbed: false })
    }

    /// Its grammar, when [`Env::check`] judges it up front.
    fn grammar(&self) -> Option<Grammar> {
        match self.judge {
            Judge::Checked(grammar) => Some(grammar),
            Judge::Elsewhere(_) | Judge::NotOurs { .. } => None,
        }
    }
}

/// Every variable cargo-launch documents, with what it does; `cargo launch --help` prints this
/// table, and the reference page `docs/src/reference/environment.md` is generated from it.
pub const DOCUMENTED: &[EnvVar] = var::DOCUMENTED;

/// Every variable read anywhere through [`Env`] (and the ones cargo and CI give the processes we
/// run): [`DOCUMENTED`], then the ones we do not own.
pub const ALL: &[EnvVar] = var::ALL;

/// The one table: each entry becomes a handle `var::NAME` and an element of [`ALL`] (and of
/// [`DOCUMENTED`] when it is ours), so no handle lacks an entry and no entry lacks a handle. A
/// name is its handle's identifier (`A / B` for two names with one meaning), so the two cannot
/// differ. A documented entry says how it is judged: `checked: Grammar` (by [`Env::check`], up
/// front) or `judged: "who"` (where it is used).
macro_rules! variables {
    (@judge checked $grammar:ident) => { Judge::Checked(Grammar::$grammar) };
    (@judge judged $who:literal) => { Judge::Elsewhere($who) };
    (
        documented {
            $( $name:ident $(/ $alias:ident)* { reruns: $reruns:literal, $how:ident: $judge:tt, effect: $effect:literal, } )*
        }
        not_ours {
            $( $other:ident { reruns: $other_reruns:literal, scrubbed: $scrubbed:literal, read: $read:literal, } )*
        }
    ) => {
        $(
            #[doc = concat!("`", stringify!($name) $(, " / ", stringify!($alias))*, "`, documented.")]
            pub const $name: &EnvVar = &EnvVar {
                name: concat!(stringify!($name) $(, " / ", stringify!($alias))*),
                names: &[stringify!($name) $(, stringify!($alias))*],
                reruns: $reruns,
                effect: $effect,
                judge: variables!(@judge $how $judge),
            };
        )*
        $(
            #[doc = concat!("`", stringify!($other), "`, not ours.")]
            pub const $other: &EnvVar = &EnvVar {
                name: stringify!($other),
                names: &[stringify!($other)],
                reruns: $other_reruns,
                effect: $read,
                judge: Judge::NotOurs { scrubbed: $scrubbed },
            };
        )*
        pub(super) const DOCUMENTED: &[EnvVar] = &[$(*$name),*];
        pub(super) const ALL: &[EnvVar] = &[$(*$name,)* $(*$other),*];
    };
}

/// Every variable's typed handle, for [`Env`](super::Env)'s reads: `env.get(var::LAUNCH_ARCH)`.
/// Each says what it does in [`EnvVar::effect`].
pub mod var {
    use super::{EnvVar, Grammar, Judge};

    variables! {
    documented {
        LAUNCH_TOOLCHAIN {
            reruns: true,
            judged: "the toolchain search: anything but a folder with a working toolchain is a toolchain error (exit 3) that says what the path is",
            effect: "explicit toolchain root of the crate's CUDA major: a pip --target folder holding nvidia/cuda_nvrtc and nvidia/cuda_nvcc (12.x) or nvidia/cu13 (13.x), or a CUDA toolkit root; skips discovery",
        }
        LAUNCH_TOOLCHAIN_PIN {
            reruns: true,
            judged: "the build (`pipeline::build_crate`), which knows the pins (`12.9`, `13.0`, `13.5`): another name is a configuration error naming the variable",
            effect: "a pinned toolchain (12.9, 13.0 or 13.5) that replaces the crate's `toolchain` key for this build (set by `cargo launch diff --toolchain` for each side's build); the crate's arches must be ones it can target",
        }
        LAUNCH_CACHE_DIR {
            reruns: true,
            checked: Folder,
            effect: "cargo-launch's cache (default $XDG_CACHE_HOME/cargo-launch, else ~/.cache/cargo-launch); `cargo launch setup [--toolchain 13.0]` installs each toolchain under toolchain/ there, side by side",
        }
        LAUNCH_NO_SYSTEM_TOOLCHAIN {
            reruns: true,
            checked: Switch,
            effect: "set to 1: look only at LAUNCH_TOOLCHAIN and the cache, never at Python site-packages, CUDA_HOME, /usr/local/cuda or PATH",
        }
        LAUNCH_PYTHON {
            reruns: true,
            checked: Program,
            effect: "Python interpreter used to find site-packages and by `cargo launch setup` (default python3)",
        }
        LAUNCH_ARCH {
            reruns: true,
            checked: Arches,
            effect: "comma-separated arches that replace the metadata's list (set by `cargo launch check --arch`)",
        }
        LAUNCH_PREBUILT {
            reruns: true,
            checked: Prebuilt,
            effect: "whether the build embeds the crate's prebuilt kernels (launch-prebuilt/, written by `cargo launch prebuild`): auto (default: when they match the sources, else compile from source), ignore (always compile from source) or require (fail rather than compile)",
        }
        LAUNCH_NO_CACHE {
            reruns: true,
            checked: Switch,
            effect: "set to 1: neither read nor write the per-kernel compile cache under the cache dir's kernels/",
        }
        LAUNCH_CACHE_MAX_SIZE {
            reruns: false,
            checked: Size,
            effect: "the kernel cache's size limit: bytes or a number with K, M, G or T (powers of 1024), such as 500M or 5G; 0 for no limit (default 5G); after a build that stored entries, the least recently used go until 90% of it is left",
        }
        LAUNCH_CACHE_REMOTE {
            reruns: false,
            checked: RemoteUrl,
            effect: "a shared remote kernel cache behind the local one, as a URL: s3://bucket/prefix (?endpoint=http://host:port&region=... for S3-compatible servers; credentials from the AWS environment variables or standard chain), webdav+http(s)://[user:password@]host:port/path or file:///folder; replaces [package.metadata.launch] cache-remote; s3 and webdav need launch-build's `remote` feature",
        }
        LAUNCH_CACHE_REMOTE_MODE {
            reruns: false,
            checked: RemoteMode,
            effect: "rw (default: read and write the remote kernel cache) or ro (read only: for untrusted builds such as pull requests from forks)",
        }
        LAUNCH_CACHE_REMOTE_TIMEOUT {
            reruns: false,
            checked: RemoteSeconds,
            effect: "seconds one read or write of the remote kernel cache may take (default 10, at most 86400); the first failure or timeout turns the remote off for the rest of the build, with one warning",
        }
        LAUNCH_ALL_PTX {
            reruns: true,
            checked: Switch,
            effect: "set to 1: also write every arch's PTX to OUT_DIR/launch/ptx-all/ (not embedded; `cargo launch explore` builds so, in a target folder of its own)",
        }
        LAUNCH_BUILD_DEBUG {
            reruns: true,
            checked: Switch,
            effect: "set to 1: the build script prints every command it runs as a cargo warning",
        }
        LAUNCH_COMPILE_TIMEOUT {
            reruns: true,
            checked: Seconds,
            effect: "seconds one compiler run (NVRTC or ptxas, per file and arch; each of a `host` file's nvcc steps, cicc and ptxas per arch; an nvcc run that compiles all arches at once, once per arch) may take before it is stopped and the build fails (default 1800, at most 86400)",
        }
        LAUNCH_NVDISASM {
            reruns: false,
            checked: Program,
            effect: "nvdisasm for `cargo launch report --spills` / `check --spills` (default: beside the toolchain's ptxas, then the cache's CUDA 13 toolchains, then PATH)",
        }
        CUDA_HOME / CUDA_PATH {
            reruns: true,
            judged: "the toolchain search, for which it is one place among others to look at (a CUDA toolkit root)",
            effect: "CUDA toolkit root, searched after the pip wheels",
        }
        VIRTUAL_ENV {
            reruns: true,
            judged: "the toolchain search, for which it is one place among others to look at (set when a Python virtual environment is active)",
            effect: "an active Python virtual environment, searched for the pip wheels",
        }
        DOCS_RS {
            reruns: true,
            judged: "nobody: set at all, it means a docs.rs build",
            effect: "set by docs.rs: kernels are not compiled; the generated module has every kernel with no cubins",
        }
        LAUNCH_NO_AUTO_SETUP {
            reruns: false,
            checked: Switch,
            effect: "set to 1: `cargo launch report`/`check` never install the toolchain by themselves",
        }
        CARGO_NET_OFFLINE {
            reruns: false,
            checked: CargoBool,
            effect: "true: `cargo launch` never downloads (the build script never does)",
        }
        LAUNCH_TUNE {
            reruns: false,
            judged: "the program at run time (`launch::tune`), which refuses anything but `off`, `cached` or `always`",
            effect: "at run time, whether a program's tuner may time kernel variants: off (never time, never read the tune cache), cached (default: use a remembered winner, time on a miss) or always (time every run and overwrite)",
        }
        LAUNCH_TUNE_CACHE_DIR {
            reruns: false,
            judged: "the program at run time (`launch::tune`): a folder",
            effect: "at run time, the tune cache's folder (default $XDG_CACHE_HOME/cargo-launch/tune, else ~/.cache/cargo-launch/tune)",
        }
        LAUNCH_TUNE_CACHE_REMOTE {
            reruns: false,
            judged: "the program at run time (`launch::tune::remote_config_from`, the URL grammar of `launch_remote`: the same URLs as `LAUNCH_CACHE_REMOTE`, or an absolute folder): a value it refuses is one warning and no remote",
            effect: "at run time, a remote tune cache behind the local one, on the kernel cache's store: a URL as LAUNCH_CACHE_REMOTE takes it (s3://bucket/prefix?endpoint=...&region=..., webdav+http(s)://[user:password@]host:port/path, file:///folder) or an absolute folder; winners live under its tune/ and are reused, verified, by the machines with the same GPU, driver and kernels; s3 and webdav need launch's `remote-store` feature in the program (without it: one warning naming the feature, and the local cache works on)",
        }
        LAUNCH_TUNE_CACHE_REMOTE_MODE {
            reruns: false,
            judged: "the program at run time (`launch::tune::remote_config_from`): `rw` or `ro`; another value is one warning and no remote",
            effect: "at run time, rw (default: read and write the remote tune cache) or ro (read only, never write: for untrusted machines)",
        }
        LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT {
            reruns: false,
            judged: "the program at run time (`launch::tune::remote_config_from`): whole seconds from 1 to 86400; another value is one warning and no remote",
            effect: "at run time, seconds one read or write of the remote tune cache may take (default 10, at most 86400); the first failure or timeout turns the remote off for the rest of the program, with one warning, and the program tunes locally",
        }
    }
    not_ours {
        OUT_DIR { reruns: false, scrubbed: false, read: "set by cargo for a build script: the folder its outputs go to (cargo ignores a rerun line for the variables it sets)", }
        CARGO_MANIFEST_DIR { reruns: false, scrubbed: false, read: "set by cargo for a build script: the kernel crate's folder", }
        CARGO_PKG_NAME { reruns: false, scrubbed: false, read: "set by cargo for a build script: the package's name, for a failed build's diagnostics file and the kernel cache's usage log", }
        NUM_JOBS { reruns: false, scrubbed: false, read: "set by cargo for a build script: how many jobs run side by side when no jobserver is inherited", }
        CARGO { reruns: false, scrubbed: false, read: "set by cargo for `cargo launch`: the cargo to call back (else `cargo`)", }
        PATH { reruns: false, scrubbed: false, read: "the system's: where programs (ptxas, python3, nvdisasm, the host compiler) are looked for; it never reruns the build script, since it differs between shells and IDEs (cc-rs#1215)", }
        HOME { reruns: true, scrubbed: false, read: "the system's: the cache's default root, ~/.cache/cargo-launch", }
        XDG_CACHE_HOME { reruns: true, scrubbed: false, read: "the system's: the cache's default root, $XDG_CACHE_HOME/cargo-launch", }
        CXX { reruns: true, scrubbed: false, read: "the `cc` crate's C++ compiler (else c++), which a crate's host files are compiled with", }
        AWS_REGION { reruns: false, scrubbed: false, read: "the AWS environment's: the region of an s3:// remote cache whose URL names none", }
        AWS_DEFAULT_REGION { reruns: false, scrubbed: false, read: "the AWS environment's: the region when AWS_REGION is unset (else us-east-1)", }
        GITHUB_ACTIONS { reruns: false, scrubbed: true, read: "set by GitHub Actions: `cargo launch check` adds workflow annotations to its output", }
        CARGO_TERM_COLOR { reruns: false, scrubbed: true, read: "cargo's: not read by us, but the cargo we run colours its output by it", }
        RUSTFLAGS { reruns: false, scrubbed: true, read: "cargo's: not read by us, but it changes what the cargo we run builds", }
        CARGO_MAKEFLAGS { reruns: false, scrubbed: true, read: "cargo's jobserver, read by the `jobserver` crate (a build script run by hand in a test must not join the harness's own)", }
        MAKEFLAGS { reruns: false, scrubbed: true, read: "make's jobserver, read by the `jobserver` crate when CARGO_MAKEFLAGS is unset", }
        MFLAGS { reruns: false, scrubbed: true, read: "make's jobserver (older form), read by the `jobserver` crate when the others are unset", }
        LAUNCH_RUN_ID { reruns: false, scrubbed: false, read: "set by `cargo launch` for its own builds: the run written into a failed build's diagnostics file, so the command tells its own run's failure from an earlier one's; it changes no output", }
        LAUNCH_BLESS_SNAPSHOTS { reruns: false, scrubbed: false, read: "tests: a switch that rewrites the snapshots (ptxas logs parsed, the text report) instead of comparing them", }
        LAUNCH_BLESS_DOCS { reruns: false, scrubbed: false, read: "tests: a switch that rewrites the generated reference pages and schemas instead of comparing them", }
        LAUNCH_BLESS_API { reruns: false, scrubbed: false, read: "tests: a switch that rewrites the public-API listings instead of comparing them", }
        LAUNCH_TEST_REQUIRE_TOOLCHAINS { reruns: false, scrubbed: false, read: "tests: set to 1 (CI), a test that needs the pinned toolchains fails instead of skipping", }
        LAUNCH_TEST_REQUIRE_NVDISASM { reruns: false, scrubbed: false, read: "tests: set to 1 (CI), the --spills tests fail instead of skipping when no nvdisasm is found", }
        LAUNCH_TEST_REQUIRE_SERVERS { reruns: false, scrubbed: false, read: "tests: set to 1 (CI), the remote-cache tests fail instead of skipping when the test servers are not installed", }
        LAUNCH_TEST_SERVERS { reruns: false, scrubbed: false, read: "tests: where tools/test-servers/install.sh put the test servers (default target/test-servers)", }
        LAUNCH_TEST_REQUIRE_MDBOOK { reruns: false, scrubbed: false, read: "tests: set to 1 (CI), the book test fails instead of skipping when mdbook is not installed", }
        LAUNCH_MDBOOK { reruns: false, scrubbed: false, read: "tests: the mdbook the book test runs (default: the one tools/docs/install-mdbook.sh installs in the cache)", }
        LAUNCH_TEST_REQUIRE_SARIF_SCHEMA { reruns: false, scrubbed: false, read: "tests: set to 1 (CI), the SARIF test fails instead of skipping when it cannot validate against the schema", }
    }
    }
}

/// `LAUNCH_PREBUILT`: whether a build uses the crate's prebuilt kernels (`crate::prebuilt`, which
/// calls it `Mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrebuiltMode {
    /// Unset: use them when they match the sources, else compile from source.
    Auto,
    /// `ignore`: always compile from source.
    Ignore,
    /// `require`: use them, and fail rather than compile when they do not match.
    Require,
}

impl PrebuiltMode {
    /// The values `LAUNCH_PREBUILT` takes, as written (unset is `auto`).
    pub const VALUES: [&'static str; 3] = ["auto", "ignore", "require"];

    /// Parses a value of `LAUNCH_PREBUILT` exactly as written (any case); `None` for anything
    /// else: empty, or with spaces around it.
    pub fn parse(text: &str) -> Option<PrebuiltMode> {
        match text.to_ascii_lowercase().as_str() {
            "auto" => Some(PrebuiltMode::Auto),
            "ignore" => Some(PrebuiltMode::Ignore),
            "require" => Some(PrebuiltMode::Require),
            _ => None,
        }
    }
}

/// What values a variable that [`Env::check`] judges takes (an entry's `checked:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grammar {
    /// A switch: on is `1`, `true`, `yes` or `on`, off is `0`, `false`, `no` or `off`, in any case;
    /// empty is unset (off).
    Switch,
    /// cargo's own boolean: `true` or `false`.
    CargoBool,
    /// Whole seconds, from 1 to [`MAX_TIMEOUT_SECS`].
    Seconds,
    /// An absolute folder path (made when needed).
    Folder,
    /// A program: a path to a file, or a name found on `PATH`.
    Program,
    /// Comma-separated arches ([`parse_arch_list`]).
    Arches,
    /// `LAUNCH_PREBUILT`'s words ([`PrebuiltMode::VALUES`]).
    Prebuilt,
    /// A size in bytes, with an optional binary unit (`crate::cache::limit::parse_size`).
    Size,
    /// A remote cache URL (`crate::cache::RemoteUrl::parse`).
    RemoteUrl,
    /// `LAUNCH_CACHE_REMOTE_MODE`'s words (`crate::cache::remote::Mode::VALUES`).
    RemoteMode,
    /// Whole seconds from 1 to [`MAX_TIMEOUT_SECS`], for `LAUNCH_CACHE_REMOTE_TIMEOUT`.
    RemoteSeconds,
}

impl Grammar {
    /// The values it accepts, in words (the reference page's "accepted values").
    fn describe(self) -> String {
        match self {
            Grammar::Switch => format!(
                "a switch: {} (any case) turn it on; {}, empty or unset leave it off",
                SWITCH_ON.map(|v| format!("`{v}`")).join(", "),
                SWITCH_OFF.map(|v| format!("`{v}`")).join(", ")
            ),
            Grammar::CargoBool => "`true` or `false` (cargo's own boolean; any case)".into(),
            Grammar::Seconds | Grammar::RemoteSeconds => format!("whole seconds from 1 to {MAX_TIMEOUT_SECS}"),
            Grammar::Folder => {
                "an absolute folder path (cargo runs each build script in its own crate's folder)".into()
            }
            Grammar::Program => "the path of an existing file, or the name of a program on `PATH`".into(),
            Grammar::Arches => "comma-separated arch names such as `sm_90,sm_100`".into(),
            Grammar::Prebuilt => format!("{} (any case; unset is `auto`)", words(&PrebuiltMode::VALUES)),
            Grammar::Size => {
                "bytes, or a number with `K`, `M`, `G` or `T` (powers of 1024) such as `500M` or `5G`; `0` for no limit"
                    .into()
            }
            Grammar::RemoteUrl => "`s3://bucket/prefix` (with `?endpoint=…&region=…` for S3-compatible servers), \
                `webdav+http(s)://[user:password@]host[:port]/path` or `file:///folder`"
                .into(),
            Grammar::RemoteMode => format!("{} (unset is `rw`)", words(&crate::cache::remote::Mode::VALUES)),
        }
    }
}

/// `` `a`, `b` or `c` ``.
fn words(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// What the documented variable `var` accepts, in words: its grammar's values when `cargo launch`
/// and the build script check it up front (a bad value is exit 2 naming it), else who judges it.
/// `None` for a variable we do not document.
pub fn accepted_values(var: &EnvVar) -> Option<String> {
    match var.judge {
        Judge::Checked(grammar) => Some(grammar.describe()),
        Judge::Elsewhere(judge) => Some(format!("not checked up front; judged by {judge}")),
        Judge::NotOurs { .. } => None,
    }
}

/// The kind of value a documented variable that is checked up front takes ([`value_kind`]): what
/// a test needs to write a malformed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueKind {
    /// A switch (`1`, `true`, ...; empty is off).
    Switch,
    /// Whole seconds.
    Seconds,
    /// An absolute folder.
    Folder,
    /// A program.
    Program,
    /// A comma-separated list of arches.
    ArchList,
    /// One word of a fixed set (`LAUNCH_PREBUILT`, `LAUNCH_CACHE_REMOTE_MODE`).
    Mode,
    /// A size with an optional binary unit.
    Size,
    /// A remote cache URL.
    Url,
}

/// The kind of value `var` takes when [`Env::check`] judges it; `None` for a variable judged
/// elsewhere (see [`accepted_values`]) or not documented.
pub fn value_kind(var: &EnvVar) -> Option<ValueKind> {
    Some(match var.grammar()? {
        Grammar::Switch | Grammar::CargoBool => ValueKind::Switch,
        Grammar::Seconds | Grammar::RemoteSeconds => ValueKind::Seconds,
        Grammar::Folder => ValueKind::Folder,
        Grammar::Program => ValueKind::Program,
        Grammar::Arches => ValueKind::ArchList,
        Grammar::Prebuilt | Grammar::RemoteMode => ValueKind::Mode,
        Grammar::Size => ValueKind::Size,
        Grammar::RemoteUrl => ValueKind::Url,
    })
}

/// The variables that change how a build runs, never what it writes: a build script rerun for a
/// change of these alone keeps the previous build's outputs ([`Env::output_inputs`], used by the
/// fast rerun in `crate::fresh`).
pub const CHANGE_NO_OUTPUT: [&EnvVar; 2] = [var::LAUNCH_BUILD_DEBUG, var::LAUNCH_COMPILE_TIMEOUT];

/// The largest `LAUNCH_COMPILE_TIMEOUT`: one day.
pub const MAX_TIMEOUT_SECS: u64 = 24 * 60 * 60;

/// The values a switch accepts, on then off (any case; empty is unset).
const SWITCH_ON: [&str; 4] = ["1", "true", "yes", "on"];
const SWITCH_OFF: [&str; 4] = ["0", "false", "no", "off"];

/// Reads environment variables, announcing them to cargo when running inside a build script.
#[derive(Debug, Default)]
pub struct Env {
    build_script: bool,
    announced: RefCell<BTreeSet<&'static str>>,
}

impl Env {
    /// For a build script: a read of a variable whose entry reruns prints
    /// `cargo:rerun-if-env-changed`.
    pub fn build_script() -> Env {
        Env { build_script: true, announced: RefCell::default() }
    }

    /// For a command-line tool: reads only.
    pub fn cli() -> Env {
        Env::default()
    }

    /// Whether this is a build script run.
    pub fn is_build_script(&self) -> bool {
        self.build_script
    }

    /// `var`'s value, `None` when unset or empty; of two names with one meaning, the first one set.
    /// In a build script, a variable whose entry reruns ([`EnvVar::reruns`]) is announced to
    /// cargo (each of its names), so whether a read announces is the table's choice.
    pub fn get(&self, var: &EnvVar) -> Option<OsString> {
        let values: Vec<Option<OsString>> = var.names.iter().map(|name| self.read(var, name)).collect();
        values.into_iter().flatten().find(|v| !v.is_empty())
    }

    /// Each of `var`'s names with its value (`None` when unset or empty), in order, each read as
    /// [`Env::get`] reads: for a search that says which name it looked at (`CUDA_HOME`, then
    /// `CUDA_PATH`).
    pub fn each(&self, var: &EnvVar) -> Vec<(&'static str, Option<OsString>)> {
        var.names.iter().map(|name| (*name, self.read(var, name).filter(|v| !v.is_empty()))).collect()
    }

    /// Every name of every variable whose change reruns the build script ([`EnvVar::reruns`]),
    /// except `CHANGE_NO_OUTPUT`, with its raw value, in table order: what the environment
    /// gives a build's outputs. Read without announcing anything: a variable this build reads
    /// for another reason announces itself there.
    pub fn output_inputs(&self) -> Vec<(&'static str, Option<OsString>)> {
        let counts = |v: &&EnvVar| v.reruns && !CHANGE_NO_OUTPUT.iter().any(|n| n.name == v.name);
        ALL.iter().filter(counts).flat_map(|v| v.names.iter().map(|&name| (name, raw(name)))).collect()
    }

    /// A switch: on is `1`, `true`, `yes` or `on`, off is `0`, `false`, `no` or `off`, in any case;
    /// unset or empty is off.
    ///
    /// # Errors
    /// Any other value: a configuration error naming the variable and the accepted values.
    pub fn flag(&self, var: &EnvVar) -> Result<bool, Error> {
        self.get(var).map_or(Ok(false), |v| switch(var.name, &v.to_string_lossy()))
    }

    /// `CARGO_NET_OFFLINE=true`: nothing may be downloaded.
    ///
    /// # Errors
    /// A value other than cargo's `true` or `false`.
    pub fn offline(&self) -> Result<bool, Error> {
        let var = var::CARGO_NET_OFFLINE;
        self.get(var).map_or(Ok(false), |v| cargo_bool(var.name, &v.to_string_lossy()))
    }

    /// `LAUNCH_COMPILE_TIMEOUT`: how long one compiler run may take (whole seconds, from 1 to
    /// 86400, one day; default 1800, 30 minutes). Anything else is a
    /// configuration error naming the variable.
    pub fn compile_timeout(&self) -> Result<Duration, Error> {
        let Some(value) = self.get(var::LAUNCH_COMPILE_TIMEOUT) else { return Ok(DEFAULT_TIMEOUT) };
        timeout_from(&value.to_string_lossy())
    }

    /// `LAUNCH_ARCH`: the arches that replace the metadata's list, if set.
    ///
    /// # Errors
    /// A list [`parse_arch_list`] refuses, as a configuration error naming the variable.
    pub fn arches(&self) -> Result<Option<Vec<Arch>>, Error> {
        self.get_set(var::LAUNCH_ARCH).map(|v| arches_from(&v.to_string_lossy())).transpose()
    }

    /// `LAUNCH_PREBUILT`: whether the crate's prebuilt kernels are used (unset: `auto`).
    ///
    /// # Errors
    /// A value other than `auto`, `ignore` or `require`.
    pub fn prebuilt_mode(&self) -> Result<PrebuiltMode, Error> {
        self.get_set(var::LAUNCH_PREBUILT).map_or(Ok(PrebuiltMode::Auto), |v| prebuilt_mode_from(&v.to_string_lossy()))
    }

    /// The remote kernel cache: `LAUNCH_CACHE_REMOTE`, else `metadata` (the crate's
    /// `cache-remote` and where it is written), with `LAUNCH_CACHE_REMOTE_MODE` and
    /// `LAUNCH_CACHE_REMOTE_TIMEOUT`; `None` when neither names one. An `s3://` URL without
    /// `region=` takes `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`. None of them
    /// reruns the build script: where entries are shared changes no output.
    ///
    /// # Errors
    /// A value its grammar refuses, as a configuration error naming the variable.
    pub fn cache_remote(
        &self,
        metadata: Option<(&crate::cache::RemoteUrl, String)>,
    ) -> Result<Option<crate::cache::RemoteConfig>, Error> {
        use crate::cache::{remote, RemoteConfig, RemoteUrl};
        let (mut url, source) = match self.get_set(var::LAUNCH_CACHE_REMOTE) {
            Some(v) => (remote_url_from(&v.to_string_lossy())?, var::LAUNCH_CACHE_REMOTE.name.to_string()),
            None => match metadata {
                Some((url, at)) => (url.clone(), at),
                None => return Ok(None),
            },
        };
        if let RemoteUrl::S3 { region: region @ None, .. } = &mut url {
            let from_env = self.get(var::AWS_REGION).or_else(|| self.get(var::AWS_DEFAULT_REGION));
            *region = Some(from_env.map_or_else(|| "us-east-1".to_string(), |r| r.to_string_lossy().into_owned()));
        }
        let mode = match self.get_set(var::LAUNCH_CACHE_REMOTE_MODE) {
            Some(v) => remote_mode_from(&v.to_string_lossy())?,
            None => remote::Mode::ReadWrite,
        };
        let timeout = match self.get_set(var::LAUNCH_CACHE_REMOTE_TIMEOUT) {
            Some(v) => remote_timeout_from(&v.to_string_lossy())?,
            None => remote::DEFAULT_TIMEOUT,
        };
        Ok(Some(RemoteConfig { url, mode, timeout, source }))
    }

    /// `LAUNCH_CACHE_MAX_SIZE`: the kernel cache's size limit in bytes, `None` for no limit
    /// (`0`); default [`DEFAULT_MAX_SIZE`](crate::cache::limit::DEFAULT_MAX_SIZE). It does not
    /// rerun the build script: the limit changes no output.
    ///
    /// # Errors
    /// A value `parse_size` refuses, as a configuration error naming the variable.
    pub fn cache_max_size(&self) -> Result<Option<u64>, Error> {
        let var = var::LAUNCH_CACHE_MAX_SIZE;
        match self.get_set(var) {
            None => Ok(Some(crate::cache::limit::DEFAULT_MAX_SIZE)),
            Some(v) => size_from(var.name, &v.to_string_lossy()),
        }
    }

    /// Checks the value of every documented variable that has a grammar (an entry's `checked:`:
    /// switches, numbers, paths, arch lists), without announcing them to cargo: the first bad one
    /// is a configuration error naming the variable, the value and what it accepts. Run before
    /// anything else, so that a bad variable fails the same way (exit 2) whether `cargo launch`
    /// or the build script reads it, and whether or not this run reaches the code that uses it.
    ///
    /// # Errors
    /// The first variable whose value its grammar refuses.
    pub fn check(&self) -> Result<(), Error> {
        for var in ALL {
            let Some(grammar) = var.grammar() else { continue };
            for name in var.names {
                // Not announced: checking a variable is not using it.
                if let Some(value) = raw(name) {
                    self.check_one(name, grammar, &value)?;
                }
            }
        }
        Ok(())
    }

    /// `value` of `name` against `grammar`. Empty is unset for a switch and cargo's boolean
    /// only: every other grammar refuses it (a variable set to nothing is a mistake, not a
    /// default), as it refuses spaces around a value.
    fn check_one(&self, name: &str, grammar: Grammar, value: &std::ffi::OsStr) -> Result<(), Error> {
        let text = value.to_string_lossy();
        if text.is_empty() && !matches!(grammar, Grammar::Switch | Grammar::CargoBool) {
            return Err(bad(name, format!("is set but empty: unset it, or give {}", grammar.describe())));
        }
        match grammar {
            Grammar::Switch => switch(name, &text).map(drop),
            Grammar::CargoBool => cargo_bool(name, &text).map(drop),
            Grammar::Seconds => timeout_from(&text).map(drop),
            Grammar::Arches => arches_from(&text).map(drop),
            Grammar::Prebuilt => prebuilt_mode_from(&text).map(drop),
            Grammar::Size => size_from(name, &text).map(drop),
            Grammar::RemoteUrl => remote_url_from(&text).map(drop),
            Grammar::RemoteMode => remote_mode_from(&text).map(drop),
            Grammar::RemoteSeconds => remote_timeout_from(&text).map(drop),
            Grammar::Folder => {
                if Path::new(value).is_absolute() {
                    folder_can_be(name, Path::new(value))
                } else {
                    Err(bad(
                        name,
                        format!(
                            "`{text}` is a relative path: cargo runs each build script in its own crate's folder, so \
                         give an absolute path"
                        ),
                    ))
                }
            }
            Grammar::Program => {
                let path = Path::new(value);
                if path.has_root() || path.components().count() > 1 {
                    match path_kind(path) {
                        PathKind::File => Ok(()),
                        other => Err(bad(name, format!("`{text}` {}, not a program", other.describe()))),
                    }
                } else if self.on_path(&text).is_some() {
                    Ok(())
                } else {
                    Err(bad(name, format!("`{text}` is not on PATH; give the program's path, or install it")))
                }
            }
        }
    }

    /// `name` on `PATH` (never announced to cargo: see [`var::PATH`]).
    pub fn on_path(&self, name: &str) -> Option<PathBuf> {
        let path = self.get(var::PATH)?;
        let cwd = std::env::current_dir().unwrap_or_default();
        which::which_in(name, Some(path), cwd).ok()
    }

    /// [`Env::get`], but a variable set to nothing is `Some("")`: for the grammars that refuse it.
    /// Only for a variable of one name (every checked one is).
    fn get_set(&self, var: &EnvVar) -> Option<OsString> {
        debug_assert_eq!(var.names.len(), 1, "{}", var.name);
        self.read(var, var.names[0])
    }

    /// `name`, one of `var`'s names, set to nothing kept as `Some("")`; announced to cargo in a
    /// build script iff `var`'s entry reruns (once per name).
    fn read(&self, var: &EnvVar, name: &'static str) -> Option<OsString> {
        if var.reruns && self.build_script && self.announced.borrow_mut().insert(name) {
            cargo_directives::rerun_if_env_changed(name);
        }
        raw(name)
    }
}

/// The one read of the process environment; everything else goes through [`Env`]'s reads, which
/// take a table entry.
fn raw(name: &str) -> Option<OsString> {
    #[allow(clippy::disallowed_methods)]
    std::env::var_os(name)
}

/// An absolute `path` that can be a folder: a folder, or nothing yet below a folder (it is made
/// when needed); a file, a broken link, a FIFO or a device there (or above it) is refused.
fn folder_can_be(name: &str, path: &Path) -> Result<(), Error> {
    let text = path.display();
    if path.as_os_str().to_string_lossy().trim() != path.as_os_str().to_string_lossy() {
        return Err(bad(name, format!("`{}` has spaces around it", text.to_string().escape_debug())));
    }
    for at in path.ancestors() {
        match path_kind(at) {
            PathKind::Folder => return Ok(()),
            PathKind::Missing => {}
            other => {
                let what = if at == path { String::new() } else { format!(", and `{text}` cannot be made below it") };
                return Err(bad(name, format!("`{}` {}, not a folder{what}", at.display(), other.describe())));
            }
        }
    }
    Ok(())
}

/// A configuration error of the variable `name`.
fn bad(name: &str, message: String) -> Error {
    Error::Config { location: Location::Environment, key: name.into(), message }
}

/// A switch's value ([`Grammar::Switch`]).
fn switch(name: &str, text: &str) -> Result<bool, Error> {
    let value = text.trim().to_ascii_lowercase();
    if value.is_empty() || SWITCH_OFF.contains(&value.as_str()) {
        Ok(false)
    } else if SWITCH_ON.contains(&value.as_str()) {
        Ok(true)
    } else {
        Err(bad(
            name,
            format!(
                "`{}` is not a switch: set {} to turn it on, {} (or leave it unset or empty) to leave it off",
                text.escape_debug(),
                SWITCH_ON.join(", "),
                SWITCH_OFF.join(", ")
            ),
        ))
    }
}

/// cargo's boolean ([`Grammar::CargoBool`]).
fn cargo_bool(name: &str, text: &str) -> Result<bool, Error> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" | "" => Ok(false),
        _ => Err(bad(name, format!("`{}` is not `true` or `false` (cargo reads no other value)", text.escape_debug()))),
    }
}

/// `LAUNCH_PREBUILT`'s value ([`Grammar::Prebuilt`]).
fn prebuilt_mode_from(text: &str) -> Result<PrebuiltMode, Error> {
    PrebuiltMode::parse(text).ok_or_else(|| {
        bad(
            var::LAUNCH_PREBUILT.name,
            format!("`{}` is not one of {} (unset means auto)", text.escape_debug(), PrebuiltMode::VALUES.join(", ")),
        )
    })
}

/// `LAUNCH_ARCH`'s list ([`Grammar::Arches`]).
fn arches_from(text: &str) -> Result<Vec<Arch>, Error> {
    parse_arch_list(text).map_err(|message| bad(var::LAUNCH_ARCH.name, message))
}

/// `LAUNCH_CACHE_REMOTE`'s URL ([`Grammar::RemoteUrl`]).
fn remote_url_from(text: &str) -> Result<crate::cache::RemoteUrl, Error> {
    crate::cache::RemoteUrl::parse(text).map_err(|message| bad(var::LAUNCH_CACHE_REMOTE.name, message))
}

/// `LAUNCH_CACHE_REMOTE_MODE`'s word ([`Grammar::RemoteMode`]).
fn remote_mode_from(text: &str) -> Result<crate::cache::remote::Mode, Error> {
    use crate::cache::remote::Mode;
    Mode::parse(text).ok_or_else(|| {
        let values = Mode::VALUES.join(" or ");
        bad(var::LAUNCH_CACHE_REMOTE_MODE.name, format!("`{}` is not {values} (unset means rw)", text.escape_debug()))
    })
}

/// `LAUNCH_CACHE_REMOTE_TIMEOUT`'s seconds ([`Grammar::RemoteSeconds`]): the remote store's one
/// grammar (`launch_remote::parse_timeout`, which the tuner's variable uses too).
fn remote_timeout_from(text: &str) -> Result<Duration, Error> {
    launch_remote::parse_timeout(text).map_err(|message| bad(var::LAUNCH_CACHE_REMOTE_TIMEOUT.name, message))
}

/// `LAUNCH_CACHE_MAX_SIZE`'s size ([`Grammar::Size`]).
fn size_from(name: &str, text: &str) -> Result<Option<u64>, Error> {
    crate::cache::limit::parse_size(text).map_err(|message| bad(name, message))
}

/// `LAUNCH_COMPILE_TIMEOUT`'s value as a limit: whole seconds, from 1 to [`MAX_TIMEOUT_SECS`].
fn timeout_from(text: &str) -> Result<Duration, Error> {
    let shown = text.escape_debug();
    // Spaces are refused as in every other value's grammar: `" 30"` is a quoting mistake.
    let digits = text;
    let message = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        match digits.parse::<u64>() {
            Ok(0) => format!("`{shown}` is not a time limit: it must be at least 1 second"),
            Ok(secs) if secs <= MAX_TIMEOUT_SECS => return Ok(Duration::from_secs(secs)),
            _ => format!("`{shown}` seconds is more than the largest limit, {MAX_TIMEOUT_SECS} (one day)"),
        }
    } else {
        format!("`{shown}` is not a whole number of seconds")
    };
    Err(bad(
        var::LAUNCH_COMPILE_TIMEOUT.name,
        format!(
            "{message}; expected whole seconds from 1 to {MAX_TIMEOUT_SECS} (the default is {})",
            DEFAULT_TIMEOUT.as_secs()
        ),
    ))
}

/// `sm_90,sm_100` (`LAUNCH_ARCH`, `--arch`) → sorted, deduplicated arches; an error names the bad
/// entry, its position in the list and the valid choices.
pub fn parse_arch_list(list: &str) -> Result<Vec<Arch>, String> {
    const FORM: &str = "write comma-separated arch names such as sm_90,sm_100";
    if list.trim().is_empty() {
        return Err(format!("the list is empty; {FORM}; valid choices: {}", launch::KNOWN_ARCHES.join(", ")));
    }
    let parts: Vec<&str> = list.split(',').map(str::trim).collect();
    let mut arches = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let which = format!("entry {} of `{}`", i + 1, list.escape_debug());
        if part.is_empty() {
            return Err(format!("{which} is empty; {FORM}"));
        }
        let arch =
            part.parse::<Arch>().map_err(|e| if parts.len() > 1 { format!("{which}: {e}") } else { e.to_string() })?;
        arches.push(arch);
    }
    arches.sort();
    arches.dedup();
    Ok(arches)
}

/// What is at a path, for messages that say so rather than "does not exist".
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PathKind {
    /// Nothing.
    Missing,
    /// A regular file (through links).
    File,
    /// A folder (through links).
    Folder,
    /// A link whose target does not exist.
    BrokenLink(PathBuf),
    /// A FIFO, socket or device.
    Special(&'static str),
}

impl PathKind {
    /// `does not exist`, `is a file`, `is a broken link to `x``, ...
    pub(crate) fn describe(&self) -> String {
        match self {
            PathKind::Missing => "does not exist".into(),
            PathKind::File => "is a file".into(),
            PathKind::Folder => "is a folder".into(),
            PathKind::BrokenLink(to) => format!("is a broken link to `{}`", to.display()),
            PathKind::Special(what) => format!("is {what}"),
        }
    }
}

/// What is at `path`, links followed.
pub(crate) fn path_kind(path: &Path) -> PathKind {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => PathKind::File,
        Ok(m) if m.is_dir() => PathKind::Folder,
        Ok(m) => PathKind::Special(special(&m)),
        Err(_) => match std::fs::read_link(path) {
            Ok(to) => PathKind::BrokenLink(to),
            Err(_) => PathKind::Missing,
        },
    }
}

/// `a FIFO`, `a socket`, `a device`: what a path that is neither file nor folder is.
#[cfg(unix)]
fn special(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a device"
    }
}

#[cfg(not(unix))]
fn special(_: &std::fs::Metadata) -> &'static str {
    "neither a file nor a folder"
}

#[cfg(test)]
mod tests;

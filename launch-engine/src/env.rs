//! Every read of the environment, in one place.
//!
//! In a build script each read also prints `cargo:rerun-if-env-changed=NAME`, so cargo reruns the
//! script when a variable that can change the output changes. `PATH` is never announced: it changes
//! between shells and IDEs and would rerun the script on every build (cc-rs#1215).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use launch::Arch;

use crate::cargo_directives;
use crate::error::{Error, Location};
use crate::process::DEFAULT_TIMEOUT;

/// One documented environment variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnvVar {
    /// Its name (`CUDA_HOME / CUDA_PATH`: two names, one meaning).
    pub name: &'static str,
    /// Whether a change of it reruns the build script: the build script reads it through
    /// [`Env::get`], which prints `cargo:rerun-if-env-changed`. Variables that change no output
    /// (the cache's limit, the remote store), `cargo launch`'s own and the run-time ones do not.
    pub reruns: bool,
    /// What it does.
    pub effect: &'static str,
}

/// Every variable cargo-launch reads, with what it does; `cargo launch --help` prints this table,
/// and the reference page `docs/src/reference/environment.md` is generated from it.
pub const DOCUMENTED: &[EnvVar] = &[
    EnvVar { name: "LAUNCH_TOOLCHAIN", reruns: true, effect: "explicit toolchain root of the crate's CUDA major: a pip --target folder holding nvidia/cuda_nvrtc and nvidia/cuda_nvcc (12.x) or nvidia/cu13 (13.x), or a CUDA toolkit root; skips discovery" },
    EnvVar { name: "LAUNCH_TOOLCHAIN_PIN", reruns: true, effect: "a pinned toolchain (12.9, 13.0 or 13.5) that replaces the crate's `toolchain` key for this build (set by `cargo launch diff --toolchain` for each side's build); the crate's arches must be ones it can target" },
    EnvVar { name: "LAUNCH_CACHE_DIR", reruns: true, effect: "cargo-launch's cache (default $XDG_CACHE_HOME/cargo-launch, else ~/.cache/cargo-launch); `cargo launch setup [--toolchain 13.0]` installs each toolchain under toolchain/ there, side by side" },
    EnvVar { name: "LAUNCH_NO_SYSTEM_TOOLCHAIN", reruns: true, effect: "set to 1: look only at LAUNCH_TOOLCHAIN and the cache, never at Python site-packages, CUDA_HOME, /usr/local/cuda or PATH" },
    EnvVar { name: "LAUNCH_PYTHON", reruns: true, effect: "Python interpreter used to find site-packages and by `cargo launch setup` (default python3)" },
    EnvVar { name: "LAUNCH_ARCH", reruns: true, effect: "comma-separated arches that replace the metadata's list (set by `cargo launch check --arch`)" },
    EnvVar { name: "LAUNCH_PREBUILT", reruns: true, effect: "whether the build embeds the crate's prebuilt kernels (launch-prebuilt/, written by `cargo launch prebuild`): auto (default: when they match the sources, else compile from source), ignore (always compile from source) or require (fail rather than compile)" },
    EnvVar { name: "LAUNCH_NO_CACHE", reruns: true, effect: "set to 1: neither read nor write the per-kernel compile cache under the cache dir's kernels/" },
    EnvVar { name: "LAUNCH_CACHE_MAX_SIZE", reruns: false, effect: "the kernel cache's size limit: bytes or a number with K, M, G or T (powers of 1024), such as 500M or 5G; 0 for no limit (default 5G); after a build that stored entries, the least recently used go until 90% of it is left" },
    EnvVar { name: "LAUNCH_CACHE_REMOTE", reruns: false, effect: "a shared remote kernel cache behind the local one, as a URL: s3://bucket/prefix (?endpoint=http://host:port&region=... for S3-compatible servers; credentials from the AWS environment variables or standard chain), webdav+http(s)://[user:password@]host:port/path or file:///folder; replaces [package.metadata.launch] cache-remote; s3 and webdav need launch-build's `remote` feature" },
    EnvVar { name: "LAUNCH_CACHE_REMOTE_MODE", reruns: false, effect: "rw (default: read and write the remote kernel cache) or ro (read only: for untrusted builds such as pull requests from forks)" },
    EnvVar { name: "LAUNCH_CACHE_REMOTE_TIMEOUT", reruns: false, effect: "seconds one read or write of the remote kernel cache may take (default 10, at most 86400); the first failure or timeout turns the remote off for the rest of the build, with one warning" },
    EnvVar { name: "LAUNCH_ALL_PTX", reruns: true, effect: "set to 1: also write every arch's PTX to OUT_DIR/launch/ptx-all/ (not embedded; `cargo launch explore` builds so, in a target folder of its own)" },
    EnvVar { name: "LAUNCH_BUILD_DEBUG", reruns: true, effect: "set to 1: the build script prints every command it runs as a cargo warning" },
    EnvVar { name: "LAUNCH_COMPILE_TIMEOUT", reruns: true, effect: "seconds one compiler run (NVRTC or ptxas, per file and arch) may take before it is stopped and the build fails (default 1800, at most 86400)" },
    EnvVar { name: "LAUNCH_NVDISASM", reruns: false, effect: "nvdisasm for `cargo launch report --spills` / `check --spills` (default: beside the toolchain's ptxas, then the cache's CUDA 13 toolchains, then PATH)" },
    EnvVar { name: "CUDA_HOME / CUDA_PATH", reruns: true, effect: "CUDA toolkit root, searched after the pip wheels" },
    EnvVar { name: "VIRTUAL_ENV", reruns: true, effect: "an active Python virtual environment, searched for the pip wheels" },
    EnvVar { name: "DOCS_RS", reruns: true, effect: "set by docs.rs: kernels are not compiled; the generated module has every kernel with no cubins" },
    EnvVar { name: "LAUNCH_NO_AUTO_SETUP", reruns: false, effect: "set to 1: `cargo launch report`/`check` never install the toolchain by themselves" },
    EnvVar { name: "CARGO_NET_OFFLINE", reruns: false, effect: "true: `cargo launch` never downloads (the build script never does)" },
    EnvVar { name: "LAUNCH_TUNE", reruns: false, effect: "at run time, whether a program's tuner may time kernel variants: off (never time, never read the tune cache), cached (default: use a remembered winner, time on a miss) or always (time every run and overwrite)" },
    EnvVar { name: "LAUNCH_TUNE_CACHE_DIR", reruns: false, effect: "at run time, the tune cache's folder (default $XDG_CACHE_HOME/cargo-launch/tune, else ~/.cache/cargo-launch/tune)" },
    EnvVar { name: "LAUNCH_TUNE_CACHE_REMOTE", reruns: false, effect: "at run time, a remote tune cache behind the local one, on the kernel cache's store: a URL as LAUNCH_CACHE_REMOTE takes it (s3://bucket/prefix?endpoint=...&region=..., webdav+http(s)://[user:password@]host:port/path, file:///folder) or an absolute folder; winners live under its tune/ and are reused, verified, by the machines with the same GPU, driver and kernels; s3 and webdav need launch's `remote-store` feature in the program (without it: one warning naming the feature, and the local cache works on)" },
    EnvVar { name: "LAUNCH_TUNE_CACHE_REMOTE_MODE", reruns: false, effect: "at run time, rw (default: read and write the remote tune cache) or ro (read only, never write: for untrusted machines)" },
    EnvVar { name: "LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT", reruns: false, effect: "at run time, seconds one read or write of the remote tune cache may take (default 10, at most 86400); the first failure or timeout turns the remote off for the rest of the program, with one warning, and the program tunes locally" },
];

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

/// What values a variable takes ([`CHECKED`]).
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

/// The documented variables whose values are checked ([`Env::check`]), each with its grammar.
/// The typed reads ([`Env::flag`], [`Env::compile_timeout`], [`Env::arches`], ...) parse with
/// the same functions, so a value is refused the same way whichever process reads it.
const CHECKED: &[(&str, Grammar)] = &[
    ("LAUNCH_CACHE_DIR", Grammar::Folder),
    ("LAUNCH_NO_SYSTEM_TOOLCHAIN", Grammar::Switch),
    ("LAUNCH_PYTHON", Grammar::Program),
    ("LAUNCH_ARCH", Grammar::Arches),
    ("LAUNCH_PREBUILT", Grammar::Prebuilt),
    ("LAUNCH_NO_CACHE", Grammar::Switch),
    ("LAUNCH_CACHE_MAX_SIZE", Grammar::Size),
    ("LAUNCH_CACHE_REMOTE", Grammar::RemoteUrl),
    ("LAUNCH_CACHE_REMOTE_MODE", Grammar::RemoteMode),
    ("LAUNCH_CACHE_REMOTE_TIMEOUT", Grammar::RemoteSeconds),
    ("LAUNCH_ALL_PTX", Grammar::Switch),
    ("LAUNCH_BUILD_DEBUG", Grammar::Switch),
    ("LAUNCH_COMPILE_TIMEOUT", Grammar::Seconds),
    ("LAUNCH_NVDISASM", Grammar::Program),
    ("LAUNCH_NO_AUTO_SETUP", Grammar::Switch),
    ("CARGO_NET_OFFLINE", Grammar::CargoBool),
];

/// The documented variables `Env::check` leaves alone, and who judges them instead.
const NOT_CHECKED: &[(&str, &str)] = &[
    ("LAUNCH_TOOLCHAIN_PIN", "the build (`pipeline::build_crate`), which knows the pins (`12.9`, `13.0`, `13.5`): another name is a configuration error naming the variable"),
    ("LAUNCH_TOOLCHAIN", "the toolchain search: anything but a folder with a working toolchain is a toolchain error (exit 3) that says what the path is"),
    ("CUDA_HOME / CUDA_PATH", "the toolchain search, for which it is one place among others to look at (a CUDA toolkit root)"),
    ("VIRTUAL_ENV", "the toolchain search, for which it is one place among others to look at (set when a Python virtual environment is active)"),
    ("DOCS_RS", "nobody: set at all, it means a docs.rs build"),
    ("LAUNCH_TUNE", "the program at run time (`launch::tune`), which refuses anything but `off`, `cached` or `always`"),
    ("LAUNCH_TUNE_CACHE_DIR", "the program at run time (`launch::tune`): a folder"),
    ("LAUNCH_TUNE_CACHE_REMOTE", "the program at run time (`launch::tune::remote_config_from`, the URL grammar of `launch::remote`: the same URLs as `LAUNCH_CACHE_REMOTE`, or an absolute folder): a value it refuses is one warning and no remote"),
    ("LAUNCH_TUNE_CACHE_REMOTE_MODE", "the program at run time (`launch::tune::remote_config_from`): `rw` or `ro`; another value is one warning and no remote"),
    ("LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT", "the program at run time (`launch::tune::remote_config_from`): whole seconds from 1 to 86400; another value is one warning and no remote"),
];

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

/// What the documented variable `name` accepts, in words: its grammar's values when `cargo launch`
/// and the build script check it up front (a bad value is exit 2 naming it), else who judges it.
/// `None` for a name [`DOCUMENTED`] does not list.
pub fn accepted_values(name: &str) -> Option<String> {
    if let Some((_, grammar)) = CHECKED.iter().find(|(n, _)| *n == name) {
        return Some(grammar.describe());
    }
    NOT_CHECKED.iter().find(|(n, _)| *n == name).map(|(_, judge)| format!("not checked up front; judged by {judge}"))
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

/// The kind of value `name` takes when [`Env::check`] judges it; `None` for a variable judged
/// elsewhere (see [`accepted_values`]) or not documented.
pub fn value_kind(name: &str) -> Option<ValueKind> {
    let (_, grammar) = CHECKED.iter().find(|(n, _)| *n == name)?;
    Some(match grammar {
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

/// The largest `LAUNCH_COMPILE_TIMEOUT`: one day.
pub const MAX_TIMEOUT_SECS: u64 = 24 * 60 * 60;

/// The values a switch accepts, on then off (any case; empty is unset).
const SWITCH_ON: [&str; 4] = ["1", "true", "yes", "on"];
const SWITCH_OFF: [&str; 4] = ["0", "false", "no", "off"];

/// Reads environment variables, announcing them to cargo when running inside a build script.
#[derive(Debug, Default)]
pub struct Env {
    build_script: bool,
    announced: RefCell<BTreeSet<String>>,
}

impl Env {
    /// For a build script: every read prints `cargo:rerun-if-env-changed`.
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

    /// A variable whose change must rerun the build script.
    pub fn get(&self, name: &str) -> Option<OsString> {
        if self.build_script && self.announced.borrow_mut().insert(name.to_string()) {
            cargo_directives::rerun_if_env_changed(name);
        }
        #[allow(clippy::disallowed_methods)]
        std::env::var_os(name).filter(|v| !v.is_empty())
    }

    /// A switch: on is `1`, `true`, `yes` or `on`, off is `0`, `false`, `no` or `off`, in any case;
    /// unset or empty is off.
    ///
    /// # Errors
    /// Any other value: a configuration error naming the variable and the accepted values.
    pub fn flag(&self, name: &str) -> Result<bool, Error> {
        self.get(name).map_or(Ok(false), |v| switch(name, &v.to_string_lossy()))
    }

    /// `CARGO_NET_OFFLINE=true`: nothing may be downloaded.
    ///
    /// # Errors
    /// A value other than cargo's `true` or `false`.
    pub fn offline(&self) -> Result<bool, Error> {
        self.get("CARGO_NET_OFFLINE").map_or(Ok(false), |v| cargo_bool("CARGO_NET_OFFLINE", &v.to_string_lossy()))
    }

    /// `LAUNCH_COMPILE_TIMEOUT`: how long one compiler run may take (whole seconds, from 1 to
    /// 86400, one day; default 1800, 30 minutes). Anything else is a
    /// configuration error naming the variable.
    pub fn compile_timeout(&self) -> Result<Duration, Error> {
        let Some(value) = self.get("LAUNCH_COMPILE_TIMEOUT") else { return Ok(DEFAULT_TIMEOUT) };
        timeout_from(&value.to_string_lossy())
    }

    /// `LAUNCH_ARCH`: the arches that replace the metadata's list, if set.
    ///
    /// # Errors
    /// A list [`parse_arch_list`] refuses, as a configuration error naming the variable.
    pub fn arches(&self) -> Result<Option<Vec<Arch>>, Error> {
        self.get_set("LAUNCH_ARCH").map(|v| arches_from(&v.to_string_lossy())).transpose()
    }

    /// `LAUNCH_PREBUILT`: whether the crate's prebuilt kernels are used (unset: `auto`).
    ///
    /// # Errors
    /// A value other than `auto`, `ignore` or `require`.
    pub fn prebuilt_mode(&self) -> Result<PrebuiltMode, Error> {
        self.get_set("LAUNCH_PREBUILT").map_or(Ok(PrebuiltMode::Auto), |v| prebuilt_mode_from(&v.to_string_lossy()))
    }

    /// The remote kernel cache: `LAUNCH_CACHE_REMOTE`, else `metadata` (the crate's
    /// `cache-remote` and where it is written), with `LAUNCH_CACHE_REMOTE_MODE` and
    /// `LAUNCH_CACHE_REMOTE_TIMEOUT`; `None` when neither names one. An `s3://` URL without
    /// `region=` takes `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`.
    ///
    /// # Errors
    /// A value its grammar refuses, as a configuration error naming the variable.
    pub fn cache_remote(
        &self,
        metadata: Option<(&crate::cache::RemoteUrl, String)>,
    ) -> Result<Option<crate::cache::RemoteConfig>, Error> {
        use crate::cache::{remote, RemoteConfig, RemoteUrl};
        // Untracked: where entries are shared changes no output, so it must not rerun the script.
        let (mut url, source) = match self.untracked_set("LAUNCH_CACHE_REMOTE") {
            Some(v) => (remote_url_from(&v.to_string_lossy())?, "LAUNCH_CACHE_REMOTE".to_string()),
            None => match metadata {
                Some((url, at)) => (url.clone(), at),
                None => return Ok(None),
            },
        };
        if let RemoteUrl::S3 { region: region @ None, .. } = &mut url {
            let from_env = self.untracked("AWS_REGION").or_else(|| self.untracked("AWS_DEFAULT_REGION"));
            *region = Some(from_env.map_or_else(|| "us-east-1".to_string(), |r| r.to_string_lossy().into_owned()));
        }
        let mode = match self.untracked_set("LAUNCH_CACHE_REMOTE_MODE") {
            Some(v) => remote_mode_from(&v.to_string_lossy())?,
            None => remote::Mode::ReadWrite,
        };
        let timeout = match self.untracked_set("LAUNCH_CACHE_REMOTE_TIMEOUT") {
            Some(v) => remote_timeout_from(&v.to_string_lossy())?,
            None => remote::DEFAULT_TIMEOUT,
        };
        Ok(Some(RemoteConfig { url, mode, timeout, source }))
    }

    /// `LAUNCH_CACHE_MAX_SIZE`: the kernel cache's size limit in bytes, `None` for no limit
    /// (`0`); default [`DEFAULT_MAX_SIZE`](crate::cache::limit::DEFAULT_MAX_SIZE).
    ///
    /// # Errors
    /// A value `parse_size` refuses, as a configuration error naming the variable.
    pub fn cache_max_size(&self) -> Result<Option<u64>, Error> {
        // Untracked: the limit changes no output, so its change must not rerun the build script.
        match self.untracked_set("LAUNCH_CACHE_MAX_SIZE") {
            None => Ok(Some(crate::cache::limit::DEFAULT_MAX_SIZE)),
            Some(v) => size_from("LAUNCH_CACHE_MAX_SIZE", &v.to_string_lossy()),
        }
    }

    /// Checks the value of every documented variable that has a grammar (switches, numbers,
    /// paths, arch lists; see `CHECKED` in the source), without announcing them to cargo: the
    /// first bad one is a configuration error naming the variable, the value and what it
    /// accepts. Run before anything else, so that a bad variable fails the same way (exit 2)
    /// whether `cargo launch` or the build script reads it, and whether or not this run reaches
    /// the code that uses it.
    ///
    /// # Errors
    /// The first variable whose value its grammar refuses.
    pub fn check(&self) -> Result<(), Error> {
        for (name, grammar) in CHECKED {
            if let Some(value) = self.untracked_set(name) {
                self.check_one(name, *grammar, &value)?;
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

    /// `name` on `PATH` (never announced to cargo, see [`Env::untracked`]).
    pub fn on_path(&self, name: &str) -> Option<PathBuf> {
        let path = self.untracked("PATH")?;
        let cwd = std::env::current_dir().unwrap_or_default();
        which::which_in(name, Some(path), cwd).ok()
    }

    /// [`Env::get`], but a variable set to nothing is `Some("")`: for the grammars that refuse it.
    fn get_set(&self, name: &str) -> Option<OsString> {
        let _announced = self.get(name);
        self.untracked_set(name)
    }

    /// [`Env::untracked`], but a variable set to nothing is `Some("")`.
    fn untracked_set(&self, name: &str) -> Option<OsString> {
        #[allow(clippy::disallowed_methods)]
        std::env::var_os(name)
    }

    /// A variable cargo sets for the build script (`OUT_DIR`, `CARGO_MANIFEST_DIR`, …) or `PATH`:
    /// reading it must not print a rerun line (cargo ignores those for its own variables).
    pub fn untracked(&self, name: &str) -> Option<OsString> {
        #[allow(clippy::disallowed_methods)]
        std::env::var_os(name).filter(|v| !v.is_empty())
    }
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
            "LAUNCH_PREBUILT",
            format!("`{}` is not one of {} (unset means auto)", text.escape_debug(), PrebuiltMode::VALUES.join(", ")),
        )
    })
}

/// `LAUNCH_ARCH`'s list ([`Grammar::Arches`]).
fn arches_from(text: &str) -> Result<Vec<Arch>, Error> {
    parse_arch_list(text).map_err(|message| bad("LAUNCH_ARCH", message))
}

/// `LAUNCH_CACHE_REMOTE`'s URL ([`Grammar::RemoteUrl`]).
fn remote_url_from(text: &str) -> Result<crate::cache::RemoteUrl, Error> {
    crate::cache::RemoteUrl::parse(text).map_err(|message| bad("LAUNCH_CACHE_REMOTE", message))
}

/// `LAUNCH_CACHE_REMOTE_MODE`'s word ([`Grammar::RemoteMode`]).
fn remote_mode_from(text: &str) -> Result<crate::cache::remote::Mode, Error> {
    use crate::cache::remote::Mode;
    Mode::parse(text).ok_or_else(|| {
        let values = Mode::VALUES.join(" or ");
        bad("LAUNCH_CACHE_REMOTE_MODE", format!("`{}` is not {values} (unset means rw)", text.escape_debug()))
    })
}

/// `LAUNCH_CACHE_REMOTE_TIMEOUT`'s seconds ([`Grammar::RemoteSeconds`]): the remote store's one
/// grammar (`launch::remote::parse_timeout`, which the tuner's variable uses too).
fn remote_timeout_from(text: &str) -> Result<Duration, Error> {
    launch::remote::parse_timeout(text).map_err(|message| bad("LAUNCH_CACHE_REMOTE_TIMEOUT", message))
}

/// `LAUNCH_COMPILE_TIMEOUT`'s value as a limit: whole seconds, from 1 to [`MAX_TIMEOUT_SECS`].
fn size_from(name: &str, text: &str) -> Result<Option<u64>, Error> {
    crate::cache::limit::parse_size(text).map_err(|message| bad(name, message))
}

fn timeout_from(text: &str) -> Result<Duration, Error> {
    let shown = text.escape_debug();
    let digits = text.trim();
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
        "LAUNCH_COMPILE_TIMEOUT",
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
mod tests {
    use super::*;

    #[test]
    fn the_compile_timeout_is_whole_seconds_of_at_least_one() {
        assert_eq!(timeout_from("2").unwrap(), Duration::from_secs(2));
        assert_eq!(timeout_from(" 1800 ").unwrap(), DEFAULT_TIMEOUT);
        for bad in ["0", "-1", "1.5", "ten", "99999999999999999999999"] {
            let message = timeout_from(bad).unwrap_err().to_string();
            assert!(message.contains("`LAUNCH_COMPILE_TIMEOUT`") && message.contains(&format!("`{bad}`")), "{message}");
        }
    }

    /// Every documented variable is either checked, with a grammar, or left to a named judge.
    #[test]
    fn every_documented_variable_is_checked_or_says_who_judges_it() {
        for EnvVar { name, .. } in DOCUMENTED {
            let checked = CHECKED.iter().filter(|(n, _)| n == name).count();
            let not = NOT_CHECKED.iter().filter(|(n, _)| n == name).count();
            assert_eq!(checked + not, 1, "{name}: in CHECKED {checked} times, in NOT_CHECKED {not} times");
        }
        for (name, _) in CHECKED.iter() {
            assert!(DOCUMENTED.iter().any(|v| v.name == *name), "{name} is checked but not documented");
        }
    }

    /// A bad value of each grammar, and values each accepts.
    fn samples(grammar: Grammar) -> (&'static [&'static str], &'static [&'static str]) {
        match grammar {
            Grammar::Switch => (&["maybe", "2", "enable", "y", "-1", "1 1"], &["1", "0", "TRUE", "no", "On", " off "]),
            Grammar::CargoBool => (&["maybe", "1", "yes"], &["true", "false", "TRUE"]),
            Grammar::Seconds => {
                (&["abc", "-1", "0", "1.5", "99999999999999999999999", "86401", "1e3", "+5"], &["1", " 1800 ", "86400"])
            }
            Grammar::Folder => (
                &["relative/cache", "./cache", "cache", "", " /tmp/x", "/etc/passwd", "/etc/passwd/below", "/dev/null"],
                &["/tmp/launch-cache", "/nonexistent/yet", "/tmp"],
            ),
            Grammar::Program => {
                (&["/", "/nonexistent/python3", "no-such-program-of-cargo-launch", ""], &["/bin/sh", "sh"])
            }
            Grammar::Arches => {
                (&["sm_9O", ",", "sm_90,,sm_80", "90", "", " ", ",,", "sm_90;sm_80"], &["sm_90", "sm_80, sm_90"])
            }
            Grammar::Prebuilt => {
                (&["1", "yes", "never", "ignore,require", "", " auto", "auto ", " "], &["auto", "ignore", "Require"])
            }
            Grammar::Size => (
                &["5X", "-1", "G", "many", "1.2.3G", "", "5 G", " 5G", "5G ", "99999999999T"],
                &["0", "500M", "5G", "1.5GiB", "1048576"],
            ),
            Grammar::RemoteUrl => (
                &[
                    "bucket/prefix",
                    "s3://",
                    "ftp://host/x",
                    "file://relative",
                    "s3://b/p?acl=public",
                    "webdav+http:///x",
                    "",
                    " s3://b/p",
                    "s3://b/p?endpoint=http://h:99999",
                    "s3://fle et/team",
                    "s3://b/p?endpoint=notaurl",
                    "s3://b/p?endpoint=ftp://h/x",
                    "webdav+http://h:99999/p",
                ],
                &[
                    "s3://bucket/prefix",
                    "s3://b?endpoint=http://127.0.0.1:9000&region=auto",
                    "webdav+https://h/p",
                    "file:///tmp/x",
                ],
            ),
            Grammar::RemoteMode => (&["write", "1", "r", "", " ro ", "ro ", "r o"], &["rw", "RO", "read-only"]),
            Grammar::RemoteSeconds => (&["abc", "0", "-1", "1.5", "86401", "+5"], &["1", " 10 ", "86400"]),
        }
    }

    /// Every checked variable × every bad value of its grammar: a configuration error from the
    /// environment naming the variable and the value; its good values pass.
    #[test]
    fn every_checked_variable_refuses_every_bad_value_and_names_itself() {
        let env = Env::cli();
        let mut cases = 0;
        for (name, grammar) in CHECKED {
            let (bad, good) = samples(*grammar);
            for value in bad {
                let e = env.check_one(name, *grammar, std::ffi::OsStr::new(value)).unwrap_err();
                assert_eq!(e.kind(), crate::error::ErrorKind::Config, "{name}={value}: {e}");
                let text = e.to_string();
                assert!(text.starts_with(&format!("environment: `{name}`: ")), "{name}={value}: {text}");
                let shown = launch::remote::redact(value.trim());
                assert!(text.contains(&shown), "{name}={value}: the message shows the value (redacted): {text}");
                cases += 1;
            }
            for value in good {
                env.check_one(name, *grammar, std::ffi::OsStr::new(value))
                    .unwrap_or_else(|e| panic!("{name}={value} is good: {e}"));
            }
        }
        assert!(cases >= 40, "{cases}");
    }

    /// Switches turn on and off only by their documented values.
    #[test]
    fn a_switch_is_on_off_or_refused() {
        for on in SWITCH_ON {
            assert!(switch("X", on).unwrap() && switch("X", &on.to_uppercase()).unwrap());
        }
        for off in SWITCH_OFF.iter().chain(&["", "  "]) {
            assert!(!switch("X", off).unwrap());
        }
        let text = switch("LAUNCH_NO_CACHE", "maybe").unwrap_err().to_string();
        assert_eq!(
            text,
            "environment: `LAUNCH_NO_CACHE`: `maybe` is not a switch: set 1, true, yes, on to turn it on, 0, false, no, \
             off (or leave it unset or empty) to leave it off"
        );
    }

    /// Each way a time limit is wrong says that way, and never contradicts itself (a huge number
    /// was "not a whole number of seconds, at least 1").
    #[test]
    fn a_bad_compile_timeout_says_what_is_wrong_with_it() {
        let said = |v: &str| timeout_from(v).unwrap_err().to_string();
        assert!(said("0").contains("must be at least 1 second"), "{}", said("0"));
        for huge in ["86401", "99999999999999999999999"] {
            let text = said(huge);
            assert!(text.contains("more than the largest limit, 86400") && !text.contains("not a whole"), "{text}");
        }
        for not_number in ["abc", "-1", "1.5", ""] {
            assert!(said(not_number).contains("is not a whole number of seconds"), "{}", said(not_number));
        }
        assert_eq!(timeout_from("86400").unwrap(), Duration::from_secs(MAX_TIMEOUT_SECS));
    }

    #[cfg(unix)]
    #[test]
    fn a_path_is_described_as_what_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(dir.path().join("gone"), &link).unwrap();
        assert_eq!(path_kind(&file), PathKind::File);
        assert_eq!(path_kind(dir.path()), PathKind::Folder);
        assert_eq!(path_kind(&dir.path().join("none")), PathKind::Missing);
        assert_eq!(path_kind(&link).describe(), format!("is a broken link to `{}`", dir.path().join("gone").display()));
        assert_eq!(path_kind(Path::new("/dev/null")).describe(), "is a device");
    }

    #[test]
    fn the_compile_timeout_is_documented() {
        assert!(DOCUMENTED.iter().any(|v| v.name == "LAUNCH_COMPILE_TIMEOUT" && v.effect.contains("1800")));
    }

    /// The `reruns` column is what the readers do: in a build script the typed readers of the
    /// variables documented as rerunning announce them to cargo, and the readers of those
    /// documented as not (the cache's limit, the remote store) announce nothing.
    #[test]
    fn the_reruns_column_is_what_the_readers_announce() {
        let reruns = |name: &str| DOCUMENTED.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("{name}")).reruns;
        let env = Env::build_script();
        let _ = env.cache_max_size();
        let _ = env.cache_remote(None);
        assert!(env.announced.borrow().is_empty(), "{:?}", env.announced.borrow());
        for name in
            ["LAUNCH_CACHE_MAX_SIZE", "LAUNCH_CACHE_REMOTE", "LAUNCH_CACHE_REMOTE_MODE", "LAUNCH_CACHE_REMOTE_TIMEOUT"]
        {
            assert!(!reruns(name), "{name} is read untracked: it does not rerun the build script");
        }
        let _ = env.compile_timeout();
        let _ = env.arches();
        let _ = env.prebuilt_mode();
        for name in ["LAUNCH_NO_SYSTEM_TOOLCHAIN", "LAUNCH_NO_CACHE", "LAUNCH_ALL_PTX", "LAUNCH_BUILD_DEBUG"] {
            let _ = env.flag(name);
        }
        let announced = env.announced.borrow().clone();
        assert_eq!(announced.len(), 7, "{announced:?}");
        for name in &announced {
            assert!(reruns(name), "{name} is announced to cargo: it reruns the build script");
        }
        // The run-time and `cargo launch`-only variables are never read by a build script.
        for v in DOCUMENTED {
            if v.effect.starts_with("at run time") || ["LAUNCH_NO_AUTO_SETUP", "CARGO_NET_OFFLINE"].contains(&v.name) {
                assert!(!v.reruns, "{}", v.name);
            }
        }
    }

    /// Every documented variable says what it accepts.
    #[test]
    fn every_documented_variable_says_what_it_accepts() {
        for v in DOCUMENTED {
            let accepted = accepted_values(v.name).unwrap_or_else(|| panic!("{}", v.name));
            assert!(!accepted.is_empty(), "{}", v.name);
        }
        assert_eq!(accepted_values("NOT_A_LAUNCH_VARIABLE"), None);
        assert!(accepted_values("LAUNCH_NO_CACHE").unwrap().contains("`1`, `true`, `yes`, `on`"));
    }
}

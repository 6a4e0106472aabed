//! Every read of the environment, in one place.
//!
//! In a build script each read also prints `cargo:rerun-if-env-changed=NAME`, so cargo reruns the
//! script when a variable that can change the output changes. `PATH` is never announced: it changes
//! between shells and IDEs and would rerun the script on every build (cc-rs#1215).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::time::Duration;

use crate::cargo_directives;
use crate::error::Error;
use crate::process::DEFAULT_TIMEOUT;

/// Every variable cargo-launch reads, with what it does; `cargo launch --help` prints this table.
pub const DOCUMENTED: &[(&str, &str)] = &[
    ("LAUNCH_TOOLCHAIN", "explicit toolchain root of the crate's CUDA major: a pip --target folder holding nvidia/cuda_nvrtc and nvidia/cuda_nvcc (12.x) or nvidia/cu13 (13.x), or a CUDA toolkit root; skips discovery"),
    ("LAUNCH_CACHE_DIR", "cargo-launch's cache (default $XDG_CACHE_HOME/cargo-launch, else ~/.cache/cargo-launch); `cargo launch setup [--toolchain 13.0]` installs each toolchain under toolchain/ there, side by side"),
    ("LAUNCH_NO_SYSTEM_TOOLCHAIN", "set to 1: look only at LAUNCH_TOOLCHAIN and the cache, never at Python site-packages, CUDA_HOME, /usr/local/cuda or PATH"),
    ("LAUNCH_PYTHON", "Python interpreter used to find site-packages and by `cargo launch setup` (default python3)"),
    ("LAUNCH_ARCH", "comma-separated arches that replace the metadata's list (set by `cargo launch check --arch`)"),
    ("LAUNCH_NO_CACHE", "set to 1: neither read nor write the per-kernel compile cache under the cache dir's kernels/"),
    ("LAUNCH_ALL_PTX", "set to 1: also write every arch's PTX to OUT_DIR/launch/ptx-all/ (not embedded; `cargo launch explore` builds so, in a target folder of its own)"),
    ("LAUNCH_BUILD_DEBUG", "set to 1: the build script prints every command it runs as a cargo warning"),
    ("LAUNCH_COMPILE_TIMEOUT", "seconds one compiler run (NVRTC or ptxas, per file and arch) may take before it is stopped and the build fails (default 1800)"),
    ("LAUNCH_NVDISASM", "nvdisasm for `cargo launch report --spills` / `check --spills` (default: beside the toolchain's ptxas, then the cache's CUDA 13 toolchains, then PATH)"),
    ("CUDA_HOME / CUDA_PATH", "CUDA toolkit root, searched after the pip wheels"),
    ("VIRTUAL_ENV", "an active Python virtual environment, searched for the pip wheels"),
    ("DOCS_RS", "set by docs.rs: kernels are not compiled; the generated module has every kernel with no cubins"),
    ("LAUNCH_NO_AUTO_SETUP", "set to 1: `cargo launch report`/`check` never install the toolchain by themselves"),
    ("CARGO_NET_OFFLINE", "true: `cargo launch` never downloads (the build script never does)"),
    ("LAUNCH_TUNE", "at run time, whether a program's tuner may time kernel variants: off (never time, never read the tune cache), cached (default: use a remembered winner, time on a miss) or always (time every run and overwrite)"),
    ("LAUNCH_TUNE_CACHE_DIR", "at run time, the tune cache's folder (default $XDG_CACHE_HOME/cargo-launch/tune, else ~/.cache/cargo-launch/tune)"),
];

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

    /// A variable that is on when set to anything but empty, `0`, `false` or `no`.
    pub fn flag(&self, name: &str) -> bool {
        self.get(name)
            .map(|v| !matches!(v.to_string_lossy().to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off"))
            .unwrap_or(false)
    }

    /// `CARGO_NET_OFFLINE=true`: nothing may be downloaded.
    pub fn offline(&self) -> bool {
        self.get("CARGO_NET_OFFLINE").is_some_and(|v| v.to_string_lossy().trim().eq_ignore_ascii_case("true"))
    }

    /// `LAUNCH_COMPILE_TIMEOUT`: how long one compiler run may take (whole seconds, at least 1;
    /// default `DEFAULT_TIMEOUT`, 30 minutes). Anything else is a configuration error naming the variable.
    pub fn compile_timeout(&self) -> Result<Duration, Error> {
        let Some(value) = self.get("LAUNCH_COMPILE_TIMEOUT") else { return Ok(DEFAULT_TIMEOUT) };
        timeout_from(&value.to_string_lossy())
    }

    /// A variable cargo sets for the build script (`OUT_DIR`, `CARGO_MANIFEST_DIR`, …) or `PATH`:
    /// reading it must not print a rerun line (cargo ignores those for its own variables).
    pub fn untracked(&self, name: &str) -> Option<OsString> {
        #[allow(clippy::disallowed_methods)]
        std::env::var_os(name).filter(|v| !v.is_empty())
    }
}

/// `LAUNCH_COMPILE_TIMEOUT`'s value as a limit: whole seconds, at least 1.
fn timeout_from(text: &str) -> Result<Duration, Error> {
    match text.trim().parse::<u64>() {
        Ok(secs) if secs >= 1 => Ok(Duration::from_secs(secs)),
        _ => Err(Error::Config {
            location: crate::error::Location::Environment,
            key: "LAUNCH_COMPILE_TIMEOUT".into(),
            message: format!(
                "`{text}` is not a time limit: expected a whole number of seconds, at least 1 (the default is {})",
                DEFAULT_TIMEOUT.as_secs()
            ),
        }),
    }
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

    #[test]
    fn the_compile_timeout_is_documented() {
        assert!(DOCUMENTED.iter().any(|(name, what)| *name == "LAUNCH_COMPILE_TIMEOUT" && what.contains("1800")));
    }
}

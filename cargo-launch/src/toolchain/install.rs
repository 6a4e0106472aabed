//! Installing a pinned toolchain: NVIDIA's wheels, hashes pinned
//! (`launch_engine::tooling::toolchain::pin`), installed with `python3 -m pip install --target` into
//! the per-user cache, each pinned CUDA line in a folder of its own (`toolchain/cuda-12.9.86`,
//! `toolchain/cuda-13.0.88`), side by side.
//!
//! The install goes to a temporary folder next to the final one and is renamed into place only
//! once it is complete and its ptxas answers, so an interrupted install is never used. A lock file
//! serialises concurrent setups (two test processes, two terminals).
//!
//! An install an earlier cargo-launch made without CCCL does not count as installed (see
//! `toolchain::probe`): setup, and the auto-setup of `report`/`check`, reinstall it.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use launch_engine::tooling::toolchain::{self, Origin, Pin, Toolchain};
use launch_engine::tooling::Env;
use launch_engine::tooling::Tool;

use crate::error::Error;

/// Marker written last into a complete install.
const COMPLETE: &str = ".complete";

/// Installs `pin` unless it is already there (or, with `force`, again); returns it. Both
/// `cargo launch setup` and the auto-setup before a build call it.
pub fn install(force: bool, pin: &Pin) -> Result<Toolchain, Error> {
    let env = Env::cli();
    // Where the install would go is checked before any download: a cache folder that cannot be
    // created or written (LAUNCH_CACHE_DIR set to a file, `/proc/x`) is a usage error, not a
    // failed install.
    if let Some(dir) = toolchain::pin_dir(&env, pin) {
        if force || !dir.join(COMPLETE).is_file() {
            let what =
                format!("cannot install the toolchain into {} (the cache: LAUNCH_CACHE_DIR, else HOME)", dir.display());
            crate::destination::new_folder(&dir, &what)?;
        }
    }
    install_in(&env, force, pin).map_err(Error::NoToolchain)
}

fn install_in(env: &Env, force: bool, pin: &Pin) -> anyhow::Result<Toolchain> {
    let version = pin.version;
    let dir = toolchain::pin_dir(env, pin).context("cannot place the cache: set LAUNCH_CACHE_DIR or HOME")?;
    let parent = dir.parent().expect("pinned_dir has a parent").to_path_buf();
    if !force {
        if let Some(t) = installed(&dir, pin) {
            eprintln!("toolchain: {} (already installed)", t.describe());
            return Ok(t);
        }
        if dir.join(COMPLETE).is_file() {
            eprintln!("toolchain in {} {}: installing it again", dir.display(), why_unusable(&dir, pin));
        }
    }
    if env.offline()? {
        let state = if dir.join(COMPLETE).is_file() { "must be installed again" } else { "is not installed" };
        bail!("the toolchain in {} {state} and CARGO_NET_OFFLINE=true forbids downloading it", dir.display());
    }
    // Held to the end of the install.
    let _lock = setup_lock(&parent)?;
    // Another process may have finished the install while we waited.
    if !force {
        if let Some(t) = installed(&dir, pin) {
            eprintln!("toolchain: {} (installed by another process)", t.describe());
            return Ok(t);
        }
    }

    let tmp = parent.join(format!(".cuda-{version}.partial-{}", std::process::id()));
    remove_dir(&tmp)?;
    let req = parent.join(format!("requirements-{version}.txt"));
    fs::write(&req, pin.requirements()).with_context(|| format!("failed to write `{}`", req.display()))?;
    let python = toolchain::python(env);
    let what = pin.wheels.iter().map(|w| w.package).collect::<Vec<_>>().join(", ");
    eprintln!(
        "installing NVIDIA's CUDA {version} wheels ({what}: {} MB, hashes pinned) into {}",
        pin.download_bytes().div_ceil(1_000_000),
        dir.display()
    );
    pip_install(&python, &tmp, &req).map_err(|e| {
        let _ = remove_dir(&tmp);
        let _ = fs::remove_file(&req);
        anyhow::Error::new(e).context(
            "pip could not install the toolchain (needs Python 3 with pip and access to the package index; \
                 set LAUNCH_PYTHON to use another interpreter)",
        )
    })?;

    // Check that what was installed runs before publishing it.
    let _ = fs::remove_file(&req);
    let t = toolchain::at(&tmp, Origin::Cache, pin).map_err(|e| {
        let _ = remove_dir(&tmp);
        anyhow::Error::new(e).context("the installed toolchain does not work")
    })?;
    if t.ptxas_version != version {
        let _ = remove_dir(&tmp);
        bail!("installed ptxas reports version {} instead of {version}", t.ptxas_version);
    }
    fs::write(tmp.join(COMPLETE), version).context("failed to mark the install complete")?;
    remove_dir(&dir)?;
    fs::rename(&tmp, &dir).with_context(|| format!("failed to move {} to {}", tmp.display(), dir.display()))?;
    let t = installed(&dir, pin).context("the toolchain vanished after installing it")?;
    eprintln!("toolchain: {}", t.describe());
    Ok(t)
}

/// The toolchain of `pin` in `dir`, if a complete install is there: every pinned wheel at its
/// version (pip's `<name>-<version>.dist-info`), so a pin that gained or changed a wheel (nvdisasm)
/// reinstalls.
/// The lock of `cargo launch setup` runs installing into `parent` (created if need be), held until
/// the returned file is dropped; says so when it has to wait for another.
pub(super) fn setup_lock(parent: &Path) -> anyhow::Result<File> {
    fs::create_dir_all(parent).with_context(|| format!("failed to create `{}`", parent.display()))?;
    let lock_path = parent.join(".setup.lock");
    let lock = File::create(&lock_path).with_context(|| format!("failed to create `{}`", lock_path.display()))?;
    if lock.try_lock().is_err() {
        eprintln!("waiting for another `cargo launch setup` to finish (lock: {})", lock_path.display());
        lock.lock().with_context(|| format!("failed to lock `{}`", lock_path.display()))?;
    }
    Ok(lock)
}

/// `pip install` of the hash-pinned requirements file `req` into the folder `target`, binary wheels
/// only, nothing else resolved, pip's progress shown.
pub(super) fn pip_install(python: &Path, target: &Path, req: &Path) -> Result<(), launch_engine::Error> {
    Tool::new(python)
        .args(["-m", "pip", "install", "--no-deps", "--require-hashes", "--only-binary=:all:", "--no-compile"])
        .args(["--disable-pip-version-check", "--no-warn-script-location", "--progress-bar", "on"])
        .arg("--target")
        .arg(target)
        .arg("-r")
        .arg(req)
        .inherit_output()
        // 137 MB (12.9) to 199 MB (13.0): the compile limit would fail a download slower than
        // 110 KB/s; two hours still ends a pip that hangs.
        .timeout(std::time::Duration::from_secs(2 * 60 * 60))
        .run()
        .map(drop)
}

/// Why the install in `dir` (setup's marker is there) is not [`installed`]: the pinned wheels it
/// lacks (an earlier cargo-launch installed other versions), else what is wrong with its files.
fn why_unusable(dir: &Path, pin: &Pin) -> String {
    let lacking: Vec<String> = pin
        .wheels
        .iter()
        .filter(|w| !dir.join(format!("{}-{}.dist-info", w.package.replace('-', "_"), w.version)).is_dir())
        .map(|w| format!("{} {}", w.package, w.version))
        .collect();
    if !lacking.is_empty() {
        return format!("lacks the pinned wheels {} (an earlier cargo-launch installed it)", lacking.join(", "));
    }
    match toolchain::at(dir, Origin::Cache, pin) {
        Ok(_) => "is incomplete".to_string(),
        Err(e) => format!("is damaged ({})", crate::toolchain::found_at(&e.to_string())),
    }
}

fn installed(dir: &Path, pin: &Pin) -> Option<Toolchain> {
    if !dir.join(COMPLETE).is_file() {
        return None;
    }
    let has = |w: &launch_engine::tooling::toolchain::pin::Wheel| {
        dir.join(format!("{}-{}.dist-info", w.package.replace('-', "_"), w.version)).is_dir()
    };
    if !pin.wheels.iter().all(has) {
        return None;
    }
    toolchain::at(dir, Origin::Cache, pin).ok()
}

fn remove_dir(p: &PathBuf) -> anyhow::Result<()> {
    match fs::remove_dir_all(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("failed to remove `{}`", p.display())),
    }
}

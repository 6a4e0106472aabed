//! Installing a CUDA library's headers beside a pinned toolchain (`cargo launch setup --with
//! curand`): its wheel, hash pinned (`pin::Library`), `pip install --target` into a folder of
//! its own (`toolchain/cuda-13.0.88-curand`), which the build then searches by itself
//! (`Toolchain::libraries`). Like the toolchain's install: into a temporary folder renamed into
//! place once complete, under the same lock.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context};
use launch_engine::tooling::toolchain::{self, pin::Library, Pin};
use launch_engine::tooling::Env;

use crate::error::Error;

/// Marker written last into a complete install (as the toolchain's).
const COMPLETE: &str = ".complete";

/// Installs `library`'s headers for `pin` unless they are there (or, with `force`, again).
pub fn install_library(force: bool, pin: &Pin, library: &Library) -> Result<(), Error> {
    let env = Env::cli();
    if let Some(dir) = toolchain::library_dir(&env, pin, library) {
        if force || !toolchain::library_installed(&dir, library) {
            let what = format!(
                "cannot install {} into {} (the cache: LAUNCH_CACHE_DIR, else HOME)",
                library.name,
                dir.display()
            );
            crate::destination::new_folder(&dir, &what)?;
        }
    }
    install_in(&env, force, pin, library).map_err(Error::NoToolchain)
}

fn install_in(env: &Env, force: bool, pin: &Pin, library: &Library) -> anyhow::Result<()> {
    let wheel = &library.wheel;
    let dir =
        toolchain::library_dir(env, pin, library).context("cannot place the cache: set LAUNCH_CACHE_DIR or HOME")?;
    let done = |how: &str| {
        eprintln!(
            "{}: {} {} for CUDA {} ({how}; the build searches {})",
            library.name,
            wheel.package,
            wheel.version,
            pin.name,
            toolchain::library_include(&dir, library).display()
        );
    };
    if !force && toolchain::library_installed(&dir, library) {
        done("already installed");
        return Ok(());
    }
    if env.offline()? {
        bail!(
            "{} is not installed in {} and CARGO_NET_OFFLINE=true forbids downloading it",
            wheel.package,
            dir.display()
        );
    }
    let parent = dir.parent().expect("library_dir has a parent").to_path_buf();
    // Held to the end of the install.
    let _lock = super::install::setup_lock(&parent)?;
    if !force && toolchain::library_installed(&dir, library) {
        done("installed by another process");
        return Ok(());
    }
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = parent.join(format!(".{name}.partial-{}", std::process::id()));
    remove_dir(&tmp)?;
    let req = parent.join(format!("requirements-{name}.txt"));
    fs::write(&req, wheel.requirement()).with_context(|| format!("failed to write `{}`", req.display()))?;
    eprintln!(
        "installing {}'s headers for CUDA {} ({} {}: {} MB, hash pinned) into {}",
        library.name,
        pin.name,
        wheel.package,
        wheel.version,
        wheel.bytes().div_ceil(1_000_000),
        dir.display()
    );
    let ran = super::install::pip_install(&toolchain::python(env), &tmp, &req);
    let _ = fs::remove_file(&req);
    if let Err(e) = ran {
        let _ = remove_dir(&tmp);
        return Err(anyhow::Error::new(e).context(format!(
            "pip could not install {} (needs Python 3 with pip and access to the package index; set LAUNCH_PYTHON \
             to use another interpreter)",
            wheel.package
        )));
    }
    // Only the headers are used: the shared libraries are dropped (most of the wheel's size).
    let _ = remove_dir(&tmp.join("nvidia").join(wheel.folder).join("lib"));
    fs::write(tmp.join(COMPLETE), wheel.version).context("failed to mark the install complete")?;
    if !toolchain::library_installed(&tmp, library) {
        let _ = remove_dir(&tmp);
        bail!("{} installed no {}", wheel.package, toolchain::library_include(Path::new(""), library).display());
    }
    remove_dir(&dir)?;
    fs::rename(&tmp, &dir).with_context(|| format!("failed to move {} to {}", tmp.display(), dir.display()))?;
    done("installed");
    Ok(())
}

fn remove_dir(p: &Path) -> anyhow::Result<()> {
    match fs::remove_dir_all(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("failed to remove `{}`", p.display())),
    }
}

//! The CUDA toolchain as the commands need it: found or installed before a build, and the arches
//! it can target.

use launch::Arch;
use launch_build::tooling::Env;

use crate::error::Error;
use crate::setup;

/// Installs the pinned toolchain first when none is found, unless told not to. An explicit
/// `LAUNCH_TOOLCHAIN` is never second-guessed: when it holds no working toolchain that is the
/// error (exit 3), with nothing downloaded, since the build would use it and not the install.
pub fn ensure_toolchain(no_setup: bool) -> Result<(), Error> {
    let env = Env::cli();
    match launch_build::tooling::toolchain::discover(&env) {
        Ok(_) => Ok(()),
        Err(e) if env.get("LAUNCH_TOOLCHAIN").is_some() => {
            let why = match &e {
                launch_build::Error::ToolchainNotFound { searched } => {
                    searched.iter().map(|s| s.outcome.as_str()).collect::<Vec<_>>().join("; ")
                }
                other => other.to_string(),
            };
            let root = env.get("LAUNCH_TOOLCHAIN").unwrap_or_default();
            Err(Error::NoToolchain(anyhow::anyhow!(
                "no CUDA toolchain in LAUNCH_TOOLCHAIN={}: {why}\nfix: point LAUNCH_TOOLCHAIN at a folder holding \
                     nvidia/cuda_nvrtc and nvidia/cuda_nvcc (a pip --target folder) or at a CUDA toolkit, or unset it; \
                     while it is set nothing else is searched and nothing is installed",
                std::path::Path::new(&root).display()
            )))
        }
        Err(e @ launch_build::Error::ToolchainNotFound { .. }) => {
            let offline = env.offline();
            if no_setup || env.flag("LAUNCH_NO_AUTO_SETUP") || offline {
                return Err(Error::NoToolchain(anyhow::Error::from(e)));
            }
            eprintln!("no CUDA toolchain found: installing the pinned one (`cargo launch setup`; --no-setup or LAUNCH_NO_AUTO_SETUP=1 to refuse)");
            setup::run(false).map(|_| ())
        }
        Err(e) => Err(Error::NoToolchain(anyhow::Error::from(e))),
    }
}

/// An arch the toolchain cannot compile for is a usage error before anything is built (`check`
/// reports it as a finding instead and checks the rest).
pub fn refuse_untargetable(arches: &[Arch]) -> Result<(), Error> {
    if arches.is_empty() {
        return Ok(());
    }
    let supported = supported_arches()?;
    let bad: Vec<String> = arches
        .iter()
        .filter(|a| !supported.is_empty() && !supported.contains(&a.sm()))
        .map(|a| a.to_string())
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(anyhow::anyhow!(
        "the toolchain cannot target {}; it supports: {}",
        bad.join(", "),
        supported.iter().map(|c| format!("sm_{c}")).collect::<Vec<_>>().join(", ")
    )))
}

/// The compute capabilities ([`Arch::sm`]: `90` for sm_90) the toolchain's NVRTC can target.
pub fn supported_arches() -> Result<Vec<u32>, Error> {
    let tc = launch_build::tooling::toolchain::discover(&Env::cli())
        .map_err(|e| Error::NoToolchain(anyhow::Error::from(e)))?;
    let nvrtc =
        launch_build::tooling::Nvrtc::load(&tc.nvrtc).map_err(|e| Error::NoToolchain(anyhow::Error::from(e)))?;
    Ok(nvrtc.supported_archs().into_iter().map(|c| c as u32).collect())
}

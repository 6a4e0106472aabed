//! The CUDA toolchain the commands need: found (or installed) before anything is built, and the
//! arches it can target.

use launch_build::env::Env;

use crate::error::Error;
use crate::setup;

/// Installs the pinned toolchain first when none is found, unless told not to. An explicit
/// `LAUNCH_TOOLCHAIN` is never second-guessed: when it holds no working toolchain that is the
/// error (exit 3), with nothing downloaded, since the build would use it and not the install.
pub fn ensure_toolchain(no_setup: bool) -> Result<(), Error> {
    let env = Env::cli();
    match launch_build::toolchain::discover(&env) {
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
                return Err(Error::NoToolchain(e.into()));
            }
            eprintln!("no CUDA toolchain found: installing the pinned one (`cargo launch setup`; --no-setup or LAUNCH_NO_AUTO_SETUP=1 to refuse)");
            setup::run(false).map(|_| ())
        }
        Err(e) => Err(Error::NoToolchain(e.into())),
    }
}

/// The compute capabilities (`90` for sm_90) the toolchain's NVRTC can target.
pub fn supported_arches() -> Result<Vec<u32>, Error> {
    let tc = launch_build::toolchain::discover(&Env::cli()).map_err(|e| Error::NoToolchain(e.into()))?;
    let nvrtc = launch_build::nvrtc::Nvrtc::load(&tc.nvrtc).map_err(|e| Error::NoToolchain(e.into()))?;
    Ok(nvrtc.supported_archs().into_iter().map(|c| c as u32).collect())
}

//! The CUDA toolchains as the commands need them: each selected package's (`toolchain` in its
//! `[package.metadata.launch]`, default 12.9) found or installed before a build, and the arches
//! they can target. Installing is a service here (`install`), which `cargo launch setup` and the
//! auto-setup before a build both call.

mod install;
mod library;

use launch::Arch;
use launch_engine::tooling::toolchain::{self, pin, Pin};
use launch_engine::tooling::{var, Env};

use crate::cargo::Selection;
use crate::error::Error;

pub use install::install;
pub use library::install_library;

/// The toolchains the selected packages build with, each found or, when missing, installed first
/// unless told not to. An explicit `LAUNCH_TOOLCHAIN` is never second-guessed: when it holds no
/// working toolchain of the major a package asks for that is the error (exit 3), with nothing
/// downloaded, since the build would use it and not the install.
pub fn ensure(no_setup: bool, selection: &Selection) -> Result<Vec<Pin>, Error> {
    let pins = selection.toolchains();
    for p in &pins {
        ensure_pin(no_setup, p)?;
    }
    Ok(pins)
}

/// Each of `pins` found or, when missing, installed first unless told not to (`cargo launch diff
/// --toolchain` needs both of its toolchains, whatever the packages name).
pub fn ensure_pins(no_setup: bool, pins: &[Pin]) -> Result<(), Error> {
    pins.iter().try_for_each(|p| ensure_pin(no_setup, p))
}

/// [`ensure`], unless every selected package ships prebuilt kernels that match its sources and
/// hold `arches` (`Selection::prebuilt_covers`): then the build needs no toolchain and nothing is
/// looked for or installed. `needs_toolchain`: the command compiles besides the build
/// (`--spills`), so the toolchain is ensured either way.
pub fn ensure_unless_prebuilt(
    no_setup: bool,
    needs_toolchain: bool,
    selection: &Selection,
    arches: &[Arch],
) -> Result<Vec<Pin>, Error> {
    if !needs_toolchain && selection.prebuilt_covers(arches) {
        return Ok(selection.toolchains());
    }
    // Without a toolchain, a stale prebuilt folder is the cause to tell, as the build tells it.
    ensure(no_setup, selection).map_err(|e| selection.explain_no_toolchain(e))
}

/// The compute capabilities the pinned toolchains `pins` all target (`Pin::targets`, measured),
/// for a build that needs no toolchain.
pub fn pinned_targets(pins: &[Pin]) -> Vec<u32> {
    let mut all: Vec<u32> = pins.first().map(|p| p.targets.to_vec()).unwrap_or_default();
    all.retain(|c| pins.iter().all(|p| p.targets.contains(c)));
    all
}

fn ensure_pin(no_setup: bool, pin: &Pin) -> Result<(), Error> {
    let env = Env::cli();
    match toolchain::discover_for(&env, pin) {
        Ok(_) => Ok(()),
        Err(e) if env.get(var::LAUNCH_TOOLCHAIN).is_some() => {
            let why = match &e {
                launch_engine::Error::ToolchainNotFound { searched, .. } => {
                    searched.iter().map(|s| s.outcome.as_str()).collect::<Vec<_>>().join("; ")
                }
                other => other.to_string(),
            };
            let root = env.get(var::LAUNCH_TOOLCHAIN).unwrap_or_default();
            let major = pin.major;
            let wheels = if major <= 12 {
                "nvidia/cuda_nvrtc and nvidia/cuda_nvcc".to_string()
            } else {
                format!("nvidia/cu{major}")
            };
            Err(Error::NoToolchain(anyhow::anyhow!(
                "no CUDA toolchain in LAUNCH_TOOLCHAIN={}: {why}\nfix: point LAUNCH_TOOLCHAIN at a folder holding \
                     {wheels} (a pip --target folder) or at a CUDA {major} toolkit, or unset it and run \
                     `cargo launch setup`; while it is set nothing else is searched and nothing is installed",
                std::path::Path::new(&root).display()
            )))
        }
        Err(e @ launch_engine::Error::ToolchainNotFound { .. }) => {
            let offline = env.offline()?;
            if no_setup || env.flag(var::LAUNCH_NO_AUTO_SETUP)? || offline {
                return Err(Error::NoToolchain(anyhow::Error::from(e)));
            }
            let flag = if *pin == pin::DEFAULT { String::new() } else { format!(" --toolchain {}", pin.name) };
            eprintln!("no CUDA {} toolchain found: installing the pinned one (`cargo launch setup{flag}`; --no-setup or LAUNCH_NO_AUTO_SETUP=1 to refuse)", pin.name);
            install(false, pin).map(|_| ())
        }
        Err(e) => Err(Error::NoToolchain(anyhow::Error::from(e))),
    }
}

/// An arch a toolchain cannot compile for is a usage error before anything is built (`check`
/// reports it as a finding instead and checks the rest).
pub fn refuse_untargetable(arches: &[Arch], pins: &[Pin]) -> Result<(), Error> {
    if arches.is_empty() {
        return Ok(());
    }
    for p in pins {
        let supported = supported_arches(std::slice::from_ref(p))?;
        let bad: Vec<String> = arches
            .iter()
            .filter(|a| !supported.is_empty() && !supported.contains(&a.sm()))
            .map(|a| a.to_string())
            .collect();
        if !bad.is_empty() {
            let which = if *p == pin::DEFAULT { String::new() } else { format!(" (toolchain = \"{}\")", p.name) };
            return Err(Error::Usage(anyhow::anyhow!(
                "the toolchain cannot target {}; it supports: {}{which}",
                bad.join(", "),
                supported.iter().map(|c| format!("sm_{c}")).collect::<Vec<_>>().join(", ")
            )));
        }
    }
    Ok(())
}

/// The compute capabilities ([`Arch::sm`]: `90` for sm_90) every one of `pins`' NVRTC can target.
pub fn supported_arches(pins: &[Pin]) -> Result<Vec<u32>, Error> {
    let mut all: Option<Vec<u32>> = None;
    for p in pins {
        let tc = toolchain::discover_for(&Env::cli(), p).map_err(|e| Error::NoToolchain(anyhow::Error::from(e)))?;
        let nvrtc =
            launch_engine::tooling::Nvrtc::load(&tc.nvrtc).map_err(|e| Error::NoToolchain(anyhow::Error::from(e)))?;
        let these: Vec<u32> = nvrtc.supported_archs().into_iter().map(|c| c as u32).collect();
        all = Some(match all {
            None => these,
            Some(before) => before.into_iter().filter(|c| these.contains(c)).collect(),
        });
    }
    Ok(all.unwrap_or_default())
}

/// What a "no CUDA toolchain found" error says of the places it searched, on one line (the
/// headline and the fix left out): why an install that is there cannot be used.
pub(crate) fn found_at(error: &str) -> String {
    let places: Vec<&str> = error
        .lines()
        .skip(1)
        .map(|l| l.trim().trim_start_matches("- "))
        .filter(|l| !l.is_empty() && !l.starts_with("fix:"))
        .collect();
    if places.is_empty() {
        error.lines().next().unwrap_or_default().to_string()
    } else {
        places.join("; ")
    }
}

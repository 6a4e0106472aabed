//! `cargo launch setup [--toolchain 13.0] [--with curand]`: installs each pinned toolchain asked
//! for (the default one without `--toolchain`) into the per-user cache, side by side, through the
//! toolchain service (`crate::toolchain::install`, which the auto-setup before a build uses too),
//! and beside each the headers of the CUDA libraries `--with` names.

use launch_engine::tooling::toolchain::pin;

use crate::cli::SetupArgs;
use crate::error::Error;
use crate::toolchain;

/// Runs `cargo launch setup`: each `--toolchain` given, else the default one, then its libraries.
pub(crate) fn run(args: &SetupArgs) -> Result<(), Error> {
    let pins = if args.toolchains.is_empty() { vec![pin::DEFAULT] } else { args.toolchains.clone() };
    // Every library named must exist for every line asked for, before anything is downloaded.
    for p in &pins {
        for name in &args.with {
            if p.library(name).is_none() {
                let has: Vec<&str> = p.libraries.iter().map(|l| l.name).collect();
                return Err(Error::Usage(anyhow::anyhow!(
                    "toolchain {} has no pinned `{name}`; --with takes: {}",
                    p.name,
                    has.join(", ")
                )));
            }
        }
    }
    for p in &pins {
        toolchain::install(args.force, p)?;
        for name in &args.with {
            let library = p.library(name).expect("checked above");
            toolchain::install_library(args.force, p, &library)?;
        }
    }
    Ok(())
}

//! `cargo launch setup [--toolchain 13.0]`: installs each pinned toolchain asked for (the default
//! one without `--toolchain`) into the per-user cache, side by side, through the toolchain
//! service (`crate::toolchain::install`, which the auto-setup before a build uses too).

use launch_build::tooling::toolchain::pin;

use crate::cli::SetupArgs;
use crate::error::Error;
use crate::toolchain;

/// Runs `cargo launch setup`: each `--toolchain` given, else the default one.
pub(crate) fn run(args: &SetupArgs) -> Result<(), Error> {
    let pins = if args.toolchains.is_empty() { vec![pin::DEFAULT] } else { args.toolchains.clone() };
    for p in &pins {
        toolchain::install(args.force, p)?;
    }
    Ok(())
}

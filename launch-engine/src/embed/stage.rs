//! Stage `embed`: the cubins, PTX, generated module, manifest and statistics written under
//! `OUT_DIR/launch` (only what changed), then the build's warnings printed.

use std::path::Path;
use std::time::Instant;

use crate::assemble::Assembled;
use crate::compile::stats;
use crate::compile::Compiled;
use crate::env::{var, Env};
use crate::error::Error;
use crate::plan::Plan;
use crate::warnings::Warnings;
use crate::{assemble, cargo_directives, embed};
use launch_schema::manifest::Manifest;

/// Writes the outputs of a successful build and prints its warnings. Returns the manifest.
///
/// # Errors
/// A file that cannot be written.
pub fn run(
    env: &Env,
    launch_dir: &Path,
    assembled: Assembled,
    compiled: &Compiled,
    warnings: &Warnings,
    started: Instant,
) -> Result<Manifest, Error> {
    let Assembled { mut manifest, tuned } = assembled;
    manifest.warnings = warnings.for_manifest();
    embed::write(launch_dir, &manifest, &compiled.files, &tuned.files, env.flag(var::LAUNCH_ALL_PTX)?)?;
    let mut stats = stats::with_variants(compiled.stats.clone(), tuned.jobs, tuned.compiled, tuned.ptxas_ms);
    stats.script_ms = (started.elapsed().as_secs_f64() * 1e6).round() / 1e3;
    stats::write(launch_dir, &stats)?;
    if env.is_build_script() {
        for w in warnings.to_print() {
            cargo_directives::warning(&w);
        }
    }
    Ok(manifest)
}

/// docs.rs: no network, no toolchain. Every kernel found in the sources gets a static without
/// cubins, so the crate's documentation builds.
///
/// # Errors
/// A kernel file that cannot be read or is not text; a file that cannot be written.
pub fn uncompiled(plan: &Plan, launch_dir: &Path) -> Result<Manifest, Error> {
    let mut texts = Vec::new();
    for f in &plan.files {
        let bytes = crate::input::read_kernel(&f.source.file, &f.source.path, &f.source.kernel_rel)?;
        texts.push(crate::source::decode(&f.source.file, bytes).map_err(|e| Error::Kernels(vec![e]))?);
    }
    let manifest = assemble::uncompiled(plan, &texts);
    embed::write_uncompiled(launch_dir, &manifest)?;
    Ok(manifest)
}

//! Stage `assemble`: the manifest from the compiled outputs (kernels, contracts, resources, each
//! kernel's settings from the plan), the tune grids' variants from the PTX just built, and the
//! warnings about kernels the build did not embed.

use std::collections::HashSet;
use std::path::Path;

use crate::compile::Compiled;
use crate::env::Env;
use crate::error::Error;
use crate::plan::Plan;
use crate::variants;
use crate::warnings::Warnings;
use crate::{assemble, names, source};
use launch_schema::manifest::{Manifest, Toolchain, ToolchainInfo};

/// What the stage produced.
pub struct Assembled {
    /// The manifest (its warnings are filled in by `embed`).
    pub manifest: Manifest,
    /// The tune variants' files and statistics.
    pub tuned: variants::build::Built,
}

/// Assembles the manifest and the variants of `compiled`.
///
/// # Errors
/// See `assemble::manifest` and `variants::build::build`.
pub fn run(
    env: &Env,
    plan: &Plan,
    compiled: &Compiled,
    launch_dir: &Path,
    warnings: &mut Warnings,
) -> Result<Assembled, Error> {
    let c = &compiled.compiler;
    let info = ToolchainInfo {
        compilers: Toolchain { nvrtc: c.toolchain.nvrtc_version.clone(), ptxas: c.toolchain.ptxas_version.clone() },
        description: c.toolchain.describe(),
    };
    let mut manifest = assemble::manifest(plan, info, &compiled.files, warnings)?;
    // The tune grids' variants, from the PTX just built (no NVRTC run of their own).
    let tuned = variants::build::build(env, c, &plan.config, launch_dir, &compiled.files, &mut manifest)?;
    for note in &tuned.notes {
        warnings.crate_warning(note.clone());
    }
    not_embedded(compiled, &manifest, warnings);
    Ok(Assembled { manifest, tuned })
}

/// A file whose PTX has no entry on any arch builds nothing launchable, and a kernel written in
/// the source but absent from every PTX (an `#if __CUDA_ARCH__` the listed arches do not meet) is
/// not embedded: both are said. Decided from the compiled result: macros and headers define most
/// kernels of real folders, so the source alone cannot tell a file without kernels.
fn not_embedded(compiled: &Compiled, manifest: &Manifest, warnings: &mut Warnings) {
    for f in compiled.files.iter().filter(|f| !f.outputs.is_empty()) {
        let file = f.name();
        let built: HashSet<String> =
            manifest.kernels.iter().filter(|k| k.file == file).map(|k| names::source_name(&k.name)).collect();
        let absent: Vec<String> = (f.definitions.iter())
            .filter(|d| !built.contains(&d.name) && !source::in_directive(f.text, d.start))
            .map(|d| format!("`{}` (line {})", d.name, d.line))
            .collect();
        let arches: Vec<String> = f.outputs.iter().map(|(a, _)| a.to_string()).collect();
        if !absent.is_empty() {
            let one = absent.len() == 1;
            warnings.crate_warning(format!(
                "{file}: {} in no PTX of {}: an `#if` (such as `#if __CUDA_ARCH__ >= ...`) leaves {} out on every listed arch, or nothing instantiates a template; so {} not embedded",
                absent.join(", "),
                arches.join(", "),
                if one { "it" } else { "them" },
                if one { "it is" } else { "they are" }
            ));
        } else if built.is_empty() && !f.file.host {
            warnings.crate_warning(format!(
                "{file}: no kernel (__global__ function) in this file: it is compiled, but nothing in it can be launched"
            ));
        }
    }
}

//! Stage `link`: the `host` files compiled, host code and all, into the crate's static library
//! (build scripts only: `cc` reads cargo's variables), and recorded in the manifest.

use super::compile::Compiled;
use crate::env::Env;
use crate::error::Error;
use crate::host;
use crate::manifest::Manifest;
use crate::plan::{Plan, PlannedFile};

/// Links the host files of `plan`, once every kernel compiled; nothing without any.
///
/// # Errors
/// No static CUDA runtime, or nvcc failing on a file (see `host::link`).
pub fn run(env: &Env, plan: &Plan, compiled: &Compiled, manifest: &mut Manifest) -> Result<(), Error> {
    let (Some(tools), Some(first)) = (&compiled.host_tools, plan.config.host.first()) else { return Ok(()) };
    let files: Vec<&PlannedFile> = plan.host_files().collect();
    let library = match env.is_build_script() {
        true => Some(host::link(&compiled.compiler, tools, first, &files, &plan.config.package)?),
        false => None,
    };
    manifest.host = host::record(tools, &files, library.as_deref());
    Ok(())
}

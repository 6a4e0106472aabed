//! Stage `link`: nvcc's device link of the `host` files compiled with `-rdc=true` ([`device`],
//! before the records are made: it decides their cubins and numbers), then the `host` files'
//! objects (compiled with the other jobs, see `host::nvcc`) archived into the crate's static
//! library (build scripts only: `cc` reads cargo's variables), and recorded in the manifest.

pub mod device;
pub mod library;

use crate::compile::{host, Compiled};
use crate::env::Env;
use crate::error::Error;
use crate::plan::{Plan, PlannedFile};
use launch_schema::manifest::Manifest;

/// Links the host files of `plan`, once every kernel compiled; nothing without any. Adds the
/// archiver's time to the build statistics.
///
/// # Errors
/// No static CUDA runtime, or the archiver failing (see [`library::link`]).
pub fn run(env: &Env, plan: &Plan, compiled: &mut Compiled, manifest: &mut Manifest) -> Result<(), Error> {
    let (Some(tools), Some(first)) = (&compiled.host_tools, plan.config.host.first()) else { return Ok(()) };
    let files: Vec<&PlannedFile> = plan.host_files().collect();
    let library = match env.is_build_script() {
        true => {
            let (name, took) =
                library::link(&compiled.compiler, tools, first, &compiled.objects, &plan.config.package)?;
            compiled.stats.host_link_ms = (took.as_secs_f64() * 1e6).round() / 1e3;
            Some(name)
        }
        false => None,
    };
    manifest.host = host::record(tools, &files, library.as_deref());
    Ok(())
}

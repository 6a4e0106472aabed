//! The `host` files' static library: their objects (each from one nvcc compile, fresh or from the
//! kernel cache, see [`crate::compile::host`]) archived by the `cc` crate into
//! `lib<launch_host_package>.a` under `OUT_DIR`, and cargo told to link it with the static CUDA
//! runtime. Build scripts only (`cc` reads cargo's variables). Nothing is compiled here.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cargo_directives;
use crate::compile::host::{missing_tool, HostObject, Tools};
use crate::compile::{sanitize, Compiler};
use crate::config::HostPattern;
use crate::error::Error;
use crate::out;

/// Archives `objects` into the crate's static library and tells cargo to link it and the static
/// CUDA runtime. Returns the library's name and how long it took.
///
/// # Errors
/// No static CUDA runtime beside nvcc (located at `first`, the first `host` entry); an object
/// that cannot be written; the archiver failing.
pub fn link(
    compiler: &Compiler,
    tools: &Tools,
    first: &HostPattern,
    objects: &[HostObject],
    package: &str,
) -> Result<(String, std::time::Duration), Error> {
    let started = Instant::now();
    let Some(cudart_dir) = &tools.cudart_dir else {
        return Err(missing_tool(
            first,
            format!(
                "`host` files link the static CUDA runtime, and there is no libcudart_static.a beside {} (looked in lib, lib64 and targets/<cpu>-linux/lib); `cargo launch setup --toolchain 13.0` installs it",
                tools.nvcc.display()
            ),
        ));
    };
    // The objects as files for the archiver, each rewritten only when its bytes changed.
    let dir = compiler.work_dir().join("host-objects");
    std::fs::create_dir_all(&dir).map_err(Error::io("create folder", &dir))?;
    let mut paths: Vec<PathBuf> = Vec::new();
    for o in objects {
        let path = dir.join(format!("{}.o", sanitize(&o.file)));
        out::write_if_changed(&path, &o.object)?;
        paths.push(path);
    }
    let name = format!("launch_host_{}", package.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
    let mut lib = archiver(tools);
    lib.objects(&paths);
    lib.try_compile(&name).map_err(|e| Error::Compile {
        compiler: "the archiver (through cc)".to_string(),
        file: objects.first().map(|o| o.file.clone()).unwrap_or_default(),
        arch: String::new(),
        log: e.to_string(),
    })?;
    // The CUDA runtime the launchers call, linked statically: the binary needs the driver only.
    cargo_directives::rustc_link_search(cudart_dir);
    cargo_directives::rustc_link_lib("static=cudart_static");
    for l in ["dl", "rt", "pthread"] {
        cargo_directives::rustc_link_lib(l);
    }
    let took = started.elapsed();
    if compiler.debug() {
        cargo_directives::launch_build_warning(&format!(
            "archived {} host object(s) into lib{name}.a in {} ms",
            objects.len(),
            took.as_millis()
        ));
    }
    Ok((name, took))
}

/// The `cc` build that archives the objects with nvcc's host-side tools; it also prints the
/// library's link lines (cargo metadata on), which [`print_link_lines`] prints again.
pub fn archiver(tools: &Tools) -> cc::Build {
    let mut lib = cc::Build::new();
    lib.cuda(true).compiler(&tools.nvcc).cudart("none").no_default_flags(true).warnings(false).cargo_warnings(false);
    lib
}

/// The lines [`link`]'s archiving printed, for a rerun that keeps the library `library` (its
/// path, `OUT_DIR/lib<name>.a`): `cc`'s own (the library, the C++ runtime, the archiver's
/// variables), printed by `cc` as it decides them. Ours go through [`crate::cargo_directives`],
/// which replays them.
///
/// # Errors
/// `cc` cannot say how to link it (a target it does not know).
pub fn print_link_lines(archiver: &cc::Build, library: &Path) -> Result<(), Error> {
    let failed = |e: cc::Error| Error::Compile {
        compiler: "the archiver (through cc)".to_string(),
        file: library.display().to_string(),
        arch: String::new(),
        log: e.to_string(),
    };
    archiver.try_get_archiver().map_err(failed)?;
    cc::try_emit_link_directives(archiver, library).map_err(failed)
}

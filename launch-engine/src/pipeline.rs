//! The build, stage by stage: the orchestration and nothing else. Each stage is a folder of its
//! own with a typed input and output:
//!
//! 0. **prebuilt** ([`crate::prebuilt`]): the crate's prebuilt kernels embedded when they match
//!    the sources (nothing below runs then);
//! 1. **plan** ([`crate::plan`]): the configuration applied to the kernel folder, once;
//! 2. **prepare** ([`crate::prepare`]): each file read and its `@launch` contracts applied;
//! 3. **compile** ([`crate::compile`]): every file × arch job through the kernel cache;
//! 4. **assemble** ([`crate::assemble`]): the manifest, the tune variants, the warnings about
//!    kernels;
//! 5. **link** ([`crate::link`]): the `host` files' objects archived into the crate's static
//!    library;
//! 6. **embed** ([`crate::embed`]): everything written under `OUT_DIR/launch`, the warnings
//!    printed.
//!
//! Nothing under `OUT_DIR/launch` is written before the last stage, so a failure leaves the
//! previous outputs intact.

#[cfg(test)]
mod tests;

pub use crate::prebuilt::stage::explain_no_toolchain;

use std::path::Path;
use std::time::Instant;

use crate::cargo_directives;
use crate::config::Config;
use crate::env::{var, Env};
use crate::error::Error;
use crate::fresh;
use crate::plan::Plan;
use crate::prebuilt::stage as prebuilt;
use crate::prepare;
use crate::source;
use crate::warnings::Warnings;
use crate::{assemble, compile, embed, link};
use launch_schema::manifest::Manifest;

/// The build of the crate at `manifest_dir`, its outputs in `launch_dir`.
pub fn build_crate(env: &Env, manifest_dir: &Path, launch_dir: &Path) -> Result<Manifest, Error> {
    let started = Instant::now();
    let manifest_path = manifest_dir.join("Cargo.toml");
    cargo_directives::rerun_if_changed(&manifest_path);
    // Every documented variable's value first: a bad one fails the same way wherever it is read.
    env.check()?;
    let mut config = Config::load(&manifest_path)?;
    // `cargo launch check --arch ...` builds for arches the crate may not list.
    if let Some(arches) = env.arches()? {
        config.arches = arches;
    }
    if let Some(pin) = toolchain_pin(env, &config)? {
        config.toolchain = pin;
    }
    let consts = config.ptx_consts.clone();
    let manifest = build_with(env, config, launch_dir, started)?;
    // Every way to the outputs (compiled, kept, prebuilt, docs.rs) ends here, so each writes it.
    if let (Some((name, place)), true, Some(out_dir)) = (consts, env.is_build_script(), launch_dir.parent()) {
        embed::consts::write(out_dir, &name, &place, &manifest)?;
    }
    Ok(manifest)
}

/// `LAUNCH_TOOLCHAIN_PIN`: the pinned toolchain that replaces the crate's `toolchain` key
/// (`cargo launch diff --toolchain` builds each side with another pin than the crate names), if
/// set; a name that is no pin, or a pin that cannot target one of the crate's arches, is a
/// configuration error naming the variable.
fn toolchain_pin(env: &Env, config: &Config) -> Result<Option<crate::toolchain::Pin>, Error> {
    use crate::toolchain::pin;
    let Some(value) = env.get(var::LAUNCH_TOOLCHAIN_PIN) else { return Ok(None) };
    let text = value.to_string_lossy();
    let bad = |message: String| Error::Config {
        location: crate::error::Location::Environment,
        key: "LAUNCH_TOOLCHAIN_PIN".into(),
        message,
    };
    let pin = pin::Pin::named(&text).ok_or_else(|| {
        bad(format!("`{}` is not a pinned toolchain; valid choices: {}", text.escape_debug(), pin::names()))
    })?;
    match config.arches.iter().find(|a| !pin.can_target(**a)) {
        Some(arch) => Err(bad(format!(
            "toolchain \"{}\" cannot target {arch}, which the crate builds for; set LAUNCH_ARCH to the arches it can \
             target",
            pin.name
        ))),
        None => Ok(Some(pin)),
    }
}

/// The file under `OUT_DIR/launch/work/` where a build script remembers its headers' directives
/// and digests for the next one (`source::known`).
const HEADERS_MEMO: &str = "headers.tsv";

/// The pipeline for an already loaded configuration, writing into `launch_dir`.
fn build_with(env: &Env, config: Config, launch_dir: &Path, started: Instant) -> Result<Manifest, Error> {
    let plan = Plan::resolve(config)?;
    if env.is_build_script() {
        // Before the first header is read: what earlier builds learnt of them.
        source::remember_headers_in(&launch_dir.join("work").join(HEADERS_MEMO));
        announce_inputs(&plan);
    }
    // Before any toolchain is looked for: a crate that ships its kernels needs none.
    let stale = match prebuilt::run(env, &plan, launch_dir)? {
        prebuilt::Decision::Embedded(manifest) => return Ok(*manifest),
        prebuilt::Decision::Compile { stale } => stale,
    };
    if env.get(var::DOCS_RS).is_some() {
        return embed::uncompiled(&plan, launch_dir);
    }
    plan.check_host_patterns()?;
    let mut warnings = Warnings::default();
    for w in &plan.warnings {
        warnings.crate_warning(w.clone());
    }
    if let Some(why) = plan.nothing_to_build() {
        warnings.crate_warning(why);
    }
    if !stale.is_empty() {
        warnings.crate_warning(prebuilt::stale_warning(&stale));
    }
    // Contracts are checked before anything is compiled; every error of every file at once.
    let prepared = prepare::all(&plan)?;
    let folder = crate::prebuilt::folder(plan.config.root());
    // Once every key is known: the previous outputs kept when nothing changed.
    let gate = fresh::Gate::new(env, &plan, &stale, launch_dir, started);
    let decide = |compiler: &compile::Compiler, host: Option<&compile::host::Tools>, keys: &[crate::cache::Key]| {
        let inputs = gate.inputs(compiler, host, keys);
        match gate.kept(inputs.as_deref()) {
            Some(kept) => compile::Decision::Keep(kept.linked_by(host.map(link::library::archiver))),
            None => compile::Decision::Build(inputs),
        }
    };
    let step = compile::run(env, &plan, &prepared, launch_dir, decide)
        .map_err(|e| prebuilt::without_toolchain(e, &folder, &stale))?;
    // Every header has been read by now (the keys).
    source::save_headers();
    let mut compiled = match step {
        compile::Step::Done(compiled) => compiled,
        compile::Step::Kept(kept) => return fresh::replay(kept),
    };
    compiled.stats.prebuilt_stale = stale;
    // Before the records are made: the device link decides the `-rdc=true` files' cubins and numbers.
    link::device::run(&mut compiled)?;
    let mut assembled = assemble::run(env, &plan, &compiled, launch_dir, &mut warnings)?;
    link::run(env, &plan, &mut compiled, &mut assembled.manifest)?;
    let inputs = compiled.inputs.clone();
    let manifest = embed::run(env, launch_dir, assembled, &compiled, &warnings, started)?;
    // Last: the record a rerun keeps these outputs by names them as they now are.
    let library = manifest.host.iter().find_map(|h| h.library.as_deref());
    fresh::record(launch_dir, inputs.as_deref(), library, warnings.to_print_cached())?;
    Ok(manifest)
}

/// `rerun-if-changed` for every input that exists: the kernel folder, each kernel file, each
/// header it includes from the crate. (A path that does not exist would rerun the script forever.)
fn announce_inputs(plan: &Plan) {
    let config = &plan.config;
    let root = config.root();
    cargo_directives::rerun_if_changed(&root.join(&config.kernel_dir));
    let include_dirs = config.include_path();
    let mut deps = std::collections::BTreeSet::new();
    for f in &plan.files {
        cargo_directives::rerun_if_changed(&f.source.path);
        // A header that is not a file is an error of the compile stage; here it is left out.
        deps.extend(source::dependencies(&f.source.path, &include_dirs, root).unwrap_or_default());
    }
    for d in deps {
        cargo_directives::rerun_if_changed(&d);
    }
}

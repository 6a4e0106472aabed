//! `cargo launch doctor`: is this machine set up to build and run the kernels? Each pinned
//! toolchain (found or not, its files against the wheels' RECORD hashes, NVRTC with its builtins,
//! ptxas, nvdisasm, CCCL), the documented environment variables that are set, the cache folder,
//! the GPU driver when one loads, and the crate's configuration when run in one. Every problem
//! with its fix; exit 0 when healthy, 3 when a toolchain problem blocks builds, 1 for the others.
//! The JSON form is `launch_schema::doctor`.

mod driver_check;
mod host_check;
mod record;
mod toolchains;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use launch::compat::CudaVersion;
use launch_engine::compat as driver_rules;
use launch_engine::tooling::cache::{format_size, usage};
use launch_engine::tooling::toolchain::{cache_dir, pin};
use launch_engine::tooling::{Env, DOCUMENTED};
use launch_schema::doctor::{CacheState, CrateState, Document, DriverState, Problem, Variable};

use crate::cli::{DoctorArgs, Format};
use crate::error::Error;

/// Runs `cargo launch doctor`.
pub(crate) fn run(args: &DoctorArgs) -> Result<(), Error> {
    let env = Env::cli();
    let mut problems = Vec::new();
    let (krate, config) = crate_state(args.manifest_path.as_deref(), &mut problems);
    let needed = config.as_ref().map_or(pin::DEFAULT, |c| c.toolchain);
    let mut out = crate::stdout::stdout();
    // In text, each toolchain is printed (and flushed) as soon as it is checked: whatever a
    // later check meets, what was checked before it is on the screen.
    let mut toolchains = Vec::new();
    for p in &pin::PINS {
        let state = toolchains::check(&env, p, p.name == needed.name, &mut problems);
        if args.format == Format::Text {
            toolchain_text(&mut out, &state).and_then(|()| out.flush()).context("writing the diagnosis")?;
        }
        toolchains.push(state);
    }
    if let Some(c) = &config {
        host_check::problems(&env, c, &mut problems);
    }
    let cache = cache_state(&env, &mut problems);
    let driver = launch_engine::tooling::driver::version().and_then(|d| {
        let v = CudaVersion::from_driver(d.version)?;
        let toolkit = driver_rules::release_version(needed.version).unwrap_or(v);
        problems.extend(driver_check::problems(v, config.as_ref().and_then(|c| c.min_driver), toolkit));
        Some(DriverState { version: v.to_string(), library: d.library.to_string() })
    });
    // Blocking first, each group in the order found; no problem shows a password.
    problems.sort_by_key(|p| !p.blocking);
    for p in &mut problems {
        p.what = launch::remote::redact(&p.what);
        p.fix = launch::remote::redact(&p.fix);
    }
    let doc = Document {
        schema: launch_schema::doctor::VERSION,
        healthy: problems.is_empty(),
        blocking: problems.iter().any(|p| p.blocking),
        toolchains,
        environment: variables(&env),
        cache,
        driver,
        krate,
        problems,
    };
    match args.format {
        Format::Text => text(&mut out, &doc),
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from).and_then(|()| writeln!(out))
        }
    }
    .context("writing the diagnosis")?;
    if doc.blocking {
        return Err(Error::NoToolchain(anyhow::anyhow!("a toolchain problem blocks builds (the fix is above)")));
    }
    if !doc.healthy {
        return Err(Error::CheckFailed);
    }
    Ok(())
}

/// The crate at `manifest_path`, else in the current folder, when its Cargo.toml has a
/// `[package.metadata.launch]` table (a workspace root or another crate is not one).
fn crate_state(
    manifest_path: Option<&Path>,
    problems: &mut Vec<Problem>,
) -> (Option<CrateState>, Option<launch_engine::Config>) {
    let path = manifest_path.map_or_else(|| PathBuf::from("Cargo.toml"), Path::to_path_buf);
    let Ok(text) = std::fs::read_to_string(&path) else {
        if manifest_path.is_some() {
            let what = format!("{}: cannot be read", path.display());
            problems.push(Problem { blocking: false, what, fix: "pass the path of a crate's Cargo.toml".into() });
        }
        return (None, None);
    };
    if manifest_path.is_none() && !text.contains("[package.metadata.launch") {
        return (None, None);
    }
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    let mut state = CrateState {
        manifest_path: path.clone(),
        package: None,
        toolchain: None,
        min_driver: None,
        config_loads: false,
    };
    match launch_engine::Config::load(&path) {
        Ok(c) => {
            state.package = Some(c.package.clone());
            state.toolchain = Some(c.toolchain.name.to_string());
            state.min_driver = c.min_driver.map(|v| v.to_string());
            state.config_loads = true;
            (Some(state), Some(c))
        }
        Err(e) => {
            let what = format!("[package.metadata.launch] does not load: {e}");
            problems.push(Problem { blocking: false, what, fix: "fix the key the message names".into() });
            (Some(state), None)
        }
    }
}

/// The documented variables that are set, with what they change and, for a path, whether it is
/// there.
fn variables(env: &Env) -> Vec<Variable> {
    DOCUMENTED
        .iter()
        // Each name of its own: `CUDA_HOME` and `CUDA_PATH` are two places, either may be set.
        .flat_map(|v| env.each(v).into_iter().map(|(name, value)| (name, v.effect, value)))
        .filter_map(|(name, meaning, value)| {
            let value = value?.to_string_lossy().into_owned();
            let shown = launch::remote::redact(&value);
            let points_at = (value.starts_with('/') || value.starts_with('.') || value.starts_with('~')).then(|| {
                let p = Path::new(&value);
                if p.is_dir() {
                    "folder"
                } else if p.exists() {
                    "file"
                } else {
                    "missing"
                }
                .to_string()
            });
            Some(Variable { name: name.to_string(), value: shown, meaning: meaning.to_string(), points_at })
        })
        .collect()
}

/// The kernel cache (`<cache>/kernels`): its entries and bytes (`cargo launch cache`'s count), and
/// whether a file can be written there (by writing and removing one; permissions alone do not
/// say, for root).
fn cache_state(env: &Env, problems: &mut Vec<Problem>) -> CacheState {
    let Some(root) = cache_dir(env) else {
        let what = "no cache folder: none of LAUNCH_CACHE_DIR, XDG_CACHE_HOME and HOME is set".to_string();
        problems.push(Problem { blocking: false, what, fix: "set LAUNCH_CACHE_DIR".into() });
        return CacheState { path: None, writable: false, entries: 0, bytes: 0 };
    };
    let kernels = root.join("kernels");
    let u = usage(&kernels);
    let probe = kernels.join(format!(".doctor-{}", std::process::id()));
    let written = std::fs::create_dir_all(&kernels).and_then(|()| std::fs::write(&probe, b"x"));
    let _ = std::fs::remove_file(&probe);
    if let Err(e) = &written {
        let what =
            format!("the kernel cache {} is not writable ({e}): every build compiles everything", kernels.display());
        let fix = format!("make {} a writable folder, or set LAUNCH_CACHE_DIR to one", kernels.display());
        problems.push(Problem { blocking: false, what, fix });
    }
    CacheState { path: Some(root), writable: written.is_ok(), entries: u.entries, bytes: u.bytes }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "NO"
    }
}

/// One toolchain's lines of the text form.
fn toolchain_text(out: &mut impl Write, t: &launch_schema::doctor::ToolchainState) -> std::io::Result<()> {
    let at = t.path.as_ref().map_or("no cache folder".to_string(), |p| p.display().to_string());
    if !t.installed {
        return match t.damaged.first() {
            Some(why) => writeln!(out, "toolchain {} ({}): damaged ({at}): {why}", t.name, t.version),
            None => writeln!(out, "toolchain {} ({}): not installed ({at})", t.name, t.version),
        };
    }
    // An install there that discovery cannot use has no origin: it is damaged.
    writeln!(out, "toolchain {} ({}): {at} ({})", t.name, t.version, t.origin.as_deref().unwrap_or("damaged"))?;
    writeln!(out, "  files     {} checked against the wheels' RECORD, {} differ", t.files_checked, t.damaged.len())?;
    let v = |o: &Option<String>| o.clone().unwrap_or_else(|| "NO".into());
    match &t.nvrtc {
        Some(n) => writeln!(out, "  nvrtc     {n} (loads with its builtins and compiles)")?,
        None => writeln!(out, "  nvrtc     NO")?,
    }
    writeln!(out, "  ptxas     {}", v(&t.ptxas))?;
    writeln!(out, "  nvdisasm  {}", v(&t.nvdisasm))?;
    writeln!(out, "  cccl      {}", yes(t.cccl))
}

/// The text form after the toolchains, which [`toolchain_text`] printed as they were checked.
fn text(out: &mut impl Write, doc: &Document) -> std::io::Result<()> {
    for var in &doc.environment {
        let at = var.points_at.as_deref().map(|p| format!(" ({p})")).unwrap_or_default();
        writeln!(out, "env {}={}{at}", var.name, var.value)?;
    }
    let c = &doc.cache;
    let at = c.path.as_ref().map_or("none".to_string(), |p| p.display().to_string());
    writeln!(out, "cache {at}: writable {}, {} entries ({})", yes(c.writable), c.entries, format_size(c.bytes))?;
    match &doc.driver {
        Some(d) => writeln!(out, "driver CUDA {} ({})", d.version, d.library)?,
        None => writeln!(out, "driver none loads (no GPU driver on this machine; builds need none)")?,
    }
    if let Some(k) = &doc.krate {
        let name = k.package.as_deref().unwrap_or("?");
        let min = k.min_driver.as_deref().map(|m| format!(", min-driver {m}")).unwrap_or_default();
        let tc = k.toolchain.as_deref().map(|t| format!(", toolchain {t}")).unwrap_or_default();
        writeln!(out, "crate {name} ({}): config loads {}{tc}{min}", k.manifest_path.display(), yes(k.config_loads))?;
    }
    if doc.problems.is_empty() {
        return writeln!(out, "healthy: no problem found");
    }
    writeln!(out, "{} problem(s):", doc.problems.len())?;
    for p in &doc.problems {
        let kind = if p.blocking { "blocks builds" } else { "problem" };
        writeln!(out, "  {kind}: {}\n    fix: {}", p.what, p.fix)?;
    }
    Ok(())
}

//! Each pinned toolchain as discovery finds it: its files against the wheels' RECORDs, NVRTC and
//! its builtins (a real compile), ptxas, nvdisasm and CCCL.

use std::path::Path;

use launch_engine::tooling::lineinfo::nvdisasm;
use launch_engine::tooling::toolchain::{discover_for, pin_dir, Origin, Pin, Toolchain};
use launch_engine::tooling::{var, Env, Nvrtc};
use launch_schema::doctor::{Problem, ToolchainState};

use super::record;

/// An install in `dir` that discovery cannot use (`error`): what its RECORDs say, into `state`,
/// and the problem and its fix.
fn damaged(state: &mut ToolchainState, dir: &Path, pin: &Pin, error: &str, setup: &str) -> (String, String) {
    let checked = record::verify(dir);
    let shown: Vec<&str> = checked.damaged.iter().take(3).map(String::as_str).collect();
    let differ = if checked.damaged.is_empty() {
        String::new()
    } else {
        format!(
            "; {} of {} files differ from the pinned wheels: {}",
            checked.damaged.len(),
            checked.files,
            shown.join("; ")
        )
    };
    let why = crate::toolchain::found_at(error);
    let what = format!("CUDA {} toolchain at {} is damaged: {why}{differ}", pin.name, dir.display());
    state.installed = true;
    state.files_checked = checked.files;
    state.damaged = checked.damaged;
    (what, format!("remove {} and run `{setup}`", dir.display()))
}

/// A needed toolchain that discovery did not find: the error's list of places searched, on one
/// line, and the fix.
fn not_found(env: &Env, pin: &Pin, e: &launch_engine::Error, setup: &str) -> (String, String) {
    let text = e.to_string();
    let places: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.trim().trim_start_matches("- "))
        .filter(|l| !l.is_empty() && !l.starts_with("fix:"))
        .collect();
    let fix = if env.get(var::LAUNCH_TOOLCHAIN).is_some() {
        format!("point LAUNCH_TOOLCHAIN at a CUDA {}.x toolchain, or unset it and run `{setup}`", pin.major)
    } else {
        format!("run `{setup}`")
    };
    (format!("no CUDA {} toolchain: searched {}", pin.name, places.join("; ")), fix)
}

/// The state of `pin`'s toolchain, and its problems: blocking ones when `needed` (the crate's
/// toolchain, or the default outside a crate); a pin nobody asked for that is absent is no problem.
pub(crate) fn check(env: &Env, pin: &Pin, needed: bool, problems: &mut Vec<Problem>) -> ToolchainState {
    let mut state = ToolchainState {
        name: pin.name.to_string(),
        version: pin.version.to_string(),
        path: pin_dir(env, pin),
        origin: None,
        installed: false,
        files_checked: 0,
        damaged: Vec::new(),
        nvrtc: None,
        ptxas: None,
        nvdisasm: None,
        cccl: false,
    };
    let mut problem = |blocking: bool, what: String, fix: String| problems.push(Problem { blocking, what, fix });
    let setup = format!("cargo launch setup --toolchain {}", pin.name);
    let t = match discover_for(env, pin) {
        Ok(t) => t,
        // A damaged file, named by discovery before anything loaded or ran it: the toolchain is
        // there but not usable, and nothing of it is loaded here either.
        Err(launch_engine::Error::ToolchainNotFound { searched, .. })
            if searched.iter().any(|s| s.outcome.contains(" is damaged (")) =>
        {
            let s = searched.iter().find(|s| s.outcome.contains(" is damaged (")).expect("found above");
            state.path = s.path.clone();
            state.damaged = vec![s.outcome.clone()];
            let what = format!("CUDA {} toolchain ({}): {}", pin.name, s.source, s.outcome);
            let fix = if env.get(var::LAUNCH_TOOLCHAIN).is_some() {
                format!(
                    "point LAUNCH_TOOLCHAIN at an intact CUDA {}.x toolchain, or unset it and run `{setup}`",
                    pin.major
                )
            } else {
                format!("run `{setup}`, which installs it again")
            };
            problem(needed, what, fix);
            return state;
        }
        Err(e) => {
            // An install is there (setup's marker), but unusable: damaged, never "not installed".
            if let Some(dir) = state.path.clone().filter(|d| d.join(".complete").is_file()) {
                let (what, fix) = damaged(&mut state, &dir, pin, &e.to_string(), &setup);
                problem(needed, what, fix);
                return state;
            }
            if needed {
                let (what, fix) = not_found(env, pin, &e, &setup);
                problem(true, what, fix);
            }
            return state;
        }
    };
    state.installed = true;
    state.path = Some(t.root.clone());
    state.origin = Some(origin(t.origin).to_string());
    state.ptxas = Some(t.ptxas_version.clone());
    let reinstall = format!("remove {} and run `{setup}`", t.root.display());
    let checked = record::verify(&t.root);
    state.files_checked = checked.files;
    if !checked.damaged.is_empty() {
        let shown: Vec<&str> = checked.damaged.iter().take(3).map(String::as_str).collect();
        let more = checked.damaged.len().saturating_sub(3);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        let what = format!(
            "CUDA {} toolchain at {}: {} of {} files differ from the pinned wheels: {}{more}",
            pin.name,
            t.root.display(),
            checked.damaged.len(),
            checked.files,
            shown.join("; ")
        );
        problem(needed, what, reinstall.clone());
        state.damaged = checked.damaged;
    }
    match nvrtc(&t) {
        Ok(v) => state.nvrtc = Some(v),
        Err(why) => {
            problem(needed, format!("CUDA {} NVRTC ({}): {why}", pin.name, t.nvrtc.display()), reinstall.clone())
        }
    }
    // As `report --spills` finds it (beside ptxas, the nvdisasm wheel's folder, NVDISASM, PATH).
    match nvdisasm::locate(env, &t, std::time::Duration::from_secs(30)) {
        Ok(found) => state.nvdisasm = Some(found.version),
        Err(e) => {
            let what = format!(
                "CUDA {}: `report --spills` has no nvdisasm: {}",
                pin.name,
                e.to_string().lines().next().unwrap_or_default()
            );
            problem(false, what, reinstall.clone());
        }
    }
    state.cccl = t.cccl_include.is_some() || t.include.as_ref().is_some_and(|i| i.join("cuda/std").is_dir());
    if !state.cccl {
        let what = format!("CUDA {}: CCCL headers (cuda/std, cub) missing: kernels that include them fail", pin.name);
        problem(false, what, reinstall);
    }
    state
}

fn origin(o: Origin) -> &'static str {
    match o {
        Origin::Override => "LAUNCH_TOOLCHAIN",
        Origin::Cache => "cargo-launch cache",
        Origin::SitePackages => "Python site-packages",
        Origin::Toolkit => "CUDA toolkit",
    }
}

/// NVRTC's version once it has loaded with its builtins and compiled an empty kernel; why not.
fn nvrtc(t: &Toolchain) -> Result<String, String> {
    let dir = t.nvrtc.parent().unwrap_or(Path::new("."));
    let builtins = std::fs::read_dir(dir)
        .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with("libnvrtc-builtins.so")))
        .unwrap_or(false);
    if !builtins {
        return Err(format!("its builtins library (libnvrtc-builtins.so.*) is missing from {}", dir.display()));
    }
    let n = Nvrtc::load(&t.nvrtc).map_err(|e| e.to_string())?;
    let (major, minor) = n.version();
    match n.compile_ptx("extern \"C\" __global__ void doctor() {}\n", "doctor.cu", &[], &[]) {
        Ok(_) => Ok(format!("{major}.{minor}")),
        Err(f) => Err(format!("loads but does not compile: {}", f.log.trim())),
    }
}

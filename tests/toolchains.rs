//! Issue 14 item 1: `toolchain = "13.0"` builds and reports the template with CUDA 13's pinned
//! wheels, side by side with 12.9; the arches a toolchain cannot target and a toolchain of the
//! wrong major are refused before anything is built.

use std::path::Path;

use launch_engine::tooling::toolchain::{pin, pin_dir};
use launch_engine::tooling::{var, Env};
use launch_schema::report::Document;

use crate::support::{cargo_launch, copy_dir, exact, root, run, toolchain_root};

/// The template's five variants with ptxas 13.0.88 on sm_90 and sm_100 (measured; the same as
/// 12.9's): (kernel, registers, spill stores, spill loads, stack frame).
const TEMPLATE_13_0: &[(&str, u32, u32, u32, u32)] = &[
    ("poly_eval", 167, 0, 0, 0),
    ("poly_eval_lb256", 200, 0, 0, 0),
    ("poly_eval_lb1024", 64, 3168, 3208, 1384),
    ("poly_eval_lb256x4", 64, 3168, 3208, 1384),
    ("poly_eval_lb1024x2", 32, 4452, 4628, 1912),
];

/// A copy of the template whose `[package.metadata.launch]` starts with `meta`, its path
/// dependencies made absolute and its name its own (see `support::fixture`).
fn template_with(meta: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("launch-template-tc-").tempdir().expect("temp dir");
    copy_dir(&root().join("template"), dir.path());
    let _ = std::fs::remove_dir_all(dir.path().join("target"));
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("template Cargo.toml");
    let root = root();
    let text = text
        .replace("path = \"../", &format!("path = \"{}/", root.display()))
        .replace("name = \"launch-template\"", &format!("name = \"launch-template-tc-{}\"", std::process::id()))
        .replace("[package.metadata.launch]\n", &format!("[package.metadata.launch]\n{meta}\n"));
    // A workspace of its own (the copy is not a member of this one), with this one's lock file so
    // that nothing is resolved anew; the library keeps its name for src/main.rs.
    std::fs::write(&manifest, format!("{text}\n[lib]\nname = \"launch_template\"\n\n[workspace]\n"))
        .expect("write Cargo.toml");
    std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("copy Cargo.lock");
    dir
}

/// Whether `cargo launch setup --toolchain 13.0` has run; the test skips, saying so, when not
/// (`LAUNCH_TEST_REQUIRE_TOOLCHAINS=1` makes that a failure).
fn cuda_13_installed() -> bool {
    let installed = pin_dir(&Env::cli(), &pin::CUDA_13_0).is_some_and(|d| d.join(".complete").is_file());
    if !installed {
        assert!(
            Env::cli().get(var::LAUNCH_TEST_REQUIRE_TOOLCHAINS).is_none_or(|v| v != "1"),
            "the CUDA 13.0 toolchain is not installed: run `cargo launch setup --toolchain 13.0`"
        );
        eprintln!("skipped: the CUDA 13.0 toolchain is not installed (`cargo launch setup --toolchain 13.0`)");
    }
    installed
}

fn report(manifest: &Path, format: &str) -> String {
    let (code, stdout, stderr) = run(cargo_launch()
        .args(["launch", "report", "--no-setup", "--format", format, "--manifest-path"])
        .arg(manifest));
    assert_eq!(code, 0, "report failed:\n{stderr}");
    stdout
}

#[test]
fn the_template_builds_and_reports_with_toolchain_13_0() {
    if !cuda_13_installed() {
        return;
    }
    let dir = template_with("toolchain = \"13.0\"");
    let manifest = dir.path().join("Cargo.toml");
    let text = report(&manifest, "text");
    assert!(text.contains("toolchain: NVRTC 13.0.88, ptxas 13.0.88"), "{text}");
    let doc = exact(&report(&manifest, "json"), Document::from_json);
    assert_eq!((doc.toolchain.nvrtc.as_str(), doc.toolchain.ptxas.as_str()), ("13.0.88", "13.0.88"));
    assert_eq!(doc.records.len(), 10, "5 kernels × 2 arches");
    for r in &doc.records {
        let name = r.kernel.name.as_str();
        let &(_, regs, stores, loads, frame) =
            TEMPLATE_13_0.iter().find(|a| a.0 == name).unwrap_or_else(|| panic!("unexpected kernel {name}"));
        let p = &r.ptxas.resources;
        let arch = r.arch.to_string();
        assert_eq!(
            (p.registers, p.spill_stores, p.spill_loads, p.stack_frame),
            (regs, stores, loads, frame),
            "{name} {arch}"
        );
        assert!(r.ptxas.lines.iter().any(|l| l.contains(&format!("Used {regs} registers"))), "{name}");
    }
}

/// Checked from the configuration, before anything is built or installed: exit 2, at the arch.
#[test]
fn an_arch_toolchain_13_0_cannot_target_is_a_located_config_error() {
    let dir = template_with("toolchain = \"13.0\"");
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("arch = [\"sm_90\", \"sm_100\"]", "arch = [\"sm_70\", \"sm_90\"]")).unwrap();
    let (code, _, stderr) =
        run(cargo_launch().args(["launch", "report", "--no-setup", "--manifest-path"]).arg(&manifest));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("Cargo.toml:11:9: `package.metadata.launch.arch[0]`: toolchain \"13.0\" cannot target `sm_70`; toolchain \"12.9\" can (set `toolchain = \"12.9\"`)"),
        "{stderr}"
    );
}

/// `LAUNCH_TOOLCHAIN` at the 12.9 wheels for a crate that asks for 13.0: the error names both
/// and nothing is built or installed (exit 3).
#[test]
fn a_toolchain_of_another_major_in_launch_toolchain_is_refused() {
    let toolchain = toolchain_root();
    let dir = template_with("toolchain = \"13.0\"");
    let manifest = dir.path().join("Cargo.toml");
    let (code, _, stderr) = run(cargo_launch()
        .env("LAUNCH_TOOLCHAIN", &toolchain)
        .args(["launch", "report", "--manifest-path"])
        .arg(&manifest));
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains(&format!("no CUDA toolchain in LAUNCH_TOOLCHAIN={}: ", toolchain.display())), "{stderr}");
    assert!(stderr.contains("no nvidia/cu13/lib/libnvrtc.so.13"), "{stderr}");
    assert!(
        stderr.contains("it holds the CUDA 12 wheels (nvidia/cuda_nvrtc, nvidia/cuda_nvcc), not CUDA 13's"),
        "{stderr}"
    );
    assert!(stderr.contains("at a CUDA 13 toolkit"), "{stderr}");
}

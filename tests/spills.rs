//! `--spills` on the template: `report --spills` names the lines of `kernels/poly.cuh` whose code
//! spills under `__launch_bounds__(1024, 2)`, in text and in the typed JSON field; a second run
//! comes from the cache; `check --spills` points the spill finding at the top line; and compiling
//! with line info changes no instruction (registers, spills and the SASS without its line comments
//! are the build's).
//!
//! Needs an nvdisasm that marks spill code (NVIDIA's `nvidia-cuda-nvdisasm` wheel, 13.4.92 or
//! newer); without one every test says so loudly and skips (`LAUNCH_TEST_REQUIRE_NVDISASM=1`
//! makes that a failure).

use std::path::{Path, PathBuf};
use std::time::Instant;

use launch::Arch;
use launch_engine::tooling::lineinfo::{nvdisasm, Recompiler};
use launch_engine::tooling::{var, Env, Tool};
use launch_schema::report::Document;

use crate::support::{cargo_launch, exact, record, root, run, toolchain_root};

/// The `@launch(1024, 2)` build of the template: 32 registers, the most spills.
const KERNEL: &str = "poly_eval_lb1024x2";

/// An nvdisasm that marks spill code, or `None` after saying loudly why the test skips.
fn nvdisasm_or_skip() -> Option<nvdisasm::Located> {
    toolchain_root();
    let env = Env::cli();
    let config = launch_engine::Config::load(&root().join("template/Cargo.toml")).expect("the template's Cargo.toml");
    let toolchain =
        launch_engine::tooling::toolchain::discover_for(&env, &config.toolchain).expect("the pinned toolchain");
    match nvdisasm::locate(&env, &toolchain, std::time::Duration::from_secs(60)) {
        Ok(found) => Some(found),
        Err(e) => {
            assert!(
                env.get(var::LAUNCH_TEST_REQUIRE_NVDISASM).is_none_or(|v| v != "1"),
                "LAUNCH_TEST_REQUIRE_NVDISASM=1 and {e}"
            );
            eprintln!("\n*** SKIPPED: the --spills tests need nvdisasm and none was found ***\n{e}\n");
            None
        }
    }
}

fn template_report(args: &[&str]) -> (String, String) {
    let manifest = root().join("template/Cargo.toml");
    let (code, stdout, stderr) =
        run(cargo_launch().args(["launch", "report", "--no-setup"]).args(args).arg("--manifest-path").arg(&manifest));
    assert_eq!(code, 0, "report {args:?} failed:\n{stderr}");
    (stdout, stderr)
}

#[test]
fn report_spills_names_the_lines_of_poly_cuh_and_the_second_run_is_cached() {
    if nvdisasm_or_skip().is_none() {
        return;
    }
    let started = Instant::now();
    let (json, _) = template_report(&["--spills", "--format", "json"]);
    let first = started.elapsed();
    let doc = exact(&json, Document::from_json);
    for arch in ["sm_90", "sm_100"] {
        let r = record(&doc, KERNEL, arch);
        let s = r.spills_by_line.as_ref().unwrap_or_else(|| panic!("{KERNEL} {arch} spills but has no lines"));
        // Every spill instruction has a line, all in the header that holds the body, and the top
        // line is the unrolled fmaf loop (poly.cuh:21).
        assert_eq!(s.unattributed.instructions(), 0, "{arch}: {s:?}");
        assert!(s.lines.iter().all(|l| l.file == "kernels/poly.cuh"), "{arch}: {:?}", s.lines);
        assert_eq!((s.lines[0].file.as_str(), s.lines[0].line), ("kernels/poly.cuh", 21), "{arch}");
        assert!(s.lines.windows(2).all(|w| w[0].count.instructions() >= w[1].count.instructions()), "sorted");
        // The counted bytes are ptxas's spill bytes: only spill code is counted.
        let p = &r.ptxas.resources;
        assert_eq!((s.total.store_bytes, s.total.load_bytes), (p.spill_stores, p.spill_loads), "{arch}");
        assert_eq!((s.total.store_bytes, s.total.load_bytes), (4452, 4628), "{arch}");
        // A kernel that does not spill has no lines.
        assert_eq!(record(&doc, "poly_eval", arch).spills_by_line, None);
    }

    let started = Instant::now();
    let (text, stderr) = template_report(&["--spills", "--kernel", &format!("^{KERNEL}$")]);
    let cached = started.elapsed();
    assert!(!stderr.contains("spills: compiling"), "the second run compiles nothing:\n{stderr}");
    let block = text.split(&format!("{KERNEL}  sm_90")).nth(1).expect("the kernel's block");
    assert!(block.contains("  spills by line (STL/LDL that nvdisasm"), "{text}");
    assert!(block.contains("= 4452 + 4628 bytes, as ptxas says"), "{text}");
    assert!(block.contains("\n    kernels/poly.cuh:21  1049 stores  1028 loads  8308 bytes\n"), "{text}");
    eprintln!("report --spills: first {first:.2?} (build included when not fresh), cached {cached:.2?}");

    // Without --spills the field is null everywhere.
    let doc = exact(&template_report(&["--format", "json"]).0, Document::from_json);
    assert!(doc.records.iter().all(|r| r.spills_by_line.is_none()));
}

#[test]
fn check_spills_points_the_spill_finding_at_the_top_line() {
    if nvdisasm_or_skip().is_none() {
        return;
    }
    let manifest = root().join("template/Cargo.toml");
    let (_, stdout, stderr) = run(cargo_launch()
        .args(["launch", "check", "--no-setup", "--spills", "--verbose", "--manifest-path"])
        .arg(&manifest));
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains(&format!("warning[spills]: kernels/poly.cuh:21: {KERNEL} on sm_90: 4452 bytes spill stores")),
        "{all}"
    );
    // Without --spills, the finding stays at the kernel's definition.
    let (_, stdout, stderr) =
        run(cargo_launch().args(["launch", "check", "--no-setup", "--verbose", "--manifest-path"]).arg(&manifest));
    let all = format!("{stdout}{stderr}");
    assert!(all.contains(&format!("warning[spills]: kernels/poly.cu:33: {KERNEL} on sm_90:")), "{all}");
}

/// `ptxas -v`'s resource lines (`Used N registers`, `bytes stack frame`), per function, in order.
fn resource_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("Compiling entry") || l.contains(": Used ") || l.contains("bytes stack frame"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// nvdisasm's code sections without its `//##` line comments.
fn sass(tool: &Path, work: &Path, cubin: &[u8], line_info: bool) -> String {
    let path = work.join(if line_info { "lineinfo.cubin" } else { "plain.cubin" });
    std::fs::write(&path, cubin).expect("write cubin");
    let args: &[&str] = if line_info { &["-g", "-c"] } else { &["-c"] };
    let out = Tool::new(tool).args(args).arg(&path).run().expect("nvdisasm runs");
    out.stdout.lines().filter(|l| !l.trim_start().starts_with("//##")).collect::<Vec<_>>().join("\n")
}

#[test]
fn line_info_changes_no_instruction_of_the_template_on_sm_90() {
    let Some(tool) = nvdisasm_or_skip() else { return };
    let env = Env::cli();
    let config = launch_engine::Config::load(&root().join("template/Cargo.toml")).expect("config");
    let work = tempfile::tempdir().expect("temp dir");
    let work_dir: PathBuf = work.path().to_path_buf();
    let recompiler = Recompiler::new(&env, &config, &work_dir).expect("the template's toolchain");
    let arch: Arch = "sm_90".parse().unwrap();
    let plain = recompiler.compile("kernels/poly.cu", arch, false).expect("compile without line info");
    let lined = recompiler.compile("kernels/poly.cu", arch, true).expect("compile with line info");
    assert!(lined.ptx.contains(".loc"), "line info was asked for");
    assert!(!plain.ptx.contains(".loc"), "the build's PTX has no line info");

    // Same registers, spills and stack, function by function, as ptxas reports them.
    let (a, b) = (resource_lines(&plain.ptxas_log), resource_lines(&lined.ptxas_log));
    assert_eq!(a, b);
    assert_eq!(a.iter().filter(|l| l.contains("Compiling entry")).count(), 5, "{a:#?}");
    // ... and those are the build's (the report's numbers for sm_90).
    let doc = exact(&template_report(&["--format", "json"]).0, Document::from_json);
    for r in doc.records.iter().filter(|r| r.arch.to_string() == "sm_90") {
        let p = &r.ptxas.resources;
        let i = a
            .iter()
            .position(|l| l.contains(&format!("'{}'", r.kernel.name)))
            .unwrap_or_else(|| panic!("{} in {a:#?}", r.kernel.name));
        assert!(
            a[i + 1].starts_with(&format!(
                "{} bytes stack frame, {} bytes spill stores, {} bytes spill loads",
                p.stack_frame, p.spill_stores, p.spill_loads
            )),
            "{}: {a:#?}",
            r.kernel.name
        );
        assert!(a[i + 2].contains(&format!("Used {} registers", p.registers)), "{}: {a:#?}", r.kernel.name);
    }

    // The same instructions at the same addresses: the SASS with nvdisasm's line comments taken
    // out is the SASS of the build without line info, byte for byte.
    let (sa, sb) = (sass(&tool.path, &work_dir, &plain.cubin, false), sass(&tool.path, &work_dir, &lined.cubin, true));
    assert!(sa.contains(&format!(".text.{KERNEL}")) && sa.contains("STL"), "{}", &sa[..sa.len().min(2000)]);
    assert!(
        sa == sb,
        "SASS differs with line info (first differing line: {:?})",
        sa.lines().zip(sb.lines()).find(|(x, y)| x != y)
    );
}

//! Issue 32, class 9: records the driver agrees with, for every toolchain. The kernels of
//! `fixtures/crates/recursive_stack` — recursion direct and mutual, with and without frames, an
//! indirect call, plain frames — built with each pinned toolchain: every kernel's recorded stack
//! frame is the `LOCAL_SIZE_BYTES` the H200's driver reported for that toolchain's cubin
//! (`tools/gpu/results-2026-12-02-stack/`), and exactly the kernels that recurse through a
//! function with a frame say that their stack is not static, in the report (JSON and text) and as
//! a `check` warning at the kernel's line. Before: ptxas 13.5's 160-byte frame for `k_frame_fib`
//! was recorded where the driver reports 0, and no toolchain's build said anything.

use launch_engine::tooling::toolchain::{pin, pin_dir};
use launch_engine::tooling::{var, Env};
use launch_schema::report::Document;

use crate::support::{cargo_launch, fixture, run};

/// `LOCAL_SIZE_BYTES` of each kernel on the H200 (driver 580.159.04, CUDA 13.0), per toolchain,
/// from `tools/gpu/results-2026-12-02-stack/stack.log`.
const DRIVER: [(&str, [(&str, u32); 8]); 3] = [
    ("12.9", [K_PLAIN_0, CALLEE, FACT, FIB, ("k_frame_fib", 160), FRAME_FACT, MUTUAL, INDIRECT]),
    ("13.0", [K_PLAIN_0, CALLEE, FACT, FIB, ("k_frame_fib", 160), FRAME_FACT, MUTUAL, INDIRECT]),
    ("13.5", [("k_plain", 64), CALLEE, FACT, FIB, ("k_frame_fib", 0), FRAME_FACT, MUTUAL, INDIRECT]),
];
const K_PLAIN_0: (&str, u32) = ("k_plain", 0);
const CALLEE: (&str, u32) = ("k_callee", 96);
const FACT: (&str, u32) = ("k_fact", 0);
const FIB: (&str, u32) = ("k_fib", 0);
const FRAME_FACT: (&str, u32) = ("k_frame_fact", 320);
const MUTUAL: (&str, u32) = ("k_mutual", 0);
const INDIRECT: (&str, u32) = ("k_indirect", 96);

/// The kernels whose stack is not static, with the recursion each reaches, on every toolchain:
/// `fact` recurses too, but without a frame a level costs nothing (ptxas 13.5 agrees).
const DYNAMIC: [(&str, &[&str]); 3] =
    [("k_fib", &["fib(int)"]), ("k_frame_fib", &["fib(int)"]), ("k_mutual", &["even(int)", "odd(int)"])];

fn installed(version: &str) -> bool {
    let p = pin::PINS.iter().find(|p| p.version.starts_with(version)).expect("a pinned toolchain");
    let ok = pin_dir(&Env::cli(), p).is_some_and(|d| d.join(".complete").is_file());
    if !ok {
        assert!(
            Env::cli().get(var::LAUNCH_TEST_REQUIRE_TOOLCHAINS).is_none_or(|v| v != "1"),
            "run `cargo launch setup --toolchain {version}`"
        );
        eprintln!("skipped {version}: not installed");
    }
    ok
}

#[test]
fn every_toolchains_record_is_what_the_driver_reports_and_recursion_is_said() {
    for (toolchain, driver) in DRIVER {
        if !installed(toolchain) {
            continue;
        }
        let dir = fixture("recursive_stack");
        let manifest = dir.path().join("Cargo.toml");
        let (code, stdout, stderr) = run(cargo_launch()
            .args(["launch", "report", "--format", "json", "--manifest-path"])
            .arg(&manifest)
            .env("LAUNCH_TOOLCHAIN_PIN", toolchain));
        assert_eq!(code, 0, "{toolchain}: report failed:\n{stderr}");
        let doc = Document::from_json(&stdout).unwrap_or_else(|e| panic!("{toolchain}: {e}\n{stdout}"));
        assert_eq!(doc.records.len(), 8, "{toolchain}");
        for (kernel, local_size) in driver {
            let r = doc.records.iter().find(|r| r.kernel.name == kernel).unwrap_or_else(|| panic!("{kernel}"));
            assert_eq!(
                r.ptxas.resources.stack_frame, local_size,
                "{toolchain} {kernel}: the driver's LOCAL_SIZE_BYTES"
            );
            let through = DYNAMIC.iter().find(|(k, _)| *k == kernel).map(|(_, t)| *t);
            let got = r.dynamic_stack.as_ref().map(|d| d.value.through.clone());
            assert_eq!(
                got.as_deref(),
                through.map(|t| t.iter().map(|s| s.to_string()).collect::<Vec<_>>()).as_deref(),
                "{toolchain} {kernel}"
            );
            if let Some(d) = &r.dynamic_stack {
                assert!(d.message.contains("cannot be statically determined"), "{}", d.message);
                assert!(d.message.contains("cudaLimitStackSize"), "{}", d.message);
                // ptxas 13.5 warns and prints the frame the driver does not report.
                let printed =
                    r.ptxas.lines.iter().find_map(|l| l.trim().split(" bytes stack frame").next()?.parse::<u32>().ok());
                assert_eq!(Some(d.value.ptxas_frame), printed, "{toolchain} {kernel}");
                assert_eq!(d.value.ptxas_warned, toolchain == "13.5", "{toolchain} {kernel}");
            }
        }

        // The text report and `check` say it, at the kernel's line.
        let (_, text, _) = run(cargo_launch()
            .args(["launch", "report", "--detailed", "--kernel", "k_frame_fib", "--manifest-path"])
            .arg(&manifest)
            .env("LAUNCH_TOOLCHAIN_PIN", toolchain));
        assert!(
            text.contains("warning: its stack size cannot be statically determined: it recurses through `fib(int)`"),
            "{toolchain}:\n{text}"
        );
        let (_, out, err) = run(cargo_launch()
            .args(["launch", "check", "--verbose", "--manifest-path"])
            .arg(&manifest)
            .env("LAUNCH_TOOLCHAIN_PIN", toolchain));
        let check = out + &err;
        let stack_lines: Vec<&str> = check.lines().filter(|l| l.starts_with("warning[stack]: ")).collect();
        assert_eq!(stack_lines.len(), 3, "{toolchain}:\n{check}");
        assert!(
            stack_lines.iter().any(|l| l.contains("kernels/stack.cu:37: k_frame_fib on sm_90: its stack size")),
            "{toolchain}:\n{check}"
        );
    }
}

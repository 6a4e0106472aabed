use launch::occupancy::Limiter;
use launch::ContractSource;
use launch_analysis::{LaunchFailure, Note, ThreadsFrom};
use launch_schema::report::{Document, Record};

use crate::support::{cargo_launch, exact, fixture, root, run, toolchain_root};

/// The seed article's table, per variant: (kernel, contract threads, registers, spill stores,
/// spill loads, stack frame, occupancy %).
const ARTICLE: &[(&str, u32, u32, u32, u32, u32, f64)] = &[
    ("poly_eval", 256, 167, 0, 0, 0, 12.5),
    ("poly_eval_lb256", 256, 200, 0, 0, 0, 12.5),
    ("poly_eval_lb1024", 1024, 64, 3168, 3208, 1384, 50.0),
    ("poly_eval_lb256x4", 256, 64, 3168, 3208, 1384, 50.0),
    ("poly_eval_lb1024x2", 1024, 32, 4452, 4628, 1912, 100.0),
];

fn template_report(format: &str) -> String {
    toolchain_root();
    let manifest = root().join("template/Cargo.toml");
    let (code, stdout, stderr) =
        run(cargo_launch().args(["launch", "report", "--format", format, "--manifest-path"]).arg(&manifest));
    assert_eq!(code, 0, "report failed:\n{stderr}");
    stdout
}

#[test]
fn template_text_report_prints_the_articles_ptxas_lines_and_occupancy() {
    let out = template_report("text");
    assert!(out.contains("toolchain: NVRTC 12.9.86, ptxas 12.9.86"), "{out}");
    for arch in ["sm_90", "sm_100"] {
        for &(name, threads, regs, stores, loads, frame, pct) in ARTICLE {
            let header = out
                .lines()
                .position(|l| l.starts_with(&format!("{name}  {arch}  ")))
                .unwrap_or_else(|| panic!("no block for {name} {arch}:\n{out}"));
            let block: Vec<&str> = out.lines().skip(header).take(5).collect();
            let block = block.join("\n");
            assert!(
                block.contains(&format!(
                    "    {frame} bytes stack frame, {stores} bytes spill stores, {loads} bytes spill loads"
                )),
                "{block}"
            );
            assert!(block.contains(&format!("ptxas info    : Used {regs} registers, used 0 barriers")), "{block}");
            assert!(block.contains(&format!("occupancy at {threads} threads")), "{block}");
            assert!(block.contains(&format!("({pct:.1}%)")), "{block}");
        }
    }
    // The trap: the unbounded build cannot launch at 512 threads.
    assert!(out.contains("largest launchable block: 384 threads; at 512 threads the launch fails: 167 registers × 512 threads needs 86,016 registers per block"), "{out}");
    assert!(out.contains("poly_eval_lb1024x2  sm_90  __launch_bounds__(1024, 2)"), "{out}");
    // The cliff: 39 registers fewer and a second block fits.
    assert!(out.contains("\n  next block: ≤ 128 registers (-39) fit 2 blocks/SM (25.0%)\n"), "{out}");
}

#[test]
fn template_json_report_has_the_documented_schema_and_ptxas_numbers() {
    let doc = exact(&template_report("json"), Document::from_json);
    assert_eq!(doc.toolchain.nvrtc, "12.9.86");
    assert_eq!(doc.toolchain.ptxas, "12.9.86");
    let records = &doc.records;
    assert_eq!(records.len(), 10, "5 kernels × 2 arches");
    for r in records {
        let name = r.kernel.name.as_str();
        let &(_, threads, regs, stores, loads, frame, pct) =
            ARTICLE.iter().find(|a| a.0 == name).unwrap_or_else(|| panic!("unexpected kernel {name}"));
        assert!(["sm_90", "sm_100"].contains(&r.arch.to_string().as_str()));
        assert_eq!(r.kernel.file, "kernels/poly.cu");
        let p = &r.ptxas.resources;
        assert_eq!(p.registers, regs, "{name}");
        assert_eq!(p.spill_stores, stores, "{name}");
        assert_eq!(p.spill_loads, loads, "{name}");
        assert_eq!(p.stack_frame, frame, "{name}");
        assert_eq!(p.cumulative_stack, frame, "{name}");
        assert_eq!(p.barriers, 0);
        assert_eq!(p.shared_static, 0);
        assert_eq!(p.cmem0, None, "sm_90+ prints no cmem");
        assert!(r.ptxas.lines.iter().any(|l| l.contains(&format!("Used {regs} registers"))));
        assert_eq!(r.occupancy.threads, threads, "{name}");
        assert_eq!(r.occupancy.percent, pct, "{name}");
        assert_eq!(r.occupancy.max_warps, 64);
        assert!(r.occupancy.limiters.contains(Limiter::Registers), "{name}");
        if name == "poly_eval" {
            assert_eq!(r.contract, None);
            assert_eq!(r.occupancy.threads_from, ThreadsFrom::Host, "no contract: the host's block size");
            assert_eq!(r.max_threads_per_block, 384);
            let fails = r.fails_at.as_ref().expect("the unbounded build fails at some block size");
            assert_eq!(fails.threads, 512);
            assert!(
                matches!(fails.reason.value, LaunchFailure::Registers { registers: 167, threads: 512, .. }),
                "{fails:?}"
            );
        } else {
            let c = r.contract.expect("a contract");
            assert_eq!(r.occupancy.threads_from, ThreadsFrom::Contract, "{name}");
            assert_eq!(c.source, ContractSource::LaunchBounds);
            assert_eq!(c.threads, Some(threads));
        }
    }
    let lb = records.iter().find(|r| r.kernel.name == "poly_eval_lb1024x2").unwrap();
    assert_eq!(lb.contract.and_then(|c| c.min_blocks), Some(2));
    assert_eq!(lb.occupancy.active_blocks, 2);
    // The cliff per record: 128 registers fit a second block of 256 threads; at full occupancy
    // (the 1024 × 2 build) there is none.
    let next = |name: &str| records.iter().find(|r| r.kernel.name == name).unwrap().next_block;
    let two = launch_analysis::NextBlock { registers: 128, active_blocks: 2, percent: 25.0 };
    assert_eq!((next("poly_eval"), next("poly_eval_lb256")), (Some(two), Some(two)));
    assert_eq!(next("poly_eval_lb1024x2"), None);
}

#[test]
fn arch_filter_and_several_files_headers_defines_and_mangled_names() {
    toolchain_root();
    let dir = fixture("multi");
    let (code, stdout, stderr) = run(cargo_launch()
        .args(["launch", "report", "--format", "json", "--arch", "sm_80", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    assert_eq!(code, 0, "{stderr}");
    let records = Document::from_json(&stdout).expect("a report document").records;
    assert!(records.iter().all(|r| r.arch.to_string() == "sm_80"), "--arch filters");
    let names: Vec<&str> = records.iter().map(|r| r.kernel.display_name.as_str()).collect();
    assert_eq!(names, ["smem_tile", "void scale<4>(int*)", "capped"]);
    let smem = &records[0].ptxas.resources;
    assert_eq!(smem.shared_static, 4096, "TILE=64 from metadata defines: 64*16 floats");
    assert_eq!(smem.barriers, 1);
    assert!(smem.cmem0.is_some_and(|c| c > 0), "sm_80 prints cmem[0]");
    assert_eq!(records[0].occupancy.threads, 128, "host block size from metadata");
    assert_eq!(records[0].occupancy.threads_from, ThreadsFrom::Host);
    assert_eq!(records[1].kernel.name, "_Z5scaleILi4EEvPi");
    assert_eq!(records[2].kernel.file, "kernels/sub/capped.cu");
    let capped = records[2].contract.expect("a contract");
    assert_eq!(capped.max_regs, Some(40));
    assert_eq!(capped.threads, None);
    // Arches the crate does not list are compiled too (cli_scale::unlisted_arches_...).
}

#[test]
fn a_second_build_is_a_no_op() {
    toolchain_root();
    let dir = fixture("multi");
    let manifest = dir.path().join("Cargo.toml");
    let (code, _, stderr) = run(cargo_launch().args(["launch", "report", "--manifest-path"]).arg(&manifest));
    assert_eq!(code, 0, "{stderr}");
    let target = crate::support::fixtures_target();
    let check = || {
        let mut c = std::process::Command::new(env!("CARGO"));
        c.args(["check", "-v", "--manifest-path"]).arg(&manifest).env("CARGO_TARGET_DIR", &target);
        run(&mut c)
    };
    let (code, _, stderr) = check();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("Fresh fixture-multi"), "second build must be a no-op:\n{stderr}");
    assert!(!stderr.contains("build-script-build`"), "the build script must not rerun:\n{stderr}");
}

#[test]
fn launch_annotations_reach_the_ptx_and_the_report() {
    toolchain_root();
    let dir = fixture("contracts");
    let (code, stdout, stderr) = run(cargo_launch()
        .args(["launch", "report", "--format", "json", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    assert_eq!(code, 0, "{stderr}");
    let doc = Document::from_json(&stdout).expect("a report document");
    let rec = |name: &str, arch: &str| -> &Record {
        doc.records
            .iter()
            .find(|r| r.kernel.name == name && r.arch.to_string() == arch)
            .unwrap_or_else(|| panic!("no record of {name} on {arch}"))
    };
    let contract = |name: &str, arch: &str| rec(name, arch).contract.unwrap_or_else(|| panic!("{name}: a contract"));
    for arch in ["sm_90", "sm_120"] {
        let c = contract("one_arg", arch);
        assert_eq!((c.source, c.threads, c.min_blocks), (ContractSource::Annotation, Some(128), None));
        let c = contract("two_args", arch);
        assert_eq!((c.threads, c.min_blocks), (Some(1024), Some(2)));
        let c = contract("three_args", arch);
        assert_eq!((c.threads, c.min_blocks, c.max_regs), (Some(256), Some(2), Some(40)));
        assert!(rec("three_args", arch).ptxas.resources.registers <= 40);
        assert_eq!(rec("one_arg", arch).occupancy.threads, 128);
    }
    assert_eq!(rec("two_args", "sm_90").occupancy.percent, 100.0);
    // The register cap each contract implies, and what an arch does not honour.
    assert_eq!(rec("two_args", "sm_90").register_cap, Some(32));
    assert_eq!(rec("two_args", "sm_90").notes.len(), 0);
    let notes = &rec("two_args", "sm_120").notes;
    assert!(
        notes.iter().any(|n| matches!(n.value, Note::MinBlocksImpossible { blocks: 2, threads: 1024, .. })
            && n.message.contains(
                "min_blocks 2 cannot be met on sm_120: 2 × 1024 threads exceed the SM's 1536 threads; ptxas ignores it"
            )),
        "{notes:?}"
    );
    assert_eq!(rec("three_args", "sm_90").register_cap, Some(40));
    let high = rec("cap_above_bound", "sm_90");
    assert_eq!(contract("cap_above_bound", "sm_90").max_regs, Some(128));
    assert_eq!(high.register_cap, Some(64));
    assert!(
        high.notes.iter().any(|n| matches!(n.value, Note::MaxRegsAboveFit { max_regs: 128, fit: 64, .. })
            && n.message.contains("max_regs 128 is above the 64 registers that 1 block(s) of 1024 threads leave per thread on sm_90; ptxas holds the kernel to 64")),
        "{:?}",
        high.notes
    );

    let (_, text, _) =
        run(cargo_launch().args(["launch", "report", "--manifest-path"]).arg(dir.path().join("Cargo.toml")));
    assert!(text.contains("three_args  sm_90  @launch(256, 2, 40)"), "{text}");
    assert_eq!(rec("one_arg", "sm_90").ptxas.resources.shared_static, 512, "ctx.threads sized the shared array");

    // The generated Rust exposes each contract to host code.
    let mut cargo = std::process::Command::new(env!("CARGO"));
    cargo.args(["run", "-q", "--manifest-path"]).arg(dir.path().join("Cargo.toml"));
    cargo.env("CARGO_TARGET_DIR", crate::support::fixtures_target());
    let (code, stdout, stderr) = run(&mut cargo);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("one_arg threads=Some(128) warps=Some(4) min_blocks=None max_regs=None source=Annotation exact=true block=128"),
        "{stdout}"
    );
    assert!(
        stdout.contains("three_args threads=Some(256) warps=Some(8) min_blocks=Some(2) max_regs=Some(40)"),
        "{stdout}"
    );
}

#[test]
fn invalid_launch_annotations_fail_the_build_at_their_line() {
    let dir = fixture("contracts");
    let k = dir.path().join("kernels/contracts.cu");
    let src = std::fs::read_to_string(&k)
        .unwrap()
        .replace("@launch(128)", "@launch(48)")
        .replace("@launch(256, 2, 40)", "@launch(256, 0, 300)");
    std::fs::write(&k, src).unwrap();
    let (code, _, stderr) =
        run(cargo_launch().args(["launch", "report", "--manifest-path"]).arg(dir.path().join("Cargo.toml")));
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("kernels/contracts.cu:3:12: error: threads = 48 is not a positive multiple of 32: the CTA would not be a whole number of warps"), "{stderr}");
    assert!(stderr.contains("kernels/contracts.cu:17:17: error: min_blocks = 0: it must be positive"), "{stderr}");
    assert!(
        stderr.contains(
            "kernels/contracts.cu:17:20: error: max_regs = 300 is outside 16..=255, the range .maxnreg accepts"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The template's text report, whole, in its three views, is its committed snapshot
/// (`fixtures/report/template-*.txt`): every column, line and word of what a user reads, not only
/// the fragments the tests above look for. `LAUNCH_BLESS_SNAPSHOTS=1` rewrites the snapshots
/// instead; review their diff.
#[test]
fn the_template_text_report_is_its_snapshot() {
    use launch_engine::tooling::{var, Env};
    toolchain_root();
    let manifest = root().join("template/Cargo.toml");
    let bless = Env::cli().flag(var::LAUNCH_BLESS_SNAPSHOTS).expect("LAUNCH_BLESS_SNAPSHOTS is a switch");
    let mut stale = Vec::new();
    for (view, args) in [("text", &[][..]), ("summary", &["--summary"][..]), ("detailed", &["--detailed"][..])] {
        let (code, stdout, stderr) =
            run(cargo_launch().args(["launch", "report"]).args(args).arg("--manifest-path").arg(&manifest));
        assert_eq!(code, 0, "report {args:?} failed:\n{stderr}");
        // The checkout's path is no part of the output's shape.
        let actual = stdout.replace(&root().display().to_string(), "{{ROOT}}");
        let path = root().join(format!("fixtures/report/template-{view}.txt"));
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if actual == committed {
            continue;
        }
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &actual).unwrap();
        } else {
            stale.push(format!("{}:\n{}", path.display(), first_difference(&committed, &actual)));
        }
    }
    assert!(
        stale.is_empty(),
        "the text report differs from its snapshot; if that is meant, run LAUNCH_BLESS_SNAPSHOTS=1 cargo test -p \
         launch-tests --test integration -- report::the_template_text_report_is_its_snapshot and review the diff\n{}",
        stale.join("\n")
    );
}

/// The first line where `expected` and `actual` differ, both sides shown.
fn first_difference(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let i = (0..e.len().max(a.len())).find(|&i| e.get(i) != a.get(i)).unwrap_or(0);
    format!(
        "line {}:\n  snapshot: {:?}\n  now:      {:?}",
        i + 1,
        e.get(i).unwrap_or(&"<end>"),
        a.get(i).unwrap_or(&"<end>")
    )
}

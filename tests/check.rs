use std::collections::BTreeMap;
use std::path::Path;

use predicates::str::contains;

use launch_analysis::{FindingKind, Severity};
use launch_schema::check::{BaselineState, Document, FindingRecord};

use crate::support::{cargo_launch, exact, fixture, launch_cmd, root, run, toolchain_root};

/// The `trap` fixture with the template's five poly_eval kernels and `meta` as its metadata.
fn trap(meta: &str) -> tempfile::TempDir {
    let dir = fixture("trap");
    let kernels = dir.path().join("kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    for f in ["poly.cu", "poly.cuh"] {
        std::fs::copy(root().join("template/kernels").join(f), kernels.join(f)).unwrap();
    }
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("arch = [\"sm_90\"]", meta)).unwrap();
    dir
}

fn check(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    toolchain_root();
    run(cargo_launch().args(["launch", "check", "--manifest-path"]).arg(dir.join("Cargo.toml")).args(extra))
}

#[test]
fn the_template_passes_for_sm_90_and_sm_100() {
    // The template commits no launch-baseline.txt: the summary says that nothing was compared.
    let (code, stdout, stderr) = check(&root().join("template"), &["--arch", "sm_90,sm_100"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("checked 5 kernels (+ 9 tune variants) × 2 arches (sm_90, sm_100): 0 errors, 8 warnings; no baseline compared ("),
        "{stdout}"
    );
    assert!(
        stdout.contains("warning[unbounded]: kernels/poly.cu:9: poly_eval on sm_90: no launch contract"),
        "{stdout}"
    );
    // --deny warnings turns the 8 warnings into a failure.
    let (code, _, _) = check(&root().join("template"), &["--arch", "sm_90", "--deny", "warnings"]);
    assert_eq!(code, 1);
}

#[test]
fn the_unbounded_kernel_fails_at_512_threads_and_passes_at_256() {
    let dir = trap("arch = [\"sm_90\"]\nthreads = 512");
    let (code, stdout, stderr) = check(dir.path(), &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "error[launch]: kernels/poly.cu:9: poly_eval on sm_90: cannot launch at 512 threads (host block size): \
             167 registers × 512 threads needs 86,016 registers per block (5,376 per warp × 16 warps), the SM allows 65,536; \
             the largest block that launches is 384; add __launch_bounds__(512) or launch ≤ 384"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("1 error"), "{stdout}");

    let dir = trap("arch = [\"sm_90\"]\nthreads = 256");
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("0 errors"), "{stdout}");
}

#[test]
fn spill_budgets_fail_per_kernel_and_can_be_overridden() {
    let dir = trap(
        "arch = [\"sm_90\"]\nmax-spill-bytes = 6376\n[package.metadata.launch.kernel.poly_eval_lb1024x2]\nmax-spill-bytes = 10000",
    );
    let (code, stdout, _) = check(dir.path(), &["--format", "json"]);
    assert_eq!(code, 0, "6376 bytes is within the budget, lb1024x2 has its own: {stdout}");
    let dir = trap("arch = [\"sm_90\"]\nmax-spill-bytes = 6000");
    let (code, stdout, _) = check(dir.path(), &["--format", "json"]);
    assert_eq!(code, 1);
    let doc = exact(&stdout, Document::from_json);
    let spills: Vec<&FindingRecord> = doc.findings.iter().filter(|f| f.kind == FindingKind::Spills).collect();
    assert_eq!(spills.len(), 3);
    assert!(spills.iter().all(|f| f.severity == Severity::Error));
    assert!(spills[0].message.contains(
        "3168 bytes spill stores + 3208 bytes spill loads = 6376 bytes, over the budget of 6000 (max-spill-bytes)"
    ));
    assert_eq!(doc.errors, 3);
    assert_eq!(doc.kernels, 5);
}

#[test]
fn shared_memory_the_host_adds_can_make_a_launch_fail() {
    let dir = trap("arch = [\"sm_90\"]\n[package.metadata.launch.kernel.big]\ndynamic-smem = 200000");
    std::fs::write(
        dir.path().join("kernels/big.cu"),
        "// @launch(256)\nextern \"C\" __global__ void big(float* p) {\n    __shared__ float s[10000];\n    extern __shared__ float d[];\n    s[threadIdx.x] = d[threadIdx.x];\n    p[threadIdx.x] = s[255 - threadIdx.x];\n}\n",
    )
    .unwrap();
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("error[launch]: kernels/big.cu:2: big on sm_90: cannot launch at 256 threads: 40,000 static + 200,000 dynamic + 1,024 reserved bytes of shared memory per block (241,024 allocated in units of 128); an SM gives one block at most 233,472"),
        "{stdout}"
    );
}

#[test]
fn min_blocks_that_sm_120_cannot_meet_is_a_warning_there_only() {
    let dir = fixture("contracts");
    let (code, stdout, stderr) = check(dir.path(), &["--arch", "sm_90,sm_120"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "warning[contract]: kernels/contracts.cu:15: two_args on sm_120: min_blocks 2 cannot be met on sm_120"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("two_args on sm_90: min_blocks"), "{stdout}");
    assert!(stdout.contains("(sm_90, sm_120)"), "{stdout}");
}

#[test]
fn bless_then_tighten_then_the_check_fails_with_the_delta() {
    let dir = trap("arch = [\"sm_90\"]");
    let (code, _, stderr) = check(dir.path(), &["--bless"]);
    assert_eq!(code, 0, "{stderr}");
    let baseline = dir.path().join("launch-baseline.txt");
    let text = std::fs::read_to_string(&baseline).unwrap();
    // A record holds every field of the resources, by name, then the occupancy.
    let record = |kernel: &str| -> BTreeMap<String, String> {
        let line = text.lines().find(|l| l.starts_with(&format!("kernels/poly.cu::{kernel} sm_90 "))).unwrap();
        line.split_whitespace().skip(2).map(|w| w.split_once('=').unwrap()).map(|(k, v)| (k.into(), v.into())).collect()
    };
    let keys: Vec<String> = record("poly_eval").into_keys().collect();
    let mut expected: Vec<&str> = launch::Resources::FIELDS.iter().map(|f| f.name).chain(["occupancy"]).collect();
    expected.sort_unstable();
    assert_eq!(keys, expected, "{text}");
    let poly = record("poly_eval");
    let number = |r: &BTreeMap<String, String>, k: &str| r[k].parse::<u32>().unwrap();
    assert_eq!(
        (number(&poly, "registers"), number(&poly, "stack_frame"), poly["occupancy"].as_str()),
        (167, 0, "12.5")
    );
    assert_eq!(poly["cmem"], "-", "sm_90 prints no cmem[0]: {text}");
    let lb = record("poly_eval_lb1024x2");
    assert_eq!(number(&lb, "spill_stores") + number(&lb, "spill_loads"), 9080, "{text}");
    assert_eq!((number(&lb, "registers"), number(&lb, "stack_frame")), (32, 1912), "{text}");
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 0, "an unchanged build passes its own baseline: {stdout}");

    // Tighten: pretend the baseline had fewer registers and more occupancy.
    let line = text.lines().find(|l| l.starts_with("kernels/poly.cu::poly_eval sm_90 ")).unwrap();
    let tighter = text
        .replace(
            line,
            &line.replace(" registers=167 ", " registers=160 ").replace(" occupancy=12.5", " occupancy=25.0"),
        )
        // A record removed by hand: the header's count is edited too (else the file is damaged).
        .replace("records=5", "records=4")
        .lines()
        .filter(|l| !l.starts_with("kernels/poly.cu::poly_eval_lb256 "))
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    std::fs::write(&baseline, tighter).unwrap();
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("error[regression]: kernels/poly.cu:9: poly_eval on sm_90: since the baseline: registers 160 → 167 (+7), occupancy 25.0% → 12.5% (-12.5 points)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("note[new]: kernels/poly.cu:15: poly_eval_lb256 on sm_90: not in the baseline"),
        "{stdout}"
    );
}

#[test]
fn arches_and_usage_errors() {
    let dir = trap("arch = [\"sm_90\"]");
    let (code, _, stderr) = check(dir.path(), &["--arch", "sm_91"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("`sm_91` is not a GPU architecture; valid choices: sm_50"), "{stderr}");
    let (code, _, _) = check(dir.path(), &["--arch", "sm_90,,sm_100"]);
    assert_eq!(code, 2, "malformed --arch");
    // sm_110 is CUDA 13's name for Thor: a valid arch that the pinned 12.9 toolchain cannot target.
    let (code, stdout, _) = check(dir.path(), &["--arch", "sm_90,sm_110"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("error[arch]: the toolchain cannot target sm_110; it supports: sm_50"), "{stdout}");
    assert!(stdout.contains("(sm_90)"), "the supported arch is still checked: {stdout}");
}

#[test]
fn github_actions_get_annotations() {
    let dir = trap("arch = [\"sm_90\"]\nthreads = 512");
    toolchain_root();
    let (code, stdout, _) = run(cargo_launch()
        .args(["launch", "check", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .current_dir(dir.path())
        .env("GITHUB_ACTIONS", "true"));
    assert_eq!(code, 1);
    assert!(stdout.contains("::error file=kernels/poly.cu,line=9,title=cargo launch check%3A launch::poly_eval on sm_90: cannot launch at 512 threads"), "{stdout}");
    assert!(stdout.contains("::warning file=kernels/poly.cu,line=21,"), "{stdout}");
}

#[test]
fn a_register_cap_that_forces_spills_is_a_warning() {
    let dir = trap("arch = [\"sm_90\"]");
    std::fs::write(
        dir.path().join("kernels/capped.cu"),
        "#include \"poly.cuh\"\n\n// @launch(256, 1, 32)\nextern \"C\" __global__ void poly_capped(const float* x, float* y, int n) {\n    poly_eval_body(x, y, n);\n}\n",
    )
    .unwrap();
    let (code, stdout, _) = check(dir.path(), &["--format", "json"]);
    assert_eq!(code, 0, "warnings only: {stdout}");
    let doc = Document::from_json(&stdout).expect("a check document");
    let f: Vec<&FindingRecord> = doc.findings.iter().filter(|f| f.kind == FindingKind::MaxRegs).collect();
    assert_eq!(f.len(), 1, "{stdout}");
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(f[0].file.as_deref(), Some("kernels/capped.cu"));
    assert_eq!(f[0].line, 4);
    assert!(
        f[0].message.starts_with("poly_capped on sm_90: the cap of 32 registers per thread forces "),
        "{}",
        f[0].message
    );
    let (code, _, _) = check(dir.path(), &["--deny", "warnings"]);
    assert_eq!(code, 1);
}

#[test]
fn settings_for_a_kernel_that_does_not_exist_are_a_warning() {
    let dir = trap("arch = [\"sm_90\"]\n[package.metadata.launch.kernel.poly_evl]\nmax-spill-bytes = 0");
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 0, "{stdout}");
    // At the table's key (issue 19 item 7: it was `Cargo.toml:` with no line).
    let text = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
    let (n, line) = text.lines().enumerate().find(|(_, l)| l.contains("poly_evl]")).unwrap();
    let at = format!("Cargo.toml:{}:{}", n + 1, line.find("poly_evl").unwrap() + 1);
    assert!(
        stdout.contains(&format!("warning[config]: {at}: [package.metadata.launch.kernel.poly_evl] names no kernel; its settings are unused; closest kernels, as keys: \"poly_eval\"")),
        "{stdout}"
    );
}

/// `check --manifest-path <dir>/Cargo.toml <extra>` as an assert_cmd command.
fn check_cmd(dir: &Path, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = launch_cmd();
    cmd.args(["launch", "check", "--manifest-path"]).arg(dir.join("Cargo.toml")).args(extra);
    cmd
}

#[test]
fn an_explicit_baseline_that_cannot_be_read_is_a_usage_error_before_building() {
    // No toolchain is needed: the baseline is read before anything is built.
    let dir = trap("arch = [\"sm_90\"]");
    let missing = dir.path().join("nope.txt");
    check_cmd(dir.path(), &["--baseline", missing.to_str().unwrap()]).assert().code(2).stderr(contains(format!(
        "error: cannot read the baseline `{}` given with --baseline: No such file or directory",
        missing.display()
    )));
    check_cmd(dir.path(), &["--baseline", dir.path().join("kernels").to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(contains("given with --baseline: Is a directory"));
    // A device would be read forever, a FIFO would block.
    check_cmd(dir.path(), &["--baseline", "/dev/zero"])
        .assert()
        .code(2)
        .stderr(contains("cannot read the baseline `/dev/zero` given with --baseline: not a regular file"));
    let latin1 = dir.path().join("latin1.txt");
    std::fs::write(&latin1, b"# cargo-launch baseline v2 records=1\nk\xe9rnel sm_90 registers=1\n").unwrap();
    check_cmd(dir.path(), &["--baseline", latin1.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(contains(format!("{}:2:2: not UTF-8 (byte 0xe9 at offset 38)", latin1.display())));
}

#[test]
fn a_damaged_baseline_is_an_error_at_its_line_not_a_list_of_new_kernels() {
    let dir = trap("arch = [\"sm_90\"]");
    let (code, _, stderr) = check(dir.path(), &["--bless"]);
    assert_eq!(code, 0, "{stderr}");
    let baseline = dir.path().join("launch-baseline.txt");
    let text = std::fs::read_to_string(&baseline).unwrap();
    assert!(text.starts_with("# cargo-launch baseline v4 records=5\n"), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let at = |line: usize| format!("{}:{line}: ", baseline.display());
    let cases: Vec<(String, String)> = vec![
        // The last record lost (a file cut short at a line boundary).
        (lines[..lines.len() - 1].join("\n") + "\n", at(1) + "the header says records=5 but the file holds 4 records"),
        // Cut inside the last line.
        (text[..text.len() - 3].to_string(), at(7) + "the last line has no newline: the file was cut short"),
        (String::new(), at(1) + "the baseline is empty"),
        (
            format!("{text}{}\n", lines[3]),
            at(8)
                + &format!("`{}` appears twice (first at line 4)", {
                    let w: Vec<&str> = lines[3].split_whitespace().take(2).collect();
                    w.join(" ")
                }),
        ),
        (lines[2..].join("\n") + "\n", at(1) + "no `# cargo-launch baseline v4 records=N` header"),
        // A hand edit: a second value for a field (the last one would win), an unknown field, a
        // misspelt arch (the kernel would turn "new").
        (text.replacen(" registers=", " registers=1 registers=", 1), at(3) + "`registers` appears twice in the record"),
        (text.replacen(" occupancy=", " extra=5 occupancy=", 1), at(3) + "unknown field `extra=5`"),
        (text.replacen(" sm_90 ", " sm_9O ", 1), at(3) + "the arch: `sm_9O` is not a GPU architecture"),
    ];
    for (damaged, expected) in cases {
        std::fs::write(&baseline, &damaged).unwrap();
        let (code, stdout, stderr) = check(dir.path(), &[]);
        assert_eq!(code, 2, "{damaged:?}\n{stdout}\n{stderr}");
        assert!(stderr.contains(&expected), "{damaged:?}: expected `{expected}` in\n{stderr}");
        assert!(stderr.contains("re-bless with `cargo launch check --bless`"), "{stderr}");
        assert!(!stdout.contains("note[new]"), "{stdout}");
    }
    // A byte order mark an editor saved before the header is skipped.
    std::fs::write(&baseline, format!("\u{feff}{text}")).unwrap();
    let (code, stdout, stderr) = check(dir.path(), &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("compared against ") && !stdout.contains("note[new]"), "{stdout}");
    // A version-1 baseline (what --bless wrote before the header, keyed by display name) is
    // compared, with a warning.
    // The first line exactly as version 1 wrote it (a file format: the old files users committed).
    const V1_HEADER: &str = "# cargo launch check --bless: per kernel and arch, registers, spill bytes (stores + \
         loads), stack frame, static shared memory and occupancy at the launch block size. Regenerate after an \
         intended change.";
    // Its records held five numbers: registers, spill stores + loads, stack, shared, occupancy.
    let as_v1 = |line: &str| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let v = |k: &str| words.iter().find_map(|w| w.strip_prefix(&format!("{k}="))).unwrap().to_string();
        let n = |k: &str| v(k).parse::<u32>().unwrap();
        format!(
            "{} {} registers={} spill_bytes={} stack={} shared={} occupancy={}",
            words[0].replace("kernels/poly.cu::", ""),
            words[1],
            v("registers"),
            n("spill_stores") + n("spill_loads"),
            v("stack_frame"),
            v("shared_static"),
            v("occupancy")
        )
    };
    let v1 = format!("{V1_HEADER}\n{}", lines[2..].iter().map(|l| as_v1(l)).collect::<Vec<_>>().join("\n"));
    std::fs::write(&baseline, v1).unwrap();
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("warning[baseline]: "), "{stdout}");
    assert!(stdout.contains("baseline format v1 has no record count"), "{stdout}");
    assert!(stdout.contains("compared against "), "{stdout}");
    assert!(!stdout.contains("note[new]") && !stdout.contains("was not built"), "matched by display name: {stdout}");
}

#[test]
fn the_summary_says_which_baseline_was_compared_or_that_none_was() {
    let dir = trap("arch = [\"sm_90\"]");
    toolchain_root();
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("0 errors, 4 warnings; no baseline compared ("), "{stdout}");
    assert!(stdout.contains("launch-baseline.txt not found; `cargo launch check --bless` writes it)"), "{stdout}");
    let (_, stdout, _) = check(dir.path(), &["--format", "json"]);
    let baseline = &Document::from_json(&stdout).expect("a check document").baselines[0];
    assert_eq!(baseline.state, BaselineState::Absent, "{stdout}");
    assert_eq!(baseline.records, 0);

    let (code, stdout, _) = check(dir.path(), &["--bless"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("launch-baseline.txt written (5 records)"), "{stdout}");
    let (_, stdout, _) = check(dir.path(), &[]);
    assert!(stdout.contains("0 errors, 4 warnings; compared against "), "{stdout}");
    assert!(stdout.contains("launch-baseline.txt (5 records)"), "{stdout}");
    let (_, stdout, _) = check(dir.path(), &["--format", "json"]);
    let baseline = &Document::from_json(&stdout).expect("a check document").baselines[0];
    assert_eq!(baseline.state, BaselineState::Compared, "{stdout}");
    assert_eq!(baseline.records, 5);
    assert_eq!(baseline.path, dir.path().join("launch-baseline.txt"));
}

#[test]
fn nothing_to_check_says_why() {
    // An empty kernel folder: a warning (so `--deny warnings` fails) and the reason in the summary.
    let dir = trap("arch = [\"sm_90\"]");
    for f in ["poly.cu", "poly.cuh"] {
        std::fs::remove_file(dir.path().join("kernels").join(f)).unwrap();
    }
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("warning[empty]: Cargo.toml: nothing to check in package `fixture-trap-"), "{stdout}");
    assert!(stdout.contains("no .cu file in kernels/"), "{stdout}");
    assert!(stdout.contains("nothing to check: no kernels found in kernels/: 0 errors, 1 warning"), "{stdout}");
    assert!(!stdout.contains("0 kernels × 0 arches"), "{stdout}");
    check_cmd(dir.path(), &["--deny", "warnings"]).assert().code(1);

    // Every requested arch is one the toolchain cannot target.
    let dir = trap("arch = [\"sm_90\"]");
    let (code, stdout, _) = check(dir.path(), &["--arch", "sm_110"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("nothing to check: the toolchain can target none of the requested arches: 1 error, 0 warnings"),
        "{stdout}"
    );
}

/// The `baseline_keys` fixture: a C++ template kernel `void tmpl<8>(int*)` in kernels/tmpl.cu
/// and an extern "C" `fill` in kernels/a.cu, both with a contract, for sm_80 and sm_90.
fn baseline_keys() -> tempfile::TempDir {
    fixture("baseline_keys")
}

#[test]
fn a_cpp_template_kernel_is_blessed_and_checked_by_file_and_symbol() {
    // Before: the record's kernel was the display name `void tmpl<8>(int*)`, and the next check
    // read `tmpl<8>(int*)` as the arch and `sm_80` as a field: exit 2.
    let dir = baseline_keys();
    let (code, stdout, stderr) = check(dir.path(), &["--bless"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let text = std::fs::read_to_string(dir.path().join("launch-baseline.txt")).unwrap();
    assert!(text.starts_with("# cargo-launch baseline v4 records=4\n"), "{text}");
    assert!(text.contains("\nkernels/tmpl.cu::_Z4tmplILi8EEvPi sm_80 registers="), "{text}");
    assert!(text.contains("\nkernels/a.cu::fill sm_90 registers="), "{text}");
    let (code, stdout, stderr) = check(dir.path(), &["--deny", "warnings"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("checked 2 kernels × 2 arches (sm_80, sm_90): 0 errors, 0 warnings; compared against "),
        "{stdout}"
    );
    assert!(stdout.contains("launch-baseline.txt (4 records)"), "{stdout}");
    assert!(!stdout.contains("note[new]"), "{stdout}");
}

#[test]
fn a_kernel_whose_display_name_changes_stays_compared_and_a_record_not_built_is_a_warning() {
    let dir = baseline_keys();
    let (code, _, stderr) = check(dir.path(), &["--bless"]);
    assert_eq!(code, 0, "{stderr}");
    let baseline = dir.path().join("launch-baseline.txt");
    let text = std::fs::read_to_string(&baseline).unwrap();
    // Pretend `fill` used fewer registers on sm_90 when blessed.
    let line = text.lines().find(|l| l.starts_with("kernels/a.cu::fill sm_90 ")).unwrap().to_string();
    let tighter = line.split_whitespace().map(|w| if w.starts_with("registers=") { "registers=2" } else { w });
    std::fs::write(&baseline, text.replace(&line, &tighter.collect::<Vec<_>>().join(" "))).unwrap();
    // A second file defining `fill`: a.cu's kernel is now shown as `kernels/a.cu::fill`. Before,
    // its record (keyed `fill`) was no longer looked up and the regression passed as a note.
    let kernels = dir.path().join("kernels");
    std::fs::write(kernels.join("b.cu"), std::fs::read_to_string(kernels.join("a.cu")).unwrap()).unwrap();
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains(
            "error[regression]: kernels/a.cu:2: kernels/a.cu::fill on sm_90: since the baseline: registers 2 → "
        ),
        "{stdout}"
    );
    assert!(stdout.contains("note[new]: kernels/b.cu:2: kernels/b.cu::fill on sm_80: not in the baseline"), "{stdout}");
    assert!(!stdout.contains("was not built"), "{stdout}");

    // Moving a file (or renaming a kernel) leaves its records unmatched: a warning at their line
    // in the baseline, so `--deny warnings` fails, never a silent pass.
    let (code, _, _) = check(dir.path(), &["--bless"]);
    assert_eq!(code, 0);
    std::fs::remove_file(kernels.join("b.cu")).unwrap();
    std::fs::rename(kernels.join("tmpl.cu"), kernels.join("templates.cu")).unwrap();
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 0, "{stdout}");
    let text = std::fs::read_to_string(&baseline).unwrap();
    let at = |key: &str| 1 + text.lines().position(|l| l.starts_with(key)).unwrap();
    for (key, arch) in [("kernels/b.cu::fill", "sm_80"), ("kernels/tmpl.cu::_Z4tmplILi8EEvPi", "sm_90")] {
        let shown = if key.contains("_Z") { format!("{key} (void tmpl<8>(int*))") } else { key.to_string() };
        let expected = format!(
            "warning[baseline]: launch-baseline.txt:{}: {shown} {arch} is in the baseline but was not built \
             (renamed, removed or moved?); re-bless with `cargo launch check --bless` if intended",
            at(&format!("{key} {arch} "))
        );
        assert!(stdout.contains(&expected), "expected `{expected}` in\n{stdout}");
    }
    assert!(stdout.contains("0 errors, 4 warnings"), "b.cu's and tmpl.cu's records on both arches: {stdout}");
    check_cmd(dir.path(), &["--deny", "warnings"]).assert().code(1);
    // Records of an arch not checked this time are not "not built".
    let (_, stdout, _) = check(dir.path(), &["--arch", "sm_90"]);
    assert!(stdout.contains("0 errors, 2 warnings"), "{stdout}");
    assert!(!stdout.contains(" sm_80 is in the baseline"), "{stdout}");
}

#[test]
fn a_version_3_baseline_is_still_compared_by_its_five_numbers_without_a_warning() {
    // What v3's `--bless` wrote (keyed by file and symbol, before every resource was recorded):
    // what it holds is judged, the spills as their sum; nothing to re-bless.
    let dir = baseline_keys();
    let loose = "spill_bytes=99999 stack=99999 shared=99999 occupancy=0.0";
    std::fs::write(
        dir.path().join("launch-baseline.txt"),
        format!(
            "# cargo-launch baseline v3 records=4\n\
             kernels/a.cu::fill sm_80 registers=1 {loose}\n\
             kernels/a.cu::fill sm_90 registers=255 {loose}\n\
             kernels/tmpl.cu::_Z4tmplILi8EEvPi sm_80 registers=255 {loose}\n\
             kernels/tmpl.cu::_Z4tmplILi8EEvPi sm_90 registers=255 {loose}\n"
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = check(dir.path(), &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stdout.contains("fill on sm_80: since the baseline: registers 1 → "), "{stdout}");
    assert!(stdout.contains(": 1 error, 0 warnings; compared against "), "{stdout}");
}

#[test]
fn a_version_2_baseline_is_compared_by_display_name_with_a_warning_to_rebless() {
    // What v2's `--bless` wrote: display names, spaces and all; `gone` is no longer built.
    let dir = baseline_keys();
    let entry = "spill_bytes=0 stack=0 shared=0 occupancy=100.0";
    std::fs::write(
        dir.path().join("launch-baseline.txt"),
        format!(
            "# cargo-launch baseline v2 records=3\n\
             fill sm_80 registers=255 {entry}\n\
             gone sm_80 registers=8 {entry}\n\
             void tmpl<8>(int*) sm_80 registers=1 {entry}\n"
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = check(dir.path(), &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "error[regression]: kernels/tmpl.cu:4: void tmpl<8>(int*) on sm_80: since the baseline: registers 1 → "
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("warning[baseline]: launch-baseline.txt:1: baseline format v2 keys kernels by display name"),
        "{stdout}"
    );
    assert!(
        stdout.contains("warning[baseline]: launch-baseline.txt:3: gone sm_80 is in the baseline but was not built"),
        "{stdout}"
    );
    assert!(!stdout.contains("fill on sm_80: not in the baseline"), "matched by display name: {stdout}");
    assert!(stdout.contains("note[new]: kernels/a.cu:2: fill on sm_90: not in the baseline"), "{stdout}");
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

#[test]
fn bless_refuses_a_baseline_path_that_is_not_a_regular_file_instead_of_hanging() {
    // The writer reads the old file first: a FIFO there blocked `--bless` forever.
    let dir = trap("arch = [\"sm_90\"]");
    let fifo = dir.path().join("fifo.txt");
    mkfifo(&fifo);
    let limit = std::time::Duration::from_secs(120);
    // Named with --baseline: refused before anything is built (no toolchain needed).
    check_cmd(dir.path(), &["--bless", "--baseline", fifo.to_str().unwrap()]).timeout(limit).assert().code(2).stderr(
        contains(format!("cannot write the baseline `{}` given with --baseline: not a regular file", fifo.display())),
    );
    check_cmd(dir.path(), &["--bless", "--baseline", dir.path().join("kernels").to_str().unwrap()])
        .timeout(limit)
        .assert()
        .code(2)
        .stderr(contains("given with --baseline: Is a directory"));
    // The default path: the same code whether the path was given or not.
    toolchain_root();
    let default = dir.path().join("launch-baseline.txt");
    mkfifo(&default);
    check_cmd(dir.path(), &["--bless"])
        .timeout(limit)
        .assert()
        .code(2)
        .stderr(contains(format!("cannot write the baseline `{}`: not a regular file", default.display())));
    check_cmd(dir.path(), &[])
        .timeout(limit)
        .assert()
        .code(2)
        .stderr(contains(format!("cannot read the baseline `{}`: not a regular file", default.display())));
    std::fs::remove_file(&default).unwrap();
    std::fs::create_dir(&default).unwrap();
    check_cmd(dir.path(), &["--bless"])
        .timeout(limit)
        .assert()
        .code(2)
        .stderr(contains(format!("cannot write the baseline `{}`: Is a directory", default.display())));
}

#[test]
fn a_baseline_that_cannot_be_written_is_exit_2_before_the_build() {
    // A path whose folder takes no new files (nothing can be created in /proc, even as root) is
    // found before the build, by creating a file there: exit 2 (issue 19 item 5; it was exit 4,
    // found only by the write after the build).
    toolchain_root();
    let dir = trap("arch = [\"sm_90\"]");
    check_cmd(dir.path(), &["--bless", "--baseline", "/proc/launch-baseline.txt"])
        .assert()
        .code(2)
        .stderr(contains("cannot write the baseline"));
}

#[test]
fn a_dangling_default_baseline_link_is_an_error_not_a_gate_turned_off() {
    toolchain_root();
    let dir = trap("arch = [\"sm_90\"]");
    let link = dir.path().join("launch-baseline.txt");
    std::os::unix::fs::symlink("baselines/gone.txt", &link).unwrap();
    let (code, stdout, stderr) = check(dir.path(), &[]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot read the baseline `{}`: a symbolic link to `baselines/gone.txt`, which does not exist",
            link.display()
        )),
        "{stderr}"
    );
    assert!(!stdout.contains("no baseline compared"), "{stdout}");
    let (code, _, stderr) = check(dir.path(), &["--bless"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("which does not exist"), "{stderr}");
    // A link to a baseline that is there is read through.
    std::fs::remove_file(&link).unwrap();
    let (code, _, stderr) =
        check(dir.path(), &["--bless", "--baseline", dir.path().join("real.txt").to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    std::os::unix::fs::symlink("real.txt", &link).unwrap();
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("compared against "), "{stdout}");
}

/// A file table whose `arch` leaves no kernel on the checked arch: the gate says what it did not
/// check and why (the table), as a warning, which fails `--deny warnings` (issue 19, item 4).
#[test]
fn a_file_arch_that_leaves_no_kernel_for_the_checked_arch_is_a_warning() {
    let dir = trap("arch = [\"sm_80\", \"sm_90\"]\n[package.metadata.launch.file.\"poly.cu\"]\narch = [\"sm_90\"]");
    let (code, stdout, stderr) = check(dir.path(), &["--arch", "sm_80"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("warning[empty]: Cargo.toml: nothing checked in package `fixture-trap"), "{stdout}");
    assert!(
        stdout.contains(
            "`: none of its 5 kernels is built for sm_80: kernels/poly.cu (5 kernels) is built for sm_90 only, by the \
             `arch` of [package.metadata.launch.file.\"poly.cu\"]"
        ),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("nothing to check: none of the 5 kernels is built for the selected arches: 0 errors, 1 warning"),
        "{stdout}"
    );
    let (code, stdout, stderr) = check(dir.path(), &["--arch", "sm_80", "--deny", "warnings"]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    // The arch the table keeps is checked as before, without the warning.
    let (code, stdout, stderr) = check(dir.path(), &["--arch", "sm_90"]);
    assert!(!stdout.contains("nothing checked"), "{code}\n{stdout}\n{stderr}");
}

//! What a build prints (issue 10 item 5): every failing file of one build, each once for all the
//! arches with the same message, with the compiler's message and `file:line`; compiler warnings
//! once per compile, never again from the cache (while `cargo launch report` still lists them).

use crate::support::{cargo_build, cargo_launch, fixture, run, toolchain_root};

/// Before: the build stopped at the first failed job and showed `kernels/b_undefined.cu` for sm_80
/// only.
#[test]
fn every_failing_file_is_shown_once_with_its_arches_and_line() {
    let tc = toolchain_root();
    let dir = fixture("build_output");
    let cache = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &tc));
    assert_ne!(code, 0, "{stderr}");
    for expected in [
        "2 kernel files failed to compile:",
        "  kernels/b_undefined.cu:2: error: identifier \"undefined_name\" is undefined (NVRTC 12.9.86, sm_80, sm_90)",
        "  kernels/c_wrong_type.cu:5: error: ",
        "NVRTC 12.9.86 failed to compile kernels/b_undefined.cu for sm_80, sm_90:",
        "NVRTC 12.9.86 failed to compile kernels/c_wrong_type.cu for sm_80, sm_90:",
    ] {
        assert!(stderr.contains(expected), "expected `{expected}` in:\n{stderr}");
    }
    for once in ["failed to compile kernels/b_undefined.cu", "failed to compile kernels/c_wrong_type.cu"] {
        assert_eq!(stderr.matches(once).count(), 1, "`{once}` once:\n{stderr}");
    }
    // File order.
    assert!(stderr.find("kernels/b_undefined.cu:2").unwrap() < stderr.find("kernels/c_wrong_type.cu:5").unwrap());
    assert!(!stderr.contains("panicked"), "{stderr}");

    // Every job ran: the good file compiled and is cached, so fixing the broken ones compiles
    // only them.
    std::fs::remove_file(dir.path().join("kernels/b_undefined.cu")).unwrap();
    std::fs::remove_file(dir.path().join("kernels/c_wrong_type.cu")).unwrap();
    let (code, _, stderr) = run(cargo_build(dir.path(), cache.path(), &tc).env("LAUNCH_BUILD_DEBUG", "1"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("2 jobs: 0 compiled"), "the good file's jobs were cached by the failed build:\n{stderr}");
}

/// Before: the manifest's warnings (NVRTC's log of every job, from the cache too) were printed
/// on every run of the build script, once per arch.
#[test]
fn nvrtc_warnings_are_shown_once_per_compile_and_never_from_the_cache() {
    let tc = toolchain_root();
    let dir = fixture("build_output");
    std::fs::remove_file(dir.path().join("kernels/b_undefined.cu")).unwrap();
    std::fs::remove_file(dir.path().join("kernels/c_wrong_type.cu")).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let warning = "variable \"unused\" was declared but never referenced";

    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &tc));
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(warning)).collect();
    assert_eq!(lines.len(), 1, "one line for both arches:\n{stderr}");
    assert!(lines[0].contains("kernels/a_warns.cu (sm_80, sm_90): kernels/a_warns.cu(3): warning"), "{stderr}");

    // The compile times were recorded beside the cache entries (issue 10 item 11: the next build
    // that compiles starts the longest jobs first), one line per job: `ms TAB arch TAB file`.
    let timings: Vec<_> = std::fs::read_dir(cache.path().join("kernel-timings")).unwrap().flatten().collect();
    assert_eq!(timings.len(), 1, "one history file per crate");
    let text = std::fs::read_to_string(timings[0].path()).unwrap();
    let mut jobs: Vec<(&str, &str)> =
        text.lines().map(|l| l.split('\t').collect::<Vec<_>>()).map(|f| (f[1], f[2])).collect();
    jobs.sort();
    assert_eq!(jobs, [("sm_80", "kernels/a_warns.cu"), ("sm_90", "kernels/a_warns.cu")], "{text}");

    // The script reruns (a kernel touched, content unchanged): it keeps its outputs without
    // reading the cache, and no compiler warning is printed again.
    let kernel = dir.path().join("kernels/a_warns.cu");
    let text = std::fs::read(&kernel).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&kernel, text).unwrap();
    let (code, _, stderr) = run(cargo_build(dir.path(), cache.path(), &tc).env("LAUNCH_BUILD_DEBUG", "1"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("its outputs are kept"), "the script reran and kept its outputs:\n{stderr}");
    assert!(!stderr.contains(warning), "a cached job's warning was printed again:\n{stderr}");

    // The manifest keeps it for the report.
    let (code, stdout, stderr) = run(cargo_launch()
        .args(["launch", "report", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .env("LAUNCH_CACHE_DIR", cache.path())
        .env("LAUNCH_TOOLCHAIN", &tc));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(warning) || stderr.contains(warning), "the report lists the warning:\n{stdout}\n{stderr}");
}

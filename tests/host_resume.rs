//! Issue 32, class 11: a host file's arches that finished are kept when its compile is stopped.
//! The `host_resume` fixture's one file takes nvcc about a second for sm_80 and tens of seconds for
//! sm_90; its first build is killed (the whole process group, as a CI runner's cancel or a
//! Ctrl-C does) as soon as the kernel cache holds its first entry, which is sm_80's finished work:
//! the rerun says it kept sm_80 and compiles sm_90 alone. (On the code before, nvcc's one run kept
//! nothing of an arch until it ended: the rerun compiled both arches again and this test fails.)
//! Needs the 13.0 toolchain and a host C++ compiler (skips, saying why).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::host_files::{buildable_fixture, toolchain_13_and_cxx};
use crate::support::{cargo_build, run, tail};

/// The entries of the kernel cache at `cache` (`kernels/<2 hex>/<key>`).
fn entries(cache: &Path) -> usize {
    let Ok(folders) = std::fs::read_dir(cache.join("kernels")) else { return 0 };
    folders.filter_map(Result::ok).filter_map(|f| std::fs::read_dir(f.path()).ok()).map(Iterator::count).sum()
}

#[test]
fn a_stopped_host_compile_keeps_the_arches_that_finished() {
    let Some(toolchain) = toolchain_13_and_cxx() else { return };
    let dir = buildable_fixture("host_resume", |t| t);
    let cache = tempfile::tempdir().unwrap();
    let mut build = cargo_build(dir.path(), cache.path(), &toolchain);
    let mut child = build.process_group(0).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("cargo build");
    let started = Instant::now();
    let limit = Duration::from_secs(600);
    while entries(cache.path()) == 0 && started.elapsed() < limit {
        assert!(child.try_wait().unwrap().is_none(), "the build ended before storing anything it compiled");
        std::thread::sleep(Duration::from_millis(20));
    }
    let finished_first = entries(cache.path());
    let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
    let _ = child.wait();
    assert_eq!(finished_first, 1, "nothing was kept within {limit:?}, or more than sm_80's work");

    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &toolchain));
    assert_eq!(code, 0, "the rerun failed:\n{}", tail(&stderr, 40));
    assert!(
        stderr.contains("kernels/slow.cu: sm_80 kept from a compile that did not finish"),
        "the rerun does not say it kept sm_80:\n{}",
        tail(&stderr, 40)
    );
    assert!(!stderr.contains("sm_80, sm_90 kept"), "{stderr}");
    // The finished compile's entries (its object and one per arch) hold everything: sm_80's kept
    // work is gone.
    assert_eq!(entries(cache.path()), 3, "the kept work stays in the cache after the compile finished");
}

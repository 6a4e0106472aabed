//! Issue 19 items 1 and 6: no file kind the build reads can hang it (a FIFO, a device, a folder, a
//! broken link, a link loop, an oversize file are each named), and a kernel many folders deep
//! builds (internal names do not grow with the source path).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{cargo_launch, fixture, toolchain_root};

/// `cargo launch report` on `dir`, killed after `limit`: (exit code, stdout, stderr), or a failed
/// test naming the hang.
fn report_within(dir: &Path, limit: Duration) -> (i32, String, String) {
    let mut child = cargo_launch()
        .args(["launch", "report", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cargo-launch");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`cargo launch report` did not finish within {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Before: "File name too long" on the work file `kernels+folder_001+…+k.cu.sm_90.ptx`.
#[test]
fn a_kernel_sixty_folders_deep_builds_and_reports() {
    toolchain_root();
    let dir = fixture("bad_config");
    let deep: String = (0..60).map(|i| format!("folder_{i:03}/")).collect();
    let folder = dir.path().join("kernels").join(&deep);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::rename(dir.path().join("kernels/k.cu"), folder.join("deep.cu")).unwrap();
    let (code, stdout, stderr) = report_within(dir.path(), Duration::from_secs(300));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("deep.cu"), "{stdout}");
    assert!(!stderr.contains("too long"), "{stderr}");
}

/// Makes a FIFO at `path`.
#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Before: the build script blocked on `kernels/f.cu` forever (killed at 120 s). Now the build
/// fails at once, naming the file, what it is and how to leave it out, at the file.
#[cfg(unix)]
#[test]
fn a_fifo_kernel_file_fails_at_once_naming_it() {
    toolchain_root();
    let dir = fixture("bad_config");
    mkfifo(&dir.path().join("kernels/f.cu"));
    let (code, _, stderr) = report_within(dir.path(), Duration::from_secs(240));
    assert_eq!(code, 2, "a file that is not a file is the user's input (exit 2): {stderr}");
    assert!(stderr.contains("`kernels/f.cu` is a FIFO, not a file"), "{stderr}");
    assert!(stderr.contains("exclude = [\"f.cu\"]"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Before: NVRTC (and the cache key's header digests before it) blocked on a FIFO header. Now the
/// build fails before compiling, at the `#include` line.
#[cfg(unix)]
#[test]
fn a_fifo_header_fails_at_once_at_its_include() {
    toolchain_root();
    let dir = fixture("bad_config");
    let k = dir.path().join("kernels/k.cu");
    let text = std::fs::read_to_string(&k).unwrap();
    std::fs::write(&k, format!("#include \"h.cuh\"\n{text}")).unwrap();
    mkfifo(&dir.path().join("kernels/h.cuh"));
    let (code, _, stderr) = report_within(dir.path(), Duration::from_secs(240));
    assert_eq!(code, 2, "a file that is not a file is the user's input (exit 2): {stderr}");
    assert!(stderr.contains("kernels/k.cu:1:1: `kernels/h.cuh` is a FIFO, not a file"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

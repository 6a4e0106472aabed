//! Builds whose tools misbehave or whose outputs cannot be used: a ptxas that hangs is stopped at
//! `LAUNCH_COMPILE_TIMEOUT`, a ptxas that writes no cubin is named as such, an inline-asm error
//! is mapped from the generated PTX back to the kernel, and a failed build leaves no statistics.
//!
//! Each test builds a copy of `fixtures/crates/broken_kernel` with its kernel file replaced, with
//! its own cache folder, and names the toolchain explicitly: the pinned one, or a fake one whose
//! NVRTC is the pinned one and whose ptxas is a shell script.
#![cfg(unix)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{cargo_build, fixture, root, run, toolchain_root};

/// A copy of the `broken_kernel` fixture whose one kernel file, `kernels/broken.cu`, is `kernel`.
fn crate_with(kernel: &str) -> tempfile::TempDir {
    let dir = fixture("broken_kernel");
    fs::write(dir.path().join("kernels/broken.cu"), kernel).unwrap();
    dir
}

const GOOD: &str = "extern \"C\" __global__ void scale(float* p) {\n    p[threadIdx.x] *= 2.0f;\n}\n";

/// A toolchain root whose NVRTC and headers are the pinned ones and whose ptxas is a shell script
/// that answers `--version` like ptxas 12.9.86 and otherwise runs `body`.
fn fake_toolchain(dir: &Path, body: &str) -> PathBuf {
    let real = toolchain_root();
    let root = dir.join("toolchain");
    let nvidia = root.join("nvidia");
    fs::create_dir_all(nvidia.join("cuda_nvcc/bin")).unwrap();
    for part in ["cuda_nvrtc", "cuda_runtime"] {
        std::os::unix::fs::symlink(real.join("nvidia").join(part), nvidia.join(part)).unwrap();
    }
    fs::create_dir_all(root.join("nvidia_cuda_nvrtc_cu12-12.9.86.dist-info")).unwrap();
    let script = format!(
        "#!/bin/sh\n\
         if [ \"$1\" = \"--version\" ]; then echo 'Cuda compilation tools, release 12.9, V12.9.86'; exit 0; fi\n\
         {body}\n"
    );
    let ptxas = nvidia.join("cuda_nvcc/bin/ptxas");
    fs::write(&ptxas, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&ptxas, fs::Permissions::from_mode(0o755)).unwrap();
    root
}

#[test]
fn a_ptxas_that_hangs_is_stopped_at_the_time_limit() {
    let tc = toolchain_root();
    let dir = crate_with(GOOD);
    let cache = tempfile::tempdir().unwrap();
    // A first build with the real toolchain compiles the build script and the dependencies, so
    // the timed build below runs only the build script.
    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &tc));
    assert_eq!(code, 0, "{stderr}");

    let tools = tempfile::tempdir().unwrap();
    let pid_file = tools.path().join("ptxas.pid");
    // `exec`: the process that hangs is the one that must be killed (and its pid is known).
    let fake = fake_toolchain(tools.path(), &format!("echo $$ > '{}'\nexec sleep 1000", pid_file.display()));
    let started = Instant::now();
    let mut cmd = cargo_build(dir.path(), cache.path(), &fake);
    cmd.env("LAUNCH_COMPILE_TIMEOUT", "2");
    let (code, _, stderr) = run(&mut cmd);
    let took = started.elapsed();
    assert_ne!(code, 0, "a hanging ptxas must fail the build:\n{stderr}");
    assert!(took < Duration::from_secs(60), "the build took {took:?} with a 2 s limit:\n{stderr}");
    for expected in
        ["ptxas 12.9.86 compiling kernels/broken.cu for sm_90 did not finish within 2 s", "LAUNCH_COMPILE_TIMEOUT"]
    {
        assert!(stderr.contains(expected), "expected `{expected}` in:\n{stderr}");
    }
    let pid = fs::read_to_string(&pid_file).expect("the fake ptxas ran");
    assert!(!Path::new("/proc").join(pid.trim()).exists(), "the hanging ptxas (pid {}) was left running", pid.trim());
}

#[test]
fn a_ptxas_that_writes_no_cubin_says_so_and_shows_its_log() {
    toolchain_root();
    let dir = crate_with(GOOD);
    let cache = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let fake = fake_toolchain(tools.path(), "echo 'ptxas warning : this ptxas writes nothing' >&2\nexit 0");
    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &fake));
    assert_ne!(code, 0, "{stderr}");
    for expected in [
        "ptxas 12.9.86 failed to compile kernels/broken.cu for sm_90",
        "ptxas exited successfully but produced no output",
        "this ptxas writes nothing",
    ] {
        assert!(stderr.contains(expected), "expected `{expected}` in:\n{stderr}");
    }
    assert!(!stderr.contains("No such file"), "{stderr}");
}

/// What a ptxas that writes no cubin printed is shown from either stream (issue 19 item 7: a line
/// on stdout was reported as "it printed nothing").
#[test]
fn a_ptxas_that_writes_no_cubin_is_never_said_to_have_printed_nothing_when_it_printed() {
    toolchain_root();
    for redirect in ["", " >&2"] {
        let dir = crate_with(GOOD);
        let cache = tempfile::tempdir().unwrap();
        let tools = tempfile::tempdir().unwrap();
        let fake = fake_toolchain(tools.path(), &format!("echo 'a line from the fake ptxas'{redirect}\nexit 0"));
        let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &fake));
        assert_ne!(code, 0, "{stderr}");
        assert!(stderr.contains("a line from the fake ptxas"), "`{redirect}`: {stderr}");
        assert!(!stderr.contains("printed nothing"), "`{redirect}`: {stderr}");
    }
}

#[test]
fn an_inline_asm_error_names_the_kernel_and_its_source_line() {
    let tc = toolchain_root();
    let kernel = "extern \"C\" __global__ void fine(int* p) { p[0] = 1; }\n\
                  \n\
                  extern \"C\" __global__ void bad_asm(int* p) {\n\
                  \x20   int x;\n\
                  \x20   asm volatile(\"bogus.instr %0;\" : \"=r\"(x));\n\
                  \x20   p[0] = x;\n\
                  }\n";
    let dir = crate_with(kernel);
    let cache = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &tc));
    assert_ne!(code, 0, "{stderr}");
    // ptxas's own message (which points into OUT_DIR) stays; the note says where it came from.
    assert!(stderr.contains(".ptx, line "), "{stderr}");
    assert!(
        stderr.contains("kernels/broken.cu:3:28: note: PTX line ")
            && stderr.contains("comes from an `asm` statement in kernel `bad_asm`, defined here"),
        "{stderr}"
    );
}

#[test]
fn a_build_that_fails_after_compiling_writes_no_statistics() {
    toolchain_root();
    // Both kernels compile, then the build fails: both would be generated as `ADD_ONE`.
    let kernel = "extern \"C\" __global__ void add_one(int* p) { p[0] += 1; }\n\
                  extern \"C\" __global__ void add__one(int* p) { p[0] += 1; }\n";
    let dir = crate_with(kernel);
    let cache = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &toolchain_root()));
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("would be generated as `kernels::broken::ADD_ONE`"), "{stderr}");

    // The copy's package name is unique, so its build folders are this test's alone.
    let text = fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
    let name = text.lines().find_map(|l| l.strip_prefix("name = ")).unwrap().trim_matches('"').to_string();
    let build = root().join("target/fixtures/debug/build");
    let out_dirs: Vec<PathBuf> = fs::read_dir(&build)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let f = p.file_name().unwrap().to_string_lossy();
            f.strip_prefix(&name).is_some_and(|rest| rest.starts_with('-')) && p.join("out").is_dir()
        })
        .map(|p| p.join("out"))
        .collect();
    assert!(!out_dirs.is_empty(), "no OUT_DIR of {name} under {}", build.display());
    for out in out_dirs {
        let stats = out.join("launch/build-stats.json");
        assert!(!stats.exists(), "a failed build wrote {}", stats.display());
    }
}

/// A kernel that an `#if __CUDA_ARCH__` leaves out of every listed arch's PTX is named in a
/// warning (before: it vanished without a word, its `@launch` unapplied); a macro's template
/// "definition" is not a kernel and is not named.
#[test]
fn a_kernel_in_no_ptx_of_the_listed_arches_is_named() {
    let kernel = "#define STAMP(NAME) \\\n    extern \"C\" __global__ void NAME(float* p) { p[0] = 1.0f; }\nSTAMP(stamped)\n\
                  extern \"C\" __global__ void everywhere(float* p) { p[0] = 1.0f; }\n\
                  #if __CUDA_ARCH__ >= 1000\n// @launch(128)\nextern \"C\" __global__ void blackwell_only(float* p) { p[0] = 2.0f; }\n#endif\n";
    let dir = crate_with(kernel);
    let cache = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &toolchain_root()));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("kernels/broken.cu: `blackwell_only` (line 7) in no PTX of sm_90: an `#if`"), "{stderr}");
    assert!(!stderr.contains("`NAME`") && !stderr.contains("`everywhere`"), "{stderr}");
}

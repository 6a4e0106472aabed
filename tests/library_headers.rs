//! A kernel that includes a CUDA library's header (`curand_kernel.h`): without the library's
//! wheel the build fails with the compiler's message and a note naming the wheel and the
//! `cargo launch setup --with` command; after that command it builds and reports, the headers
//! found by the build itself.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use launch_engine::tooling::toolchain::{pin, pin_dir};
use launch_engine::tooling::{var, Env};

use crate::support::{cargo_launch, fixture, run};

/// Whether tests must fail rather than skip when something they need is missing.
fn required() -> bool {
    Env::cli().get(var::LAUNCH_TEST_REQUIRE_TOOLCHAINS).is_some_and(|v| v == "1")
}

/// The installed CUDA 13.0 toolchain (`cargo launch setup --toolchain 13.0`); `None`, saying
/// the test is skipped, without it (`LAUNCH_TEST_REQUIRE_TOOLCHAINS=1`: a failure).
fn cuda_13() -> Option<PathBuf> {
    let dir = pin_dir(&Env::cli(), &pin::CUDA_13_0).filter(|d| d.join(".complete").is_file());
    if dir.is_none() {
        assert!(!required(), "the CUDA 13.0 toolchain is not installed: run `cargo launch setup --toolchain 13.0`");
        eprintln!("skipped: the CUDA 13.0 toolchain is not installed (`cargo launch setup --toolchain 13.0`)");
    }
    dir
}

/// A cache folder for `LAUNCH_CACHE_DIR` whose 13.0 toolchain is `toolchain` (linked, not
/// copied): what else it holds is the test's own.
fn cache_with(cache: &Path, toolchain: &Path) {
    let link = cache.join("toolchain").join(format!("cuda-{}", pin::CUDA_13_0.version));
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    if std::fs::symlink_metadata(&link).is_err() {
        std::os::unix::fs::symlink(toolchain, &link).unwrap();
    }
}

/// Whether the package index answers (setup downloads the wheel from it).
fn index_reachable() -> bool {
    let Ok(addrs) = ("pypi.org", 443).to_socket_addrs() else { return false };
    addrs.into_iter().any(|a| TcpStream::connect_timeout(&a, Duration::from_secs(5)).is_ok())
}

fn report(manifest: &Path, cache: &Path) -> (i32, String, String) {
    run(cargo_launch()
        .args(["launch", "report", "--no-setup", "--manifest-path"])
        .arg(manifest)
        .env("LAUNCH_CACHE_DIR", cache))
}

#[test]
fn a_library_header_is_named_with_its_wheel_and_setup_with_installs_it() {
    let Some(toolchain) = cuda_13() else { return };
    let dir = fixture("library_headers");
    let manifest = dir.path().join("Cargo.toml");

    // Without cuRAND: a cache that has the toolchain and nothing else.
    let bare = tempfile::tempdir().unwrap();
    cache_with(bare.path(), &toolchain);
    let (code, _, stderr) = report(&manifest, bare.path());
    assert_eq!(code, 4, "{stderr}");
    // NVRTC's message for rng.cu, nvcc's (its host compiler's) for the host file, each with the note.
    assert!(
        stderr.contains("kernels/rng.cu(2): catastrophic error: cannot open source file \"curand_kernel.h\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("kernels/host_rng.cu:2:10: fatal error: curand_kernel.h: No such file or directory"),
        "{stderr}"
    );
    let note = "note: `curand_kernel.h` is cuRAND's, shipped in the `nvidia-curand` wheel: \
                `cargo launch setup --toolchain 13.0 --with curand` installs it pinned beside the toolchain";
    assert_eq!(stderr.matches(note).count(), 2, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // `check` places the note with the error it is about.
    let (code, stdout, _) = run(cargo_launch()
        .args(["launch", "check", "--no-setup", "--manifest-path"])
        .arg(&manifest)
        .env("LAUNCH_CACHE_DIR", bare.path()));
    assert_eq!(code, 4, "{stdout}");
    assert!(stdout.contains("note[compile]: kernels/rng.cu:2: `curand_kernel.h` is cuRAND's"), "{stdout}");

    // With it: setup into a cache kept between runs, so the wheel is downloaded once.
    let kept = Path::new(env!("CARGO_TARGET_TMPDIR")).join("library-headers-cache");
    cache_with(&kept, &toolchain);
    let installed = kept.join("toolchain").join(format!("cuda-{}-curand/.complete", pin::CUDA_13_0.version));
    if !installed.is_file() && !index_reachable() {
        assert!(!required(), "pypi.org is unreachable: cannot install nvidia-curand");
        eprintln!("skipped the install: pypi.org is unreachable");
        return;
    }
    let (code, _, stderr) = run(cargo_launch()
        .args(["launch", "setup", "--toolchain", "13.0", "--with", "curand"])
        .env("LAUNCH_CACHE_DIR", &kept));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("curand: nvidia-curand 10.4.0.35 for CUDA 13.0"), "{stderr}");
    let (code, stdout, stderr) = report(&manifest, &kept);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("uniform_fill  sm_90"), "{stdout}");
    assert!(stdout.contains("normal_fill(float*, unsigned long long, int)  sm_90"), "{stdout}");
}

/// An absolute `include` folder, outside the crate: its header is found, cargo is told to rerun
/// the build when it changes, and a message about it shows its path as given.
#[test]
fn an_absolute_include_folder_is_searched_and_tracked() {
    let Some(_) = cuda_13() else { return };
    let shared = tempfile::tempdir().unwrap();
    let header = shared.path().join("shared.cuh");
    std::fs::write(&header, "#define SCALE 2.0f\n").unwrap();
    let dir = fixture("library_headers");
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let include = format!("include = [{:?}]", shared.path().display().to_string());
    std::fs::write(&manifest, text.replace("host = [\"host_rng.cu\"]", &include)).unwrap();
    std::fs::remove_file(dir.path().join("kernels/host_rng.cu")).unwrap();
    std::fs::write(
        dir.path().join("kernels/rng.cu"),
        "#include \"shared.cuh\"\nextern \"C\" __global__ void scaled(float* p) { p[0] *= SCALE; }\n",
    )
    .unwrap();
    let (code, stdout, stderr) =
        run(cargo_launch().args(["launch", "report", "--no-setup", "--manifest-path"]).arg(&manifest));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("scaled  sm_90"), "{stdout}");
    // The build script's output (in the fixtures' target folder) announces the header.
    let announced = format!("cargo:rerun-if-changed={}", header.display());
    let build = crate::support::root().join("target/fixtures/debug/build");
    let tracked = std::fs::read_dir(&build)
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| std::fs::read_to_string(e.path().join("output")).is_ok_and(|o| o.lines().any(|l| l == announced)));
    assert!(tracked, "no `{announced}` in {}", build.display());
    // A change of the header reruns the build, and its error names the header where it is.
    std::fs::write(&header, "#define SCALE 2.0f +\n").unwrap();
    let (code, _, stderr) =
        run(cargo_launch().args(["launch", "report", "--no-setup", "--manifest-path"]).arg(&manifest));
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains(&format!("{}", header.display())), "{stderr}");
}

/// `--with` names a library setup pins, for every line asked for; anything else is a usage
/// error (2) before anything is downloaded.
#[test]
fn setup_with_refuses_a_library_it_does_not_pin() {
    let (code, _, stderr) = run(cargo_launch().args(["launch", "setup", "--with", "cublas"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("`cublas` is not a library setup installs; valid choices: curand, nvtx"), "{stderr}");
}

//! Issue 32, class 11: `host` files built as their projects build them, with separable
//! compilation. `-rdc=true` reaches nvcc for `host` files (from a file table), launch-build runs
//! nvcc's device link into the library, the program that calls every launcher links, and the
//! report's numbers for a kernel that calls another file's device function are the device link's
//! (nvlink's), not the compile's: the compile's ptxas saw only a call. Needs the 13.0 toolchain
//! and a host C++ compiler (skipped, saying why, without them).

use std::path::Path;

use launch_schema::report::Document;

use crate::host_files::{buildable_fixture, report_in, toolchain_13_and_cxx};
use crate::support::{cargo_build, cargo_launch, exact, root, run, with_metadata};

/// nvlink's `used N registers` and `N stack` for `kernel` on `arch` when `files` (in `dir`) are
/// compiled with `-rdc=true` and device-linked by hand: the numbers the report must show.
fn nvlink_numbers(toolchain: &Path, dir: &Path, files: &[&str], kernel: &str, arch: &str) -> (u32, u32) {
    let nvcc = toolchain.join("nvidia/cu13/bin/nvcc");
    let work = tempfile::tempdir().expect("temp dir");
    let mut objects = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let o = work.path().join(format!("{i}.o"));
        let status = std::process::Command::new(&nvcc)
            .args(["-c", "-rdc=true", "-static-global-template-stub=false", "-O2", "-Xcompiler", "-fPIC"])
            .arg(format!("-gencode=arch=compute_{},code={arch}", &arch[3..]))
            .arg(dir.join(f))
            .arg("-o")
            .arg(&o)
            .status()
            .expect("run nvcc");
        assert!(status.success(), "nvcc -c {f}");
        objects.push(o);
    }
    let out = std::process::Command::new(&nvcc)
        .args(["-dlink", "-Xnvlink", "-v", "-Xcompiler", "-fPIC"])
        .arg(format!("-gencode=arch=compute_{},code={arch}", &arch[3..]))
        .args(&objects)
        .arg("-o")
        .arg(work.path().join("link.o"))
        .output()
        .expect("run nvcc -dlink");
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let used = text
        .lines()
        .skip_while(|l| !l.contains(&format!("Function properties for '{kernel}'")))
        .nth(1)
        .unwrap_or_else(|| panic!("no nvlink line for {kernel}:\n{text}"));
    let field = |unit: &str| {
        used.split(", ").find_map(|f| f.strip_suffix(unit)).and_then(|f| f.rsplit(' ').next()?.parse().ok())
    };
    (field(" registers").expect("registers"), field(" stack").expect("stack"))
}

/// The fixture's report has every kernel with the device link's numbers; `cargo build` links the
/// program that calls every launcher (which runs, or says the runtime's error without a GPU).
/// Without `-rdc=true` nvcc cannot compile ops.cu (its kernel calls kernels.cu's function).
#[test]
fn separately_compiled_host_files_are_device_linked_and_the_program_links() {
    let Some(toolchain) = toolchain_13_and_cxx() else { return };
    let dir = buildable_fixture("host_rdc", |t| t);
    let manifest = dir.path().join("Cargo.toml");
    let report = |format: &str| report_in(format, &manifest);
    let text = report("text");
    assert!(text.contains("host files (2): nvcc 13.0.88"), "{text}");
    assert!(text.contains("  nvlink info    : used "), "the device link's line, shown:\n{text}");
    let doc = exact(&report("json"), Document::from_json);
    let records = |kernel: &str| doc.records.iter().filter(|r| r.kernel.name == kernel).collect::<Vec<_>>();
    // Every kernel of both host files on both arches, and the NVRTC file's.
    for k in ["_Z3mixPKfPfi", "_Z5scaleIfEvPT_S0_i", "_Z5scaleIdEvPT_S0_i", "offset"] {
        assert_eq!(records(k).len(), 2, "{k}:\n{text}");
    }
    let mix = records("_Z3mixPKfPfi").into_iter().find(|r| r.arch.to_string() == "sm_90").expect("mix on sm_90");
    let files = ["kernels/rdc/kernels.cu", "kernels/rdc/ops.cu"];
    let (registers, stack) = nvlink_numbers(&toolchain, dir.path(), &files, "_Z3mixPKfPfi", "sm_90");
    let r = &mix.ptxas.resources;
    assert_eq!((r.registers, r.stack_frame), (registers, stack), "{text}");
    // What makes the test mean something: the compile alone saw a call, with no stack and no barrier.
    assert!(stack > 0 && r.barriers == 1 && r.shared_static > 0, "{r:?}");
    let compile_line = mix.ptxas.lines.iter().find(|l| l.contains(": Used ")).expect("ptxas's Used line");
    assert!(!compile_line.contains(&format!("Used {registers} registers")), "{compile_line}");

    let cache = tempfile::tempdir().expect("temp dir");
    let (code, _, stderr) = run(&mut cargo_build(dir.path(), cache.path(), &toolchain));
    assert_eq!(code, 0, "cargo build failed (the program must link):\n{stderr}");
    let (code, stdout, stderr) = run(&mut std::process::Command::new(root().join("target/fixtures/debug/host-rdc")));
    assert!(stdout.contains("kernel _Z3mixPKfPfi (kernels/rdc/ops.cu): sm_80 "), "{stdout}");
    match code {
        0 => {
            assert!(stdout.contains(": 0 wrong") && stdout.ends_with("0 differences from the driver\nok\n"), "{stdout}")
        }
        1 => assert!(stderr.starts_with("rdc_scale_f32 failed: CUDA error "), "{stderr}"),
        _ => panic!("the program failed ({code}):\n{stdout}\n{stderr}"),
    }

    // Without separable compilation, the call to another file's function does not compile.
    let dir = buildable_fixture("host_rdc", |t| t.replace("\"-rdc=true\", ", ""));
    let (code, _, stderr) = run(cargo_launch()
        .args(["launch", "report", "--no-setup", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("kernels/rdc/ops.cu"), "{stderr}");
}

/// `-rdc=true` is for `host` files: where an NVRTC file would get it, it is refused at the flag,
/// naming the file and the way (a table of the host files); nvcc's `-dc` and `-dlink` are
/// refused with what to write instead.
#[test]
fn relocatable_code_is_refused_for_nvrtc_files_with_the_way_to_host_files() {
    crate::support::toolchain_root();
    let report = |meta: &str| {
        let dir = with_metadata(meta);
        run(cargo_launch()
            .args(["launch", "report", "--no-setup", "--manifest-path"])
            .arg(dir.path().join("Cargo.toml")))
    };
    let (code, _, stderr) = report("arch = [\"sm_90\"]\nflags = [\"-rdc=true\"]");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`-rdc=true` would reach kernels/k.cu, which NVRTC compiles: relocatable device code"),
        "{stderr}"
    );
    assert!(stderr.contains("`host` files take it"), "{stderr}");
    for (flag, why) in [("-dc", "write `-rdc=true`"), ("-dlink", "runs nvcc's device link itself")] {
        let (code, _, stderr) = report(&format!("arch = [\"sm_90\"]\nflags = [\"{flag}\"]"));
        assert_eq!(code, 2, "{flag}: {stderr}");
        assert!(stderr.contains(&format!("`{flag}` is not allowed: ")) && stderr.contains(why), "{flag}: {stderr}");
    }
    // `-rdc=false` is what NVRTC does anyway: accepted.
    let (code, _, stderr) = report("arch = [\"sm_90\"]\nflags = [\"-rdc=false\"]");
    assert_eq!(code, 0, "{stderr}");
}

use launch_analysis::{FindingKind, Severity};
use launch_schema::check::Document as CheckDoc;
use launch_schema::report::{Document as ReportDoc, ImageKind};

use crate::support::{cargo_launch, exact, fixture, run, toolchain_root};

fn launch(dir: &std::path::Path, cmd: &str, extra: &[&str]) -> (i32, String, String) {
    toolchain_root();
    run(cargo_launch().args(["launch", cmd, "--manifest-path"]).arg(dir.join("Cargo.toml")).args(extra))
}

#[test]
fn a_min_driver_older_than_the_toolchains_major_is_an_error() {
    let dir = fixture("driver_too_old");
    let (code, stdout, stderr) = launch(dir.path(), "check", &[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "error[driver]: Cargo.toml:11:1: nothing embedded for kernels/saxpy.cu loads on sm_80 with a CUDA 11.8 \
             driver (`min-driver`): cubins built by CUDA 12.9 need a CUDA 12 driver (>= 12.0, Linux 525.60.13+); PTX \
             compute_80 (ISA 8.8) needs a driver >= 12.9; raise `min-driver` or build with an older toolchain"
        ),
        "{stdout}"
    );
    let (_, json, _) = launch(dir.path(), "check", &["--format", "json"]);
    let doc = exact(&json, CheckDoc::from_json);
    let kinds: Vec<(Severity, FindingKind)> = doc.findings.iter().map(|f| (f.severity, f.kind)).collect();
    assert_eq!(kinds, [(Severity::Error, FindingKind::Driver), (Severity::Warning, FindingKind::Driver)], "{json}");
    assert_eq!(doc.schema, 3);
}

#[test]
fn a_12_4_driver_runs_the_listed_arch_and_warns_about_newer_gpus() {
    let dir = fixture("driver_newer_gpu");
    let (code, stdout, stderr) = launch(dir.path(), "check", &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "warning[driver]: Cargo.toml:11:1: a GPU newer than every listed arch (sm_90, sm_100 …) would find nothing \
             to load from kernels/saxpy.cu with a CUDA 12.4 driver (`min-driver`): cubins run only on their own major version, \
             and the PTX compute_80 (ISA 8.8) needs a driver >= 12.9"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("0 errors, 1 warning"), "{stdout}");
    let (code, _, _) = launch(dir.path(), "check", &["--deny", "warnings"]);
    assert_eq!(code, 1);

    // The report's header says what each image needs; its JSON has the same.
    let (code, stdout, stderr) = launch(dir.path(), "report", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "\ndrivers: cubins sm_80: driver >= 12.0 (CUDA 12 cubins); PTX compute_80 (ISA 8.8): driver >= 12.9; \
             min-driver 12.4\n"
        ),
        "{stdout}"
    );
    let (_, json, _) = launch(dir.path(), "report", &["--format", "json"]);
    let doc = exact(&json, ReportDoc::from_json);
    let needs: Vec<(ImageKind, Option<&str>, Option<&str>, bool)> = doc
        .drivers
        .iter()
        .map(|d| (d.image, d.ptx_isa.as_deref(), d.min_driver.as_deref(), d.loads_on_min_driver))
        .collect();
    assert_eq!(
        needs,
        [(ImageKind::Cubin, None, Some("12.0"), true), (ImageKind::Ptx, Some("8.8"), Some("12.9"), false)]
    );
}

//! Issue 19 item 7: every warning about an entry of `[package.metadata.launch]` that matches
//! nothing — an `exclude` entry, a `file."<pattern>"` table, a `kernel."<key>"` table — carries
//! `Cargo.toml:LINE:COL` of the entry, in the build script's warnings, `report` and `check`; and
//! an `exclude` that leaves out every file says so instead of "no .cu file".

use std::path::Path;

use crate::support::{cargo_build, cargo_launch, run, toolchain_root, with_metadata};

const META: &str = "arch = [\"sm_90\"]\nexclude = [\"gone.cu\"]\n\n\
                    [package.metadata.launch.file.\"nope.cu\"]\nflags = [\"-DX\"]\n\n\
                    [package.metadata.launch.kernel.nope]\nthreads = 128\n";

/// `Cargo.toml:LINE:COL` of the first `needle` in `dir`'s Cargo.toml.
fn place(dir: &Path, needle: &str) -> String {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let (n, line) = text.lines().enumerate().find(|(_, l)| l.contains(needle)).expect(needle);
    format!("Cargo.toml:{}:{}", n + 1, line.find(needle).unwrap() + 1)
}

#[test]
fn every_matches_nothing_warning_is_located_in_the_build_report_and_check() {
    let tc = toolchain_root();
    let dir = with_metadata(META);
    let exclude = format!("{}: exclude entry `gone.cu` matches no .cu file", place(dir.path(), "\"gone.cu\""));
    let file = format!("{}: [package.metadata.launch.file.\"nope.cu\"] matches no", place(dir.path(), "\"nope.cu\""));
    let kernel = format!(
        "{}: [package.metadata.launch.kernel.nope] names no kernel",
        place(dir.path(), "nope]").replace(']', "")
    );
    // Every kind of "matches nothing" warning, and where each one is shown.
    let kinds = [&exclude, &file, &kernel];
    assert_eq!(kinds.len(), 3);

    let cache = tempfile::tempdir().unwrap();
    let (code, _, build) = run(&mut cargo_build(dir.path(), cache.path(), &tc));
    assert_eq!(code, 0, "{build}");
    for w in [&exclude, &file] {
        assert!(build.contains(w.as_str()), "the build script's warning `{w}` in:\n{build}");
    }
    let (code, out, err) = run(cargo_launch().args(["launch", "report"]).current_dir(dir.path()));
    assert_eq!(code, 0, "{err}");
    let report = format!("{out}\n{err}");
    for w in kinds {
        assert!(report.contains(w.as_str()), "report: `{w}` in:\n{report}");
    }
    let (code, out, err) = run(cargo_launch().args(["launch", "check"]).current_dir(dir.path()));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains(&format!("warning[config]: {kernel}")), "check: `{kernel}` in:\n{out}");
    assert!(!format!("{build}{report}{out}").contains("Cargo.toml: "), "no warning without a line:\n{report}\n{out}");
}

#[test]
fn an_exclude_that_leaves_out_every_file_says_so_and_by_which_entry() {
    let tc = toolchain_root();
    let dir = with_metadata("arch = [\"sm_90\"]\nexclude = [\"**\"]");
    let cache = tempfile::tempdir().unwrap();
    let (code, _, build) = run(&mut cargo_build(dir.path(), cache.path(), &tc));
    assert_eq!(code, 0, "{build}");
    let expected = format!(
        "kernels: `exclude` leaves out every .cu file of the kernel folder (1), by `**` ({})",
        place(dir.path(), "\"**\"")
    );
    assert!(build.contains(&expected), "`{expected}` in:\n{build}");
    assert!(!build.contains("no .cu file in the kernel folder"), "a false statement:\n{build}");
}

/// `-DN=1` in `flags` and `defines = { N = 2 }` both reach NVRTC and the flag wins (it comes
/// later): a warning at the flag, for the crate's flags and a file table's; none when they agree.
#[test]
fn a_define_flag_that_contradicts_defines_is_a_located_warning() {
    let tc = toolchain_root();
    let cases = [
        ("arch = [\"sm_90\"]\nflags = [\"-DN=1\"]\ndefines = { N = 2 }", Some("\"-DN=1\"")),
        (
            "arch = [\"sm_90\"]\ndefines = { N = 2 }\n[package.metadata.launch.file.\"k.cu\"]\nflags = [\"-DN\"]",
            Some("\"-DN\""),
        ),
        ("arch = [\"sm_90\"]\nflags = [\"-DN=2\"]\ndefines = { N = 2 }", None),
    ];
    for (meta, flag) in cases {
        let dir = with_metadata(meta);
        let cache = tempfile::tempdir().unwrap();
        let (code, _, build) = run(&mut cargo_build(dir.path(), cache.path(), &tc));
        assert_eq!(code, 0, "{build}");
        match flag {
            Some(flag) => {
                let expected = format!(
                    "{}: `-D{}` in `flags` and `defines` give macro `N` different values",
                    place(dir.path(), flag),
                    flag.trim_matches('"').trim_start_matches("-D")
                );
                assert!(build.contains(&expected), "{meta}: `{expected}` in:\n{build}");
            }
            None => assert!(!build.contains("different values"), "{meta}: agreeing values:\n{build}"),
        }
    }
}

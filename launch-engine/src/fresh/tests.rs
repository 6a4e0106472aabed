use std::fs;
use std::time::Instant;

use super::*;

/// A launch folder inside a fresh `OUT_DIR` with a build's outputs: two cubins, the PTX, the
/// generated module, the manifest and a static library beside it.
fn outputs_dir() -> (tempfile::TempDir, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let launch = out.path().join("launch");
    for (path, bytes) in [
        ("cubin/a.sm_80.cubin", "one"),
        ("cubin/a.sm_90.cubin", "two"),
        ("ptx/a.ptx", "ptx"),
        ("kernels.rs", "mod"),
        ("manifest.json", "{}"),
        ("build-stats.json", "{}"),
        ("work/scratch", "x"),
    ] {
        let p = launch.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
    fs::write(out.path().join("liblaunch_host_x.a"), "ar").unwrap();
    (out, launch)
}

fn gate(launch: &Path) -> Gate {
    Gate { before: Some(Sha256::new()), launch_dir: launch.to_path_buf(), started: Instant::now() }
}

#[test]
fn a_recorded_build_is_kept_only_with_the_same_fingerprint_and_outputs() {
    let (_out, launch) = outputs_dir();
    record(&launch, Some("f1"), Some("launch_host_x"), vec!["w".into()]).unwrap();
    let g = gate(&launch);
    let kept = g.kept(Some("f1")).expect("kept");
    let paths: Vec<&str> = kept.record.outputs.iter().map(|o| o.path.as_str()).collect();
    // The scratch folder, the statistics and the record itself are no outputs.
    assert_eq!(
        paths,
        [
            "launch/cubin/a.sm_80.cubin",
            "launch/cubin/a.sm_90.cubin",
            "launch/kernels.rs",
            "launch/manifest.json",
            "launch/ptx/a.ptx",
            "liblaunch_host_x.a"
        ]
    );
    assert_eq!(kept.record.warnings, ["w"]);
    assert!(g.kept(Some("f2")).is_none(), "another fingerprint");
    assert!(g.kept(None).is_none(), "no fingerprint");
    fs::write(launch.join("work/scratch"), "changed").unwrap();
    fs::write(launch.join("build-stats.json"), "changed").unwrap();
    assert!(g.kept(Some("f1")).is_some(), "scratch files and statistics are no outputs");
}

#[test]
fn any_output_changed_added_or_gone_is_not_kept() {
    type Change = fn(&Path);
    let changes: [(&str, Change); 6] = [
        ("a cubin rewritten", |l| fs::write(l.join("cubin/a.sm_80.cubin"), "ONE").unwrap()),
        ("a cubin gone", |l| fs::remove_file(l.join("cubin/a.sm_90.cubin")).unwrap()),
        ("a cubin added", |l| fs::write(l.join("cubin/b.sm_80.cubin"), "new").unwrap()),
        ("the manifest gone", |l| fs::remove_file(l.join("manifest.json")).unwrap()),
        ("the library gone", |l| fs::remove_file(l.parent().unwrap().join("liblaunch_host_x.a")).unwrap()),
        ("a PTX folder in a file's place", |l| {
            fs::remove_file(l.join("ptx/a.ptx")).unwrap();
            fs::create_dir(l.join("ptx/a.ptx")).unwrap();
        }),
    ];
    for (what, change) in changes {
        let (_out, launch) = outputs_dir();
        record(&launch, Some("f"), Some("launch_host_x"), Vec::new()).unwrap();
        // The same length, another time: a rewrite is seen by its time alone too.
        std::thread::sleep(std::time::Duration::from_millis(5));
        change(&launch);
        assert!(gate(&launch).kept(Some("f")).is_none(), "{what}: kept");
    }
}

#[test]
fn a_build_without_a_fingerprint_removes_the_record_and_a_bad_record_is_none() {
    let (_out, launch) = outputs_dir();
    record(&launch, Some("f"), None, Vec::new()).unwrap();
    assert!(launch.join(RECORD).is_file());
    record(&launch, None, None, Vec::new()).unwrap();
    assert!(!launch.join(RECORD).exists());
    record(&launch, None, None, Vec::new()).unwrap();
    for text in ["", "{", "[]", r#"{"format":"fresh-0","inputs":"f","outputs":[],"directives":[],"warnings":[]}"#] {
        fs::write(launch.join(RECORD), text).unwrap();
        assert!(gate(&launch).kept(Some("f")).is_none(), "{text:?}");
    }
}

#[test]
fn a_kept_builds_statistics_keep_its_jobs_and_say_nothing_ran() {
    let mut before = stats::counts(6, 4, 1, None, &crate::compile::scheduler::Tokens::Serial, 2);
    before.nvrtc_ms = 10.0;
    before.host_jobs.push(launch_schema::stats::HostJob {
        file: "kernels/h.cu".into(),
        arches: Vec::new(),
        from: "compiled".into(),
        nvcc_ms: 9.0,
        nvcc_threads: 2,
    });
    let s = kept_stats(Some(before));
    assert!(s.kept);
    assert_eq!((s.jobs, s.compiled, s.cached, s.corrupt, s.max_parallel), (6, 0, 6, 0, 0));
    assert_eq!((s.nvrtc_ms, s.nvcc_ms), (0.0, 0.0));
    assert_eq!((s.host_jobs[0].from.as_str(), s.host_jobs[0].nvcc_ms), ("kept", 0.0));
    assert_eq!(kept_stats(None).jobs, 0, "no earlier statistics: none made up");
}

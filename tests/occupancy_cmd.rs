//! `cargo launch occupancy` through the real binary: the seed article's numbers, the JSON
//! documents (read into `launch_schema::occupancy`'s types, the ones the command writes), the
//! marked point of the sweeps, the SVG plot, and exit code 2 for every bad input.

use launch::occupancy::Limiter;
use launch_analysis::LaunchFailure;
use launch_schema::occupancy::{Detail, Point, Sweep, Variable};
use launch_schema::ReadError;
use serde::Serialize;

use crate::support::{cargo_launch, exact, run};

/// Runs `cargo launch occupancy ARGS`, expecting success; returns stdout.
fn occupancy(args: &[&str]) -> String {
    let (code, stdout, stderr) = run(cargo_launch().arg("launch").arg("occupancy").args(args));
    assert_eq!(code, 0, "occupancy {args:?} failed:\n{stderr}");
    stdout
}

/// The `--format json` document, read with `read` and checked to hold exactly its type's fields
/// (see [`exact`]).
fn json<T: Serialize>(args: &[&str], read: fn(&str) -> Result<T, ReadError>) -> T {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    exact(&occupancy(&all), read)
}

fn detail(args: &[&str]) -> Detail {
    json(args, Detail::from_json)
}

/// The limiters are written with the report's snake_case names (`exact` has checked that the
/// document is what the type writes).
fn assert_limiter_names(p: &Point) {
    let names = ["warps", "registers", "shared_memory", "blocks", "barriers"];
    for l in p.limiters.iter() {
        let name = serde_json::to_value(l).expect("serialises");
        assert!(names.iter().any(|n| name == *n), "limiter name {name} of {l:?}: {p:?}");
    }
}

#[test]
fn the_articles_numbers() {
    // sm_90, 167 registers, 256 threads: 1 block of 8 warps, 12.5 %, limited by registers.
    let d = detail(&["--arch", "sm_90", "--registers", "167", "--threads", "256"]);
    let p = &d.point;
    assert_limiter_names(p);
    assert_eq!((p.active_blocks, p.active_warps, p.max_warps, p.percent), (1, 8, 64, 12.5));
    assert_eq!(p.limiters.iter().collect::<Vec<_>>(), [Limiter::Registers]);
    assert_eq!(d.max_threads_per_block, 384);
    assert_eq!(d.launch_error, None);
    assert_eq!(d.suggested.as_ref().map(|s| s.threads), Some(384));
    assert_eq!(d.registers_for_one_more_block, Some(128));

    let text = occupancy(&["--arch", "sm_90", "--registers", "167", "--threads", "256"]);
    assert!(text.contains("12.5 %"), "{text}");
    let limited = text.lines().find(|l| l.trim_start().starts_with("limited by")).expect("a limited-by line");
    assert!(limited.ends_with("registers"), "{limited}");
    assert!(text.contains("1,024 B reserved"), "the reserved KB is shown: {text}");
    assert!(text.contains("largest launchable block      384 threads"), "{text}");
    assert!(text.contains("suggested block size          384 threads"), "{text}");
    assert!(text.contains("registers for 2 blocks/SM     ≤ 128"), "{text}");

    // At 512 threads the launch fails: 0 blocks, and the arithmetic says why.
    let d = detail(&["--arch", "sm_90", "--registers", "167", "--threads", "512"]);
    assert_eq!((d.point.active_blocks, d.point.percent), (0, 0.0));
    let why = d.launch_error.expect("a launch error");
    assert!(
        matches!(why.value, LaunchFailure::Registers { registers: 167, threads: 512, needed: 86_016, .. }),
        "{why:?}"
    );
    assert!(why.message.contains("86,016 registers per block"), "{why:?}");
    let text = occupancy(&["--arch", "sm_90", "--registers", "167", "--threads", "512"]);
    assert!(text.contains("cannot launch: 167 registers × 512 threads"), "{text}");

    // 32 registers at 1024 threads: 2 blocks, every warp slot.
    let p = detail(&["--arch", "sm_90", "--registers", "32", "--threads", "1024"]).point;
    assert_eq!((p.active_blocks, p.active_warps, p.percent), (2, 64, 100.0));
}

#[test]
fn defaults_and_the_measured_h200_numbers() {
    // Defaults: 256 threads, 32 registers, no shared memory, 1 barrier.
    let d = detail(&["--arch", "sm_90"]);
    assert_eq!((d.point.threads, d.point.registers), (256, 32));
    assert_eq!((d.point.static_smem, d.point.dynamic_smem), (0, 0));
    assert_eq!(d.block_limits.barriers, Some(64));
    assert_eq!(d.allocated_smem_per_block, 1024, "the reserved KB on CC >= 8");
    assert_eq!((d.arch.to_string(), d.carveout), ("sm_90".to_string(), None));
    let help = occupancy(&["--help"]);
    for default in ["[default: 256]", "[default: 32]", "[default: 1]", "[default: default]"] {
        assert!(help.contains(default), "--help shows {default}:\n{help}");
    }

    // occupancy.md §6.4, kernel s4k (12 registers, 4096 B static) at 32 threads on an H200.
    let s4k = ["--arch", "sm_90", "--registers", "12", "--static-smem", "4K", "--threads", "32"];
    for (dynamic, carveout, blocks) in
        [("8192", "25", 4), ("8192", "default", 17), ("30000", "50", 3), ("200000", "100", 1)]
    {
        let mut args = s4k.to_vec();
        args.extend(["--dynamic-smem", dynamic, "--carveout", carveout]);
        assert_eq!(detail(&args).point.active_blocks, blocks, "{args:?}");
    }
    // §6.3: barriers. 16 barriers on sm_120 leave 1 block; on sm_90 4.
    let p = detail(&["--arch", "sm_120", "--barriers", "16", "--threads", "32", "--registers", "10"]).point;
    assert_eq!(p.active_blocks, 1);
    assert!(p.limiters.contains(Limiter::Barriers), "{p:?}");
    assert_eq!(detail(&["--arch", "sm_90a", "--barriers", "16", "--threads", "32"]).point.active_blocks, 4);
    // Below 9.0 barriers do not limit.
    assert_eq!(detail(&["--arch", "sm_86", "--barriers", "16"]).block_limits.barriers, None);
}

#[test]
fn sweeps_give_the_three_graphs_with_the_point_marked() {
    let base = ["--arch", "sm_90", "--registers", "167", "--threads", "256"];
    /// The input a sweep varies (all of the swept shared memory is dynamic: none is given static).
    fn varied(v: Variable, p: &Point) -> u32 {
        match v {
            Variable::Threads => p.threads,
            Variable::Registers => p.registers,
            Variable::Smem => p.dynamic_smem,
        }
    }
    // (sweep, number of points, index of the given point, the first and last value of the input)
    let cases = [
        ("threads", Variable::Threads, 32, 7, 32, 1024),
        ("registers", Variable::Registers, 256, 167, 0, 255),
        ("smem", Variable::Smem, 455, 0, 0, 232_448),
    ];
    for (sweep, variable, len, current, first, last) in cases {
        let mut args = base.to_vec();
        args.extend(["--sweep", sweep]);
        let doc = json(&args, Sweep::from_json);
        assert_eq!((doc.sweep, doc.current), (variable, current), "{sweep}");
        let points = &doc.points;
        assert_eq!(points.len(), len, "{sweep}");
        points.iter().for_each(assert_limiter_names);
        assert_eq!((varied(variable, &points[0]), varied(variable, &points[len - 1])), (first, last), "{sweep}");
        let marked = &points[current];
        assert_eq!((marked.threads, marked.registers, marked.percent), (256, 167, 12.5), "{sweep}");

        let text = occupancy(&args);
        let marked: Vec<&str> = text.lines().filter(|l| l.ends_with("<- current")).collect();
        assert_eq!(marked.len(), 1, "{sweep}: one marked line:\n{text}");
        assert!(marked[0].contains("12.5 %"), "{sweep}: {}", marked[0]);
        assert_eq!(text.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).count(), len, "{sweep}");
    }

    // A value off the grid is inserted in order and marked.
    let doc =
        json(&["--arch", "sm_86", "--threads", "100", "--static-smem", "1000", "--sweep", "threads"], Sweep::from_json);
    assert_eq!((doc.current, doc.points[3].threads, doc.points.len()), (3, 100, 33));
    let doc = json(
        &["--arch", "sm_86", "--static-smem", "1000", "--dynamic-smem", "77", "--sweep", "smem"],
        Sweep::from_json,
    );
    let current = &doc.points[doc.current];
    assert_eq!((current.static_smem, current.dynamic_smem), (1000, 77));
    let last = doc.points.last().unwrap();
    assert_eq!(last.static_smem + last.dynamic_smem, 101_376);
}

#[test]
fn plot_writes_a_self_contained_svg_with_three_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("occupancy.svg");
    std::fs::write(&path, "old").unwrap();
    let path_arg = path.to_str().unwrap();
    let out = occupancy(&["--arch", "sm_90", "--registers", "167", "--plot", path_arg]);
    assert!(out.contains("12.5 %"), "the point is still printed:\n{out}");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(r#"xmlns="http://www.w3.org/2000/svg""#));
    assert_eq!(svg.matches(r#"<g class="plot">"#).count(), 3, "three plots");
    assert_eq!(svg.matches(r#"class="current""#).count(), 3, "the point marked in each");
    assert_eq!(svg.matches("<g").count(), svg.matches("</g>").count());
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    for label in
        ["threads per block", "registers per thread", "shared memory per block", "active warps per SM", "sm_90"]
    {
        assert!(svg.contains(label), "the SVG labels {label}");
    }
    assert!(!svg.contains("href") && !svg.contains("<script"), "self-contained");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "no temporary file left: {left:?}");

    // JSON output stays clean; the note goes to stderr.
    let (code, stdout, stderr) =
        run(cargo_launch().args(["launch", "occupancy", "--arch", "sm_75", "--format", "json", "--plot", path_arg]));
    assert_eq!(code, 0, "{stderr}");
    Detail::from_json(&stdout).expect("the JSON document on stdout");
    assert!(stderr.contains("occupancy.svg"), "{stderr}");

    // A folder that does not exist is a usage error (exit 2, found before any work; it was 4),
    // not a panic.
    let missing = dir.path().join("no/such/dir/x.svg");
    let (code, _, stderr) =
        run(cargo_launch().args(["launch", "occupancy", "--arch", "sm_90", "--plot", missing.to_str().unwrap()]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("x.svg") && !stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_input_exits_2_naming_the_value() {
    let cases: &[(&[&str], &str)] = &[
        (&["--arch", "sm_91"], "sm_91"),
        (&["--arch", "90"], "90"),
        (&["--registers", "32"], "--arch"),
        (&["--arch", "sm_90", "--threads", "0"], "'0'"),
        (&["--arch", "sm_90", "--threads", "1025"], "1025"),
        (&["--arch", "sm_90", "--threads", "-5"], "-5"),
        (&["--arch", "sm_90", "--threads", "many"], "many"),
        (&["--arch", "sm_90", "--threads", "99999999999999999999"], "99999999999999999999"),
        (&["--arch", "sm_90", "--registers", "256"], "256"),
        (&["--arch", "sm_90", "--registers", "-1"], "-1"),
        (&["--arch", "sm_90", "--registers", "3.5"], "3.5"),
        (&["--arch", "sm_90", "--static-smem", "50000"], "50000"),
        (&["--arch", "sm_90", "--static-smem", "-4"], "-4"),
        (&["--arch", "sm_90", "--dynamic-smem", "300000"], "300000"),
        (&["--arch", "sm_86", "--static-smem", "48K", "--dynamic-smem", "60000"], "60000"),
        (&["--arch", "sm_90", "--dynamic-smem", "9999999999999"], "9999999999999"),
        (&["--arch", "sm_90", "--carveout", "101"], "101"),
        (&["--arch", "sm_90", "--carveout", "-1"], "-1"),
        (&["--arch", "sm_90", "--carveout", "most"], "most"),
        (&["--arch", "sm_90", "--barriers", "17"], "17"),
        (&["--arch", "sm_90", "--sweep", "blocks"], "blocks"),
        (&["--arch", "sm_90", "--format", "xml"], "xml"),
    ];
    for (args, named) in cases {
        let (code, stdout, stderr) = run(cargo_launch().arg("launch").arg("occupancy").args(*args));
        assert_eq!(code, 2, "{args:?} exits 2:\n{stderr}");
        assert!(stderr.contains(named), "{args:?}: the message names `{named}`:\n{stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}:\n{stderr}");
        assert!(stdout.is_empty(), "{args:?} prints nothing on stdout:\n{stdout}");
    }
}

/// `--plot` never replaces what is not a regular file (before: a FIFO, a link or, as root,
/// `/dev/null` was renamed over and lost).
#[cfg(unix)]
#[test]
fn plot_refuses_to_replace_a_fifo_or_a_link() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("plot.svg");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let link = dir.path().join("link.svg");
    std::os::unix::fs::symlink(dir.path().join("elsewhere.svg"), &link).unwrap();
    for p in [&fifo, &link] {
        let (code, _, stderr) = run(cargo_launch().args(["launch", "occupancy", "--arch", "sm_90", "--plot"]).arg(p));
        assert_ne!(code, 0, "{stderr}");
        assert!(stderr.contains("refusing to replace it"), "{stderr}");
    }
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
}

//! Issue 32 classes 4 and 7, through the real binary.
//!
//! Class 4, "no secret is ever printed": a password in each position the environment can hold
//! one (a WebDAV URL's userinfo, an S3 endpoint's, a query parameter, the AWS secret variables;
//! URLs the grammar accepts and ones it refuses) × each command that prints the environment or
//! the remote (`doctor` and `cache`, text and JSON): neither stdout nor stderr shows it.
//!
//! Class 7, "bad input refused where it is read": every documented variable that takes a URL, a
//! size, a list, a mode or a folder (their kinds come from launch-build's one table,
//! `tooling::value_kind`) × malformed values of its kind, and every flag that takes one ×
//! malformed values: exit 2, and the error names the variable or the flag.

use std::path::Path;

use launch_engine::tooling::{value_kind, ValueKind, DOCUMENTED};

use crate::support::{cargo_launch, run};

const SECRET: &str = "hunter2-launch-secret";

/// `cargo launch ARGS` in an empty folder with its own cache and `vars` set.
fn launch(args: &[&str], vars: &[(&str, String)], dir: &Path) -> (i32, String, String) {
    let mut cmd = cargo_launch();
    cmd.current_dir(dir).env("LAUNCH_CACHE_DIR", dir.join("cache")).env("LAUNCH_NO_AUTO_SETUP", "1");
    for v in ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "LAUNCH_CACHE_REMOTE", "LAUNCH_TUNE_CACHE_REMOTE"] {
        cmd.env_remove(v);
    }
    for (name, value) in vars {
        cmd.env(name, value);
    }
    cmd.arg("launch").args(args);
    run(&mut cmd)
}

#[test]
fn no_command_prints_a_password_in_any_position() {
    let dir = tempfile::tempdir().unwrap();
    let s = |t: String| t;
    let positions: Vec<Vec<(&str, String)>> = vec![
        vec![("LAUNCH_CACHE_REMOTE", format!("webdav+https://ci:{SECRET}@dav.test:8443/kernels"))],
        vec![("LAUNCH_CACHE_REMOTE", format!("webdav+http://ci:{SECRET}@dav.test:99999/kernels"))],
        vec![("LAUNCH_CACHE_REMOTE", format!("webdav+https://dav.test/kernels?token={SECRET}"))],
        vec![("LAUNCH_CACHE_REMOTE", format!("s3://fleet/team?endpoint=http://key:{SECRET}@127.0.0.1:9"))],
        vec![(
            "LAUNCH_CACHE_REMOTE",
            format!("s3://fleet/team?endpoint=http://127.0.0.1:9&secret_access_key={SECRET}"),
        )],
        vec![("LAUNCH_CACHE_REMOTE", format!("s3://key:{SECRET}@fleet/team"))],
        vec![("LAUNCH_TUNE_CACHE_REMOTE", format!("webdav+https://ci:{SECRET}@dav.test/tune"))],
        vec![("LAUNCH_TUNE_CACHE_REMOTE", format!("s3://fleet/tune?X-Amz-Signature={SECRET}"))],
        vec![
            ("LAUNCH_CACHE_REMOTE", s("s3://fleet/team?endpoint=http://127.0.0.1:9".into())),
            ("AWS_SECRET_ACCESS_KEY", SECRET.to_string()),
            ("AWS_SESSION_TOKEN", format!("{SECRET}-token")),
        ],
    ];
    let printers: [&[&str]; 4] =
        [&["doctor"], &["doctor", "--format", "json"], &["cache"], &["cache", "--format", "json"]];
    let (mut cases, mut shown) = (0, Vec::new());
    for vars in &positions {
        for args in printers {
            cases += 1;
            let (code, stdout, stderr) = launch(args, vars, dir.path());
            if stdout.contains(SECRET) || stderr.contains(SECRET) {
                shown.push(format!("{vars:?} × {args:?} (exit {code}):\n{stdout}{stderr}"));
            }
        }
    }
    assert!(shown.is_empty(), "{} of {cases} cases show the password:\n{}", shown.len(), shown.join("\n---\n"));
}

/// Malformed values of a kind: empty, padded, out of range, wrong scheme, bad separators.
fn malformed(kind: ValueKind, dir: &Path) -> Vec<String> {
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let file = file.display().to_string();
    let v = |l: &[&str]| l.iter().map(ToString::to_string).collect::<Vec<_>>();
    match kind {
        ValueKind::Url => v(&[
            "",
            " s3://b/p",
            "s3://b/p ",
            "s3://b/p?endpoint=http://127.0.0.1:99999",
            "s3://fle et/team",
            "s3://b/p?endpoint=notaurl",
            "s3://b/p?endpoint=ftp://127.0.0.1:21",
            "webdav+http://127.0.0.1:99999/p",
            "webdav+http://127.0.0.1:0/p",
            "s3://b/p?region=a&region=b",
            "s3://b/p;endpoint=http://h:9",
            "ftp://host/p",
        ]),
        ValueKind::Size => v(&["", " ", "5 G", " 5G", "5G ", "-1", "5X", "1,5G", "99999999999T"]),
        ValueKind::Mode => v(&["", " ", " auto", "ro ", "r o", "rw,ro", "maybe"]),
        ValueKind::ArchList => v(&["", " ", ",", ",,", "sm_90,,sm_80", "sm_90;sm_80", "sm_9O", "90"]),
        ValueKind::Seconds => v(&["", " ", " 30", "30 ", "\t30", "3 0", "0", "-5", "+5", "1.5", "30s", "99999999"]),
        ValueKind::Folder => {
            vec![String::new(), " /tmp/x".into(), "relative".into(), file.clone(), format!("{file}/below")]
        }
        _ => Vec::new(),
    }
}

#[test]
fn every_url_size_list_mode_and_folder_variable_refuses_malformed_values() {
    let dir = tempfile::tempdir().unwrap();
    let (mut cases, mut accepted) = (0, Vec::new());
    for var in DOCUMENTED {
        let Some(kind) = value_kind(var) else { continue };
        for value in malformed(kind, dir.path()) {
            cases += 1;
            let (code, _, stderr) = launch(&["cache"], &[(var.name, value.clone())], dir.path());
            if code != 2 || !stderr.contains(&format!("`{}`", var.name)) {
                accepted.push(format!("{}={value:?}: exit {code}: {}", var.name, stderr.trim()));
            }
        }
    }
    assert!(cases >= 40, "{cases}");
    assert!(
        accepted.is_empty(),
        "{} of {cases} malformed values not refused:\n{}",
        accepted.len(),
        accepted.join("\n")
    );
}

#[test]
fn every_list_and_size_flag_refuses_malformed_values() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("--gpu", vec!["coverage", "--gpu"]),
        ("--arch", vec!["check", "--arch"]),
        ("--arch", vec!["report", "--arch"]),
        ("--max-size", vec!["cache", "prune", "--max-size"]),
    ];
    let values: &[(&str, &[&str])] = &[
        ("--gpu", &["", ",,", " H100", "H100 ", "H100,,A100", "H100;A100", "NoSuchGPU"]),
        ("--arch", &["", ",,", "sm_90,,sm_80", "sm_90;sm_80", "sm_9O"]),
        ("--max-size", &["", " ", "5 G", " 5G", "5G ", "-1", "5X"]),
    ];
    let (mut n, mut accepted) = (0, Vec::new());
    for (flag, args) in &cases {
        let bad = values.iter().find(|(f, _)| f == flag).unwrap().1;
        for value in bad {
            n += 1;
            // `--flag=VALUE`: a value that starts with `-` or is empty is the flag's, not another flag.
            let (last, head) = args.split_last().unwrap();
            let joined = format!("{last}={value}");
            let mut argv: Vec<&str> = head.to_vec();
            argv.push(&joined);
            let (code, stdout, stderr) = launch(&argv, &[], dir.path());
            if code != 2 || !stderr.contains(flag) {
                accepted.push(format!("{argv:?}: exit {code}: {}{}", stdout.trim(), stderr.trim()));
            }
        }
    }
    assert!(accepted.is_empty(), "{} of {n} malformed values not refused:\n{}", accepted.len(), accepted.join("\n"));
}

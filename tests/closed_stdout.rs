//! Issue 32 class 2: every command survives a closed stdout. Every command line clap defines
//! (each subcommand, nested ones too, × each value its `--format` takes, plus `--help` for each
//! and `--version`), read from `cargo_launch::command()` so a new command or format is covered
//! without editing this file, runs the real binary with stdout a pipe whose reader is already
//! gone (`cargo launch cache | head -0`). None may panic, exit 101 or die by a signal, and none
//! may say anything about the pipe: the output stops quietly and the command exits with its own
//! code. Before the fix, `cache` (all of its actions, both formats) and `init` panicked.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;

use crate::support::commands::{self, Samples};
use crate::support::{cargo_launch, fixture, run, toolchain_root};

/// Where a case's own scratch folder goes in its command line.
const SCRATCH: &str = "{SCRATCH}";

/// Every command line to try: `launch --help`, `launch --version`, and for each command (nested
/// ones too) `--help` and, when it runs without a further subcommand, one line per `--format`
/// value (one line without `--format` when it has none).
fn command_lines(samples: &Samples) -> Vec<Vec<String>> {
    let (runnable, paths) = commands::all();
    let mut lines = vec![vec!["--help".to_string()], vec!["--version".to_string()]];
    lines.extend(paths.into_iter().map(|p| [p, vec!["--help".to_string()]].concat()));
    for r in &runnable {
        let formats = r.formats();
        if formats.is_empty() {
            lines.push(r.line(samples));
        }
        for f in formats {
            lines.push([r.line(samples), vec!["--format".to_string(), f]].concat());
        }
    }
    lines
}

/// Runs `cargo launch <args>` in `dir` with stdout a pipe whose reader is closed; the failure
/// found, if any.
fn with_stdout_closed(dir: &Path, cache: &Path, args: &[String]) -> Option<String> {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    // The reader goes before the child starts: its first write meets a closed pipe.
    drop(reader);
    let mut cmd = cargo_launch();
    cmd.current_dir(dir).arg("launch").args(args).env("LAUNCH_CACHE_DIR", cache);
    cmd.stdout(Stdio::from(writer)).stderr(Stdio::piped()).stdin(Stdio::null());
    let out = cmd.output().expect("run cargo-launch");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = args.join(" ");
    if let Some(signal) = out.status.signal() {
        return Some(format!("`{line}` was killed by signal {signal}:\n{stderr}"));
    }
    let code = out.status.code().expect("an exit code");
    let said = ["panicked", "Broken pipe", "os error 32"].iter().find(|w| stderr.contains(**w));
    if code == 101 || said.is_some() {
        // The panic's two lines (where, what) or the error, not the backtrace.
        let lines: Vec<&str> = stderr.lines().collect();
        let at = lines.iter().position(|l| l.contains("panicked") || l.starts_with("error")).unwrap_or(0);
        return Some(format!("`{line}` exited {code}:\n{}", lines[at..lines.len().min(at + 2)].join("\n")));
    }
    None
}

#[test]
fn every_command_and_format_survives_a_closed_stdout() {
    let krate = fixture("cache");
    let tmp = tempfile::tempdir().unwrap();
    // Its own kernel cache (the cases prune and clear it), with the installed toolchain in it.
    let cache = tmp.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let toolchains = toolchain_root().parent().expect("toolchain/ holds the toolchain").to_path_buf();
    std::os::unix::fs::symlink(&toolchains, cache.join("toolchain")).unwrap();
    // `diff`'s two report documents, from the crate itself.
    let mut report = cargo_launch();
    report.current_dir(krate.path()).args(["launch", "report", "--format", "json"]).env("LAUNCH_CACHE_DIR", &cache);
    let (code, json, stderr) = run(&mut report);
    assert_eq!(code, 0, "{stderr}");
    let files = [tmp.path().join("old.json"), tmp.path().join("new.json")];
    for f in &files {
        std::fs::write(f, &json).unwrap();
    }

    // The kernel is in fixtures/crates/cache/kernels/a.cu; `new` writes into the case's folder.
    let samples = Samples { kernel: "kernel_a".into(), new_crate: format!("{SCRATCH}/new-crate"), files };
    let lines = command_lines(&samples);
    let mut failed = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let help = line.iter().any(|a| a == "--help" || a == "--version");
        // `new` writes a new crate: each case its own scratch folder.
        let scratch = tmp.path().join(format!("case-{i}"));
        std::fs::create_dir(&scratch).unwrap();
        let line: Vec<String> = line.iter().map(|a| a.replace(SCRATCH, &scratch.display().to_string())).collect();
        if !help {
            commands::assert_parses(&line);
        }
        if let Some(failure) = with_stdout_closed(krate.path(), &cache, &line) {
            failed.push(failure);
        }
    }
    let commands = lines.iter().filter(|l| !l.iter().any(|a| a == "--help" || a == "--version")).count();
    assert!(commands >= 20, "{commands} command lines: the enumeration lost commands");
    assert!(failed.is_empty(), "{} of {} cases failed:\n\n{}", failed.len(), lines.len(), failed.join("\n\n"));
}

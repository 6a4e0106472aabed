//! Tests of the ptxas log parser against the recorded logs in fixtures/ptxas/.
use super::*;
use launch::Resources;
use std::path::{Path, PathBuf};

/// ptxas 12.9 on one PTX file and six arches, with its warnings and errors.
mod ptxas_12_9;

/// Other ptxas versions, NVRTC's logs, all the fixtures.
mod other_logs;

/// Hand-written inputs, one rule each.
mod synthetic;

/// Truncations and garbage.
mod robustness;

/// The workspace's `fixtures/ptxas` (this crate's manifest dir is `<workspace>/launch-build`).
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/ptxas")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn load(rel: &str) -> PtxasLog {
    parse(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every recorded `*.log` under the fixture folder, as (relative path, text), sorted.
fn all_logs() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "log") {
                out.push(path);
            }
        }
    }
    let root = fixtures();
    let mut paths = Vec::new();
    walk(&root, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Line `n` (1-based) of a fixture source file.
fn source_line(file: &str, n: u32) -> String {
    read(&format!("src/{file}")).lines().nth(n as usize - 1).unwrap().to_string()
}

/// The const banks every `multi` log below sm_90 reports: cmem[3] 1024 bytes, cmem[4] 8.
const BELOW_SM90_CMEM: &[(u32, u64)] = &[(3, 1024), (4, 8)];

/// The entries of `log` as the snapshots under `fixtures/ptxas/parsed/` hold them: one line per
/// entry in printed order, every field of the resources by name (`Resources::FIELDS`, so a field
/// added there shows up here without an edit), and the compile time.
fn rendered(log: &PtxasLog) -> String {
    let mut out = String::new();
    for e in &log.entries {
        out.push_str(&e.name);
        for f in Resources::FIELDS {
            let v = (f.get)(&e.resources).map_or("-".to_string(), |v| v.to_string());
            out.push_str(&format!(" {}={v}", f.name));
        }
        let time = e.compile_time_ms.map_or("-".to_string(), |t| format!("{t:.3}"));
        out.push_str(&format!(" compile_time_ms={time}\n"));
    }
    out
}

/// `rel`'s entries are its committed snapshot (`fixtures/ptxas/parsed/`, the `.log` a `.txt`);
/// `LAUNCH_BLESS_SNAPSHOTS=1` writes it instead, keeping its comment lines.
fn check_snapshot(log: &PtxasLog, rel: &str) {
    let path = fixtures().join("parsed").join(format!("{}.txt", rel.strip_suffix(".log").unwrap_or(rel)));
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let header: String = committed.lines().filter(|l| l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    let expected: String = committed.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    let actual = rendered(log);
    let bless =
        crate::env::Env::cli().flag(crate::env::var::LAUNCH_BLESS_SNAPSHOTS).expect("LAUNCH_BLESS_SNAPSHOTS is 1 or 0");
    if bless && actual != expected {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("{header}{actual}")).unwrap();
        return;
    }
    assert_eq!(
        actual,
        expected,
        "{rel} parses otherwise than {}; if that is meant, run LAUNCH_BLESS_SNAPSHOTS=1 cargo test -p launch-engine --lib \
         ptxas_log and review the diff",
        path.display()
    );
}

/// The entries of the log at `rel`, on `arch`, are its snapshot, and each entry's report lines say
/// the numbers it holds.
fn check_entries(log: &PtxasLog, arch: &str, rel: &str) {
    check_snapshot(log, rel);
    for e in &log.entries {
        let (name, r) = (&e.name, &e.resources);
        assert_eq!(e.arch, arch, "{name}");
        assert_eq!(e.lines.len(), 4, "{name}: {:#?}", e.lines);
        assert_eq!(e.lines[0], format!("ptxas info    : Compiling entry function '{name}' for '{arch}'"));
        assert_eq!(e.lines[1], format!("ptxas info    : Function properties for {name}"));
        let stack = format!(
            "{} bytes stack frame, {} bytes spill stores, {} bytes spill loads",
            r.stack_frame, r.spill_stores, r.spill_loads
        );
        assert!(
            e.lines[2] == format!("    {stack}") || e.lines[2] == format!("ptxas         .     {stack}"),
            "{name}: {}",
            e.lines[2]
        );
        assert!(
            e.lines[3].starts_with(&format!("ptxas info    : Used {} registers", r.registers)),
            "{name}: {}",
            e.lines[3]
        );
        assert_eq!(e.used_line(), Some(e.lines[3].as_str()));
    }
}

/// The whole-program `walk` device function of multi.cu: inlined nowhere, frame 0 (its local
/// array is counted in `k_call`'s frame), no compile time.
fn check_walk_whole_program(log: &PtxasLog, indent: &str) {
    assert_eq!(
        log.functions,
        vec![FunctionReport {
            name: "_Z4walkii".into(),
            stack_frame: 0,
            spill_stores: 0,
            spill_loads: 0,
            compile_time_ms: None,
            lines: vec![
                "ptxas info    : Function properties for _Z4walkii".into(),
                format!("{indent}0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
            ],
        }]
    );
    assert!(log.entry("_Z4walkii").is_none());
}

fn check_multi(rel: &str, arch: &str, cmem: &[(u32, u64)]) -> PtxasLog {
    let log = load(rel);
    assert_eq!(log.gmem, Some(4), "{rel}");
    let banks: Vec<ConstBank> = cmem.iter().map(|&(bank, bytes)| ConstBank { bank, bytes }).collect();
    assert_eq!(log.cmem, banks, "{rel}");
    check_entries(&log, arch, rel);
    check_walk_whole_program(&log, "    ");
    assert_eq!(log.diagnostics, vec![], "{rel}");
    // The barrier semantics of reference §7, where the barrier count is printed.
    if log.entries.iter().all(EntryReport::barriers_reported) {
        let b = |n: &str| log.entry(n).unwrap().resources.barriers;
        assert_eq!((b("k_empty"), b("k_smem"), b("k_bar5"), b("k_bar15"), b("k_barreg")), (0, 1, 6, 16, 16));
    }
    log
}

fn diag(severity: Severity, loc: Option<(&str, u32)>, message: &str, raw: &str) -> Diagnostic {
    Diagnostic {
        severity,
        file: loc.map(|(f, _)| f.to_string()),
        line: loc.map(|(_, n)| n),
        message: message.into(),
        raw: raw.into(),
    }
}

/// `Registers are spilled … in function 'f', A bytes spill stores, B bytes spill loads` must
/// agree with f's stack/spill line.
fn check_spill_warnings_agree(log: &PtxasLog, severity: Severity) -> usize {
    let mut n = 0;
    for d in log.diagnostics.iter().filter(|d| d.severity == severity) {
        let Some(rest) = d.message.strip_prefix("Registers are spilled to local memory in function '") else {
            continue;
        };
        let (name, rest) = rest.split_once("', ").unwrap();
        let nums: Vec<u32> = rest.split(' ').filter_map(|w| w.parse().ok()).collect();
        let r = log.entry(name).unwrap().resources;
        assert_eq!(nums, [r.spill_stores, r.spill_loads], "{}", d.raw);
        n += 1;
    }
    n
}

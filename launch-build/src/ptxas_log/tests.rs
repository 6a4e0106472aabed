//! Tests of the ptxas log parser against the recorded logs in fixtures/ptxas/.
use super::*;
use launch::Resources;
use std::path::{Path, PathBuf};

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

fn res(v: [u32; 7], cmem0: Option<u32>) -> Resources {
    let [registers, barriers, stack_frame, spill_stores, spill_loads, cumulative_stack, shared_static] = v;
    Resources { registers, barriers, stack_frame, spill_stores, spill_loads, cumulative_stack, shared_static, cmem0 }
}

/// (name, [registers, barriers, stack frame, spill stores, spill loads, cumulative stack,
/// smem], cmem[0], compile time).
type Row = (&'static str, [u32; 7], Option<u32>, Option<f64>);

/// The entries, in printed order, with exactly these numbers and report lines that say so.
fn check_entries(log: &PtxasLog, arch: &str, rows: &[Row]) {
    let names: Vec<&str> = log.entries.iter().map(|e| e.name.as_str()).collect();
    let expected: Vec<&str> = rows.iter().map(|r| r.0).collect();
    assert_eq!(names, expected, "entries in printed order");
    for &(name, v, cmem0, time) in rows {
        let e = log.entry(name).unwrap_or_else(|| panic!("no entry {name}"));
        assert_eq!(e.arch, arch, "{name}");
        assert_eq!(e.resources, res(v, cmem0), "{name}");
        assert_eq!(e.compile_time_ms, time, "{name}");
        assert_eq!(e.lines.len(), 4, "{name}: {:#?}", e.lines);
        assert_eq!(e.lines[0], format!("ptxas info    : Compiling entry function '{name}' for '{arch}'"));
        assert_eq!(e.lines[1], format!("ptxas info    : Function properties for {name}"));
        let stack = format!("{} bytes stack frame, {} bytes spill stores, {} bytes spill loads", v[2], v[3], v[4]);
        assert!(
            e.lines[2] == format!("    {stack}") || e.lines[2] == format!("ptxas         .     {stack}"),
            "{name}: {}",
            e.lines[2]
        );
        assert!(e.lines[3].starts_with(&format!("ptxas info    : Used {} registers", v[0])), "{name}: {}", e.lines[3]);
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

fn check_multi(rel: &str, arch: &str, rows: &[Row], cmem: &[(u32, u64)]) -> PtxasLog {
    let log = load(rel);
    assert_eq!(log.gmem, Some(4), "{rel}");
    let banks: Vec<ConstBank> = cmem.iter().map(|&(bank, bytes)| ConstBank { bank, bytes }).collect();
    assert_eq!(log.cmem, banks, "{rel}");
    check_entries(&log, arch, rows);
    check_walk_whole_program(&log, "    ");
    assert_eq!(log.diagnostics, vec![], "{rel}");
    // The barrier semantics of reference §7, where the barrier count is printed.
    if log.entries.iter().all(EntryReport::barriers_reported) {
        let b = |n: &str| log.entry(n).unwrap().resources.barriers;
        assert_eq!((b("k_empty"), b("k_smem"), b("k_bar5"), b("k_bar15"), b("k_barreg")), (0, 1, 6, 16, 16));
    }
    log
}

const BELOW_SM90_CMEM: &[(u32, u64)] = &[(3, 1024), (4, 8)];

/// `nvrtc-12.9/frontend_warn.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const NVRTC12_9_FRONTEND_WARN_SM_90: &[Row] = &[("k_warn", [8, 0, 0, 0, 0, 0, 0], None, Some(1.320))];
/// `nvrtc-12.9/multi.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const NVRTC12_9_MULTI_SM_90: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(1.977)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.103)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.847)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.490)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.946)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.859)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.791)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.705)),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], None, Some(2.285)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.179)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.338)),
];
/// `nvrtc-12.9/spill.sm_52.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const NVRTC12_9_SPILL_SM_52: &[Row] = &[
    ("heavy_free", [128, 0, 0, 0, 0, 0, 0], Some(340), Some(24.483)),
    ("heavy_mr", [40, 0, 488, 1068, 1096, 488, 0], Some(340), Some(29.518)),
    ("heavy_lb", [32, 0, 544, 1216, 1248, 544, 0], Some(340), Some(30.232)),
];
/// `ptxas-12.4/multi_v84.sm_80.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_4_MULTI_V84_SM_80: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], Some(352), None),
    ("k_const", [8, 0, 0, 0, 0, 0, 0], Some(364), None),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [16, 0, 0, 0, 0, 0, 2048], Some(368), None),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 0, 0, 0, 0, 0, 512], Some(368), None),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], Some(368), None),
    ("k_barreg", [10, 0, 0, 0, 0, 0, 0], Some(364), None),
    ("k_bar15", [10, 0, 0, 0, 0, 0, 0], Some(360), None),
    ("k_bar5", [10, 0, 0, 0, 0, 0, 0], Some(360), None),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], Some(364), None),
    ("k_smem", [12, 0, 0, 0, 0, 0, 4096], Some(368), None),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], Some(352), None),
];
/// `ptxas-12.6/multi_v84.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_6_MULTI_V84_SM_90: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, None),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, None),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, None),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, None),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, None),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, None),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, None),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, None),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], None, None),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, None),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, None),
];
/// `ptxas-12.8/multi_v84.sm_120.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_8_MULTI_V84_SM_120: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(6.409)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.340)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.854)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.224)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.887)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.715)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.682)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.745)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], None, Some(2.215)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.080)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.304)),
];
/// `ptxas-12.9/bigsmem.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_BIGSMEM_SM_90: &[Row] = &[
    ("small_smem", [10, 1, 0, 0, 0, 0, 1024], None, Some(2.579)),
    ("big_smem", [10, 1, 0, 0, 0, 0, 65536], None, Some(1.084)),
];
/// `ptxas-12.9/directives.sm_80.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_DIRECTIVES_SM_80: &[Row] = &[
    ("k_outofrange", [8, 0, 0, 0, 0, 0, 0], Some(360), Some(1.772)),
    ("k_toomany", [8, 0, 0, 0, 0, 0, 0], Some(360), Some(0.763)),
    ("k_lowreg", [8, 0, 0, 0, 0, 0, 0], Some(360), Some(0.664)),
    ("k_minnct", [8, 0, 0, 0, 0, 0, 0], Some(360), Some(0.461)),
];
/// `ptxas-12.9/multi.sm_100.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_MULTI_SM_100: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(1.770)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(0.945)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.854)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.164)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.911)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.709)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.707)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.646)),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], None, Some(2.116)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.048)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.298)),
];
/// `ptxas-12.9/multi.sm_120.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_MULTI_SM_120: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(2.049)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(0.956)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.848)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.181)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(1.033)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.838)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.725)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.792)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], None, Some(2.375)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.162)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.451)),
];
/// `ptxas-12.9/multi.sm_52.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_MULTI_SM_52: &[Row] = &[
    ("k_count", [5, 0, 0, 0, 0, 0, 0], Some(320), Some(3.731)),
    ("k_const", [4, 0, 0, 0, 0, 0, 0], Some(332), Some(0.824)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], Some(336), Some(2.086)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [10, 1, 0, 0, 0, 0, 512], Some(336), Some(1.505)),
    ("_Z5scalePffi", [4, 0, 0, 0, 0, 0, 0], Some(336), Some(0.596)),
    ("k_barreg", [7, 16, 0, 0, 0, 0, 0], Some(332), Some(0.615)),
    ("k_bar15", [6, 16, 0, 0, 0, 0, 0], Some(328), Some(0.510)),
    ("k_bar5", [6, 6, 0, 0, 0, 0, 0], Some(328), Some(0.486)),
    ("k_call", [32, 0, 128, 0, 0, 128, 0], Some(332), Some(3.327)),
    ("k_smem", [9, 1, 0, 0, 0, 0, 4096], Some(336), Some(0.815)),
    ("k_empty", [2, 0, 0, 0, 0, 0, 0], Some(320), Some(0.239)),
];
/// `ptxas-12.9/multi.sm_75.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_MULTI_SM_75: &[Row] = &[
    ("k_count", [5, 0, 0, 0, 0, 0, 0], Some(352), Some(1.616)),
    ("k_const", [8, 0, 0, 0, 0, 0, 0], Some(364), Some(0.853)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [18, 1, 0, 0, 0, 0, 2048], Some(368), Some(2.412)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 512], Some(368), Some(1.646)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], Some(368), Some(0.593)),
    ("k_barreg", [10, 16, 0, 0, 0, 0, 0], Some(364), Some(0.578)),
    ("k_bar15", [10, 16, 0, 0, 0, 0, 0], Some(360), Some(0.500)),
    ("k_bar5", [10, 6, 0, 0, 0, 0, 0], Some(360), Some(0.632)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], Some(364), Some(1.650)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], Some(368), Some(0.688)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], Some(352), Some(0.265)),
];
/// `ptxas-12.9/multi.sm_80.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_MULTI_SM_80: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], Some(352), Some(1.415)),
    ("k_const", [8, 0, 0, 0, 0, 0, 0], Some(364), Some(0.804)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [16, 1, 0, 0, 0, 0, 2048], Some(368), Some(2.259)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], Some(368), Some(1.890)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], Some(368), Some(0.661)),
    ("k_barreg", [10, 16, 0, 0, 0, 0, 0], Some(364), Some(0.645)),
    ("k_bar15", [10, 16, 0, 0, 0, 0, 0], Some(360), Some(0.554)),
    ("k_bar5", [10, 6, 0, 0, 0, 0, 0], Some(360), Some(0.538)),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], Some(364), Some(1.971)),
    ("k_smem", [12, 1, 0, 0, 0, 0, 4096], Some(368), Some(0.822)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], Some(352), Some(0.295)),
];
/// `ptxas-12.9/multi.sm_90.g.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_MULTI_SM_90_G: &[Row] = &[
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(1.421)),
    ("k_smem", [17, 1, 0, 0, 0, 0, 4096], None, Some(1.597)),
    ("k_call", [24, 0, 0, 0, 0, 136, 0], None, Some(1.084)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.716)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.695)),
    ("k_barreg", [13, 16, 0, 0, 0, 0, 0], None, Some(0.802)),
    ("_Z5scalePffi", [12, 0, 0, 0, 0, 0, 0], None, Some(0.748)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [15, 1, 0, 0, 0, 0, 512], None, Some(2.243)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [16, 1, 0, 0, 0, 0, 2048], None, Some(2.244)),
    ("k_const", [13, 0, 0, 0, 0, 0, 0], None, Some(0.763)),
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(0.479)),
];
/// `ptxas-12.9/multi.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_MULTI_SM_90: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(2.680)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.006)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.838)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.275)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.883)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.697)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.672)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.745)),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], None, Some(2.021)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.048)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.301)),
];
/// `ptxas-12.9/multi_rdc.c.sm_52.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_MULTI_RDC_C_SM_52: &[Row] = &[
    ("k_count", [5, 0, 0, 0, 0, 0, 0], Some(320), Some(1.255)),
    ("k_const", [5, 0, 0, 0, 0, 0, 0], Some(332), Some(0.784)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 0], Some(336), Some(2.126)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [10, 1, 0, 0, 0, 0, 0], Some(336), Some(1.618)),
    ("_Z5scalePffi", [4, 0, 0, 0, 0, 0, 0], Some(336), Some(0.664)),
    ("k_barreg", [7, 16, 0, 0, 0, 0, 0], Some(332), Some(0.606)),
    ("k_bar15", [6, 16, 0, 0, 0, 0, 0], Some(328), Some(0.669)),
    ("k_bar5", [6, 6, 0, 0, 0, 0, 0], Some(328), Some(0.575)),
    ("k_call", [6, 0, 0, 0, 0, 0, 0], Some(332), Some(0.674)),
    ("k_smem", [9, 1, 0, 0, 0, 0, 4096], Some(336), Some(0.876)),
    ("k_empty", [2, 0, 0, 0, 0, 0, 0], Some(320), Some(0.401)),
];
/// `ptxas-12.9/multi_rdc.c.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_MULTI_RDC_C_SM_90: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(2.498)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.382)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 0], None, Some(4.473)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [10, 1, 0, 0, 0, 0, 0], None, Some(3.763)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(1.424)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(1.001)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.899)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.966)),
    ("k_call", [24, 0, 0, 0, 0, 0, 0], None, Some(1.333)),
    ("k_smem", [12, 1, 0, 0, 0, 0, 4096], None, Some(1.483)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.395)),
];
/// `ptxas-12.9/spill.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_SPILL_SM_90: &[Row] = &[
    ("heavy_free", [128, 0, 0, 0, 0, 0, 0], None, Some(24.761)),
    ("heavy_mr", [40, 0, 368, 728, 756, 368, 0], None, Some(29.075)),
    ("heavy_lb", [32, 0, 408, 864, 876, 408, 0], None, Some(32.265)),
];
/// `ptxas-12.9/spill.sm_90.warn.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_SPILL_SM_90_WARN: &[Row] = &[
    ("heavy_free", [48, 0, 336, 652, 680, 336, 0], None, Some(47.912)),
    ("heavy_mr", [40, 0, 368, 728, 756, 368, 0], None, Some(31.463)),
    ("heavy_lb", [32, 0, 408, 864, 876, 408, 0], None, Some(30.007)),
];
/// `ptxas-12.9/spill.sm_90.werror.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P12_9_SPILL_SM_90_WERROR: &[Row] = &[
    ("heavy_free", [128, 0, 0, 0, 0, 0, 0], None, Some(28.031)),
    ("heavy_mr", [40, 0, 368, 728, 756, 368, 0], None, Some(31.312)),
    ("heavy_lb", [32, 0, 408, 864, 876, 408, 0], None, Some(32.054)),
];
/// `ptxas-13.0/multi.sm_110.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P13_0_MULTI_SM_110: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(1.913)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.115)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(3.155)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.277)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.885)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.751)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.660)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.674)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], None, Some(2.189)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.242)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.434)),
];
/// `ptxas-13.0/multi.sm_75.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P13_0_MULTI_SM_75: &[Row] = &[
    ("k_count", [5, 0, 0, 0, 0, 0, 0], Some(352), Some(5.226)),
    ("k_const", [8, 0, 0, 0, 0, 0, 0], Some(364), Some(0.933)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [18, 1, 0, 0, 0, 0, 2048], Some(368), Some(2.148)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 512], Some(368), Some(1.686)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], Some(368), Some(0.599)),
    ("k_barreg", [10, 16, 0, 0, 0, 0, 0], Some(364), Some(0.547)),
    ("k_bar15", [10, 16, 0, 0, 0, 0, 0], Some(360), Some(0.498)),
    ("k_bar5", [10, 6, 0, 0, 0, 0, 0], Some(360), Some(0.620)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], Some(364), Some(1.822)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], Some(368), Some(0.719)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], Some(352), Some(0.248)),
];
/// `ptxas-13.0/spill.sm_120.warn.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
const P13_0_SPILL_SM_120_WARN: &[Row] = &[
    ("heavy_free", [126, 0, 0, 0, 0, 0, 0], None, Some(24.017)),
    ("heavy_mr", [40, 0, 368, 788, 816, 368, 0], None, Some(29.911)),
    ("heavy_lb", [64, 0, 272, 524, 532, 272, 0], None, Some(29.789)),
];

fn diag(severity: Severity, loc: Option<(&str, u32)>, message: &str, raw: &str) -> Diagnostic {
    Diagnostic {
        severity,
        file: loc.map(|(f, _)| f.to_string()),
        line: loc.map(|(_, n)| n),
        message: message.into(),
        raw: raw.into(),
    }
}

// ---- ptxas 12.9: one PTX file, six arches ----

#[test]
fn ptxas_12_9_multi_sm_52() {
    let log = check_multi("ptxas-12.9/multi.sm_52.log", "sm_52", P12_9_MULTI_SM_52, BELOW_SM90_CMEM);
    assert_eq!(
        log.entry("k_call").unwrap().lines,
        [
            "ptxas info    : Compiling entry function 'k_call' for 'sm_52'",
            "ptxas info    : Function properties for k_call",
            "    128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
            "ptxas info    : Used 32 registers, used 0 barriers, 128 bytes cumulative stack size, 332 bytes cmem[0]",
        ]
    );
}

#[test]
fn ptxas_12_9_multi_sm_75() {
    check_multi("ptxas-12.9/multi.sm_75.log", "sm_75", P12_9_MULTI_SM_75, BELOW_SM90_CMEM);
}

#[test]
fn ptxas_12_9_multi_sm_80() {
    check_multi("ptxas-12.9/multi.sm_80.log", "sm_80", P12_9_MULTI_SM_80, BELOW_SM90_CMEM);
}

#[test]
fn ptxas_12_9_multi_sm_90() {
    let log = check_multi("ptxas-12.9/multi.sm_90.log", "sm_90", P12_9_MULTI_SM_90, &[]);
    // sm_90 prints no cmem at all.
    assert!(log.entries.iter().all(|e| e.resources.cmem0.is_none()));
    assert_eq!(
        log.entry("k_smem").unwrap().lines[3],
        "ptxas info    : Used 14 registers, used 1 barriers, 4096 bytes smem"
    );
}

#[test]
fn ptxas_12_9_multi_sm_100() {
    check_multi("ptxas-12.9/multi.sm_100.log", "sm_100", P12_9_MULTI_SM_100, &[]);
}

#[test]
fn ptxas_12_9_multi_sm_120() {
    check_multi("ptxas-12.9/multi.sm_120.log", "sm_120", P12_9_MULTI_SM_120, &[]);
}

#[test]
fn ptxas_12_9_debug_warnings_two_spaces() {
    let log = load("ptxas-12.9/multi.sm_90.g.log");
    assert_eq!(log.gmem, Some(4));
    // -g prints the entries in source order.
    check_entries(&log, "sm_90", P12_9_MULTI_SM_90_G);
    // With -g the device function is compiled on its own, printed last with its own frame and
    // compile time; the caller's cumulative stack includes the callee's frame.
    assert_eq!(
        log.functions,
        [FunctionReport {
            name: "_Z4walkii".into(),
            stack_frame: 136,
            spill_stores: 0,
            spill_loads: 0,
            compile_time_ms: Some(1.367),
            lines: vec![
                "ptxas info    : Function properties for _Z4walkii".into(),
                "    136 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads".into(),
            ],
        }]
    );
    let k_call = log.entry("k_call").unwrap().resources;
    assert_eq!((k_call.stack_frame, k_call.cumulative_stack), (0, 136));
    assert_eq!(
        log.diagnostics,
        [
            diag(
                Severity::Warning,
                None,
                ".debug_abbrev section not found",
                "ptxas warning :  .debug_abbrev section not found"
            ),
            diag(
                Severity::Warning,
                None,
                ".debug_info section not found",
                "ptxas warning :  .debug_info section not found"
            ),
        ]
    );
    assert_eq!(log.warnings().count(), 2);
    assert_eq!(log.errors().count(), 0);
}

#[test]
fn ptxas_12_9_relocatable_device_function_first_with_compile_time() {
    for (rel, arch, rows, cmem, walk_time) in [
        ("ptxas-12.9/multi_rdc.c.sm_90.log", "sm_90", P12_9_MULTI_RDC_C_SM_90, &[][..], 2.673),
        ("ptxas-12.9/multi_rdc.c.sm_52.log", "sm_52", P12_9_MULTI_RDC_C_SM_52, &[(3, 1024)][..], 1.453),
    ] {
        let log = load(rel);
        assert_eq!(log.gmem, Some(4));
        let banks: Vec<ConstBank> = cmem.iter().map(|&(bank, bytes)| ConstBank { bank, bytes }).collect();
        assert_eq!(log.cmem, banks);
        check_entries(&log, arch, rows);
        // In -c mode the callee keeps its own frame and the caller has none.
        assert_eq!(
            log.functions,
            [FunctionReport {
                name: "_Z4walkii".into(),
                stack_frame: 136,
                spill_stores: 0,
                spill_loads: 0,
                compile_time_ms: Some(walk_time),
                lines: vec![
                    "ptxas info    : Function properties for _Z4walkii".into(),
                    "    136 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads".into(),
                ],
            }]
        );
        let k_call = log.entry("k_call").unwrap();
        assert_eq!((k_call.resources.stack_frame, k_call.resources.cumulative_stack), (0, 0));
        assert!(log.diagnostics.is_empty());
    }
}

// ---- spills, register caps, warnings and errors ----

#[test]
fn ptxas_12_9_spills() {
    let log = load("ptxas-12.9/spill.sm_90.log");
    assert_eq!(log.gmem, Some(0));
    assert_eq!(log.cmem, []);
    check_entries(&log, "sm_90", P12_9_SPILL_SM_90);
    assert!(log.functions.is_empty() && log.diagnostics.is_empty());
    // __launch_bounds__(1024, 2) -> 32 registers; __maxnreg__(40) -> 40; unbounded -> no spill.
    let r = |n: &str| log.entry(n).unwrap().resources;
    assert_eq!((r("heavy_lb").registers, r("heavy_mr").registers), (32, 40));
    assert_eq!(r("heavy_free").spill_stores, 0);
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

#[test]
fn ptxas_12_9_spill_warnings_and_override_infos() {
    let log = load("ptxas-12.9/spill.sm_90.warn.log");
    check_entries(&log, "sm_90", P12_9_SPILL_SM_90_WARN);
    let info = |m: &str| diag(Severity::Info, None, m, &format!("ptxas info    : {m}"));
    let warn = |m: &str| diag(Severity::Warning, None, m, &format!("ptxas warning : {m}"));
    assert_eq!(
        log.diagnostics,
        [
            info("Overriding maximum register limit 256 for 'heavy_free' with  48 of maxrregcount option"),
            info("Overriding global maxrregcount 48 with entry-specific value 40 of .maxnreg"),
            info("Overriding global maxrregcount 48 with entry-specific value 32 computed using thread count"),
            warn("Local memory used for function 'heavy_free', size of stack frame: 336 bytes"),
            warn("Registers are spilled to local memory in function 'heavy_free', 652 bytes spill stores, 680 bytes spill loads"),
            warn("Local memory used for function 'heavy_mr', size of stack frame: 368 bytes"),
            warn("Registers are spilled to local memory in function 'heavy_mr', 728 bytes spill stores, 756 bytes spill loads"),
            warn("Local memory used for function 'heavy_lb', size of stack frame: 408 bytes"),
            warn("Registers are spilled to local memory in function 'heavy_lb', 864 bytes spill stores, 876 bytes spill loads"),
        ]
    );
    assert_eq!(check_spill_warnings_agree(&log, Severity::Warning), 3);
    assert_eq!(log.errors().count(), 0);
    // -maxrregcount 48 capped the unbounded kernel.
    assert_eq!(log.entry("heavy_free").unwrap().resources.registers, 48);
}

#[test]
fn ptxas_12_9_werror_promotes_spill_warnings() {
    let log = load("ptxas-12.9/spill.sm_90.werror.log");
    check_entries(&log, "sm_90", P12_9_SPILL_SM_90_WERROR);
    let errors: Vec<&Diagnostic> = log.errors().collect();
    assert_eq!(errors.len(), 2);
    assert!(errors.iter().all(|d| d.severity == Severity::Error && d.raw.starts_with("ptxas error   : Registers")));
    assert_eq!(check_spill_warnings_agree(&log, Severity::Error), 2);
    assert_eq!(log.warnings().count(), 0);
}

#[test]
fn ptxas_12_9_directive_warnings_with_location() {
    let log = load("ptxas-12.9/directives.sm_80.log");
    assert_eq!(log.gmem, Some(0));
    check_entries(&log, "sm_80", P12_9_DIRECTIVES_SM_80);
    let located = &log.diagnostics[0];
    assert_eq!(
        *located,
        diag(
            Severity::Warning,
            Some(("directives.ptx", 23)),
            ".minnctapersm is ignored when neither .maxntid nor .reqntid is specified.",
            "ptxas directives.ptx, line 23; warning : .minnctapersm is ignored when neither .maxntid nor .reqntid is specified."
        )
    );
    // The location is the closing brace of the entry that carries the directive.
    assert_eq!(source_line("directives.ptx", 14), ".minnctapersm 2");
    assert_eq!(source_line("directives.ptx", 23), "}");
    let rest: Vec<(Severity, Option<u32>, &str)> =
        log.diagnostics[1..].iter().map(|d| (d.severity, d.line, d.message.as_str())).collect();
    assert_eq!(
        rest,
        [
            (
                Severity::Warning,
                None,
                "Value of threads per SM for entry k_outofrange is out of range. .minnctapersm will be ignored"
            ),
            (Severity::Warning, None, "Too many maxnreg specified for entry k_toomany, will be ignored"),
            (
                Severity::Warning,
                None,
                "For entry k_lowreg adjusting per thread register count of 8 to lower bound of 24"
            ),
        ]
    );
}

#[test]
fn ptxas_12_9_too_much_shared_data() {
    let log = load("ptxas-12.9/bigsmem.sm_90.log");
    assert_eq!(
        log.errors().cloned().collect::<Vec<_>>(),
        [diag(
            Severity::Error,
            None,
            "Entry function 'big_smem' uses too much shared data (0x10000 bytes, 0xc000 max)",
            "ptxas error   : Entry function 'big_smem' uses too much shared data (0x10000 bytes, 0xc000 max)"
        )]
    );
    // Printed before the gmem line, yet every entry is still reported.
    check_entries(&log, "sm_90", P12_9_BIGSMEM_SM_90);
    assert_eq!(log.entry("big_smem").unwrap().resources.shared_static, 0x10000);
}

#[test]
fn ptxas_12_9_syntax_errors_with_location() {
    let log = load("ptxas-12.9/bad_syntax.sm_90.log");
    assert_eq!(
        log.diagnostics,
        [
            diag(
                Severity::Error,
                Some(("bad_syntax.ptx", 13)),
                "Unknown modifier '.bar'",
                "ptxas bad_syntax.ptx, line 13; error   : Unknown modifier '.bar'"
            ),
            diag(
                Severity::Error,
                Some(("bad_syntax.ptx", 14)),
                "Not a name of any known instruction: 'foo'",
                "ptxas bad_syntax.ptx, line 14; error   : Not a name of any known instruction: 'foo'"
            ),
            diag(
                Severity::Fatal,
                None,
                "Ptx assembly aborted due to errors",
                "ptxas fatal   : Ptx assembly aborted due to errors"
            ),
        ]
    );
    assert!(source_line("bad_syntax.ptx", 13).contains("mov.u32.bar"));
    assert!(source_line("bad_syntax.ptx", 14).contains("foo.u32"));
    assert_eq!(log.errors().count(), 3);
    assert!(log.entries.is_empty() && log.functions.is_empty() && log.gmem.is_none());
}

#[test]
fn ptxas_12_9_unsupported_version_fatal() {
    let log = load("ptxas-12.9/bad_version.sm_90.log");
    assert_eq!(
        log.diagnostics[0],
        diag(
            Severity::Fatal,
            Some(("bad_version.ptx", 4)),
            "Unsupported .version 9.9; current version is '8.8'",
            "ptxas bad_version.ptx, line 4; fatal   : Unsupported .version 9.9; current version is '8.8'"
        )
    );
    assert_eq!(source_line("bad_version.ptx", 4), ".version 9.9");
    assert_eq!(log.diagnostics.len(), 2);
    assert!(log.entries.is_empty() && log.gmem.is_none());
}

#[test]
fn ptxas_12_9_parsing_error_fatal() {
    let log = load("ptxas-12.9/bad_maxnreg.sm_90.log");
    let d = &log.diagnostics[0];
    assert_eq!((d.severity, d.file.as_deref(), d.line), (Severity::Fatal, Some("bad_maxnreg.ptx"), Some(9)));
    assert_eq!(d.message, "Parsing error near '-': syntax error");
    assert_eq!(source_line("bad_maxnreg.ptx", 9), ".maxnreg -5");
    assert_eq!(log.errors().count(), 2);
}

#[test]
fn ptxas_12_9_unknown_arch_fatal() {
    let log = load("ptxas-12.9/bad_arch.sm_110.log");
    assert_eq!(
        log.diagnostics,
        [diag(
            Severity::Fatal,
            None,
            "Value 'sm_110' is not defined for option 'gpu-name'",
            "ptxas fatal   : Value 'sm_110' is not defined for option 'gpu-name'"
        )]
    );
    assert!(log.entries.is_empty());
}

// ---- other ptxas versions ----

#[test]
fn ptxas_12_4_has_no_barriers_and_no_compile_time() {
    let log = check_multi("ptxas-12.4/multi_v84.sm_80.log", "sm_80", P12_4_MULTI_V84_SM_80, BELOW_SM90_CMEM);
    assert!(log.entries.iter().all(|e| !e.barriers_reported() && e.compile_time_ms.is_none()));
    assert_eq!(log.entry("k_bar15").unwrap().lines[3], "ptxas info    : Used 10 registers, 360 bytes cmem[0]");
}

#[test]
fn ptxas_12_4_rejects_ptx_8_8() {
    let log = load("ptxas-12.4/multi.sm_90.log");
    assert_eq!(
        log.diagnostics[0],
        diag(
            Severity::Fatal,
            Some(("multi.ptx", 9)),
            "Unsupported .version 8.8; current version is '8.4'",
            "ptxas multi.ptx, line 9; fatal   : Unsupported .version 8.8; current version is '8.4'"
        )
    );
    assert_eq!(source_line("multi.ptx", 9), ".version 8.8");
    assert_eq!(log.errors().count(), 2);
    assert!(log.entries.is_empty());
}

#[test]
fn ptxas_12_6_has_barriers_but_no_compile_time() {
    let log = check_multi("ptxas-12.6/multi_v84.sm_90.log", "sm_90", P12_6_MULTI_V84_SM_90, &[]);
    assert!(log.entries.iter().all(|e| e.barriers_reported() && e.compile_time_ms.is_none()));
}

#[test]
fn ptxas_12_8_has_compile_time() {
    let log = check_multi("ptxas-12.8/multi_v84.sm_120.log", "sm_120", P12_8_MULTI_V84_SM_120, &[]);
    assert!(log.entries.iter().all(|e| e.barriers_reported() && e.compile_time_ms.is_some()));
}

#[test]
fn ptxas_13_0_multi() {
    check_multi("ptxas-13.0/multi.sm_75.log", "sm_75", P13_0_MULTI_SM_75, BELOW_SM90_CMEM);
    let log = check_multi("ptxas-13.0/multi.sm_110.log", "sm_110", P13_0_MULTI_SM_110, &[]);
    assert_eq!(log.entry("k_call").unwrap().resources.registers, 40);
}

#[test]
fn ptxas_13_0_spills_on_sm_120() {
    let log = load("ptxas-13.0/spill.sm_120.warn.log");
    check_entries(&log, "sm_120", P13_0_SPILL_SM_120_WARN);
    assert_eq!(
        log.diagnostics[0].message,
        "Value of threads per SM for entry heavy_lb is out of range. .minnctapersm will be ignored"
    );
    assert_eq!(check_spill_warnings_agree(&log, Severity::Warning), 2);
    assert_eq!(log.diagnostics.len(), 3);
}

// ---- NVRTC program logs ----

#[test]
fn nvrtc_multi_continuation_form() {
    let log = load("nvrtc-12.9/multi.sm_90.log");
    assert_eq!(log.gmem, Some(4));
    check_entries(&log, "sm_90", NVRTC12_9_MULTI_SM_90);
    check_walk_whole_program(&log, "ptxas         .     ");
    assert!(log.entries.iter().all(|e| e.lines[2].starts_with("ptxas         .     ")));
    assert_eq!(
        log.entry("k_call").unwrap().lines[2],
        "ptxas         .     128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
    );
    assert!(log.diagnostics.is_empty());
    // Same source, same arch, same numbers as ptxas on the compute_52 PTX.
    let ptxas = load("ptxas-12.9/multi.sm_90.log");
    for e in &ptxas.entries {
        assert_eq!(log.entry(&e.name).unwrap().resources, e.resources, "{}", e.name);
    }
}

#[test]
fn nvrtc_spill_log_skips_nvrtc_lines() {
    let text = read("nvrtc-12.9/spill.sm_52.log");
    assert!(text.starts_with("nvrtc: warning: Architectures prior to"));
    let log = parse(&text).unwrap();
    check_entries(&log, "sm_52", NVRTC12_9_SPILL_SM_52);
    assert_eq!(log.diagnostics.len(), 2);
    assert_eq!(check_spill_warnings_agree(&log, Severity::Warning), 2);
    assert!(log.diagnostics.iter().all(|d| d.raw.starts_with("ptxas warning : ")));
}

#[test]
fn nvrtc_front_end_warning_and_source_excerpt_ignored() {
    let text = read("nvrtc-12.9/frontend_warn.sm_90.log");
    assert!(text.contains("\n      int unused = 42;\n"), "the fixture has an indented non-ptxas line");
    let log = parse(&text).unwrap();
    check_entries(&log, "sm_90", NVRTC12_9_FRONTEND_WARN_SM_90);
    assert_eq!(log.gmem, Some(0));
    assert!(log.diagnostics.is_empty() && log.functions.is_empty());
}

// ---- every fixture ----

#[test]
fn manifest_lists_every_log_and_all_parse() {
    let manifest = read("manifest.tsv");
    let listed: Vec<&str> = manifest.lines().skip(1).map(|l| l.split('\t').next().unwrap()).collect();
    let logs = all_logs();
    let found: Vec<&str> = logs.iter().map(|(rel, _)| rel.as_str()).collect();
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, found);
    assert_eq!(found.len(), 28);
    for (rel, text) in &logs {
        let log = parse(text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        // serde round trip (the report is embedded as JSON by the build).
        let json = serde_json::to_string(&log).unwrap();
        let back: PtxasLog = serde_json::from_str(&json).unwrap();
        assert_eq!(back, log, "{rel}");
        // Every `Compiling entry` line became an entry; every warning/error/fatal a diagnostic.
        let count = |pat: &str| text.lines().filter(|l| l.contains(pat)).count();
        assert_eq!(log.entries.len(), count("Compiling entry function"), "{rel}");
        let severe = text
            .lines()
            .filter(|l| {
                l.starts_with("ptxas") && [" warning :", " error   :", " fatal   :"].iter().any(|k| l.contains(k))
            })
            .count();
        assert_eq!(log.diagnostics.iter().filter(|d| d.severity > Severity::Info).count(), severe, "{rel}");
        // Exit status 255 in the manifest <=> an error or fatal line in the log.
        let rc = manifest.lines().find(|l| l.starts_with(&format!("{rel}\t"))).unwrap().rsplit('\t').next().unwrap();
        assert_eq!(rc != "0", log.errors().next().is_some(), "{rel}: rc {rc}");
    }
}

#[test]
fn crlf_parses_like_lf() {
    for (rel, text) in all_logs() {
        assert_eq!(parse(&text.replace('\n', "\r\n")), parse(&text), "{rel}");
    }
}

#[test]
fn concatenated_runs_key_by_name_and_arch() {
    let text = read("ptxas-12.9/multi.sm_52.log") + &read("ptxas-12.9/multi.sm_90.log");
    let log = parse(&text).unwrap();
    assert_eq!(log.entries.len(), 22);
    assert_eq!(log.entry("k_smem").unwrap().arch, "sm_52");
    assert_eq!(log.entry_for("k_smem", "sm_52").unwrap().resources.registers, 9);
    assert_eq!(log.entry_for("k_smem", "sm_90").unwrap().resources.registers, 14);
    assert!(log.entry_for("k_smem", "sm_80").is_none());
    assert_eq!(log.functions.len(), 2);
    assert_eq!(log.function("_Z4walkii").unwrap().stack_frame, 0);
    // The first module line wins.
    assert_eq!(log.cmem.len(), 2);
}

// ---- synthetic inputs (hand-written, each exercising one rule) ----

const ENTRY_HEAD: &str = "ptxas info    : 0 bytes gmem\n\
    ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
    ptxas info    : Function properties for k\n";

#[test]
fn synthetic_used_line_optional_and_unknown_fields() {
    let log = parse(&format!(
        "{ENTRY_HEAD}    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
         ptxas info    : Used 30 registers, used 1 barriers, 128 bytes cumulative stack size, 2048 bytes smem, 332 bytes cmem[0], 16 bytes cmem[2], 3 frobs\n"
    ))
    .unwrap();
    assert_eq!(log.entry("k").unwrap().resources, res([30, 1, 8, 4, 12, 128, 2048], Some(332)));
    assert_eq!(log.entry("k").unwrap().compile_time_ms, None);

    let log = parse(&format!("{ENTRY_HEAD}    0 bytes stack frame\nptxas info    : Used 7 registers\n")).unwrap();
    let k = log.entry("k").unwrap();
    assert_eq!(k.resources, res([7, 0, 0, 0, 0, 0, 0], None));
    assert!(!k.barriers_reported());
}

#[test]
fn synthetic_unknown_info_lines_are_kept_not_errors() {
    let text = "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.\n\
                ptxas info    : Something new = 12 widgets\n\
                ptxas t.ptx, line 7; info    : located info\n";
    let log = parse(text).unwrap();
    assert_eq!(
        log.diagnostics.iter().map(|d| (d.severity, d.line, d.message.as_str())).collect::<Vec<_>>(),
        [
            (Severity::Info, None, "(C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry."),
            (Severity::Info, None, "Something new = 12 widgets"),
            (Severity::Info, Some(7), "located info"),
        ]
    );
    assert_eq!(log.errors().count() + log.warnings().count(), 0);
}

#[test]
fn synthetic_non_ptxas_lines_ignored() {
    let text = "ptxas: NVIDIA (R) Ptx optimizing assembler\n\
                Cuda compilation tools, release 12.9, V12.9.86\n\
                ptxasfoo : bar\n\
                ptxas\n\
                ptxas         .     not a stack line\n\
                \x20   some indented text\n\
                \tUsed 5 registers\n\
                poly.cu(3): error: identifier \"x\" is undefined\n\
                \n";
    let log = parse(text).unwrap();
    assert_eq!(log, PtxasLog { gmem: None, cmem: vec![], entries: vec![], functions: vec![], diagnostics: vec![] });
    assert_eq!(parse("").unwrap(), log);
}

#[test]
fn synthetic_location_with_odd_file_names() {
    let log = parse("ptxas /tmp/a b, c.ptx, line 12; error   : Arguments mismatch; for instruction 'mov'\n").unwrap();
    let d = &log.diagnostics[0];
    assert_eq!((d.file.as_deref(), d.line, d.severity), (Some("/tmp/a b, c.ptx"), Some(12), Severity::Error));
    assert_eq!(d.message, "Arguments mismatch; for instruction 'mov'");
}

/// A malformed number in any known field fails with the line's number.
#[test]
fn synthetic_malformed_numbers_are_errors() {
    let stack = "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
    let cases: Vec<(String, usize, &str)> = vec![
        (format!("{ENTRY_HEAD}{stack}ptxas info    : Used 1x registers, used 0 barriers\n"), 5, "register count"),
        (format!("{ENTRY_HEAD}{stack}ptxas info    : Used 99999999999 registers\n"), 5, "register count"),
        (format!("{ENTRY_HEAD}{stack}ptxas info    : Used 8 registers, used -1 barriers\n"), 5, "barrier count"),
        (
            format!(
                "{ENTRY_HEAD}{stack}ptxas info    : Used 8 registers, used 0 barriers, x bytes cumulative stack size\n"
            ),
            5,
            "cumulative",
        ),
        (format!("{ENTRY_HEAD}{stack}ptxas info    : Used 8 registers, used 0 barriers, 4k bytes smem\n"), 5, "smem"),
        (format!("{ENTRY_HEAD}{stack}ptxas info    : Used 8 registers, 0x10 bytes cmem[0]\n"), 5, "cmem[0]"),
        (format!("{ENTRY_HEAD}{stack}ptxas info    : Used eight registers\n"), 5, "register count"),
        (format!("{ENTRY_HEAD}{stack}ptxas info    : Used\n"), 5, "Used <N> registers"),
        (format!("{ENTRY_HEAD}{stack}ptxas info    : Compile time = 1,5 ms\n"), 5, "Compile time"),
        (format!("{ENTRY_HEAD}{stack}ptxas info    : Compile time = inf ms\n"), 5, "Compile time"),
        (
            format!("{ENTRY_HEAD}    1.5 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"),
            4,
            "stack frame",
        ),
        (
            format!("{ENTRY_HEAD}    0 bytes stack frame, ? bytes spill stores, 0 bytes spill loads\n"),
            4,
            "spill stores",
        ),
        (
            format!(
                "{ENTRY_HEAD}ptxas         .     0 bytes stack frame, 0 bytes spill stores, -0 bytes spill loads\n"
            ),
            4,
            "spill loads",
        ),
        ("ptxas info    : 4.0 bytes gmem\n".into(), 1, "gmem"),
        ("ptxas info    : 4 bytes gmem, 8 bytes cmem[x]\n".into(), 1, "constant bank"),
        ("ptxas info    : 4 bytes gmem, 8 bytes cmem[3\n".into(), 1, "constant bank"),
        ("ptxas info    : 4 bytes gmem, eight bytes cmem[3]\n".into(), 1, "constant bank size"),
        ("\nptxas t.ptx, line 1e3; error   : x\n".into(), 2, "PTX line number"),
        ("ptxas info    : Compiling entry function k for sm_90\n".into(), 1, "Compiling entry function"),
    ];
    for (text, line_no, reason) in cases {
        let err = parse(&text).expect_err(&text);
        assert_eq!(err.line_no, line_no, "{text}");
        assert_eq!(err.line, text.lines().nth(line_no - 1).unwrap(), "{text}");
        assert!(err.reason.contains(reason), "{text}: {}", err.reason);
    }
}

#[test]
fn synthetic_structure_errors() {
    let stack = "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
    let used = "ptxas info    : Used 8 registers, used 0 barriers\n";
    for (text, line_no) in [
        (stack.to_string(), 1),
        (format!("{ENTRY_HEAD}{stack}{stack}"), 5),
        (used.to_string(), 1),
        (format!("{ENTRY_HEAD}{stack}{used}{used}"), 6),
    ] {
        let err = parse(&text).expect_err(&text);
        assert_eq!(err.line_no, line_no, "{text}");
    }
}

#[test]
fn parse_error_display() {
    let err = parse("ptxas info    : 1 bytes gmem\n    x bytes stack frame\n").unwrap_err();
    assert_eq!(err.to_string(), "ptxas log, line 2: malformed stack frame size `x`: `    x bytes stack frame`");
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert!(boxed.to_string().starts_with("ptxas log, line 2"));
}

#[test]
fn device_function_between_entries_does_not_take_the_used_line() {
    // Device-function block printed inside an entry block (before its Used line).
    let text = "ptxas info    : Compiling entry function 'k' for 'sm_80'\n\
                ptxas info    : Function properties for k\n\
                \x20   16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                ptxas info    : Function properties for f\n\
                \x20   8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
                ptxas info    : Used 20 registers, used 0 barriers, 24 bytes cumulative stack size, 356 bytes cmem[0]\n\
                ptxas info    : Compile time = 1.000 ms\n";
    let log = parse(text).unwrap();
    assert_eq!(log.entry("k").unwrap().resources, res([20, 0, 16, 0, 0, 24, 0], Some(356)));
    assert_eq!(log.entry("k").unwrap().compile_time_ms, Some(1.0));
    let f = log.function("f").unwrap();
    assert_eq!((f.stack_frame, f.spill_stores, f.spill_loads, f.compile_time_ms), (8, 4, 4, None));

    // A device function's block ahead of the entry's own: keyed by name, not by position.
    let text = "ptxas info    : Compiling entry function 'k' for 'sm_80'\n\
                ptxas info    : Function properties for f\n\
                \x20   8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                ptxas info    : Function properties for k\n\
                \x20   16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                ptxas info    : Used 20 registers, used 0 barriers\n";
    let log = parse(text).unwrap();
    assert_eq!(log.entry("k").unwrap().resources.stack_frame, 16);
    assert_eq!(log.function("f").unwrap().stack_frame, 8);
    assert_eq!(log.functions.len(), 1);
}

#[test]
fn synthetic_bare_carriage_return_on_last_line() {
    let log = parse(&format!("{ENTRY_HEAD}    0 bytes stack frame\r\nptxas info    : Used 8 registers\r")).unwrap();
    let k = log.entry("k").unwrap();
    assert_eq!(k.lines[2], "    0 bytes stack frame");
    assert_eq!(k.lines[3], "ptxas info    : Used 8 registers");
    assert_eq!(k.resources.registers, 8);
}

// ---- robustness ----

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "ptxas",
    "ptxas ",
    "ptxas info    : ",
    "ptxas warning : ",
    "ptxas error   : ",
    "ptxas fatal   : ",
    "ptxas         .     ",
    "    ",
    " ",
    "\t",
    "info",
    "warning",
    "error",
    "fatal",
    ":",
    " : ",
    ", line ",
    "; ",
    "'",
    "Used ",
    "used ",
    " registers",
    " barriers",
    " bytes",
    " bytes stack frame",
    " bytes spill stores",
    " bytes spill loads",
    " bytes cumulative stack size",
    " bytes smem",
    " bytes cmem[",
    "]",
    "cmem[0]",
    " bytes gmem",
    "Compile time",
    " = ",
    " ms",
    "Function properties for ",
    "Compiling entry function ",
    "' for '",
    ",",
    ", ",
    ".",
    "0",
    "1",
    "42",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "-5",
    "1e9",
    "é",
    "\u{1F600}",
    "\r",
    "\u{0}",
    "sm_90",
    "k",
    "_Z4walkii",
    "t.ptx",
    "NaN",
    "inf",
];

fn garbage_line(rng: &mut Rng) -> String {
    (0..rng.below(12)).map(|_| PIECES[rng.below(PIECES.len())]).collect()
}

#[test]
fn never_panics_on_truncations() {
    for (_, text) in all_logs() {
        // Every prefix, cut anywhere (on a char boundary), and every line-suffix.
        for (i, _) in text.char_indices() {
            let _ = parse(&text[..i]);
        }
        let lines: Vec<&str> = text.lines().collect();
        for k in 0..=lines.len() {
            let _ = parse(&lines[k..].join("\n"));
        }
    }
}

#[test]
fn never_panics_on_garbage() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        let text: Vec<String> = (0..1 + rng.below(8)).map(|_| garbage_line(&mut rng)).collect();
        let _ = parse(&text.join("\n"));
    }
    for (_, text) in all_logs() {
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..200 {
            let mut mutated: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(mutated.len() + 1);
                match rng.below(3) {
                    0 => mutated.insert(at, garbage_line(&mut rng)),
                    1 if at < mutated.len() => mutated[at].push_str(&garbage_line(&mut rng)),
                    _ if at < mutated.len() => {
                        let l = &mutated[at];
                        let cut =
                            l.char_indices().map(|(i, _)| i).nth(rng.below(l.chars().count() + 1)).unwrap_or(l.len());
                        mutated[at] = format!("{}{}", &l[..cut], garbage_line(&mut rng));
                    }
                    _ => mutated.push(garbage_line(&mut rng)),
                }
            }
            let _ = parse(&mutated.join("\n"));
        }
    }
}

//! Other ptxas versions, NVRTC program logs, and every recorded log at once.

use super::*;

// ---- other ptxas versions ----

#[test]
fn ptxas_12_4_has_no_barriers_and_no_compile_time() {
    let log = check_multi("ptxas-12.4/multi_v84.sm_80.log", "sm_80", BELOW_SM90_CMEM);
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
    let log = check_multi("ptxas-12.6/multi_v84.sm_90.log", "sm_90", &[]);
    assert!(log.entries.iter().all(|e| e.barriers_reported() && e.compile_time_ms.is_none()));
}

#[test]
fn ptxas_12_8_has_compile_time() {
    let log = check_multi("ptxas-12.8/multi_v84.sm_120.log", "sm_120", &[]);
    assert!(log.entries.iter().all(|e| e.barriers_reported() && e.compile_time_ms.is_some()));
}

#[test]
fn ptxas_13_0_multi() {
    check_multi("ptxas-13.0/multi.sm_75.log", "sm_75", BELOW_SM90_CMEM);
    let log = check_multi("ptxas-13.0/multi.sm_110.log", "sm_110", &[]);
    assert_eq!(log.entry("k_call").unwrap().resources.registers, 40);
}

#[test]
fn ptxas_13_0_spills_on_sm_120() {
    let log = load("ptxas-13.0/spill.sm_120.warn.log");
    check_entries(&log, "sm_120", "ptxas-13.0/spill.sm_120.warn.log");
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
    check_entries(&log, "sm_90", "nvrtc-12.9/multi.sm_90.log");
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
    check_entries(&log, "sm_52", "nvrtc-12.9/spill.sm_52.log");
    assert_eq!(log.diagnostics.len(), 2);
    assert_eq!(check_spill_warnings_agree(&log, Severity::Warning), 2);
    assert!(log.diagnostics.iter().all(|d| d.raw.starts_with("ptxas warning : ")));
}

#[test]
fn nvrtc_front_end_warning_and_source_excerpt_ignored() {
    let text = read("nvrtc-12.9/frontend_warn.sm_90.log");
    assert!(text.contains("\n      int unused = 42;\n"), "the fixture has an indented non-ptxas line");
    let log = parse(&text).unwrap();
    check_entries(&log, "sm_90", "nvrtc-12.9/frontend_warn.sm_90.log");
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

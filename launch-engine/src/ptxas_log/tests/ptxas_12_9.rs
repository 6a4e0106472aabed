//! ptxas 12.9's logs: one PTX file on six arches, debug builds, relocatable code, spills,
//! register caps, warnings and errors.

use super::*;

#[test]
fn ptxas_12_9_multi_sm_52() {
    let log = check_multi("ptxas-12.9/multi.sm_52.log", "sm_52", BELOW_SM90_CMEM);
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
    check_multi("ptxas-12.9/multi.sm_75.log", "sm_75", BELOW_SM90_CMEM);
}

#[test]
fn ptxas_12_9_multi_sm_80() {
    check_multi("ptxas-12.9/multi.sm_80.log", "sm_80", BELOW_SM90_CMEM);
}

#[test]
fn ptxas_12_9_multi_sm_90() {
    let log = check_multi("ptxas-12.9/multi.sm_90.log", "sm_90", &[]);
    // sm_90 prints no cmem at all.
    assert!(log.entries.iter().all(|e| e.resources.cmem0.is_none()));
    assert_eq!(
        log.entry("k_smem").unwrap().lines[3],
        "ptxas info    : Used 14 registers, used 1 barriers, 4096 bytes smem"
    );
}

#[test]
fn ptxas_12_9_multi_sm_100() {
    check_multi("ptxas-12.9/multi.sm_100.log", "sm_100", &[]);
}

#[test]
fn ptxas_12_9_multi_sm_120() {
    check_multi("ptxas-12.9/multi.sm_120.log", "sm_120", &[]);
}

#[test]
fn ptxas_12_9_debug_warnings_two_spaces() {
    let log = load("ptxas-12.9/multi.sm_90.g.log");
    assert_eq!(log.gmem, Some(4));
    // -g prints the entries in source order.
    check_entries(&log, "sm_90", "ptxas-12.9/multi.sm_90.g.log");
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
    for (rel, arch, cmem, walk_time) in [
        ("ptxas-12.9/multi_rdc.c.sm_90.log", "sm_90", &[][..], 2.673),
        ("ptxas-12.9/multi_rdc.c.sm_52.log", "sm_52", &[(3, 1024)][..], 1.453),
    ] {
        let log = load(rel);
        assert_eq!(log.gmem, Some(4));
        let banks: Vec<ConstBank> = cmem.iter().map(|&(bank, bytes)| ConstBank { bank, bytes }).collect();
        assert_eq!(log.cmem, banks);
        check_entries(&log, arch, rel);
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
    check_entries(&log, "sm_90", "ptxas-12.9/spill.sm_90.log");
    assert!(log.functions.is_empty() && log.diagnostics.is_empty());
    // __launch_bounds__(1024, 2) -> 32 registers; __maxnreg__(40) -> 40; unbounded -> no spill.
    let r = |n: &str| log.entry(n).unwrap().resources;
    assert_eq!((r("heavy_lb").registers, r("heavy_mr").registers), (32, 40));
    assert_eq!(r("heavy_free").spill_stores, 0);
}

#[test]
fn ptxas_12_9_spill_warnings_and_override_infos() {
    let log = load("ptxas-12.9/spill.sm_90.warn.log");
    check_entries(&log, "sm_90", "ptxas-12.9/spill.sm_90.warn.log");
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
    check_entries(&log, "sm_90", "ptxas-12.9/spill.sm_90.werror.log");
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
    check_entries(&log, "sm_80", "ptxas-12.9/directives.sm_80.log");
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
    check_entries(&log, "sm_90", "ptxas-12.9/bigsmem.sm_90.log");
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

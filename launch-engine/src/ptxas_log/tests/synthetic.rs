//! Hand-written logs, each exercising one rule of the grammar.

use super::*;

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
    assert_eq!(
        log.entry("k").unwrap().resources,
        Resources {
            registers: 30,
            barriers: 1,
            stack_frame: 8,
            spill_stores: 4,
            spill_loads: 12,
            cumulative_stack: 128,
            shared_static: 2048,
            cmem0: Some(332)
        }
    );
    assert_eq!(log.entry("k").unwrap().compile_time_ms, None);

    let log = parse(&format!("{ENTRY_HEAD}    0 bytes stack frame\nptxas info    : Used 7 registers\n")).unwrap();
    let k = log.entry("k").unwrap();
    assert_eq!(k.resources, Resources { registers: 7, ..Resources::default() });
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
    assert_eq!(
        log.entry("k").unwrap().resources,
        Resources { registers: 20, stack_frame: 16, cumulative_stack: 24, cmem0: Some(356), ..Resources::default() }
    );
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

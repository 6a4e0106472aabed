//! The format on constructed baselines: round trips, damaged files, older versions.

use super::*;

fn entry(registers: u32, occupancy: f64) -> Entry {
    Entry::of(&Resources { registers, ..Resources::ZERO }, occupancy, None)
}

/// A record's fields after its registers, as v4 writes a kernel with no other resource on
/// sm_90 or newer: the one literal spelling of a record's fields in these tests (the format's pin;
/// a field added to the table is added here).
const REST: &str = "barriers=0 stack_frame=0 spill_stores=0 spill_loads=0 cumulative_stack=0 shared_static=0 cmem=-";

fn two() -> Baseline {
    let mut b = Baseline::new();
    b.insert(("z".into(), "sm_90".into()), entry(32, 100.0));
    b.insert(("a".into(), "sm_100".into()), entry(167, 12.5));
    b
}

fn error(text: &str) -> String {
    parse(Path::new("launch-baseline.txt"), text).unwrap_err().to_string()
}

#[test]
fn render_and_parse_round_trip_sorted() {
    let b = two();
    let text = render(&b);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# cargo-launch baseline v4 records=2");
    assert!(lines[1].starts_with("# cargo launch check --bless: "));
    assert_eq!(
        lines[2..],
        [
            format!("a sm_100 registers=167 {REST} occupancy=12.5"),
            format!("z sm_90 registers=32 {REST} occupancy=100.0")
        ]
    );
    let parsed = parse(Path::new("b"), &text).unwrap();
    assert_eq!((parsed.records, parsed.version), (b, VERSION));
    assert_eq!(parsed.lines[&("z".to_string(), "sm_90".to_string())], 4);
    let empty = render(&Baseline::new());
    assert_eq!(parse(Path::new("b"), &empty).unwrap().records, Baseline::new(), "zero records is a valid baseline");
}

#[test]
fn bad_lines_name_their_location() {
    let text = render(&two()).replace("registers=32", "registers=x");
    let e = error(&text);
    assert!(e.contains("launch-baseline.txt:4: `registers=x` is not a number"), "{e}");
    let e = error(&render(&two()).replace("occupancy=12.5", "occupancy=NaN"));
    assert!(e.contains("launch-baseline.txt:3: `occupancy` is not a percentage from 0 to 100"), "{e}");
}

#[test]
fn a_truncated_baseline_is_an_error_not_new_kernels() {
    let text = render(&two());
    // Cut at a line boundary: the count no longer matches.
    let cut: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    let e = error(&cut);
    assert!(e.contains("launch-baseline.txt:1: the header says records=2 but the file holds 1 record:"), "{e}");
    assert!(e.contains("re-bless with `cargo launch check --bless`"), "{e}");
    // Cut inside the last line ("occupancy=100.0" → "occupancy=10"): no final newline.
    let e = error(&text[..text.len() - 4]);
    assert!(e.contains("launch-baseline.txt:4: the last line has no newline: the file was cut short"), "{e}");
    // Cut inside the header.
    let e = error("# cargo-launch baseline v4 rec\n");
    assert!(e.contains("launch-baseline.txt:1: malformed header"), "{e}");
}

#[test]
fn an_empty_baseline_is_an_error() {
    for text in ["", "\n", "  \n\n"] {
        let e = error(text);
        assert!(e.contains("launch-baseline.txt:1: the baseline is empty"), "{text:?}: {e}");
    }
}

#[test]
fn a_duplicated_record_is_an_error() {
    let text = render(&two());
    let line = text.lines().nth(2).unwrap();
    let doubled = text.replace("records=2", "records=3") + line + "\n";
    let e = error(&doubled);
    assert!(e.contains("launch-baseline.txt:5: `a sm_100` appears twice (first at line 3)"), "{e}");
}

#[test]
fn a_file_without_the_header_is_an_error() {
    let text = render(&two());
    let headless: String = text.lines().skip(2).map(|l| format!("{l}\n")).collect();
    let e = error(&headless);
    assert!(e.contains("launch-baseline.txt:1: no `# cargo-launch baseline v4 records=N` header"), "{e}");
    let e = error(&text.replace("v4", "v5"));
    assert!(
        e.contains("launch-baseline.txt:1: baseline format v5; this cargo-launch reads v4 (and v3, v2, v1)"),
        "{e}"
    );
}

#[test]
fn a_version_1_baseline_is_still_read() {
    // What `--bless` wrote before the version header existed.
    let v1 = format!("{V1_HEADER}\nk sm_90 registers=8 spill_bytes=0 stack=0 shared=0 occupancy=50.0\n");
    let p = parse(Path::new("b"), &v1).unwrap();
    assert_eq!(p.version, 1);
    assert_eq!(p.records.len(), 1);
    // Duplicates are caught in v1 too.
    let e = error(&format!("{v1}k sm_90 registers=8 spill_bytes=0 stack=0 shared=0 occupancy=50.0\n"));
    assert!(e.contains("appears twice"), "{e}");
}

#[test]
fn keys_with_spaces_and_escapes_round_trip_as_one_word() {
    // A C++ kernel's demangled name holds spaces; its key is the file and the mangled symbol,
    // and a file path may hold spaces, `%`, `#`, tabs or non-ASCII.
    let keys = [
        key("kernels/t.cu", "_Z4tmplILi8EEvPi"),
        key("kernels/my dir/a b.cu", "fill"),
        key("kernels/100%#1\tπ\u{a0}.cu", "k"),
        "void tmpl<8>(int*)".to_string(),
        "#ns::k %20".to_string(),
    ];
    let mut b = Baseline::new();
    for k in &keys {
        b.insert((k.clone(), "sm_80".into()), entry(8, 50.0));
    }
    let text = render(&b);
    for line in text.lines().skip(2) {
        assert_eq!(line.split_whitespace().count(), 3 + Resources::FIELDS.len(), "one word per key: {line}");
        assert!(!line.starts_with('#'), "{line}");
    }
    assert!(text.contains("\nkernels/my%20dir/a%20b.cu::fill sm_80 "), "{text}");
    assert!(text.contains("\nkernels/100%25%231%09π%C2%A0.cu::k sm_80 "), "{text}");
    assert_eq!(parse(Path::new("b"), &text).unwrap().records, b);
    for k in &keys {
        assert_eq!(decode_key(&encode_key(k)).as_deref(), Ok(k.as_str()));
    }
}

#[test]
fn a_bad_escape_in_a_key_is_an_error_at_its_line() {
    let text = render(&two()).replace("\nz sm_90", "\nz%4 sm_90");
    let e = error(&text);
    assert!(e.contains("launch-baseline.txt:4: the kernel `z%4`: `%4` is not a `%XX` escape"), "{e}");
    let e = error(&render(&two()).replace("\nz sm_90", "\n%ff sm_90"));
    assert!(e.contains("launch-baseline.txt:4: the kernel `%ff`: its `%XX` escapes are not UTF-8"), "{e}");
    assert!(decode_key("%+f").is_err(), "a sign is not a hex digit");
}

#[test]
fn a_version_2_baseline_with_spaced_display_names_is_read() {
    // What v2's `--bless` wrote for a C++ template kernel: the display name holds spaces.
    let v2 = "# cargo-launch baseline v2 records=2\n\
              void tmpl<8>(int*) sm_80 registers=8 spill_bytes=0 stack=0 shared=0 occupancy=50.0\n\
              fill sm_90 registers=9 spill_bytes=0 stack=0 shared=0 occupancy=50.0\n";
    let p = parse(Path::new("b"), v2).unwrap();
    assert_eq!(p.version, V2);
    let keys: Vec<_> = p.records.keys().cloned().collect();
    assert_eq!(
        keys,
        [("fill".to_string(), "sm_90".to_string()), ("void tmpl<8>(int*)".to_string(), "sm_80".to_string())]
    );
    let e = error("# cargo-launch baseline v2 records=1\nsm_80 registers=8\n");
    assert!(e.contains("launch-baseline.txt:2: expected `kernel arch key=value...`"), "{e}");
}

#[test]
fn non_utf8_names_line_and_byte() {
    let mut bytes = render(&two()).into_bytes();
    let at = bytes.windows(3).position(|w| w == b"\nz ").unwrap();
    bytes[at + 2] = 0xff;
    let e = decode(Path::new("launch-baseline.txt"), &bytes).unwrap_err().to_string();
    assert!(e.contains("launch-baseline.txt:4:2: not UTF-8 (byte 0xff at offset"), "{e}");
}

#[test]
fn a_record_with_a_repeated_unknown_or_misspelt_field_is_an_error_at_its_line() {
    // Each would otherwise pass silently: the last value winning could hide a regression, an
    // unknown key was ignored, and a misspelt arch turned the kernel "new".
    let text = render(&two());
    let names: Vec<&str> = Resources::FIELDS.iter().map(|f| f.name).collect();
    let cases = [
        (
            text.replace("z sm_90 registers=32", "z sm_90 registers=7 registers=32"),
            "launch-baseline.txt:4: `registers` appears twice in the record (`registers=7`, `registers=32`)"
                .to_string(),
        ),
        (
            text.replace("occupancy=100.0", "occupancy=100.0 extra=5"),
            format!("launch-baseline.txt:4: unknown field `extra=5`; a record has {}, occupancy", names.join(", ")),
        ),
        (
            text.replace("z sm_90", "z sm_9O"),
            "launch-baseline.txt:4: the arch: `sm_9O` is not a GPU architecture (did you mean `sm_90`?)".to_string(),
        ),
    ];
    for (damaged, expected) in cases {
        let e = error(&damaged);
        assert!(e.contains(&expected), "{damaged}\n{e}");
        assert!(e.contains("re-bless with `cargo launch check --bless`"), "{e}");
    }
    // The same in an older version's file.
    let v1 = format!("{V1_HEADER}\nk sm_90 registers=8 spill_bytes=0 stack=0 shared=0 occupancy=50.0 registers=9\n");
    assert!(error(&v1).contains("launch-baseline.txt:2: `registers` appears twice"), "{}", error(&v1));
    // Every per-line error says to re-bless.
    let e = error(&text.replace("registers=32", "registers=x"));
    assert!(e.contains("re-bless with"), "{e}");
}

#[test]
fn a_leading_byte_order_mark_is_skipped() {
    // Some editors save one; the header after it is still the header.
    let text = format!("\u{feff}{}", render(&two()));
    assert_eq!(parse(Path::new("b"), &text).unwrap().records, two());
    let p = decode(Path::new("b"), text.as_bytes()).unwrap();
    assert_eq!((p.records, p.lines[&("z".to_string(), "sm_90".to_string())]), (two(), 4));
}

/// Every field of the table is written, read back and judged: `-` only where a field may be
/// unprinted, a number elsewhere.
#[test]
fn a_record_holds_every_field_of_the_table() {
    let mut b = Baseline::new();
    let r = Resources { registers: 40, spill_stores: 8, spill_loads: 12, cmem0: Some(360), ..Resources::ZERO };
    b.insert(("k".into(), "sm_80".into()), Entry::of(&r, 50.0, None));
    let text = render(&b);
    let line = text.lines().nth(2).unwrap();
    for f in Resources::FIELDS {
        assert!(line.contains(&format!(" {}=", f.name)), "{}: {line}", f.name);
    }
    for word in ["registers=40", "spill_stores=8", "spill_loads=12", "shared_static=0", "cmem=360"] {
        assert!(line.contains(&format!(" {word} ")), "{word}: {line}");
    }
    assert!(line.ends_with(" occupancy=50.0"), "{line}");
    assert_eq!(parse(Path::new("b"), &text).unwrap().records, b);
    let e = error(&text.replace("registers=40", "registers=-"));
    assert!(e.contains("launch-baseline.txt:3: `registers=-` is not a number;"), "{e}");
    let e = error(&text.replace("cmem=360", "cmem=x"));
    assert!(e.contains("launch-baseline.txt:3: `cmem=x` is not a number or `-`"), "{e}");
    let e = error(&text.replace(" barriers=0", ""));
    assert!(e.contains("launch-baseline.txt:3: missing `barriers=`"), "{e}");
}

/// Version 3 (what `--bless` wrote before every field was recorded) is read as its five
/// numbers: what it holds is compared, the spills as their sum; no warning, it is keyed as v4.
#[test]
fn a_version_3_baseline_is_read_as_its_five_numbers() {
    let v3 = "# cargo-launch baseline v3 records=1\n\
              kernels/a.cu::k sm_90 registers=32 spill_bytes=8 stack=16 shared=0 occupancy=50.0\n";
    let p = parse(Path::new("b"), v3).unwrap();
    assert_eq!(p.version, V3);
    let old = &p.records[&("kernels/a.cu::k".to_string(), "sm_90".to_string())];
    assert_eq!((old.get("registers"), old.get("stack_frame"), old.get("barriers")), (Some(32), Some(16), None));
    assert_eq!(old.spill_bytes, Some(8));
    let now = |r: Resources| regressions(old, &Entry::of(&r, 50.0, None));
    let same =
        Resources { registers: 32, stack_frame: 16, spill_stores: 4, spill_loads: 4, barriers: 3, ..Resources::ZERO };
    assert!(now(same).is_empty(), "{:?}", now(same));
    assert_eq!(now(Resources { spill_loads: 8, ..same }), ["spill stores + loads 8 → 12 bytes (+4)"]);
    assert_eq!(now(Resources { stack_frame: 32, ..same }), ["stack 16 → 32 bytes (+16)"]);
    let e = error(&v3.replace("occupancy=50.0", "occupancy=50.0 barriers=1"));
    assert!(
        e.contains("unknown field `barriers=1`; a record has registers, spill_bytes, stack, shared, occupancy"),
        "{e}"
    );
}

#[test]
fn regressions_say_by_how_much() {
    let r = regressions(&entry(160, 50.0), &entry(167, 37.5));
    assert_eq!(r, ["registers 160 → 167 (+7)", "occupancy 50.0% → 37.5% (-12.5 points)"]);
    assert!(regressions(&entry(167, 12.5), &entry(160, 25.0)).is_empty());
}

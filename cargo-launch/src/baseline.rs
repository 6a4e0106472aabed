//! The committed baseline of `cargo launch check --bless`: one line per kernel × arch, sorted,
//! `key=value` fields, so a change shows up as a one-line diff in review.
//!
//! ```text
//! # cargo-launch baseline v3 records=2
//! # cargo launch check --bless: per kernel and arch, ... Regenerate after an intended change.
//! kernels/poly.cu::poly_eval sm_90 registers=167 spill_bytes=0 stack=0 shared=0 occupancy=12.5
//! kernels/my%20tmpl.cu::_Z4tmplILi8EEvPi sm_90 registers=8 spill_bytes=0 stack=0 shared=0 occupancy=100.0
//! ```
//!
//! A record's kernel is keyed by [`key`]: its source file and its PTX symbol (mangled for a C++
//! kernel), which does not change when another file gains a kernel of the same name (the display
//! name does) and holds no space (a demangled `void tmpl<8>(int*)` does). The key is written with
//! whitespace, control characters, `%` and `#` percent-encoded ([`encode_key`]), so a file path
//! with spaces still makes one word, and decoded when read: the round trip is exact.
//!
//! The first line carries the format version and the number of records, so a file cut short, an
//! empty file or a line pasted twice is an error instead of kernels silently turning "new".
//! Version 2 (keyed by display name) and version 1 (written before the header existed; its first
//! line is [`V1_HEADER`]) are still read, their kernel being everything before the arch, and
//! compared by display name, with a warning to re-bless.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::bail;

/// The resources of one kernel on one arch, as the baseline records them (a baseline does not
/// record whether the launch works: [`Measure::launches`] is `None` in what it reads).
pub use crate::regression::Measure as Entry;

/// `(kernel, arch)` → entry; the kernel is a [`key`] (version 3) or a display name (older).
pub type Baseline = BTreeMap<(String, String), Entry>;

/// The version [`render`] writes and [`parse`] reads with a record count.
pub const VERSION: u32 = 3;

/// The last version keyed by display name (which could hold spaces and changed when the name
/// became ambiguous); it is still read.
pub const V2: u32 = 2;

/// The key of a kernel's records: `kernels/a.cu::fill`, `kernels/t.cu::_Z4tmplILi8EEvPi`.
pub fn key(file: &str, symbol: &str) -> String {
    format!("{file}::{symbol}")
}

/// A key as written in the file: whitespace, control characters, `%` and `#` (a comment at the
/// start of a line) become `%XX` per UTF-8 byte, so the key is one word.
pub fn encode_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for c in key.chars() {
        if c.is_whitespace() || c.is_control() || c == '%' || c == '#' {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The inverse of [`encode_key`]; `Err` names a `%` not followed by two hex digits, or escapes
/// that are not UTF-8.
pub fn decode_key(word: &str) -> Result<String, String> {
    let bytes = word.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |j: usize| bytes.get(j).and_then(|&h| (h as char).to_digit(16));
            let (Some(hi), Some(lo)) = (hex(i + 1), hex(i + 2)) else {
                let end = (i + 3).min(bytes.len());
                let shown = String::from_utf8_lossy(&bytes[i..end]);
                return Err(format!("`{shown}` is not a `%XX` escape"));
            };
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "its `%XX` escapes are not UTF-8".to_string())
}

/// The first line of a version-1 baseline (no version, no record count).
pub const V1_HEADER: &str =
    "# cargo launch check --bless: per kernel and arch, registers, spill bytes (stores + loads), \
stack frame, static shared memory and occupancy at the launch block size. Regenerate after an intended change.";

/// What the version header starts with.
const MAGIC: &str = "# cargo-launch baseline ";

const EXPLANATION: &str =
    "# cargo launch check --bless: per kernel and arch, registers, spill bytes (stores + loads), \
stack frame, static shared memory and occupancy at the launch block size. Regenerate after an intended change.\n";

/// The fields of a record, in the order [`render`] writes them.
const FIELDS: [&str; 5] = ["registers", "spill_bytes", "stack", "shared", "occupancy"];

const REBLESS: &str = "re-bless with `cargo launch check --bless` (and review the diff)";

/// A parsed baseline file.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The records.
    pub records: Baseline,
    /// The format version: [`VERSION`], [`V2`], or 1 for a file without the version header.
    pub version: u32,
    /// The 1-based line of each record, to point at one no longer built.
    pub lines: BTreeMap<(String, String), usize>,
}

/// Renders a baseline: the version header with the record count, a comment, then one sorted line
/// per record, every line ending in a newline.
pub fn render(b: &Baseline) -> String {
    let mut s = format!("{MAGIC}v{VERSION} records={}\n", b.len());
    s.push_str(EXPLANATION);
    for ((kernel, arch), e) in b {
        let _ = writeln!(
            s,
            "{} {arch} registers={} spill_bytes={} stack={} shared={} occupancy={:.1}",
            encode_key(kernel),
            e.registers,
            e.spill_bytes,
            e.stack,
            e.shared,
            e.occupancy
        );
    }
    s
}

/// Decodes a baseline file's bytes: a byte sequence that is not UTF-8 is an error naming its line
/// and byte.
pub fn decode(path: &Path, bytes: &[u8]) -> anyhow::Result<Parsed> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
            let col = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
            bail!(
                "{}:{line}:{col}: not UTF-8 (byte 0x{:02x} at offset {}): not a baseline written by \
                 `cargo launch check --bless`; {REBLESS}",
                path.display(),
                bytes[e.valid_up_to()],
                e.valid_up_to()
            );
        }
    };
    parse(path, text)
}

/// Parses a baseline file; errors name `file:line` and say to re-bless.
pub fn parse(path: &Path, text: &str) -> anyhow::Result<Parsed> {
    // An editor may save a UTF-8 byte order mark; it carries nothing, so it is skipped rather
    // than reported as a missing header.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let at = |line: usize| format!("{}:{line}", path.display());
    let (version, declared) = header(text, &at)?;
    if declared.is_some() && !text.ends_with('\n') {
        bail!("{}: the last line has no newline: the file was cut short; {REBLESS}", at(text.lines().count()));
    }

    let mut b = Baseline::new();
    let mut first_seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || at(i + 1);
        // Every error in a record says where it is and how to get a good file back.
        let bad = |why: String| anyhow::anyhow!("{}: {why}; {REBLESS}", at());
        let record = Record::read(line, version, &bad)?;
        let key = (record.kernel.clone(), record.arch.to_string());
        if let Some(before) = first_seen.insert(key.clone(), i + 1) {
            bail!("{}: `{} {}` appears twice (first at line {before}); {REBLESS}", at(), record.written, record.arch);
        }
        b.insert(key, record.entry(&bad)?);
    }
    if let Some(n) = declared {
        if n != b.len() {
            bail!(
                "{}: the header says records={n} but the file holds {} record{}: it was cut short or edited; {REBLESS}",
                at(1),
                b.len(),
                if b.len() == 1 { "" } else { "s" }
            );
        }
    }
    Ok(Parsed { records: b, version, lines: first_seen })
}

/// The header's format version and, from v2 on, the record count it declares; `at(line)` is
/// `file:line`.
fn header(text: &str, at: &dyn Fn(usize) -> String) -> anyhow::Result<(u32, Option<usize>)> {
    let first = text.lines().next().unwrap_or("").trim_end();
    if first.trim().is_empty() && text.trim().is_empty() {
        bail!("{}: the baseline is empty (no `{MAGIC}v{VERSION} records=N` header); {REBLESS}", at(1));
    } else if let Some(rest) = first.strip_prefix(MAGIC) {
        let bad = || {
            anyhow::anyhow!("{}: malformed header `{first}`: expected `{MAGIC}v{VERSION} records=N`; {REBLESS}", at(1))
        };
        let mut words = rest.split_whitespace();
        let version: u32 =
            words.next().and_then(|v| v.strip_prefix('v')).and_then(|v| v.parse().ok()).ok_or_else(bad)?;
        let count: usize =
            words.next().and_then(|w| w.strip_prefix("records=")).and_then(|n| n.parse().ok()).ok_or_else(bad)?;
        if words.next().is_some() {
            return Err(bad());
        }
        if version != VERSION && version != V2 {
            bail!("{}: baseline format v{version}; this cargo-launch reads v{VERSION} (and v2, v1); {REBLESS}", at(1));
        }
        Ok((version, Some(count)))
    } else if first == V1_HEADER {
        Ok((1, None))
    } else {
        bail!(
            "{}: no `{MAGIC}v{VERSION} records=N` header: not a baseline written by `cargo launch check --bless`, \
             or one cut short or edited at its start; {REBLESS}",
            at(1)
        );
    }
}

/// One record line, checked but for its numbers other than occupancy (read by [`Record::entry`]
/// after the duplicate check, so a repeated record is reported as that first).
struct Record<'a> {
    /// The kernel as the line writes it (encoded in v3).
    written: String,
    /// The kernel's key: decoded in v3, the display name before.
    kernel: String,
    arch: &'a str,
    fields: BTreeMap<&'a str, &'a str>,
    occupancy: f64,
}

impl<'a> Record<'a> {
    /// Reads `line` of a baseline of format `version`; `bad` places an error at the line.
    fn read(line: &'a str, version: u32, bad: &dyn Fn(String) -> anyhow::Error) -> anyhow::Result<Record<'a>> {
        let words: Vec<&str> = line.split_whitespace().collect();
        // v3: an encoded key, the arch, the fields. Older: the display name may hold spaces
        // (`void tmpl<8>(int*)`), so the arch is the last word before the first field.
        let head =
            if version == VERSION { 2 } else { words.iter().position(|w| w.contains('=')).unwrap_or(words.len()) };
        if head < 2 || words.len() < 2 {
            return Err(bad("expected `kernel arch key=value...`".into()));
        }
        let written = words[..head - 1].join(" ");
        let arch = words[head - 1];
        let kernel = if version == VERSION {
            decode_key(&written).map_err(|why| bad(format!("the kernel `{written}`: {why}")))?
        } else {
            written.clone()
        };
        // A misspelt arch would never match a built one: every kernel would turn "new" and the
        // real record "not built", instead of one clear error.
        if let Err(e) = arch.parse::<launch::Arch>() {
            return Err(bad(format!("the arch: {e}")));
        }
        let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
        for &w in &words[head..] {
            let (k, v) = w.split_once('=').ok_or_else(|| bad(format!("`{w}` is not key=value")))?;
            // An unknown key would be ignored and a repeated one would hide the other value
            // (`registers=7 registers=8` could hide a regression): both mean a hand-edited file.
            if !FIELDS.contains(&k) {
                return Err(bad(format!("unknown field `{w}`; a record has {}", FIELDS.join(", "))));
            }
            if let Some(before) = fields.insert(k, v) {
                return Err(bad(format!("`{k}` appears twice in the record (`{k}={before}`, `{w}`)")));
            }
        }
        let occupancy: f64 = fields
            .get("occupancy")
            .ok_or_else(|| bad("missing `occupancy=`".into()))?
            .parse()
            .ok()
            // NaN would compare as neither better nor worse: a silent pass.
            .filter(|o: &f64| o.is_finite() && (0.0..=100.0).contains(o))
            .ok_or_else(|| bad("`occupancy` is not a percentage from 0 to 100".into()))?;
        Ok(Record { written, kernel, arch, fields, occupancy })
    }

    /// The record's numbers.
    fn entry(&self, bad: &dyn Fn(String) -> anyhow::Error) -> anyhow::Result<Entry> {
        let num = |k: &str| -> anyhow::Result<u32> {
            let v = self.fields.get(k).ok_or_else(|| bad(format!("missing `{k}=`")))?;
            v.parse().map_err(|_| bad(format!("`{k}={v}` is not a number")))
        };
        Ok(Entry {
            registers: num("registers")?,
            spill_bytes: num("spill_bytes")?,
            stack: num("stack")?,
            shared: num("shared")?,
            occupancy: self.occupancy,
            launches: None,
        })
    }
}

/// What got worse from `old` to `new`: the one definition of a regression.
pub use crate::regression::regressions;

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(registers: u32, occupancy: f64) -> Entry {
        Entry { registers, spill_bytes: 0, stack: 0, shared: 0, occupancy, launches: None }
    }

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
        assert_eq!(lines[0], "# cargo-launch baseline v3 records=2");
        assert!(lines[1].starts_with("# cargo launch check --bless: "));
        assert_eq!(
            lines[2..],
            [
                "a sm_100 registers=167 spill_bytes=0 stack=0 shared=0 occupancy=12.5",
                "z sm_90 registers=32 spill_bytes=0 stack=0 shared=0 occupancy=100.0"
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
        let e = error("# cargo-launch baseline v3 rec\n");
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
        assert!(e.contains("launch-baseline.txt:1: no `# cargo-launch baseline v3 records=N` header"), "{e}");
        let e = error(&text.replace("v3", "v4"));
        assert!(
            e.contains("launch-baseline.txt:1: baseline format v4; this cargo-launch reads v3 (and v2, v1)"),
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
            assert_eq!(line.split_whitespace().count(), 7, "one word per key: {line}");
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
        let cases = [
            (
                text.replace("z sm_90 registers=32", "z sm_90 registers=7 registers=32"),
                "launch-baseline.txt:4: `registers` appears twice in the record (`registers=7`, `registers=32`)",
            ),
            (
                text.replace("occupancy=100.0", "occupancy=100.0 extra=5"),
                "launch-baseline.txt:4: unknown field `extra=5`; a record has registers, spill_bytes, stack, shared, \
                 occupancy",
            ),
            (
                text.replace("z sm_90", "z sm_9O"),
                "launch-baseline.txt:4: the arch: `sm_9O` is not a GPU architecture (did you mean `sm_90`?)",
            ),
        ];
        for (damaged, expected) in cases {
            let e = error(&damaged);
            assert!(e.contains(expected), "{damaged}\n{e}");
            assert!(e.contains("re-bless with `cargo launch check --bless`"), "{e}");
        }
        // The same in an older version's file.
        let v1 =
            format!("{V1_HEADER}\nk sm_90 registers=8 spill_bytes=0 stack=0 shared=0 occupancy=50.0 registers=9\n");
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

    #[test]
    fn regressions_say_by_how_much() {
        let r = regressions(&entry(160, 50.0), &entry(167, 37.5));
        assert_eq!(r, ["registers 160 → 167 (+7)", "occupancy 50.0% → 37.5% (-12.5 points)"]);
        assert!(regressions(&entry(167, 12.5), &entry(160, 25.0)).is_empty());
    }
}

//! The committed baseline of `cargo launch check --bless`: one line per kernel × arch, sorted,
//! `key=value` fields, so a change shows up as a one-line diff in review.
//!
//! ```text
//! # cargo-launch baseline v2 records=1
//! # cargo launch check --bless: per kernel and arch, ... Regenerate after an intended change.
//! poly_eval sm_90 registers=167 spill_bytes=0 stack=0 shared=0 occupancy=12.5
//! ```
//!
//! The first line carries the format version and the number of records, so a file cut short, an
//! empty file or a line pasted twice is an error instead of kernels silently turning "new".
//! A version-1 file (written before the header existed; its first line is [`V1_HEADER`]) is still
//! read and compared, with a warning to re-bless, because it cannot be checked for truncation.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context};

/// The resources of one kernel on one arch, as compared against the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Registers per thread.
    pub registers: u32,
    /// Spill stores + spill loads, bytes.
    pub spill_bytes: u32,
    /// Stack frame, bytes.
    pub stack: u32,
    /// Static shared memory, bytes.
    pub shared: u32,
    /// Occupancy at the launch block size, percent.
    pub occupancy: f64,
}

/// `(kernel, arch)` → entry.
pub type Baseline = BTreeMap<(String, String), Entry>;

/// The version [`render`] writes and [`parse`] reads with a record count.
pub const VERSION: u32 = 2;

/// The first line of a version-1 baseline (no version, no record count).
pub const V1_HEADER: &str =
    "# cargo launch check --bless: per kernel and arch, registers, spill bytes (stores + loads), \
stack frame, static shared memory and occupancy at the launch block size. Regenerate after an intended change.";

/// What the version header starts with.
const MAGIC: &str = "# cargo-launch baseline ";

const EXPLANATION: &str =
    "# cargo launch check --bless: per kernel and arch, registers, spill bytes (stores + loads), \
stack frame, static shared memory and occupancy at the launch block size. Regenerate after an intended change.\n";

const REBLESS: &str = "re-bless with `cargo launch check --bless` (and review the diff)";

/// A parsed baseline file.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The records.
    pub records: Baseline,
    /// The format version: [`VERSION`], or 1 for a file without the version header.
    pub version: u32,
}

/// Renders a baseline: the version header with the record count, a comment, then one sorted line
/// per record, every line ending in a newline.
pub fn render(b: &Baseline) -> String {
    let mut s = format!("{MAGIC}v{VERSION} records={}\n", b.len());
    s.push_str(EXPLANATION);
    for ((kernel, arch), e) in b {
        let _ = writeln!(
            s,
            "{kernel} {arch} registers={} spill_bytes={} stack={} shared={} occupancy={:.1}",
            e.registers, e.spill_bytes, e.stack, e.shared, e.occupancy
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
    let at = |line: usize| format!("{}:{line}", path.display());
    let first = text.lines().next().unwrap_or("").trim_end();
    let (version, declared) = if first.trim().is_empty() && text.trim().is_empty() {
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
        if version != VERSION {
            bail!("{}: baseline format v{version}; this cargo-launch reads v{VERSION} (and v1); {REBLESS}", at(1));
        }
        (VERSION, Some(count))
    } else if first == V1_HEADER {
        (1, None)
    } else {
        bail!(
            "{}: no `{MAGIC}v{VERSION} records=N` header: not a baseline written by `cargo launch check --bless`, \
             or one cut short or edited at its start; {REBLESS}",
            at(1)
        );
    };
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
        let mut words = line.split_whitespace();
        let (Some(kernel), Some(arch)) = (words.next(), words.next()) else {
            bail!("{}: expected `kernel arch key=value...`", at());
        };
        let mut fields = BTreeMap::new();
        for w in words {
            let (k, v) = w.split_once('=').with_context(|| format!("{}: `{w}` is not key=value", at()))?;
            fields.insert(k, v);
        }
        let num = |k: &str| -> anyhow::Result<u32> {
            let v = fields.get(k).with_context(|| format!("{}: missing `{k}=`", at()))?;
            v.parse().with_context(|| format!("{}: `{k}={v}` is not a number", at()))
        };
        let occupancy: f64 = fields
            .get("occupancy")
            .with_context(|| format!("{}: missing `occupancy=`", at()))?
            .parse()
            .ok()
            // NaN would compare as neither better nor worse: a silent pass.
            .filter(|o: &f64| o.is_finite() && (0.0..=100.0).contains(o))
            .with_context(|| format!("{}: `occupancy` is not a percentage from 0 to 100", at()))?;
        let key = (kernel.to_string(), arch.to_string());
        if let Some(before) = first_seen.insert(key.clone(), i + 1) {
            bail!("{}: `{kernel} {arch}` appears twice (first at line {before}); {REBLESS}", at());
        }
        b.insert(
            key,
            Entry {
                registers: num("registers")?,
                spill_bytes: num("spill_bytes")?,
                stack: num("stack")?,
                shared: num("shared")?,
                occupancy,
            },
        );
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
    Ok(Parsed { records: b, version })
}

/// What got worse from `old` to `new`, in words ("registers 160 → 167 (+7)").
pub fn regressions(old: &Entry, new: &Entry) -> Vec<String> {
    let mut out = Vec::new();
    let mut grew = |what: &str, a: u32, b: u32| {
        if b > a {
            out.push(format!("{what} {a} → {b} (+{})", b - a));
        }
    };
    grew("registers", old.registers, new.registers);
    grew("spill bytes", old.spill_bytes, new.spill_bytes);
    grew("stack frame bytes", old.stack, new.stack);
    grew("static shared memory bytes", old.shared, new.shared);
    // Compare at the printed precision, so a bless/check round trip is exact.
    let (a, b) = ((old.occupancy * 10.0).round(), (new.occupancy * 10.0).round());
    if b < a {
        out.push(format!("occupancy {:.1}% → {:.1}% ({:.1} points)", a / 10.0, b / 10.0, (b - a) / 10.0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(registers: u32, occupancy: f64) -> Entry {
        Entry { registers, spill_bytes: 0, stack: 0, shared: 0, occupancy }
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
        assert_eq!(lines[0], "# cargo-launch baseline v2 records=2");
        assert!(lines[1].starts_with("# cargo launch check --bless: "));
        assert_eq!(
            lines[2..],
            [
                "a sm_100 registers=167 spill_bytes=0 stack=0 shared=0 occupancy=12.5",
                "z sm_90 registers=32 spill_bytes=0 stack=0 shared=0 occupancy=100.0"
            ]
        );
        assert_eq!(parse(Path::new("b"), &text).unwrap(), Parsed { records: b, version: VERSION });
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
        let e = error("# cargo-launch baseline v2 rec\n");
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
        assert!(e.contains("launch-baseline.txt:1: no `# cargo-launch baseline v2 records=N` header"), "{e}");
        let e = error(&text.replace("v2", "v3"));
        assert!(e.contains("launch-baseline.txt:1: baseline format v3; this cargo-launch reads v2"), "{e}");
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
    fn non_utf8_names_line_and_byte() {
        let mut bytes = render(&two()).into_bytes();
        let at = bytes.windows(3).position(|w| w == b"\nz ").unwrap();
        bytes[at + 2] = 0xff;
        let e = decode(Path::new("launch-baseline.txt"), &bytes).unwrap_err().to_string();
        assert!(e.contains("launch-baseline.txt:4:2: not UTF-8 (byte 0xff at offset"), "{e}");
    }

    #[test]
    fn regressions_say_by_how_much() {
        let r = regressions(&entry(160, 50.0), &entry(167, 37.5));
        assert_eq!(r, ["registers 160 → 167 (+7)", "occupancy 50.0% → 37.5% (-12.5 points)"]);
        assert!(regressions(&entry(167, 12.5), &entry(160, 25.0)).is_empty());
    }
}

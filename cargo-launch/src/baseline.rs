//! The committed baseline of `cargo launch check --bless`: one line per kernel × arch, sorted,
//! `key=value` fields, so a change shows up as a one-line diff in review.
//!
//! ```text
//! # cargo-launch baseline v4 records=2
//! # cargo launch check --bless: per kernel and arch, ... Regenerate after an intended change.
//! kernels/poly.cu::poly_eval sm_80 registers=167 barriers=1 ... cmem=360 occupancy=12.5
//! kernels/my%20tmpl.cu::_Z4tmplILi8EEvPi sm_90 registers=8 barriers=0 ... cmem=- occupancy=100.0
//! ```
//!
//! A record holds every field of the resources, by the field table ([`launch::Resources::FIELDS`]:
//! its documents' name, `-` where ptxas printed none, as `cmem` on sm_90 and newer), then the
//! occupancy: a field added to the table is recorded, read and compared with no edit here.
//!
//! A record's kernel is keyed by [`key`]: its source file and its PTX symbol (mangled for a C++
//! kernel), which does not change when another file gains a kernel of the same name (the display
//! name does) and holds no space (a demangled `void tmpl<8>(int*)` does). The key is written with
//! whitespace, control characters, `%` and `#` percent-encoded ([`encode_key`]), so a file path
//! with spaces still makes one word, and decoded when read: the round trip is exact.
//!
//! The first line carries the format version and the number of records, so a file cut short, an
//! empty file or a line pasted twice is an error instead of kernels silently turning "new".
//! Older versions are still read. Version 3 is keyed like version 4 and records five numbers
//! ([`LEGACY_FIELDS`]: registers, spill stores + loads as one sum, stack frame, static shared
//! memory, occupancy), which are compared as such. Version 2 (keyed by display name) and version
//! 1 (written before the header existed; its first line is [`V1_HEADER`]) hold the same five,
//! their kernel being everything before the arch, and are compared by display name, with a
//! warning to re-bless.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::bail;

use launch::Resources;

/// The resources of one kernel on one arch, as the baseline records them (a baseline does not
/// record whether the launch works: [`Entry::launches`] is `None` in what it reads).
pub use crate::regression::Measure as Entry;

/// `(kernel, arch)` → entry; the kernel is a [`key`] (version 3 on) or a display name (older).
pub type Baseline = BTreeMap<(String, String), Entry>;

/// The version [`render`] writes: every field of the resources.
pub const VERSION: u32 = 4;

/// The last version with the five numbers of [`LEGACY_FIELDS`] (keyed like [`VERSION`]); it is
/// still read.
pub const V3: u32 = 3;

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
    "# cargo launch check --bless: per kernel and arch, every resource ptxas reports (`-` where it printed none) \
and the occupancy at the launch block size. Regenerate after an intended change.\n";

/// The fields of a record before version 4, with the resource each one is (`None`: the sum of
/// spill stores and loads).
pub const LEGACY_FIELDS: [(&str, Option<&str>); 4] = [
    ("registers", Some("registers")),
    ("spill_bytes", None),
    ("stack", Some("stack_frame")),
    ("shared", Some("shared_static")),
];

/// The key of the occupancy, the last word of a record.
const OCCUPANCY: &str = "occupancy";

const REBLESS: &str = "re-bless with `cargo launch check --bless` (and review the diff)";

/// A parsed baseline file.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The records.
    pub records: Baseline,
    /// The format version: [`VERSION`], [`V3`], [`V2`], or 1 for a file without the version header.
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
        let _ = write!(s, "{} {arch}", encode_key(kernel));
        for (f, v) in Resources::FIELDS.iter().zip(&e.resources) {
            let _ = match v {
                Some(v) => write!(s, " {}={v}", f.name),
                None => write!(s, " {}=-", f.name),
            };
        }
        let _ = writeln!(s, " {OCCUPANCY}={:.1}", e.occupancy);
    }
    s
}

/// Whether a field may be `-` (not printed): one whose value ptxas may leave out (`cmem`).
fn optional(f: &launch::kernel::ResourceField) -> bool {
    (f.get)(&Resources::ZERO).is_none()
}

/// The keys a record of `version` has, in order, occupancy last.
fn keys(version: u32) -> Vec<&'static str> {
    let fields: Vec<&str> = if version >= VERSION {
        Resources::FIELDS.iter().map(|f| f.name).collect()
    } else {
        LEGACY_FIELDS.iter().map(|(k, _)| *k).collect()
    };
    fields.into_iter().chain([OCCUPANCY]).collect()
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
        if !(V2..=VERSION).contains(&version) {
            bail!(
                "{}: baseline format v{version}; this cargo-launch reads v{VERSION} (and v3, v2, v1); {REBLESS}",
                at(1)
            );
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
    /// The kernel as the line writes it (encoded from v3 on).
    written: String,
    /// The kernel's key: decoded from v3 on, the display name before.
    kernel: String,
    arch: &'a str,
    version: u32,
    fields: BTreeMap<&'a str, &'a str>,
    occupancy: f64,
}

impl<'a> Record<'a> {
    /// Reads `line` of a baseline of format `version`; `bad` places an error at the line.
    fn read(line: &'a str, version: u32, bad: &dyn Fn(String) -> anyhow::Error) -> anyhow::Result<Record<'a>> {
        let words: Vec<&str> = line.split_whitespace().collect();
        // v3 on: an encoded key, the arch, the fields. Older: the display name may hold spaces
        // (`void tmpl<8>(int*)`), so the arch is the last word before the first field.
        let keyed = version >= V3;
        let head = if keyed { 2 } else { words.iter().position(|w| w.contains('=')).unwrap_or(words.len()) };
        if head < 2 || words.len() < 2 {
            return Err(bad("expected `kernel arch key=value...`".into()));
        }
        let written = words[..head - 1].join(" ");
        let arch = words[head - 1];
        let kernel = if keyed {
            decode_key(&written).map_err(|why| bad(format!("the kernel `{written}`: {why}")))?
        } else {
            written.clone()
        };
        // A misspelt arch would never match a built one: every kernel would turn "new" and the
        // real record "not built", instead of one clear error.
        if let Err(e) = arch.parse::<launch::Arch>() {
            return Err(bad(format!("the arch: {e}")));
        }
        let known = keys(version);
        let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
        for &w in &words[head..] {
            let (k, v) = w.split_once('=').ok_or_else(|| bad(format!("`{w}` is not key=value")))?;
            // An unknown key would be ignored and a repeated one would hide the other value
            // (`registers=7 registers=8` could hide a regression): both mean a hand-edited file.
            if !known.contains(&k) {
                return Err(bad(format!("unknown field `{w}`; a record has {}", known.join(", "))));
            }
            if let Some(before) = fields.insert(k, v) {
                return Err(bad(format!("`{k}` appears twice in the record (`{k}={before}`, `{w}`)")));
            }
        }
        let occupancy: f64 = fields
            .get(OCCUPANCY)
            .ok_or_else(|| bad("missing `occupancy=`".into()))?
            .parse()
            .ok()
            // NaN would compare as neither better nor worse: a silent pass.
            .filter(|o: &f64| o.is_finite() && (0.0..=100.0).contains(o))
            .ok_or_else(|| bad("`occupancy` is not a percentage from 0 to 100".into()))?;
        Ok(Record { written, kernel, arch, version, fields, occupancy })
    }

    /// The record's numbers: every field of the table (v4), or the five of [`LEGACY_FIELDS`].
    fn entry(&self, bad: &dyn Fn(String) -> anyhow::Error) -> anyhow::Result<Entry> {
        // `-` is "not printed", for a field that may be; a number otherwise.
        let num = |k: &str, may_lack: bool| -> anyhow::Result<Option<u32>> {
            let v = self.fields.get(k).ok_or_else(|| bad(format!("missing `{k}=`")))?;
            if may_lack && *v == "-" {
                return Ok(None);
            }
            let what = if may_lack { "a number or `-`" } else { "a number" };
            v.parse().map(Some).map_err(|_| bad(format!("`{k}={v}` is not {what}")))
        };
        let mut e = Entry::of(&Resources::ZERO, self.occupancy, None);
        if self.version >= VERSION {
            for (i, f) in Resources::FIELDS.iter().enumerate() {
                e.resources[i] = num(f.name, optional(f))?;
            }
            return Ok(e);
        }
        // What an older record does not hold is not recorded, so never compared.
        e.resources = [None; crate::regression::FIELDS];
        for (key, field) in LEGACY_FIELDS {
            let v = num(key, false)?;
            match field.and_then(|name| Resources::FIELDS.iter().position(|f| f.name == name)) {
                Some(i) => e.resources[i] = v,
                None => e.spill_bytes = v,
            }
        }
        Ok(e)
    }
}

/// What got worse from `old` to `new`: the one definition of a regression.
pub use crate::regression::regressions;

#[cfg(test)]
mod tests;

//! The committed baseline of `cargo launch check --bless`: one line per kernel × arch, sorted,
//! `key=value` fields, so a change shows up as a one-line diff in review.
//!
//! ```text
//! # cargo launch check --bless: per-kernel resources. Regenerate after an intended change.
//! poly_eval sm_90 registers=167 spill_bytes=0 stack=0 shared=0 occupancy=12.5
//! ```

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

const HEADER: &str = "# cargo launch check --bless: per kernel and arch, registers, spill bytes (stores + loads), \
stack frame, static shared memory and occupancy at the launch block size. Regenerate after an intended change.\n";

/// Renders a baseline.
pub fn render(b: &Baseline) -> String {
    let mut s = String::from(HEADER);
    for ((kernel, arch), e) in b {
        let _ = writeln!(
            s,
            "{kernel} {arch} registers={} spill_bytes={} stack={} shared={} occupancy={:.1}",
            e.registers, e.spill_bytes, e.stack, e.shared, e.occupancy
        );
    }
    s
}

/// Parses a baseline file; errors name the line.
pub fn parse(path: &Path, text: &str) -> anyhow::Result<Baseline> {
    let mut b = Baseline::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
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
            .with_context(|| format!("{}: `occupancy` is not a number", at()))?;
        b.insert(
            (kernel.to_string(), arch.to_string()),
            Entry {
                registers: num("registers")?,
                spill_bytes: num("spill_bytes")?,
                stack: num("stack")?,
                shared: num("shared")?,
                occupancy,
            },
        );
    }
    Ok(b)
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

    #[test]
    fn render_and_parse_round_trip_sorted() {
        let mut b = Baseline::new();
        b.insert(("z".into(), "sm_90".into()), entry(32, 100.0));
        b.insert(("a".into(), "sm_100".into()), entry(167, 12.5));
        let text = render(&b);
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "a sm_100 registers=167 spill_bytes=0 stack=0 shared=0 occupancy=12.5",
                "z sm_90 registers=32 spill_bytes=0 stack=0 shared=0 occupancy=100.0"
            ]
        );
        assert_eq!(parse(Path::new("b"), &text).unwrap(), b);
    }

    #[test]
    fn bad_lines_name_their_location() {
        let e = parse(
            Path::new("launch-baseline.txt"),
            "# c\nk sm_90 registers=x spill_bytes=0 stack=0 shared=0 occupancy=1",
        )
        .unwrap_err();
        assert!(e.to_string().contains("launch-baseline.txt:2: `registers=x` is not a number"), "{e}");
    }

    #[test]
    fn regressions_say_by_how_much() {
        let r = regressions(&entry(160, 50.0), &entry(167, 37.5));
        assert_eq!(r, ["registers 160 → 167 (+7)", "occupancy 50.0% → 37.5% (-12.5 points)"]);
        assert!(regressions(&entry(167, 12.5), &entry(160, 25.0)).is_empty());
    }
}

//! What a regression is, said once. `check --baseline` fails on one (each in words, against the
//! committed baseline) and `diff --fail-on regression` fails on one (between two toolchains, two
//! revisions or two reports): the same kernel on the same arch is a regression from an old side
//! to a new one when
//!
//! - its registers per thread, its spill bytes (stores + loads), its stack frame or its static
//!   shared memory grew, or
//! - its occupancy at the block size it is launched with fell (compared at the printed precision,
//!   0.1 %, so a bless/check round trip is exact), or
//! - a launch at that block size worked and now fails (where both sides say whether it launches;
//!   the baseline does not, and a failing launch there shows as occupancy falling to 0).
//!
//! Less of anything, and a kernel added or removed, is no regression.

/// The numbers of one kernel on one arch that a regression is judged on: what the baseline
/// records, and whether the launch works where a side knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Measure {
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
    /// Whether the launch at that block size works; `None` where the side does not record it.
    pub launches: Option<bool>,
}

/// What got worse from `old` to `new`, in words ("registers 160 → 167 (+7)"); empty when
/// nothing did.
pub fn regressions(old: &Measure, new: &Measure) -> Vec<String> {
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
    let (a, b) = ((old.occupancy * 10.0).round(), (new.occupancy * 10.0).round());
    if b < a {
        out.push(format!("occupancy {:.1}% → {:.1}% ({:.1} points)", a / 10.0, b / 10.0, (b - a) / 10.0));
    }
    if old.launches == Some(true) && new.launches == Some(false) {
        out.push("the launch at its block size fails now".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(registers: u32, spill_bytes: u32, occupancy: f64) -> Measure {
        Measure { registers, spill_bytes, stack: 0, shared: 0, occupancy, launches: None }
    }

    #[test]
    fn each_kind_of_growth_is_a_regression_and_less_is_none() {
        let old = m(160, 0, 25.0);
        assert_eq!(regressions(&old, &old), Vec::<String>::new());
        assert_eq!(regressions(&old, &m(167, 0, 25.0)), ["registers 160 → 167 (+7)"]);
        assert_eq!(regressions(&old, &m(160, 8, 25.0)), ["spill bytes 0 → 8 (+8)"]);
        assert_eq!(regressions(&old, &Measure { stack: 16, ..old.clone() }), ["stack frame bytes 0 → 16 (+16)"]);
        assert_eq!(regressions(&old, &Measure { shared: 4, ..old.clone() }), ["static shared memory bytes 0 → 4 (+4)"]);
        assert_eq!(regressions(&old, &m(160, 0, 12.5)), ["occupancy 25.0% → 12.5% (-12.5 points)"]);
        // Fewer registers, fewer spills, more occupancy: better, never a regression.
        assert!(regressions(&old, &m(128, 0, 50.0)).is_empty());
        // Below the printed precision the occupancy is the same.
        assert!(regressions(&m(1, 0, 33.33), &m(1, 0, 33.32)).is_empty());
    }

    #[test]
    fn a_launch_that_fails_now_is_a_regression_where_both_sides_know() {
        let works = Measure { launches: Some(true), ..m(64, 0, 50.0) };
        let fails = Measure { launches: Some(false), ..m(64, 0, 50.0) };
        assert_eq!(regressions(&works, &fails), ["the launch at its block size fails now"]);
        assert!(regressions(&fails, &works).is_empty());
        assert!(regressions(&Measure { launches: None, ..works.clone() }, &fails).is_empty());
    }
}

//! What a regression is, said once. `check --baseline` fails on one (each in words, against the
//! committed baseline) and `diff --fail-on regression` fails on one (between two toolchains, two
//! revisions or two reports): the same kernel on the same arch is a regression from an old side
//! to a new one when
//!
//! - a field of the resources that the field table marks "more is worse"
//!   ([`launch::ResourceField::more_is_worse`]: registers per thread, stack frame, spill stores,
//!   spill loads, static shared memory) grew, where both sides record it (a baseline older than
//!   v4 records spill stores + loads only as their sum: then the sum grew), or
//! - its occupancy at the block size it is launched with fell (compared at the printed precision,
//!   0.1 %, so a bless/check round trip is exact), or
//! - a launch at that block size worked and now fails (where both sides say whether it launches;
//!   the baseline does not, and a failing launch there shows as occupancy falling to 0).
//!
//! Less of anything, a change in a field not marked (barriers, cumulative stack, cmem), and a
//! kernel added or removed, is no regression.

use launch::Resources;

/// How many fields the resources have ([`Resources::FIELDS`]).
pub const FIELDS: usize = Resources::FIELDS.len();

/// The numbers of one kernel on one arch that a regression is judged on: what the baseline
/// records, and whether the launch works where a side knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Measure {
    /// The resources, in the order of [`Resources::FIELDS`]; `None` where ptxas did not print a
    /// field or the side does not record it (a baseline before v4 records registers, stack frame
    /// and static shared memory).
    pub resources: [Option<u32>; FIELDS],
    /// Spill stores + loads where the side records only their sum (a baseline before v4).
    pub spill_bytes: Option<u32>,
    /// Occupancy at the launch block size, percent.
    pub occupancy: f64,
    /// Whether the launch at that block size works; `None` where the side does not record it.
    pub launches: Option<bool>,
}

impl Measure {
    /// The measure of ptxas's `resources` at `occupancy` percent.
    pub fn of(resources: &Resources, occupancy: f64, launches: Option<bool>) -> Measure {
        Measure {
            resources: std::array::from_fn(|i| (Resources::FIELDS[i].get)(resources)),
            spill_bytes: None,
            occupancy,
            launches,
        }
    }

    /// The value of the field the documents call `name`, where recorded.
    pub fn get(&self, name: &str) -> Option<u32> {
        Resources::FIELDS.iter().position(|f| f.name == name).and_then(|i| self.resources[i])
    }

    /// Spill stores + loads: the sum recorded, else the two fields'.
    fn spill_total(&self) -> Option<u32> {
        let fields = || Some(self.get("spill_stores")?.saturating_add(self.get("spill_loads")?));
        self.spill_bytes.or_else(fields)
    }
}

/// What got worse from `old` to `new`, in words ("registers 160 → 167 (+7)", "stack 0 → 16 bytes
/// (+16)"); empty when nothing did.
pub fn regressions(old: &Measure, new: &Measure) -> Vec<String> {
    let mut out = Vec::new();
    let mut grew = |what: &str, unit: &str, a: Option<u32>, b: Option<u32>| {
        if let (Some(a), Some(b)) = (a, b) {
            if b > a {
                let unit = if unit.is_empty() { String::new() } else { format!(" {unit}") };
                out.push(format!("{what} {a} → {b}{unit} (+{})", b - a));
            }
        }
    };
    for (i, f) in Resources::FIELDS.iter().enumerate().filter(|(_, f)| f.more_is_worse) {
        grew(f.label, f.unit, old.resources[i], new.resources[i]);
    }
    if old.spill_bytes.is_some() || new.spill_bytes.is_some() {
        grew("spill stores + loads", "bytes", old.spill_total(), new.spill_total());
    }
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

    fn m(resources: Resources, occupancy: f64) -> Measure {
        Measure::of(&resources, occupancy, None)
    }

    fn regs(registers: u32) -> Resources {
        Resources { registers, ..Resources::ZERO }
    }

    #[test]
    fn each_kind_of_growth_is_a_regression_and_less_is_none() {
        let old = m(regs(160), 25.0);
        assert_eq!(regressions(&old, &old), Vec::<String>::new());
        assert_eq!(regressions(&old, &m(regs(167), 25.0)), ["registers 160 → 167 (+7)"]);
        let grown = |r: Resources| regressions(&old, &m(r, 25.0));
        assert_eq!(grown(Resources { spill_stores: 8, ..regs(160) }), ["spill stores 0 → 8 bytes (+8)"]);
        assert_eq!(grown(Resources { spill_loads: 8, ..regs(160) }), ["spill loads 0 → 8 bytes (+8)"]);
        assert_eq!(grown(Resources { stack_frame: 16, ..regs(160) }), ["stack 0 → 16 bytes (+16)"]);
        assert_eq!(grown(Resources { shared_static: 4, ..regs(160) }), ["static shared memory 0 → 4 bytes (+4)"]);
        assert_eq!(regressions(&old, &m(regs(160), 12.5)), ["occupancy 25.0% → 12.5% (-12.5 points)"]);
        // Fewer registers, fewer spills, more occupancy: better, never a regression.
        assert!(regressions(&old, &m(regs(128), 50.0)).is_empty());
        // Below the printed precision the occupancy is the same.
        assert!(regressions(&m(regs(1), 33.33), &m(regs(1), 33.32)).is_empty());
    }

    /// Every field the table marks is judged, and only those: the predicate reads the table.
    #[test]
    fn the_fields_judged_are_the_tables() {
        for (i, f) in Resources::FIELDS.iter().enumerate() {
            let old = m(Resources::ZERO, 50.0);
            let mut new = old.clone();
            new.resources[i] = Some(old.resources[i].unwrap_or(0) + 4);
            assert_eq!(
                !regressions(&old, &new).is_empty(),
                f.more_is_worse && old.resources[i].is_some(),
                "{}",
                f.name
            );
        }
    }

    #[test]
    fn a_sum_of_spills_from_an_older_baseline_is_compared_with_the_sum() {
        let mut old = m(regs(32), 50.0);
        old.resources[Resources::FIELDS.iter().position(|f| f.name == "spill_stores").unwrap()] = None;
        old.resources[Resources::FIELDS.iter().position(|f| f.name == "spill_loads").unwrap()] = None;
        old.spill_bytes = Some(8);
        let same = m(Resources { spill_stores: 4, spill_loads: 4, ..regs(32) }, 50.0);
        assert!(regressions(&old, &same).is_empty());
        let more = m(Resources { spill_stores: 4, spill_loads: 8, ..regs(32) }, 50.0);
        assert_eq!(regressions(&old, &more), ["spill stores + loads 8 → 12 bytes (+4)"]);
    }

    #[test]
    fn a_launch_that_fails_now_is_a_regression_where_both_sides_know() {
        let works = Measure { launches: Some(true), ..m(regs(64), 50.0) };
        let fails = Measure { launches: Some(false), ..m(regs(64), 50.0) };
        assert_eq!(regressions(&works, &fails), ["the launch at its block size fails now"]);
        assert!(regressions(&fails, &works).is_empty());
        assert!(regressions(&Measure { launches: None, ..works.clone() }, &fails).is_empty());
    }
}

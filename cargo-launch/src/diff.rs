//! Two sides' report records (`launch_schema::report::Record`, as `report --format json` writes
//! them) compared per kernel × arch: the kernels paired by package, file and symbol name (a
//! symbol whose file moved is paired as moved; a kernel removed and one added at the same place
//! are listed as renamed, never compared), and each pair's changes sorted by impact. No
//! arithmetic of occupancy here: every number is the record's.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use launch::Arch;
use launch_schema::diff::{
    ArchOnly, Change, Delta, Document, Kernel, LaunchChange, LiveLineChange, Moved, OccupancyDelta, Renamed,
    ResourceDelta, Side, Totals, VERSION,
};
use launch_schema::report::{Pressure, Record};

use crate::regression::{self, Measure};

/// A kernel's identity on one side: package, file, symbol.
type Key = (String, String, String);

/// One kernel's records on one side, by arch.
type Arches<'a> = BTreeMap<Arch, &'a Record>;

/// One side's records by kernel, then arch.
type Kernels<'a> = BTreeMap<Key, Arches<'a>>;

fn by_kernel(records: &[Record]) -> Kernels<'_> {
    let mut out: Kernels<'_> = BTreeMap::new();
    for r in records {
        let k = &r.kernel;
        out.entry((k.package.clone(), k.file.clone(), k.name.clone())).or_default().insert(r.arch, r);
    }
    out
}

fn kernel(archs: &Arches<'_>) -> Kernel {
    let first = archs.values().next().expect("a kernel has a record");
    let k = &first.kernel;
    Kernel {
        package: k.package.clone(),
        name: k.name.clone(),
        display_name: k.display_name.clone(),
        file: k.file.clone(),
        line: k.line,
        arches: archs.keys().copied().collect(),
    }
}

/// The comparison of `old` with `new`.
pub fn compare(old: (Side, &[Record]), new: (Side, &[Record])) -> Document {
    let (mut olds, mut news) = (by_kernel(old.1), by_kernel(new.1));
    let mut pairs: Vec<(Arches<'_>, Arches<'_>)> = Vec::new();
    let same: Vec<Key> = olds.keys().filter(|k| news.contains_key(*k)).cloned().collect();
    for key in same {
        pairs.push((olds.remove(&key).expect("listed"), news.remove(&key).expect("listed")));
    }
    // A symbol left on both sides, once on each (per package), moved to another file.
    let mut moved = Vec::new();
    let once = |side: &Kernels<'_>, pkg: &str, name: &str| {
        side.keys().filter(|(p, _, n)| p == pkg && n == name).cloned().collect::<Vec<_>>()
    };
    for key in olds.keys().cloned().collect::<Vec<_>>() {
        let (o, n) = (once(&olds, &key.0, &key.2), once(&news, &key.0, &key.2));
        if let ([o], [n]) = (o.as_slice(), n.as_slice()) {
            moved.push(Moved {
                package: key.0.clone(),
                name: key.2.clone(),
                old_file: o.1.clone(),
                new_file: n.1.clone(),
            });
            pairs.push((olds.remove(o).expect("listed"), news.remove(n).expect("listed")));
        }
    }
    let (mut removed, mut added): (Vec<Kernel>, Vec<Kernel>) =
        (olds.values().map(kernel).collect(), news.values().map(kernel).collect());
    let renamed = renamed(&mut removed, &mut added);
    let mut changes = Vec::new();
    let mut arches_only = Vec::new();
    let mut totals = Totals::default();
    for (o, n) in &pairs {
        for (arch, a) in o {
            match n.get(arch) {
                Some(b) => {
                    totals.compared += 1;
                    if let Some(c) = change(a, b) {
                        count(&mut totals, &c);
                        changes.push(c);
                    }
                }
                None => arches_only.push(only(a, "old")),
            }
        }
        arches_only.extend(n.iter().filter(|(a, _)| !o.contains_key(*a)).map(|(_, b)| only(b, "new")));
    }
    sort(&mut changes);
    Document { schema: VERSION, old: old.0, new: new.0, changes, added, removed, moved, renamed, arches_only, totals }
}

fn only(r: &Record, side: &str) -> ArchOnly {
    ArchOnly { package: r.kernel.package.clone(), name: r.kernel.name.clone(), arch: r.arch, side: side.into() }
}

/// A removed and an added kernel at the same package, file and line, one of each there: taken out
/// of both lists as a rename.
fn renamed(removed: &mut Vec<Kernel>, added: &mut Vec<Kernel>) -> Vec<Renamed> {
    let at = |k: &Kernel| (k.package.clone(), k.file.clone(), k.line);
    let mut out = Vec::new();
    let mut i = 0;
    while i < removed.len() {
        let place = at(&removed[i]);
        let olds = removed.iter().filter(|k| at(k) == place).count();
        let news: Vec<usize> = (0..added.len()).filter(|&j| at(&added[j]) == place).collect();
        if let (1, [j]) = (olds, news.as_slice()) {
            let new = added.remove(*j);
            out.push(Renamed { old: removed.remove(i), new });
        } else {
            i += 1;
        }
    }
    out
}

fn delta<T: PartialEq + Copy>(old: T, new: T) -> Option<Delta<T>> {
    (old != new).then_some(Delta { old, new })
}

/// What changed from `a` to `b` (one kernel on one arch), `None` when nothing did.
fn change(a: &Record, b: &Record) -> Option<Change> {
    let (ra, rb) = (&a.ptxas.resources, &b.ptxas.resources);
    let (oa, ob) = (&a.occupancy, &b.occupancy);
    let occupancy = (oa.threads != ob.threads || oa.percent != ob.percent || oa.active_blocks != ob.active_blocks)
        .then_some(OccupancyDelta {
            threads: Delta { old: oa.threads, new: ob.threads },
            percent: Delta { old: oa.percent, new: ob.percent },
            active_blocks: Delta { old: oa.active_blocks, new: ob.active_blocks },
        });
    let launch = match (&oa.launch_error, &ob.launch_error) {
        (None, Some(e)) => Some(LaunchChange { threads: ob.threads, fails_now: true, failure: e.clone() }),
        (Some(e), None) => Some(LaunchChange { threads: oa.threads, fails_now: false, failure: e.clone() }),
        _ => None,
    };
    let mut c = Change {
        package: b.kernel.package.clone(),
        name: b.kernel.name.clone(),
        display_name: b.kernel.display_name.clone(),
        file: b.kernel.file.clone(),
        line: b.kernel.line,
        arch: b.arch,
        registers: delta(ra.registers, rb.registers),
        spill_stores: delta(ra.spill_stores, rb.spill_stores),
        spill_loads: delta(ra.spill_loads, rb.spill_loads),
        stack_frame: delta(ra.stack_frame, rb.stack_frame),
        shared_static: delta(ra.shared_static, rb.shared_static),
        resources: resource_deltas(ra, rb),
        occupancy,
        next_block_registers: delta(a.next_block.map(|n| n.registers), b.next_block.map(|n| n.registers)),
        largest_block: delta(a.max_threads_per_block, b.max_threads_per_block),
        launch,
        live_peak: None,
        live_lines: Vec::new(),
        regression: false,
    };
    if let (Some(pa), Some(pb)) = (counted(a), counted(b)) {
        c.live_peak = delta(pa.peak.gpr, pb.peak.gpr);
        c.live_lines = live_lines(pa, pb);
    }
    let nothing = c.resources.is_empty()
        && c.occupancy.is_none()
        && c.next_block_registers.is_none()
        && c.largest_block.is_none()
        && c.launch.is_none()
        && c.live_peak.is_none()
        && c.live_lines.is_empty();
    if nothing {
        return None;
    }
    c.regression = !regression::regressions(&measure(a), &measure(b)).is_empty();
    Some(c)
}

/// The record's live counts, when it has them.
fn counted(r: &Record) -> Option<&Pressure> {
    r.pressure.as_ref().filter(|p| p.unavailable.is_none())
}

/// The lines whose most live registers differ, by file and line (the most over the places a line
/// is inlined at), most change first: a line on one side only counts its whole count.
fn live_lines(a: &Pressure, b: &Pressure) -> Vec<LiveLineChange> {
    let by_line = |p: &Pressure| {
        let mut m: BTreeMap<(String, u32), u32> = BTreeMap::new();
        for l in &p.lines {
            let e = m.entry((l.file.clone(), l.line)).or_default();
            *e = (*e).max(l.live.gpr);
        }
        m
    };
    let (old, new) = (by_line(a), by_line(b));
    let mut lines: Vec<LiveLineChange> = old
        .keys()
        .chain(new.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter_map(|key| {
            let live = Delta { old: old.get(key).copied(), new: new.get(key).copied() };
            (live.old != live.new).then(|| LiveLineChange { file: key.0.clone(), line: key.1, live })
        })
        .collect();
    let size = |l: &LiveLineChange| i64::from(l.live.new.unwrap_or(0)).abs_diff(i64::from(l.live.old.unwrap_or(0)));
    lines.sort_by(|x, y| size(y).cmp(&size(x)).then_with(|| (&x.file, x.line).cmp(&(&y.file, y.line))));
    lines
}

/// Every field of the resources that differs, by the field table (so none is skipped).
fn resource_deltas(a: &launch::Resources, b: &launch::Resources) -> Vec<ResourceDelta> {
    launch::Resources::FIELDS
        .iter()
        .filter(|f| (f.get)(a) != (f.get)(b))
        .map(|f| ResourceDelta { field: f.name.to_string(), old: (f.get)(a), new: (f.get)(b) })
        .collect()
}

/// What a regression is judged on, of one side's record ([`crate::regression`]).
fn measure(r: &Record) -> Measure {
    Measure::of(&r.ptxas.resources, r.occupancy.percent, Some(r.occupancy.launch_error.is_none()))
}

/// Whether the occupancy at the block size went down.
pub fn lost_occupancy(c: &Change) -> bool {
    c.occupancy.is_some_and(|o| o.percent.new < o.percent.old)
}

/// Spill bytes (stores + loads), new minus old.
pub fn spill_change(c: &Change) -> i64 {
    let d = |x: Option<Delta<u32>>| x.map_or(0, |d| i64::from(d.new) - i64::from(d.old));
    d(c.spill_stores) + d(c.spill_loads)
}

fn signed(d: Option<Delta<u32>>) -> i64 {
    d.map_or(0, |d| i64::from(d.new) - i64::from(d.old))
}

fn count(t: &mut Totals, c: &Change) {
    t.changed += 1;
    t.regressions += u32::from(c.regression);
    if let Some(o) = c.occupancy {
        t.occupancy_lost += u32::from(o.percent.new < o.percent.old);
        t.occupancy_gained += u32::from(o.percent.new > o.percent.old);
    }
    let spills = spill_change(c);
    t.spills_gained += u32::from(spills > 0);
    t.spills_lost += u32::from(spills < 0);
    if let Some(l) = &c.launch {
        t.launches_broken += u32::from(l.fails_now);
        t.launches_fixed += u32::from(!l.fails_now);
    }
    t.registers_delta += signed(c.registers);
    t.spill_bytes_delta += spills;
}

/// How much a change matters, largest first: a launch that stops or starts working, then the
/// occupancy moved (tenths of a percent), the spill bytes, the largest block, the registers, the
/// stack and shared memory, the live peak.
fn impact(c: &Change) -> (u8, u32, u64, u64, u64, u64, u64) {
    let abs = |d: Option<Delta<u32>>| signed(d).unsigned_abs();
    let launch = c.launch.as_ref().map_or(0, |l| if l.fails_now { 2 } else { 1 });
    let occupancy = c.occupancy.map_or(0, |o| ((o.percent.new - o.percent.old).abs() * 10.0).round() as u32);
    (
        launch,
        occupancy,
        spill_change(c).unsigned_abs(),
        abs(c.largest_block),
        abs(c.registers),
        abs(c.stack_frame) + abs(c.shared_static),
        abs(c.live_peak),
    )
}

/// Most impact first; at equal impact regressions first, then package, file, kernel and arch.
pub fn sort(changes: &mut [Change]) {
    changes.sort_by(|a, b| {
        (Reverse(impact(a)), !a.regression, &a.package, &a.file, &a.name, a.arch).cmp(&(
            Reverse(impact(b)),
            !b.regression,
            &b.package,
            &b.file,
            &b.name,
            b.arch,
        ))
    });
}

/// Whether the comparison holds a regression (`--fail-on regression`).
pub fn has_regression(doc: &Document) -> bool {
    doc.changes.iter().any(|c| c.regression)
}

#[cfg(test)]
mod tests;

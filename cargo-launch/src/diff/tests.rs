//! Pairing and sorting on constructed records (no compiler).

use launch::Resources;
use launch_analysis::{analyze, HostLaunch};
use launch_schema::manifest::Toolchain;
use launch_schema::report::{KernelId, Record};

use super::*;

/// A record of `name` in `file` at `line` on `arch` with `registers` and `spill` bytes (stores
/// and loads each), launched with 256 threads.
fn record(file: &str, name: &str, line: u32, arch: &str, registers: u32, spill: u32) -> Record {
    record_at(file, name, line, arch, registers, spill, 256)
}

/// [`record`] launched with `threads`.
fn record_at(file: &str, name: &str, line: u32, arch: &str, registers: u32, spill: u32, threads: u32) -> Record {
    let r = Resources { registers, spill_stores: spill, spill_loads: spill, ..Default::default() };
    let report = analyze(arch.parse().unwrap(), &r, None, HostLaunch { threads, dynamic_smem: 0 }).unwrap();
    let id = KernelId {
        package: "p".into(),
        name: name.into(),
        display_name: name.into(),
        qualified: format!("{file}::{name}"),
        file: file.into(),
        line,
    };
    Record::new(id, Vec::new(), &report)
}

fn side(label: &str) -> Side {
    Side { label: label.into(), toolchain: Toolchain { nvrtc: "12.9.86".into(), ptxas: "12.9.86".into() } }
}

fn diff(old: &[Record], new: &[Record]) -> Document {
    compare((side("old"), old), (side("new"), new))
}

#[test]
fn kernels_pair_by_file_and_symbol_and_the_rest_are_listed_not_paired() {
    let old = [
        record("a.cu", "same", 1, "sm_90", 32, 0),
        record("a.cu", "gone", 5, "sm_90", 32, 0),
        record("a.cu", "old_name", 9, "sm_90", 40, 0),
        record("a.cu", "wanders", 20, "sm_90", 32, 0),
        // One symbol in two files on each side: paired by file, never across.
        record("x.cu", "twin", 3, "sm_90", 32, 0),
        record("y.cu", "twin", 3, "sm_90", 64, 0),
    ];
    let new = [
        record("a.cu", "same", 1, "sm_90", 32, 0),
        record("a.cu", "fresh", 30, "sm_90", 32, 0),
        record("a.cu", "new_name", 9, "sm_90", 40, 0),
        record("b.cu", "wanders", 2, "sm_90", 48, 0),
        record("x.cu", "twin", 3, "sm_90", 32, 0),
        record("y.cu", "twin", 3, "sm_90", 64, 0),
    ];
    let d = diff(&old, &new);
    let names = |ks: &[Kernel]| ks.iter().map(|k| k.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&d.removed), ["gone"]);
    assert_eq!(names(&d.added), ["fresh"]);
    assert_eq!(d.renamed.len(), 1);
    assert_eq!((d.renamed[0].old.name.as_str(), d.renamed[0].new.name.as_str()), ("old_name", "new_name"));
    assert_eq!(
        d.moved,
        [Moved { package: "p".into(), name: "wanders".into(), old_file: "a.cu".into(), new_file: "b.cu".into() }]
    );
    // same, wanders, twin × 2: four pairs, one change (the moved kernel's registers).
    assert_eq!(d.totals.compared, 4);
    assert_eq!(d.changes.len(), 1, "{:#?}", d.changes);
    assert_eq!((d.changes[0].name.as_str(), d.changes[0].file.as_str()), ("wanders", "b.cu"));
    assert_eq!(d.changes[0].registers, Some(Delta { old: 32, new: 48 }));
}

#[test]
fn a_symbol_in_several_unpaired_files_is_added_and_removed_not_moved() {
    let old = [record("a.cu", "k", 1, "sm_90", 32, 0), record("b.cu", "k", 1, "sm_90", 32, 0)];
    let new = [record("c.cu", "k", 1, "sm_90", 32, 0), record("d.cu", "k", 1, "sm_90", 32, 0)];
    let d = diff(&old, &new);
    assert!(d.moved.is_empty() && d.renamed.is_empty() && d.changes.is_empty());
    assert_eq!((d.removed.len(), d.added.len()), (2, 2));
}

#[test]
fn an_arch_on_one_side_only_is_listed() {
    let old = [record("a.cu", "k", 1, "sm_80", 32, 0), record("a.cu", "k", 1, "sm_90", 32, 0)];
    let new = [record("a.cu", "k", 1, "sm_90", 32, 0), record("a.cu", "k", 1, "sm_100", 32, 0)];
    let d = diff(&old, &new);
    let only: Vec<(String, String)> = d.arches_only.iter().map(|a| (a.arch.to_string(), a.side.clone())).collect();
    assert_eq!(only, [("sm_80".to_string(), "old".to_string()), ("sm_100".to_string(), "new".to_string())]);
    assert_eq!(d.totals.compared, 1);
}

#[test]
fn changes_sort_by_impact_launch_first_then_occupancy_spills_registers() {
    let old = [
        record("a.cu", "regs_only", 1, "sm_90", 32, 0),
        record("a.cu", "spills", 2, "sm_90", 32, 0),
        record("a.cu", "occupancy", 3, "sm_90", 32, 0),
        // 1024 threads × 128 registers needs 128K registers, more than a block may use (701).
        record_at("a.cu", "breaks", 4, "sm_90", 64, 0, 1024),
        record("a.cu", "better", 5, "sm_90", 64, 0),
    ];
    let new = [
        record("a.cu", "regs_only", 1, "sm_90", 30, 0),
        record("a.cu", "spills", 2, "sm_90", 32, 16),
        record("a.cu", "occupancy", 3, "sm_90", 48, 0),
        record_at("a.cu", "breaks", 4, "sm_90", 128, 0, 1024),
        record("a.cu", "better", 5, "sm_90", 32, 0),
    ];
    let d = diff(&old, &new);
    let order: Vec<&str> = d.changes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(order, ["breaks", "better", "occupancy", "spills", "regs_only"], "{:#?}", d.changes);
    let breaks = &d.changes[0];
    assert!(breaks.launch.as_ref().is_some_and(|l| l.fails_now && l.threads == 1024), "{breaks:#?}");
    assert!(breaks.regression);
    assert!(!d.changes[1].regression, "more occupancy is no regression");
    assert!(d.changes[2].regression && d.changes[3].regression && !d.changes[4].regression);
    let t = d.totals;
    assert_eq!((t.compared, t.changed, t.regressions), (5, 5, 3));
    assert_eq!((t.launches_broken, t.launches_fixed, t.spills_gained), (1, 0, 1));
    assert_eq!(t.registers_delta, (30 - 32) + (48 - 32) + (128 - 64) + (32 - 64));
    assert_eq!(t.spill_bytes_delta, 32);
    assert!(has_regression(&d));
}

#[test]
fn identical_sides_have_no_change_and_no_regression() {
    let old = [record("a.cu", "k", 1, "sm_90", 32, 8), record("a.cu", "k", 1, "sm_100", 40, 0)];
    let d = diff(&old, &old);
    assert!(d.changes.is_empty() && !has_regression(&d));
    assert_eq!((d.totals.compared, d.totals.changed), (2, 0));
}

/// A launch that breaks: the phrase names the block size and why, and the largest block's change
/// names the block sizes that now fail; markdown puts it in the table and the details.
#[test]
fn a_launch_that_breaks_names_the_block_sizes_that_now_fail() {
    // 128 registers × 512 threads is the 64K registers a block may have; 168 is too many.
    let d =
        diff(&[record_at("a.cu", "k", 1, "sm_90", 128, 0, 512)], &[record_at("a.cu", "k", 1, "sm_90", 168, 0, 512)]);
    let c = &d.changes[0];
    assert_eq!(c.largest_block, Some(Delta { old: 512, new: 384 }));
    let said = crate::output::diff::phrases(c);
    assert!(
        said[0].starts_with("the launch at 512 threads now fails (error 701): 168 registers × 512 threads"),
        "{said:?}"
    );
    assert!(
        said.contains(&"largest block 512 → 384; blocks of 385..512 threads now fail (error 701)".to_string()),
        "{said:?}"
    );
    let md = crate::output::diff::markdown(&d);
    assert!(
        md.contains("| regressed | `k` | sm_90 | 128 → 168 |  | 25.0% → 0.0% ⬇ | 512 → 384 | **fails at 512** (701) |"),
        "{md}"
    );
    assert!(md.contains("launches broken 1, fixed 0"), "{md}");
    // And back: the launch works again.
    let back =
        diff(&[record_at("a.cu", "k", 1, "sm_90", 168, 0, 512)], &[record_at("a.cu", "k", 1, "sm_90", 128, 0, 512)]);
    assert!(crate::output::diff::phrases(&back.changes[0])[0]
        .starts_with("the launch at 512 threads now works (it failed: "));
    assert!(!back.changes[0].regression && back.totals.launches_fixed == 1);
}

/// Every field of the resources is compared (the field table): barriers, the cumulative stack and
/// cmem were skipped before, so a kernel whose only change was one of them was "unchanged". Each
/// field is changed through the table, so a field added to it is tested with no edit here.
#[test]
fn a_change_in_any_resource_field_is_a_change_named_by_its_field() {
    let base = record("a.cu", "k", 1, "sm_80", 32, 0);
    for f in Resources::FIELDS {
        let mut new = base.clone();
        let r = &mut new.ptxas.resources;
        (f.set)(r, Some((f.get)(r).unwrap_or(0) + 8));
        let d = diff(std::slice::from_ref(&base), &[new]);
        assert_eq!(d.changes.len(), 1, "{}: {d:?}", f.name);
        let fields: Vec<&str> = d.changes[0].resources.iter().map(|r| r.field.as_str()).collect();
        assert_eq!(fields, [f.name], "{}", f.name);
        // A regression exactly where the table says more is worse (the one predicate).
        assert_eq!(d.changes[0].regression, f.more_is_worse, "{}", f.name);
        let text = crate::output::diff::phrases(&d.changes[0]).join("; ");
        assert!(text.contains(f.label), "{}: {text}", f.label);
    }
}

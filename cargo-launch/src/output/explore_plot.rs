//! `cargo launch explore --plot`: the explored variants as one SVG, one panel per arch. Each panel
//! has two plot areas over one x axis, the register cap (`max_regs`): registers per thread on top
//! with occupancy (dashed, right axis), spill bytes (stores + loads) below. One colour per block
//! size. Variants without a cap stand right of the axis in labelled slots; frontier variants are
//! filled, the current build is ringed, the cliff from it is a red dashed line. Drawn with the
//! pieces `occupancy --plot` uses (`svg`).

use std::fmt::Write as _;

use launch_analysis::NextBlock;
use launch_schema::explore::{ArchVariants, Document, Variant};

use super::svg::{self, axis_title, line, text, LEFT, MARK, RIGHT, TITLE_HEIGHT, WIDTH};
use crate::words::{self, group};

/// The legend under the title: the block sizes, then what the marks mean.
const LEGEND_HEIGHT: f64 = 52.0;
/// Heading, the two plot areas, the x axis, gap.
const PANEL_HEIGHT: f64 = 434.0;
const HEADING: f64 = 34.0;
const REGS_HEIGHT: f64 = 200.0;
const GAP: f64 = 14.0;
const SPILL_HEIGHT: f64 = 130.0;
/// The register axis ends at 256 (ptxas allows 255): round ticks, as `occupancy --plot` has.
const REGS_MAX: f64 = 256.0;
/// Width of one slot for the variants without a register cap, and the gap before the slots.
const SLOT: f64 = 84.0;
const SLOT_GAP: f64 = 16.0;
/// One colour per block size (no red: red is the current build and the cliff).
const SERIES: [&str; 8] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];

/// Where a variant stands on the x axis: at its register cap, or in a slot of its own kind.
#[derive(Clone, Debug, PartialEq)]
enum Place {
    Cap(u32),
    Slot(String),
}

fn place(v: &Variant) -> Place {
    if let Some(cap) = v.contract.and_then(|c| c.max_regs) {
        return Place::Cap(cap);
    }
    match v.contract {
        _ if v.origin == "current" => Place::Slot("current".into()),
        None => Place::Slot("no contract".into()),
        Some(c) => Place::Slot(c.min_blocks.map_or_else(|| "no cap".into(), |b| format!("min_blocks {b}"))),
    }
}

/// The x positions shared by every panel: the cap axis, then the slots.
struct XAxis {
    slots: Vec<String>,
    cap_width: f64,
}

impl XAxis {
    fn new(doc: &Document) -> XAxis {
        let mut slots: Vec<String> = Vec::new();
        for v in doc.arches.iter().flat_map(|a| &a.variants) {
            if let Place::Slot(s) = place(v) {
                if !slots.contains(&s) {
                    slots.push(s);
                }
            }
        }
        // "current" first, then "no contract", "no cap", the min_blocks slots as met.
        let rank = |s: &String| ["current", "no contract", "no cap"].iter().position(|r| s == r).unwrap_or(3);
        slots.sort_by_key(rank);
        let gap = if slots.is_empty() { 0.0 } else { SLOT_GAP };
        let cap_width = WIDTH - LEFT - RIGHT - SLOT * slots.len() as f64 - gap;
        XAxis { slots, cap_width }
    }

    fn cap(&self, registers: u32) -> f64 {
        LEFT + f64::from(registers).min(REGS_MAX) / REGS_MAX * self.cap_width
    }

    fn slot(&self, i: usize) -> f64 {
        LEFT + self.cap_width + SLOT_GAP + SLOT * (i as f64 + 0.5)
    }

    fn of(&self, v: &Variant) -> f64 {
        match place(v) {
            Place::Cap(r) => self.cap(r),
            Place::Slot(s) => self.slot(self.slots.iter().position(|x| *x == s).unwrap_or(0)),
        }
    }
}

/// The spill axis, the same for every arch so the panels compare: (top value, tick step).
fn spill_scale(doc: &Document) -> (f64, f64) {
    let most = doc.arches.iter().flat_map(|a| &a.variants).filter_map(|v| v.resources).map(|r| r.spill_bytes()).max();
    let most = f64::from(most.unwrap_or(0).max(1));
    let step = svg::nice_step(most / 4.0).max(1.0);
    ((most / step).ceil() * step, step)
}

/// The block sizes, each a series, smallest first.
fn series(doc: &Document) -> Vec<u32> {
    let mut threads: Vec<u32> = doc.arches.iter().flat_map(|a| a.variants.iter().map(|v| v.threads)).collect();
    threads.sort_unstable();
    threads.dedup();
    threads
}

fn colour(threads: &[u32], t: u32) -> &'static str {
    SERIES[threads.iter().position(|&x| x == t).unwrap_or(0) % SERIES.len()]
}

/// The document.
pub(crate) fn svg(doc: &Document) -> String {
    let threads = series(doc);
    let arches: Vec<String> = doc.arches.iter().map(|a| a.arch.to_string()).collect();
    let sizes: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
    let title = [
        format!("Launch contracts of {}", doc.kernel.display_name),
        format!(
            "registers, spill bytes and occupancy against the register cap, on {} (ptxas {}), blocks of {} threads",
            arches.join(", "),
            doc.toolchain.ptxas,
            sizes.join(", ")
        ),
        "filled: on the frontier (no other variant has more occupancy and fewer spill bytes) — measure those".into(),
    ];
    let top = TITLE_HEIGHT + LEGEND_HEIGHT;
    let mut s = svg::open(top + PANEL_HEIGHT * doc.arches.len() as f64, &title);
    legend(&mut s, &threads, TITLE_HEIGHT + 4.0);
    let (x, spill) = (XAxis::new(doc), spill_scale(doc));
    for (i, a) in doc.arches.iter().enumerate() {
        panel(&mut s, doc, a, &x, spill, &threads, top + PANEL_HEIGHT * i as f64);
    }
    svg::close(s)
}

/// Two rows: a swatch per block size; the marks' meanings.
fn legend(s: &mut String, threads: &[u32], y: f64) {
    let _ = writeln!(s, r#"<g class="legend">"#);
    let mut x = LEFT;
    for &t in threads {
        let c = colour(threads, t);
        line(s, (x, y), (x + 24.0, y), &format!(r#"stroke="{c}" stroke-width="2""#));
        let label = format!("{t} threads per block");
        text(s, x + 30.0, y + 4.0, r#"font-size="12""#, &label);
        x += 48.0 + 7.0 * label.len() as f64;
    }
    let y = y + 22.0;
    let ink = "#555";
    marks(s, LEFT + 6.0, y - 4.0, ink, true, Mark::Registers);
    text(s, LEFT + 16.0, y, r#"font-size="11""#, "registers");
    marks(s, LEFT + 86.0, y - 4.0, ink, true, Mark::Occupancy);
    let dashed = format!(r#"stroke="{ink}" stroke-dasharray="6,4""#);
    line(s, (LEFT + 96.0, y - 4.0), (LEFT + 116.0, y - 4.0), &dashed);
    text(s, LEFT + 122.0, y, r#"font-size="11""#, "occupancy");
    marks(s, LEFT + 198.0, y - 4.0, ink, true, Mark::Spills);
    text(s, LEFT + 208.0, y, r#"font-size="11""#, "spill bytes");
    let ring = format!(r#"r="7" fill="none" stroke="{MARK}" stroke-width="2""#);
    let _ = writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" {ring}/>"#, LEFT + 292.0, y - 4.0);
    text(s, LEFT + 304.0, y, r#"font-size="11""#, "current build");
    cross(s, LEFT + 400.0, y - 4.0, ink);
    text(s, LEFT + 410.0, y, r#"font-size="11""#, "refused by ptxas");
    let cliff = format!(r#"stroke="{MARK}" stroke-dasharray="4,3""#);
    line(s, (LEFT + 520.0, y - 10.0), (LEFT + 520.0, y + 2.0), &cliff);
    text(s, LEFT + 528.0, y, r#"font-size="11""#, "cliff: one more block fits");
    let _ = writeln!(s, "</g>");
}

#[derive(Clone, Copy)]
enum Mark {
    Registers,
    Occupancy,
    Spills,
}

/// A data mark at (x, y): filled for a frontier variant, hollow otherwise.
fn marks(s: &mut String, x: f64, y: f64, colour: &str, filled: bool, mark: Mark) {
    let fill = if filled { colour } else { "white" };
    let paint = format!(r#"fill="{fill}" stroke="{colour}" stroke-width="1.5""#);
    let _ = match mark {
        Mark::Registers => writeln!(s, r#"<circle class="registers" cx="{x:.1}" cy="{y:.1}" r="4.5" {paint}/>"#),
        Mark::Occupancy => {
            let (l, t) = (x - 3.5, y - 3.5);
            writeln!(s, r#"<rect class="occupancy" x="{l:.1}" y="{t:.1}" width="7" height="7" {paint}/>"#)
        }
        Mark::Spills => {
            let (l, r, t, b) = (x - 5.0, x + 5.0, y - 5.0, y + 5.0);
            writeln!(
                s,
                r#"<polygon class="spills" points="{x:.1},{t:.1} {r:.1},{y:.1} {x:.1},{b:.1} {l:.1},{y:.1}" {paint}/>"#
            )
        }
    };
}

fn cross(s: &mut String, x: f64, y: f64, colour: &str) {
    let stroke = format!(r#"stroke="{colour}" stroke-width="2""#);
    line(s, (x - 4.0, y - 4.0), (x + 4.0, y + 4.0), &stroke);
    line(s, (x - 4.0, y + 4.0), (x + 4.0, y - 4.0), &stroke);
}

/// One panel's vertical layout: the two plot areas, and where a value stands in them.
struct Rows {
    regs_top: f64,
    regs_bottom: f64,
    spill_top: f64,
    spill_bottom: f64,
    /// The spill axis' top value.
    spill_max: f64,
}

impl Rows {
    /// The panel whose top is at `y0`, its spill axis up to `spill_max`.
    fn new(y0: f64, spill_max: f64) -> Rows {
        let (regs_top, regs_bottom) = (y0 + HEADING, y0 + HEADING + REGS_HEIGHT);
        let (spill_top, spill_bottom) = (regs_bottom + GAP, regs_bottom + GAP + SPILL_HEIGHT);
        Rows { regs_top, regs_bottom, spill_top, spill_bottom, spill_max }
    }

    fn regs(&self, r: u32) -> f64 {
        self.regs_bottom - f64::from(r).min(REGS_MAX) / REGS_MAX * REGS_HEIGHT
    }

    fn pct(&self, p: f64) -> f64 {
        self.regs_bottom - p.clamp(0.0, 100.0) / 100.0 * REGS_HEIGHT
    }

    fn spill(&self, b: u32) -> f64 {
        self.spill_bottom - (f64::from(b) / self.spill_max).min(1.0) * SPILL_HEIGHT
    }
}

/// One arch: heading with the cliff, registers and occupancy on top, spills below.
fn panel(s: &mut String, doc: &Document, a: &ArchVariants, x: &XAxis, spill: (f64, f64), threads: &[u32], y0: f64) {
    let rows = Rows::new(y0, spill.0);
    let _ = writeln!(s, r#"<g class="panel">"#);
    let cliff = heading(s, doc, a, y0);
    axes(s, x, &rows, spill.1);

    // The cliff from the current build.
    if let Some(n) = &cliff {
        let cx = x.cap(n.registers);
        line(
            s,
            (cx, rows.regs_top),
            (cx, rows.spill_bottom),
            &format!(r#"class="cliff" stroke="{MARK}" stroke-dasharray="4,3""#),
        );
        let label = format!("cliff: {} blocks/SM", n.active_blocks);
        text(s, cx + 4.0, rows.regs_top + 14.0, &format!(r#"font-size="11" fill="{MARK}""#), &label);
    }

    capped_lines(s, a, x, &rows, threads);
    variant_marks(s, a, x, &rows, threads);
    let _ = writeln!(s, "</g>");
}

/// The panel's heading and, on its right, the cliff from the current build, which it returns.
fn heading(s: &mut String, doc: &Document, a: &ArchVariants, y0: f64) -> Option<NextBlock> {
    let heading = format!("{} on {}", doc.kernel.display_name, a.arch);
    text(s, LEFT, y0 + 20.0, r#"font-size="14" font-weight="bold""#, &heading);
    let current = a.variants.first().and_then(|v| v.resources);
    let cliff = a.next_block.zip(current).map(|(n, r)| (n, words::next_block(&n, r.registers)));
    let (cliff_text, cliff_colour) = match &cliff {
        Some((_, phrase)) => (format!("cliff from the current build: {phrase}"), MARK),
        None => ("no register cap fits one more block than the current build".to_string(), "#555"),
    };
    text(
        s,
        WIDTH - RIGHT,
        y0 + 20.0,
        &format!(r#"font-size="13" fill="{cliff_colour}" text-anchor="end""#),
        &cliff_text,
    );
    cliff.map(|(n, _)| n)
}

/// Registers (left) and occupancy (right) on top, spill bytes below (ticks every `spill_step`),
/// the x axis with its slots, the frames.
fn axes(s: &mut String, x: &XAxis, rows: &Rows, spill_step: f64) {
    let right = WIDTH - RIGHT;
    let (regs_top, regs_bottom, spill_top, spill_bottom) =
        (rows.regs_top, rows.regs_bottom, rows.spill_top, rows.spill_bottom);
    for r in (0..=REGS_MAX as u32).step_by(32) {
        line(s, (LEFT, rows.regs(r)), (right, rows.regs(r)), svg::GRID);
        text(s, LEFT - 6.0, rows.regs(r) + 4.0, r#"font-size="11" text-anchor="end""#, &r.to_string());
    }
    svg::percent_axis(s, regs_top, regs_bottom);
    axis_title(s, LEFT - 42.0, (regs_top + regs_bottom) / 2.0, -90, "registers per thread");
    let mut v = 0.0;
    while v <= rows.spill_max + 1e-9 {
        let yy = spill_bottom - v / rows.spill_max * SPILL_HEIGHT;
        line(s, (LEFT, yy), (right, yy), svg::GRID);
        text(s, LEFT - 6.0, yy + 4.0, r#"font-size="11" text-anchor="end""#, &group(v as u64));
        v += spill_step;
    }
    axis_title(s, LEFT - 56.0, (spill_top + spill_bottom) / 2.0, -90, "spill bytes (st + ld)");
    // ptxas never uses more registers than the cap: the diagonal is where it uses all of it.
    let diagonal = r##"stroke="#bbb" stroke-dasharray="2,3""##;
    line(s, (x.cap(0), rows.regs(0)), (x.cap(REGS_MAX as u32), rows.regs(REGS_MAX as u32)), diagonal);
    text(s, x.cap(224) - 4.0, rows.regs(236), r##"font-size="10" fill="#888" text-anchor="end""##, "registers = cap");
    for r in (0..=REGS_MAX as u32).step_by(32) {
        svg::x_tick(s, x.cap(r), spill_bottom, &r.to_string());
    }
    for (i, label) in x.slots.iter().enumerate() {
        svg::x_tick(s, x.slot(i), spill_bottom, label);
    }
    if !x.slots.is_empty() {
        let at = LEFT + x.cap_width + SLOT_GAP / 2.0;
        for (t, b) in [(regs_top, regs_bottom), (spill_top, spill_bottom)] {
            line(s, (at, t), (at, b), r##"stroke="#999" stroke-dasharray="3,3""##);
        }
    }
    let x_label = "register cap per thread (max_regs); right of the dashed line: variants without one";
    let centre = LEFT + (WIDTH - LEFT - RIGHT) / 2.0;
    text(s, centre, spill_bottom + 38.0, r#"font-size="12" text-anchor="middle""#, x_label);
    svg::frame(s, regs_top, regs_bottom);
    svg::frame(s, spill_top, spill_bottom);
}

/// Per block size, the capped variants joined in cap order.
fn capped_lines(s: &mut String, a: &ArchVariants, x: &XAxis, rows: &Rows, threads: &[u32]) {
    for &t in threads {
        let c = colour(threads, t);
        let mut capped: Vec<&Variant> = a
            .variants
            .iter()
            .filter(|v| v.threads == t && v.resources.is_some() && matches!(place(v), Place::Cap(_)))
            .collect();
        capped.sort_by_key(|v| v.contract.and_then(|c| c.max_regs));
        let points = |y: &dyn Fn(&Variant) -> f64| capped.iter().map(|v| (x.of(v), y(v))).collect::<Vec<_>>();
        let regs = points(&|v| rows.regs(v.resources.map_or(0, |r| r.registers)));
        let pct = points(&|v| rows.pct(v.percent));
        let spills = points(&|v| rows.spill(v.resources.map_or(0, |r| r.spill_bytes())));
        polyline(s, &regs, &format!(r#"stroke="{c}" stroke-width="2""#));
        polyline(s, &pct, &format!(r#"stroke="{c}" stroke-width="1.5" stroke-dasharray="6,4""#));
        polyline(s, &spills, &format!(r#"stroke="{c}" stroke-width="2""#));
    }
}

/// A group per variant, with its numbers as the tooltip.
fn variant_marks(s: &mut String, a: &ArchVariants, x: &XAxis, rows: &Rows, threads: &[u32]) {
    for v in &a.variants {
        let (c, cx) = (colour(threads, v.threads), x.of(v));
        let _ = writeln!(s, r#"<g class="variant">"#);
        let _ = writeln!(s, "<title>{}</title>", svg::escape(&describe(v)));
        match v.resources {
            Some(r) => {
                marks(s, cx, rows.pct(v.percent), c, v.frontier, Mark::Occupancy);
                marks(s, cx, rows.regs(r.registers), c, v.frontier, Mark::Registers);
                marks(s, cx, rows.spill(r.spill_bytes()), c, v.frontier, Mark::Spills);
                if v.origin == "current" {
                    let ring = format!(r#"r="8" fill="none" stroke="{MARK}" stroke-width="2""#);
                    let cy = rows.regs(r.registers);
                    let _ = writeln!(s, r#"<circle class="current" cx="{cx:.1}" cy="{cy:.1}" {ring}/>"#);
                }
            }
            None => cross(s, cx, rows.regs_bottom - 8.0, c),
        }
        let _ = writeln!(s, "</g>");
    }
}

fn polyline(s: &mut String, points: &[(f64, f64)], attrs: &str) {
    if points.len() < 2 {
        return;
    }
    let d: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = writeln!(s, r#"<polyline points="{}" fill="none" {attrs}/>"#, d.join(" "));
}

/// The tooltip: the contract and the variant's numbers, as the table says them.
fn describe(v: &Variant) -> String {
    let current = if v.origin == "current" { " (current)" } else { "" };
    let head = format!("{}{current}, {} threads", words::contract(v.contract), v.threads);
    match (&v.resources, &v.error, &v.launch_error) {
        (None, e, _) => format!("{head}: refused by ptxas: {}", e.as_deref().unwrap_or("")),
        (Some(r), _, launch) => {
            let occupancy = match launch {
                Some(_) => "cannot launch".to_string(),
                None => format!("{:.1} % occupancy", v.percent),
            };
            let frontier = if v.frontier { ", on the frontier" } else { "" };
            format!(
                "{head}: {} registers, spills {}/{} B, stack {} B, {occupancy}{frontier}",
                r.registers, r.spill_stores, r.spill_loads, r.stack_frame
            )
        }
    }
}

#[cfg(test)]
mod tests;

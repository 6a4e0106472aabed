//! `cargo launch diff`'s text and markdown: the totals, then each change (most impact first) as
//! what moved, then the kernels added, removed, moved or renamed. Markdown is for a pull-request
//! comment: a summary table, the details collapsed, bounded in size.

use std::io::{self, Write};

use launch_schema::diff::{Change, Delta, Document, Kernel};

use crate::diff::{lost_occupancy, spill_change};

/// Markdown stays under this many bytes (GitHub takes 65,536 characters in a comment).
pub const MARKDOWN_LIMIT: usize = 60_000;

/// Rows of the markdown summary table at most; the rest are counted.
const TABLE_ROWS: usize = 100;

fn side(doc: &Document, old: bool) -> String {
    let s = if old { &doc.old } else { &doc.new };
    format!("{} (NVRTC {}, ptxas {})", s.label, s.toolchain.nvrtc, s.toolchain.ptxas)
}

fn arrow<T: std::fmt::Display>(d: Delta<T>) -> String {
    format!("{} → {}", d.old, d.new)
}

fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

/// The totals in one sentence.
pub fn totals_line(doc: &Document) -> String {
    let t = &doc.totals;
    if t.changed == 0 {
        return format!("{} kernel × arch pairs compared: nothing changed", t.compared);
    }
    format!(
        "{} kernel × arch pairs compared, {} changed, {} regression{}: occupancy lost {}, gained {}; spills gained {}, \
         lost {} ({} bytes); launches broken {}, fixed {}; registers {}",
        t.compared,
        t.changed,
        t.regressions,
        if t.regressions == 1 { "" } else { "s" },
        t.occupancy_lost,
        t.occupancy_gained,
        t.spills_gained,
        t.spills_lost,
        signed(t.spill_bytes_delta),
        t.launches_broken,
        t.launches_fixed,
        signed(t.registers_delta),
    )
}

/// What changed in `c`, one phrase per number.
pub fn phrases(c: &Change) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(l) = &c.launch {
        out.push(if l.fails_now {
            format!("the launch at {} threads now fails (error 701): {}", l.threads, l.failure.message)
        } else {
            format!("the launch at {} threads now works (it failed: {})", l.threads, l.failure.message)
        });
    }
    if let Some(o) = c.occupancy {
        let threads = if o.threads.old == o.threads.new {
            format!("at {} threads", o.threads.new)
        } else {
            format!("at {} threads (was {})", o.threads.new, o.threads.old)
        };
        out.push(format!(
            "occupancy {threads} {:.1}% → {:.1}% ({} blocks/SM)",
            o.percent.old,
            o.percent.new,
            arrow(o.active_blocks)
        ));
    }
    for d in &c.resources {
        let label = launch::Resources::FIELDS.iter().find(|f| f.name == d.field).map_or(d.field.as_str(), |f| f.label);
        out.push(match (d.old, d.new) {
            (Some(old), Some(new)) => {
                format!("{label} {} ({})", arrow(Delta { old, new }), signed(i64::from(new) - i64::from(old)))
            }
            (old, new) => {
                let show = |v: Option<u32>| v.map_or("not printed".to_string(), |v| v.to_string());
                format!("{label} {} → {}", show(old), show(new))
            }
        });
    }
    if let Some(d) = c.largest_block {
        let what = if d.new < d.old {
            format!("; blocks of {}..{} threads now fail (error 701)", d.new + 1, d.old)
        } else {
            format!("; blocks of {}..{} threads now launch", d.old + 1, d.new)
        };
        out.push(format!("largest block {}{what}", arrow(d)));
    }
    if let Some(d) = c.next_block_registers {
        let show = |r: Option<u32>| r.map_or("none".to_string(), |r| format!("≤ {r} registers"));
        out.push(format!("next-block cliff {} → {}", show(d.old), show(d.new)));
    }
    if let Some(d) = c.live_peak {
        out.push(format!("live registers at the peak {}", arrow(d)));
    }
    for l in c.live_lines.iter().take(LIVE_LINES) {
        out.push(match (l.live.old, l.live.new) {
            (Some(old), Some(new)) => format!("{}:{} went from {old} to {new} live registers", l.file, l.line),
            (None, Some(new)) => format!("{}:{} is new, with {new} live registers", l.file, l.line),
            (Some(old), None) => format!("{}:{} has no code now (it had {old} live registers)", l.file, l.line),
            (None, None) => continue,
        });
    }
    if c.live_lines.len() > LIVE_LINES {
        out.push(format!(
            "{} more lines' live registers changed (--format json lists them)",
            c.live_lines.len() - LIVE_LINES
        ));
    }
    out
}

/// Lines whose live registers changed, shown per kernel × arch.
const LIVE_LINES: usize = 3;

fn verdict(c: &Change) -> &'static str {
    if c.regression {
        "regressed"
    } else if c.occupancy.is_some_and(|o| o.percent.new > o.percent.old)
        || spill_change(c) < 0
        || c.launch.as_ref().is_some_and(|l| !l.fails_now)
    {
        "improved"
    } else {
        "changed"
    }
}

fn kernel_line(k: &Kernel) -> String {
    let arches: Vec<String> = k.arches.iter().map(|a| a.to_string()).collect();
    format!("{} ({}:{}; {})", k.display_name, k.file, k.line, arches.join(", "))
}

/// The kernels listed, not compared: added, removed, moved, renamed, arches on one side.
fn listed(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(doc.added.iter().map(|k| format!("added: {}", kernel_line(k))));
    out.extend(doc.removed.iter().map(|k| format!("removed: {}", kernel_line(k))));
    out.extend(doc.moved.iter().map(|m| format!("moved: {} from {} to {}", m.name, m.old_file, m.new_file)));
    out.extend(doc.renamed.iter().map(|r| {
        format!(
            "renamed?: {} → {} at {}:{} (listed, not compared)",
            r.old.display_name, r.new.display_name, r.new.file, r.new.line
        )
    }));
    out.extend(doc.arches_only.iter().map(|a| format!("only on the {} side: {} on {}", a.side, a.name, a.arch)));
    out
}

/// The text form.
pub fn text(out: &mut impl Write, doc: &Document) -> io::Result<()> {
    writeln!(out, "old: {}", side(doc, true))?;
    writeln!(out, "new: {}", side(doc, false))?;
    writeln!(out, "{}", totals_line(doc))?;
    for c in &doc.changes {
        writeln!(out, "\n{:<9}  {}  {}  {}:{}", verdict(c), c.display_name, c.arch, c.file, c.line)?;
        for p in phrases(c) {
            writeln!(out, "           {p}")?;
        }
    }
    let listed = listed(doc);
    if !listed.is_empty() {
        writeln!(out)?;
        for l in listed {
            writeln!(out, "{l}")?;
        }
    }
    Ok(())
}

/// A table cell: `old → new`, or empty.
fn cell(d: Option<Delta<u32>>) -> String {
    d.map(arrow).unwrap_or_default()
}

fn row(c: &Change) -> String {
    let spills = match (c.spill_stores, c.spill_loads) {
        (None, None) => String::new(),
        _ => signed(spill_change(c)),
    };
    let occupancy = c.occupancy.map(|o| format!("{:.1}% → {:.1}%", o.percent.old, o.percent.new)).unwrap_or_default();
    let launch = match &c.launch {
        Some(l) if l.fails_now => format!("**fails at {}** (701)", l.threads),
        Some(l) => format!("works at {}", l.threads),
        None => String::new(),
    };
    format!(
        "| {} | `{}` | {} | {} | {} | {}{} | {} | {} |\n",
        verdict(c),
        c.display_name.replace('|', "\\|"),
        c.arch,
        cell(c.registers),
        spills,
        occupancy,
        if lost_occupancy(c) { " ⬇" } else { "" },
        cell(c.largest_block),
        launch
    )
}

/// The markdown form, under [`MARKDOWN_LIMIT`] bytes: what does not fit is counted, not shown.
pub fn markdown(doc: &Document) -> String {
    let mut s = format!("### cargo launch diff: {} → {}\n\n", doc.old.label, doc.new.label);
    s.push_str(&format!("{} → {}\n\n", side(doc, true), side(doc, false)));
    s.push_str(&format!("**{}**\n\n", totals_line(doc)));
    if !doc.changes.is_empty() {
        s.push_str("| | kernel | arch | registers | spill bytes | occupancy | largest block | launch |\n");
        s.push_str("|---|---|---|---|---|---|---|---|\n");
        for c in doc.changes.iter().take(TABLE_ROWS) {
            s.push_str(&row(c));
        }
        if doc.changes.len() > TABLE_ROWS {
            s.push_str(&format!("\n{} more changes are in the details below.\n", doc.changes.len() - TABLE_ROWS));
        }
    }
    let listed = listed(doc);
    // Room kept for the closing lines and the note of what was left out.
    let budget = MARKDOWN_LIMIT - 400;
    let mut left_out = 0;
    let mut details = String::new();
    for c in &doc.changes {
        let mut one = format!("- **{}** `{}` {} ({}:{})\n", verdict(c), c.display_name, c.arch, c.file, c.line);
        for p in phrases(c) {
            one.push_str(&format!("  - {p}\n"));
        }
        if s.len() + details.len() + one.len() > budget {
            left_out += 1;
        } else {
            details.push_str(&one);
        }
    }
    for l in &listed {
        let one = format!("- {l}\n");
        if s.len() + details.len() + one.len() > budget {
            left_out += 1;
        } else {
            details.push_str(&one);
        }
    }
    if !details.is_empty() {
        s.push_str("\n<details><summary>Details</summary>\n\n");
        s.push_str(&details);
        s.push_str("\n</details>\n");
    }
    if left_out > 0 {
        s.push_str(&format!(
            "\n{left_out} entries left out to stay under {} KB; `cargo launch diff --format json` has them all.\n",
            MARKDOWN_LIMIT / 1000
        ));
    }
    s
}

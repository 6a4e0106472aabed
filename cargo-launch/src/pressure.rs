//! `--pressure`: where each kernel's registers are live, by source line (`report --pressure`, the
//! JSON field `pressure`).
//!
//! Per kernel file × arch shown: the file is compiled again with line info, as for `--spills`
//! (`crate::line_info`: the build's options plus `-lineinfo`, the same instructions), and
//! nvdisasm reads the cubin twice — `-lrm count` for the live registers after each instruction,
//! `-gi` for each instruction's source line and inline frames — and [`parse`] joins the two on
//! the offset. For a kernel that spills under a register budget, the file is compiled once more
//! with the contract directives removed: what the code asks for, and so which lines the budget
//! cuts. Cached in the package's `OUT_DIR/launch/pressure/`, keyed like the spill lines, so a
//! second run compiles and disassembles nothing. Only when asked: a plain build or report never
//! pays for it.

mod parse;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use launch::{Arch, Resources};
use launch_analysis::HostLaunch;
use launch_engine::tooling::lineinfo::{nvdisasm, Compiled};
use launch_engine::tooling::toolchain::Toolchain;
use launch_engine::tooling::Env;
use launch_schema::report::{AtPeak, LiveCount, Pressure, PressureLine, SpillsByLine, Unbounded};
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::line_info::{per_file, Job};
use crate::records::{PackageKernels, Row};

/// Bumped when what is cached changes shape or meaning.
const FORMAT: &str = "pressure-3";
/// The same for the compile without contracts.
const FORMAT_UNBOUNDED: &str = "pressure-unbounded-2";
/// The same for a cubin's peak alone (`explore --pressure`).
const FORMAT_PEAK: &str = "pressure-peak-1";

/// Lines shown per kernel × arch in the text report (JSON lists every line).
pub const SHOWN: usize = 5;

/// The text's widest line, as the summary table's.
const WIDTH: usize = 120;

/// One function's counts in one compile, as cached.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Counted {
    peak: LiveCount,
    /// ptxas's `Used N registers` in this compile.
    allocated: u32,
    lines: Vec<PressureLine>,
    unattributed: u32,
}

/// What one file × arch gave, as cached: every function's counts, or why nvdisasm gave none for
/// the whole cubin.
#[derive(serde::Serialize, serde::Deserialize)]
enum Cached {
    Counts(BTreeMap<String, Counted>),
    Unavailable(String),
}

/// One kernel × arch: the nvdisasm that read it and its counts, or why there are none.
#[derive(Debug)]
struct Measured {
    nvdisasm: String,
    counts: Result<Counted, String>,
}

type Key = (String, String, Arch);

/// The pressure found, per package, kernel symbol and arch: as built, and without the contract
/// where the kernel spills under a register budget.
#[derive(Debug, Default)]
pub struct Found {
    built: HashMap<Key, Measured>,
    unbounded: HashMap<Key, Measured>,
}

impl Found {
    /// Those of `r`'s kernel × arch, with ptxas's allocation, the contract's budget and the
    /// occupancy at the peak; `None` when it was not looked at.
    pub fn of(&self, r: &Row) -> Option<Pressure> {
        let at = key(r);
        let m = self.built.get(&at)?;
        let budget = r.report.register_cap;
        let mut p = Pressure {
            nvdisasm: m.nvdisasm.clone(),
            unavailable: None,
            peak: LiveCount::default(),
            allocated: r.report.resources.registers,
            budget,
            at_peak: None,
            lines: Vec::new(),
            unattributed: 0,
            unbounded: None,
        };
        match &m.counts {
            Err(why) => p.unavailable = Some(why.clone()),
            Ok(c) => {
                (p.peak, p.lines, p.unattributed) = (c.peak, c.lines.clone(), c.unattributed);
                p.at_peak = at_peak(r, c.peak.gpr);
                // The file's other kernels were compiled without contracts too: only those cut by
                // their budget show it.
                let u = self.unbounded.get(&at).filter(|_| cut_by_budget(r)).and_then(|u| u.counts.as_ref().ok());
                p.unbounded = u.zip(budget).map(|(u, budget)| Unbounded {
                    allocated: u.allocated,
                    peak: u.peak,
                    over_budget: u.lines.iter().filter(|l| l.live.gpr > budget).cloned().collect(),
                });
            }
        }
        Some(p)
    }
}

/// The occupancy at `r`'s block size with `registers` allocated (the calculator rounds them up
/// as ptxas's allocation is).
fn at_peak(r: &Row, registers: u32) -> Option<AtPeak> {
    let o = &r.report.occupancy;
    let resources = Resources { registers, ..r.report.resources };
    let host = HostLaunch { threads: o.threads, dynamic_smem: o.dynamic_smem };
    let k = launch_analysis::analyze(r.arch(), &resources, r.report.contract, host).ok()?;
    let o = &k.occupancy;
    Some(AtPeak { active_blocks: o.active_blocks, active_warps: o.active_warps, percent: o.percent })
}

/// Whether `r` spills under a register budget that binds: then the compile without its contract
/// says which lines the budget cuts.
fn cut_by_budget(r: &Row) -> bool {
    r.spill_bytes() > 0 && r.report.binding_register_cap().is_some()
}

/// Finds the pressure of every row in `rows`.
///
/// # Errors
/// No nvdisasm (exit 3, with every place looked at), or a compile or disassembly that fails.
pub fn collect<'a>(packages: &[PackageKernels], rows: impl IntoIterator<Item = &'a Row>) -> Result<Found, Error> {
    let rows: Vec<&Row> = rows.into_iter().collect();
    let cut: HashSet<Key> = rows.iter().filter(|r| cut_by_budget(r)).map(|r| key(r)).collect();
    // One pass: a file is compiled without its contracts only when one of its kernels needs it,
    // and nvdisasm followed the build's cubin (it cannot follow the other one either when not).
    let found = per_file(packages, rows.iter().copied(), "pressure", |job| {
        let built = per_kernel(&job, job.cached(FORMAT, "pressure", || counts(&job, &job.compile()?))?);
        let needs = |k: &String| {
            cut.contains(&(job.package.to_string(), k.clone(), job.arch))
                && built.get(k).is_some_and(|m| m.counts.is_ok())
        };
        let mut unbounded = match job.kernels.iter().any(needs) {
            true => Some(per_kernel(
                &job,
                job.cached(FORMAT_UNBOUNDED, "pressure (without the contracts)", || {
                    counts(&job, &job.compile_unbounded()?)
                })?,
            )),
            false => None,
        };
        Ok(built.into_iter().map(|(k, m)| (k.clone(), (m, unbounded.as_mut().and_then(|u| u.remove(&k))))).collect())
    })?;
    let mut out = Found::default();
    for (key, (built, unbounded)) in found {
        if let Some(u) = unbounded {
            out.unbounded.insert(key.clone(), u);
        }
        out.built.insert(key, built);
    }
    Ok(out)
}

/// `r`'s kernel × arch, as [`Found`] keys it.
fn key(r: &Row) -> Key {
    (r.id.package.clone(), r.id.name.clone(), r.arch())
}

/// Every kernel of the job with its counts; one nvdisasm printed none for is said to be so,
/// never left out.
fn per_kernel(job: &Job<'_>, cached: Cached) -> BTreeMap<String, Measured> {
    let measured = |counts| Measured { nvdisasm: job.tool.version.clone(), counts };
    let mut found: BTreeMap<String, Measured> = match cached {
        Cached::Counts(functions) => functions.into_iter().map(|(k, c)| (k, measured(Ok(c)))).collect(),
        Cached::Unavailable(why) => job.kernels.iter().map(|k| (k.clone(), measured(Err(why.clone())))).collect(),
    };
    for k in job.kernels {
        let none = || measured(Err("nvdisasm printed no live registers for this kernel".into()));
        found.entry(k.clone()).or_insert_with(none);
    }
    found
}

/// The live counts of every function of `compiled`, joined with their lines and the lines' text.
fn counts(job: &Job<'_>, compiled: &Compiled) -> Result<Cached, Error> {
    let lines = parse::lines(&job.disassemble(&compiled.cubin)?, job.root);
    let live = match job.life_ranges(&compiled.cubin)? {
        Err(why) => return Ok(Cached::Unavailable(why)),
        Ok(text) => parse::live(&text),
    };
    let registers = compiled.registers();
    let mut sources = Sources::new(job.root);
    let functions = live
        .iter()
        .map(|(symbol, live)| {
            let j = parse::join(live, lines.get(symbol));
            let mut lines = j.lines;
            for l in &mut lines {
                l.text = sources.line(&l.file, l.line);
            }
            let allocated = registers.get(symbol).copied().unwrap_or(0);
            (symbol.clone(), Counted { peak: j.peak, allocated, lines, unattributed: j.unattributed })
        })
        .collect();
    Ok(Cached::Counts(functions))
}

/// The nvdisasm that counts live registers for `toolchain`'s cubins (as `--spills` finds it), and
/// how long a run may take (`LAUNCH_COMPILE_TIMEOUT`).
///
/// # Errors
/// No usable nvdisasm (exit 3, with every place looked at), or a malformed timeout.
pub fn locate(toolchain: &Toolchain) -> Result<(nvdisasm::Located, Duration), Error> {
    let env = Env::cli();
    let timeout = env.compile_timeout().map_err(|e| Error::Usage(anyhow::Error::new(e)))?;
    let tool = nvdisasm::locate(&env, toolchain, timeout).map_err(|e| Error::NoToolchain(e.into()))?;
    Ok((tool, timeout))
}

/// The peak of live registers of entry `entry` in each cubin (`nvdisasm -lrm count`; the code of
/// the entry's section, where a called function that was not inlined has a section of its own),
/// each cached under `dir` by the cubin's bytes: `cargo launch explore --pressure`. `Err(why)`
/// for a cubin nvdisasm follows no data flow through.
///
/// # Errors
/// nvdisasm that cannot run, or a cache entry that cannot be written.
pub fn peaks(
    (tool, timeout): &(nvdisasm::Located, Duration),
    cubins: &[&[u8]],
    entry: &str,
    dir: &Path,
) -> Result<Vec<Result<LiveCount, String>>, Error> {
    let work = dir.join("work");
    cubins
        .iter()
        .map(|cubin| {
            let digest: String = Sha256::digest(cubin).iter().map(|b| format!("{b:02x}")).collect();
            let key = crate::line_info::cache_key(FORMAT_PEAK, &format!("{digest} {entry}"), tool);
            crate::line_info::cached_in(dir, &key, "live-register", || {
                let counting = |e| {
                    Error::Failure(anyhow::Error::new(e).context(format!("counting the live registers of {entry}")))
                };
                let text = nvdisasm::life_ranges(&tool.path, cubin, &work, *timeout).map_err(counting)?;
                Ok(text.and_then(|text| {
                    let live = parse::live(&text);
                    let counts =
                        live.get(entry).ok_or_else(|| format!("nvdisasm printed no live registers for {entry}"))?;
                    Ok(parse::peak(counts.values()))
                }))
            })
        })
        .collect()
}

/// Source files read once each, for the lines' text.
struct Sources<'r> {
    root: &'r Path,
    files: HashMap<String, Option<Vec<String>>>,
}

impl<'r> Sources<'r> {
    fn new(root: &'r Path) -> Self {
        Sources { root, files: HashMap::new() }
    }

    /// Line `line` of `file` (relative to the root, or as nvdisasm named it), trimmed; `None`
    /// where it cannot be read.
    fn line(&mut self, file: &str, line: u32) -> Option<String> {
        let root = self.root;
        let lines = self.files.entry(file.to_string()).or_insert_with(|| {
            let text = std::fs::read_to_string(root.join(file)).ok()?;
            Some(text.lines().map(str::to_string).collect())
        });
        let text = lines.as_ref()?.get(usize::try_from(line).ok()?.checked_sub(1)?)?.trim();
        (!text.is_empty()).then(|| text.to_string())
    }
}

/// The text block under a kernel: the peak against ptxas's allocation and the budget, the
/// occupancy at the peak, the top [`SHOWN`] lines, and with `--spills` each line's spill code
/// beside its live count (a line at the allocation is where the registers ran out: its values
/// that do not fit are the spills). For a kernel cut by its budget, the lines above it without
/// the contract.
pub fn block(out: &mut impl Write, p: &Pressure, spills: Option<&SpillsByLine>) -> io::Result<()> {
    if let Some(why) = &p.unavailable {
        return writeln!(out, "  live registers: unknown ({why})");
    }
    let budget = p.budget.map_or_else(String::new, |b| format!(", a budget of {b}"));
    writeln!(
        out,
        "  live registers (nvdisasm {}, after each instruction): peak {} of the {} allocated{budget}; {} predicates, {} uniform",
        p.nvdisasm, p.peak.gpr, p.allocated, p.peak.pred, p.peak.ugpr
    )?;
    if let Some(a) = &p.at_peak {
        let blocks = if a.active_blocks == 1 { "block" } else { "blocks" };
        writeln!(
            out,
            "  with the peak as the allocation: {} {blocks}/SM, {} warps ({:.1}%)",
            a.active_blocks, a.active_warps, a.percent
        )?;
    }
    if p.lines.is_empty() && p.unattributed > 0 {
        // Counts without lines: the line table nvdisasm printed is not one this reads.
        writeln!(
            out,
            "    no source line for any of its {} instructions (nvdisasm -gi printed no line comments this reads)",
            p.unattributed
        )?;
    }
    lines(out, &p.lines, spills)?;
    if let (Some(u), Some(budget)) = (&p.unbounded, p.budget) {
        writeln!(
            out,
            "  without its contract: {} allocated, peak {} live; {} lines above the budget of {budget} (where it spills):",
            u.allocated,
            u.peak.gpr,
            u.over_budget.len()
        )?;
        lines(out, &u.over_budget, spills)?;
    }
    Ok(())
}

/// The top [`SHOWN`] of `all`, each `file:line  N live  (M instructions)`, the spill code on it
/// when `spills` has the line, its text, and its inline frames on the next line.
fn lines(out: &mut impl Write, all: &[PressureLine], spills: Option<&SpillsByLine>) -> io::Result<()> {
    let shown = &all[..all.len().min(SHOWN)];
    let place: Vec<String> = shown.iter().map(|l| format!("{}:{}", l.file, l.line)).collect();
    let width = place.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    for (l, at) in shown.iter().zip(&place) {
        let mut row = format!("    {at:<width$}  {:>3} live  {:>5} instructions", l.live.gpr, l.instructions);
        let spilled = spills.and_then(|s| s.lines.iter().find(|x| x.file == l.file && x.line == l.line));
        if let Some(x) = spilled {
            row.push_str(&format!("  {} spill stores, {} loads here", x.count.stores, x.count.loads));
        }
        if let Some(text) = &l.text {
            row.push_str("  ");
            row.push_str(text);
        }
        writeln!(out, "{}", crate::words::clip(&row, WIDTH))?;
        if !l.inlined_at.is_empty() {
            let frames: Vec<String> = l.inlined_at.iter().map(|f| format!("{}:{}", f.file, f.line)).collect();
            let row = format!("    {:width$}  inlined at {}", "", frames.join(" ← "));
            writeln!(out, "{}", crate::words::clip(&row, WIDTH))?;
        }
    }
    if all.len() > SHOWN {
        writeln!(out, "    … {} more lines (--format json lists them all)", all.len() - SHOWN)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pressure(lines: Vec<PressureLine>, unattributed: u32) -> Pressure {
        Pressure {
            nvdisasm: "13.5.37".into(),
            unavailable: None,
            peak: LiveCount { gpr: 9, pred: 1, ugpr: 2 },
            allocated: 12,
            budget: None,
            at_peak: None,
            lines,
            unattributed,
            unbounded: None,
        }
    }

    /// Counts without any source line are said to be so, never shown as a kernel without lines;
    /// a record without counts says why and nothing else.
    #[test]
    fn counts_without_lines_and_records_without_counts_say_so() {
        let mut out = Vec::new();
        block(&mut out, &pressure(Vec::new(), 40), None).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("peak 9 of the 12 allocated"), "{text}");
        assert!(text.contains("no source line for any of its 40 instructions"), "{text}");
        let mut out = Vec::new();
        let none = Pressure { unavailable: Some("why".into()), ..pressure(Vec::new(), 0) };
        block(&mut out, &none, None).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "  live registers: unknown (why)\n");
    }

    /// A line's row stays within the summary's width, its text cut with `…`; its inline frames
    /// follow on a row of their own.
    #[test]
    fn a_rows_text_is_cut_to_the_width_and_its_frames_follow() {
        let long = PressureLine {
            file: "kernels/a.cuh".into(),
            line: 7,
            inlined_at: vec![launch_schema::report::SourceLine { file: "kernels/a.cu".into(), line: 3 }],
            text: Some("x".repeat(300)),
            live: LiveCount { gpr: 9, pred: 0, ugpr: 0 },
            instructions: 5,
        };
        let mut out = Vec::new();
        block(&mut out, &pressure(vec![long], 0), None).unwrap();
        let text = String::from_utf8(out).unwrap();
        let row = text.lines().find(|l| l.contains("kernels/a.cuh:7")).expect("the line's row");
        assert_eq!(row.chars().count(), WIDTH, "{row}");
        assert!(row.ends_with('…'));
        assert!(text.contains("inlined at kernels/a.cu:3"), "{text}");
    }
}

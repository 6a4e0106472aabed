//! `--spills`: where each spilling kernel's spill code is, by source line (`report --spills`,
//! the JSON field `spills_by_line`, and `check --spills`, whose spill findings then point at the
//! top line).
//!
//! Per kernel file × arch with a spilling kernel: the file is compiled again with line info and
//! disassembled (`crate::line_info`, cached in `OUT_DIR/launch/spills/`), and [`sass`] counts the
//! spill stores and loads (the `STL`/`LDL` nvdisasm marks as spill/refill) under each line.

pub(crate) mod sass;

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use launch::Arch;
use launch_schema::report::SpillsByLine;

use crate::error::Error;
use crate::line_info::{per_file, Job};
use crate::records::{PackageKernels, Row};

/// Bumped when what is cached changes shape or meaning.
const FORMAT: &str = "spills-2";

/// Lines shown per kernel × arch in the text report (JSON lists every line).
pub const SHOWN: usize = 5;

/// The spill lines found, per package, kernel symbol and arch.
#[derive(Debug, Default)]
pub struct Lines(HashMap<(String, String, Arch), SpillsByLine>);

impl Lines {
    /// Those of `r`'s kernel × arch; `None` when it does not spill or was not looked at.
    pub fn of(&self, r: &Row) -> Option<&SpillsByLine> {
        self.0.get(&(r.id.package.clone(), r.id.name.clone(), r.arch()))
    }
}

/// One cached file × arch: its functions' spill lines.
type Cached = BTreeMap<String, SpillsByLine>;

/// Finds the spill lines of every row in `rows` that spills.
///
/// # Errors
/// No nvdisasm (exit 3, with every place looked at), or a compile or disassembly that fails.
pub fn collect<'a>(packages: &[PackageKernels], rows: impl IntoIterator<Item = &'a Row>) -> Result<Lines, Error> {
    let spilling = rows.into_iter().filter(|r| r.report.resources.spill_stores + r.report.resources.spill_loads > 0);
    per_file(packages, spilling, "spills", |job| file_spills(&job)).map(Lines)
}

/// The spill lines of every function of the job's file on its arch.
fn file_spills(job: &Job<'_>) -> Result<Cached, Error> {
    job.cached(FORMAT, "spills", || {
        let compiled = job.compile()?;
        let text = job.disassemble(&compiled.cubin)?;
        let cached: Cached = sass::parse(&text, job.root)
            .into_iter()
            .map(|(symbol, f)| {
                let s = SpillsByLine {
                    lines: f.sorted(),
                    unattributed: f.unattributed,
                    total: f.total(),
                    nvdisasm: job.tool.version.clone(),
                };
                (symbol, s)
            })
            .collect();
        Ok(cached)
    })
}

/// The text block under a spilling kernel: what is counted, the total against ptxas's bytes, the
/// top [`SHOWN`] lines.
pub fn block(out: &mut impl Write, r: &Row, s: &SpillsByLine) -> io::Result<()> {
    let res = &r.report.resources;
    let t = &s.total;
    let agrees = t.store_bytes == res.spill_stores && t.load_bytes == res.spill_loads;
    writeln!(
        out,
        "  spills by line (STL/LDL that nvdisasm {} marks as spill code; local arrays not counted): {} stores, {} loads = {} + {} bytes{}",
        s.nvdisasm,
        t.stores,
        t.loads,
        t.store_bytes,
        t.load_bytes,
        if agrees { ", as ptxas says".to_string() } else { format!("; ptxas says {} + {}", res.spill_stores, res.spill_loads) }
    )?;
    let shown = &s.lines[..s.lines.len().min(SHOWN)];
    let place: Vec<String> = shown.iter().map(|l| format!("{}:{}", l.file, l.line)).collect();
    let width = place.iter().map(|p| p.chars().count()).max().unwrap_or(0);
    let num = |n: u32| n.to_string().len();
    let bytes = |c: &launch_schema::report::SpillCount| c.store_bytes + c.load_bytes;
    let (ws, wl, wb) = shown.iter().fold((0, 0, 0), |(a, b, c), l| {
        (a.max(num(l.count.stores)), b.max(num(l.count.loads)), c.max(num(bytes(&l.count))))
    });
    for (l, p) in shown.iter().zip(&place) {
        let c = &l.count;
        writeln!(out, "    {p:<width$}  {:>ws$} stores  {:>wl$} loads  {:>wb$} bytes", c.stores, c.loads, bytes(c))?;
    }
    if s.lines.len() > SHOWN {
        writeln!(out, "    … {} more lines (--format json lists them all)", s.lines.len() - SHOWN)?;
    }
    let u = &s.unattributed;
    if u.instructions() > 0 {
        writeln!(out, "    no source line: {} stores, {} loads", u.stores, u.loads)?;
    }
    Ok(())
}

/// The top line of `s` as a location: `(file, line, absolute path)`.
pub fn top_line(root: &Path, s: &SpillsByLine) -> Option<(String, u32, PathBuf)> {
    let l = s.lines.first()?;
    Some((l.file.clone(), l.line, root.join(&l.file)))
}

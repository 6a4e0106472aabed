//! `--pressure`: where each kernel's registers are live, by source line (`report --pressure`, the
//! JSON field `pressure`).
//!
//! Per kernel file × arch shown: the file is compiled again with line info, as for `--spills`
//! (`launch_engine::tooling::lineinfo`: the build's options plus `-lineinfo`, the same
//! instructions), and nvdisasm reads the cubin twice — `-lrm count` for the live registers after
//! each instruction, `-g` for each instruction's source line — and [`parse`] joins the two on the
//! offset. The result is cached in the package's `OUT_DIR/launch/pressure/`, keyed like the spill
//! lines, so a second run compiles and disassembles nothing. Only when asked: a plain build or
//! report never pays for it.

mod parse;

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::Path;

use anyhow::anyhow;
use launch::Arch;
use launch_engine::tooling::lineinfo::{nvdisasm, Recompiler};
use launch_schema::report::{Pressure, SpillsByLine};

use crate::error::Error;
use crate::records::{PackageKernels, Row};

/// Bumped when what is cached changes shape or meaning.
const FORMAT: &str = "pressure-1";

/// Lines shown per kernel × arch in the text report (JSON lists every line).
pub const SHOWN: usize = 5;

/// The pressure found, per package, kernel symbol and arch (`allocated` still 0: it is the row's).
#[derive(Debug, Default)]
pub struct Found(HashMap<(String, String, Arch), Pressure>);

impl Found {
    /// Those of `r`'s kernel × arch, with ptxas's allocation; `None` when it was not looked at.
    pub fn of(&self, r: &Row) -> Option<Pressure> {
        let p = self.0.get(&(r.id.package.clone(), r.id.name.clone(), r.arch()))?;
        Some(Pressure { allocated: r.report.resources.registers, ..p.clone() })
    }
}

/// Finds the pressure of every row in `rows`.
///
/// # Errors
/// No nvdisasm (exit 3, with every place looked at), or a compile or disassembly that fails.
pub fn collect<'a>(packages: &[PackageKernels], rows: impl IntoIterator<Item = &'a Row>) -> Result<Found, Error> {
    crate::spills::per_file(packages, rows, "pressure", |job| {
        let cached = file_pressure(job.recompiler, job.tool, job.dir, job.root, job.file, job.arch)?;
        let unavailable = |why: &str| empty(&job.tool.version, Some(why.to_string()));
        let mut found = match cached {
            Cached::Counts(functions) => functions,
            Cached::Unavailable(why) => job.kernels.iter().map(|k| (k.clone(), unavailable(&why))).collect(),
        };
        // A kernel nvdisasm printed no counts for is said to be so, never left out.
        for k in job.kernels {
            found.entry(k.clone()).or_insert_with(|| unavailable("nvdisasm printed no live registers for this kernel"));
        }
        Ok(found)
    })
    .map(Found)
}

/// What one file × arch gave, as cached: every function's counts, or why nvdisasm gave none for
/// the whole cubin.
#[derive(serde::Serialize, serde::Deserialize)]
enum Cached {
    Counts(BTreeMap<String, Pressure>),
    Unavailable(String),
}

/// The pressure of every function of `file` on `arch`, from the cache or computed now.
fn file_pressure(
    recompiler: &Recompiler,
    tool: &nvdisasm::Located,
    dir: &Path,
    root: &Path,
    file: &str,
    arch: Arch,
) -> Result<Cached, Error> {
    let failed = |what: &str| format!("{what} {file} for {arch} with line info");
    let compile_key = recompiler.key(file, arch).map_err(|e| Error::Failure(anyhow::Error::new(e)))?;
    let entry = dir.join(format!("{}.json", crate::spills::cache_key(FORMAT, &compile_key, tool)));
    if let Some(cached) = std::fs::read(&entry).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
        return Ok(cached);
    }
    eprintln!("pressure: compiling {file} for {arch} with line info and disassembling it twice (cached afterwards)");
    let compiled = recompiler
        .compile(file, arch, true)
        .map_err(|e| Error::Failure(anyhow::Error::new(e).context(failed("compiling"))))?;
    let (work, timeout) = (recompiler.work_dir(), recompiler.timeout());
    let disassembly =
        |e: launch_engine::error::Error| Error::Failure(anyhow::Error::new(e).context(failed("disassembling")));
    let lines = nvdisasm::disassemble(&tool.path, &compiled.cubin, &work, timeout).map_err(disassembly)?;
    let live = nvdisasm::life_ranges(&tool.path, &compiled.cubin, &work, timeout).map_err(disassembly)?;
    let lines = parse::lines(&lines, root);
    let cached = match live {
        Err(why) => Cached::Unavailable(why),
        Ok(text) => Cached::Counts(
            parse::live(&text)
                .iter()
                .map(|(symbol, live)| {
                    let j = parse::join(live, lines.get(symbol));
                    let counts = Pressure {
                        peak: j.peak,
                        lines: j.lines,
                        unattributed: j.unattributed,
                        ..empty(&tool.version, None)
                    };
                    (symbol.clone(), counts)
                })
                .collect(),
        ),
    };
    let bytes = serde_json::to_vec(&cached).map_err(|e| Error::Failure(anyhow!(e)))?;
    launch_engine::tooling::write_if_changed(&entry, &bytes)
        .map_err(|e| Error::Failure(anyhow::Error::new(e).context(format!("writing {}", entry.display()))))?;
    Ok(cached)
}

/// A record with no counts (yet): `unavailable` says why, if anything is.
fn empty(nvdisasm: &str, unavailable: Option<String>) -> Pressure {
    let peak = Default::default();
    Pressure { nvdisasm: nvdisasm.into(), unavailable, peak, allocated: 0, lines: Vec::new(), unattributed: 0 }
}

/// The text block under a kernel: the peak against ptxas's allocation, the top [`SHOWN`] lines,
/// and with `--spills` each line's spill code beside its live count (a line at the allocation is
/// where the registers ran out: its values that do not fit are the spills).
pub fn block(out: &mut impl Write, p: &Pressure, spills: Option<&SpillsByLine>) -> io::Result<()> {
    if let Some(why) = &p.unavailable {
        return writeln!(out, "  live registers: unknown ({why})");
    }
    writeln!(
        out,
        "  live registers (nvdisasm {}, after each instruction): peak {} of the {} allocated, {} predicates, {} uniform",
        p.nvdisasm, p.peak.gpr, p.allocated, p.peak.pred, p.peak.ugpr
    )?;
    let shown = &p.lines[..p.lines.len().min(SHOWN)];
    let place: Vec<String> = shown.iter().map(|l| format!("{}:{}", l.file, l.line)).collect();
    let width = place.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    for (l, at) in shown.iter().zip(&place) {
        write!(out, "    {at:<width$}  {:>3} live  ({} instructions)", l.live.gpr, l.instructions)?;
        let spilled = spills.and_then(|s| s.lines.iter().find(|x| x.file == l.file && x.line == l.line));
        match spilled {
            Some(x) => writeln!(out, "  {} spill stores, {} loads here", x.count.stores, x.count.loads)?,
            None => writeln!(out)?,
        }
    }
    if p.lines.len() > SHOWN {
        writeln!(out, "    … {} more lines (--format json lists them all)", p.lines.len() - SHOWN)?;
    }
    Ok(())
}

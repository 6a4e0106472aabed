//! `--spills`: where each spilling kernel's spill code is, by source line (`report --spills`,
//! the JSON field `spills_by_line`, and `check --spills`, whose spill findings then point at the
//! top line).
//!
//! Per kernel file × arch with a spilling kernel: the file is compiled again with line info
//! (`launch_engine::tooling::lineinfo`, the build's options plus `-lineinfo`; the build itself never
//! pays for it), `nvdisasm -g -c` reads the cubin, and [`sass`] counts the spill stores and loads
//! (the `STL`/`LDL` nvdisasm marks as spill/refill) under each line. The result is cached in the
//! package's `OUT_DIR/launch/spills/`, keyed by a hash of everything the compile reads (source,
//! headers' contents, options, contracts, toolchain) and the nvdisasm file, so a second run
//! compiles nothing. Files are done one at a time: the pass is on request, and light on CPU.

pub(crate) mod sass;

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use launch::Arch;
use launch_engine::tooling::lineinfo::{nvdisasm, Recompiler};
use launch_engine::tooling::Env;
use launch_schema::report::SpillsByLine;
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::records::{PackageKernels, Row};

/// Bumped when what is cached changes shape or meaning.
const FORMAT: &str = "spills-1";

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
    per_file(packages, spilling, "spills", |job| {
        file_spills(job.recompiler, job.tool, job.dir, job.root, job.file, job.arch)
    })
    .map(Lines)
}

/// One file × arch of a line-info pass: what compiles and disassembles it, and where its
/// results are cached.
pub(crate) struct Job<'a> {
    pub recompiler: &'a Recompiler,
    pub tool: &'a nvdisasm::Located,
    /// `OUT_DIR/launch/<pass>`.
    pub dir: &'a Path,
    /// The package root.
    pub root: &'a Path,
    pub file: &'a str,
    pub arch: Arch,
    /// The symbols of the rows of this file × arch.
    pub kernels: &'a [String],
}

/// Runs `each` on every file × arch of `rows` (per package, in a stable order; one recompiler
/// and nvdisasm per package, results under `OUT_DIR/launch/<pass>`), and keys what it finds per
/// function by package, symbol and arch. `--spills` and `--pressure` both.
///
/// # Errors
/// No nvdisasm (exit 3, with every place looked at), or `each`'s.
pub(crate) fn per_file<'a, T>(
    packages: &[PackageKernels],
    rows: impl IntoIterator<Item = &'a Row>,
    pass: &str,
    mut each: impl FnMut(Job<'_>) -> Result<BTreeMap<String, T>, Error>,
) -> Result<HashMap<(String, String, Arch), T>, Error> {
    let env = Env::cli();
    let mut wanted: BTreeMap<&str, BTreeMap<(String, Arch), Vec<String>>> = BTreeMap::new();
    for r in rows {
        let kernels = wanted.entry(r.id.package.as_str()).or_default().entry((r.id.file.clone(), r.arch()));
        kernels.or_default().push(r.id.name.clone());
    }
    let mut found = HashMap::new();
    for p in packages {
        let Some(jobs) = wanted.get(p.package.as_str()) else { continue };
        let dir = p.launch_dir.join(pass);
        let recompiler = Recompiler::new(&env, &p.config, &dir.join("work"))
            .map_err(|e| Error::Failure(anyhow::Error::new(e).context("preparing the line-info compile")))?;
        let tool = nvdisasm::locate(&env, recompiler.toolchain(), recompiler.timeout())
            .map_err(|e| Error::NoToolchain(e.into()))?;
        for ((file, arch), kernels) in jobs {
            let root = p.config.root();
            let job = Job { recompiler: &recompiler, tool: &tool, dir: &dir, root, file, arch: *arch, kernels };
            for (symbol, value) in each(job)? {
                found.insert((p.package.clone(), symbol, *arch), value);
            }
        }
    }
    Ok(found)
}

/// The spill lines of every function of `file` on `arch`, from the cache or compiled now.
fn file_spills(
    recompiler: &Recompiler,
    tool: &nvdisasm::Located,
    dir: &Path,
    root: &Path,
    file: &str,
    arch: Arch,
) -> Result<Cached, Error> {
    let failed = |what: &str| format!("{what} {file} for {arch} with line info");
    let compile_key = recompiler.key(file, arch).map_err(|e| Error::Failure(anyhow::Error::new(e)))?;
    let entry = dir.join(format!("{}.json", cache_key(FORMAT, &compile_key, tool)));
    // A damaged or unreadable entry is a miss: it is computed again and replaced.
    if let Some(cached) = std::fs::read(&entry).ok().and_then(|b| serde_json::from_slice::<Cached>(&b).ok()) {
        return Ok(cached);
    }
    eprintln!("spills: compiling {file} for {arch} with line info and disassembling it (cached afterwards)");
    let compiled = recompiler
        .compile(file, arch, true)
        .map_err(|e| Error::Failure(anyhow::Error::new(e).context(failed("compiling"))))?;
    let text = nvdisasm::disassemble(&tool.path, &compiled.cubin, &recompiler.work_dir(), recompiler.timeout())
        .map_err(|e| Error::Failure(anyhow::Error::new(e).context(failed("disassembling"))))?;
    let cached: Cached = sass::parse(&text, root)
        .into_iter()
        .map(|(symbol, f)| {
            let s = SpillsByLine {
                lines: f.sorted(),
                unattributed: f.unattributed,
                total: f.total(),
                nvdisasm: tool.version.clone(),
            };
            (symbol, s)
        })
        .collect();
    let bytes = serde_json::to_vec(&cached).map_err(|e| Error::Failure(anyhow!(e)))?;
    launch_engine::tooling::write_if_changed(&entry, &bytes)
        .with_context(|| format!("writing the spill-line cache entry {}", entry.display()))
        .map_err(Error::Failure)?;
    Ok(cached)
}

/// A cache entry's name: the line-info compile's key, the nvdisasm (path, version, size,
/// modified time: another or a reinstalled nvdisasm misses) and the entry's `format` ([`FORMAT`],
/// `--pressure`'s own).
pub(crate) fn cache_key(format: &str, compile_key: &str, tool: &nvdisasm::Located) -> String {
    let mut h = Sha256::new();
    for part in [format, compile_key, &tool.path.display().to_string(), &tool.version] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    if let Ok(m) = std::fs::metadata(&tool.path) {
        h.update(m.len().to_le_bytes());
        let mtime = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        h.update(mtime.map_or(0, |d| d.as_nanos()).to_le_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
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

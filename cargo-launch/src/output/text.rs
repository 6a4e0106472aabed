//! The text form of the report.

use std::io::{self, Write};

use launch::{Arch, Contract, Resources};
use launch_analysis::ThreadsFrom;

use crate::output::names::{self, Short};
use crate::records::PackageKernels;
use crate::records::Row;
use crate::select::Filter;
use crate::words::thousands;

/// A contract as its source spells it, or `unbounded`.
fn contract(c: Option<&Contract>) -> String {
    c.map_or_else(|| "unbounded".to_string(), Contract::to_string)
}

/// What the text report shows: every record of the selected arches (for the header's counts)
/// and those `--kernel`/`--file` chose, in `--sort` order.
pub(crate) struct View<'a> {
    /// The packages built.
    pub(crate) packages: &'a [PackageKernels],
    /// Every record of the selected arches.
    pub(crate) all: &'a [Row],
    /// The records to print.
    pub(crate) shown: &'a [&'a Row],
    /// `--arch` (sorted; empty: every arch the crate lists).
    pub(crate) arches: &'a [Arch],
    /// `--kernel`/`--file`.
    pub(crate) filter: &'a Filter,
    /// `--spills`: the spill lines found.
    pub(crate) spills: Option<&'a crate::spills::Lines>,
    /// `--pressure`: the live registers found.
    pub(crate) pressure: Option<&'a crate::pressure::Found>,
}

impl View<'_> {
    /// The arches of `p` the report covers.
    fn arches_of(&self, p: &PackageKernels) -> Vec<Arch> {
        let mut a: Vec<Arch> =
            p.manifest.arches.iter().copied().filter(|a| self.arches.is_empty() || self.arches.contains(a)).collect();
        a.sort();
        a
    }
}

/// The package's header: kernels and the kernel × arch records actually present (a kernel that
/// exists on some arches only is counted where it exists), what is shown, the toolchain.
pub(crate) fn header(out: &mut impl Write, view: &View, p: &PackageKernels) -> io::Result<()> {
    let m = &p.manifest;
    let arches = view.arches_of(p);
    let names: Vec<String> = arches.iter().map(|a| a.to_string()).collect();
    let recs: Vec<&Row> = view.all.iter().filter(|r| r.id.package == p.package).collect();
    let kernels = m.kernels.len();
    if recs.len() == kernels * arches.len() {
        writeln!(out, "{}: {kernels} kernels × {} arches ({})", p.package, arches.len(), names.join(", "))?;
    } else {
        let per_arch: Vec<String> =
            arches.iter().map(|a| format!("{a}: {}", recs.iter().filter(|r| r.arch() == *a).count())).collect();
        writeln!(
            out,
            "{}: {kernels} kernels, {} kernel × arch records ({})",
            p.package,
            thousands(recs.len()),
            per_arch.join(", ")
        )?;
    }
    if view.filter.is_active() {
        let shown = view.shown.iter().filter(|r| r.id.package == p.package).count();
        writeln!(
            out,
            "showing {} of {} records ({})",
            thousands(shown),
            thousands(recs.len()),
            view.filter.describe()
        )?;
    }
    writeln!(out, "toolchain: NVRTC {}, ptxas {}", m.toolchain.compilers.nvrtc, m.toolchain.compilers.ptxas)?;
    if let Some(line) = kernel_sources(p) {
        writeln!(out, "{line}")?;
    }
    host_files(out, m)?;
    match crate::compat_check::header_line(p) {
        Some(line) => writeln!(out, "{line}"),
        None => Ok(()),
    }
}

/// `kernel jobs: 4 (1 compiled, 1 from the local cache, 2 from the remote cache s3://b/p)`, from the
/// last build's `build-stats.json`, where a remote kernel cache is configured (without one, every
/// job that did not compile came from the local folder, and the header stays as it was).
fn kernel_sources(p: &PackageKernels) -> Option<String> {
    let text = std::fs::read_to_string(p.launch_dir.join("build-stats.json")).ok()?;
    let stats = launch_schema::stats::BuildStats::from_json(&text).ok()?;
    let remote = stats.remote.as_ref()?;
    let local = stats.cached.saturating_sub(stats.remote_hits);
    let failed = if remote.failed { ", unavailable during the build" } else { "" };
    Some(format!(
        "kernel jobs: {} ({} compiled, {local} from the local cache, {} from the remote cache {}{failed})",
        stats.jobs, stats.compiled, stats.remote_hits, remote.url
    ))
}

/// The `host` files (their kernels are in the records like the others'): one line each, or, for
/// files compiled and linked alike, one line for all and their names wrapped within
/// [`names::LINE_WIDTH`] (a folder of host launchers has dozens).
fn host_files(out: &mut impl Write, m: &launch_schema::manifest::Manifest) -> io::Result<()> {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for h in &m.host {
        let linked = h.library.as_ref().map(|l| format!(", linked into lib{l}.a")).unwrap_or_default();
        let how = format!("{}{linked}", h.compiler);
        match groups.iter_mut().find(|(g, _)| *g == how) {
            Some((_, files)) => files.push(&h.file),
            None => groups.push((how, vec![&h.file])),
        }
    }
    for (how, files) in groups {
        if let [file] = files.as_slice() {
            writeln!(out, "host file {file}: {how}")?;
            continue;
        }
        writeln!(out, "host files ({}): {how}:", files.len())?;
        let mut line = String::new();
        for f in files {
            if !line.is_empty() && line.chars().count() + f.chars().count() + 2 > names::LINE_WIDTH {
                writeln!(out, "{line},")?;
                line.clear();
            }
            line.push_str(if line.is_empty() { "  " } else { ", " });
            line.push_str(f);
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Kernels of `p` (those the filter selects) that are absent on some of the report's arches, named
/// as `short` prints them.
fn not_compiled(out: &mut impl Write, view: &View, p: &PackageKernels, short: &Short) -> io::Result<()> {
    let arches = view.arches_of(p);
    for k in &p.manifest.kernels {
        if !view.filter.matches_kernel(&k.display_name, &k.qualified, &k.file, Some(&p.config.kernel_dir)) {
            continue;
        }
        // Each reason once, with the arches it applies to (manifests of older builds carry no
        // reasons: the PTX lacking the kernel was the one cause then).
        let mut reasons: Vec<(String, Vec<String>)> = Vec::new();
        for a in arches.iter().filter(|a| !k.arches.iter().any(|ka| ka.arch == **a)) {
            let why = k.missing.iter().find(|m| m.arch == *a).map_or("absent from the PTX", |m| m.reason.as_str());
            match reasons.iter_mut().find(|(r, _)| r == why) {
                Some((_, list)) => list.push(a.to_string()),
                None => reasons.push((why.to_string(), vec![a.to_string()])),
            }
        }
        for (why, list) in reasons {
            writeln!(out, "{}: not compiled for {}: {why}", short.of(&k.display_name), list.join(", "))?;
        }
    }
    Ok(())
}

/// The printed names of `p`'s kernels and of the records `shown` (tune variants among them), each
/// at most `width` characters.
fn short_names(p: &PackageKernels, shown: &[&Row], width: usize) -> Short {
    let kernels = p.manifest.kernels.iter().map(|k| k.display_name.as_str());
    let rows = shown.iter().filter(|r| r.id.package == p.package).map(|r| r.id.display_name.as_str());
    Short::new(kernels.chain(rows), width)
}

/// The kernel column's width: what the other columns leave of [`names::LINE_WIDTH`], between
/// [`names::KERNEL_WIDTH_MIN`] and [`names::KERNEL_WIDTH`].
fn kernel_width(head: &[&str], rows: &[Vec<String>]) -> usize {
    let others: usize = (1..head.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).chain([head[c].chars().count()]).max().unwrap_or(0) + 2)
        .sum();
    names::LINE_WIDTH.saturating_sub(others).clamp(names::KERNEL_WIDTH_MIN, names::KERNEL_WIDTH)
}

/// The last column's `file:line` cells shortened where, with the narrowest kernel column, the
/// table would be wider than [`names::LINE_WIDTH`] (deep kernel folders make long paths, and a
/// wide `limited by` column leaves little room): first to `…/name.cu:LINE`, then cut in the
/// middle. `--detailed` and the JSON keep the paths whole.
fn fit_files(head: &[&str], rows: &mut [Vec<String>]) {
    let last = head.len() - 1;
    let middle: usize = (1..last)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).chain([head[c].chars().count()]).max().unwrap_or(0) + 2)
        .sum();
    // The kernel column and the two spaces after it, the middle columns with theirs, this one.
    let room = names::LINE_WIDTH.saturating_sub(names::KERNEL_WIDTH_MIN + 2 + middle).max(head[last].len());
    for r in rows {
        if r[last].chars().count() > room {
            let named = r[last].rsplit_once('/').map_or_else(|| r[last].clone(), |(_, name)| format!("…/{name}"));
            r[last] = names::fit(&named, room);
        }
    }
}

/// The compact report's resource columns, by the field table ([`launch::kernel::Column`]): each
/// header once, left to right.
fn resource_columns() -> Vec<&'static str> {
    let mut columns: Vec<launch::kernel::Column> = Vec::new();
    for c in Resources::FIELDS.iter().filter_map(|f| f.column) {
        if !columns.iter().any(|d| d.header == c.header) {
            columns.push(c);
        }
    }
    columns.sort_by_key(|c| c.at);
    columns.into_iter().map(|c| c.header).collect()
}

/// The cell of column `header` for `res`: the sum of its fields, `-` where ptxas printed none.
fn resource_cell(res: &Resources, header: &str) -> String {
    let values: Vec<Option<u32>> = Resources::FIELDS
        .iter()
        .filter(|f| f.column.is_some_and(|c| c.header == header))
        .map(|f| (f.get)(res))
        .collect();
    if values.iter().all(Option::is_none) {
        return "-".to_string();
    }
    values.into_iter().flatten().fold(0u32, u32::saturating_add).to_string()
}

/// One row of the compact report (the kernel's full name, which [`compact`] shortens).
fn row(r: &Row) -> Vec<String> {
    let (res, o) = (&r.report.resources, &r.report.occupancy);
    let (occ, limiter) = match &r.report.launch_failure {
        Some(_) => ("fails".to_string(), "cannot launch".to_string()),
        None => (format!("{:.1}%", o.percent), o.limiters.iter().map(|l| l.name()).collect::<Vec<_>>().join("+")),
    };
    let threads = match o.threads_from {
        ThreadsFrom::Contract => o.threads.to_string(),
        ThreadsFrom::Host => format!("{}*", o.threads),
    };
    let mut cells = vec![r.id.display_name.clone(), r.arch().to_string()];
    cells.extend(resource_columns().into_iter().map(|h| resource_cell(res, h)));
    cells.extend([threads, occ, limiter, r.report.largest_block.to_string(), r.location()]);
    cells
}

/// A text table: `head`, then `rows`, columns two spaces apart and as wide as their widest cell,
/// numbers (`right`) right-aligned, words left; the last column is not padded (no trailing
/// spaces).
pub(crate) fn table(head: &[&str], right: &[bool], rows: &[Vec<String>]) -> Vec<String> {
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut s = String::new();
        for (c, cell) in cells.iter().enumerate() {
            let pad = width[c].saturating_sub(cell.chars().count());
            if c > 0 {
                s.push_str("  ");
            }
            if right[c] {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            } else if c + 1 == cells.len() {
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            }
        }
        s
    };
    std::iter::once(line(head))
        .chain(rows.iter().map(|r| line(&r.iter().map(String::as_str).collect::<Vec<_>>())))
        .collect()
}

/// The compact report: a header per package, then one line per kernel × arch.
pub(crate) fn compact(out: &mut impl Write, view: &View) -> io::Result<()> {
    // The kernel and arch, the resources by the field table, then the launch.
    let resources = resource_columns();
    let head: Vec<&str> = ["kernel", "arch"]
        .into_iter()
        .chain(resources.iter().copied())
        .chain(["threads", "occupancy", "limited by", "largest", "file:line"])
        .collect();
    // Numbers are right-aligned, words left.
    let right: Vec<bool> = [false, false]
        .into_iter()
        .chain(resources.iter().map(|_| true))
        .chain([true, true, false, true, false])
        .collect();
    for (i, p) in view.packages.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        header(out, view, p)?;
        writeln!(out)?;
        let mut rows: Vec<Vec<String>> =
            view.shown.iter().filter(|r| r.id.package == p.package).map(|r| row(r)).collect();
        fit_files(&head, &mut rows);
        let short = short_names(p, view.shown, kernel_width(&head, &rows));
        for r in &mut rows {
            r[0] = short.of(&r[0]).to_string();
        }
        for line in table(&head, &right, &rows) {
            writeln!(out, "{line}")?;
        }
        for r in view.shown.iter().filter(|r| r.id.package == p.package) {
            let spills = view.spills.and_then(|l| l.of(r));
            let pressure = view.pressure.and_then(|f| f.of(r));
            if spills.is_some() || pressure.is_some() {
                writeln!(out, "{} {}:", short.of(&r.id.display_name), r.arch())?;
            }
            if let Some(s) = spills {
                crate::spills::block(out, r, s)?;
            }
            if let Some(p) = pressure {
                crate::pressure::block(out, &p, spills)?;
            }
        }
        not_compiled(out, view, p, &short)?;
        for w in &p.manifest.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    writeln!(
        out,
        // Two lines: within names::LINE_WIDTH like the table.
        "\nspill: spill store + load bytes; stack: bytes per thread; threads: the block size evaluated (* the host's,\n\
         no contract); largest: the largest block that launches. --detailed for the ptxas lines and the arithmetic."
    )
}

/// Writes the report for people.
pub(crate) fn text(out: &mut impl Write, view: &View) -> io::Result<()> {
    for p in view.packages {
        let m = &p.manifest;
        header(out, view, p)?;
        writeln!(out)?;
        let short = short_names(p, view.shown, names::KERNEL_WIDTH);
        for r in view.shown.iter().filter(|r| r.id.package == p.package) {
            detailed(out, r, &m.toolchain.compilers.ptxas, (view.spills, view.pressure), &short)?;
        }
        not_compiled(out, view, p, &short)?;
        for w in &m.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    Ok(())
}

/// One kernel × arch of the detailed report: a shortened name is followed by the full one.
fn detailed(
    out: &mut impl Write,
    r: &Row,
    ptxas: &str,
    (spills, pressure): (Option<&crate::spills::Lines>, Option<&crate::pressure::Found>),
    short: &Short,
) -> io::Result<()> {
    let a = &r.report;
    let c = a.contract.as_ref();
    let name = &r.id.display_name;
    writeln!(out, "{}  {}  {}  ptxas {ptxas}  {}", short.of(name), a.arch, contract(c), r.location())?;
    if short.shortened(name) {
        writeln!(out, "  full name: {name}")?;
    }
    // nvlink's line where a device link decided the numbers (`-rdc=true` host files), after ptxas's.
    let shown = |l: &&String| {
        l.contains("bytes stack frame")
            || l.contains(": Used ")
            || (l.starts_with("nvlink info") && l.contains(": used "))
    };
    for l in r.lines.iter().filter(shown) {
        writeln!(out, "  {l}")?;
    }
    let o = &a.occupancy;
    let why = match (o.threads_from, c) {
        (ThreadsFrom::Contract, _) => "",
        (ThreadsFrom::Host, None) => " (host block size; no contract)",
        (ThreadsFrom::Host, Some(_)) => " (host block size; the contract sets no thread count)",
    };
    match &a.launch_failure {
        Some(e) => writeln!(out, "  occupancy at {} threads{why}: cannot launch: {e}", o.threads)?,
        None => writeln!(
            out,
            "  occupancy at {} threads{why}: {} block{}/SM, {} of {} warps ({:.1}%), limited by {}",
            o.threads,
            o.active_blocks,
            if o.active_blocks == 1 { "" } else { "s" },
            o.active_warps,
            o.max_warps,
            o.percent,
            o.limiters
        )?,
    }
    if let Some(n) = &a.next_block {
        writeln!(out, "  next block: {}", crate::words::next_block(n, a.resources.registers))?;
    }
    if let Some(c) = c {
        writeln!(out, "  in the PTX: {}", c.directives())?;
    }
    if let Some(cap) = a.binding_register_cap() {
        writeln!(out, "  register cap from the contract: {cap} per thread; ptxas used {}", a.resources.registers)?;
    }
    if let Some(s) = &a.dynamic_stack {
        writeln!(out, "  warning: {s}")?;
    }
    for n in &a.notes {
        writeln!(out, "  warning: {n}")?;
    }
    write!(out, "  largest launchable block: {} threads", a.largest_block)?;
    match &a.fails_at {
        Some(f) => writeln!(out, "; at {} threads the launch fails: {}", f.threads, f.failure)?,
        None => writeln!(out)?,
    }
    if let Some(s) = spills.and_then(|l| l.of(r)) {
        crate::spills::block(out, r, s)?;
    }
    if let Some(p) = pressure.and_then(|f| f.of(r)) {
        crate::pressure::block(out, &p, spills.and_then(|l| l.of(r)))?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{rows, testing};
    use crate::select::{self, SortKey};

    fn render(p: &PackageKernels, filter: &Filter, sort: Option<SortKey>, detailed: bool) -> String {
        let all = rows(std::slice::from_ref(p), &[]).unwrap();
        let mut shown: Vec<&Row> =
            all.iter().filter(|r| filter.matches(r, Some(p.config.kernel_dir.as_path()))).collect();
        if let Some(k) = sort {
            select::sort(&mut shown, k);
        }
        let view = View {
            packages: std::slice::from_ref(p),
            all: &all,
            shown: &shown,
            arches: &[],
            filter,
            spills: None,
            pressure: None,
        };
        let mut out = Vec::new();
        if detailed {
            text(&mut out, &view).unwrap();
        } else {
            compact(&mut out, &view).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_compact_report_is_one_aligned_line_per_kernel_and_arch() {
        let dir = tempfile::tempdir().unwrap();
        let p = testing::package(dir.path(), 30, &["sm_90", "sm_80"], &[]);
        let out = render(&p, &Filter::default(), None, false);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "pkg: 30 kernels × 2 arches (sm_80, sm_90)");
        assert_eq!(
            lines[3],
            "kernel  arch   regs  spill  stack  threads  occupancy  limited by       largest  file:line"
        );
        assert_eq!(
            lines[4],
            "k00     sm_80    16      0      0     256*     100.0%  warps               1024  kernels/many.cu:10"
        );
        assert_eq!(
            lines[5],
            "k00     sm_90    16      0      0     256*     100.0%  warps               1024  kernels/many.cu:10"
        );
        let tie = lines.iter().find(|l| l.starts_with("k09     sm_90")).unwrap();
        assert!(tie.contains("  warps+registers  "), "every limiter of a tie: {tie}");
        let row = lines.iter().find(|l| l.starts_with("k06     sm_90")).unwrap();
        assert!(row.contains("    22      8      0"), "{row}");
        assert_eq!(lines.iter().filter(|l| l.starts_with('k') && l.contains("kernels/many.cu:")).count(), 60);
        assert!(lines.iter().all(|l| !l.ends_with(' ')), "no trailing spaces:\n{out}");
    }

    #[test]
    fn filters_and_sorting_pick_and_order_rows_and_the_header_says_how_many() {
        let dir = tempfile::tempdir().unwrap();
        let p = testing::package(dir.path(), 30, &["sm_80", "sm_90"], &[]);
        let filter = Filter { kernel: Some(select::parse_regex("^k0[0-2]$").unwrap()), file: None };
        let out = render(&p, &filter, Some(SortKey::Registers), false);
        assert!(out.contains("\nshowing 6 of 60 records (--kernel '^k0[0-2]$')\n"), "{out}");
        let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("k0")).collect();
        assert_eq!(rows.len(), 6);
        assert!(rows[0].starts_with("k02     sm_80    18"), "most registers first, then arch: {rows:?}");
        assert!(rows[5].starts_with("k00     sm_90"), "{rows:?}");
        // The qualified name matches too, and --file narrows to files.
        let filter = Filter { kernel: Some(select::parse_regex("many\\.cu::k29").unwrap()), file: None };
        assert_eq!(render(&p, &filter, None, false).lines().filter(|l| l.starts_with("k29")).count(), 2);
        let filter = Filter { kernel: None, file: Some(select::parse_glob("other*.cu").unwrap()) };
        assert!(render(&p, &filter, None, false).contains("showing 0 of 60 records (--file 'other*.cu')"));
        let out = render(&p, &Filter::default(), Some(SortKey::Spills), false);
        let rows: Vec<&str> = out.lines().filter(|l| l.contains("  sm_")).take(8).collect();
        assert!(rows.iter().all(|r| r.contains("  8      0")), "the 8 spilling records first: {rows:#?}");
    }

    /// Long paths and a wide `limited by` column: the `file:line` cells give way (`…/name.cu:LINE`
    /// where that fits, else cut in the middle) so no table line is wider than the bound.
    #[test]
    fn file_cells_give_way_to_keep_the_table_within_the_line_width() {
        const HEAD: [&str; 4] = ["kernel", "arch", "limited by", "file:line"];
        let row = |file: &str, limiter: &str| vec!["k".to_string(), "sm_90".into(), limiter.into(), file.into()];
        let mut rows =
            vec![row("kernels/deep/er/still/copy_blocks_kernel.cu:38", "warps"), row("kernels/a.cu:7", "registers")];
        super::fit_files(&HEAD, &mut rows);
        assert_eq!(rows[0][3], "kernels/deep/er/still/copy_blocks_kernel.cu:38", "room enough: unchanged");
        let wide = "x".repeat(59);
        let mut rows = vec![row("kernels/deep/copy_blocks_kernel.cu:38", &wide), row("kernels/a.cu:7", "warps")];
        super::fit_files(&HEAD, &mut rows);
        assert_eq!(rows[0][3], "…/copy_blocks_kernel.cu:38");
        assert_eq!(rows[1][3], "kernels/a.cu:7", "short paths stay whole");
        let wider = "x".repeat(72);
        let mut rows = vec![row("kernels/deep/copy_blocks_kernel.cu:38", &wider)];
        super::fit_files(&HEAD, &mut rows);
        let widest = names::KERNEL_WIDTH_MIN + 2 + (5 + 2) + (72 + 2) + rows[0][3].chars().count();
        assert!(widest <= names::LINE_WIDTH, "{widest}: {}", rows[0][3]);
        assert!(rows[0][3].starts_with('…') && rows[0][3].ends_with(".cu:38"), "{}", rows[0][3]);
    }

    #[test]
    fn long_names_are_shortened_within_the_line_width_and_stay_distinct() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = testing::package(dir.path(), 4, &["sm_80", "sm_90"], &[(3, "sm_80")]);
        let gemm = |i: usize| format!("void gemm<{i}, {}>(float*, int)", "cub::detail::Policy<int, 128>, ".repeat(30));
        for (i, k) in p.manifest.kernels.iter_mut().enumerate() {
            k.display_name = match i {
                0 | 1 => gemm(i),
                2 => format!("void ns::{}(int)", "very_long_function_name_".repeat(10)),
                _ => "void tmpl<8>(int*)".into(),
            };
            k.qualified = format!("kernels/many.cu::{}", k.display_name);
        }
        let out = render(&p, &Filter::default(), None, false);
        assert!(out.lines().all(|l| l.chars().count() <= names::LINE_WIDTH), "{out}");
        let rows: Vec<&str> = out.lines().filter(|l| l.contains("kernels/many.cu:")).collect();
        assert_eq!(rows.len(), 7, "{out}");
        let first =
            |l: &str| l.split("  ").map(str::trim).filter(|c| !c.is_empty()).take(2).collect::<Vec<_>>().join(" | ");
        assert_eq!(first(rows[0]), "gemm<0, …> | sm_80", "{out}");
        assert_eq!(first(rows[2]), "gemm<1, …> | sm_80", "{out}");
        // What the other columns leave (32 characters here): the start and the end.
        assert_eq!(first(rows[4]), "ns::very_long_fu…_function_name_ | sm_80", "{out}");
        assert_eq!(first(rows[6]), "void tmpl<8>(int*) | sm_90", "a short name prints as it is: {out}");
        assert!(out.contains("\nvoid tmpl<8>(int*): not compiled for sm_80"), "{out}");
        // The detailed form shows the shortened name, then the full one.
        let out = render(&p, &Filter::default(), None, true);
        assert!(
            out.contains(&format!(
                "gemm<1, …>  sm_90  unbounded  ptxas 12.9.86  kernels/many.cu:11\n  full name: {}\n",
                gemm(1)
            )),
            "{out}"
        );
        assert!(out.contains("\nvoid tmpl<8>(int*)  sm_90  unbounded"), "{out}");
        assert!(!out.contains("full name: void tmpl"), "{out}");
    }

    #[test]
    fn the_header_counts_the_records_present_when_kernels_miss_arches() {
        let dir = tempfile::tempdir().unwrap();
        let p = testing::package(dir.path(), 3, &["sm_80", "sm_90"], &[(1, "sm_80")]);
        for detailed in [false, true] {
            let out = render(&p, &Filter::default(), None, detailed);
            assert!(out.starts_with("pkg: 3 kernels, 5 kernel × arch records (sm_80: 2, sm_90: 3)\n"), "{out}");
            assert!(out.contains("\nk01: not compiled for sm_80: absent from the PTX\n"), "{out}");
        }
    }
}

//! `cargo launch explore KERNEL`: one kernel under several launch contracts, per arch. The crate is
//! built with every arch's PTX kept (`cargo::Selection::build_with_all_ptx`: the kernel cache serves it, no
//! new NVRTC run), each contract is written into the kernel's PTX entry and assembled by ptxas
//! (launch-build's `tooling::variants`, through the build's kernel cache: a second run assembles
//! nothing; stderr says how many came from it), and each variant is analysed like a report record. The
//! grid and the frontier are `launch_analysis::{cliffs, frontier}`; `--plot` draws them
//! (`explore_plot`).

use std::io::Write;

use anyhow::Context;
use launch::occupancy::Limiters;
use launch::{Arch, Contract, ContractSource, Resources};
use launch_analysis::{self as analysis, cliffs, frontier, HostLaunch, KernelReport, ThreadsFrom};
use launch_engine::tooling::variants;
use launch_schema::explore::{ArchVariants, Document, Variant};
use launch_schema::manifest::{KernelArch, KernelEntry};
use launch_schema::report::Explained;

use crate::cargo::{self, Selection};
use crate::cli::{ExploreArgs, Format};
use crate::error::Error;
use crate::output::{explore_plot, names, svg, text};
use crate::records::{self, PackageKernels};
use crate::{toolchain, words};

/// Runs `cargo launch explore`.
pub(crate) fn run(args: &ExploreArgs) -> Result<(), Error> {
    let max_regs = MaxRegs::parse(&args.max_regs)?;
    // A plot that cannot be written fails before the build, not after it.
    if let Some(path) = &args.plot {
        svg::check_destination(path)?;
    }
    let selection = Selection::of(&args.packages)?;
    let pins = toolchain::ensure(args.no_setup, &selection)?;
    let arches = cargo::sorted(&args.arch);
    toolchain::refuse_untargetable(&arches, &pins)?;
    let packages = selection.build_with_all_ptx(&arches)?;
    let (p, k) = find(&packages, &args.kernel)?;
    let host = p.manifest.host_launch(k);
    let env = launch_engine::tooling::Env::cli();
    let tc = launch_engine::tooling::toolchain::discover_for(&env, &p.config.toolchain)
        .map_err(|e| Error::NoToolchain(e.into()))?;
    let mut cache = CacheCounts::default();
    let nvdisasm = if args.pressure { Some(crate::pressure::locate(&tc)?) } else { None };
    let mut doc = Document {
        schema: launch_schema::explore::VERSION,
        toolchain: p.manifest.toolchain.compilers.clone(),
        kernel: records::kernel_id(&p.package, k),
        nvdisasm: nvdisasm.as_ref().map(|(tool, _)| tool.version.clone()),
        arches: Vec::new(),
    };
    for ka in k.arches.iter().filter(|ka| arches.is_empty() || arches.contains(&ka.arch)) {
        let ptx_path = p.launch_dir.join(launch_engine::tooling::all_ptx_path(&k.file, ka.arch));
        let ptx = std::fs::read_to_string(&ptx_path)
            .with_context(|| format!("reading the PTX of {} for {}", k.file, ka.arch))?;
        let grid = grid(k, ka, host, args, &max_regs)?;
        let contracts: Vec<Option<Contract>> = grid.iter().skip(1).map(|(_, c)| *c).collect();
        let kernel = variants::PtxKernel { file: &k.file, arch: ka.arch, ptx: &ptx, entry: &k.name };
        let mut options = variants::Options::new(p.launch_dir.join("explore"));
        // As the build assembled the file: the crate's ptxas options, then its file tables'.
        options.ptxas_flags = (p.manifest.modules.iter())
            .find(|m| m.file == k.file)
            .map_or_else(|| p.config.ptxas_flags.clone(), |m| m.ptxas_flags.clone());
        // The cache the build just used, so a variant is assembled once, whoever asked first.
        options.cache = variants::KernelCache::open(&env, &p.launch_dir)?;
        let assemble = |contracts: &[Option<Contract>]| {
            variants::assemble_variants(&tc, &kernel, contracts, &options)
                .map_err(|e| Error::Failure(anyhow::anyhow!("{}: {e}", k.display_name)))
        };
        let assembled = assemble(&contracts)?;
        cache.add(assembled.cache);
        let mut arch = {
            // The current build's numbers are the embedded ones; the others are what ptxas said.
            let results = std::iter::once(Ok(ka.resources))
                .chain(assembled.variants.iter().map(|r| r.as_ref().map(|v| v.resources).map_err(|e| e.to_string())));
            arch_variants(ka.arch, host, &grid, results)?
        };
        if let Some(nvdisasm) = &nvdisasm {
            // The current build's cubin again: its PTX and contract give the build's bytes.
            let current = assemble(&[grid[0].1])?;
            cache.add(current.cache);
            let cubins =
                current.variants.iter().chain(&assembled.variants).map(|r| r.as_ref().ok().map(|v| &v.cubin[..]));
            live_peaks(&mut arch, cubins, nvdisasm, &k.name, &p.launch_dir.join("explore/pressure"))?;
        }
        doc.arches.push(arch);
    }
    if doc.arches.is_empty() {
        return Err(Error::Usage(anyhow::anyhow!(
            "{} is compiled for none of the requested arches; it is compiled for: {}",
            k.display_name,
            k.arches.iter().map(|a| a.arch.to_string()).collect::<Vec<_>>().join(", ")
        )));
    }
    // On stderr, so the table and the JSON are the same whether the cache was cold or not.
    eprintln!("{}", cache.line(&k.display_name));
    if let Some(path) = &args.plot {
        svg::write_file(path, &explore_plot::svg(&doc))?;
    }
    let mut out = crate::stdout::stdout();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &doc).context("writing JSON")?;
            writeln!(out).context("writing JSON")?;
        }
        Format::Text => text(&mut out, &doc).context("writing the table")?,
    }
    Ok(())
}

/// How the kernel cache served every arch's variants.
#[derive(Debug, Default)]
struct CacheCounts {
    /// The cache's folder; `None`: no cache (`LAUNCH_NO_CACHE`).
    dir: Option<std::path::PathBuf>,
    hits: usize,
    misses: usize,
    damaged: usize,
    store_failure: Option<String>,
}

impl CacheCounts {
    fn add(&mut self, u: variants::CacheUse) {
        self.dir = self.dir.take().or(u.dir);
        self.hits += u.hits;
        self.misses += u.misses;
        self.damaged += u.damaged;
        self.store_failure = self.store_failure.take().or(u.store_failure);
    }

    /// `explore: 24 variants of poly_eval: 24 from the kernel cache (DIR), 0 assembled by ptxas`.
    fn line(&self, kernel: &str) -> String {
        let total = self.hits + self.misses;
        let Some(dir) = &self.dir else {
            return format!(
                "explore: {total} variants of {kernel} assembled by ptxas (kernel cache off: LAUNCH_NO_CACHE)"
            );
        };
        let mut line = format!(
            "explore: {total} variants of {kernel}: {} from the kernel cache ({}), {} assembled by ptxas",
            self.hits,
            dir.display(),
            self.misses
        );
        if self.damaged > 0 {
            line.push_str(&format!("; {} damaged cache entries assembled again and replaced", self.damaged));
        }
        if let Some(failure) = &self.store_failure {
            line.push_str(&format!("; {failure}"));
        }
        line
    }
}

/// `--max-regs`: numbers, and whether `cliffs` was asked (the default without numbers).
#[derive(Debug, Default)]
struct MaxRegs {
    cliffs: bool,
    values: Vec<u32>,
}

impl MaxRegs {
    fn parse(list: &[String]) -> Result<MaxRegs, Error> {
        let mut m = MaxRegs { cliffs: list.is_empty(), values: Vec::new() };
        for v in list {
            if v == "cliffs" {
                m.cliffs = true;
            } else {
                let n = launch_engine::quantity::Quantity::MaxRegs
                    .parse(v)
                    .map_err(|e| Error::Usage(anyhow::anyhow!("--max-regs {v}: {e}; or `cliffs`")))?;
                m.values.push(n);
            }
        }
        Ok(m)
    }
}

/// The kernel named `name` in the packages, as every place that takes a kernel name reads it
/// (`launch::kernel::name`: symbol, demangled name, bare name, any of them after the file).
fn find<'a>(packages: &'a [PackageKernels], name: &str) -> Result<(&'a PackageKernels, &'a KernelEntry), Error> {
    let all: Vec<(&PackageKernels, &KernelEntry)> =
        packages.iter().flat_map(|p| p.manifest.kernels.iter().map(move |k| (p, k))).collect();
    let names = all.iter().map(|(_, k)| launch_engine::config::names_of(k));
    let hits: Vec<(&PackageKernels, &KernelEntry)> =
        launch::kernel::name::named(name, names).into_iter().map(|i| all[i]).collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => {
            let names: Vec<&str> =
                packages.iter().flat_map(|p| p.manifest.kernels.iter().map(|k| k.display_name.as_str())).collect();
            Err(Error::Usage(anyhow::anyhow!("no kernel named `{name}`; the kernels: {}", names.join(", "))))
        }
        many => Err(Error::Usage(anyhow::anyhow!(
            "`{name}` names {} kernels; name one as path/file.cu::name: {}",
            many.len(),
            many.iter().map(|(_, k)| k.qualified.as_str()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The variants to compare on one arch, the current build first: (origin, contract).
fn grid(
    k: &KernelEntry,
    ka: &KernelArch,
    host: HostLaunch,
    args: &ExploreArgs,
    max_regs: &MaxRegs,
) -> Result<Vec<(&'static str, Option<Contract>)>, Error> {
    let bounds = |threads: u32, min_blocks: Option<u32>, max_regs: Option<u32>| {
        Some(Contract {
            source: ContractSource::LaunchBounds,
            threads: Some(threads),
            min_blocks,
            max_regs,
            exact: false,
        })
    };
    // This arch's bounds: CUDA's own may differ per arch.
    let current = ka.contract_or(k.contract);
    let mut out: Vec<(&'static str, Option<Contract>)> = vec![("current", current)];
    if current.is_some() {
        out.push(("none", None));
    }
    let threads: Vec<u32> = if args.threads.is_empty() {
        vec![current.and_then(|c| c.threads).unwrap_or(host.threads)]
    } else {
        args.threads.clone()
    };
    let r = &ka.resources;
    for &t in &threads {
        if max_regs.cliffs {
            let found = cliffs(ka.arch, t, r.shared_static, host.dynamic_smem, r.barriers)
                .map_err(|e| Error::Failure(anyhow::anyhow!("{}: {e}", k.display_name)))?;
            for c in found {
                out.push(("cliff", bounds(t, Some(c.blocks), Some(c.registers))));
            }
        }
        let blocks: Vec<Option<u32>> =
            if args.min_blocks.is_empty() { vec![None] } else { args.min_blocks.iter().map(|&b| Some(b)).collect() };
        let regs: Vec<Option<u32>> =
            if max_regs.values.is_empty() { vec![None] } else { max_regs.values.iter().map(|&r| Some(r)).collect() };
        for &b in &blocks {
            for &m in &regs {
                out.push(("grid", bounds(t, b, m)));
            }
        }
    }
    // Each contract once, in the order first met.
    let mut seen: Vec<Option<Contract>> = Vec::new();
    out.retain(|(_, c)| {
        let key = c.map(|c| Contract { source: ContractSource::LaunchBounds, exact: false, ..c });
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    Ok(out)
}

/// The analysed variants of one arch, with the frontier marked.
fn arch_variants(
    arch: Arch,
    host: HostLaunch,
    grid: &[(&'static str, Option<Contract>)],
    results: impl Iterator<Item = Result<Resources, String>>,
) -> Result<ArchVariants, Error> {
    let mut variants = Vec::new();
    let mut next_block = None;
    for ((origin, contract), result) in grid.iter().zip(results) {
        let v = match result {
            Ok(r) => {
                let a: KernelReport =
                    analysis::analyze(arch, &r, *contract, host).map_err(|e| Error::Failure(anyhow::anyhow!("{e}")))?;
                if *origin == "current" {
                    next_block = a.next_block;
                }
                variant(origin, *contract, r, &a)
            }
            Err(e) => refused(origin, *contract, host, e),
        };
        variants.push(v);
    }
    let points: Vec<(f64, u32)> = variants
        .iter()
        .map(|v| match (&v.resources, &v.launch_error) {
            (Some(r), None) => (v.percent, r.spill_bytes()),
            _ => (0.0, u32::MAX),
        })
        .collect();
    for (v, on) in variants.iter_mut().zip(frontier(&points)) {
        v.frontier = on && v.resources.is_some() && v.launch_error.is_none();
    }
    Ok(ArchVariants { arch, next_block, live_unavailable: None, variants })
}

/// `--pressure`: each assembled variant's peak of live registers, in `arch`'s variants' order;
/// an arch whose cubins nvdisasm follows no data flow through says why once.
fn live_peaks<'c>(
    arch: &mut ArchVariants,
    cubins: impl Iterator<Item = Option<&'c [u8]>>,
    nvdisasm: &(launch_engine::tooling::lineinfo::nvdisasm::Located, std::time::Duration),
    entry: &str,
    dir: &std::path::Path,
) -> Result<(), Error> {
    let cubins: Vec<Option<&[u8]>> = cubins.collect();
    let present: Vec<&[u8]> = cubins.iter().flatten().copied().collect();
    let mut peaks = crate::pressure::peaks(nvdisasm, &present, entry, dir)?.into_iter();
    for (v, cubin) in arch.variants.iter_mut().zip(&cubins) {
        let Some(peak) = cubin.and_then(|_| peaks.next()) else { continue };
        match peak {
            Ok(p) => v.live_peak = Some(p),
            Err(why) => arch.live_unavailable = Some(why),
        }
    }
    Ok(())
}

fn variant(origin: &str, contract: Option<Contract>, resources: Resources, a: &KernelReport) -> Variant {
    Variant {
        origin: origin.to_string(),
        contract,
        resources: Some(resources),
        live_peak: None,
        error: None,
        threads: a.occupancy.threads,
        threads_from: a.occupancy.threads_from,
        active_blocks: a.occupancy.active_blocks,
        percent: a.occupancy.percent,
        limiters: a.occupancy.limiters,
        launch_error: a.launch_failure.map(Explained::new),
        max_threads_per_block: a.largest_block,
        frontier: false,
    }
}

/// A variant ptxas refused: there are no resources to analyse, so nothing is evaluated (no
/// blocks, no limiter, no largest block), only the block size it was meant for.
fn refused(origin: &str, contract: Option<Contract>, host: HostLaunch, error: String) -> Variant {
    let (threads, threads_from) = match contract.and_then(|c| c.threads) {
        Some(t) => (t, ThreadsFrom::Contract),
        None => (host.threads, ThreadsFrom::Host),
    };
    Variant {
        origin: origin.to_string(),
        contract,
        resources: None,
        live_peak: None,
        error: Some(error),
        threads,
        threads_from,
        active_blocks: 0,
        percent: 0.0,
        limiters: Limiters::default(),
        launch_error: None,
        max_threads_per_block: 0,
        frontier: false,
    }
}

/// The table, one per arch.
fn text(out: &mut impl Write, doc: &Document) -> std::io::Result<()> {
    const HEAD: [&str; 9] =
        ["", "contract", "regs", "spill st/ld", "stack", "threads", "occupancy", "limited by", "largest"];
    const RIGHT: [bool; 9] = [false, false, true, true, true, true, true, false, true];
    for (i, a) in doc.arches.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let current = &a.variants[0];
        let name = &doc.kernel.display_name;
        writeln!(out, "{} on {} (ptxas {})", names::elide(name, names::KERNEL_WIDTH), a.arch, doc.toolchain.ptxas)?;
        if let (Some(n), Some(r)) = (&a.next_block, &current.resources) {
            writeln!(out, "cliff from the current build: {}", words::next_block(n, r.registers))?;
        }
        let mut rows: Vec<Vec<String>> = a.variants.iter().map(row).collect();
        let (mut head, mut right) = (HEAD.to_vec(), RIGHT.to_vec());
        if doc.nvdisasm.is_some() {
            // `--pressure`: the peak of live registers beside the allocation.
            head.insert(3, "live");
            right.insert(3, true);
            for (r, v) in rows.iter_mut().zip(&a.variants) {
                r.insert(3, v.live_peak.map_or_else(|| "-".into(), |p| p.gpr.to_string()));
            }
        }
        for line in text::table(&head, &right, &rows) {
            writeln!(out, "{line}")?;
        }
        if let Some(why) = &a.live_unavailable {
            writeln!(out, "live: unknown on {} ({why})", a.arch)?;
        }
        for v in a.variants.iter().filter(|v| v.error.is_some()) {
            writeln!(out, "{}: ptxas refused it: {}", words::contract(v.contract), v.error.as_deref().unwrap_or(""))?;
        }
    }
    writeln!(
        out,
        "\n*: on the frontier (no other variant has at least its occupancy and at most its spill bytes, and more of one); \
         threads*: the host's block size (no contract); measure the frontier on a GPU before choosing."
    )?;
    if let Some(v) = &doc.nvdisasm {
        writeln!(out, "live: the most live registers after any instruction (nvdisasm {v}), at most regs.")?;
    }
    Ok(())
}

fn row(v: &Variant) -> Vec<String> {
    let mark = if v.frontier { "*" } else { " " };
    let label = if v.origin == "current" {
        format!("{} (current)", words::contract(v.contract))
    } else {
        words::contract(v.contract)
    };
    let (regs, spills, stack) = match &v.resources {
        Some(r) => {
            (r.registers.to_string(), format!("{}/{}", r.spill_stores, r.spill_loads), r.stack_frame.to_string())
        }
        None => ("-".into(), "-".into(), "-".into()),
    };
    let threads = match v.threads_from {
        ThreadsFrom::Contract => v.threads.to_string(),
        ThreadsFrom::Host => format!("{}*", v.threads),
    };
    let (occ, limited, largest) = match (&v.resources, &v.launch_error) {
        (None, _) => ("-".to_string(), "refused by ptxas".to_string(), "-".to_string()),
        (_, Some(_)) => ("fails".to_string(), "cannot launch".to_string(), v.max_threads_per_block.to_string()),
        _ => (
            format!("{:.1}%", v.percent),
            v.limiters.iter().map(|l| l.name()).collect::<Vec<_>>().join("+"),
            v.max_threads_per_block.to_string(),
        ),
    };
    vec![mark.into(), label, regs, spills, stack, threads, occ, limited, largest]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variant ptxas refused has nothing to analyse: no blocks, no limiter, no largest block,
    /// off the frontier; the table shows dashes, not the numbers of a kernel with no registers.
    #[test]
    fn a_refused_variant_is_shown_as_refused_not_analysed() {
        let arch: Arch = "sm_90".parse().unwrap();
        let host = HostLaunch { threads: 256, dynamic_smem: 0 };
        let bounds = Contract {
            source: ContractSource::LaunchBounds,
            threads: Some(512),
            min_blocks: None,
            max_regs: Some(16),
            exact: false,
        };
        let grid = [("current", None), ("grid", Some(bounds))];
        let current = Resources { registers: 40, ..Resources::default() };
        let results = [Ok(current), Err("ptxas fatal: nope".to_string())].into_iter();
        let a = arch_variants(arch, host, &grid, results).unwrap();
        let v = &a.variants[1];
        assert_eq!((v.resources, v.error.as_deref()), (None, Some("ptxas fatal: nope")));
        assert_eq!((v.threads, v.threads_from), (512, ThreadsFrom::Contract));
        assert_eq!((v.active_blocks, v.percent, v.max_threads_per_block), (0, 0.0, 0));
        assert!(v.limiters.is_empty() && v.launch_error.is_none() && !v.frontier, "{v:?}");
        assert!(a.variants[0].frontier);
        let cells = row(v);
        assert_eq!(&cells[6..], ["-", "refused by ptxas", "-"], "{cells:?}");
    }
}

//! `cargo launch coverage`: which GPUs run the crate's kernels and how — a cubin as is, the PTX
//! through the driver's JIT (and whether a given driver takes its ISA), or nothing — per kernel
//! where they differ; the bytes each arch costs; the smallest arch list for those GPUs. Builds the
//! crate as `report` does; the rule is `launch::compat`'s, the one `launch::cuda` loads by. The
//! JSON form is `launch_schema::coverage`.

mod predict;

use std::io::Write;

use crate::gpus::{self, Target};
use anyhow::Context;
use launch::compat::CudaVersion;
use launch::Arch;
use launch_engine::tooling::cache::format_size;
use launch_schema::coverage::{ArchSize, Document, GpuCoverage, Load, Outcome, Suggestion};

use crate::cargo::Selection;
use crate::cli::{CoverageArgs, Format};
use crate::error::Error;
use crate::records::PackageKernels;
use crate::toolchain;

/// The first-run cost of a JIT, as measured (the figures and their source).
pub(crate) const JIT_COST: &str = "the first load JIT-compiles the PTX (the driver caches the result for later runs): \
     measured on an H200 with driver 580 (tools/gpu/RESULTS.md, \"cubin load vs PTX JIT\"): 7.9 s for the template's \
     kernels/poly.cu (compute_90, 5 kernels) and 0.66 s for a 10-kernel file (compute_80), against 0.04 ms to load a \
     cubin";

/// Runs `cargo launch coverage`.
pub(crate) fn run(args: &CoverageArgs) -> Result<(), Error> {
    let names: Vec<String> = if args.gpu.is_empty() {
        gpus::DEFAULT_LIST.iter().map(ToString::to_string).collect()
    } else {
        // Each name was checked when the command line was read (`cli::parse_gpu`).
        args.gpu.clone()
    };
    let targets = names
        .iter()
        .map(|n| gpus::lookup(n))
        .collect::<Result<Vec<Target>, _>>()
        .map_err(|e| Error::Usage(anyhow::anyhow!("--gpu: {e}")))?;
    let selection = Selection::of(&args.packages)?;
    toolchain::ensure_unless_prebuilt(args.no_setup, false, &selection, &[])?;
    let packages = selection.build(&[])?;
    let doc = document(&packages, &targets, args.driver);
    let mut out = crate::stdout::stdout();
    match args.format {
        Format::Text => text(&mut out, &doc, &packages, args.gpu.is_empty()),
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from).and_then(|()| writeln!(out))
        }
    }
    .context("writing the coverage")?;
    Ok(())
}

fn document(packages: &[PackageKernels], targets: &[Target], driver: Option<CudaVersion>) -> Document {
    let several = packages.len() > 1;
    let units: Vec<predict::Unit> = packages
        .iter()
        .flat_map(|p| predict::units(&p.manifest, &if several { format!("{}: ", p.package) } else { String::new() }))
        .collect();
    let gpus: Vec<GpuCoverage> = targets
        .iter()
        .map(|t| GpuCoverage {
            name: t.name.clone(),
            arch: format!("sm_{}{}", t.cc.0, t.cc.1).parse().expect("the GPU table's compute capabilities are arches"),
            loads: predict::group(&units, t, driver),
        })
        .collect();
    let sizes: Vec<ArchSize> = packages.iter().flat_map(sizes).collect();
    let ccs: Vec<(u32, u32)> = targets.iter().map(|t| t.cc).collect();
    let suggestion = (!ccs.is_empty()).then(|| suggest(&predict::smallest_arch_list(&ccs), &sizes));
    let jit = gpus.iter().any(|g| g.loads.iter().any(|l| matches!(l.outcome, Outcome::Jit | Outcome::JitRefused)));
    let t = packages.first().map(|p| &p.manifest.toolchain);
    Document {
        schema: launch_schema::coverage::VERSION,
        toolchain: t.map(|t| t.compilers.clone()),
        driver: driver.map(|d| d.to_string()),
        gpus,
        sizes,
        suggestion,
        jit_cost: jit.then(|| JIT_COST.to_string()),
    }
}

/// The bytes of each arch's cubins and PTX in `p`'s build (its files under `OUT_DIR/launch`).
fn sizes(p: &PackageKernels) -> Vec<ArchSize> {
    let len = |rel: &str| std::fs::metadata(p.launch_dir.join(rel)).map(|m| m.len()).unwrap_or(0);
    let m = &p.manifest;
    let modules =
        m.modules.iter().chain(m.kernels.iter().flat_map(|k| k.variants.iter().filter_map(|v| v.module.as_ref())));
    let mut out: Vec<ArchSize> = m
        .arches
        .iter()
        .map(|&arch| ArchSize { package: p.package.clone(), arch, cubin_bytes: 0, ptx_bytes: 0 })
        .collect();
    let mut add = |arch: Arch, cubin: u64, ptx: u64| match out.iter_mut().find(|s| s.arch == arch) {
        Some(s) => {
            s.cubin_bytes += cubin;
            s.ptx_bytes += ptx;
        }
        None => out.push(ArchSize { package: p.package.clone(), arch, cubin_bytes: cubin, ptx_bytes: ptx }),
    };
    for module in modules {
        for c in &module.cubins {
            add(c.arch, len(&c.path), 0);
        }
        if !module.ptx.is_empty() {
            add(module.ptx_arch, 0, len(&module.ptx));
        }
        for e in &module.extra_ptx {
            add(e.arch, 0, len(&e.path));
        }
    }
    out
}

/// The suggested list's bytes: each arch's cubins as built (the mean of the built arches' when this
/// build has none of it, marked estimated) and the fallback PTX as the build's lowest arch's.
fn suggest(list: &[Arch], sizes: &[ArchSize]) -> Suggestion {
    let mut arches: Vec<Arch> = sizes.iter().map(|s| s.arch).collect();
    arches.sort();
    arches.dedup();
    let cubins = |a: Arch| sizes.iter().filter(|s| s.arch == a).map(|s| s.cubin_bytes).sum::<u64>();
    let mean = if arches.is_empty() { 0 } else { arches.iter().map(|a| cubins(*a)).sum::<u64>() / arches.len() as u64 };
    let mut estimated = false;
    let mut bytes = 0;
    for a in list {
        if arches.contains(a) {
            bytes += cubins(*a);
        } else {
            estimated = true;
            bytes += mean;
        }
    }
    // The fallback PTX: one per file, the lowest arch's; costed as this build's.
    let lowest = arches.first().copied();
    let fallback: u64 = lowest.map_or(0, |l| sizes.iter().filter(|s| s.arch == l).map(|s| s.ptx_bytes).sum());
    estimated |= list.first() != lowest.as_ref();
    bytes += fallback;
    let current = sizes.iter().map(|s| s.cubin_bytes + s.ptx_bytes).sum();
    Suggestion { arch: list.to_vec(), bytes, estimated, current_bytes: current }
}

fn describe(l: &Load) -> String {
    let image = l.image.map(|a| a.to_string()).unwrap_or_default();
    let virt = l.image.map(|a| a.virtual_name()).unwrap_or_default();
    let isa = l.ptx_isa.as_deref().map(|i| format!(" (ISA {i})")).unwrap_or_default();
    let at_least = l.min_driver.as_deref().map(|d| format!("; needs a driver >= {d}")).unwrap_or_default();
    let host = if l.host { "host launchers: " } else { "" };
    let what = match l.outcome {
        Outcome::Native => format!("cubin {image}"),
        Outcome::Jit => format!("PTX {virt}{isa}, JIT on first load{at_least}"),
        Outcome::JitRefused => format!(
            "PTX {virt}{isa} refused by this driver: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222); fix: {}",
            l.fix.as_deref().unwrap_or_default()
        ),
        Outcome::DriverTooOld => {
            format!("cubin {image} refused: built by a newer CUDA; fix: {}", l.fix.as_deref().unwrap_or_default())
        }
        Outcome::NoImage => format!(
            "nothing: no kernel image (CUDA_ERROR_NO_BINARY_FOR_GPU, 209); fix: {}",
            l.fix.as_deref().unwrap_or_default()
        ),
    };
    format!("{host}{what}")
}

/// `a, b, c and 4 more`.
fn some(names: &[String]) -> String {
    match names.len() {
        0..=3 => names.join(", "),
        n => format!("{} and {} more", names[..3].join(", "), n - 3),
    }
}

fn text(out: &mut impl Write, doc: &Document, packages: &[PackageKernels], default_list: bool) -> std::io::Result<()> {
    let toolkit = doc.toolchain.as_ref().map_or("no toolchain".to_string(), |t| format!("ptxas {}", t.ptxas));
    for p in packages {
        let arches: Vec<String> = p.manifest.arches.iter().map(ToString::to_string).collect();
        writeln!(out, "{}: arch {}, built by {toolkit}", p.package, arches.join(", "))?;
    }
    let driver = doc
        .driver
        .as_deref()
        .map_or("any driver new enough (--driver not given)".to_string(), |d| format!("a CUDA {d} driver"));
    let which = if default_list { " (the default list; --gpu names others)" } else { "" };
    writeln!(out, "GPUs{which}, with {driver}:")?;
    let total = packages.iter().map(|p| predict::units(&p.manifest, "").len()).sum::<usize>();
    for g in &doc.gpus {
        let cc = g.arch.compute_capability();
        let head = format!("  {:<18} {:<5}", g.name, format!("{}.{}", cc.0, cc.1));
        match g.loads.as_slice() {
            [one] => writeln!(out, "{head} {} (all {total} kernels)", describe(one))?,
            many => {
                writeln!(out, "{head} differs by kernel:")?;
                for l in many {
                    writeln!(out, "  {:<24}   {}: {}", "", describe(l), some(&l.kernels))?;
                }
            }
        }
    }
    writeln!(out, "bytes embedded per arch:")?;
    for s in &doc.sizes {
        let who = if packages.len() > 1 { format!("{}: ", s.package) } else { String::new() };
        writeln!(
            out,
            "  {who}{:<8} cubins {:>9}   PTX {:>9}",
            s.arch.to_string(),
            format_size(s.cubin_bytes),
            format_size(s.ptx_bytes)
        )?;
    }
    if let Some(s) = &doc.suggestion {
        let list: Vec<String> = s.arch.iter().map(|a| format!("\"{a}\"")).collect();
        let lowest = s.arch.first().map(|a| a.virtual_name()).unwrap_or_default();
        let how = if s.estimated { "about " } else { "" };
        writeln!(
            out,
            "smallest arch list that runs these GPUs natively: arch = [{}] (PTX {lowest} for newer GPUs): {how}{} \
             (this build: {}){}",
            list.join(", "),
            format_size(s.bytes),
            format_size(s.current_bytes),
            if s.estimated { "; estimated from this build's per-arch sizes" } else { "" }
        )?;
    }
    if let Some(j) = &doc.jit_cost {
        writeln!(out, "JIT: {j}")?;
    }
    Ok(())
}

//! `cargo launch report`: per kernel and arch, the contract, the ptxas lines and the occupancy at
//! the block size the kernel is launched with.

use anyhow::Context;
use launch::explain::launch_failure;
use launch::occupancy::{self, Carveout, DeviceLimits, FunctionAttrs};
use launch::{Arch, Contract};
use launch_build::manifest::{KernelArch, KernelEntry};
use serde::Serialize;

use crate::cargo::{self, PackageKernels};
use crate::cli::{Format, ReportArgs};
use crate::error::Error;
use crate::record::{ContractJson, FailingBlock, OccupancyJson, PtxasJson, Record};
use crate::words::qualified;
use crate::{render, select, toolchain};

/// The JSON document.
#[derive(Debug, Serialize)]
pub struct ReportJson<'a> {
    /// Format version.
    pub schema: u32,
    /// `{nvrtc, ptxas}` versions used.
    pub toolchain: Toolchain<'a>,
    /// One record per kernel × arch (those `--kernel`/`--file` select, in `--sort` order).
    pub records: Vec<&'a Record>,
}

/// `toolchain` in the JSON.
#[derive(Debug, Serialize)]
pub struct Toolchain<'a> {
    /// NVRTC version.
    pub nvrtc: &'a str,
    /// ptxas version.
    pub ptxas: &'a str,
}

/// Above this many records the text report is the compact one (one line per kernel × arch)
/// unless `--detailed` is given.
pub const COMPACT_ABOVE: usize = 40;

/// Runs `cargo launch report`.
pub fn run(args: &ReportArgs) -> Result<(), Error> {
    toolchain::ensure_toolchain(args.no_setup)?;
    let arches = cargo::sorted(&args.arch);
    refuse_untargetable(&arches)?;
    let packages = cargo::build(&args.packages, &arches)?;
    for p in &packages {
        for w in unknown_kernel_settings(&p.config, &p.manifest) {
            eprintln!("warning: {}: {w}", p.config.manifest_path.display());
        }
    }
    let records = records(&packages, &arches)?;
    let filter = select::Filter { kernel: args.kernel.clone(), file: args.file.clone() };
    let mut shown: Vec<&Record> = records
        .iter()
        .filter(|r| {
            let dir = packages.iter().find(|p| p.package == r.package).map(|p| p.config.kernel_dir.as_path());
            filter.matches(r, dir)
        })
        .collect();
    if let Some(key) = args.sort {
        select::sort(&mut shown, key);
    }
    if shown.is_empty() && !records.is_empty() {
        eprintln!("warning: none of the {} records matches {}", records.len(), filter.describe());
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Text => {
            let compact = args.summary || (!args.detailed && shown.len() > COMPACT_ABOVE);
            let view =
                render::View { packages: &packages, all: &records, shown: &shown, arches: &arches, filter: &filter };
            if compact {
                render::compact(&mut out, &view)
            } else {
                render::text(&mut out, &view)
            }
        }
        Format::Json => {
            let t = &packages[0].manifest.toolchain;
            let doc =
                ReportJson { schema: 1, toolchain: Toolchain { nvrtc: &t.nvrtc, ptxas: &t.ptxas }, records: shown };
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from).and_then(|_| {
                use std::io::Write;
                writeln!(out)
            })
        }
    }
    .context("writing the report")?;
    Ok(())
}

/// An arch the toolchain cannot compile for is a usage error before anything is built (`check`
/// reports it as a finding instead and checks the rest).
fn refuse_untargetable(arches: &[Arch]) -> Result<(), Error> {
    if arches.is_empty() {
        return Ok(());
    }
    let supported = toolchain::supported_arches()?;
    let bad: Vec<String> = arches
        .iter()
        .filter(|a| !supported.is_empty() && !supported.contains(&(a.major * 10 + a.minor)))
        .map(|a| a.to_string())
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(anyhow::anyhow!(
        "the toolchain cannot target {}; it supports: {}",
        bad.join(", "),
        supported.iter().map(|c| format!("sm_{c}")).collect::<Vec<_>>().join(", ")
    )))
}

/// Records of every kernel × arch, filtered to `arches` when not empty.
pub fn records(packages: &[PackageKernels], arches: &[Arch]) -> Result<Vec<Record>, Error> {
    let mut out = Vec::new();
    for p in packages {
        if let Some(missing) = arches.iter().find(|a| !p.manifest.arches.contains(a)) {
            return Err(Error::Usage(anyhow::anyhow!(
                "package `{}` is not built for {missing}; it lists: {}",
                p.package,
                p.manifest.arches.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
            )));
        }
        for k in &p.manifest.kernels {
            let host = host_launch(&p.config, k);
            for ka in k.arches.iter().filter(|ka| arches.is_empty() || arches.contains(&ka.arch)) {
                out.push(record(&p.package, host, k, ka)?);
            }
        }
    }
    Ok(out)
}

/// How the host launches a kernel: block size when it has no thread contract, dynamic shared memory.
#[derive(Clone, Copy, Debug)]
pub struct HostLaunch {
    /// Block size for a kernel without a thread contract.
    pub threads: u32,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_smem: u32,
}

/// The `[package.metadata.launch.kernel."<name or pattern>"]` settings of a kernel, merged.
pub fn kernel_config(config: &launch_build::Config, k: &KernelEntry) -> launch_build::config::KernelConfig {
    config.kernel_settings(&k.name, &qualified(k))
}

/// One message per `[package.metadata.launch.kernel."<key>"]` that matches no kernel of the crate
/// (a name, a qualified name or a pattern).
pub fn unknown_kernel_settings(config: &launch_build::Config, manifest: &launch_build::Manifest) -> Vec<String> {
    config
        .kernel
        .keys()
        .filter(|key| {
            !manifest.kernels.iter().any(|k| {
                launch_build::config::kernel_key_matches(key, &k.name, &qualified(k)) || &k.display_name == *key
            })
        })
        .map(|name| {
            let names: Vec<&str> = manifest.kernels.iter().map(|k| k.display_name.as_str()).collect();
            format!(
                "[package.metadata.launch.kernel.{name}] names no kernel; its settings are unused. Kernels: {}",
                names.join(", ")
            )
        })
        .collect()
}

/// The host launch of `k` from the crate's metadata.
pub fn host_launch(config: &launch_build::Config, k: &KernelEntry) -> HostLaunch {
    let kc = kernel_config(config, k);
    HostLaunch { threads: kc.threads.unwrap_or(config.host_threads), dynamic_smem: kc.dynamic_smem.unwrap_or(0) }
}

fn record(package: &str, host: HostLaunch, k: &KernelEntry, ka: &KernelArch) -> Result<Record, Error> {
    let dev = DeviceLimits::for_arch(ka.arch)
        .ok_or_else(|| Error::Failure(anyhow::anyhow!("no occupancy data for {}", ka.arch)))?;
    let r = ka.resources;
    let (threads, threads_from) = match k.contract.and_then(|c| c.threads) {
        Some(t) => (t, "contract"),
        None => (host.threads, "host"),
    };
    let maxntid = k.contract.and_then(|c| c.threads);
    let max_threads = occupancy::max_threads_per_block(dev, r.registers, maxntid);
    let attrs = FunctionAttrs::new(r.registers, r.shared_static, r.barriers);
    // The driver's default limit on dynamic shared memory is raised (opt-in) when the host asks for more.
    let attrs = attrs.with_max_dynamic_shared(attrs.max_dynamic_shared_on(dev).max(host.dynamic_smem));
    let occ = occupancy::occupancy(dev, &attrs, threads, host.dynamic_smem, Carveout::Default)
        .map_err(|e| Error::Failure(anyhow::anyhow!("occupancy of {} on {}: {e}", k.display_name, ka.arch)))?;
    let launch_error = (occ.active_blocks == 0 || threads > max_threads)
        .then(|| launch_failure(dev, &r, host.dynamic_smem, threads, max_threads, &occ));
    // The seed article's trap: an unbounded kernel that works at 256 fails once someone tunes the
    // block size up. Show the first power of two that fails.
    let fails_at = match (maxntid, max_threads < dev.max_threads_per_block) {
        (None, true) => {
            let t = (max_threads + 1).next_power_of_two().min(dev.max_threads_per_block);
            let o = occupancy::occupancy(dev, &attrs, t, 0, Carveout::Default)
                .map_err(|e| Error::Failure(anyhow::anyhow!("occupancy of {} on {}: {e}", k.display_name, ka.arch)))?;
            Some(FailingBlock { threads: t, reason: launch_failure(dev, &r, 0, t, max_threads, &o) })
        }
        _ => None,
    };
    let (register_cap, notes) = contract_notes(dev, k.contract, &attrs, &occ, ka.arch);
    Ok(Record {
        register_cap,
        notes,
        package: package.to_string(),
        name: k.name.clone(),
        display_name: k.display_name.clone(),
        qualified: qualified(k),
        arch: ka.arch,
        file: k.file.clone(),
        line: k.line,
        contract: k.contract.map(contract_json),
        ptxas: PtxasJson { lines: ka.ptxas_lines.clone(), resources: r },
        occupancy: OccupancyJson {
            threads,
            dynamic_smem: host.dynamic_smem,
            threads_from,
            active_blocks: occ.active_blocks,
            active_warps: occ.active_warps,
            max_warps: occ.max_warps,
            percent: (occ.percent() * 10.0).round() / 10.0,
            limiters: occ.limiters.iter().map(|l| l.name()).collect(),
            launch_error,
        },
        max_threads_per_block: max_threads,
        fails_at,
    })
}

/// The register cap a contract implies on `dev`, and what the arch does not honour.
fn contract_notes(
    dev: &DeviceLimits,
    contract: Option<Contract>,
    attrs: &FunctionAttrs,
    occ: &occupancy::Occupancy,
    arch: Arch,
) -> (Option<u32>, Vec<String>) {
    let mut notes = Vec::new();
    let Some(c) = contract else { return (None, notes) };
    let Some(threads) = c.threads else { return (c.max_regs, notes) };
    let blocks = c.min_blocks.unwrap_or(1);
    let fit = occupancy::registers_for_blocks_with(dev, attrs, threads, blocks, 0, Carveout::Default);
    if c.min_blocks.is_some() && fit.is_none() {
        let why = if blocks * threads > dev.max_threads_per_sm {
            format!("{blocks} × {threads} threads exceed the SM's {} threads", dev.max_threads_per_sm)
        } else if blocks > dev.max_blocks_per_sm {
            format!("the SM holds at most {} blocks", dev.max_blocks_per_sm)
        } else {
            "the shared memory or barriers of that many blocks do not fit".to_string()
        };
        notes.push(format!("min_blocks {blocks} cannot be met on {arch}: {why}; ptxas ignores it"));
    } else if c.min_blocks.is_some() && occ.active_blocks < blocks {
        let limits: Vec<&str> = occ.limiters.iter().map(|l| l.name()).collect();
        notes.push(format!(
            "min_blocks {blocks} is not reached on {arch}: {} blocks fit (limited by {})",
            occ.active_blocks,
            limits.join(", ")
        ));
    }
    let cap = match (fit, c.max_regs) {
        (Some(f), Some(m)) => {
            if m > f {
                notes.push(format!(
                    "max_regs {m} is above the {f} registers that {blocks} block(s) of {threads} threads leave per thread \
                     on {arch}; ptxas holds the kernel to {f}"
                ));
            }
            Some(f.min(m))
        }
        (f, m) => f.or(m),
    };
    (cap, notes)
}

fn contract_json(c: Contract) -> ContractJson {
    ContractJson { source: c.source, threads: c.threads, min_blocks: c.min_blocks, max_regs: c.max_regs }
}

/// Constructed packages and records for the renderers' unit tests (no compiler).
#[cfg(test)]
pub(crate) mod testing {
    use launch_build::manifest::{KernelArch, KernelEntry, ToolchainInfo};
    use std::path::Path;

    use launch_build::Manifest;

    use super::*;

    /// A package `pkg` with `n` unbounded kernels `k00..` in `kernels/many.cu` (line = 10 + i),
    /// on `arches`; kernel `i` has `i` registers above 16 and, when `i % 7 == 6`, 8 bytes of
    /// spills. `absent` lists (kernel index, arch) pairs the kernel does not exist on.
    pub fn package(dir: &Path, n: usize, arches: &[&str], absent: &[(usize, &str)]) -> PackageKernels {
        std::fs::create_dir_all(dir.join("kernels")).unwrap();
        let list: Vec<String> = arches.iter().map(|a| format!("\"{a}\"")).collect();
        let toml = format!(
            "[package]\nname = \"pkg\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\narch = [{}]\n",
            list.join(", ")
        );
        std::fs::write(dir.join("Cargo.toml"), toml).unwrap();
        let config = launch_build::Config::load(&dir.join("Cargo.toml")).unwrap();
        let mut arches: Vec<Arch> = arches.iter().map(|a| a.parse().unwrap()).collect();
        arches.sort();
        let kernels = (0..n)
            .map(|i| KernelEntry {
                name: format!("k{i:02}"),
                display_name: format!("k{i:02}"),
                qualified: format!("kernels/many.cu::k{i:02}"),
                rust_name: format!("K{i:02}"),
                rust_path: format!("kernels::many::K{i:02}"),
                rust_flat: true,
                origin: Default::default(),
                file: "kernels/many.cu".into(),
                line: 10 + i as u32,
                col: 1,
                contract: None,
                arches: arches
                    .iter()
                    .filter(|a| !absent.iter().any(|(k, b)| *k == i && b.parse::<Arch>().unwrap() == **a))
                    .map(|&arch| KernelArch {
                        arch,
                        resources: launch::Resources {
                            registers: 16 + i as u32,
                            spill_stores: if i % 7 == 6 { 4 } else { 0 },
                            spill_loads: if i % 7 == 6 { 4 } else { 0 },
                            ..Default::default()
                        },
                        ptxas_lines: vec![format!("ptxas info    : Used {} registers", 16 + i)],
                    })
                    .collect(),
                missing: absent
                    .iter()
                    .filter(|(k, _)| *k == i)
                    .map(|(_, a)| launch_build::manifest::MissingArch {
                        arch: a.parse().unwrap(),
                        reason: "absent from the PTX".into(),
                    })
                    .collect(),
                host_threads: None,
            })
            .collect();
        let manifest = Manifest {
            schema: launch_build::manifest::SCHEMA,
            package: "pkg".into(),
            toolchain: ToolchainInfo { nvrtc: "12.9.86".into(), ptxas: "12.9.86".into(), description: String::new() },
            arches,
            host_threads: 256,
            modules: Vec::new(),
            kernels,
            warnings: Vec::new(),
        };
        PackageKernels { package: "pkg".into(), manifest, config }
    }
}

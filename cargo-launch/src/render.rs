//! The text form of the report.

use std::io::{self, Write};

use launch::ContractSource;

use crate::cargo::PackageKernels;
use crate::report::{ContractJson, Record};

/// `@launch(1024, 2)`, `__launch_bounds__(256, 4)`, `__maxnreg__(32)`, or `unbounded`.
pub fn contract(c: Option<&ContractJson>) -> String {
    let Some(c) = c else { return "unbounded".to_string() };
    let mut args: Vec<String> = Vec::new();
    match c.source {
        ContractSource::Annotation => {
            args.extend(c.threads.map(|t| t.to_string()));
            args.extend(c.min_blocks.map(|b| b.to_string()));
            args.extend(c.max_regs.map(|r| r.to_string()));
            format!("@launch({})", args.join(", "))
        }
        ContractSource::LaunchBounds => {
            let mut parts = Vec::new();
            if let Some(t) = c.threads {
                let mut a = vec![t.to_string()];
                a.extend(c.min_blocks.map(|b| b.to_string()));
                parts.push(format!("__launch_bounds__({})", a.join(", ")));
            }
            if let Some(r) = c.max_regs {
                parts.push(format!("__maxnreg__({r})"));
            }
            parts.join(" ")
        }
    }
}

/// The PTX directives a contract became (read back from the PTX after compiling).
pub fn directives(c: &ContractJson) -> String {
    let mut d = Vec::new();
    if let Some(t) = c.threads {
        d.push(format!(".maxntid {t}, 1, 1"));
    }
    if let Some(b) = c.min_blocks {
        d.push(format!(".minnctapersm {b}"));
    }
    if let Some(r) = c.max_regs {
        d.push(format!(".maxnreg {r}"));
    }
    d.join(", ")
}

/// Writes the report for people.
pub fn text(out: &mut impl Write, packages: &[PackageKernels], records: &[Record]) -> io::Result<()> {
    for p in packages {
        let m = &p.manifest;
        let arches: Vec<String> = m.arches.iter().map(|a| a.to_string()).collect();
        writeln!(out, "{}: {} kernels × {} arches ({})", p.package, m.kernels.len(), arches.len(), arches.join(", "))?;
        writeln!(out, "toolchain: NVRTC {}, ptxas {}", m.toolchain.nvrtc, m.toolchain.ptxas)?;
        writeln!(out)?;
        for r in records.iter().filter(|r| r.package == p.package) {
            let loc = if r.line > 0 { format!("{}:{}", r.file, r.line) } else { r.file.clone() };
            writeln!(
                out,
                "{}  {}  {}  ptxas {}  {loc}",
                r.display_name,
                r.arch,
                contract(r.contract.as_ref()),
                m.toolchain.ptxas
            )?;
            for l in r.ptxas.lines.iter().filter(|l| l.contains("bytes stack frame") || l.contains(": Used ")) {
                writeln!(out, "  {l}")?;
            }
            let o = &r.occupancy;
            let why = match (o.threads_from, &r.contract) {
                ("contract", _) => "",
                (_, None) => " (host block size; no contract)",
                (_, Some(_)) => " (host block size; the contract sets no thread count)",
            };
            match &o.launch_error {
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
                    o.limiters.join(", ")
                )?,
            }
            if let Some(c) = &r.contract {
                writeln!(out, "  in the PTX: {}", directives(c))?;
            }
            if let Some(cap) = r.register_cap.filter(|&c| c < 255) {
                writeln!(
                    out,
                    "  register cap from the contract: {cap} per thread; ptxas used {}",
                    r.ptxas.resources.registers
                )?;
            }
            for n in &r.notes {
                writeln!(out, "  warning: {n}")?;
            }
            write!(out, "  largest launchable block: {} threads", r.max_threads_per_block)?;
            match &r.fails_at {
                Some(f) => writeln!(out, "; at {} threads the launch fails: {}", f.threads, f.reason)?,
                None => writeln!(out)?,
            }
            writeln!(out)?;
        }
        for w in &m.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    Ok(())
}

//! From compiler outputs to the manifest: which kernels exist, where they are defined, their
//! contracts (read back from the PTX) and their per-arch resources (from ptxas).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use launch::{Arch, ContractSource};

use crate::compile::{sanitize, JobOutput, SourceFile};
use crate::config::Config;
use crate::error::Error;
use crate::manifest::{CubinEntry, KernelArch, KernelEntry, Manifest, ModuleEntry, ToolchainInfo, SCHEMA};
use crate::{ptx, source};

/// All outputs of one source file, by arch (lowest first).
pub struct FileOutputs<'a> {
    /// The file.
    pub source: &'a SourceFile,
    /// Its `@launch` annotations.
    pub annotations: &'a [crate::contract::Annotation],
    /// Its `__global__` definitions, as scanned before compiling (for `file:line`).
    pub definitions: &'a [source::KernelDef],
    /// One output per configured arch.
    pub outputs: Vec<(Arch, JobOutput)>,
}

/// Output file names, relative to `OUT_DIR/launch`.
pub fn cubin_path(file: &str, arch: Arch) -> String {
    format!("cubin/{}.{arch}.cubin", sanitize(file))
}

/// Fallback PTX path, relative to `OUT_DIR/launch`.
pub fn ptx_path(file: &str, arch: Arch) -> String {
    format!("ptx/{}.{arch}.ptx", sanitize(file))
}

/// Builds the manifest. Fails on kernels whose generated Rust names would collide.
pub fn manifest(config: &Config, toolchain: ToolchainInfo, files: &[FileOutputs]) -> Result<Manifest, Error> {
    let mut modules = Vec::new();
    let mut kernels = Vec::new();
    let mut warnings = Vec::new();
    let mut unreached = Vec::new();
    for f in files {
        let Some((lowest, lowest_out)) = f.outputs.first() else { continue };
        modules.push(ModuleEntry {
            file: f.source.file.clone(),
            ptx: ptx_path(&f.source.file, *lowest),
            ptx_arch: *lowest,
            ptx_version: ptx::version(&lowest_out.ptx).unwrap_or("").to_string(),
            cubins: f
                .outputs
                .iter()
                .map(|(a, _)| CubinEntry { arch: *a, path: cubin_path(&f.source.file, *a) })
                .collect(),
        });

        // The definitions scanned before compiling: the same text the compiler saw.
        let defs = f.definitions;

        // By name, so that a module of many kernels is not searched once per kernel.
        let annotation_of: HashMap<&str, &crate::contract::Annotation> =
            f.annotations.iter().map(|a| (a.kernel.as_str(), a)).collect();
        let mut def_of: HashMap<&str, &source::KernelDef> = HashMap::new();
        for d in defs {
            def_of.entry(d.name.as_str()).or_insert(d);
        }
        // Annotations already found disagreeing with the PTX (reported once, not per arch).
        let mut disagreeing = BTreeSet::new();

        // Kernel name → (directives from the lowest arch's PTX, per-arch results).
        let mut found: BTreeMap<String, (Option<ptx::EntryDirectives>, Vec<KernelArch>)> = BTreeMap::new();
        for (arch, out) in &f.outputs {
            for d in ptx::entries(&out.ptx) {
                let base = source_name(&d.name);
                let annotation = annotation_of.get(d.name.as_str()).or_else(|| annotation_of.get(base.as_str()));
                if let Some(a) = annotation {
                    // Read the contract back: it must be in the PTX ptxas assembled. The source
                    // scan refuses the bounds it can see; one it cannot (a macro that expands to
                    // `__launch_bounds__`) comes after the one @launch inserts and wins, and is
                    // caught here.
                    let reached = d.maxntid == Some([a.threads, 1, 1])
                        && d.reqntid.is_none()
                        && d.minnctapersm == a.min_blocks
                        && (a.max_regs.is_none() || d.maxnreg == a.max_regs);
                    if !reached && disagreeing.insert((a.line, a.col)) {
                        unreached.push(format!(
                            "{}:{}:{}: error: {} of kernel `{}` disagrees with the bounds the kernel was compiled with: \
                             its PTX for {arch} has {}. A __launch_bounds__ or __maxnreg__ that the source does not \
                             show (written through a macro?) overrides it; declare the contract once",
                            f.source.file,
                            a.line,
                            a.col,
                            a.written(),
                            a.kernel,
                            directives(&d)
                        ));
                    }
                }
                found.entry(d.name.clone()).or_default().0.get_or_insert(d);
            }
            for e in &out.report.entries {
                found.entry(e.name.clone()).or_default().1.push(KernelArch {
                    arch: *arch,
                    resources: e.resources,
                    ptxas_lines: e.lines.clone(),
                });
            }
            for d in &out.report.diagnostics {
                if matches!(d.severity, crate::ptxas_log::Severity::Warning) {
                    warnings.push(format!("{} ({arch}): {}", f.source.file, d.raw.trim()));
                }
            }
            for l in out.nvrtc_log.lines().filter(|l| !l.trim().is_empty()) {
                warnings.push(format!("{} ({arch}): {}", f.source.file, l.trim_end()));
            }
        }

        for (name, (directives, arches)) in found {
            let display_name = demangle(&name);
            let base = base_name(&display_name);
            let def = def_of.get(name.as_str()).or_else(|| def_of.get(base));
            // The contract as it reached the PTX; declared by @launch or by CUDA's own bounds.
            let annotated = annotation_of.contains_key(name.as_str()) || annotation_of.contains_key(base);
            let source = if annotated { ContractSource::Annotation } else { ContractSource::LaunchBounds };
            let contract = directives.and_then(|d| d.contract(source)).map(|mut c| {
                // @launch means exactly `threads` threads per CTA (seeds/004).
                c.exact |= annotated;
                c
            });
            kernels.push(KernelEntry {
                rust_name: rust_name(&display_name),
                display_name,
                name,
                file: f.source.file.clone(),
                line: def.map_or(0, |d| d.line),
                col: def.map_or(0, |d| d.col),
                contract,
                arches,
            });
        }
    }
    if !unreached.is_empty() {
        return Err(Error::Kernels(unreached));
    }
    kernels.sort_by(|a, b| (&a.file, a.line, &a.name).cmp(&(&b.file, b.line, &b.name)));

    let mut seen: BTreeMap<&str, &KernelEntry> = BTreeMap::new();
    let mut clashes = Vec::new();
    for k in &kernels {
        if let Some(prev) = seen.insert(&k.rust_name, k) {
            clashes.push(format!(
                "{}:{}: kernel `{}` would be generated as `{}`, like `{}` at {}:{}; rename one of them",
                k.file, k.line, k.display_name, k.rust_name, prev.display_name, prev.file, prev.line
            ));
        }
    }
    if !clashes.is_empty() {
        return Err(Error::Kernels(clashes));
    }
    let mut seen_w = BTreeSet::new();
    warnings.retain(|w| seen_w.insert(w.clone()));

    Ok(Manifest {
        schema: SCHEMA,
        package: config.package.clone(),
        toolchain,
        arches: config.arches.clone(),
        host_threads: config.host_threads,
        modules,
        kernels,
        warnings,
    })
}

/// `.maxntid 256, 1, 1, .minnctapersm 4`, or `no launch bounds`.
fn directives(d: &ptx::EntryDirectives) -> String {
    let dims = |name: &str, v: Option<[u32; 3]>| v.map(|[x, y, z]| format!("{name} {x}, {y}, {z}"));
    let parts: Vec<String> = [
        dims(".maxntid", d.maxntid),
        dims(".reqntid", d.reqntid),
        d.minnctapersm.map(|b| format!(".minnctapersm {b}")),
        d.maxnreg.map(|r| format!(".maxnreg {r}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        "no launch bounds".into()
    } else {
        parts.join(", ")
    }
}

/// `_Z4tmplILi8EEvPi` → `void tmpl<8>(int*)`; unmangled names are returned as they are.
pub fn demangle(name: &str) -> String {
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| name.to_string())
}

/// The identifier a kernel has in its source, from its symbol: `_Z7mangledPf` → `mangled`.
pub fn source_name(symbol: &str) -> String {
    base_name(&demangle(symbol)).to_string()
}

/// The function's own identifier in a demangled signature: `void ns::tmpl<8>(int*)` → `tmpl`.
fn base_name(display: &str) -> &str {
    let before_params = display.split('(').next().unwrap_or(display);
    let before_tmpl = before_params.split('<').next().unwrap_or(before_params);
    let last = before_tmpl.rsplit("::").next().unwrap_or(before_tmpl);
    last.rsplit(' ').next().unwrap_or(last)
}

/// The Rust static's name: `poly_eval` → `POLY_EVAL`, `void tmpl<8>(int*)` → `TMPL_8`.
pub fn rust_name(display: &str) -> String {
    let sig = display.split('(').next().unwrap_or(display);
    // Drop the return type of a demangled template signature.
    let sig = match sig.find('<') {
        Some(lt) => match sig[..lt].rfind(' ') {
            Some(sp) => &sig[sp + 1..],
            None => sig,
        },
        None => sig.rsplit(' ').next().unwrap_or(sig),
    };
    let mut out = String::new();
    for c in sig.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_').to_string();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("K_{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_demangled_for_display_and_rust() {
        assert_eq!(demangle("poly_eval"), "poly_eval");
        assert_eq!(demangle("_Z4tmplILi8EEvPi"), "void tmpl<8>(int*)");
        assert_eq!(base_name("void tmpl<8>(int*)"), "tmpl");
        assert_eq!(base_name("ns::k(float const*)"), "k");
        assert_eq!(rust_name("poly_eval"), "POLY_EVAL");
        assert_eq!(rust_name("void tmpl<8>(int*)"), "TMPL_8");
        assert_eq!(rust_name("ns::k(float const*)"), "NS_K");
    }
}

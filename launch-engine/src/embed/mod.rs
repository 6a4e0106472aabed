//! Writing `OUT_DIR/launch/`:
//!
//! ```text
//! launch/
//!   kernels.rs        generated module: `kernels::<file>::NAME` statics (one module per .cu
//!                     file), NAME re-exported where unique in the crate, plus KERNELS
//!   manifest.json     what `cargo launch` reads (see manifest.rs)
//!   cubin/<file>.<arch>.cubin
//!   ptx/<file>.<arch>.ptx   fallback PTX: the lowest arch, plus a higher one for each kernel
//!                           (`#if __CUDA_ARCH__ >= 900`) that the lowest lacks
//!   ptx-all/<file>.<arch>.ptx  with `LAUNCH_ALL_PTX=1` only: every arch's PTX, not embedded
//!                           (what `cargo launch explore` writes contracts into)
//!   variants/<file>.<entry>.<arch>.{cubin,ptx}  the tune variants' cubins and fallback PTX
//! ```
//!
//! Files are written only when their content changes, each through a temporary file and a rename;
//! the manifest is written last. Outputs of kernels that no longer exist are removed.

pub mod consts;
mod stage;
mod typed;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use launch::{Arch, Contract, ContractSource, Variant};

use crate::compile::FileOutputs;
use crate::error::Error;
use crate::out::{remove_stale, write_if_changed};
use launch_schema::manifest::{Manifest, Origin};
pub use stage::{run, uncompiled};

/// Writes every output. `launch_dir` is `OUT_DIR/launch`. `all_ptx`: also every arch's PTX, under
/// `ptx-all/` (otherwise that folder is emptied).
/// `variants`: the tune variants' files, by path relative to `launch_dir`.
pub fn write(
    launch_dir: &Path,
    manifest: &Manifest,
    files: &[FileOutputs],
    variants: &[(String, Vec<u8>)],
    all_ptx: bool,
) -> Result<(), Error> {
    let mut keep: BTreeSet<PathBuf> = BTreeSet::new();
    for (path, bytes) in variants {
        let p = launch_dir.join(path);
        write_if_changed(&p, bytes)?;
        keep.insert(p);
    }
    // Files compiled for no arch have no module entry.
    let compiled = files.iter().filter(|f| !f.outputs.is_empty());
    for (m, f) in manifest.modules.iter().zip(compiled) {
        for (c, (_, out)) in m.cubins.iter().zip(&f.outputs) {
            let p = launch_dir.join(&c.path);
            write_if_changed(&p, &out.cubin)?;
            keep.insert(p);
        }
        if let Some((_, lowest)) = f.outputs.first() {
            let p = launch_dir.join(&m.ptx);
            write_if_changed(&p, lowest.ptx.as_bytes())?;
            keep.insert(p);
        }
        for e in &m.extra_ptx {
            if let Some((_, out)) = f.outputs.iter().find(|(a, _)| *a == e.arch) {
                let p = launch_dir.join(&e.path);
                write_if_changed(&p, out.ptx.as_bytes())?;
                keep.insert(p);
            }
        }
        if all_ptx {
            for (arch, out) in &f.outputs {
                let p = launch_dir.join(crate::assemble::all_ptx_path(&m.file, *arch));
                write_if_changed(&p, out.ptx.as_bytes())?;
                keep.insert(p);
            }
        }
    }
    let json = serde_json::to_string_pretty(manifest).expect("the manifest serialises");
    finish(launch_dir, manifest, json.as_bytes(), &keep)
}

/// Writes the outputs of a prebuilt folder (`crate::prebuilt`): `files` by their path relative to
/// `launch_dir` (what the manifest embeds), `manifest_json` as shipped, and the generated module.
pub fn write_prebuilt<'a>(
    launch_dir: &Path,
    manifest: &Manifest,
    manifest_json: &[u8],
    files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<(), Error> {
    let mut keep: BTreeSet<PathBuf> = BTreeSet::new();
    for (path, bytes) in files {
        let p = launch_dir.join(path);
        write_if_changed(&p, bytes)?;
        keep.insert(p);
    }
    finish(launch_dir, manifest, manifest_json, &keep)
}

/// Removes the outputs not in `keep`, then writes the generated module and, last, the manifest.
fn finish(launch_dir: &Path, manifest: &Manifest, manifest_json: &[u8], keep: &BTreeSet<PathBuf>) -> Result<(), Error> {
    for dir in OUTPUT_DIRS {
        remove_stale(&launch_dir.join(dir), keep)?;
    }
    write_if_changed(&launch_dir.join("kernels.rs"), generate(manifest).as_bytes())?;
    write_if_changed(&launch_dir.join("manifest.json"), manifest_json)?;
    Ok(())
}

/// The folders under `OUT_DIR/launch` that hold embedded (or, `ptx-all`, written) outputs.
pub(crate) const OUTPUT_DIRS: [&str; 4] = ["cubin", "ptx", "ptx-all", "variants"];

/// Every file the generated module embeds, relative to `OUT_DIR/launch`: each module's cubins,
/// fallback PTX and extra PTX, and the same for each embedded tune variant.
pub fn embedded_files(m: &Manifest) -> BTreeSet<String> {
    let variant_modules = m.kernels.iter().flat_map(|k| &k.variants).filter_map(|v| v.module.as_ref());
    let mut files = BTreeSet::new();
    for module in m.modules.iter().chain(variant_modules) {
        files.extend(module.cubins.iter().map(|c| c.path.clone()));
        files.insert(module.ptx.clone());
        files.extend(module.extra_ptx.iter().map(|e| e.path.clone()));
    }
    files
}

/// The outputs of a build that compiled nothing (see `assemble::uncompiled`): an empty fallback
/// PTX per module and the generated module.
pub fn write_uncompiled(launch_dir: &Path, manifest: &Manifest) -> Result<(), Error> {
    for m in &manifest.modules {
        write_if_changed(&launch_dir.join(&m.ptx), b"")?;
    }
    write_if_changed(&launch_dir.join("kernels.rs"), generate(manifest).as_bytes()).map(drop)
}

/// One node of the generated module tree: the kernels of a file and/or the modules below it.
#[derive(Default)]
struct Node<'a> {
    /// The file whose kernels live here, with its module index.
    file: Option<(&'a str, usize)>,
    /// Indexes into `Manifest::kernels`.
    kernels: Vec<usize>,
    children: BTreeMap<&'a str, Node<'a>>,
}

/// The generated Rust module:
///
/// ```text
/// pub mod kernels { pub mod fill { pub static FILL_F16: launch::Kernel = ...; } pub mod sub { ... } }
/// pub use self::kernels::fill::FILL_F16;   // where no other file has a FILL_F16
/// pub static KERNELS: &[&launch::Kernel] = &[&kernels::fill::FILL_F16, ...];
/// ```
pub fn generate(m: &Manifest) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// @generated by launch-build {} from the kernels of `{}`. Do not edit.",
        env!("CARGO_PKG_VERSION"),
        m.package
    );
    let _ = writeln!(s, "// NVRTC {}, ptxas {}.\n", m.toolchain.compilers.nvrtc, m.toolchain.compilers.ptxas);
    // Each kernel's Rust parameter types, or why it is launched untyped.
    let sigs: Vec<Result<Vec<String>, String>> = m.kernels.iter().map(|k| typed::signature(k, &m.types)).collect();
    s.push_str(&typed::layout_assertions(m, &sigs));
    let mut root = Node::default();
    let mut module_of: HashMap<&str, usize> = HashMap::new();
    for (i, module) in m.modules.iter().enumerate() {
        module_of.insert(&module.file, i);
        emit_module(&mut s, &format!("__LAUNCH_MODULE_{i}"), module);
        let mut node = &mut root;
        for seg in module_segments(module) {
            node = node.children.entry(seg).or_default();
        }
        node.file = Some((&module.file, i));
    }
    // Each embedded tune variant is a module of its own.
    for (ki, k) in m.kernels.iter().enumerate() {
        for (vi, v) in k.variants.iter().enumerate() {
            if let Some(module) = &v.module {
                emit_module(&mut s, &variant_module(ki, vi), module);
            }
        }
    }
    for (ki, k) in m.kernels.iter().enumerate() {
        let Some(&mi) = module_of.get(k.file.as_str()) else { continue };
        let mut node = &mut root;
        for seg in module_segments(&m.modules[mi]) {
            node = node.children.entry(seg).or_default();
        }
        node.kernels.push(ki);
    }
    for (name, node) in &root.children {
        let _ = writeln!(
            s,
            "/// The kernels of each `.cu` file, one module per file and folder (`{}::sub::fill` for\n\
             /// `sub/fill.cu` in the kernel folder).\n#[allow(dead_code, unused_imports)]",
            name
        );
        emit(&mut s, (m, &sigs), name, node, 1);
    }
    for k in m.kernels.iter().filter(|k| k.rust_flat && module_of.contains_key(k.file.as_str())) {
        let _ = writeln!(s, "#[allow(unused_imports)]\npub use self::{};", k.rust_path);
    }
    let _ = writeln!(s, "/// Every kernel of this crate, in source order.\n#[allow(dead_code)]\npub static KERNELS: &[&::launch::Kernel] = &[");
    for (k, sig) in m.kernels.iter().zip(&sigs).filter(|(k, _)| module_of.contains_key(k.file.as_str())) {
        let _ = writeln!(s, "    &{}{},", k.rust_path, if sig.is_ok() { typed::KERNEL_SUFFIX } else { "" });
    }
    let _ = writeln!(s, "];");
    s
}

/// The static of variant `vi` of kernel `ki`'s module.
fn variant_module(ki: usize, vi: usize) -> String {
    format!("__LAUNCH_VARIANT_MODULE_{ki}_{vi}")
}

/// `static NAME: ::launch::Module = ...;` for `module`.
fn emit_module(s: &mut String, name: &str, module: &launch_schema::manifest::ModuleEntry) {
    let _ = writeln!(s, "#[allow(dead_code)]\nstatic {name}: ::launch::Module = ::launch::Module {{");
    let _ = writeln!(s, "    file: {:?},\n    cubins: &[", module.file);
    for c in &module.cubins {
        let _ = writeln!(
            s,
            "        ::launch::Cubin {{ arch: {}, bytes: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/launch/{}\")) }},",
            arch_expr(c.arch),
            c.path
        );
    }
    let _ = writeln!(s, "    ],\n    ptx_arch: Some({}),", arch_expr(module.ptx_arch));
    let _ = writeln!(s, "    ptx: include_str!(concat!(env!(\"OUT_DIR\"), \"/launch/{}\")),", module.ptx);
    let _ = writeln!(s, "    extra_ptx: &[");
    for e in &module.extra_ptx {
        let _ = writeln!(
            s,
            "        ::launch::PtxText {{ arch: {}, text: include_str!(concat!(env!(\"OUT_DIR\"), \"/launch/{}\")) }},",
            arch_expr(e.arch),
            e.path
        );
    }
    let _ = writeln!(s, "    ],\n}};\n");
}

/// `::launch::Arch::new(9, 0, ::launch::Variant::Specific)` for sm_90a: a constant expression, so
/// the statics carry the arch with no name to parse at run time.
fn arch_expr(a: Arch) -> String {
    let variant = match a.variant {
        Variant::Base => "Base",
        Variant::Specific => "Specific",
        Variant::Family => "Family",
    };
    format!("::launch::Arch::new({}, {}, ::launch::Variant::{variant})", a.major, a.minor)
}

/// `kernels::sub::fill` → `kernels`, `sub`, `fill` (a manifest without module paths, from an
/// older launch-build, gets one module per file under `kernels`).
fn module_segments(module: &launch_schema::manifest::ModuleEntry) -> Vec<&str> {
    if module.rust_module.is_empty() {
        vec![crate::assemble::ROOT_MODULE]
    } else {
        module.rust_module.split("::").collect()
    }
}

fn emit(s: &mut String, (m, sigs): (&Manifest, &[Result<Vec<String>, String>]), name: &str, node: &Node, depth: usize) {
    let indent = "    ".repeat(depth - 1);
    let up = "super::".repeat(depth);
    let _ = writeln!(s, "{indent}pub mod {name} {{");
    let inner = "    ".repeat(depth);
    if let Some((file, _)) = node.file {
        let _ = writeln!(s, "{inner}//! The kernels of `{file}`.");
    } else if depth > 1 {
        let _ = writeln!(s, "{inner}//! The kernels of the folder `{name}`.");
    }
    for &ki in &node.kernels {
        let k = &m.kernels[ki];
        let Some((_, mi)) = node.file else { continue };
        let sig = &sigs[ki];
        kernel_docs(s, &inner, k, sig);
        let host_threads = k.host_threads.unwrap_or(m.host_threads);
        // The variants embedded on at least one arch (one refused everywhere has no module).
        let variants: Vec<(usize, &launch_schema::manifest::VariantEntry)> =
            k.variants.iter().enumerate().filter(|(_, v)| v.module.is_some()).collect();
        let variants_static = format!("{}__VARIANTS", k.rust_name);
        // A typed kernel's `Typed` static has the name; its `Kernel` is beside it.
        let plain = match sig {
            Ok(types) => typed::emit_typed(s, &inner, k, types),
            Err(_) => k.rust_name.clone(),
        };
        let _ = writeln!(s, "{inner}pub static {plain}: ::launch::Kernel = ::launch::Kernel {{");
        let demangled = k.qualified.strip_prefix(&format!("{}::", k.file)).unwrap_or(&k.display_name);
        let fields = KernelFields {
            name: &k.name,
            demangled,
            line: k.line,
            module: format!("{up}__LAUNCH_MODULE_{mi}"),
            contract: k.contract,
            host_threads,
            arches: &k.arches,
            variants: if variants.is_empty() { "&[]".to_string() } else { format!("&{variants_static}") },
            params: k.params.as_deref(),
        };
        kernel_fields(s, &format!("{inner}    "), &fields);
        let _ = writeln!(s, "{inner}}};");
        if variants.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "{inner}/// The tune variants of `{}` (`[package.metadata.launch.tune]`): reach them through `{}.variants()`.\n{inner}#[doc(hidden)]\n{inner}pub static {variants_static}: [::launch::Kernel; {}] = [",
            k.display_name.replace('`', "'"),
            k.rust_name,
            variants.len()
        );
        for (vi, v) in variants {
            let _ = writeln!(s, "{inner}    ::launch::Kernel {{");
            let fields = KernelFields {
                name: &v.name,
                demangled: &v.name,
                line: k.line,
                module: format!("{up}{}", variant_module(ki, vi)),
                contract: Some(v.contract),
                host_threads,
                arches: &v.arches,
                variants: "&[]".to_string(),
                params: k.params.as_deref(),
            };
            kernel_fields(s, &format!("{inner}        "), &fields);
            let _ = writeln!(s, "{inner}    }},");
        }
        let _ = writeln!(s, "{inner}];");
    }
    for (child, n) in &node.children {
        emit(s, (m, sigs), child, n, depth + 1);
    }
    let _ = writeln!(s, "{indent}}}");
}

/// The rustdoc of kernel `k`'s static: where it is, its contract, its resources per arch, and
/// whether it launches typed.
fn kernel_docs(
    s: &mut String,
    inner: &str,
    k: &launch_schema::manifest::KernelEntry,
    sig: &Result<Vec<String>, String>,
) {
    let _ = writeln!(
        s,
        "{inner}/// `{}` ({}:{}{}): {}.",
        k.display_name.replace('`', "'"),
        k.file,
        k.line,
        match &k.origin {
            Origin::Definition => String::new(),
            Origin::Macro { name } => format!(", generated by macro `{name}`"),
            Origin::Header { file, line } => format!(", the `#include` of {file}, which defines it at line {line}"),
            Origin::NotFound => ", not found in the file or its headers: line 1 stands for the file".to_string(),
        },
        describe(k.contract)
    );
    if crate::names::is_hashed(&k.name, &k.rust_name) {
        let _ = writeln!(
            s,
            "{inner}///\n{inner}/// Named by its function and a hash of its symbol `{}`: the name from its signature would be \
             longer than {} characters.\n{inner}///",
            k.name,
            crate::names::RUST_NAME_MAX
        );
    }
    for a in &k.arches {
        let r = &a.resources;
        let _ = writeln!(
            s,
            "{inner}/// {}: {} registers, {} bytes spill stores, {} bytes spill loads, {} bytes stack frame.",
            a.arch, r.registers, r.spill_stores, r.spill_loads, r.stack_frame
        );
    }
    for x in &k.missing {
        let _ = writeln!(s, "{inner}/// Not compiled for {}: {}.", x.arch, x.reason);
    }
    match sig {
        Ok(_) => {
            let _ = writeln!(
                s,
                "{inner}///\n{inner}/// Typed: `{}.launch(&loaded, &stream, cfg, (..))` takes one argument per parameter, \
                 checked when this crate compiles (the parameters: [`{}`](enum@{})).",
                k.rust_name, k.rust_name, k.rust_name
            );
        }
        Err(why) => {
            let _ = writeln!(s, "{inner}///\n{inner}/// Untyped (launch it through `LoadedKernel::builder`): {why}.");
        }
    }
}

/// The fields of one `::launch::Kernel` literal.
struct KernelFields<'a> {
    name: &'a str,
    demangled: &'a str,
    line: u32,
    /// Path of its module's static from where the literal is.
    module: String,
    contract: Option<Contract>,
    host_threads: u32,
    arches: &'a [launch_schema::manifest::KernelArch],
    /// `&[]` or `&NAME__VARIANTS`.
    variants: String,
    /// The kernel's parameters (a variant has its kernel's).
    params: Option<&'a [launch_schema::manifest::Param]>,
}

/// The fields of a `::launch::Kernel` literal, each line starting with `indent`.
fn kernel_fields(s: &mut String, indent: &str, k: &KernelFields) {
    let _ = writeln!(
        s,
        "{indent}name: {:?},\n{indent}demangled: {:?},\n{indent}line: {},\n{indent}module: &{},",
        k.name, k.demangled, k.line, k.module
    );
    let _ = writeln!(s, "{indent}contract: {},", contract_expr(k.contract));
    let _ = writeln!(s, "{indent}host_threads: {},\n{indent}resources: &[", k.host_threads);
    for a in k.arches {
        let _ = writeln!(
            s,
            "{indent}    ::launch::ArchResources {{ arch: {}, resources: {}, contract: {} }},",
            arch_expr(a.arch),
            a.resources.rust_literal(),
            contract_expr(a.contract_or(k.contract))
        );
    }
    let _ = writeln!(s, "{indent}],\n{indent}variants: {},", k.variants);
    let _ = writeln!(s, "{indent}params: {},", typed::params_expr(k.params));
}

fn describe(c: Option<Contract>) -> String {
    match c {
        None => "unbounded (no launch contract)".to_string(),
        Some(c) => {
            let mut parts = Vec::new();
            if let Some(t) = c.threads {
                parts.push(format!("{} {t} threads", if c.exact { "exactly" } else { "at most" }));
            }
            if let Some(b) = c.min_blocks {
                parts.push(format!("{b} blocks/SM wanted"));
            }
            if let Some(r) = c.max_regs {
                parts.push(format!("at most {r} registers"));
            }
            format!("contract: {}", parts.join(", "))
        }
    }
}

fn contract_expr(c: Option<Contract>) -> String {
    match c {
        None => "None".to_string(),
        Some(c) => format!(
            "Some(::launch::Contract {{ source: ::launch::ContractSource::{}, threads: {:?}, min_blocks: {:?}, max_regs: {:?}, exact: {} }})",
            match c.source {
                ContractSource::Annotation => "Annotation",
                ContractSource::LaunchBounds => "LaunchBounds",
            },
            c.threads,
            c.min_blocks,
            c.max_regs,
            c.exact
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each arch is written as the constant it is, its variant by name: the generated statics
    /// parse nothing at run time, and every known arch gets its own expression.
    #[test]
    fn embedded_arches_are_constant_expressions() {
        let expr = |name: &str| arch_expr(name.parse().unwrap());
        assert_eq!(expr("sm_90"), "::launch::Arch::new(9, 0, ::launch::Variant::Base)");
        assert_eq!(expr("sm_90a"), "::launch::Arch::new(9, 0, ::launch::Variant::Specific)");
        assert_eq!(expr("sm_121f"), "::launch::Arch::new(12, 1, ::launch::Variant::Family)");
        let all: BTreeSet<String> = launch::KNOWN_ARCHES.iter().map(|a| expr(a)).collect();
        assert_eq!(all.len(), launch::KNOWN_ARCHES.len());
    }
}

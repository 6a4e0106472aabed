//! From compiler outputs to the manifest: which kernels exist, where they are defined, their
//! contracts (read back from the PTX) and their per-arch resources (from ptxas).

mod params;
mod stage;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use launch::{Arch, Contract, ContractSource};

use crate::compile::{sanitize, FileOutputs};
use crate::config::Config;
use crate::error::{Diagnostic, Error};
use crate::names::{base_name, demangle, rust_name, rust_name_with_params, source_name, widen_hashes};
use crate::plan::Plan;
use crate::warnings::Warnings;
mod locate;

use crate::{ptx, source, stack};
use launch_schema::manifest::{
    CubinEntry, KernelArch, KernelEntry, Manifest, MissingArch, ModuleEntry, Origin, PtxEntry, Toolchain,
    ToolchainInfo, VERSION,
};
pub use stage::{run, Assembled};

/// Output file names, relative to `OUT_DIR/launch`.
pub fn cubin_path(file: &str, arch: Arch) -> String {
    format!("cubin/{}.{arch}.cubin", sanitize(file))
}

/// Fallback PTX path, relative to `OUT_DIR/launch`.
pub fn ptx_path(file: &str, arch: Arch) -> String {
    format!("ptx/{}.{arch}.ptx", sanitize(file))
}

/// Path of a file's PTX for one arch under `ptx-all/` (`LAUNCH_ALL_PTX`), relative to
/// `OUT_DIR/launch`.
pub fn all_ptx_path(file: &str, arch: Arch) -> String {
    format!("ptx-all/{}.{arch}.ptx", sanitize(file))
}

/// The parent module of every file's module in the generated code.
pub const ROOT_MODULE: &str = "kernels";

/// The generated module of each file, from the include site: `kernels/sub/fill.cu` (kernel folder
/// `kernels`) → `kernels::sub::fill`. One module per path segment, so the Rust tree mirrors the
/// folder; a segment becomes a snake_case identifier (`fill-ops` → `fill_ops`, `2d` → `k_2d`, a
/// keyword gets a trailing `_`), and where two different segments of one folder give the same
/// identifier (`a-b.cu`, `a_b.cu`) the one written as that identifier keeps it and the others get
/// `_2`, `_3`, ... in sorted order. A file and a folder of the same name (`sub.cu`, `sub/`) share
/// one module.
pub fn module_paths(kernel_dir: &str, files: &[&str]) -> Vec<String> {
    let prefix = format!("{}/", kernel_dir.trim_end_matches('/'));
    // (parent path, segment as written) → identifier; (parent path) → identifiers taken.
    let mut named: HashMap<(String, String), String> = HashMap::new();
    let mut taken: HashMap<String, BTreeSet<String>> = HashMap::new();
    let rel_of = |f: &str| -> String {
        let rel = f.strip_prefix(&prefix).unwrap_or(f);
        rel.strip_suffix(".cu").unwrap_or(rel).to_string()
    };
    // Paths already made of identifiers claim their names first.
    let mut sorted: Vec<&str> = files.to_vec();
    sorted.sort_by_cached_key(|f| {
        let rel = rel_of(f);
        (rel.split('/').filter(|seg| ident(seg) != *seg).count(), f.to_string())
    });
    let mut path_of: HashMap<&str, String> = HashMap::new();
    for f in sorted {
        let rel = rel_of(f);
        let mut parent = ROOT_MODULE.to_string();
        for seg in rel.split('/') {
            let key = (parent.clone(), seg.to_string());
            let id = match named.get(&key) {
                Some(id) => id.clone(),
                None => {
                    let base = ident(seg);
                    let used = taken.entry(parent.clone()).or_default();
                    let mut id = base.clone();
                    let mut n = 2;
                    while used.contains(&id) {
                        id = format!("{base}_{n}");
                        n += 1;
                    }
                    used.insert(id.clone());
                    named.insert(key, id.clone());
                    id
                }
            };
            parent = format!("{parent}::{id}");
        }
        path_of.insert(f, parent);
    }
    files.iter().map(|f| path_of.get(f).cloned().unwrap_or_default()).collect()
}

/// A path segment as a snake_case module identifier.
fn ident(seg: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
        "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
        "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract", "become",
        "box", "do", "final", "gen", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
    ];
    let mut out: String =
        seg.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) || out.chars().all(|c| c == '_') {
        out = format!("k_{out}");
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Builds the manifest: each file's module and kernels, each kernel's settings resolved by the
/// plan. Its warnings (files not compiled, compiler warnings) go to `warnings`, which the caller
/// turns into the manifest's list. Fails on an `@launch` the PTX disagrees with, and on two
/// kernels of one file whose generated Rust names collide even with their parameter types
/// spelled out.
pub fn manifest(
    plan: &Plan,
    toolchain: ToolchainInfo,
    files: &[FileOutputs],
    warnings: &mut Warnings,
) -> Result<Manifest, Error> {
    let config = &plan.config;
    let mut modules = Vec::new();
    let mut kernels = Vec::new();
    let mut unreached = Vec::new();
    let mut clashes = Vec::new();
    let paths = module_paths(&plan.kernel_folder(), &files.iter().map(FileOutputs::name).collect::<Vec<_>>());
    for (f, rust_module) in files.iter().zip(paths) {
        if f.outputs.is_empty() {
            if !config.arches.is_empty() {
                warnings.file_warning(format!(
                    "{}: not compiled: its `arch` setting [{}] shares no arch with the build's [{}]",
                    f.name(),
                    list(f.file.settings.arch.as_deref().unwrap_or_default()),
                    list(&config.arches)
                ));
            }
            continue;
        }
        for ((arch, out), fresh) in f.outputs.iter().zip(&f.fresh) {
            let ptxas = (out.report.diagnostics.iter())
                .filter(|d| matches!(d.severity, crate::ptxas_log::Severity::Warning))
                .map(|d| d.raw.trim().to_string())
                .collect();
            warnings.compiler(f.name(), *arch, &out.nvrtc_log, ptxas, *fresh);
        }
        let found = found_in(f, &mut unreached);
        modules.push(module_entry(f, &found, &rust_module));
        let first_kernel = kernels.len();
        let mut finder = Locator::new(config, f);
        let lists = params::PtxLists::of(f);
        for (name, found) in found {
            kernels.push(kernel_entry(config, (f, &lists), &mut finder, name, found, &mut unreached));
        }
        clashes.extend(name_in_module(&mut kernels[first_kernel..], &rust_module));
    }
    if !unreached.is_empty() {
        return Err(Error::Kernels(unreached));
    }
    if !clashes.is_empty() {
        return Err(Error::Kernels(clashes));
    }
    kernels.sort_by(|a, b| (&a.file, a.line, a.col, &a.name).cmp(&(&b.file, b.line, b.col, &b.name)));
    finish_names(&mut kernels);
    // Per-kernel settings (by name, qualified name or pattern) reach the generated statics, so
    // `Kernel::block_size()` launches at the size `report` and `check` evaluate.
    let unused_kernel_settings = plan.settle_kernels(&mut kernels)?;

    // Resolved here, where the toolchain is known: `min-driver`, else the toolchain's own version.
    let min_driver = config.min_driver.or_else(|| crate::compat::release_version(&toolchain.compilers.nvrtc));
    Ok(Manifest {
        schema: VERSION,
        package: config.package.clone(),
        min_driver: min_driver.map(|v| v.to_string()),
        host: Vec::new(),
        toolchain,
        arches: config.arches.clone(),
        host_threads: config.host_threads,
        modules,
        kernels,
        warnings: Vec::new(),
        unused_kernel_settings,
        types: config.types.clone(),
    })
}

/// Why an uncompiled build's kernels have no parameters (the generator types them
/// `launch::signature::Uncompiled`, so the crate's documentation builds).
pub(crate) const UNCOMPILED: &str = "no toolchain compiled it (a documentation build)";

/// The manifest of a build that compiles nothing (docs.rs: no network, no toolchain): every
/// kernel found in the sources (`texts`, one per planned file), without cubins, so the crate's
/// documentation builds. Each file's module names its empty fallback PTX.
pub fn uncompiled(plan: &Plan, texts: &[String]) -> Manifest {
    let config = &plan.config;
    let arch = config.arches[0];
    let names: Vec<&str> = plan.files.iter().map(|f| f.source.file.as_str()).collect();
    let mut modules = Vec::new();
    let mut kernels = Vec::new();
    for ((f, text), module) in plan.files.iter().zip(texts).zip(module_paths(&plan.kernel_folder(), &names)) {
        let file = &f.source.file;
        let mut seen = BTreeSet::new();
        for d in source::kernels(text, &source::scan(text)) {
            // A scan can see one name twice (`#if` branches); the compiler keeps one.
            if !seen.insert(d.name.clone()) {
                continue;
            }
            let rust_name = rust_name(&d.name, &d.name);
            kernels.push(KernelEntry {
                rust_path: format!("{module}::{rust_name}"),
                rust_name,
                rust_flat: false,
                qualified: format!("{file}::{}", d.name),
                display_name: d.name.clone(),
                name: d.name,
                file: file.clone(),
                line: d.line,
                col: d.col,
                origin: Origin::Definition,
                contract: None,
                arches: Vec::new(),
                missing: Vec::new(),
                host_threads: None,
                dynamic_smem: None,
                max_spill_bytes: None,
                variants: Vec::new(),
                params: None,
                params_unknown: Some(UNCOMPILED.into()),
            });
        }
        modules.push(ModuleEntry {
            file: file.clone(),
            ptx: ptx_path(file, arch),
            ptx_arch: arch,
            ptx_version: String::new(),
            cubins: Vec::new(),
            extra_ptx: Vec::new(),
            rust_module: module,
            ptxas_flags: f.settings.ptxas_flags.clone(),
        });
    }
    finish_names(&mut kernels);
    // The documentation still builds where a key is ambiguous; a real build refuses it.
    let unused_kernel_settings = plan.settle_kernels(&mut kernels).unwrap_or_default();
    Manifest {
        schema: VERSION,
        package: config.package.clone(),
        toolchain: ToolchainInfo {
            compilers: Toolchain { nvrtc: "none".into(), ptxas: "none".into() },
            description: "DOCS_RS: kernels not compiled".into(),
        },
        arches: config.arches.clone(),
        host_threads: config.host_threads,
        modules,
        kernels,
        warnings: Vec::new(),
        min_driver: None,
        host: Vec::new(),
        unused_kernel_settings,
        types: config.types.clone(),
    }
}

/// One kernel of a file, as its outputs show it: its directives in the lowest arch's PTX that has
/// it, the arches whose PTX has it, and its per-arch results from ptxas.
#[derive(Default)]
struct Found {
    directives: Option<ptx::EntryDirectives>,
    /// Every arch's directives, lowest first: CUDA's own bounds may differ per arch.
    by_arch: Vec<(Arch, ptx::EntryDirectives)>,
    in_ptx: Vec<Arch>,
    arches: Vec<KernelArch>,
}

/// The kernels of `f`'s outputs by symbol name. An `@launch` whose contract did not reach the PTX
/// is an error in `unreached` (once per annotation, not per arch).
fn found_in(f: &FileOutputs, unreached: &mut Vec<Diagnostic>) -> BTreeMap<String, Found> {
    // By name, so that a module of many kernels is not searched once per kernel.
    let annotation_of: HashMap<&str, &crate::contract::Annotation> =
        f.annotations.iter().map(|a| (a.kernel.as_str(), a)).collect();
    let mut disagreeing = BTreeSet::new();
    let mut found: BTreeMap<String, Found> = BTreeMap::new();
    for (arch, out) in &f.outputs {
        for d in ptx::entries(&out.ptx) {
            let base = source_name(&d.name);
            let annotation = annotation_of.get(d.name.as_str()).or_else(|| annotation_of.get(base.as_str()));
            if let Some(a) = annotation {
                // Read the contract back: it must be in the PTX ptxas assembled. The source scan
                // refuses the bounds it can see; one it cannot (a macro that expands to
                // `__launch_bounds__`) comes after the one @launch inserts and wins, and is caught
                // here.
                let reached = d.maxntid == Some([a.threads, 1, 1])
                    && d.reqntid.is_none()
                    && d.minnctapersm == a.min_blocks
                    && (a.max_regs.is_none() || d.maxnreg == a.max_regs);
                if !reached && disagreeing.insert((a.line, a.col)) {
                    unreached.push(Diagnostic::error(
                        f.name(),
                        a.line,
                        a.col,
                        format!(
                            "{} of kernel `{}` disagrees with the bounds the kernel was compiled with: its PTX \
                             for {arch} has {}. A __launch_bounds__ or __maxnreg__ that the source does not \
                             show (written through a macro?) overrides it; declare the contract once",
                            a.written(),
                            a.kernel,
                            directives(&d)
                        ),
                    ));
                }
            }
            let entry = found.entry(d.name.clone()).or_default();
            entry.in_ptx.push(*arch);
            entry.by_arch.push((*arch, d.clone()));
            entry.directives.get_or_insert(d);
        }
        let mut stacks = stack::dynamic_stacks(&out.ptx, &out.report);
        for e in &out.report.entries {
            let dynamic_stack = stacks.remove(&e.name);
            found.entry(e.name.clone()).or_default().arches.push(KernelArch {
                arch: *arch,
                resources: stack::as_the_driver_reports(e.resources, dynamic_stack.as_ref()),
                ptxas_lines: e.lines.clone(),
                dynamic_stack,
                contract: None,
            });
        }
    }
    found
}

/// The module of `f`: its fallback PTX (the lowest arch's), a cubin per arch, and the lowest PTX
/// that has each kernel the fallback lacks.
fn module_entry(f: &FileOutputs, found: &BTreeMap<String, Found>, rust_module: &str) -> ModuleEntry {
    let (lowest, lowest_out) = &f.outputs[0];
    let extra: BTreeSet<Arch> =
        found.values().filter_map(|k| k.in_ptx.iter().min().copied()).filter(|a| a != lowest).collect();
    let file = f.name();
    ModuleEntry {
        file: file.to_string(),
        ptx: ptx_path(file, *lowest),
        ptx_arch: *lowest,
        ptx_version: ptx::version(&lowest_out.ptx).unwrap_or("").to_string(),
        cubins: f.outputs.iter().map(|(a, _)| CubinEntry { arch: *a, path: cubin_path(file, *a) }).collect(),
        extra_ptx: f
            .outputs
            .iter()
            .filter(|(a, _)| extra.contains(a))
            .map(|(a, out)| PtxEntry {
                arch: *a,
                path: ptx_path(file, *a),
                version: ptx::version(&out.ptx).unwrap_or("").to_string(),
            })
            .collect(),
        rust_module: rust_module.to_string(),
        ptxas_flags: f.file.settings.ptxas_flags.clone(),
    }
}

/// Where the kernels of one file are: their definitions, else the macro invocations that generate
/// them, else the crate's headers the file includes. The last two are read only for a kernel
/// with no definition of its own name in the file.
struct Locator<'f> {
    config: &'f Config,
    f: &'f FileOutputs<'f>,
    definitions: HashMap<&'f str, &'f source::KernelDef>,
    /// The kernels an `@launch` annotates, by name.
    annotated: BTreeSet<&'f str>,
    invocations: Option<(source::Scanned, locate::Invocations)>,
    headers: Option<HashMap<String, (u32, u32, String, u32)>>,
}

impl<'f> Locator<'f> {
    fn new(config: &'f Config, f: &'f FileOutputs<'f>) -> Locator<'f> {
        let mut definitions = HashMap::new();
        for d in f.definitions {
            definitions.entry(d.name.as_str()).or_insert(d);
        }
        let annotated = f.annotations.iter().map(|a| a.kernel.as_str()).collect();
        Locator { config, f, definitions, annotated, invocations: None, headers: None }
    }

    /// `line`, `col` and origin of the kernel `name` (symbol) whose source name is `base`.
    fn locate(&mut self, name: &str, base: &str) -> (u32, u32, Origin) {
        if let Some(d) = self.definitions.get(name).or_else(|| self.definitions.get(base)) {
            return (d.line, d.col, Origin::Definition);
        }
        let text = self.f.text;
        let (scanned, inv) = self.invocations.get_or_insert_with(|| {
            let scanned = source::scan(text);
            let inv = locate::Invocations::new(&scanned);
            (scanned, inv)
        });
        if let Some(i) = inv.find(base, text, scanned) {
            return (i.line, i.col, Origin::Macro { name: i.macro_name });
        }
        let (config, f) = (self.config, self.f);
        match self.headers.get_or_insert_with(|| from_headers(config, f)).get(base) {
            Some((line, col, file, at)) => (*line, *col, Origin::Header { file: file.clone(), line: *at }),
            None => (1, 1, Origin::NotFound),
        }
    }
}

/// The manifest entry of kernel `name` of `f`; its settings are the plan's to fill in.
/// The manifest entry of kernel `name`; a signature the PTX contradicts is an error in `errors`.
fn kernel_entry(
    config: &Config,
    (f, lists): (&FileOutputs, &params::PtxLists<'_>),
    at: &mut Locator,
    name: String,
    found: Found,
    errors: &mut Vec<Diagnostic>,
) -> KernelEntry {
    let demangled = demangle(&name);
    let base = base_name(&demangled);
    let (line, col, origin) = at.locate(&name, base);
    let (params, params_unknown) = match params::recover(f, lists, &name) {
        params::Recovered::Params(p) => (Some(p), None),
        params::Recovered::Unknown(why) => (None, Some(why)),
        params::Recovered::Mismatch(how) => {
            errors.push(Diagnostic::error(
                f.name(),
                line,
                col,
                format!(
                    "the parameters of kernel `{demangled}` as the compiler names them disagree with its compiled code: {how}"
                ),
            ));
            (None, Some(how))
        }
    };
    // The contract as it reached the PTX; declared by @launch or by CUDA's own bounds.
    let annotated = at.annotated.contains(name.as_str()) || at.annotated.contains(base);
    let source = if annotated { ContractSource::Annotation } else { ContractSource::LaunchBounds };
    let contract_of = |d: &ptx::EntryDirectives| {
        d.contract(source).map(|mut c| {
            // @launch means exactly `threads` threads per CTA (seeds/004).
            c.exact |= annotated;
            c
        })
    };
    let contract = found.directives.as_ref().and_then(contract_of);
    let mut arches = found.arches.clone();
    for ka in &mut arches {
        // An arch whose PTX has other bounds than the lowest arch's (`__launch_bounds__` of a
        // `__CUDA_ARCH__`-dependent size) keeps its own; no bound there is a contract of none.
        let Some((_, d)) = found.by_arch.iter().find(|(a, _)| *a == ka.arch) else { continue };
        let own = contract_of(d);
        if own != contract {
            let none = Contract { source, threads: None, min_blocks: None, max_regs: None, exact: false };
            ka.contract = Some(own.unwrap_or(none));
        }
    }
    let missing = config
        .arches
        .iter()
        .filter(|a| !found.arches.iter().any(|k| k.arch == **a) && !found.in_ptx.contains(a))
        .map(|a| MissingArch {
            arch: *a,
            reason: if f.outputs.iter().any(|(o, _)| o == a) {
                "absent from the PTX".to_string()
            } else {
                format!("file setting arch = [{}]", list(f.file.settings.arch.as_deref().unwrap_or_default()))
            },
        })
        .collect();
    KernelEntry {
        rust_name: rust_name(&name, &demangled),
        rust_path: String::new(),
        rust_flat: false,
        qualified: format!("{}::{demangled}", f.name()),
        display_name: demangled,
        name,
        file: f.name().to_string(),
        line,
        col,
        origin,
        contract,
        arches,
        missing,
        host_threads: None,
        dynamic_smem: None,
        max_spill_bytes: None,
        variants: Vec::new(),
        params,
        params_unknown,
    }
}

/// Kernels defined in the crate's headers that `f` includes: name → (line and column of the
/// `#include` in `f`, the header relative to the crate root, the line in the header). Read once per
/// file, and only for a file with a kernel found neither defined nor generated in it.
fn from_headers(config: &Config, f: &FileOutputs) -> HashMap<String, (u32, u32, String, u32)> {
    let root = config.root();
    let include_dirs = config.include_path();
    let here = f.file.source.path.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
    let mut out = HashMap::new();
    for (i, line) in f.text.lines().enumerate() {
        let Some((name, quoted)) = source::includes(line).into_iter().next() else { continue };
        let dirs = quoted.then_some(&here).into_iter().chain(include_dirs.iter());
        let Some(header) = dirs.map(|d| d.join(&name)).find(|p| p.is_file()) else { continue };
        let col = line.find('#').map_or(1, |c| c as u32 + 1);
        let at = (i as u32).saturating_add(1);
        let mut all = vec![header.clone()];
        // Every header was looked at before the compile (`source::dependencies`).
        all.extend(source::dependencies(&header, &include_dirs, root).unwrap_or_default());
        for h in all {
            let Some(text) = crate::input::read(&h).ok().and_then(|b| String::from_utf8(b).ok()) else { continue };
            let rel = crate::input::shown(&h, root);
            let scanned = source::scan(&text);
            for d in source::kernels(&text, &scanned) {
                out.entry(d.name).or_insert_with(|| (at, col, rel.clone(), d.line));
            }
            // Names a header's macro invocations generate.
            let inv = locate::Invocations::new(&scanned);
            for (word, (_, off)) in inv.arguments() {
                out.entry(word.clone()).or_insert_with(|| (at, col, rel.clone(), scanned.lines.line(*off)));
            }
        }
    }
    out
}

/// Crate-wide naming: a plain name shared by kernels of several files is shown qualified
/// (`kernels/a.cu::fill`); a Rust name shared by several files has no flat re-export (its module
/// path still names it).
pub fn finish_names(kernels: &mut [KernelEntry]) {
    // Hashed names of distinct symbols in different files, told apart too.
    widen_hashes(kernels);
    for k in kernels.iter_mut() {
        if let Some((module, _)) = k.rust_path.rsplit_once("::") {
            k.rust_path = format!("{module}::{}", k.rust_name);
        }
    }
    let mut display_count: HashMap<String, usize> = HashMap::new();
    let mut rust_count: HashMap<String, usize> = HashMap::new();
    for k in kernels.iter() {
        *display_count.entry(k.display_name.clone()).or_default() += 1;
        *rust_count.entry(k.rust_name.clone()).or_default() += 1;
    }
    for k in kernels.iter_mut() {
        if display_count.get(&k.display_name).copied().unwrap_or(0) > 1 {
            k.display_name = k.qualified.clone();
        }
        // `KERNELS` is the list itself.
        k.rust_flat = rust_count.get(&k.rust_name).copied().unwrap_or(0) == 1 && k.rust_name != "KERNELS";
    }
}

/// Gives the kernels of one file distinct Rust names: the name without parameters
/// (`void tmpl<8>(int*)` → `TMPL_8`) where that is unique in the file, else with them
/// (`k(float*)`, `k(int*)` → `K_FLOAT`, `K_INT`: C++ overloads). Returns an error per kernel
/// whose name still collides, and sets `rust_path`.
fn name_in_module(kernels: &mut [KernelEntry], module: &str) -> Vec<Diagnostic> {
    let mut count: HashMap<String, usize> = HashMap::new();
    for k in kernels.iter() {
        *count.entry(k.rust_name.clone()).or_default() += 1;
    }
    for k in kernels.iter_mut().filter(|k| count.get(&k.rust_name).copied().unwrap_or(0) > 1) {
        k.rust_name = rust_name_with_params(&k.name, &k.display_name);
    }
    widen_hashes(kernels);
    for k in kernels.iter_mut() {
        k.rust_path = format!("{module}::{}", k.rust_name);
    }
    let mut seen: HashMap<&str, &KernelEntry> = HashMap::new();
    let mut clashes = Vec::new();
    for k in kernels.iter() {
        if let Some(prev) = seen.insert(&k.rust_name, k) {
            clashes.push(Diagnostic::error(
                &k.file,
                k.line,
                k.col,
                format!(
                    "kernel `{}` would be generated as `{}`, like `{}` at line {} of the same file: two kernels \
                     of one file need distinct Rust names; rename one of them",
                    k.display_name, k.rust_path, prev.display_name, prev.line
                ),
            ));
        }
    }
    clashes
}

/// `[sm_80, sm_90]` without the brackets.
fn list(arches: &[Arch]) -> String {
    arches.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
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

#[cfg(test)]
mod tests;

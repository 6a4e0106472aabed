//! From compiler outputs to the manifest: which kernels exist, where they are defined, their
//! contracts (read back from the PTX) and their per-arch resources (from ptxas).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use launch::{Arch, ContractSource};

use crate::compile::{sanitize, JobOutput, SourceFile};
use crate::config::Config;
use crate::error::{Diagnostic, Error};
use crate::manifest::{
    CubinEntry, KernelArch, KernelEntry, Manifest, MissingArch, ModuleEntry, Origin, PtxEntry, ToolchainInfo, VERSION,
};
use crate::names::{base_name, demangle, rust_name, rust_name_with_params, source_name};
use crate::{locate, ptx, source};

/// All outputs of one source file, by arch (lowest first).
pub struct FileOutputs<'a> {
    /// The file.
    pub source: &'a SourceFile,
    /// Its text as the user wrote it (to find the macro invocations that generate kernels).
    pub text: &'a str,
    /// Its `@launch` annotations.
    pub annotations: &'a [crate::contract::Annotation],
    /// Its `__global__` definitions, as scanned before compiling (for `file:line`).
    pub definitions: &'a [source::KernelDef],
    /// The file's own `arch` setting, when it restricts the crate's arches.
    pub arch_setting: Option<Vec<Arch>>,
    /// One output per arch the file is compiled for, lowest first.
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

/// Builds the manifest. Fails on two kernels of one file whose generated Rust names collide even
/// with their parameter types spelled out.
pub fn manifest(config: &Config, toolchain: ToolchainInfo, files: &[FileOutputs]) -> Result<Manifest, Error> {
    let mut modules = Vec::new();
    let mut kernels = Vec::new();
    let mut warnings = Vec::new();
    let mut unreached = Vec::new();
    let mut clashes = Vec::new();
    let kernel_dir = config.kernel_dir.display().to_string().replace('\\', "/");
    let paths = module_paths(&kernel_dir, &files.iter().map(|f| f.source.file.as_str()).collect::<Vec<_>>());
    for (f, rust_module) in files.iter().zip(paths) {
        let Some((lowest, lowest_out)) = f.outputs.first() else {
            if !config.arches.is_empty() {
                warnings.push(format!(
                    "{}: not compiled: its `arch` setting [{}] shares no arch with the build's [{}]",
                    f.source.file,
                    list(f.arch_setting.as_deref().unwrap_or_default()),
                    list(&config.arches)
                ));
            }
            continue;
        };

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

        // Kernel name → (directives from the lowest arch's PTX, arches whose PTX has it, per-arch results).
        #[allow(clippy::type_complexity)]
        let mut found: BTreeMap<String, (Option<ptx::EntryDirectives>, Vec<Arch>, Vec<KernelArch>)> = BTreeMap::new();
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
                        unreached.push(Diagnostic::error(
                            &f.source.file,
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
                entry.1.push(*arch);
                entry.0.get_or_insert(d);
            }
            for e in &out.report.entries {
                found.entry(e.name.clone()).or_default().2.push(KernelArch {
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

        // Kernels the fallback PTX lacks get the lowest PTX that has them.
        let extra: BTreeSet<Arch> =
            found.values().filter_map(|(_, in_ptx, _)| in_ptx.iter().min().copied()).filter(|a| a != lowest).collect();
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
            extra_ptx: f
                .outputs
                .iter()
                .filter(|(a, _)| extra.contains(a))
                .map(|(a, out)| PtxEntry {
                    arch: *a,
                    path: ptx_path(&f.source.file, *a),
                    version: ptx::version(&out.ptx).unwrap_or("").to_string(),
                })
                .collect(),
            rust_module: rust_module.clone(),
        });

        // Built only when a kernel has no definition of its own name in the file.
        let mut invocations: Option<(source::Scanned, locate::Invocations)> = None;
        let mut headers: Option<HashMap<String, (u32, u32, String, u32)>> = None;
        let first_kernel = kernels.len();
        for (name, (directives, in_ptx, arches)) in found {
            let demangled = demangle(&name);
            let base = base_name(&demangled);
            let (line, col, origin) = match def_of.get(name.as_str()).or_else(|| def_of.get(base)) {
                Some(d) => (d.line, d.col, Origin::Definition),
                None => {
                    let (scanned, inv) = invocations.get_or_insert_with(|| {
                        let scanned = source::scan(f.text);
                        let inv = locate::Invocations::new(&scanned);
                        (scanned, inv)
                    });
                    match inv.find(base, f.text, scanned) {
                        Some(i) => (i.line, i.col, Origin::Macro { name: i.macro_name }),
                        None => {
                            let headers = headers.get_or_insert_with(|| from_headers(config, f));
                            match headers.get(base) {
                                Some((line, col, file, at)) => {
                                    (*line, *col, Origin::Header { file: file.clone(), line: *at })
                                }
                                None => (1, 1, Origin::NotFound),
                            }
                        }
                    }
                }
            };
            // The contract as it reached the PTX; declared by @launch or by CUDA's own bounds.
            let annotated = annotation_of.contains_key(name.as_str()) || annotation_of.contains_key(base);
            let source = if annotated { ContractSource::Annotation } else { ContractSource::LaunchBounds };
            let contract = directives.and_then(|d| d.contract(source)).map(|mut c| {
                // @launch means exactly `threads` threads per CTA (seeds/004).
                c.exact |= annotated;
                c
            });
            let missing = config
                .arches
                .iter()
                .filter(|a| !arches.iter().any(|k| k.arch == **a) && !in_ptx.contains(a))
                .map(|a| MissingArch {
                    arch: *a,
                    reason: if f.outputs.iter().any(|(o, _)| o == a) {
                        "absent from the PTX".to_string()
                    } else {
                        format!("file setting arch = [{}]", list(f.arch_setting.as_deref().unwrap_or_default()))
                    },
                })
                .collect();
            kernels.push(KernelEntry {
                rust_name: rust_name(&demangled),
                rust_path: String::new(),
                rust_flat: false,
                qualified: format!("{}::{demangled}", f.source.file),
                display_name: demangled,
                name,
                file: f.source.file.clone(),
                line,
                col,
                origin,
                contract,
                arches,
                missing,
                host_threads: None,
                variants: Vec::new(),
            });
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
    // Per-kernel host block sizes (by name, qualified name or pattern) reach the generated
    // statics, so `Kernel::block_size()` launches at the size `report` and `check` evaluate.
    for k in &mut kernels {
        k.host_threads = config.kernel_settings(&k.name, &k.qualified).threads;
    }
    let mut seen_w = BTreeSet::new();
    warnings.retain(|w| seen_w.insert(w.clone()));

    // Resolved here, where the toolchain is known: `min-driver`, else the toolchain's own version.
    let min_driver = config.min_driver.or_else(|| launch::compat::CudaVersion::of_release(&toolchain.nvrtc));
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
        warnings,
    })
}

/// Kernels defined in the crate's headers that `f` includes: name → (line and column of the
/// `#include` in `f`, the header relative to the crate root, the line in the header). Read once per
/// file, and only for a file with a kernel found neither defined nor generated in it.
fn from_headers(config: &Config, f: &FileOutputs) -> HashMap<String, (u32, u32, String, u32)> {
    let root = config.root();
    let include_dirs: Vec<std::path::PathBuf> =
        std::iter::once(&config.kernel_dir).chain(&config.include_dirs).map(|d| root.join(d)).collect();
    let here = f.source.path.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
    let mut out = HashMap::new();
    for (i, line) in f.text.lines().enumerate() {
        let Some((name, quoted)) = source::includes(line).into_iter().next() else { continue };
        let dirs = quoted.then_some(&here).into_iter().chain(include_dirs.iter());
        let Some(header) = dirs.map(|d| d.join(&name)).find(|p| p.is_file()) else { continue };
        let col = line.find('#').map_or(1, |c| c as u32 + 1);
        let at = (i as u32).saturating_add(1);
        let mut all = vec![header.clone()];
        all.extend(source::dependencies(&header, &include_dirs));
        for h in all {
            let Ok(text) = std::fs::read_to_string(&h) else { continue };
            let rel = h.strip_prefix(root).unwrap_or(&h).display().to_string().replace('\\', "/");
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
    for k in kernels.iter_mut() {
        if count.get(&k.rust_name).copied().unwrap_or(0) > 1 {
            k.rust_name = rust_name_with_params(&k.display_name);
        }
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
mod tests {
    use super::*;
    use crate::ptxas_log::{EntryReport, PtxasLog};

    fn config(arches: &str) -> Config {
        config_with(arches, "")
    }

    /// A config with `arch = [arches]` and `extra` TOML after it.
    fn config_with(arches: &str, extra: &str) -> Config {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("kernels")).expect("kernel folder");
        let text = format!(
            "[package]\nname = \"t\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\narch = [{arches}]\n{extra}"
        );
        Config::parse(&dir.path().join("Cargo.toml"), &text).expect("valid config")
    }

    fn arch(a: &str) -> Arch {
        a.parse().expect("known arch")
    }

    /// The output of one job whose PTX and `ptxas -v` report hold `kernels`.
    fn output(a: &str, kernels: &[&str]) -> (Arch, JobOutput) {
        let ptx = format!(
            ".version 8.8\n.target {a}\n{}",
            kernels.iter().map(|k| format!(".visible .entry {k}(\n)\n{{\n}}\n")).collect::<String>()
        );
        let entries = kernels
            .iter()
            .map(|k| EntryReport {
                name: k.to_string(),
                arch: a.to_string(),
                resources: launch::Resources { registers: 10, ..Default::default() },
                compile_time_ms: None,
                lines: Vec::new(),
            })
            .collect();
        let report = PtxasLog { gmem: None, cmem: Vec::new(), entries, functions: Vec::new(), diagnostics: Vec::new() };
        (arch(a), JobOutput { ptx, cubin: Vec::new(), report, nvrtc_log: String::new(), ptxas_log: String::new() })
    }

    fn source(file: &str) -> SourceFile {
        let kernel_rel = file.strip_prefix("kernels/").unwrap_or(file).to_string();
        SourceFile { file: file.to_string(), path: std::path::PathBuf::from(file), kernel_rel }
    }

    fn toolchain() -> ToolchainInfo {
        ToolchainInfo { nvrtc: "12.9".into(), ptxas: "12.9".into(), description: String::new() }
    }

    /// One file without annotations or an `arch` setting, with its outputs.
    fn plain_file<'a>(
        source: &'a SourceFile,
        text: &'a str,
        definitions: &'a [source::KernelDef],
        outputs: Vec<(Arch, JobOutput)>,
    ) -> FileOutputs<'a> {
        FileOutputs { source, text, annotations: &[], definitions, arch_setting: None, outputs }
    }

    fn defs(text: &str) -> Vec<source::KernelDef> {
        source::kernels(text, &source::scan(text))
    }

    fn kernel<'a>(m: &'a Manifest, qualified: &str) -> &'a KernelEntry {
        m.kernels.iter().find(|k| k.qualified == qualified).unwrap_or_else(|| panic!("no {qualified}"))
    }

    #[test]
    fn the_same_kernel_name_in_two_files_is_kept_in_both_modules() {
        let c = config("\"sm_90\"");
        let (a, b) = (source("kernels/a.cu"), source("kernels/sub/b.cu"));
        let ta = "extern \"C\" __global__ void fill(float* x) {}\nextern \"C\" __global__ void only_a(float* x) {}\n";
        let tb = "\n\nextern \"C\" __global__ void fill(float* x) {}\n";
        let (da, db) = (defs(ta), defs(tb));
        let files = [
            plain_file(&a, ta, &da, vec![output("sm_90", &["fill", "only_a"])]),
            plain_file(&b, tb, &db, vec![output("sm_90", &["fill"])]),
        ];
        let m = manifest(&c, toolchain(), &files).expect("duplicate names across files are fine");
        let fa = kernel(&m, "kernels/a.cu::fill");
        let fb = kernel(&m, "kernels/sub/b.cu::fill");
        // Ambiguous plain names are shown qualified and get no flat static; unique ones keep both.
        assert_eq!(
            (fa.display_name.as_str(), fa.rust_path.as_str(), fa.rust_flat),
            ("kernels/a.cu::fill", "kernels::a::FILL", false)
        );
        assert_eq!(
            (fb.display_name.as_str(), fb.rust_path.as_str(), fb.line),
            ("kernels/sub/b.cu::fill", "kernels::sub::b::FILL", 3)
        );
        let only = kernel(&m, "kernels/a.cu::only_a");
        assert_eq!(
            (only.display_name.as_str(), only.rust_path.as_str(), only.rust_flat),
            ("only_a", "kernels::a::ONLY_A", true)
        );
        assert_eq!(
            m.modules.iter().map(|x| x.rust_module.as_str()).collect::<Vec<_>>(),
            ["kernels::a", "kernels::sub::b"]
        );

        let code = crate::embed::generate(&m);
        assert!(code.contains("pub use self::kernels::a::ONLY_A;"), "{code}");
        assert!(!code.contains("pub use self::kernels::a::FILL;"), "{code}");
        assert!(
            code.contains("    &kernels::a::FILL,\n    &kernels::a::ONLY_A,\n    &kernels::sub::b::FILL,\n"),
            "{code}"
        );
        // `sub` holds `b`; each module reaches the private module statics at the include site.
        assert!(
            code.contains("    pub mod sub {\n        //! The kernels of the folder `sub`.\n        pub mod b {"),
            "{code}"
        );
        assert!(code.contains("module: &super::super::super::__LAUNCH_MODULE_1,"), "{code}");
    }

    #[test]
    fn per_kernel_host_threads_reach_the_generated_statics() {
        // Before: every static got the crate's `threads`, whatever `kernel."<pattern>"` said, so
        // `block_size()` launched at a size `report` and `check` had not evaluated.
        let c = config_with("\"sm_90\"", "[package.metadata.launch.kernel.\"fill_*\"]\nthreads = 128\n");
        let f = source("kernels/f.cu");
        let text =
            "extern \"C\" __global__ void fill_a(float* x) {}\nextern \"C\" __global__ void other(float* x) {}\n";
        let d = defs(text);
        let files = [plain_file(&f, text, &d, vec![output("sm_90", &["fill_a", "other"])])];
        let m = manifest(&c, toolchain(), &files).expect("manifest");
        assert_eq!(kernel(&m, "kernels/f.cu::fill_a").host_threads, Some(128));
        assert_eq!(kernel(&m, "kernels/f.cu::other").host_threads, None);
        let code = crate::embed::generate(&m);
        // The text of one generated static, up to the next.
        let static_of = |name: &str| {
            let at = code.find(&format!("pub static {name}:")).unwrap_or_else(|| panic!("{name} in {code}"));
            let end = code[at + 1..].find("pub static").map_or(code.len(), |n| at + 1 + n);
            code[at..end].to_string()
        };
        assert!(static_of("FILL_A").contains("host_threads: 128,"), "{code}");
        assert!(static_of("OTHER").contains("host_threads: 256,"), "{code}");
    }

    /// A tuned kernel's static points at its hidden variants array; each variant embedded on some
    /// arch is a `Kernel` with its own entry, contract, module and resources; one refused on every
    /// arch has no static; the plain kernel and KERNELS are as without a grid.
    #[test]
    fn tune_variants_are_hidden_statics_reached_through_their_kernel() {
        use crate::manifest::{RefusedArch, VariantEntry};
        let c = config("\"sm_90\"");
        let f = source("kernels/p.cu");
        let text = "extern \"C\" __global__ void poly(float* x) {}\n";
        let d = defs(text);
        let files = [plain_file(&f, text, &d, vec![output("sm_90", &["poly"])])];
        let mut m = manifest(&c, toolchain(), &files).unwrap();
        let plain = crate::embed::generate(&m);
        let contract = launch::Contract {
            source: ContractSource::LaunchBounds,
            threads: Some(1024),
            min_blocks: Some(2),
            max_regs: Some(32),
            exact: false,
        };
        let module = ModuleEntry {
            file: "kernels/p.cu".into(),
            ptx: "variants/kernels+p.cu.poly__t1024_b2_r32.sm_90.ptx".into(),
            ptx_arch: arch("sm_90"),
            ptx_version: "8.8".into(),
            cubins: vec![CubinEntry {
                arch: arch("sm_90"),
                path: "variants/kernels+p.cu.poly__t1024_b2_r32.sm_90.cubin".into(),
            }],
            extra_ptx: Vec::new(),
            rust_module: String::new(),
        };
        let resources = launch::Resources { registers: 32, ..Default::default() };
        m.kernels[0].variants = vec![
            VariantEntry {
                name: "poly__t1024_b2_r32".into(),
                contract,
                module: Some(module),
                arches: vec![KernelArch { arch: arch("sm_90"), resources, ptxas_lines: Vec::new() }],
                refused: Vec::new(),
            },
            VariantEntry {
                name: "poly__t64".into(),
                contract: launch::Contract { threads: Some(64), min_blocks: None, max_regs: None, ..contract },
                module: None,
                arches: Vec::new(),
                refused: vec![RefusedArch { arch: arch("sm_90"), reason: "cannot launch".into(), resources }],
            },
        ];
        let code = crate::embed::generate(&m);
        assert!(code.contains("static __LAUNCH_VARIANT_MODULE_0_0: ::launch::Module = ::launch::Module {\n    file: \"kernels/p.cu\","), "{code}");
        assert!(code.contains("/launch/variants/kernels+p.cu.poly__t1024_b2_r32.sm_90.cubin\")) },"), "{code}");
        assert!(code.contains("        variants: &POLY__VARIANTS,\n"), "{code}");
        assert!(code.contains("        #[doc(hidden)]\n        pub static POLY__VARIANTS: [::launch::Kernel; 1] = [\n            ::launch::Kernel {\n                name: \"poly__t1024_b2_r32\",\n                demangled: \"poly__t1024_b2_r32\",\n                line: 1,\n                module: &super::super::__LAUNCH_VARIANT_MODULE_0_0,\n                contract: Some(::launch::Contract { source: ::launch::ContractSource::LaunchBounds, threads: Some(1024), min_blocks: Some(2), max_regs: Some(32), exact: false }),"), "{code}");
        assert!(!code.contains("poly__t64") && !code.contains("__LAUNCH_VARIANT_MODULE_0_1"), "{code}");
        // Without the variants the code is the plain kernel's, byte for byte.
        let without: String = code.replace("variants: &POLY__VARIANTS,", "variants: &[],");
        let cut = |c: &str| c.lines().filter(|l| !l.contains("VARIANT") && !l.trim().is_empty()).count();
        assert!(cut(&without) > cut(&plain), "the variants add lines");
        assert!(plain.contains("        variants: &[],\n"), "{plain}");
        assert!(code.contains("pub static KERNELS: &[&::launch::Kernel] = &[\n    &kernels::p::POLY,\n];"), "{code}");
    }

    #[test]
    fn overloads_in_one_file_get_their_parameter_types_and_true_clashes_are_errors() {
        let c = config("\"sm_90\"");
        let f = source("kernels/o.cu");
        let text = "__global__ void k(float* x) {}\n__global__ void k(int* x) {}\n";
        let d = defs(text);
        let files = [plain_file(&f, text, &d, vec![output("sm_90", &["_Z1kPf", "_Z1kPi"])])];
        let m = manifest(&c, toolchain(), &files).expect("overloads are named apart");
        let names: Vec<&str> = m.kernels.iter().map(|k| k.rust_name.as_str()).collect();
        assert!(names.contains(&"K_FLOAT") && names.contains(&"K_INT"), "{names:?}");

        // `a<b>` and `a_b` are one Rust name with and without parameters: an error at the kernel.
        let text = "__global__ void a_b() {}\n";
        let d = defs(text);
        let files = [plain_file(&f, text, &d, vec![output("sm_90", &["a_b", "_Z1aI1bEvv"])])];
        let Err(Error::Kernels(e)) = manifest(&c, toolchain(), &files) else {
            panic!("a clash in one file is an error")
        };
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].message.contains("would be generated as `kernels::o::A_B`")
                && e[0].to_string().contains("rename one of them"),
            "{e:?}"
        );
    }

    #[test]
    fn module_paths_are_identifiers_and_never_collide() {
        let files = ["k/a-b.cu", "k/a_b.cu", "k/A_B.cu", "k/2d.cu", "k/mod.cu", "k/sub.cu", "k/sub/x.cu", "k/é.cu"];
        assert_eq!(
            module_paths("k", &files),
            [
                "kernels::a_b_3",
                "kernels::a_b",
                "kernels::a_b_2",
                "kernels::k_2d",
                "kernels::mod_",
                "kernels::sub",
                "kernels::sub::x",
                "kernels::k__",
            ]
        );
    }

    #[test]
    fn a_kernel_gated_by_arch_lists_its_arches_its_missing_ones_and_gets_a_ptx() {
        let c = config("\"sm_80\", \"sm_90\"");
        let (g, h) = (source("kernels/gated.cu"), source("kernels/hopper.cu"));
        let text = "extern \"C\" __global__ void all() {}\n#if __CUDA_ARCH__ >= 900\nextern \"C\" __global__ void fp8() {}\n#endif\n";
        let d = defs(text);
        let files = [
            plain_file(&g, text, &d, vec![output("sm_80", &["all"]), output("sm_90", &["all", "fp8"])]),
            // A file whose own setting is arch = ["sm_90"].
            FileOutputs {
                source: &h,
                text: "extern \"C\" __global__ void h() {}\n",
                annotations: &[],
                definitions: &[],
                arch_setting: Some(vec![arch("sm_90")]),
                outputs: vec![output("sm_90", &["h"])],
            },
        ];
        let m = manifest(&c, toolchain(), &files).unwrap();
        let fp8 = kernel(&m, "kernels/gated.cu::fp8");
        assert_eq!(fp8.arches.iter().map(|a| a.arch.to_string()).collect::<Vec<_>>(), ["sm_90"]);
        assert_eq!(fp8.missing, [MissingArch { arch: arch("sm_80"), reason: "absent from the PTX".into() }]);
        assert!(kernel(&m, "kernels/gated.cu::all").missing.is_empty());
        // The sm_80 PTX lacks fp8: the sm_90 PTX is embedded too.
        assert_eq!(
            m.modules[0].extra_ptx.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(),
            ["ptx/kernels+gated.cu.sm_90.ptx"]
        );
        let hk = kernel(&m, "kernels/hopper.cu::h");
        assert_eq!(hk.missing, [MissingArch { arch: arch("sm_80"), reason: "file setting arch = [sm_90]".into() }]);
        // Its lowest arch is sm_90: that is its fallback PTX, nothing extra.
        assert_eq!((m.modules[1].ptx_arch, m.modules[1].extra_ptx.len()), (arch("sm_90"), 0));
        assert_eq!(m.modules[1].cubins.len(), 1);
        // The generated module embeds the extra PTX for the runtime.
        let code = crate::embed::generate(&m);
        assert!(code.contains("::launch::PtxText { arch: \"sm_90\", text: include_str!(concat!(env!(\"OUT_DIR\"), \"/launch/ptx/kernels+gated.cu.sm_90.ptx\")) },"), "{code}");
        assert!(code.contains("/// Not compiled for sm_80: absent from the PTX."), "{code}");
    }

    /// `LAUNCH_ALL_PTX=1` (what `cargo launch explore` builds with) writes every arch's PTX under
    /// `ptx-all/`, which nothing embeds; a build without it empties the folder again.
    #[test]
    fn every_arch_ptx_is_written_only_when_asked() {
        let c = config("\"sm_80\", \"sm_90\"");
        let g = source("kernels/gated.cu");
        let text = "extern \"C\" __global__ void all() {}\n";
        let d = defs(text);
        let files = [plain_file(&g, text, &d, vec![output("sm_80", &["all"]), output("sm_90", &["all"])])];
        let m = manifest(&c, toolchain(), &files).unwrap();
        let out = tempfile::tempdir().unwrap();
        crate::embed::write(out.path(), &m, &files, &[], true).unwrap();
        let all: Vec<String> = ["sm_80", "sm_90"].iter().map(|a| all_ptx_path("kernels/gated.cu", arch(a))).collect();
        assert_eq!(all, ["ptx-all/kernels+gated.cu.sm_80.ptx", "ptx-all/kernels+gated.cu.sm_90.ptx"]);
        assert!(all.iter().all(|p| out.path().join(p).is_file()));
        assert!(!crate::embed::generate(&m).contains("ptx-all"), "never embedded");
        crate::embed::write(out.path(), &m, &files, &[], false).unwrap();
        assert!(all.iter().all(|p| !out.path().join(p).exists()));
    }

    #[test]
    fn a_file_whose_setting_shares_no_arch_is_a_warning_not_a_silent_gap() {
        let c = config("\"sm_80\"");
        let h = source("kernels/hopper.cu");
        let files = [FileOutputs {
            source: &h,
            text: "",
            annotations: &[],
            definitions: &[],
            arch_setting: Some(vec![arch("sm_90")]),
            outputs: Vec::new(),
        }];
        let m = manifest(&c, toolchain(), &files).unwrap();
        assert!(m.modules.is_empty());
        assert_eq!(
            m.warnings,
            ["kernels/hopper.cu: not compiled: its `arch` setting [sm_90] shares no arch with the build's [sm_80]"]
        );
    }

    #[test]
    fn macro_generated_kernels_are_at_the_invocation_and_none_at_line_0() {
        let c = config("\"sm_90\"");
        let f = source("kernels/unary.cu");
        let text = "#define UNARY_OP(T, NAME) \\\n  extern \"C\" __global__ void NAME(T* x) { x[0] = 0; }\n\nUNARY_OP(float, ucopy_f32)\n  UNARY_OP(double, ucopy_f64)\n";
        let d = defs(text);
        let files = [plain_file(&f, text, &d, vec![output("sm_90", &["ucopy_f32", "ucopy_f64", "from_a_header"])])];
        let m = manifest(&c, toolchain(), &files).unwrap();
        let at = |q: &str| {
            let k = kernel(&m, q);
            (k.line, k.col, k.origin.clone())
        };
        let by = Origin::Macro { name: "UNARY_OP".into() };
        assert_eq!(at("kernels/unary.cu::ucopy_f32"), (4, 1, by.clone()));
        assert_eq!(at("kernels/unary.cu::ucopy_f64"), (5, 3, by));
        // Not in the file at all: line 1 stands for the file, and the manifest says so.
        assert_eq!(at("kernels/unary.cu::from_a_header"), (1, 1, Origin::NotFound));
        assert!(m.kernels.iter().all(|k| k.line > 0));
    }
}

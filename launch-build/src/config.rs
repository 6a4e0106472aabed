//! `[package.metadata.launch]`: what to compile, for which arches, with which flags.
//!
//! ```toml
//! [package.metadata.launch]
//! arch = ["sm_90", "sm_100"]      # required: every arch to build a cubin for
//! kernels = "kernels"             # folder of .cu files, relative to Cargo.toml
//! include = ["include"]           # extra include folders
//! defines = { N = 128, FAST = true }
//! threads = 256                   # block size the host uses for kernels without a contract
//! flags = ["-std=c++17"]          # NVRTC options, nvcc spellings accepted (see `flags`)
//! ptxas-flags = ["-O3"]           # ptxas options
//! exclude = ["host", "*_test.cu"] # files and folders of the kernel folder to leave out
//! toolchain = "12.9"              # the pinned CUDA line: "12.9" (default) or "13.0"
//! host = ["launch.cu", "moe/*.cu"] # files with host code: nvcc through `cc` (see `host`)
//!
//! [package.metadata.launch.file."fp8/**"]   # settings of the files a pattern matches
//! arch = ["sm_90"]                          # a subset of `arch`
//! flags = ["--use_fast_math"]
//! defines = { FP8 = 1 }
//!
//! [package.metadata.launch.kernel."fill_*"] # settings of the kernels a pattern matches
//! threads = 128
//!
//! [package.metadata.launch.tune.poly_eval]  # variants of one kernel to embed (see `tune`)
//! threads = [256, 1024]
//! max_regs = "cliffs"
//! ```
//!
//! Patterns (`exclude`, `host`, `file."..."`, `kernel."..."`) are globs: `*` is any run of characters
//! but `/`, `?` one character but `/`, `**` any run including `/` (`**/` also matches no folder
//! at all). File patterns are relative to the kernel folder, and one that matches a folder
//! matches everything under it (`exclude = ["moe"]` leaves out `moe/a.cu`).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use launch::Arch;
use toml_edit::{ImDocument, Item, Key, TableLike, Value};

use crate::error::{Error, Location};
use crate::flags::{self, Mapped};
use crate::suggest::edit_distance;
use crate::toolchain::pin::{self, Pin};

mod tune;
pub use tune::{error_at as tune_error, too_many as too_many_variants, MaxRegs, TuneConfig, MAX_VARIANTS, TUNE_KEYS};

/// The keys `[package.metadata.launch]` accepts.
pub const KEYS: &[&str] = &[
    "arch",
    "kernels",
    "include",
    "defines",
    "threads",
    "max-spill-bytes",
    "kernel",
    "exclude",
    "flags",
    "ptxas-flags",
    "std-headers",
    "file",
    "min-driver",
    "toolchain",
    "tune",
    "host",
];

/// The keys of a `[package.metadata.launch.file."<pattern>"]` table.
pub const FILE_KEYS: &[&str] = &["flags", "ptxas-flags", "defines", "arch"];

/// The keys of a `[package.metadata.launch.kernel.<name>]` table.
pub const KERNEL_KEYS: &[&str] = &["max-spill-bytes", "dynamic-smem", "threads"];

/// Default block size for kernels without a launch contract (seeds/004: "256 when the kernel has
/// no @launch").
pub const DEFAULT_HOST_THREADS: u32 = 256;

/// The validated configuration of one crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Path of the crate's Cargo.toml.
    pub manifest_path: PathBuf,
    /// The package name.
    pub package: String,
    /// Arches to build for, sorted by compute capability, without duplicates.
    pub arches: Vec<Arch>,
    /// Kernel folder, relative to the crate root.
    pub kernel_dir: PathBuf,
    /// Extra include folders, relative to the crate root.
    pub include_dirs: Vec<PathBuf>,
    /// `-D` defines, sorted by name; `None` value means `-DNAME`.
    pub defines: Vec<(String, Option<String>)>,
    /// Block size for kernels without a contract.
    pub host_threads: u32,
    /// Spill budget per kernel and arch (stores + loads, bytes); `None`: spills are warnings.
    pub max_spill_bytes: Option<u32>,
    /// Per-kernel settings, by kernel name (as written in the source, or the symbol name), by
    /// qualified name (`kernels/a.cu::fill`) or by pattern (`fill_*`); the plan resolves them per kernel (`plan::Plan::settle_kernels`).
    pub kernel: BTreeMap<String, KernelConfig>,
    /// The keys of `kernel` that are patterns, in the order the file lists them.
    pub kernel_patterns: Vec<String>,
    /// `flags`: NVRTC options in canonical spelling (see `flags.rs`); `-I` folders are in
    /// `include_dirs`, `-Xptxas` options in `ptxas_flags`.
    pub flags: Vec<String>,
    /// `ptxas-flags`, and what `flags` passes with `-Xptxas`: ptxas options in canonical spelling.
    pub ptxas_flags: Vec<String>,
    /// `exclude`: patterns relative to the kernel folder (see the module documentation).
    pub exclude: Vec<String>,
    /// `std-headers` (default true): provide the standard headers nvcc users take for granted.
    pub std_headers: bool,
    /// `[package.metadata.launch.file."<pattern>"]` tables, in the order the file lists them.
    pub files: Vec<FileConfig>,
    /// `min-driver = "12.4"`: the oldest driver (its CUDA version) the crate must run on; `None`:
    /// the toolchain's own version. `cargo launch check` says what would not load on it.
    pub min_driver: Option<launch::compat::CudaVersion>,
    /// `toolchain`: the pinned CUDA line to build with (default [`pin::DEFAULT`], 12.9); every
    /// arch in `arches` is one it can target.
    pub toolchain: Pin,
    /// `[package.metadata.launch.tune.<kernel>]` tables, in the order the file lists them.
    pub tune: Vec<TuneConfig>,
    /// `host`: the kernel files compiled with the toolchain's nvcc (host code and all) into a
    /// static library linked into the crate, instead of NVRTC (see `host`).
    pub host: Vec<HostPattern>,
}

/// One `host` entry: a file pattern relative to the kernel folder, and where it was written (a
/// pattern that matches no kernel file is an error there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPattern {
    /// The pattern, as `exclude` patterns are (`./` and a trailing `/` dropped).
    pub pattern: String,
    /// `Cargo.toml:line:col` of the entry.
    pub location: Location,
    /// Its key path (`package.metadata.launch.host[1]`).
    pub key: String,
}

/// `[package.metadata.launch.file."<pattern>"]`: settings of the files a pattern matches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileConfig {
    /// The pattern, relative to the kernel folder.
    pub pattern: String,
    /// NVRTC options, canonical.
    pub flags: Vec<String>,
    /// ptxas options, canonical (from `ptxas-flags` and `-Xptxas`).
    pub ptxas_flags: Vec<String>,
    /// `-D` defines, in the order written.
    pub defines: Vec<(String, Option<String>)>,
    /// The arches to build the files for: a subset of the crate's `arch`.
    pub arch: Option<Vec<Arch>>,
}

/// The settings one kernel file is compiled with: the crate's, then each matching
/// `[package.metadata.launch.file."<pattern>"]` table's, in the order the tables are written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileSettings {
    /// NVRTC options: the crate's `flags`, then each table's; a later value of a single-valued
    /// option (`--std=`) replaces an earlier one, repeats are removed.
    pub flags: Vec<String>,
    /// `-D` defines: the crate's, then each table's; a later value of a macro replaces the earlier
    /// one in place.
    pub defines: Vec<(String, Option<String>)>,
    /// The arches of the last matching table that sets `arch`; `None`: the crate's.
    pub arch: Option<Vec<Arch>>,
    /// ptxas options: the crate's `ptxas-flags`, then each table's, without repeats.
    pub ptxas_flags: Vec<String>,
}

/// `[package.metadata.launch.kernel.<name>]`: what the host does with one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelConfig {
    /// Spill budget (stores + loads, bytes) overriding the crate's.
    pub max_spill_bytes: Option<u32>,
    /// Dynamic shared memory the host launches it with, bytes.
    pub dynamic_smem: Option<u32>,
    /// Block size the host launches it with when it has no contract.
    pub threads: Option<u32>,
}

impl Config {
    /// Reads and validates the `[package.metadata.launch]` table of the Cargo.toml at `manifest_path`.
    pub fn load(manifest_path: &Path) -> Result<Config, Error> {
        let text = std::fs::read_to_string(manifest_path).map_err(Error::io("read", manifest_path))?;
        Config::parse(manifest_path, &text)
    }

    /// Validates `text`, the contents of `manifest_path`.
    ///
    /// The document is walked by hand, not deserialized, so every error names the full key path
    /// (`package.metadata.launch.arch[1]`), the position of the value, the value as written and
    /// what is expected in TOML terms.
    pub fn parse(manifest_path: &Path, text: &str) -> Result<Config, Error> {
        let doc = Doc { path: manifest_path, text };
        let root = manifest_path.parent().unwrap_or(Path::new("."));
        let parsed = ImDocument::parse(text).map_err(|e| doc.syntax_error(&e))?;

        let top = Node { path: String::new(), span: None, r: Ref::Table(parsed.as_table()) };
        let Some(package) = top.child_in(parsed.as_table(), "package") else {
            return Err(doc.error(
                None,
                "package",
                "this Cargo.toml has no [package] (launch-build runs in a package's build script)".into(),
            ));
        };
        let package_table = doc.table(&package, "a table: the [package] section")?;
        let name = match package.child_in(package_table, "name") {
            Some(n) => doc.string(&n, "a package name string such as \"my-crate\"")?.to_string(),
            None => {
                return Err(doc.error(package.span.clone(), "package.name", "missing: the package has no name".into()))
            }
        };
        let missing_table = || {
            doc.error(
                None,
                "package.metadata.launch",
                "missing table; add to Cargo.toml:\n\n[package.metadata.launch]\narch = [\"sm_90\"]\n".to_string(),
            )
        };
        let metadata = package.child_in(package_table, "metadata").ok_or_else(missing_table)?;
        let metadata_table = doc.table(&metadata, "a table such as [package.metadata.launch]")?;
        let launch = metadata.child_in(metadata_table, "launch").ok_or_else(missing_table)?;
        let table =
            doc.table(&launch, "a table of launch settings such as [package.metadata.launch] with arch = [\"sm_90\"]")?;
        doc.known_keys(&launch, table, KEYS, "[package.metadata.launch]")?;

        let toolchain = match launch.child_in(table, "toolchain") {
            Some(t) => doc.toolchain(&t)?,
            None => pin::DEFAULT,
        };
        let arches = match launch.child_in(table, "arch") {
            Some(list) => doc.arches(&list, &toolchain)?,
            None => {
                return Err(doc.error(
                    launch.span.clone(),
                    "package.metadata.launch.arch",
                    format!(
                        "missing: list the GPU architectures to build for, e.g. arch = [\"sm_90\"]; valid choices: {}",
                        launch::KNOWN_ARCHES.join(", ")
                    ),
                ))
            }
        };

        let kernel_dir = match launch.child_in(table, "kernels") {
            Some(k) => {
                let p = doc.relative_path(&k, "a folder path such as \"kernels\"")?;
                if let Some(why) = folder_problem(&root.join(&p)) {
                    let message =
                        format!("`{}` {why}; expected a folder of .cu files, relative to Cargo.toml", p.display());
                    return Err(doc.error(k.span.clone(), &k.path, message));
                }
                p
            }
            None => {
                let p = PathBuf::from("kernels");
                if let Some(why) = folder_problem(&root.join(&p)) {
                    return Err(doc.error(
                        launch.span.clone(),
                        "package.metadata.launch.kernels",
                        format!(
                            "the default kernel folder `{}` {why}; create it or set `kernels = \"...\"`",
                            root.join(&p).display()
                        ),
                    ));
                }
                p
            }
        };

        let mut include_dirs = Vec::new();
        if let Some(list) = launch.child_in(table, "include") {
            for inc in doc.array(&list, "a list of folder paths such as [\"include\"]")? {
                let p = doc.relative_path(&inc, "a folder path such as \"include\"")?;
                if let Some(why) = folder_problem(&root.join(&p)) {
                    let message =
                        format!("`{}` {why}; expected an include folder, relative to Cargo.toml", p.display());
                    return Err(doc.error(inc.span.clone(), &inc.path, message));
                }
                include_dirs.push(p);
            }
        }

        let mut defines = match launch.child_in(table, "defines") {
            Some(d) => doc.defines(&d)?,
            None => Vec::new(),
        };
        defines.sort();

        let host_threads = match launch.child_in(table, "threads") {
            Some(t) => doc.block_size(&t)?,
            None => DEFAULT_HOST_THREADS,
        };
        let max_spill_bytes = launch.child_in(table, "max-spill-bytes").map(|b| doc.bytes(&b)).transpose()?;

        let mut flags = Vec::new();
        let mut ptxas_flags = Vec::new();
        if let Some(list) = launch.child_in(table, "flags") {
            for m in doc.nvrtc_flags(&list)? {
                match m {
                    (_, Mapped::Nvrtc(o)) => flags.push(o),
                    (_, Mapped::Ptxas(o)) => ptxas_flags.push(o),
                    (node, Mapped::Include(dir)) => {
                        // An include folder given as a flag is an `include` entry: checked the
                        // same way, and its headers tracked the same way.
                        if let Some(why) = folder_problem(&root.join(&dir)) {
                            let message = format!("`{dir}` {why}; expected an include folder, relative to Cargo.toml");
                            return Err(doc.error(node.span.clone(), &node.path, message));
                        }
                        include_dirs.push(PathBuf::from(dir));
                    }
                }
            }
        }
        if let Some(list) = launch.child_in(table, "ptxas-flags") {
            ptxas_flags.extend(doc.ptxas_flags(&list)?);
        }
        let ptxas_flags = without_repeats(ptxas_flags);

        let mut exclude = Vec::new();
        if let Some(list) = launch.child_in(table, "exclude") {
            for e in doc.array(&list, "a list of files, folders or patterns such as [\"host\", \"*_test.cu\"]")? {
                exclude.push(doc.pattern(&e, "a file, folder or pattern such as \"host.cu\"")?);
            }
        }

        let mut host = Vec::new();
        if let Some(list) = launch.child_in(table, "host") {
            for e in doc.array(&list, "a list of kernel files with host code such as [\"launch.cu\", \"moe/*.cu\"]")? {
                let pattern = doc.pattern(&e, "a file, folder or pattern such as \"launch.cu\"")?;
                let location = location(doc.path, doc.text, e.span.clone());
                host.push(HostPattern { pattern, location, key: e.path.clone() });
            }
        }

        let std_headers = match launch.child_in(table, "std-headers") {
            Some(b) => doc.boolean(&b, "true or false")?,
            None => true,
        };

        let min_driver = launch.child_in(table, "min-driver").map(|d| doc.cuda_version(&d)).transpose()?;

        let mut files = Vec::new();
        if let Some(f) = launch.child_in(table, "file") {
            let tables =
                doc.table(&f, "a table of per-file settings such as [package.metadata.launch.file.\"quantized.cu\"]")?;
            for (pattern, _) in tables.iter() {
                let Some((key, item)) = tables.get_key_value(pattern) else { continue };
                let Some(one) = f.entry(key, item) else { continue };
                let pattern = doc.pattern_key(&one, key, pattern)?;
                let settings = doc.table(&one, "a table of per-file settings such as { flags = [\"-DFAST\"] }")?;
                doc.known_keys(&one, settings, FILE_KEYS, "[package.metadata.launch.file.\"<pattern>\"]")?;
                let mut file = FileConfig { pattern, ..FileConfig::default() };
                if let Some(list) = one.child_in(settings, "flags") {
                    for m in doc.nvrtc_flags(&list)? {
                        match m {
                            (_, Mapped::Nvrtc(o)) => file.flags.push(o),
                            (_, Mapped::Ptxas(o)) => file.ptxas_flags.push(o),
                            (node, Mapped::Include(_)) => {
                                let message = "an include folder cannot be given to some files only: its headers are tracked for the whole crate; add it to `include` (or the crate's `flags`)".to_string();
                                return Err(doc.error(node.span.clone(), &node.path, message));
                            }
                        }
                    }
                }
                if let Some(list) = one.child_in(settings, "ptxas-flags") {
                    file.ptxas_flags.extend(doc.ptxas_flags(&list)?);
                }
                file.ptxas_flags = without_repeats(file.ptxas_flags);
                if let Some(d) = one.child_in(settings, "defines") {
                    file.defines = doc.defines(&d)?;
                }
                if let Some(list) = one.child_in(settings, "arch") {
                    file.arch = Some(doc.arch_subset(&list, &arches)?);
                }
                files.push(file);
            }
        }

        let mut kernel = BTreeMap::new();
        let mut kernel_patterns = Vec::new();
        if let Some(k) = launch.child_in(table, "kernel") {
            let kernels =
                doc.table(&k, "a table of per-kernel settings such as [package.metadata.launch.kernel.my_kernel]")?;
            for (name, _) in kernels.iter() {
                let Some((key, item)) = kernels.get_key_value(name) else { continue };
                let Some(one) = k.entry(key, item) else { continue };
                let settings = doc.table(&one, "a table of per-kernel settings such as { threads = 256 }")?;
                doc.known_keys(&one, settings, KERNEL_KEYS, "[package.metadata.launch.kernel.<name>]")?;
                let get = |field: &str| one.child_in(settings, field);
                if is_pattern(name) {
                    kernel_patterns.push(name.to_string());
                }
                kernel.insert(
                    name.to_string(),
                    KernelConfig {
                        max_spill_bytes: get("max-spill-bytes").map(|b| doc.bytes(&b)).transpose()?,
                        dynamic_smem: get("dynamic-smem").map(|b| doc.bytes(&b)).transpose()?,
                        threads: get("threads").map(|t| doc.block_size(&t)).transpose()?,
                    },
                );
            }
        }

        let tune = match launch.child_in(table, "tune") {
            Some(t) => doc.tune(&t)?,
            None => Vec::new(),
        };

        Ok(Config {
            tune,
            host,
            max_spill_bytes,
            kernel,
            kernel_patterns,
            flags,
            ptxas_flags,
            exclude,
            std_headers,
            files,
            min_driver,
            toolchain,
            manifest_path: manifest_path.to_path_buf(),
            package: name,
            arches,
            kernel_dir,
            include_dirs,
            defines,
            host_threads,
        })
    }

    /// The crate root (the folder of Cargo.toml).
    pub fn root(&self) -> &Path {
        self.manifest_path.parent().unwrap_or(Path::new("."))
    }

    /// The settings of a file that `tables` match (in the order Cargo.toml lists them): the
    /// crate's, then each table's. The plan matches the tables (`plan::Plan::resolve`).
    pub fn merge_file_settings(&self, tables: &[&FileConfig]) -> FileSettings {
        let mut defines = self.defines.clone();
        for (name, value) in tables.iter().flat_map(|f| &f.defines) {
            match defines.iter_mut().find(|(n, _)| n == name) {
                Some(d) => d.1 = value.clone(),
                None => defines.push((name.clone(), value.clone())),
            }
        }
        FileSettings {
            flags: flags::merge_nvrtc(self.flags.iter().chain(tables.iter().flat_map(|f| &f.flags)).cloned()),
            defines,
            arch: tables.iter().rev().find_map(|f| f.arch.clone()),
            ptxas_flags: without_repeats(
                self.ptxas_flags.iter().chain(tables.iter().flat_map(|f| &f.ptxas_flags)).cloned().collect(),
            ),
        }
    }
}

/// Whether the key of a `[package.metadata.launch.kernel."<key>"]` table applies to kernel `name`
/// (qualified name `qualified`): equal to either, or a pattern matching the plain name (the
/// qualified one when the pattern holds `::`).
pub fn kernel_key_matches(key: &str, name: &str, qualified: &str) -> bool {
    if key == name || key == qualified {
        return true;
    }
    is_pattern(key) && glob_match(key, if key.contains("::") { qualified } else { name })
}

/// Whether a key holds glob characters.
pub fn is_pattern(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// Whether `pattern` matches the path `rel` (`/`-separated) or one of its folders: a folder
/// matched means everything under it is.
pub fn path_matches(pattern: &str, rel: &str) -> bool {
    let pattern = pattern.trim_end_matches('/');
    glob_match(pattern, rel) || rel.match_indices('/').any(|(i, _)| glob_match(pattern, &rel[..i]))
}

/// One element of a glob pattern.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Glob {
    Char(char),
    /// `?`: one character but `/`.
    One,
    /// `*`: any run of characters but `/`.
    Star,
    /// `**`: any run of characters.
    Any,
    /// `**/`: nothing, or any run of characters ending in `/`.
    Folders,
}

/// Whether `text` matches the glob `pattern` as a whole. Time is pattern length × text length,
/// whatever the pattern (no backtracking).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let mut tokens = Vec::new();
    let p: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < p.len() {
        let (t, len) = match (p[i], p.get(i + 1), p.get(i + 2)) {
            ('*', Some('*'), Some('/')) => (Glob::Folders, 3),
            ('*', Some('*'), _) => (Glob::Any, 2),
            ('*', _, _) => (Glob::Star, 1),
            ('?', _, _) => (Glob::One, 1),
            (c, _, _) => (Glob::Char(c), 1),
        };
        tokens.push(t);
        i += len;
    }
    let t: Vec<char> = text.chars().collect();
    // at[i]: the tokens so far can match exactly t[..i].
    let mut at = vec![false; t.len() + 1];
    at[0] = true;
    for tok in tokens {
        let mut next = vec![false; t.len() + 1];
        let mut reach = false;
        for i in 0..=t.len() {
            match tok {
                Glob::Char(c) => next[i] = i > 0 && at[i - 1] && t[i - 1] == c,
                Glob::One => next[i] = i > 0 && at[i - 1] && t[i - 1] != '/',
                Glob::Star => {
                    reach |= at[i];
                    next[i] = reach;
                    if t.get(i) == Some(&'/') {
                        reach = false;
                    }
                }
                Glob::Any => {
                    reach |= at[i];
                    next[i] = reach;
                }
                Glob::Folders => {
                    next[i] = at[i] || (reach && i > 0 && t[i - 1] == '/');
                    reach |= at[i];
                }
            }
        }
        at = next;
    }
    at[t.len()]
}

/// `list` without repeats, first kept.
fn without_repeats(list: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    list.into_iter().filter(|o| seen.insert(o.clone())).collect()
}

/// `sm_90,sm_100` (`LAUNCH_ARCH`, `--arch`) → sorted, deduplicated arches; an error names the bad
/// entry, its position in the list and the valid choices.
pub fn parse_arch_list(list: &str) -> Result<Vec<Arch>, String> {
    const FORM: &str = "write comma-separated arch names such as sm_90,sm_100";
    if list.trim().is_empty() {
        return Err(format!("the list is empty; {FORM}; valid choices: {}", launch::KNOWN_ARCHES.join(", ")));
    }
    let parts: Vec<&str> = list.split(',').map(str::trim).collect();
    let mut arches = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let which = format!("entry {} of `{}`", i + 1, list.escape_debug());
        if part.is_empty() {
            return Err(format!("{which} is empty; {FORM}"));
        }
        let arch =
            part.parse::<Arch>().map_err(|e| if parts.len() > 1 { format!("{which}: {e}") } else { e.to_string() })?;
        arches.push(arch);
    }
    arches.sort();
    arches.dedup();
    Ok(arches)
}

/// The manifest being validated: where errors point.
struct Doc<'a> {
    path: &'a Path,
    text: &'a str,
}

/// A value of the document with its dotted key path and position.
struct Node<'a> {
    /// `package.metadata.launch.arch[1]`.
    path: String,
    /// Byte range of the value (or of its key or header when the value has none).
    span: Option<Range<usize>>,
    r: Ref<'a>,
}

#[derive(Clone, Copy)]
enum Ref<'a> {
    Value(&'a Value),
    Table(&'a toml_edit::Table),
    Tables,
}

impl<'a> Node<'a> {
    fn clone_node(&self) -> Node<'a> {
        Node { path: self.path.clone(), span: self.span.clone(), r: self.r }
    }

    /// The entry `key = item` of this table.
    fn entry(&self, key: &'a Key, item: &'a Item) -> Option<Node<'a>> {
        let r = match item {
            Item::Value(v) => Ref::Value(v),
            Item::Table(t) => Ref::Table(t),
            Item::ArrayOfTables(_) => Ref::Tables,
            Item::None => return None,
        };
        let segment = quoted_key(key.get());
        let path = if self.path.is_empty() { segment } else { format!("{}.{segment}", self.path) };
        Some(Node { path, span: item.span().or_else(|| key.span()), r })
    }

    /// The entry `name` of `table` (this node's table).
    fn child_in(&self, table: &'a dyn TableLike, name: &str) -> Option<Node<'a>> {
        table.get_key_value(name).and_then(|(k, i)| self.entry(k, i))
    }

    /// What kind of TOML value this is, in words.
    fn kind(&self) -> &'static str {
        match self.r {
            Ref::Value(Value::String(_)) => "a string",
            Ref::Value(Value::Integer(_)) => "an integer",
            Ref::Value(Value::Float(_)) => "a floating-point number",
            Ref::Value(Value::Boolean(_)) => "a boolean",
            Ref::Value(Value::Datetime(_)) => "a date-time",
            Ref::Value(Value::Array(_)) => "a list",
            Ref::Value(Value::InlineTable(_)) | Ref::Table(_) => "a table",
            Ref::Tables => "a list of tables",
        }
    }
}

impl Doc<'_> {
    fn error(&self, span: Option<Range<usize>>, key: &str, message: String) -> Error {
        Error::Config { location: location(self.path, self.text, span), key: key.to_string(), message }
    }

    /// The value as written in the file, on one line and cut short if long.
    fn shown(&self, node: &Node) -> String {
        let written = match node.r {
            Ref::Value(v) => v.span().and_then(|s| self.text.get(s)),
            Ref::Table(_) => return format!("[{}]", node.path),
            Ref::Tables => return format!("[[{}]]", node.path),
        };
        let Some(written) = written else { return "the value".to_string() };
        let one_line = written.split_whitespace().collect::<Vec<_>>().join(" ");
        match one_line.char_indices().nth(60) {
            Some((cut, _)) => format!("{} …", &one_line[..cut]),
            None => one_line,
        }
    }

    /// `"x" is a string; expected an integer from 1 to 1024`.
    fn wrong_type(&self, node: &Node, expected: &str) -> Error {
        self.error(
            node.span.clone(),
            &node.path,
            format!("{} is {}; expected {expected}", self.shown(node), node.kind()),
        )
    }

    fn table<'n>(&self, node: &Node<'n>, expected: &str) -> Result<&'n dyn TableLike, Error> {
        match node.r {
            Ref::Table(t) => Ok(t),
            Ref::Value(Value::InlineTable(t)) => Ok(t),
            _ => Err(self.wrong_type(node, expected)),
        }
    }

    /// The elements of a list, each with its index in the key path.
    fn array<'n>(&self, node: &Node<'n>, expected: &str) -> Result<Vec<Node<'n>>, Error> {
        let Ref::Value(Value::Array(a)) = node.r else { return Err(self.wrong_type(node, expected)) };
        Ok(a.iter()
            .enumerate()
            .map(|(i, v)| Node { path: format!("{}[{i}]", node.path), span: v.span(), r: Ref::Value(v) })
            .collect())
    }

    fn string<'n>(&self, node: &Node<'n>, expected: &str) -> Result<&'n str, Error> {
        match node.r {
            Ref::Value(Value::String(s)) => Ok(s.value()),
            _ => Err(self.wrong_type(node, expected)),
        }
    }

    fn integer(&self, node: &Node, expected: &str) -> Result<i64, Error> {
        match node.r {
            Ref::Value(Value::Integer(i)) => Ok(*i.value()),
            _ => Err(self.wrong_type(node, expected)),
        }
    }

    /// `threads`: 1 to 1024.
    fn block_size(&self, node: &Node) -> Result<u32, Error> {
        const EXPECTED: &str = "an integer from 1 to 1024";
        let n = self.integer(node, EXPECTED)?;
        match u32::try_from(n) {
            Ok(v @ 1..=1024) => Ok(v),
            _ => Err(self.error(
                node.span.clone(),
                &node.path,
                format!(
                    "{} is not a block size; expected {EXPECTED} (the largest block any GPU allows)",
                    self.shown(node)
                ),
            )),
        }
    }

    /// `max-spill-bytes`, `dynamic-smem`: 0 to `u32::MAX`.
    fn bytes(&self, node: &Node) -> Result<u32, Error> {
        const EXPECTED: &str = "a non-negative integer number of bytes";
        let n = self.integer(node, EXPECTED)?;
        u32::try_from(n).map_err(|_| {
            let message = format!("{} is not a byte count; expected {EXPECTED} (0 to {})", self.shown(node), u32::MAX);
            self.error(node.span.clone(), &node.path, message)
        })
    }

    /// `toolchain = "13.0"` → its pin; anything else names the pinned lines.
    fn toolchain(&self, node: &Node) -> Result<Pin, Error> {
        let name = self.string(node, "a toolchain version string such as \"12.9\"")?;
        Pin::named(name.trim()).ok_or_else(|| {
            // `13`, `13.x`, `v13.0`, `13.0.88`: the pin of that major.
            let major = name.trim().trim_start_matches(['v', 'V']).split('.').next().unwrap_or("");
            let hint = pin::PINS
                .iter()
                .find(|p| major == p.major.to_string())
                .map(|p| format!(" (did you mean \"{}\"?)", p.name))
                .unwrap_or_default();
            let message =
                format!("{} is not a pinned toolchain{hint}; valid choices: {}", self.shown(node), pin::names());
            self.error(node.span.clone(), &node.path, message)
        })
    }

    /// `arch = ["sm_90", ...]` → sorted, deduplicated arches, each one `toolchain` can target.
    fn arches(&self, list: &Node, toolchain: &Pin) -> Result<Vec<Arch>, Error> {
        let items = self.array(list, "a list of arch names such as [\"sm_90\"]")?;
        if items.is_empty() {
            return Err(self.error(
                list.span.clone(),
                &list.path,
                format!(
                    "the list is empty; name at least one GPU architecture; valid choices: {}",
                    launch::KNOWN_ARCHES.join(", ")
                ),
            ));
        }
        let mut arches = Vec::new();
        for a in &items {
            let name = self.string(a, "an arch name such as \"sm_90\"")?;
            let arch = name.parse::<Arch>().map_err(|e| self.error(a.span.clone(), &a.path, e.to_string()))?;
            if !toolchain.can_target(arch) {
                return Err(self.error(a.span.clone(), &a.path, untargetable(arch, toolchain)));
            }
            arches.push(arch);
        }
        arches.sort();
        arches.dedup();
        Ok(arches)
    }

    /// `min-driver = "12.4"`: a CUDA release of `launch::compat::TOOLKITS`.
    fn cuda_version(&self, node: &Node) -> Result<launch::compat::CudaVersion, Error> {
        let text = self.string(node, "a CUDA version string such as \"12.4\"")?;
        text.parse().map_err(|e: launch::compat::VersionParseError| {
            let message = format!("{e} (the oldest driver the crate must run on, as its CUDA version)");
            self.error(node.span.clone(), &node.path, message)
        })
    }

    fn boolean(&self, node: &Node, expected: &str) -> Result<bool, Error> {
        match node.r {
            Ref::Value(Value::Boolean(b)) => Ok(*b.value()),
            _ => Err(self.wrong_type(node, expected)),
        }
    }

    /// A list of strings, each with its node.
    fn strings<'n>(&self, list: &Node<'n>, expected: &str) -> Result<Vec<(Node<'n>, &'n str)>, Error> {
        let items = self.array(list, expected)?;
        let mut out = Vec::new();
        for item in items {
            let s = self.string(&item, "a string, one option per element, such as \"-std=c++17\"")?;
            out.push((item, s));
        }
        Ok(out)
    }

    /// `flags = [...]` → the mapped flags, each with the element it came from; a refused flag is
    /// an error at its element.
    fn nvrtc_flags<'n>(&self, list: &Node<'n>) -> Result<Vec<(Node<'n>, Mapped)>, Error> {
        let items = self.strings(list, "a list of compiler options such as [\"-std=c++17\"]")?;
        let texts: Vec<&str> = items.iter().map(|(_, s)| *s).collect();
        let mapped = flags::map_nvrtc_located(&texts).map_err(|r| self.refused(&items, r))?;
        Ok(mapped.into_iter().map(|(i, m)| (items[i].0.clone_node(), m)).collect())
    }

    /// `ptxas-flags = [...]` → canonical ptxas options.
    fn ptxas_flags(&self, list: &Node) -> Result<Vec<String>, Error> {
        let items = self.strings(list, "a list of ptxas options such as [\"-O3\"]")?;
        let texts: Vec<&str> = items.iter().map(|(_, s)| *s).collect();
        flags::map_ptxas(&texts).map_err(|r| self.refused(&items, r))
    }

    fn refused(&self, items: &[(Node, &str)], r: flags::Refused) -> Error {
        match items.get(r.index) {
            Some((node, _)) => self.error(node.span.clone(), &node.path, r.message),
            None => self.error(None, "flags", r.message),
        }
    }

    /// A table of macro definitions, in the order written.
    fn defines(&self, d: &Node) -> Result<Vec<(String, Option<String>)>, Error> {
        let entries = self.table(d, "a table of macro definitions such as { N = 128 }")?;
        let mut defines = Vec::new();
        for (name, _) in entries.iter() {
            let Some((key, item)) = entries.get_key_value(name) else { continue };
            let Some(value) = d.entry(key, item) else { continue };
            if !is_identifier(name) {
                let message = format!(
                    "`{name}` is not a C identifier; expected a macro name of letters, digits and `_`, not starting with a digit"
                );
                return Err(self.error(key.span().or(value.span.clone()), &value.path, message));
            }
            defines.push((name.to_string(), self.define_value(&value)?));
        }
        Ok(defines)
    }

    /// A file's `arch`: names from the crate's own list.
    fn arch_subset(&self, list: &Node, crate_arches: &[Arch]) -> Result<Vec<Arch>, Error> {
        let items = self.array(list, "a list of arch names such as [\"sm_90\"]")?;
        if items.is_empty() {
            let message = "the list is empty; to leave files out, use `exclude`".to_string();
            return Err(self.error(list.span.clone(), &list.path, message));
        }
        let mut arches = Vec::new();
        for a in &items {
            let name = self.string(a, "an arch name such as \"sm_90\"")?;
            let arch = name.parse::<Arch>().map_err(|e| self.error(a.span.clone(), &a.path, e.to_string()))?;
            if !crate_arches.contains(&arch) {
                let listed: Vec<String> = crate_arches.iter().map(|a| a.to_string()).collect();
                let message = format!(
                    "`{arch}` is not in the crate's `arch` ({}); a file's `arch` chooses among those",
                    listed.join(", ")
                );
                return Err(self.error(a.span.clone(), &a.path, message));
            }
            arches.push(arch);
        }
        arches.sort();
        arches.dedup();
        Ok(arches)
    }

    /// A file pattern (an `exclude` entry): relative, not empty, `./` and a trailing `/` dropped.
    fn pattern(&self, node: &Node, expected: &str) -> Result<String, Error> {
        let s = self.string(node, expected)?;
        self.check_pattern(s).map_err(|message| self.error(node.span.clone(), &node.path, message))
    }

    /// The pattern of a `[package.metadata.launch.file."<pattern>"]` table.
    fn pattern_key(&self, node: &Node, key: &Key, pattern: &str) -> Result<String, Error> {
        self.check_pattern(pattern).map_err(|message| self.error(key.span().or(node.span.clone()), &node.path, message))
    }

    fn check_pattern(&self, s: &str) -> Result<String, String> {
        let trimmed = s.trim_start_matches("./").trim_end_matches('/');
        if trimmed.is_empty() {
            Err(format!("`{s}` names no file; expected a file, folder or pattern relative to the kernel folder"))
        } else if trimmed.starts_with('/') || Path::new(trimmed).is_absolute() {
            Err(format!("`{s}` is absolute; expected a file, folder or pattern relative to the kernel folder"))
        } else {
            Ok(trimmed.to_string())
        }
    }

    /// A folder path relative to Cargo.toml (whether it exists is checked by the caller).
    fn relative_path(&self, node: &Node, expected: &str) -> Result<PathBuf, Error> {
        let s = self.string(node, expected)?;
        let message = if s.is_empty() {
            format!("\"\" is an empty path; expected {expected}")
        } else if Path::new(s).is_absolute() {
            format!("`{s}` is absolute; use a path relative to Cargo.toml so the crate builds anywhere")
        } else {
            return Ok(PathBuf::from(s));
        };
        Err(self.error(node.span.clone(), &node.path, message))
    }

    /// A `defines` value → the text after `-DNAME=`, or `None` for `-DNAME`.
    fn define_value(&self, node: &Node) -> Result<Option<String>, Error> {
        let bad = |message: String| Err(self.error(node.span.clone(), &node.path, message));
        match node.r {
            Ref::Value(Value::String(s)) => {
                let v = s.value();
                if v.contains(['\n', '\r', '\0']) {
                    return bad(format!(
                        "{} has a line break or NUL; a macro value must be one line",
                        self.shown(node)
                    ));
                }
                Ok(Some(v.to_string()))
            }
            Ref::Value(Value::Integer(i)) => Ok(Some(i.value().to_string())),
            Ref::Value(Value::Float(f)) => {
                let x = *f.value();
                if !x.is_finite() {
                    return bad(format!("{} is not a finite number; C has no literal for it", self.shown(node)));
                }
                // `{:?}` keeps the point (`1.0`, `1e-7`), so a float stays a float in C.
                Ok(Some(format!("{x:?}")))
            }
            Ref::Value(Value::Boolean(b)) => Ok(if *b.value() { None } else { Some("0".to_string()) }),
            _ => Err(self.wrong_type(node, "a string, integer, floating-point number or boolean (the macro's value)")),
        }
    }

    /// Every key of `table` is one of `keys`; else an error at the first stranger.
    fn known_keys(&self, node: &Node, table: &dyn TableLike, keys: &[&'static str], what: &str) -> Result<(), Error> {
        for (name, item) in table.iter() {
            if keys.contains(&name) {
                continue;
            }
            let key = table.key(name);
            let span = key.and_then(Key::span).or_else(|| item.span());
            let hint = closest_key(name, keys).map(|k| format!(" (did you mean `{k}`?)")).unwrap_or_default();
            return Err(self.error(
                span,
                &format!("{}.{}", node.path, quoted_key(name)),
                format!("unknown key `{name}`{hint}; the keys {what} accepts: {}", keys.join(", ")),
            ));
        }
        Ok(())
    }

    /// A document that is not TOML (cargo refuses it first; this is for direct callers).
    fn syntax_error(&self, e: &toml_edit::TomlError) -> Error {
        let span = e.span();
        let key = span.as_ref().map_or_else(|| "Cargo.toml".to_string(), |s| key_at(self.text, s.start));
        let lines: Vec<&str> = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let mut message = format!("invalid TOML: {}", lines.join("; "));
        // The token at the error, as written (the span may cover only its first character).
        let rest = span.as_ref().and_then(|s| self.text.get(s.start..)).unwrap_or("");
        let token: String = rest.chars().take_while(|c| !c.is_whitespace() && !",]}#".contains(*c)).take(60).collect();
        if !token.is_empty() {
            message = format!("{message} at `{}`", token.escape_debug());
        }
        if e.message().contains("too large") {
            message.push_str(&format!(" (TOML integers are 64-bit: {} to {})", i64::MIN, i64::MAX));
        }
        self.error(span, &key, message)
    }
}

/// The dotted key whose line holds byte `offset`, for syntax errors: the last `[header]` above
/// it and the key before `=` on its line.
fn key_at(text: &str, offset: usize) -> String {
    let upto = text.get(..offset.min(text.len())).unwrap_or(text);
    let line_start = upto.rfind('\n').map_or(0, |i| i + 1);
    let header = upto[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line.split_once('=').map(|(k, _)| k.trim()).filter(|k| !k.is_empty() && !k.starts_with('['));
    match (header, key) {
        (Some(h), Some(k)) => format!("{h}.{k}"),
        (Some(h), None) => h,
        (None, Some(k)) => k.to_string(),
        (None, None) => "Cargo.toml".to_string(),
    }
}

/// Why `toolchain` cannot build `arch`, and which pinned toolchains can.
fn untargetable(arch: Arch, toolchain: &Pin) -> String {
    let can: Vec<String> = pin::PINS.iter().filter(|p| p.can_target(arch)).map(|p| format!("\"{}\"", p.name)).collect();
    let default = if *toolchain == pin::DEFAULT { "the default " } else { "" };
    let instead = match can.as_slice() {
        [] => "no pinned toolchain can".to_string(),
        [one] => format!("toolchain {one} can (set `toolchain = {one}`)"),
        many => format!("toolchains {} can", many.join(", ")),
    };
    format!("{default}toolchain \"{}\" cannot target `{arch}`; {instead}", toolchain.name)
}

/// The known key a misspelt one probably meant: `_` for `-`, case, or one or two typos.
fn closest_key(name: &str, keys: &[&'static str]) -> Option<&'static str> {
    let norm = name.to_ascii_lowercase().replace('_', "-");
    keys.iter().map(|k| (edit_distance(&norm, k), *k)).filter(|(d, _)| *d <= 2).min().map(|(_, k)| k)
}

/// Why `path` is not a usable folder (`does not exist`, `is a file, not a folder`, ...), or `None`.
fn folder_problem(path: &Path) -> Option<String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some("does not exist".into()),
        Err(e) => return Some(format!("cannot be read: {e}")),
    };
    if meta.is_dir() {
        return None;
    }
    if meta.is_file() {
        return Some("is a file, not a folder".into());
    }
    if !meta.file_type().is_symlink() {
        return Some("is not a folder (it is a special file)".into());
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some(format!("is a symbolic link to {}, which is not a folder", link_chain(path).0)),
        Err(e) => Some(link_problem(path, &e)),
    }
}

/// The targets of the chain of links starting at `path`, as written (`` `a` → `b` ``), and
/// whether the chain comes back to a link it has passed (or is too long to follow).
fn link_chain(path: &Path) -> (String, bool) {
    let mut seen = vec![path.to_path_buf()];
    let mut chain = Vec::new();
    let mut at = path.to_path_buf();
    while let Ok(target) = std::fs::read_link(&at) {
        chain.push(format!("`{}`", target.display()));
        let next = at.parent().unwrap_or(Path::new("")).join(&target);
        // Linux gives up after 40 links; so does this.
        if seen.contains(&next) || chain.len() > 40 {
            return (chain.join(" → "), true);
        }
        seen.push(next.clone());
        at = next;
    }
    (chain.join(" → "), false)
}

/// Why a link cannot be followed: a loop, a missing target, or the OS's reason. The OS error for
/// a loop (ELOOP) has no stable `io::ErrorKind`, so the chain is followed here.
fn link_problem(path: &Path, e: &std::io::Error) -> String {
    let (chain, looped) = link_chain(path);
    if looped {
        format!("is a symbolic-link loop (it points to {chain}, back to itself)")
    } else if e.kind() == std::io::ErrorKind::NotFound {
        format!("is a symbolic link to {chain}, which does not exist")
    } else {
        format!("is a symbolic link to {chain}, which cannot be followed: {e}")
    }
}

/// A key as TOML writes it: bare when it can be (`threads`), quoted otherwise (`"1N"`).
fn quoted_key(name: &str) -> String {
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// `path:line:col` of a byte offset, or just `path`.
fn location(path: &Path, text: &str, span: Option<Range<usize>>) -> Location {
    let at = span.map(|span| {
        let (line, col) = line_col(text, span.start);
        (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(col).unwrap_or(u32::MAX))
    });
    Location::File { path: path.to_path_buf(), at }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    // An offset inside a character counts as that character (never a slicing panic).
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod toolchain_tests;

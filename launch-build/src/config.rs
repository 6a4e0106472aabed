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
//!
//! [package.metadata.launch.file."fp8/**"]   # settings of the files a pattern matches
//! arch = ["sm_90"]                          # a subset of `arch`
//! flags = ["--use_fast_math"]
//! defines = { FP8 = 1 }
//!
//! [package.metadata.launch.kernel."fill_*"] # settings of the kernels a pattern matches
//! threads = 128
//! ```
//!
//! Patterns (`exclude`, `file."..."`, `kernel."..."`) are globs: `*` is any run of characters
//! but `/`, `?` one character but `/`, `**` any run including `/` (`**/` also matches no folder
//! at all). File patterns are relative to the kernel folder, and one that matches a folder
//! matches everything under it (`exclude = ["moe"]` leaves out `moe/a.cu`).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use launch::Arch;
use toml_edit::{ImDocument, Item, Key, TableLike, Value};

use crate::error::Error;
use crate::flags::{self, Mapped};

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
    /// qualified name (`kernels/a.cu::fill`) or by pattern (`fill_*`); see [`Config::kernel_settings`].
    pub kernel: BTreeMap<String, KernelConfig>,
    /// The keys of `kernel` that are patterns, in the order the file lists them.
    pub kernel_patterns: Vec<String>,
    /// `flags`: NVRTC options in canonical spelling (see [`crate::flags`]); `-I` folders are in
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

        let arches = match launch.child_in(table, "arch") {
            Some(list) => doc.arches(&list)?,
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

        let std_headers = match launch.child_in(table, "std-headers") {
            Some(b) => doc.boolean(&b, "true or false")?,
            None => true,
        };

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

        Ok(Config {
            max_spill_bytes,
            kernel,
            kernel_patterns,
            flags,
            ptxas_flags,
            exclude,
            std_headers,
            files,
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

    /// The settings `file` (relative to the kernel folder, `/`-separated: `quantized.cu`,
    /// `sub/a.cu`) is compiled with: the crate's, then each matching file table's, in order.
    pub fn file_settings(&self, file: &str) -> FileSettings {
        let matching: Vec<&FileConfig> = self.files.iter().filter(|f| path_matches(&f.pattern, file)).collect();
        let mut defines = self.defines.clone();
        for (name, value) in matching.iter().flat_map(|f| &f.defines) {
            match defines.iter_mut().find(|(n, _)| n == name) {
                Some(d) => d.1 = value.clone(),
                None => defines.push((name.clone(), value.clone())),
            }
        }
        FileSettings {
            flags: flags::merge_nvrtc(self.flags.iter().chain(matching.iter().flat_map(|f| &f.flags)).cloned()),
            defines,
            arch: matching.iter().rev().find_map(|f| f.arch.clone()),
            ptxas_flags: without_repeats(
                self.ptxas_flags.iter().chain(matching.iter().flat_map(|f| &f.ptxas_flags)).cloned().collect(),
            ),
        }
    }

    /// The settings of kernel `name` (as written in the source), whose qualified name is
    /// `qualified` (`kernels/a.cu::name`). Each setting comes from the first table that sets it,
    /// in this order: the table of the qualified name, the table of the plain name, then the
    /// pattern tables that match (`fill_*`, or `kernels/*.cu::fill_*` against the qualified name)
    /// in the order the file lists them. A kernel no table names gets the defaults.
    pub fn kernel_settings(&self, name: &str, qualified: &str) -> KernelConfig {
        let exact = [self.kernel.get(qualified), self.kernel.get(name)];
        let patterns = self
            .kernel_patterns
            .iter()
            .filter(|p| kernel_key_matches(p, name, qualified))
            .filter_map(|p| self.kernel.get(p));
        let mut out = KernelConfig::default();
        for k in exact.into_iter().flatten().chain(patterns) {
            out.max_spill_bytes = out.max_spill_bytes.or(k.max_spill_bytes);
            out.dynamic_smem = out.dynamic_smem.or(k.dynamic_smem);
            out.threads = out.threads.or(k.threads);
        }
        out
    }

    /// Whether the kernel folder's `file` (relative to it) is left out by `exclude`.
    pub fn is_excluded(&self, file: &str) -> bool {
        self.exclude.iter().any(|p| path_matches(p, file))
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

    /// `arch = ["sm_90", ...]` → sorted, deduplicated arches.
    fn arches(&self, list: &Node) -> Result<Vec<Arch>, Error> {
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
            arches.push(name.parse::<Arch>().map_err(|e| self.error(a.span.clone(), &a.path, e.to_string()))?);
        }
        arches.sort();
        arches.dedup();
        Ok(arches)
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

/// The known key a misspelt one probably meant: `_` for `-`, case, or one or two typos.
fn closest_key(name: &str, keys: &[&'static str]) -> Option<&'static str> {
    let norm = name.to_ascii_lowercase().replace('_', "-");
    keys.iter().map(|k| (edit_distance(&norm, k), *k)).filter(|(d, _)| *d <= 2).min().map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
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
fn location(path: &Path, text: &str, span: Option<Range<usize>>) -> String {
    match span {
        Some(span) => {
            let (line, col) = line_col(text, span.start);
            format!("{}:{line}:{col}", path.display())
        }
        None => path.display().to_string(),
    }
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
mod tests {
    use super::*;

    /// A crate folder with `kernels/`, `inc/`, a file and three kinds of broken links.
    fn crate_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir(p.join("kernels")).unwrap();
        std::fs::create_dir(p.join("inc")).unwrap();
        std::fs::write(p.join("file.cu"), "").unwrap();
        #[cfg(unix)]
        for (link, target) in
            [("self", "self"), ("pong", "ping"), ("ping", "pong"), ("dangling", "gone"), ("to_file", "file.cu")]
        {
            std::os::unix::fs::symlink(target, p.join(link)).unwrap();
        }
        dir
    }

    /// The message for a whole Cargo.toml in `dir`, with the folder cut so it reads `Cargo.toml:L:C`.
    fn message_in(dir: &Path, text: &str) -> String {
        match Config::parse(&dir.join("Cargo.toml"), text) {
            Ok(c) => panic!("accepted:\n{text}\n{c:?}"),
            Err(e) => e.to_string().replace(&format!("{}/", dir.display()), ""),
        }
    }

    /// `[package.metadata.launch]` starts on line 5; its first key is on line 6.
    fn manifest(meta: &str) -> String {
        format!("[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\n{meta}\n")
    }

    fn parse(meta: &str) -> Result<Config, Error> {
        let dir = crate_dir();
        Config::parse(&dir.path().join("Cargo.toml"), &manifest(meta))
    }

    const CHOICES: &str = "valid choices: sm_50, sm_52, sm_53, sm_60, sm_61, sm_62, sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_100f, sm_101, sm_101a, sm_101f, sm_103, sm_103a, sm_103f, sm_110, sm_110a, sm_110f, sm_120, sm_120a, sm_120f, sm_121, sm_121a, sm_121f";
    const ARCH_FORM: &str =
        " (names are `sm_` and a compute capability, with an `a` or `f` suffix where the arch has one)";

    /// Issue 11 item 9: every bad value gives the full key path, `Cargo.toml:LINE:COL` of the
    /// value, the value as written and what is expected in TOML terms (no Rust type names).
    #[test]
    fn every_bad_value_names_key_path_position_value_and_expectation() {
        let a = "arch = [\"sm_90\"]\n";
        let cases: &[(&str, &str)] = &[
            // threads
            ("threads = \"x\"", "Cargo.toml:7:11: `package.metadata.launch.threads`: \"x\" is a string; expected an integer from 1 to 1024"),
            ("threads = 128.5", "Cargo.toml:7:11: `package.metadata.launch.threads`: 128.5 is a floating-point number; expected an integer from 1 to 1024"),
            ("threads = true", "Cargo.toml:7:11: `package.metadata.launch.threads`: true is a boolean; expected an integer from 1 to 1024"),
            ("threads = 1979-05-27", "Cargo.toml:7:11: `package.metadata.launch.threads`: 1979-05-27 is a date-time; expected an integer from 1 to 1024"),
            ("threads = [256]", "Cargo.toml:7:11: `package.metadata.launch.threads`: [256] is a list; expected an integer from 1 to 1024"),
            ("[package.metadata.launch.threads]\nx = 1", "Cargo.toml:7:1: `package.metadata.launch.threads`: [package.metadata.launch.threads] is a table; expected an integer from 1 to 1024"),
            ("threads = 0", "Cargo.toml:7:11: `package.metadata.launch.threads`: 0 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
            ("threads = -5", "Cargo.toml:7:11: `package.metadata.launch.threads`: -5 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
            ("threads = 0x1000", "Cargo.toml:7:11: `package.metadata.launch.threads`: 0x1000 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
            ("threads = 4294967553", "Cargo.toml:7:11: `package.metadata.launch.threads`: 4294967553 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
            ("threads = 99999999999999999999", "Cargo.toml:7:11: `package.metadata.launch.threads`: invalid TOML: number too large to fit in target type at `99999999999999999999` (TOML integers are 64-bit: -9223372036854775808 to 9223372036854775807)"),
            // max-spill-bytes
            ("max-spill-bytes = -1", "Cargo.toml:7:19: `package.metadata.launch.max-spill-bytes`: -1 is not a byte count; expected a non-negative integer number of bytes (0 to 4294967295)"),
            ("max-spill-bytes = 4294967296", "Cargo.toml:7:19: `package.metadata.launch.max-spill-bytes`: 4294967296 is not a byte count; expected a non-negative integer number of bytes (0 to 4294967295)"),
            ("max-spill-bytes = \"1K\"", "Cargo.toml:7:19: `package.metadata.launch.max-spill-bytes`: \"1K\" is a string; expected a non-negative integer number of bytes"),
            // kernel.<name>
            ("kernel = 5", "Cargo.toml:7:10: `package.metadata.launch.kernel`: 5 is an integer; expected a table of per-kernel settings such as [package.metadata.launch.kernel.my_kernel]"),
            ("[[package.metadata.launch.kernel]]\nthreads = 1", "Cargo.toml:7:1: `package.metadata.launch.kernel`: [[package.metadata.launch.kernel]] is a list of tables; expected a table of per-kernel settings such as [package.metadata.launch.kernel.my_kernel]"),
            ("kernel = { poly_eval = 256 }", "Cargo.toml:7:24: `package.metadata.launch.kernel.poly_eval`: 256 is an integer; expected a table of per-kernel settings such as { threads = 256 }"),
            ("[package.metadata.launch.kernel.poly_eval]\nthreads = \"x\"", "Cargo.toml:8:11: `package.metadata.launch.kernel.poly_eval.threads`: \"x\" is a string; expected an integer from 1 to 1024"),
            ("[package.metadata.launch.kernel.poly_eval]\nthreads = 2048", "Cargo.toml:8:11: `package.metadata.launch.kernel.poly_eval.threads`: 2048 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
            ("kernel.k.dynamic-smem = -4096", "Cargo.toml:7:25: `package.metadata.launch.kernel.k.dynamic-smem`: -4096 is not a byte count; expected a non-negative integer number of bytes (0 to 4294967295)"),
            ("[package.metadata.launch.kernel.k]\nmax-spill-bytes = 1.5", "Cargo.toml:8:19: `package.metadata.launch.kernel.k.max-spill-bytes`: 1.5 is a floating-point number; expected a non-negative integer number of bytes"),
            ("[package.metadata.launch.kernel.\"a b\"]\nthreads = 0", "Cargo.toml:8:11: `package.metadata.launch.kernel.\"a b\".threads`: 0 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
            // unknown keys
            ("archs = 1", "Cargo.toml:7:1: `package.metadata.launch.archs`: unknown key `archs` (did you mean `arch`?); the keys [package.metadata.launch] accepts: arch, kernels, include, defines, threads, max-spill-bytes, kernel, exclude, flags, ptxas-flags, std-headers, file"),
            ("max_spill_bytes = 1", "Cargo.toml:7:1: `package.metadata.launch.max_spill_bytes`: unknown key `max_spill_bytes` (did you mean `max-spill-bytes`?); the keys [package.metadata.launch] accepts: arch, kernels, include, defines, threads, max-spill-bytes, kernel, exclude, flags, ptxas-flags, std-headers, file"),
            ("optimize = true", "Cargo.toml:7:1: `package.metadata.launch.optimize`: unknown key `optimize`; the keys [package.metadata.launch] accepts: arch, kernels, include, defines, threads, max-spill-bytes, kernel, exclude, flags, ptxas-flags, std-headers, file"),
            ("[package.metadata.launch.kernel.k]\ndynamic_smem = 1", "Cargo.toml:8:1: `package.metadata.launch.kernel.k.dynamic_smem`: unknown key `dynamic_smem` (did you mean `dynamic-smem`?); the keys [package.metadata.launch.kernel.<name>] accepts: max-spill-bytes, dynamic-smem, threads"),
            // include
            ("include = \"inc\"", "Cargo.toml:7:11: `package.metadata.launch.include`: \"inc\" is a string; expected a list of folder paths such as [\"include\"]"),
            ("include = [\"inc\", 5]", "Cargo.toml:7:19: `package.metadata.launch.include[1]`: 5 is an integer; expected a folder path such as \"include\""),
            ("include = [\"inc\", \"\"]", "Cargo.toml:7:19: `package.metadata.launch.include[1]`: \"\" is an empty path; expected a folder path such as \"include\""),
            ("include = [\"nope\"]", "Cargo.toml:7:12: `package.metadata.launch.include[0]`: `nope` does not exist; expected an include folder, relative to Cargo.toml"),
            ("include = [\"/usr/include\"]", "Cargo.toml:7:12: `package.metadata.launch.include[0]`: `/usr/include` is absolute; use a path relative to Cargo.toml so the crate builds anywhere"),
            // defines
            ("defines = \"N=1\"", "Cargo.toml:7:11: `package.metadata.launch.defines`: \"N=1\" is a string; expected a table of macro definitions such as { N = 128 }"),
            ("defines = [\"N\"]", "Cargo.toml:7:11: `package.metadata.launch.defines`: [\"N\"] is a list; expected a table of macro definitions such as { N = 128 }"),
            ("defines = { N = [1] }", "Cargo.toml:7:17: `package.metadata.launch.defines.N`: [1] is a list; expected a string, integer, floating-point number or boolean (the macro's value)"),
            ("defines = { N = { M = 1 } }", "Cargo.toml:7:17: `package.metadata.launch.defines.N`: { M = 1 } is a table; expected a string, integer, floating-point number or boolean (the macro's value)"),
            ("defines = { \"1N\" = 1 }", "Cargo.toml:7:13: `package.metadata.launch.defines.1N`: `1N` is not a C identifier; expected a macro name of letters, digits and `_`, not starting with a digit"),
            ("defines = { \"A B\" = 1 }", "Cargo.toml:7:13: `package.metadata.launch.defines.\"A B\"`: `A B` is not a C identifier; expected a macro name of letters, digits and `_`, not starting with a digit"),
            ("defines = { N = nan }", "Cargo.toml:7:17: `package.metadata.launch.defines.N`: nan is not a finite number; C has no literal for it"),
            ("defines = { N = \"a\\nb\" }", "Cargo.toml:7:17: `package.metadata.launch.defines.N`: \"a\\nb\" has a line break or NUL; a macro value must be one line"),
            // kernels
            ("kernels = 5", "Cargo.toml:7:11: `package.metadata.launch.kernels`: 5 is an integer; expected a folder path such as \"kernels\""),
            ("kernels = \"\"", "Cargo.toml:7:11: `package.metadata.launch.kernels`: \"\" is an empty path; expected a folder path such as \"kernels\""),
            ("kernels = \"nope\"", "Cargo.toml:7:11: `package.metadata.launch.kernels`: `nope` does not exist; expected a folder of .cu files, relative to Cargo.toml"),
            ("kernels = \"file.cu\"", "Cargo.toml:7:11: `package.metadata.launch.kernels`: `file.cu` is a file, not a folder; expected a folder of .cu files, relative to Cargo.toml"),
            ("kernels = \"/abs\"", "Cargo.toml:7:11: `package.metadata.launch.kernels`: `/abs` is absolute; use a path relative to Cargo.toml so the crate builds anywhere"),
        ];
        let dir = crate_dir();
        for (meta, expected) in cases {
            let text = manifest(&format!("{a}{meta}"));
            assert_eq!(message_in(dir.path(), &text), *expected, "for:\n{meta}");
        }
    }

    #[test]
    fn every_bad_arch_names_the_element_and_the_choices() {
        let cases: &[(&str, String)] = &[
            ("arch = \"sm_90\"", "Cargo.toml:6:8: `package.metadata.launch.arch`: \"sm_90\" is a string; expected a list of arch names such as [\"sm_90\"]".into()),
            ("arch = [\"sm_90\", 90]", "Cargo.toml:6:18: `package.metadata.launch.arch[1]`: 90 is an integer; expected an arch name such as \"sm_90\"".into()),
            ("arch = [\"sm_90\", [\"sm_80\"]]", "Cargo.toml:6:18: `package.metadata.launch.arch[1]`: [\"sm_80\"] is a list; expected an arch name such as \"sm_90\"".into()),
            ("arch = { sm = 90 }", "Cargo.toml:6:8: `package.metadata.launch.arch`: { sm = 90 } is a table; expected a list of arch names such as [\"sm_90\"]".into()),
            ("arch = [\"sm_90\",\n  \"sm_9O\"]", format!("Cargo.toml:7:3: `package.metadata.launch.arch[1]`: `sm_9O` is not a GPU architecture (did you mean `sm_90`?); {CHOICES}{ARCH_FORM}")),
            ("arch = [\"\"]", format!("Cargo.toml:6:9: `package.metadata.launch.arch[0]`: an empty name is not a GPU architecture; {CHOICES}{ARCH_FORM}")),
            ("arch = [\"compute_90\"]", format!("Cargo.toml:6:9: `package.metadata.launch.arch[0]`: `compute_90` is not a GPU architecture (did you mean `sm_90`? `compute_*` names a virtual architecture; a cubin needs a real `sm_*` one); {CHOICES}{ARCH_FORM}")),
            ("arch = []", format!("Cargo.toml:6:8: `package.metadata.launch.arch`: the list is empty; name at least one GPU architecture; {CHOICES}")),
            ("threads = 256", format!("Cargo.toml:5:1: `package.metadata.launch.arch`: missing: list the GPU architectures to build for, e.g. arch = [\"sm_90\"]; {CHOICES}")),
        ];
        let dir = crate_dir();
        for (meta, expected) in cases {
            assert_eq!(message_in(dir.path(), &manifest(meta)), *expected, "for:\n{meta}");
        }
    }

    /// The tables above `[package.metadata.launch]`: each wrong shape names its own key.
    #[test]
    fn enclosing_tables_of_the_wrong_type_name_their_key() {
        let cases: &[(&str, &str)] = &[
            ("package = 5", "Cargo.toml:1:11: `package`: 5 is an integer; expected a table: the [package] section"),
            ("[package]\nname = 5", "Cargo.toml:2:8: `package.name`: 5 is an integer; expected a package name string such as \"my-crate\""),
            ("[package]\nname = \"k\"\nmetadata = 5", "Cargo.toml:3:12: `package.metadata`: 5 is an integer; expected a table such as [package.metadata.launch]"),
            ("[package]\nname = \"k\"\n[package.metadata]\nlaunch = \"sm_90\"", "Cargo.toml:4:10: `package.metadata.launch`: \"sm_90\" is a string; expected a table of launch settings such as [package.metadata.launch] with arch = [\"sm_90\"]"),
            ("[package]\nname = \"k\"\n[package.metadata]\nlaunch.arch = \"sm_90\"", "Cargo.toml:4:15: `package.metadata.launch.arch`: \"sm_90\" is a string; expected a list of arch names such as [\"sm_90\"]"),
            ("[package]\nname = \"k\"\n[package.metadata.launch]\narch = [\"sm_90\"]\nthreads =\n", "Cargo.toml:5:10: `package.metadata.launch.threads`: invalid TOML: invalid string; expected `\"`, `'`"),
        ];
        let dir = crate_dir();
        for (text, expected) in cases {
            assert_eq!(message_in(dir.path(), text), *expected, "for:\n{text}");
        }
        let m = message_in(dir.path(), "[package]\nname = \"k\"\n");
        assert_eq!(
            m,
            "Cargo.toml: `package.metadata.launch`: missing table; add to Cargo.toml:\n\n[package.metadata.launch]\narch = [\"sm_90\"]\n"
        );
    }

    /// Issue 11 item 12: a `kernels` link that loops or dangles says so instead of "does not exist".
    #[cfg(unix)]
    #[test]
    fn broken_links_as_kernel_folder_say_what_is_wrong() {
        let a = "arch = [\"sm_90\"]\n";
        let tail = "; expected a folder of .cu files, relative to Cargo.toml";
        let cases: &[(&str, &str)] = &[
            ("kernels = \"self\"", "`self` is a symbolic-link loop (it points to `self`, back to itself)"),
            ("kernels = \"ping\"", "`ping` is a symbolic-link loop (it points to `pong` → `ping`, back to itself)"),
            ("kernels = \"dangling\"", "`dangling` is a symbolic link to `gone`, which does not exist"),
            ("kernels = \"to_file\"", "`to_file` is a symbolic link to `file.cu`, which is not a folder"),
        ];
        let dir = crate_dir();
        for (meta, why) in cases {
            let m = message_in(dir.path(), &manifest(&format!("{a}{meta}")));
            assert_eq!(m, format!("Cargo.toml:7:11: `package.metadata.launch.kernels`: {why}{tail}"));
        }
        // The default folder, `kernels`, as a link to itself.
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("kernels", dir.path().join("kernels")).unwrap();
        let m = message_in(dir.path(), &manifest(a));
        assert_eq!(
            m,
            "Cargo.toml:5:1: `package.metadata.launch.kernels`: the default kernel folder `kernels` is a symbolic-link loop (it points to `kernels`, back to itself); create it or set `kernels = \"...\"`"
        );
        // Without the folder at all.
        std::fs::remove_file(dir.path().join("kernels")).unwrap();
        let m = message_in(dir.path(), &manifest(a));
        assert!(
            m.ends_with("the default kernel folder `kernels` does not exist; create it or set `kernels = \"...\"`"),
            "{m}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_folder_is_a_folder() {
        let dir = crate_dir();
        std::os::unix::fs::symlink("kernels", dir.path().join("via_link")).unwrap();
        let text = manifest("arch = [\"sm_90\"]\nkernels = \"via_link\"");
        let c = Config::parse(&dir.path().join("Cargo.toml"), &text).unwrap();
        assert_eq!(c.kernel_dir, PathBuf::from("via_link"));
    }

    #[test]
    fn arch_lists_from_the_environment_name_the_bad_entry() {
        let names = |l: &str| parse_arch_list(l).map(|v| v.iter().map(|a| a.to_string()).collect::<Vec<_>>());
        assert_eq!(names("sm_100, sm_90,sm_90").unwrap(), ["sm_90", "sm_100"]);
        assert_eq!(
            names("sm_90,sm_9O").unwrap_err(),
            format!("entry 2 of `sm_90,sm_9O`: `sm_9O` is not a GPU architecture (did you mean `sm_90`?); {CHOICES}{ARCH_FORM}")
        );
        assert_eq!(
            names("sm_90,,sm_100").unwrap_err(),
            "entry 2 of `sm_90,,sm_100` is empty; write comma-separated arch names such as sm_90,sm_100"
        );
        assert_eq!(
            names(" ").unwrap_err(),
            format!("the list is empty; write comma-separated arch names such as sm_90,sm_100; {CHOICES}")
        );
        assert_eq!(
            names("90").unwrap_err(),
            format!("`90` is not a GPU architecture (did you mean `sm_90`?); {CHOICES}{ARCH_FORM}")
        );
    }

    #[test]
    fn a_full_table_is_read_sorted_and_deduplicated() {
        let c = parse(
            "arch = [\"sm_100\", \"sm_90\", \"sm_90\"]\ninclude = [\"inc\"]\ndefines = { N = 128, FAST = true, NAME = \"x\", OFF = false }\nthreads = 128",
        )
        .unwrap();
        let arches: Vec<String> = c.arches.iter().map(|a| a.to_string()).collect();
        assert_eq!(arches, ["sm_90", "sm_100"]);
        assert_eq!(c.include_dirs, [PathBuf::from("inc")]);
        assert_eq!(
            c.defines,
            [
                ("FAST".to_string(), None),
                ("N".to_string(), Some("128".to_string())),
                ("NAME".to_string(), Some("x".to_string())),
                ("OFF".to_string(), Some("0".to_string())),
            ]
        );
        assert_eq!(c.host_threads, 128);
        assert_eq!(c.package, "k");
        assert_eq!(c.kernel_dir, PathBuf::from("kernels"));
    }

    /// A float macro keeps its point: `1.0` must not become the integer `1` in C.
    #[test]
    fn float_defines_stay_floats() {
        let c = parse("arch = [\"sm_90\"]\n[package.metadata.launch.defines]\nONE = 1.0\nSMALL = 1e-7\nHEX = 0x10")
            .unwrap();
        let value = |n: &str| c.defines.iter().find(|(k, _)| k == n).unwrap().1.clone().unwrap();
        assert_eq!((value("ONE").as_str(), value("SMALL").as_str(), value("HEX").as_str()), ("1.0", "1e-7", "16"));
    }

    #[test]
    fn spill_budget_and_per_kernel_settings() {
        let c = parse(
            "arch = [\"sm_90\"]\nmax-spill-bytes = 0\n[package.metadata.launch.kernel.poly_eval]\nmax-spill-bytes = 8192\ndynamic-smem = 4096\nthreads = 384\n[package.metadata.launch.kernel.other]",
        )
        .unwrap();
        assert_eq!(c.max_spill_bytes, Some(0));
        let k = &c.kernel["poly_eval"];
        assert_eq!((k.max_spill_bytes, k.dynamic_smem, k.threads), (Some(8192), Some(4096), Some(384)));
        assert_eq!(c.kernel["other"], KernelConfig::default());
        let c = parse("arch = [\"sm_90\"]\nkernel = { k = { threads = 64 } }").unwrap();
        assert_eq!(c.kernel["k"].threads, Some(64));
    }

    /// `flags` and `ptxas-flags` are mapped; `-I` joins `include`, `-Xptxas` joins `ptxas-flags`.
    #[test]
    fn flags_are_mapped_and_placed() {
        let c = parse(
            "arch = [\"sm_90\"]\nflags = [\"-std=c++17\", \"--expt-relaxed-constexpr\", \"-I\", \"inc\", \"-DX=1\", \"-Xptxas\", \"-O2\", \"-O3\"]\nptxas-flags = [\"-warn-spills\", \"--opt-level=2\"]",
        )
        .unwrap();
        assert_eq!(c.flags, ["--std=c++17", "--device-as-default-execution-space", "--define-macro=X=1"]);
        assert_eq!(c.include_dirs, [PathBuf::from("inc")]);
        assert_eq!(c.ptxas_flags, ["--opt-level=2", "--warn-on-spills"]);
        assert!(c.std_headers);
        assert!(!parse("arch = [\"sm_90\"]\nstd-headers = false").unwrap().std_headers);
    }

    /// A refused or unknown flag is an error at its element, with the reason.
    #[test]
    fn refused_flags_are_located() {
        let a = "arch = [\"sm_90\"]\n";
        let cases: &[(&str, &str)] = &[
            ("flags = [\"-std=c++17\", \"-arch=sm_80\"]", "Cargo.toml:7:24: `package.metadata.launch.flags[1]`: `-arch=sm_80` is not allowed: launch-build sets the target architecture of every compile from `arch` (and a file's own `arch`)"),
            ("flags = [\"-rdc=true\"]", "Cargo.toml:7:10: `package.metadata.launch.flags[0]`: `-rdc=true` is not allowed: relocatable device code needs a device link step, and launch-build links nothing: each file is compiled to one complete module"),
            ("flags = [\"-I\", \"nope\"]", "Cargo.toml:7:10: `package.metadata.launch.flags[0]`: `nope` does not exist; expected an include folder, relative to Cargo.toml"),
            ("flags = \"-std=c++17\"", "Cargo.toml:7:9: `package.metadata.launch.flags`: \"-std=c++17\" is a string; expected a list of compiler options such as [\"-std=c++17\"]"),
            ("flags = [17]", "Cargo.toml:7:10: `package.metadata.launch.flags[0]`: 17 is an integer; expected a string, one option per element, such as \"-std=c++17\""),
            ("ptxas-flags = [\"-O3\", \"--maxrregcount=32\"]", "Cargo.toml:7:23: `package.metadata.launch.ptxas-flags[1]`: `--maxrregcount=32` is not allowed: register and block limits belong to each kernel's launch contract: write `// @launch(threads, min_blocks, max_regs)` above the kernel (or use `__launch_bounds__`)"),
            ("exclude = [\"\"]", "Cargo.toml:7:12: `package.metadata.launch.exclude[0]`: `` names no file; expected a file, folder or pattern relative to the kernel folder"),
            ("exclude = [\"/abs\"]", "Cargo.toml:7:12: `package.metadata.launch.exclude[0]`: `/abs` is absolute; expected a file, folder or pattern relative to the kernel folder"),
            ("std-headers = 1", "Cargo.toml:7:15: `package.metadata.launch.std-headers`: 1 is an integer; expected true or false"),
            ("[package.metadata.launch.file.\"a.cu\"]\narch = [\"sm_80\"]", "Cargo.toml:8:9: `package.metadata.launch.file.\"a.cu\".arch[0]`: `sm_80` is not in the crate's `arch` (sm_90); a file's `arch` chooses among those"),
            ("[package.metadata.launch.file.\"a.cu\"]\narch = []", "Cargo.toml:8:8: `package.metadata.launch.file.\"a.cu\".arch`: the list is empty; to leave files out, use `exclude`"),
            ("[package.metadata.launch.file.\"a.cu\"]\nthreads = 1", "Cargo.toml:8:1: `package.metadata.launch.file.\"a.cu\".threads`: unknown key `threads`; the keys [package.metadata.launch.file.\"<pattern>\"] accepts: flags, ptxas-flags, defines, arch"),
            ("[package.metadata.launch.file.\"a.cu\"]\nflags = [\"-Iinc\"]", "Cargo.toml:8:10: `package.metadata.launch.file.\"a.cu\".flags[0]`: an include folder cannot be given to some files only: its headers are tracked for the whole crate; add it to `include` (or the crate's `flags`)"),
            ("[package.metadata.launch.file.\"a.cu\"]\nflags = [\"-o\", \"x\"]", "Cargo.toml:8:10: `package.metadata.launch.file.\"a.cu\".flags[0]`: `-o` is not allowed: launch-build chooses what is produced: PTX for each arch from NVRTC, then a cubin from ptxas, both embedded in the crate"),
            ("[package.metadata.launch.file.\"a.cu\"]\ndefines = { \"1X\" = 1 }", "Cargo.toml:8:13: `package.metadata.launch.file.\"a.cu\".defines.1X`: `1X` is not a C identifier; expected a macro name of letters, digits and `_`, not starting with a digit"),
            ("file = 5", "Cargo.toml:7:8: `package.metadata.launch.file`: 5 is an integer; expected a table of per-file settings such as [package.metadata.launch.file.\"quantized.cu\"]"),
        ];
        let dir = crate_dir();
        for (meta, expected) in cases {
            assert_eq!(message_in(dir.path(), &manifest(&format!("{a}{meta}"))), *expected, "for:\n{meta}");
        }
    }

    /// Crate-wide settings first, then each matching file table in order; later values win.
    #[test]
    fn file_settings_merge_in_order() {
        let c = parse(
            "arch = [\"sm_80\", \"sm_90\"]\nflags = [\"-std=c++14\", \"-lineinfo\"]\nptxas-flags = [\"-O3\"]\ndefines = { N = 1, M = 2 }\n\
             [package.metadata.launch.file.\"fp8/**\"]\narch = [\"sm_90\"]\nflags = [\"-std=c++17\"]\ndefines = { FP8 = true }\n\
             [package.metadata.launch.file.\"fp8/special.cu\"]\narch = [\"sm_80\", \"sm_90\"]\ndefines = { N = 3 }\nflags = [\"-Xptxas\", \"-warn-spills\"]\n\
             [package.metadata.launch.file.\"*.cu\"]\nflags = [\"--use_fast_math\"]",
        )
        .unwrap();
        let sm = |names: &[&str]| names.iter().map(|n| n.parse::<Arch>().unwrap()).collect::<Vec<_>>();
        let top = c.file_settings("a.cu");
        assert_eq!(top.flags, ["--std=c++14", "--generate-line-info", "--use_fast_math"]);
        assert_eq!(top.arch, None);
        assert_eq!(top.ptxas_flags, ["--opt-level=3"]);
        let fp8 = c.file_settings("fp8/gemm.cu");
        assert_eq!(fp8.flags, ["--generate-line-info", "--std=c++17"], "`*.cu` does not cross a folder");
        assert_eq!(fp8.arch, Some(sm(&["sm_90"])));
        let d = |n: &str, v: Option<&str>| (n.to_string(), v.map(String::from));
        assert_eq!(fp8.defines, [d("M", Some("2")), d("N", Some("1")), d("FP8", None)]);
        let special = c.file_settings("fp8/special.cu");
        assert_eq!(special.arch, Some(sm(&["sm_80", "sm_90"])), "the last table that sets `arch` wins");
        assert_eq!(special.defines, [d("M", Some("2")), d("N", Some("3")), d("FP8", None)]);
        assert_eq!(special.ptxas_flags, ["--opt-level=3", "--warn-on-spills"]);
    }

    /// Qualified name, then plain name, then patterns in file order, setting by setting.
    #[test]
    fn kernel_settings_by_name_qualified_name_and_pattern() {
        let c = parse(
            "arch = [\"sm_90\"]\n[package.metadata.launch.kernel.\"fill_*\"]\nthreads = 128\ndynamic-smem = 64\n\
             [package.metadata.launch.kernel.\"kernels/c*.cu::fill_*\"]\nmax-spill-bytes = 1\n\
             [package.metadata.launch.kernel.\"*\"]\nthreads = 32\nmax-spill-bytes = 8\n\
             [package.metadata.launch.kernel.fill_f16]\nthreads = 512\n\
             [package.metadata.launch.kernel.\"kernels/b.cu::fill_f16\"]\ndynamic-smem = 0",
        )
        .unwrap();
        assert_eq!(c.kernel_patterns, ["fill_*", "kernels/c*.cu::fill_*", "*"]);
        let k = |name: &str, q: &str| {
            let k = c.kernel_settings(name, q);
            (k.threads, k.dynamic_smem, k.max_spill_bytes)
        };
        assert_eq!(k("fill_f32", "kernels/a.cu::fill_f32"), (Some(128), Some(64), Some(8)));
        assert_eq!(k("fill_f16", "kernels/a.cu::fill_f16"), (Some(512), Some(64), Some(8)));
        assert_eq!(k("fill_f16", "kernels/b.cu::fill_f16"), (Some(512), Some(0), Some(8)));
        assert_eq!(k("fill_u8", "kernels/copy.cu::fill_u8"), (Some(128), Some(64), Some(1)));
        assert_eq!(k("other", "kernels/a.cu::other"), (Some(32), None, Some(8)));
        let none = parse("arch = [\"sm_90\"]").unwrap();
        assert_eq!(none.kernel_settings("k", "kernels/a.cu::k"), KernelConfig::default());
        assert!(kernel_key_matches("kernels/a.cu::k", "k", "kernels/a.cu::k"));
        assert!(!kernel_key_matches("kernels/*.cu::k", "k", "kernels/sub/a.cu::k"));
    }

    #[test]
    fn globs_match_as_documented() {
        let yes = [
            ("*.cu", "a.cu"),
            ("a?.cu", "ab.cu"),
            ("**/*.cu", "a.cu"),
            ("**/*.cu", "x/y/a.cu"),
            ("x/**", "x/y/z.cu"),
            ("x/**/z.cu", "x/z.cu"),
            ("x/**/z.cu", "x/a/b/z.cu"),
            ("mm*_gguf", "mmq_gguf"),
            ("fill_*", "fill_"),
            ("**", ""),
        ];
        let no =
            [("*.cu", "x/a.cu"), ("a?.cu", "a/.cu"), ("x/**/z.cu", "xz.cu"), ("fill_*", "fil"), ("a", "ab"), ("", "a")];
        for (p, t) in yes {
            assert!(glob_match(p, t), "{p} should match {t}");
        }
        for (p, t) in no {
            assert!(!glob_match(p, t), "{p} should not match {t}");
        }
        assert!(
            path_matches("moe", "moe/a/b.cu") && path_matches("moe/", "moe/a.cu") && !path_matches("moe", "moe2/a.cu")
        );
        // Quadratic at worst in pattern × text, never exponential.
        let started = std::time::Instant::now();
        assert!(!glob_match(&"*a".repeat(200), &"a".repeat(199)));
        assert!(started.elapsed().as_secs() < 5);
    }

    #[test]
    fn default_host_block_is_256() {
        assert_eq!(parse("arch = [\"sm_80\"]").unwrap().host_threads, 256);
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é", 1), (1, 1));
        assert_eq!(line_col("ab", 99), (1, 3));
    }

    /// Mutated manifests (bytes flipped, cut, repeated) give `Ok` or an error, never a panic, and
    /// every error that has a position carries `Cargo.toml:LINE:COL`.
    #[test]
    fn mutated_manifests_never_panic() {
        let base = manifest(
            "arch = [\"sm_90\", \"sm_100\"]\ninclude = [\"inc\"]\ndefines = { N = 128, F = 1.5 }\nthreads = 128\n[package.metadata.launch.kernel.k]\nthreads = 64\ndynamic-smem = 4096",
        );
        let dir = crate_dir();
        let alphabet = b"[]{}=\"',.-_0123456789xe \n#ak";
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let mut bytes = base.clone().into_bytes();
            for _ in 0..1 + next() % 3 {
                let at = (next() as usize) % bytes.len();
                match next() % 3 {
                    0 => bytes[at] = alphabet[(next() as usize) % alphabet.len()],
                    1 => bytes.truncate(at.max(1)),
                    _ => {
                        let piece = bytes[at..].iter().take(8).copied().collect::<Vec<_>>();
                        bytes.splice(at..at, piece);
                    }
                }
            }
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if let Err(e) = Config::parse(&dir.path().join("Cargo.toml"), &text) {
                let m = e.to_string();
                assert!(m.contains("Cargo.toml"), "{m}");
            }
        }
    }
}

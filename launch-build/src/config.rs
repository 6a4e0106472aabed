//! `[package.metadata.launch]`: what to compile, for which arches, with which flags.
//!
//! ```toml
//! [package.metadata.launch]
//! arch = ["sm_90", "sm_100"]      # required: every arch to build a cubin for
//! kernels = "kernels"             # folder of .cu files, relative to Cargo.toml
//! include = ["include"]           # extra include folders
//! defines = { N = 128, FAST = true }
//! threads = 256                   # block size the host uses for kernels without a contract
//! ```

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use launch::Arch;
use toml_edit::{ImDocument, Item, Key, TableLike, Value};

use crate::error::Error;

/// The keys `[package.metadata.launch]` accepts.
pub const KEYS: &[&str] =
    &["arch", "kernels", "include", "defines", "threads", "max-spill-bytes", "kernel", "std-headers"];

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
    /// Per-kernel settings, by kernel name (as written in the source, or the symbol name).
    pub kernel: BTreeMap<String, KernelConfig>,
    /// `std-headers` (default true): give NVRTC cargo-launch's standard headers (headers.rs).
    // i1 owns config.rs: minimal field + key added by i2.
    pub std_headers: bool,
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

        let mut defines = Vec::new();
        if let Some(d) = launch.child_in(table, "defines") {
            let entries = doc.table(&d, "a table of macro definitions such as { N = 128 }")?;
            for (name, _) in entries.iter() {
                let Some((key, item)) = entries.get_key_value(name) else { continue };
                let Some(value) = d.entry(key, item) else { continue };
                if !is_identifier(name) {
                    let message = format!(
                        "`{name}` is not a C identifier; expected a macro name of letters, digits and `_`, not starting with a digit"
                    );
                    return Err(doc.error(key.span().or(value.span.clone()), &value.path, message));
                }
                defines.push((name.to_string(), doc.define_value(&value)?));
            }
        }
        defines.sort();

        let host_threads = match launch.child_in(table, "threads") {
            Some(t) => doc.block_size(&t)?,
            None => DEFAULT_HOST_THREADS,
        };
        let max_spill_bytes = launch.child_in(table, "max-spill-bytes").map(|b| doc.bytes(&b)).transpose()?;

        let mut kernel = BTreeMap::new();
        if let Some(k) = launch.child_in(table, "kernel") {
            let kernels =
                doc.table(&k, "a table of per-kernel settings such as [package.metadata.launch.kernel.my_kernel]")?;
            for (name, _) in kernels.iter() {
                let Some((key, item)) = kernels.get_key_value(name) else { continue };
                let Some(one) = k.entry(key, item) else { continue };
                let settings = doc.table(&one, "a table of per-kernel settings such as { threads = 256 }")?;
                doc.known_keys(&one, settings, KERNEL_KEYS, "[package.metadata.launch.kernel.<name>]")?;
                let get = |field: &str| one.child_in(settings, field);
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

        // i1 owns config.rs: minimal `std-headers` parsing added by i2.
        let std_headers = match launch.child_in(table, "std-headers") {
            Some(b) => match b.r {
                Ref::Value(Value::Boolean(v)) => *v.value(),
                _ => return Err(doc.wrong_type(&b, "true or false")),
            },
            None => true,
        };

        Ok(Config {
            max_spill_bytes,
            kernel,
            std_headers,
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
            ("archs = 1", "Cargo.toml:7:1: `package.metadata.launch.archs`: unknown key `archs` (did you mean `arch`?); the keys [package.metadata.launch] accepts: arch, kernels, include, defines, threads, max-spill-bytes, kernel, std-headers"),
            ("max_spill_bytes = 1", "Cargo.toml:7:1: `package.metadata.launch.max_spill_bytes`: unknown key `max_spill_bytes` (did you mean `max-spill-bytes`?); the keys [package.metadata.launch] accepts: arch, kernels, include, defines, threads, max-spill-bytes, kernel, std-headers"),
            ("optimize = true", "Cargo.toml:7:1: `package.metadata.launch.optimize`: unknown key `optimize`; the keys [package.metadata.launch] accepts: arch, kernels, include, defines, threads, max-spill-bytes, kernel, std-headers"),
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

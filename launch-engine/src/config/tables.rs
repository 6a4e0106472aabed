//! The readers of `[package.metadata.launch]` key by key and of its sub-tables
//! (`file."<pattern>"`, `kernel."<key>"`; `tune.<kernel>` is in `tune`), each returning what
//! `Config::parse` stores or the located error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::quantity::Quantity;
use launch::Arch;
use toml_edit::TableLike;

use super::document::{location, Doc, Node};
use super::flags::Mapped;
use super::pattern::is_pattern;
use super::values::folder_problem;
use super::{without_repeats, FileConfig, HostPattern, KernelConfig, NvccFlag, FILE_KEYS, KERNEL_KEYS};
use crate::error::{Error, Location};
use crate::toolchain::pin::Pin;

impl<'a> Doc<'a> {
    /// The package's name and its `[package.metadata.launch]` node, or the error saying which of
    /// them is missing.
    pub(super) fn launch_table<'n>(
        &self,
        top: &Node<'n>,
        root: &'n dyn TableLike,
    ) -> Result<(String, Node<'n>), Error> {
        let Some(package) = top.child_in(root, "package") else {
            return Err(self.error(
                None,
                "package",
                "this Cargo.toml has no [package] (launch-build runs in a package's build script)".into(),
            ));
        };
        let package_table = self.table(&package, "a table: the [package] section")?;
        let name = match package.child_in(package_table, "name") {
            Some(n) => self.string(&n, "a package name string such as \"my-crate\"")?.to_string(),
            None => {
                return Err(self.error(package.span.clone(), "package.name", "missing: the package has no name".into()))
            }
        };
        let missing_table = || {
            self.error(
                None,
                "package.metadata.launch",
                "missing table; add to Cargo.toml:\n\n[package.metadata.launch]\narch = [\"sm_90\"]\n".to_string(),
            )
        };
        let metadata = package.child_in(package_table, "metadata").ok_or_else(missing_table)?;
        let metadata_table = self.table(&metadata, "a table such as [package.metadata.launch]")?;
        let launch = metadata.child_in(metadata_table, "launch").ok_or_else(missing_table)?;
        Ok((name, launch))
    }

    /// `arch`, required.
    pub(super) fn crate_arches(&self, launch: &Node, list: Option<Node>, toolchain: &Pin) -> Result<Vec<Arch>, Error> {
        match list {
            Some(list) => self.arches(&list, toolchain),
            None => Err(self.error(
                launch.span.clone(),
                "package.metadata.launch.arch",
                format!(
                    "missing: list the GPU architectures to build for, e.g. arch = [\"sm_90\"]; valid choices: {}",
                    launch::KNOWN_ARCHES.join(", ")
                ),
            )),
        }
    }

    /// `kernels`, else the folder `kernels`; either must be a folder.
    pub(super) fn kernel_dir(&self, root: &Path, launch: &Node, kernels: Option<Node>) -> Result<PathBuf, Error> {
        if let Some(k) = kernels {
            let p = self.relative_path(&k, "a folder path such as \"kernels\"")?;
            if let Some(why) = folder_problem(&root.join(&p)) {
                let message =
                    format!("`{}` {why}; expected a folder of .cu files, relative to Cargo.toml", p.display());
                return Err(self.error(k.span.clone(), &k.path, message));
            }
            return Ok(p);
        }
        let p = PathBuf::from("kernels");
        if let Some(why) = folder_problem(&root.join(&p)) {
            return Err(self.error(
                launch.span.clone(),
                "package.metadata.launch.kernels",
                format!(
                    "the default kernel folder `{}` {why}; create it or set `kernels = \"...\"`",
                    root.join(&p).display()
                ),
            ));
        }
        Ok(p)
    }

    /// `include`: folders, each checked.
    pub(super) fn include_dirs(&self, root: &Path, list: Option<Node>) -> Result<Vec<PathBuf>, Error> {
        let mut include_dirs = Vec::new();
        let Some(list) = list else { return Ok(include_dirs) };
        for inc in self.array(&list, "a list of folder paths such as [\"include\"]")? {
            let p = self.include_path(&inc, "a folder path such as \"include\"")?;
            if let Some(why) = folder_problem(&root.join(&p)) {
                let message = format!("`{}` {why}; {}", p.display(), include_expected(&p));
                return Err(self.error(inc.span.clone(), &inc.path, message));
            }
            include_dirs.push(p);
        }
        Ok(include_dirs)
    }

    /// `flags` and `ptxas-flags`: the NVRTC options, the ptxas options (`-Xptxas` from `flags`
    /// first, without repeats) and nvcc's own options, for `host` files. An include folder given as
    /// a flag joins `include_dirs`.
    pub(super) fn crate_flags(
        &self,
        root: &Path,
        flags: Option<Node>,
        ptxas: Option<Node>,
        include_dirs: &mut Vec<PathBuf>,
    ) -> Result<CrateFlags, Error> {
        let mut nvrtc = Vec::new();
        let mut ptxas_flags = Vec::new();
        let mut nvcc = Vec::new();
        if let Some(list) = flags {
            for m in self.nvrtc_flags(&list)? {
                match m {
                    (_, Mapped::Nvrtc(o)) => nvrtc.push(o),
                    (_, Mapped::Ptxas(o)) => ptxas_flags.push(o),
                    (node, Mapped::Nvcc { option, device_refusal }) => {
                        nvcc.push(self.nvcc_flag(&node, option, device_refusal));
                    }
                    (node, Mapped::Include(dir)) => {
                        // An include folder given as a flag is an `include` entry: checked the
                        // same way, and its headers tracked the same way.
                        if let Some(why) = folder_problem(&root.join(&dir)) {
                            let message = format!("`{dir}` {why}; {}", include_expected(Path::new(&dir)));
                            return Err(self.error(node.span.clone(), &node.path, message));
                        }
                        include_dirs.push(PathBuf::from(dir));
                    }
                }
            }
        }
        if let Some(list) = ptxas {
            ptxas_flags.extend(self.ptxas_flags(&list)?);
        }
        Ok((nvrtc, without_repeats(ptxas_flags), nvcc))
    }

    /// An nvcc option of a `flags` list, with where it is written.
    fn nvcc_flag(&self, node: &Node, option: Vec<String>, device_refusal: Option<String>) -> NvccFlag {
        let location = location(self.path, self.text, node.span.clone());
        NvccFlag { option, device_refusal, location, key: node.path.clone() }
    }

    /// The macros the `-D` options of a `flags` list define, each with where it is written.
    pub(super) fn define_flags(&self, list: &Node) -> Result<Vec<(String, Location)>, Error> {
        Ok((self.nvrtc_flags(list)?.into_iter())
            .filter_map(|(node, m)| match m {
                Mapped::Nvrtc(o) => o.strip_prefix("--define-macro=").map(|d| {
                    let name = d.split('=').next().unwrap_or(d).to_string();
                    (name, location(self.path, self.text, node.span.clone()))
                }),
                _ => None,
            })
            .collect())
    }

    /// `exclude`: patterns, and where each is written.
    pub(super) fn exclude(&self, list: Option<Node>) -> Result<(Vec<String>, Vec<Location>), Error> {
        let Some(list) = list else { return Ok((Vec::new(), Vec::new())) };
        (self.array(&list, "a list of files, folders or patterns such as [\"host\", \"*_test.cu\"]")?.iter())
            .map(|e| {
                let pattern = self.pattern(e, "a file, folder or pattern such as \"host.cu\"")?;
                Ok((pattern, location(self.path, self.text, e.span.clone())))
            })
            .collect()
    }

    /// `host`: patterns, each with where it is written (errors about it point there).
    pub(super) fn host_patterns(&self, list: Option<Node>) -> Result<Vec<HostPattern>, Error> {
        let Some(list) = list else { return Ok(Vec::new()) };
        let mut host = Vec::new();
        for e in self.array(&list, "a list of kernel files with host code such as [\"launch.cu\", \"moe/*.cu\"]")? {
            let pattern = self.pattern(&e, "a file, folder or pattern such as \"launch.cu\"")?;
            let location = location(self.path, self.text, e.span.clone());
            host.push(HostPattern { pattern, location, key: e.path.clone() });
        }
        Ok(host)
    }

    /// `[package.metadata.launch.file."<pattern>"]` tables, in the order they are written, and
    /// where each key is written.
    pub(super) fn file_tables(
        &self,
        f: &Node,
        arches: &[Arch],
        defines: &mut Vec<(String, Location)>,
    ) -> Result<(Vec<FileConfig>, Vec<Location>), Error> {
        let tables =
            self.table(f, "a table of per-file settings such as [package.metadata.launch.file.\"quantized.cu\"]")?;
        let mut files = Vec::new();
        let mut places = Vec::new();
        for (pattern, _) in tables.iter() {
            let Some((key, item)) = tables.get_key_value(pattern) else { continue };
            let Some(one) = f.entry(key, item) else { continue };
            let pattern = self.pattern_key(&one, key, pattern)?;
            files.push(self.file_table(&one, pattern, arches)?);
            places.push(location(self.path, self.text, key.span().or(one.span.clone())));
            if let Some(list) = self.table(&one, "").ok().and_then(|t| one.child_in(t, "flags")) {
                defines.extend(self.define_flags(&list)?);
            }
        }
        Ok((files, places))
    }

    /// One `[package.metadata.launch.file."<pattern>"]` table.
    fn file_table(&self, one: &Node, pattern: String, arches: &[Arch]) -> Result<FileConfig, Error> {
        let settings = self.table(one, "a table of per-file settings such as { flags = [\"-DFAST\"] }")?;
        self.known_keys(one, settings, FILE_KEYS, "[package.metadata.launch.file.\"<pattern>\"]")?;
        let mut file = FileConfig { pattern, ..FileConfig::default() };
        if let Some(list) = one.child_in(settings, "flags") {
            for m in self.nvrtc_flags(&list)? {
                match m {
                    (_, Mapped::Nvrtc(o)) => file.flags.push(o),
                    (_, Mapped::Ptxas(o)) => file.ptxas_flags.push(o),
                    (node, Mapped::Nvcc { option, device_refusal }) => {
                        file.nvcc_flags.push(self.nvcc_flag(&node, option, device_refusal));
                    }
                    (node, Mapped::Include(_)) => {
                        let message = "an include folder cannot be given to some files only: its headers are tracked for the whole crate; add it to `include` (or the crate's `flags`)".to_string();
                        return Err(self.error(node.span.clone(), &node.path, message));
                    }
                }
            }
        }
        if let Some(list) = one.child_in(settings, "ptxas-flags") {
            file.ptxas_flags.extend(self.ptxas_flags(&list)?);
        }
        file.ptxas_flags = without_repeats(file.ptxas_flags);
        if let Some(d) = one.child_in(settings, "defines") {
            file.defines = self.defines(&d)?;
        }
        if let Some(list) = one.child_in(settings, "arch") {
            file.arch = Some(self.arch_subset(&list, arches)?);
        }
        Ok(file)
    }

    /// `[package.metadata.launch.kernel."<key>"]` tables by key, and the keys that are patterns
    /// in the order they are written.
    pub(super) fn kernel_tables(&self, k: &Node) -> Result<KernelTables, Error> {
        let kernels =
            self.table(k, "a table of per-kernel settings such as [package.metadata.launch.kernel.my_kernel]")?;
        let mut kernel = BTreeMap::new();
        let mut kernel_patterns = Vec::new();
        let mut places = BTreeMap::new();
        for (name, _) in kernels.iter() {
            let Some((key, item)) = kernels.get_key_value(name) else { continue };
            let Some(one) = k.entry(key, item) else { continue };
            places.insert(name.to_string(), location(self.path, self.text, key.span().or(one.span.clone())));
            let settings = self.table(&one, "a table of per-kernel settings such as { threads = 256 }")?;
            self.known_keys(&one, settings, KERNEL_KEYS, "[package.metadata.launch.kernel.<name>]")?;
            let get = |field: &str| one.child_in(settings, field);
            if is_pattern(name) {
                kernel_patterns.push(name.to_string());
            }
            kernel.insert(
                name.to_string(),
                KernelConfig {
                    max_spill_bytes: get("max-spill-bytes").map(|b| self.bytes(&b)).transpose()?,
                    dynamic_smem: get("dynamic-smem").map(|b| self.quantity(&b, Quantity::DynamicSmem)).transpose()?,
                    threads: get("threads").map(|t| self.block_size(&t)).transpose()?,
                },
            );
        }
        Ok((kernel, kernel_patterns, places))
    }
}

/// The crate's `flags` and `ptxas-flags`: NVRTC options, ptxas options and nvcc's own options.
type CrateFlags = (Vec<String>, Vec<String>, Vec<NvccFlag>);

/// The `kernel` tables by key, the keys that are patterns in file order, and where each key is
/// written.
type KernelTables = (BTreeMap<String, KernelConfig>, Vec<String>, BTreeMap<String, Location>);

/// What an include folder should be, for the message about one that is not.
fn include_expected(p: &Path) -> &'static str {
    if p.is_absolute() {
        "expected an include folder (absolute, as given)"
    } else {
        "expected an include folder, relative to Cargo.toml"
    }
}

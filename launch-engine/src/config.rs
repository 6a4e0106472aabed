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
//! toolchain = "12.9"              # the pinned CUDA line: "12.9" (default), "13.0" or "13.5"
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
use std::path::{Path, PathBuf};

use launch::Arch;
use toml_edit::ImDocument;

use crate::error::{Error, Location};
pub(crate) mod flags;
use crate::toolchain::pin::{self, Pin};

mod document;
mod kernel_names;
mod keys;
mod pattern;
mod tables;
mod tune;
mod values;

pub use document::line_col;
use document::{location, Doc, Node, Ref};
pub use kernel_names::{bare_name, closest_kernel_keys, named, names_of};
pub use keys::{Key, FILE_KEYS, KERNEL_KEYS, KEYS, TUNE_KEYS};
pub use pattern::{glob_match, is_pattern, kernel_key_matches, path_matches};
pub use tune::{error_at as tune_error, too_many as too_many_variants, MaxRegs, TuneConfig, MAX_VARIANTS};

/// Default block size for kernels without a launch contract (seeds/004: "256 when the kernel has
/// no @launch").
pub const DEFAULT_HOST_THREADS: u32 = 256;

/// The validated configuration of one crate.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
    /// nvcc's own options of `flags`, for `host` files (see `flags.rs`), in the order written.
    pub nvcc_flags: Vec<NvccFlag>,
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
    /// `cache-remote`: the shared remote kernel cache (`LAUNCH_CACHE_REMOTE` replaces it), with
    /// where it is written (`Cargo.toml:12:16`).
    pub cache_remote: Option<(crate::cache::RemoteUrl, String)>,
    /// `[package.metadata.launch.types]`: the Rust type of each named C++ type (`"Params" =
    /// "crate::Params"`), for typed launches.
    pub types: std::collections::BTreeMap<String, String>,
    /// `ptx-consts = "ptx.rs"`: the file under `OUT_DIR` to also write as bindgen_cuda and
    /// cudaforge write theirs (see `embed::consts`), with where the key is written.
    pub ptx_consts: Option<(String, Location)>,
    /// `host`: the kernel files compiled with the toolchain's nvcc (host code and all) into a
    /// static library linked into the crate, instead of NVRTC (see `host`).
    pub host: Vec<HostPattern>,
    /// Where the `exclude` entries and the `file` and `kernel` tables are written, for the
    /// warnings about one that matches nothing.
    pub places: Places,
}

/// `Cargo.toml:LINE:COL` of each pattern entry, for the warnings about one that matches nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Places {
    /// Of each `exclude` entry, in order.
    pub exclude: Vec<Location>,
    /// Of each `[package.metadata.launch.file."<pattern>"]` table's key, in order.
    pub files: Vec<Location>,
    /// Of each `[package.metadata.launch.kernel."<key>"]` table's key, by key.
    pub kernels: BTreeMap<String, Location>,
    /// Of each `-D` option in a `flags` list (the crate's, then the file tables'), with its macro.
    pub define_flags: Vec<(String, Location)>,
}

/// `Cargo.toml:LINE:COL: ` (the file's name and the place, as the crate's warnings begin) of a
/// place in Cargo.toml; `Cargo.toml: ` where the place is not known.
pub fn warning_prefix(place: Option<&Location>) -> String {
    match place {
        Some(Location::File { path, at: Some((line, col)) }) => {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            format!("{name}:{line}:{col}: ")
        }
        _ => "Cargo.toml: ".to_string(),
    }
}

/// One `host` entry: a file pattern relative to the kernel folder, and where it was written (a
/// pattern that matches no kernel file is an error there).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostPattern {
    /// The pattern, as `exclude` patterns are (`./` and a trailing `/` dropped).
    pub pattern: String,
    /// `Cargo.toml:line:col` of the entry.
    pub location: Location,
    /// Its key path (`package.metadata.launch.host[1]`).
    pub key: String,
}

/// One of nvcc's own options in a `flags` list: `host` files take it (nvcc compiles them).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NvccFlag {
    /// The option and its value, as nvcc takes them (`["--default-stream", "per-thread"]`).
    pub option: Vec<String>,
    /// Why a device (NVRTC) file may not take it: it changes device code and NVRTC lacks it.
    /// `None`: it has no effect on device code, and device files leave it out.
    pub device_refusal: Option<String>,
    /// `Cargo.toml:line:col` of the element.
    pub location: Location,
    /// Its key path (`package.metadata.launch.flags[2]`).
    pub key: String,
}

/// `[package.metadata.launch.file."<pattern>"]`: settings of the files a pattern matches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileConfig {
    /// The pattern, relative to the kernel folder.
    pub pattern: String,
    /// NVRTC options, canonical.
    pub flags: Vec<String>,
    /// ptxas options, canonical (from `ptxas-flags` and `-Xptxas`).
    pub ptxas_flags: Vec<String>,
    /// nvcc's own options, for `host` files, in the order written.
    pub nvcc_flags: Vec<NvccFlag>,
    /// `-D` defines, in the order written.
    pub defines: Vec<(String, Option<String>)>,
    /// The arches to build the files for: a subset of the crate's `arch`.
    pub arch: Option<Vec<Arch>>,
}

/// The settings one kernel file is compiled with: the crate's, then each matching
/// `[package.metadata.launch.file."<pattern>"]` table's, in the order the tables are written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
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
    /// nvcc's own options, as its arguments, for a `host` file: the crate's `flags`, then each
    /// table's (see `flags::merge_nvcc`). Device (NVRTC) files leave them out.
    pub nvcc_flags: Vec<String>,
}

/// `[package.metadata.launch.kernel.<name>]`: what the host does with one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelConfig {
    /// Spill budget (stores + loads, bytes) overriding the crate's.
    pub max_spill_bytes: Option<u32>,
    /// Dynamic shared memory the host launches it with, bytes.
    pub dynamic_smem: Option<u32>,
    /// Block size the host launches it with when it has no contract.
    pub threads: Option<u32>,
}

impl Config {
    /// The configuration of a crate whose Cargo.toml is `manifest_path`, named `package`, that
    /// builds for `arches` and sets nothing else: every other key at its default. The fields are
    /// public, so a library user sets what they need on the result; new keys arrive with their
    /// defaults, so this keeps compiling (the type is `#[non_exhaustive]`).
    pub fn new(manifest_path: &Path, package: &str, arches: Vec<Arch>) -> Config {
        Config {
            manifest_path: manifest_path.to_path_buf(),
            package: package.to_string(),
            arches,
            kernel_dir: PathBuf::from("kernels"),
            include_dirs: Vec::new(),
            defines: Vec::new(),
            host_threads: DEFAULT_HOST_THREADS,
            max_spill_bytes: None,
            kernel: BTreeMap::new(),
            kernel_patterns: Vec::new(),
            flags: Vec::new(),
            ptxas_flags: Vec::new(),
            nvcc_flags: Vec::new(),
            exclude: Vec::new(),
            std_headers: true,
            files: Vec::new(),
            min_driver: None,
            toolchain: pin::DEFAULT,
            tune: Vec::new(),
            host: Vec::new(),
            types: Default::default(),
            cache_remote: None,
            ptx_consts: None,
            places: Places::default(),
        }
    }

    /// Reads and validates the `[package.metadata.launch]` table of the Cargo.toml at `manifest_path`.
    pub fn load(manifest_path: &Path) -> Result<Config, Error> {
        let shown = manifest_path.display().to_string();
        let bytes = crate::input::read(manifest_path)
            .map_err(|r| r.into_error(&shown, manifest_path, None, "make it a regular file"))?;
        let text = String::from_utf8(bytes).map_err(|e| Error::Io {
            path: manifest_path.to_path_buf(),
            action: "read",
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        })?;
        Config::parse(manifest_path, &text)
    }

    /// Validates `text`, the contents of `manifest_path`.
    ///
    /// The document is walked by hand, not deserialized, so every error names the full key path
    /// (`package.metadata.launch.arch[1]`), the position of the value, the value as written and
    /// what is expected in TOML terms. The keys are read in a fixed order, so the first error is
    /// always the same one; each table has its reader in `tables`.
    pub fn parse(manifest_path: &Path, text: &str) -> Result<Config, Error> {
        let doc = Doc { path: manifest_path, text };
        let root = manifest_path.parent().unwrap_or(Path::new("."));
        let parsed = ImDocument::parse(text).map_err(|e| doc.syntax_error(&e))?;
        let top = Node { path: String::new(), span: None, r: Ref::Table(parsed.as_table()) };
        let (package, launch) = doc.launch_table(&top, parsed.as_table())?;
        let table =
            doc.table(&launch, "a table of launch settings such as [package.metadata.launch] with arch = [\"sm_90\"]")?;
        doc.known_keys(&launch, table, KEYS, "[package.metadata.launch]")?;
        let get = |key: &str| launch.child_in(table, key);

        let toolchain = get("toolchain").map(|t| doc.toolchain(&t)).transpose()?.unwrap_or(pin::DEFAULT);
        let arches = doc.crate_arches(&launch, get("arch"), &toolchain)?;
        let kernel_dir = doc.kernel_dir(root, &launch, get("kernels"))?;
        let mut include_dirs = doc.include_dirs(root, get("include"))?;
        let mut defines = get("defines").map(|d| doc.defines(&d)).transpose()?.unwrap_or_default();
        defines.sort();
        let host_threads = get("threads").map(|t| doc.block_size(&t)).transpose()?.unwrap_or(DEFAULT_HOST_THREADS);
        let max_spill_bytes = get("max-spill-bytes").map(|b| doc.bytes(&b)).transpose()?;
        let (flags, ptxas_flags, nvcc_flags) =
            doc.crate_flags(root, get("flags"), get("ptxas-flags"), &mut include_dirs)?;
        let (exclude, exclude_places) = doc.exclude(get("exclude"))?;
        let host = doc.host_patterns(get("host"))?;
        let std_headers = get("std-headers").map(|b| doc.boolean(&b, "true or false")).transpose()?.unwrap_or(true);
        let min_driver = get("min-driver").map(|d| doc.cuda_version(&d)).transpose()?;
        let mut define_places = get("flags").map(|f| doc.define_flags(&f)).transpose()?.unwrap_or_default();
        let (files, file_places) =
            get("file").map(|f| doc.file_tables(&f, &arches, &mut define_places)).transpose()?.unwrap_or_default();
        let (kernel, kernel_patterns, kernel_places) =
            get("kernel").map(|k| doc.kernel_tables(&k)).transpose()?.unwrap_or_default();
        let places =
            Places { exclude: exclude_places, files: file_places, kernels: kernel_places, define_flags: define_places };
        let tune = get("tune").map(|t| doc.tune(&t)).transpose()?.unwrap_or_default();
        let cache_remote = get("cache-remote").map(|r| doc.cache_remote(&r)).transpose()?;
        let types = get("types").map(|t| doc.rust_types(&t)).transpose()?.unwrap_or_default();
        let ptx_consts = get("ptx-consts").map(|n| doc.ptx_consts(&n)).transpose()?;

        Ok(Config {
            ptx_consts,
            types,
            cache_remote,
            tune,
            host,
            places,
            max_spill_bytes,
            kernel,
            kernel_patterns,
            flags,
            ptxas_flags,
            nvcc_flags,
            exclude,
            std_headers,
            files,
            min_driver,
            toolchain,
            manifest_path: manifest_path.to_path_buf(),
            package,
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

    /// The crate's folders NVRTC and nvcc search for headers, in search order, absolute: the
    /// kernel folder, then the `include` folders (and `-I` flags). The one place it is built:
    /// the compile, the prepare stage's host-code scan, the rerun directives, the prebuilt
    /// fingerprint and the kernels' `file:line` all search the same folders. The toolkit's and
    /// the standard headers are not in it.
    pub fn include_path(&self) -> Vec<PathBuf> {
        std::iter::once(&self.kernel_dir).chain(&self.include_dirs).map(|d| self.root().join(d)).collect()
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
            nvcc_flags: flags::merge_nvcc(
                self.nvcc_flags.iter().chain(tables.iter().flat_map(|f| &f.nvcc_flags)).map(|f| f.option.clone()),
            ),
        }
    }
}

/// `list` without repeats, first kept.
fn without_repeats(list: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    list.into_iter().filter(|o| seen.insert(o.clone())).collect()
}

pub use crate::env::parse_arch_list;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod toolchain_tests;

//! `launch-prebuilt/prebuilt.json`: the record of a crate's prebuilt kernels (written by
//! `cargo launch prebuild`, read by the build script and by `cargo launch`).
//!
//! The folder holds the outputs of one from-source build (the manifest, the cubins, the fallback
//! PTX and the tune variants, by the paths the manifest gives) and this record: the key of every
//! input the outputs depend on, each input's digest (so a mismatch names the file that changed),
//! and each shipped file's digest (so a damaged file is refused, never embedded). Nothing in it
//! depends on the machine, the checkout's path or the time: two prebuilds of the same sources
//! write the same bytes.

use serde::{Deserialize, Serialize};

use launch::Arch;

/// The layout version, written as the `schema` field.
pub const VERSION: u32 = 1;

/// `launch-prebuilt/prebuilt.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Record {
    /// Layout version of this file: [`VERSION`].
    pub schema: u32,
    /// SHA-256 (hex) over everything the outputs depend on: see [`Record::inputs`].
    pub key: String,
    /// The package whose kernels these are.
    pub package: String,
    /// The launch-build that wrote the folder (`launch-build 0.1.0`), for people; not part of the key.
    pub made_by: String,
    /// The toolchain the outputs were compiled with.
    pub toolchain: PinnedToolchain,
    /// The arches compiled, lowest first.
    pub arches: Vec<Arch>,
    /// Every input, with its digest: the crate's `[package.metadata.launch]` (in a canonical form:
    /// formatting and comments do not count), each kernel file and each crate header a kernel
    /// file includes, by path relative to the crate. The key covers these, the package name, the
    /// arches, the pinned toolchain and launch-build's output format.
    pub inputs: Vec<Digest>,
    /// Every shipped file but this record, by path relative to the folder, sorted.
    pub files: Vec<ShippedFile>,
}

/// The toolchain of a prebuilt folder: the pin the crate asks for and what compiled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct PinnedToolchain {
    /// The pinned toolchain (`12.9`, `13.0`): the crate's `toolchain`, or the default one.
    pub pin: String,
    /// Its compilers' versions (`nvrtc`, `ptxas` in the JSON, beside `pin`).
    #[serde(flatten)]
    pub compilers: crate::manifest::Toolchain,
}

/// One input and the SHA-256 (hex) of its content.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Digest {
    /// Relative to the crate (`kernels/poly.cu`), or `Cargo.toml [package.metadata.launch]`.
    pub path: String,
    /// SHA-256 of the content, hex.
    pub sha256: String,
}

/// One shipped file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ShippedFile {
    /// Relative to the folder, `/`-separated (`cubin/kernels+poly.cu.sm_90.cubin`).
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// SHA-256 of its content, hex.
    pub sha256: String,
}

impl Record {
    /// Reads `prebuilt.json`, checking its version.
    pub fn from_json(text: &str) -> Result<Record, super::ReadError> {
        super::read(text, "launch-prebuilt/prebuilt.json", VERSION, "run `cargo launch prebuild` again")
    }
}

/// `cargo launch prebuild --format json`: per package, what was written or verified and what the
/// folder costs in a package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Summary {
    /// Layout version of this document: [`VERSION`].
    pub schema: u32,
    /// `write` or `verify`.
    pub mode: String,
    /// One entry per selected package that builds kernels, by name.
    pub packages: Vec<PackageSummary>,
}

/// One package in [`Summary`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct PackageSummary {
    /// The package.
    pub package: String,
    /// Its prebuilt folder.
    pub folder: String,
    /// The key of its sources.
    pub key: String,
    /// `written`, `unchanged` (the folder held exactly these bytes), `verified` (identical to a
    /// from-source compile) or `differs`.
    pub outcome: String,
    /// What each part of the folder costs, arches lowest first, then the PTX, then the records.
    pub costs: Vec<Cost>,
    /// Every file, all bytes.
    pub bytes: u64,
    /// The same, gzip-compressed file by file: about what the folder adds to a `.crate`.
    pub compressed_bytes: u64,
    /// With `--verify`: every difference between the shipped folder and the compile, by file.
    pub differences: Vec<Difference>,
}

/// What one part of a prebuilt folder costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Cost {
    /// An arch (`sm_90`: its cubins, the tune variants' included), `ptx` (the fallback PTX) or
    /// `records` (the manifest and prebuilt.json).
    pub part: String,
    /// Files.
    pub files: usize,
    /// Bytes.
    pub bytes: u64,
    /// Gzip-compressed bytes, file by file.
    pub compressed_bytes: u64,
}

/// One difference found by `cargo launch prebuild --verify`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Difference {
    /// The file, relative to the folder.
    pub path: String,
    /// What differs (`shipped 10240 bytes (sha256 ab12…), compiled 10244 bytes (cd34…)`, `only in the shipped folder`, ...).
    pub what: String,
}

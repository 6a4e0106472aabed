//! `OUT_DIR/launch/manifest.json`: everything launch-build learned about one crate's kernels, for
//! `cargo launch` and other tools. Written by launch-build, read by cargo-launch. Paths are
//! relative (to the crate root for sources, to `OUT_DIR/launch` for outputs), so the manifest does
//! not depend on where the checkout lives.

use serde::{Deserialize, Serialize};

pub use super::ReadError;
use launch::{Arch, Contract, Resources};
use launch_analysis::{DynamicStack, HostLaunch};

/// The version of this document (its `schema` field): bumped on any incompatible change.
pub const VERSION: u32 = 1;

/// The manifest of one crate's kernels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Manifest {
    /// [`VERSION`].
    pub schema: u32,
    /// The package name.
    pub package: String,
    /// The toolchain that produced the outputs.
    pub toolchain: ToolchainInfo,
    /// Arches built, lowest first.
    pub arches: Vec<Arch>,
    /// Block size for kernels without a contract.
    pub host_threads: u32,
    /// One entry per kernel source file.
    pub modules: Vec<ModuleEntry>,
    /// One entry per kernel.
    pub kernels: Vec<KernelEntry>,
    /// Compiler warnings, verbatim (`file: ptxas warning : ...`).
    pub warnings: Vec<String>,
    /// The oldest driver (CUDA version, `12.4`) the crate must run on: `min-driver`, else the
    /// toolchain's own version; `None` in manifests written before the key (readers then take the
    /// toolchain's). See `launch::compat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_driver: Option<String>,
    /// The `host` files: compiled with nvcc, host code and all, into a static library linked into
    /// the crate (their kernels are in [`Manifest::kernels`] and [`Manifest::modules`] like the
    /// others', from the same device code). Empty (and left out of the JSON) without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<HostFile>,
    /// The keys of the `[package.metadata.launch.kernel."<key>"]` tables that name no kernel of
    /// the crate (a name, a qualified name or a pattern), in key order: their settings are unused.
    /// Empty (and left out of the JSON) when every table names a kernel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unused_kernel_settings: Vec<String>,
    /// `[package.metadata.launch.types]`: the Rust type (a path from the crate root,
    /// `crate::Params`) of each C++ type (as the compiler writes it, `Params`) that typed
    /// launches pass by value or point to. Empty (and left out of the JSON) without the table.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub types: std::collections::BTreeMap<String, String>,
}

/// One `host` file (`host = [...]` in `[package.metadata.launch]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct HostFile {
    /// Source path relative to the crate root, `/`-separated.
    pub file: String,
    /// The compilers: `nvcc 13.0.88 (host compiler /usr/bin/c++)`.
    pub compiler: String,
    /// The static library it is linked in (`launch_host_<package>`); `None` when the build did not
    /// link one (not run as a build script).
    #[serde(default)]
    pub library: Option<String>,
}

/// The compilers that built the kernels, by version: the one description of a toolchain that
/// every document carries (the manifest and the prebuilt record add what only they know).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Toolchain {
    /// NVRTC version (`12.9.86`).
    pub nvrtc: String,
    /// ptxas version (`12.9.86`).
    pub ptxas: String,
}

/// Which toolchain ran, and where it was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ToolchainInfo {
    /// The compilers' versions (`nvrtc`, `ptxas` in the JSON, beside `description`).
    #[serde(flatten)]
    pub compilers: Toolchain,
    /// How it was found and where.
    pub description: String,
}

/// One `.cu` file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct ModuleEntry {
    /// Source path relative to the crate root, `/`-separated.
    pub file: String,
    /// Fallback PTX (lowest arch), relative to `OUT_DIR/launch`.
    pub ptx: String,
    /// Arch of the fallback PTX.
    pub ptx_arch: Arch,
    /// `.version` of that PTX (`8.8`): the driver must support this PTX ISA to JIT it.
    pub ptx_version: String,
    /// One cubin per arch the file is compiled for, relative to `OUT_DIR/launch`.
    pub cubins: Vec<CubinEntry>,
    /// PTX of higher arches, embedded only for kernels the fallback PTX lacks (a kernel under
    /// `#if __CUDA_ARCH__ >= 900`): for each such kernel, the lowest arch whose PTX holds it.
    #[serde(default)]
    pub extra_ptx: Vec<PtxEntry>,
    /// The generated Rust module of this file, from the include site: `kernels::sub::fill` for
    /// `<kernel folder>/sub/fill.cu`.
    #[serde(default)]
    pub rust_module: String,
    /// The ptxas options its cubins were assembled with (the crate's `ptxas-flags`, then its file
    /// tables'), so a later ptxas run on its PTX (`cargo launch explore`) assembles as the build
    /// did. Empty (and left out of the JSON) without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ptxas_flags: Vec<String>,
}

/// One embedded PTX file besides the fallback.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct PtxEntry {
    /// Its arch.
    pub arch: Arch,
    /// Path relative to `OUT_DIR/launch`.
    pub path: String,
    /// Its `.version` (PTX ISA).
    pub version: String,
}

/// One cubin file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct CubinEntry {
    /// Its arch.
    pub arch: Arch,
    /// Path relative to `OUT_DIR/launch`.
    pub path: String,
}

/// One kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct KernelEntry {
    /// Symbol name (mangled where the kernel is not `extern "C"`).
    pub name: String,
    /// How people name it: the demangled name when no other file of the crate has a kernel of
    /// that name, else [`KernelEntry::qualified`].
    pub display_name: String,
    /// `file::demangled name` (`kernels/a.cu::fill`): unique in the crate. A manifest written
    /// before the field existed lacks it; [`Manifest::from_json`] then gives `file::name`.
    #[serde(default)]
    pub qualified: String,
    /// Name of the generated Rust static inside its file's module.
    pub rust_name: String,
    /// Path of the static from the include site (`kernels::a::FILL`).
    #[serde(default)]
    pub rust_path: String,
    /// Whether the static is also re-exported at the include site as `rust_name` (only when no
    /// other kernel of the crate has that Rust name).
    #[serde(default)]
    pub rust_flat: bool,
    /// Source file, relative to the crate root.
    pub file: String,
    /// 1-based line of the definition, of the macro invocation that produced it, or 1 when neither
    /// was found (see [`KernelEntry::origin`]). Never 0 for a compiled kernel.
    pub line: u32,
    /// 1-based column of the name or of the macro's name.
    pub col: u32,
    /// What `line:col` points at.
    #[serde(default)]
    pub origin: Origin,
    /// Launch contract, `None` when unbounded: the lowest arch's, and every arch's unless its
    /// [`KernelArch::contract`] says otherwise ([`KernelEntry::contract_on`]).
    pub contract: Option<Contract>,
    /// Per-arch results, lowest arch first: only the arches whose PTX has the kernel.
    pub arches: Vec<KernelArch>,
    /// The crate's arches the kernel does not exist on, and why.
    #[serde(default)]
    pub missing: Vec<MissingArch>,
    /// The host block size of this kernel when it has no contract: its
    /// `[package.metadata.launch.kernel."<name or pattern>"] threads`, `None` for the crate's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_threads: Option<u32>,
    /// Its dynamic shared memory per block, bytes: its `[package.metadata.launch.kernel."<name or
    /// pattern>"] dynamic-smem`, `None` for none (0 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_smem: Option<u32>,
    /// Its spill budget, bytes of spill stores + loads: its own `max-spill-bytes`, else the
    /// crate's; `None` when neither sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_spill_bytes: Option<u32>,
    /// The variants of its tune grid (`[package.metadata.launch.tune.<kernel>]`), in grid order:
    /// the same code under other contracts, each its own entry and module. Empty (and left out
    /// of the JSON) without a grid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantEntry>,
    /// Its parameters as the compiler sees them, each held to the PTX's `.param` list on every
    /// arch; `None` (left out of the JSON) when they could not be recovered, and
    /// [`KernelEntry::params_unknown`] says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Vec<Param>>,
    /// Why [`KernelEntry::params`] is `None` (a `host` file's kernel, a probe that did not
    /// compile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params_unknown: Option<String>,
}

/// One parameter of a kernel (the type is the run time's: `kernels.rs` embeds the same data).
pub use launch::{Param, ParamKind};

/// One variant of a kernel's tune grid: its PTX is the kernel's, with the contract's directives
/// written in and the entry renamed, assembled by ptxas alone (no NVRTC run of its own).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct VariantEntry {
    /// Its entry (symbol): the kernel's with the contract appended, `poly_eval__t1024_b2_r64`.
    pub name: String,
    /// The contract written into its PTX.
    pub contract: Contract,
    /// Its embedded module (a cubin per arch in [`VariantEntry::arches`], the PTX of the lowest
    /// of them); `None` when it is refused on every arch, so nothing of it is embedded.
    pub module: Option<ModuleEntry>,
    /// Per-arch results where it is embedded, lowest arch first.
    pub arches: Vec<KernelArch>,
    /// The kernel's arches it is not embedded for, because a launch at its own block size fails
    /// there.
    #[serde(default)]
    pub refused: Vec<RefusedArch>,
}

/// An arch a variant is assembled for but not embedded on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct RefusedArch {
    /// The arch.
    pub arch: Arch,
    /// Why: the launch failure at the variant's block size, as `check` words it.
    pub reason: String,
    /// What ptxas reported for it there.
    pub resources: Resources,
}

/// Where a kernel's `line:col` comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Origin {
    /// The `__global__` definition's name.
    #[default]
    Definition,
    /// An invocation of this macro, whose arguments carry the kernel's name (or, for names pasted
    /// together with `##`, a piece of it).
    Macro {
        /// The macro's name.
        name: String,
    },
    /// Defined in (or generated by a macro invoked in) a header of the crate: `line:col` is the
    /// file's `#include` that brings it in.
    Header {
        /// The header, relative to the crate root.
        file: String,
        /// 1-based line of the definition or invocation in the header.
        line: u32,
    },
    /// Found neither in the file nor in its headers in the crate (a macro that builds its name
    /// in a way the scan cannot follow, or a toolkit header): line 1 stands for the file.
    NotFound,
}

/// An arch of the crate that a kernel is not compiled for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct MissingArch {
    /// The arch.
    pub arch: Arch,
    /// Why: `absent from the PTX` (an `#if __CUDA_ARCH__` leaves it out) or
    /// `file setting arch = [sm_90]`.
    pub reason: String,
}

/// One kernel on one arch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct KernelArch {
    /// The arch.
    pub arch: Arch,
    /// Numbers from `ptxas -v`.
    pub resources: Resources,
    /// The kernel's `ptxas -v` lines, verbatim.
    pub ptxas_lines: Vec<String>,
    /// Set when its stack cannot be sized statically (recursion): why, and the frame ptxas
    /// printed (`resources.stack_frame` is what the driver reports). Absent otherwise, and in
    /// manifests written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_stack: Option<DynamicStack>,
    /// This arch's launch contract where it is not the kernel's ([`KernelEntry::contract`], the
    /// lowest arch's): CUDA's own `__launch_bounds__` may depend on `__CUDA_ARCH__` (CUB's
    /// kernels take their block size from a policy per arch). A contract of no bound at all
    /// stands for an unbounded kernel on this arch. Absent where it is the kernel's, and in
    /// manifests written before it; read it through [`KernelEntry::contract_on`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<Contract>,
}

impl KernelArch {
    /// This arch's contract, given the kernel's (`None` when unbounded here).
    pub fn contract_or(&self, kernel: Option<Contract>) -> Option<Contract> {
        match self.contract {
            Some(c) if c.threads.is_none() && c.min_blocks.is_none() && c.max_regs.is_none() => None,
            Some(c) => Some(c),
            None => kernel,
        }
    }
}

impl KernelEntry {
    /// The contract the kernel is compiled with on `arch`: its own there, else
    /// [`KernelEntry::contract`] (also for an arch it is not built for).
    pub fn contract_on(&self, arch: Arch) -> Option<Contract> {
        match self.arches.iter().find(|a| a.arch == arch) {
            Some(a) => a.contract_or(self.contract),
            None => self.contract,
        }
    }
}

impl Manifest {
    /// Reads a manifest, checking its version, with every [`KernelEntry::qualified`] filled in.
    ///
    /// # Errors
    /// Text that is not a manifest, or a manifest of another [`VERSION`].
    pub fn from_json(text: &str) -> Result<Manifest, ReadError> {
        let mut m: Manifest = super::read(text, "manifest", VERSION, "rebuild the crate")?;
        // Here, once, so no reader patches an old manifest itself.
        for k in m.kernels.iter_mut().filter(|k| k.qualified.is_empty()) {
            k.qualified = format!("{}::{}", k.file, k.name);
        }
        Ok(m)
    }

    /// How the host launches kernel `k` of this manifest: its own block size, else the crate's,
    /// and its dynamic shared memory, as the build resolved them from the crate's settings.
    pub fn host_launch(&self, k: &KernelEntry) -> HostLaunch {
        HostLaunch { threads: k.host_threads.unwrap_or(self.host_threads), dynamic_smem: k.dynamic_smem.unwrap_or(0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use launch::ContractSource;

    fn sample() -> Manifest {
        let arch: Arch = "sm_90".parse().expect("known arch");
        Manifest {
            schema: VERSION,
            package: "p".into(),
            toolchain: ToolchainInfo {
                compilers: Toolchain { nvrtc: "12.9.86".into(), ptxas: "12.9.86".into() },
                description: "d".into(),
            },
            arches: vec![arch],
            host_threads: 256,
            modules: vec![ModuleEntry {
                file: "kernels/a.cu".into(),
                ptx: "ptx/a.cu.sm_90.ptx".into(),
                ptx_arch: arch,
                ptx_version: "8.8".into(),
                cubins: vec![CubinEntry { arch, path: "cubin/a.cu.sm_90.cubin".into() }],
                extra_ptx: Vec::new(),
                rust_module: "kernels::a".into(),
                ptxas_flags: vec!["--opt-level=2".into()],
            }],
            kernels: vec![KernelEntry {
                name: "fill".into(),
                display_name: "fill".into(),
                qualified: "kernels/a.cu::fill".into(),
                rust_name: "FILL".into(),
                rust_path: "kernels::a::FILL".into(),
                rust_flat: true,
                file: "kernels/a.cu".into(),
                line: 3,
                col: 17,
                origin: Origin::Macro { name: "M".into() },
                contract: Some(Contract {
                    source: ContractSource::Annotation,
                    threads: Some(256),
                    min_blocks: None,
                    max_regs: None,
                    exact: true,
                }),
                arches: vec![KernelArch {
                    arch,
                    resources: Resources::default(),
                    ptxas_lines: vec!["l".into()],
                    dynamic_stack: None,
                    contract: None,
                }],
                missing: Vec::new(),
                host_threads: None,
                dynamic_smem: Some(1024),
                max_spill_bytes: None,
                variants: Vec::new(),
                params: None,
                params_unknown: None,
            }],
            warnings: vec!["w".into()],
            min_driver: Some("12.4".into()),
            host: vec![HostFile {
                file: "kernels/launch.cu".into(),
                compiler: "nvcc 13.0.88 (host compiler /usr/bin/c++)".into(),
                library: Some("launch_host_p".into()),
            }],
            unused_kernel_settings: vec!["gone".into()],
            types: [("Params".to_string(), "crate::Params".to_string())].into(),
        }
    }

    #[test]
    fn a_manifest_reads_back_as_written() {
        let text = serde_json::to_string_pretty(&sample()).expect("serialises");
        let back = Manifest::from_json(&text).expect("reads");
        assert_eq!(back, sample());
        assert_eq!(serde_json::to_string_pretty(&back).expect("serialises"), text);
        // Field names readers depend on.
        for key in ["\"schema\": 1", "\"kind\": \"macro\"", "\"cmem\": null", "\"source\": \"annotation\""] {
            assert!(text.contains(key), "{key} in {text}");
        }
        assert!(!text.contains("host_threads\": null"), "skipped when none: {text}");
        assert!(!text.contains("max_spill_bytes"), "skipped when none: {text}");
    }

    /// The host launch of a kernel: its own settings where the build recorded them, else the crate's.
    #[test]
    fn the_host_launch_is_the_kernels_settings_else_the_crates() {
        let m = sample();
        let mut k = m.kernels[0].clone();
        assert_eq!(m.host_launch(&k), HostLaunch { threads: 256, dynamic_smem: 1024 });
        k.host_threads = Some(64);
        k.dynamic_smem = None;
        assert_eq!(m.host_launch(&k), HostLaunch { threads: 64, dynamic_smem: 0 });
    }

    /// Manifests written before the per-kernel settings were recorded still read (schema 1).
    #[test]
    fn a_manifest_without_the_settings_fields_reads() {
        let mut v: serde_json::Value = serde_json::to_value(sample()).expect("serialises");
        v.as_object_mut().expect("object").remove("unused_kernel_settings");
        v["kernels"][0].as_object_mut().expect("object").remove("dynamic_smem");
        let back = Manifest::from_json(&v.to_string()).expect("reads");
        assert!(back.unused_kernel_settings.is_empty() && back.kernels[0].dynamic_smem.is_none());
    }

    /// A manifest written before `qualified` existed reads with `file::name` in its place.
    #[test]
    fn an_old_manifest_without_qualified_names_gets_them() {
        let mut value = serde_json::to_value(sample()).expect("serialises");
        value["kernels"][0].as_object_mut().expect("an object").remove("qualified");
        let back = Manifest::from_json(&value.to_string()).expect("reads");
        assert_eq!(back.kernels[0].qualified, "kernels/a.cu::fill");
    }

    #[test]
    fn another_version_or_no_manifest_is_a_typed_error() {
        let text = serde_json::to_string(&Manifest { schema: 2, ..sample() }).expect("serialises");
        let e = Manifest::from_json(&text).unwrap_err();
        assert!(matches!(e, ReadError::Version { found: 2, .. }), "{e:?}");
        assert_eq!(e.to_string(), "manifest schema 2 (this tool reads 1); rebuild the crate");
        assert!(matches!(Manifest::from_json("{"), Err(ReadError::Json { line: 1, .. })));
    }
}

//! From the packages cargo built to analysed kernels: each kernel × arch of each manifest, with
//! the host launch and spill budget its `[package.metadata.launch.kernel."…"]` settings give (as
//! the build resolved them into the manifest), analysed by `launch_analysis`. No arithmetic
//! here, and no reading of the configuration: the numbers come from the manifest alone.

use launch::Arch;
use launch_analysis::{self as analysis, KernelReport};
use launch_schema::manifest::KernelEntry;
use launch_schema::manifest::Manifest;
use launch_schema::report::KernelId;

use crate::error::Error;

/// One package's kernels.
#[derive(Debug)]
pub struct PackageKernels {
    /// Its build script's `OUT_DIR/launch`.
    pub launch_dir: std::path::PathBuf,
    /// Package name.
    pub package: String,
    /// The manifest launch-build wrote.
    pub manifest: Manifest,
    /// The package's `[package.metadata.launch]`.
    pub config: launch_engine::Config,
}

/// One kernel on one arch: which kernel, its ptxas lines, and the analysis.
#[derive(Clone, Debug)]
pub struct Row {
    /// The kernel.
    pub id: KernelId,
    /// Its `ptxas -v` lines on this arch, verbatim.
    pub lines: Vec<String>,
    /// The analysis.
    pub report: KernelReport,
    /// The kernel's spill budget (its own `max-spill-bytes`, else the crate's), as the manifest
    /// records it; a variant's is its kernel's.
    pub spill_budget: Option<u32>,
    /// The kernel's parameters as the build recovered them (a variant's are its kernel's).
    pub params: Option<Vec<launch_schema::manifest::Param>>,
}

impl Row {
    /// The arch.
    pub fn arch(&self) -> Arch {
        self.report.arch
    }

    /// Spill stores + loads, bytes.
    pub fn spill_bytes(&self) -> u32 {
        self.report.resources.spill_bytes()
    }

    /// `file:line`, or the file alone when the line is unknown.
    pub fn location(&self) -> String {
        if self.id.line > 0 {
            format!("{}:{}", self.id.file, self.id.line)
        } else {
            self.id.file.clone()
        }
    }
}

/// Every kernel × arch of `packages`, limited to `arches` when not empty (a package that is not
/// built for one of them is a usage error).
pub fn rows(packages: &[PackageKernels], arches: &[Arch]) -> Result<Vec<Row>, Error> {
    let mut out = Vec::new();
    for p in packages {
        if let Some(missing) = arches.iter().find(|a| !p.manifest.arches.contains(a)) {
            return Err(Error::Usage(anyhow::anyhow!(
                "package `{}` is not built for {missing}; it lists: {}",
                p.package,
                p.manifest.arches.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
            )));
        }
        for k in &p.manifest.kernels {
            let host = p.manifest.host_launch(k);
            for ka in k.arches.iter().filter(|ka| arches.is_empty() || arches.contains(&ka.arch)) {
                let report = analysis::analyze(ka.arch, &ka.resources, ka.contract_or(k.contract), host)
                    .map_err(|e| Error::Failure(anyhow::anyhow!("{}: {e}", k.display_name)))?
                    .with_stack(ka.dynamic_stack.clone());
                let (id, lines) = (kernel_id(&p.package, k), ka.ptxas_lines.clone());
                out.push(Row { id, lines, report, spill_budget: k.max_spill_bytes, params: k.params.clone() });
            }
        }
    }
    Ok(out)
}

/// The tune variants of `packages` (`[package.metadata.launch.tune.<kernel>]`), limited to
/// `arches` when not empty: each embedded one analysed on each arch like a kernel, and every arch
/// one was refused on.
#[derive(Debug, Default)]
pub struct Variants {
    /// One per variant × arch it is embedded on: the row (its id names the variant) and its
    /// kernel's id (whose settings, such as the spill budget, apply to it).
    pub rows: Vec<(Row, KernelId)>,
    /// One per variant × arch it is not embedded on.
    pub refused: Vec<Refused>,
}

/// A variant not embedded on an arch.
#[derive(Clone, Debug)]
pub struct Refused {
    /// The variant (its entry name), at its kernel's definition.
    pub id: KernelId,
    /// Its kernel, as people name it.
    pub kernel: String,
    /// Its contract.
    pub contract: launch::Contract,
    /// The arch.
    pub arch: Arch,
    /// Why, as the build recorded it.
    pub reason: String,
}

/// See [`Variants`]; the packages' arches were checked by [`rows`].
pub fn variants(packages: &[PackageKernels], arches: &[Arch]) -> Result<Variants, Error> {
    let mut out = Variants::default();
    let wanted = |a: &Arch| arches.is_empty() || arches.contains(a);
    for p in packages {
        for k in &p.manifest.kernels {
            let host = p.manifest.host_launch(k);
            let base = kernel_id(&p.package, k);
            for v in &k.variants {
                let id = KernelId {
                    name: v.name.clone(),
                    display_name: v.name.clone(),
                    qualified: format!("{}::{}", k.file, v.name),
                    ..base.clone()
                };
                for ka in v.arches.iter().filter(|ka| wanted(&ka.arch)) {
                    let report = analysis::analyze(ka.arch, &ka.resources, Some(v.contract), host)
                        .map_err(|e| Error::Failure(anyhow::anyhow!("{}: {e}", v.name)))?
                        .with_stack(ka.dynamic_stack.clone());
                    let (id, lines) = (id.clone(), ka.ptxas_lines.clone());
                    let row = Row { id, lines, report, spill_budget: k.max_spill_bytes, params: k.params.clone() };
                    out.rows.push((row, base.clone()));
                }
                for r in v.refused.iter().filter(|r| wanted(&r.arch)) {
                    out.refused.push(Refused {
                        id: id.clone(),
                        kernel: k.display_name.clone(),
                        contract: v.contract,
                        arch: r.arch,
                        reason: r.reason.clone(),
                    });
                }
            }
        }
    }
    Ok(out)
}

pub fn kernel_id(package: &str, k: &KernelEntry) -> KernelId {
    KernelId {
        package: package.to_string(),
        name: k.name.clone(),
        display_name: k.display_name.clone(),
        qualified: k.qualified.clone(),
        file: k.file.clone(),
        line: k.line,
    }
}

/// One message per `[package.metadata.launch.kernel."<key>"]` that names no kernel of the crate
/// (a name, a qualified name or a pattern), as the build found them, with the 1-based line and
/// column of its key in `config`'s Cargo.toml where known. Each lists the few kernels closest to
/// the key, written as keys that name them (not all of them: a ported crate has hundreds).
pub fn unknown_kernel_settings(
    manifest: &launch_schema::manifest::Manifest,
    config: &launch_engine::Config,
) -> Vec<(Option<(u32, u32)>, String)> {
    (manifest.unused_kernel_settings.iter())
        .map(|key| {
            let at = match config.places.kernels.get(key) {
                Some(launch_engine::error::Location::File { at, .. }) => *at,
                _ => None,
            };
            let close = launch_engine::config::closest_kernel_keys(key, &manifest.kernels);
            let hint = if close.is_empty() {
                "no kernel's name is close to it".to_string()
            } else {
                let keys: Vec<String> = close.iter().map(|c| format!("{c:?}")).collect();
                format!("closest kernels, as keys: {}", keys.join(", "))
            };
            let message =
                format!("[package.metadata.launch.kernel.{key}] names no kernel; its settings are unused; {hint}");
            (at, message)
        })
        .collect()
}

/// Constructed packages for the renderers' unit tests (no compiler).
#[cfg(test)]
pub(crate) mod testing {
    use launch_schema::manifest::{KernelArch, KernelEntry, Toolchain, ToolchainInfo};
    use std::path::Path;

    use launch_schema::manifest::Manifest;

    use super::*;

    /// A package `pkg` with `n` unbounded kernels `k00..` in `kernels/many.cu` (line = 10 + i),
    /// on `arches`; kernel `i` has `i` registers above 16 and, when `i % 7 == 6`, 8 bytes of
    /// spills. `absent` lists (kernel index, arch) pairs the kernel does not exist on.
    pub fn package(dir: &Path, n: usize, arches: &[&str], absent: &[(usize, &str)]) -> PackageKernels {
        std::fs::create_dir_all(dir.join("kernels")).unwrap();
        let list: Vec<String> = arches.iter().map(|a| format!("\"{a}\"")).collect();
        let toml = format!(
            "[package]\nname = \"pkg\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\narch = [{}]\n",
            list.join(", ")
        );
        std::fs::write(dir.join("Cargo.toml"), toml).unwrap();
        let config = launch_engine::Config::load(&dir.join("Cargo.toml")).unwrap();
        let mut arches: Vec<Arch> = arches.iter().map(|a| a.parse().unwrap()).collect();
        arches.sort();
        let kernels = (0..n)
            .map(|i| KernelEntry {
                name: format!("k{i:02}"),
                display_name: format!("k{i:02}"),
                qualified: format!("kernels/many.cu::k{i:02}"),
                rust_name: format!("K{i:02}"),
                rust_path: format!("kernels::many::K{i:02}"),
                rust_flat: true,
                origin: Default::default(),
                file: "kernels/many.cu".into(),
                line: 10 + i as u32,
                col: 1,
                contract: None,
                arches: arches
                    .iter()
                    .filter(|a| !absent.iter().any(|(k, b)| *k == i && b.parse::<Arch>().unwrap() == **a))
                    .map(|&arch| KernelArch {
                        arch,
                        resources: launch::Resources {
                            registers: 16 + i as u32,
                            spill_stores: if i % 7 == 6 { 4 } else { 0 },
                            spill_loads: if i % 7 == 6 { 4 } else { 0 },
                            ..Default::default()
                        },
                        ptxas_lines: vec![format!("ptxas info    : Used {} registers", 16 + i)],
                        dynamic_stack: None,
                        contract: None,
                    })
                    .collect(),
                missing: absent
                    .iter()
                    .filter(|(k, _)| *k == i)
                    .map(|(_, a)| launch_schema::manifest::MissingArch {
                        arch: a.parse().unwrap(),
                        reason: "absent from the PTX".into(),
                    })
                    .collect(),
                host_threads: None,
                dynamic_smem: None,
                max_spill_bytes: None,
                variants: Vec::new(),
                params: None,
                params_unknown: None,
            })
            .collect();
        let manifest = Manifest {
            schema: launch_schema::manifest::VERSION,
            package: "pkg".into(),
            toolchain: ToolchainInfo {
                compilers: Toolchain { nvrtc: "12.9.86".into(), ptxas: "12.9.86".into() },
                description: String::new(),
            },
            arches,
            host_threads: 256,
            modules: Vec::new(),
            kernels,
            warnings: Vec::new(),
            min_driver: None,
            host: Vec::new(),
            unused_kernel_settings: Vec::new(),
            types: Default::default(),
        };
        PackageKernels { package: "pkg".into(), launch_dir: dir.join("out/launch"), manifest, config }
    }
}

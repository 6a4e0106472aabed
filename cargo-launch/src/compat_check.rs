//! Driver compatibility of what a package embeds, by `launch::compat`'s table: `check`'s `driver`
//! findings (nothing for a listed arch loads on `min-driver`; a newer GPU would find no PTX that
//! driver JITs) and `report`'s line of which driver each embedded image needs.

use launch::compat::{self, CudaVersion};
use launch::{Arch, Variant};
use launch_analysis::{Detail, Finding, FindingKind, Location, Severity};
use launch_engine::compat as driver_rules;
use launch_schema::manifest::{Manifest, ModuleEntry};
use launch_schema::report::{DriverNeed, ImageKind};

use crate::records::PackageKernels;

/// One embedded PTX: its arch and ISA (`None` when neither the manifest nor the table says).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Ptx {
    arch: Arch,
    isa: Option<(u32, u32)>,
}

/// What the package's build embeds and the driver it must run on.
struct Embedded<'a> {
    /// The toolkit whose ptxas built the cubins.
    toolkit: CudaVersion,
    /// `min-driver`, else the toolchain's version.
    min_driver: CudaVersion,
    manifest: &'a Manifest,
}

impl<'a> Embedded<'a> {
    /// `None` for a build without a toolchain (docs.rs stubs): nothing is embedded.
    fn of(p: &'a PackageKernels) -> Option<Embedded<'a>> {
        let m = &p.manifest;
        let toolkit = driver_rules::release_version(&m.toolchain.compilers.ptxas)?;
        let built_by = driver_rules::release_version(&m.toolchain.compilers.nvrtc).unwrap_or(toolkit);
        let min_driver = m
            .min_driver
            .as_deref()
            .and_then(|v| driver_rules::parse_version(v).ok())
            .or(p.config.min_driver)
            .unwrap_or(built_by);
        Some(Embedded { toolkit, min_driver, manifest: m })
    }

    fn ptx_of(&self, module: &ModuleEntry) -> Vec<Ptx> {
        let own = driver_rules::release_version(&self.manifest.toolchain.compilers.nvrtc)
            .unwrap_or(self.toolkit)
            .toolkit()
            .map(|t| t.ptx_isa);
        let isa = |v: &str| driver_rules::parse_ptx_isa(v).or(own);
        let fallback = (!module.ptx.is_empty()).then(|| Ptx { arch: module.ptx_arch, isa: isa(&module.ptx_version) });
        fallback
            .into_iter()
            .chain(module.extra_ptx.iter().map(|e| Ptx { arch: e.arch, isa: isa(&e.version) }))
            .collect()
    }

    fn jits(&self, p: &Ptx) -> bool {
        p.isa.is_some_and(|isa| driver_rules::ptx_jits_on(isa, self.min_driver))
    }
}

fn ptx_need(p: &Ptx) -> String {
    let isa = p.isa.map(|(a, b)| format!(" (ISA {a}.{b})")).unwrap_or_default();
    match p.isa.and_then(driver_rules::min_driver_for_ptx) {
        Some(v) => format!("PTX {}{isa} needs a driver >= {v}", p.arch.virtual_name()),
        None => format!("PTX {}{isa} needs a driver newer than every CUDA release launch knows", p.arch.virtual_name()),
    }
}

fn cubin_need(toolkit: CudaVersion) -> String {
    let min = driver_rules::min_driver_for_cubin(toolkit);
    let linux = min.toolkit().and_then(|t| t.linux_driver).map(|d| format!(", Linux {d}+")).unwrap_or_default();
    format!("cubins built by CUDA {toolkit} need a CUDA {} driver (>= {min}{linux})", toolkit.major)
}

/// `a.cu`, `a.cu and b.cu`, `a.cu, b.cu, c.cu and 4 more files`.
fn files(names: &[&str]) -> String {
    match names {
        [one] => one.to_string(),
        [init @ .., last] if names.len() <= 3 => format!("{} and {last}", init.join(", ")),
        _ => format!("{} and {} more files", names[..3].join(", "), names.len() - 3),
    }
}

/// Appends the sentences `to` does not hold yet (files of one build share their reasons).
fn add_new(to: &mut Vec<String>, sentences: impl Iterator<Item = String>) {
    for s in sentences {
        if !to.contains(&s) {
            to.push(s);
        }
    }
}

/// Where `min-driver` is written in Cargo.toml; the package's Cargo.toml, line 0, when it is not.
fn min_driver_location(p: &PackageKernels) -> Location {
    let path = &p.config.manifest_path;
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let line = text.lines().position(|l| l.trim_start().starts_with("min-driver")).map_or(0, |i| i as u32 + 1);
    Location { file: "Cargo.toml".into(), line, col: u32::from(line > 0), path: Some(path.clone()) }
}

/// `check`'s `driver` findings for one package.
pub fn findings(p: &PackageKernels) -> Vec<Finding> {
    let Some(e) = Embedded::of(p) else { return Vec::new() };
    let driver = e.min_driver;
    let finding = |severity, arch, text: String| Finding {
        severity,
        kind: FindingKind::Driver,
        package: p.package.clone(),
        kernel: None,
        arch,
        location: Some(min_driver_location(p)),
        detail: Detail::Text(text),
    };
    let mut out = Vec::new();
    // A device of each listed arch: something that runs there must load on `min-driver`.
    for &arch in &e.manifest.arches {
        let cc = arch.compute_capability();
        let mut failing = Vec::new();
        let mut needs = Vec::new();
        for m in &e.manifest.modules {
            let cubin = m.cubins.iter().any(|c| compat::cubin_runs_on(c.arch, cc));
            let ptx: Vec<Ptx> = e.ptx_of(m).into_iter().filter(|x| compat::ptx_runs_on(x.arch, cc)).collect();
            // Nothing runs there whatever the driver (a file built for other arches only): not a driver matter.
            let loads = (cubin && driver_rules::cubin_loads_on(e.toolkit, driver)) || ptx.iter().any(|x| e.jits(x));
            if (cubin || !ptx.is_empty()) && !loads {
                failing.push(m.file.as_str());
                add_new(&mut needs, cubin.then(|| cubin_need(e.toolkit)).into_iter().chain(ptx.iter().map(ptx_need)));
            }
        }
        if !failing.is_empty() {
            let text = format!(
                "nothing embedded for {} loads on {arch} with a CUDA {driver} driver (`min-driver`): {}; raise \
                 `min-driver` or build with an older toolchain",
                files(&failing),
                needs.join("; ")
            );
            out.push(finding(Severity::Error, Some(arch), text));
        }
    }
    // A GPU newer than every listed arch runs only base PTX, which `min-driver` must JIT.
    let newest = e.manifest.arches.iter().map(|a| a.compute_capability()).max();
    let newer: Vec<&str> = launch::KNOWN_ARCHES
        .iter()
        .copied()
        .filter(|n| {
            n.parse::<Arch>().is_ok_and(|a| {
                let cc = a.compute_capability();
                // Not one a listed arch's cubin runs on (sm_80's runs on 8.6).
                a.variant == Variant::Base
                    && Some(cc) > newest
                    && !e.manifest.arches.iter().any(|l| compat::cubin_runs_on(*l, cc))
            })
        })
        .collect();
    if newer.is_empty() {
        return out;
    }
    let mut failing = Vec::new();
    let mut needs = Vec::new();
    for m in &e.manifest.modules {
        let base: Vec<Ptx> = e.ptx_of(m).into_iter().filter(|x| x.arch.variant == Variant::Base).collect();
        // Only `a`/`f` PTX: no GPU of a newer major runs it on any driver, which is the arch list's matter.
        if !base.is_empty() && !base.iter().any(|x| e.jits(x)) {
            failing.push(m.file.as_str());
            add_new(&mut needs, base.iter().map(ptx_need));
        }
    }
    if !failing.is_empty() {
        let shown = if newer.len() > 2 { format!("{}, {} …", newer[0], newer[1]) } else { newer.join(", ") };
        let text = format!(
            "a GPU newer than every listed arch ({shown}) would find nothing to load from {} with a CUDA {driver} \
             driver (`min-driver`): cubins run only on their own major version, and the {}; add its arch to `arch` or raise \
             `min-driver`",
            files(&failing),
            needs.join("; ")
        );
        out.push(finding(Severity::Warning, None, text));
    }
    out
}

/// Per package, the driver each kind of embedded image needs: the cubins (one need for all, by
/// the toolkit's major), then each distinct PTX (arch, ISA).
pub fn needs(p: &PackageKernels) -> Vec<DriverNeed> {
    let Some(e) = Embedded::of(p) else { return Vec::new() };
    let mut cubins: Vec<Arch> = e.manifest.modules.iter().flat_map(|m| m.cubins.iter().map(|c| c.arch)).collect();
    cubins.sort();
    cubins.dedup();
    let mut ptx: Vec<Ptx> = e.manifest.modules.iter().flat_map(|m| e.ptx_of(m)).collect();
    ptx.sort();
    ptx.dedup();
    let mut out = Vec::new();
    if !cubins.is_empty() {
        let min = driver_rules::min_driver_for_cubin(e.toolkit);
        out.push(DriverNeed {
            package: p.package.clone(),
            image: ImageKind::Cubin,
            arches: cubins,
            ptx_isa: None,
            min_driver: Some(min.to_string()),
            loads_on_min_driver: driver_rules::cubin_loads_on(e.toolkit, e.min_driver),
        });
    }
    out.extend(ptx.iter().map(|x| DriverNeed {
        package: p.package.clone(),
        image: ImageKind::Ptx,
        arches: vec![x.arch],
        ptx_isa: x.isa.map(|(a, b)| format!("{a}.{b}")),
        min_driver: x.isa.and_then(driver_rules::min_driver_for_ptx).map(|v| v.to_string()),
        loads_on_min_driver: e.jits(x),
    }));
    out
}

/// `report`'s line: `drivers: cubins sm_80, sm_90: driver >= 12.0 (CUDA 12 cubins); PTX compute_80
/// (ISA 8.8): driver >= 12.9; min-driver 12.4`. `None` when nothing is embedded.
pub fn header_line(p: &PackageKernels) -> Option<String> {
    let e = Embedded::of(p)?;
    let parts: Vec<String> = needs(p)
        .iter()
        .map(|n| {
            let at_least = n.min_driver.as_deref().map_or("unknown".to_string(), |v| format!(">= {v}"));
            let names: Vec<String> = n.arches.iter().map(|a| a.to_string()).collect();
            match n.image {
                ImageKind::Cubin => {
                    format!("cubins {}: driver {at_least} (CUDA {} cubins)", names.join(", "), e.toolkit.major)
                }
                ImageKind::Ptx => {
                    let isa = n.ptx_isa.as_deref().map(|i| format!(" (ISA {i})")).unwrap_or_default();
                    let virt: Vec<String> = n.arches.iter().map(|a| a.virtual_name()).collect();
                    format!("PTX {}{isa}: driver {at_least}", virt.join(", "))
                }
            }
        })
        .collect();
    (!parts.is_empty()).then(|| format!("drivers: {}; min-driver {}", parts.join("; "), e.min_driver))
}

#[cfg(test)]
mod tests;

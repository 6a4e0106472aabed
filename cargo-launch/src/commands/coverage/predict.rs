//! What each GPU loads of a build's embedded images, per kernel, by `launch::compat`'s rule (the
//! one `launch::cuda` loads by): pure, on the manifests.

use crate::gpus::Target;
use launch::compat::{self, CudaVersion};
use launch::Arch;
use launch_engine::compat as driver_rules;
use launch_schema::coverage::{Load, Outcome};
use launch_schema::manifest::{KernelArch, Manifest, ModuleEntry};

/// CUDA_ERROR_NO_BINARY_FOR_GPU: nothing embedded runs on the device.
pub(crate) const NO_BINARY: u32 = 209;
/// CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the driver is older than the PTX's ISA.
pub(crate) const UNSUPPORTED_PTX: u32 = 222;

/// One loadable unit: a kernel (or a tune variant) and the module its images are in.
pub(crate) struct Unit<'a> {
    /// `file::kernel`, `file::kernel[variant]`; prefixed by the package with several.
    pub name: String,
    pub module: &'a ModuleEntry,
    /// The arches whose build has it (empty: every arch).
    pub on: Vec<Arch>,
    /// The crate's arches (what `arch` lists).
    pub built: Vec<Arch>,
    /// The toolkit that built its cubins, and the ISA its PTX has when the manifest does not say.
    pub toolkit: Option<CudaVersion>,
    pub own_isa: Option<(u32, u32)>,
    /// In a `host` file: nvcc's cubins only, never PTX (see `launch_build`'s host compile).
    pub host: bool,
}

/// Every kernel and tune variant of `m`, named with `prefix`.
pub(crate) fn units<'a>(m: &'a Manifest, prefix: &str) -> Vec<Unit<'a>> {
    let toolkit = driver_rules::release_version(&m.toolchain.compilers.ptxas);
    let own_isa = driver_rules::release_version(&m.toolchain.compilers.nvrtc)
        .or(toolkit)
        .and_then(|v| v.toolkit())
        .map(|t| t.ptx_isa);
    let arches = |a: &[KernelArch]| a.iter().map(|x| x.arch).collect::<Vec<_>>();
    let mut out = Vec::new();
    for k in &m.kernels {
        let Some(module) = m.modules.iter().find(|x| x.file == k.file) else { continue };
        let name = format!("{prefix}{}::{}", k.file, k.display_name);
        let built = m.arches.clone();
        let host = m.host.iter().any(|h| h.file == k.file);
        let variants: Vec<Unit> = k
            .variants
            .iter()
            .filter_map(|v| {
                let vm = v.module.as_ref()?;
                let name = format!("{name}[{}]", v.name);
                Some(Unit { name, module: vm, on: arches(&v.arches), built: built.clone(), toolkit, own_isa, host })
            })
            .collect();
        out.push(Unit { name, module, on: arches(&k.arches), built, toolkit, own_isa, host });
        out.extend(variants);
    }
    out
}

/// The outcome of loading `u` on `gpu` with a driver of CUDA version `driver` (`None`: any
/// driver new enough). The `kernels` of the result are empty; the caller groups.
pub(crate) fn predict(u: &Unit, gpu: &Target, driver: Option<CudaVersion>) -> Load {
    let has = |a: &Arch| u.on.is_empty() || u.on.contains(a);
    let cc = gpu.cc;
    let blank = |outcome| Load {
        outcome,
        image: None,
        ptx_isa: None,
        min_driver: None,
        error: None,
        fix: None,
        kernels: Vec::new(),
        host: u.host,
    };
    if let Some(cubin) = compat::best_cubin(u.module.cubins.iter().map(|c| c.arch).filter(has), cc) {
        let min = u.toolkit.map(driver_rules::min_driver_for_cubin);
        let mut l = blank(Outcome::Native);
        l.image = Some(cubin);
        l.min_driver = min.map(|v| v.to_string());
        if let (Some(d), Some(t), Some(min)) = (driver, u.toolkit, min) {
            if !driver_rules::cubin_loads_on(t, d) {
                l.outcome = Outcome::DriverTooOld;
                l.fix = Some(format!("update the driver to CUDA {min} or newer{}", linux(min)));
            }
        }
        return l;
    }
    if u.host {
        // nvcc compiles a `host` file with `-gencode arch=compute_XX,code=sm_XX` per arch: the
        // library holds cubins only, so no PTX to JIT (whatever the module's entry holds).
        let mut l = blank(Outcome::NoImage);
        l.error = Some(NO_BINARY);
        l.fix = Some(format!(
            "add \"sm_{}{}\" to `arch` in [package.metadata.launch]: `host` files are compiled to cubins only (no PTX to JIT)",
            cc.0, cc.1
        ));
        return l;
    }
    let isa_of = |v: &str| driver_rules::parse_ptx_isa(v).or(u.own_isa);
    let fallback = (!u.module.ptx.is_empty()).then(|| (u.module.ptx_arch, isa_of(&u.module.ptx_version)));
    let ptx: Vec<(Arch, Option<(u32, u32)>)> = fallback
        .into_iter()
        .chain(u.module.extra_ptx.iter().map(|e| (e.arch, isa_of(&e.version))))
        .filter(|(a, _)| has(a))
        .collect();
    if let Some(best) = compat::best_ptx(ptx.iter().map(|(a, _)| *a), cc) {
        let isa = ptx.iter().find(|(a, _)| *a == best).and_then(|(_, i)| *i);
        let min = isa.and_then(driver_rules::min_driver_for_ptx);
        let mut l = blank(Outcome::Jit);
        l.image = Some(best);
        l.ptx_isa = isa.map(|(a, b)| format!("{a}.{b}"));
        l.min_driver = min.map(|v| v.to_string());
        if let (Some(d), Some(isa)) = (driver, isa) {
            if !driver_rules::ptx_jits_on(isa, d) {
                l.outcome = Outcome::JitRefused;
                l.error = Some(UNSUPPORTED_PTX);
                l.fix = Some(match min {
                    Some(min) => format!("update the driver to CUDA {min} or newer{}", linux(min)),
                    None => "a driver newer than every CUDA release launch knows".to_string(),
                });
            }
        }
        return l;
    }
    let mut l = blank(Outcome::NoImage);
    l.error = Some(NO_BINARY);
    let arch = format!("sm_{}{}", cc.0, cc.1);
    // The crate builds for this GPU but not this kernel (a tune variant refused there, a file's
    // `arch` table), or a kernel some of the file's builds leave out (`#if __CUDA_ARCH__ >= 900`)
    // exists only above this GPU: adding its arch to `arch` would not bring it.
    let built_here = u.built.iter().any(|a| compat::cubin_runs_on(*a, cc));
    let left_out = u.module.cubins.iter().any(|c| !has(&c.arch));
    let gated = left_out && !u.on.is_empty() && u.on.iter().all(|a| a.compute_capability() > cc);
    l.fix = Some(if built_here || gated {
        let on: Vec<String> = u.on.iter().map(ToString::to_string).collect();
        format!(
            "none from `arch`: the kernel is only in the {} build(s) (an `#if __CUDA_ARCH__`, a file's `arch` table \
             or a tune variant refused on the others)",
            on.join(", ")
        )
    } else {
        format!("add \"{arch}\" to `arch` in [package.metadata.launch]")
    });
    l
}

fn linux(v: CudaVersion) -> String {
    v.toolkit().and_then(|t| t.linux_driver).map(|d| format!(" (Linux {d}+)")).unwrap_or_default()
}

/// `units`' outcomes on `gpu`, grouped: one entry per distinct outcome, in order of first use.
pub(crate) fn group(units: &[Unit], gpu: &Target, driver: Option<CudaVersion>) -> Vec<Load> {
    let mut out: Vec<Load> = Vec::new();
    for u in units {
        let l = predict(u, gpu, driver);
        let same = |o: &Load| {
            (o.outcome, o.image, &o.ptx_isa, &o.error, &o.fix, o.host)
                == (l.outcome, l.image, &l.ptx_isa, &l.error, &l.fix, l.host)
        };
        match out.iter_mut().find(|o| same(o)) {
            Some(o) => o.kernels.push(u.name.clone()),
            None => out.push(Load { kernels: vec![u.name.clone()], ..l }),
        }
    }
    out
}

/// The smallest arch list that runs every GPU of `ccs` natively: per major, its lowest minor
/// asked about (a cubin runs on the newer minors of its major); the lowest arch's PTX is the
/// fallback newer GPUs JIT-compile.
pub(crate) fn smallest_arch_list(ccs: &[(u32, u32)]) -> Vec<Arch> {
    let mut out: Vec<Arch> = Vec::new();
    let mut sorted = ccs.to_vec();
    sorted.sort_unstable();
    for cc in sorted {
        if out.iter().any(|a| compat::cubin_runs_on(*a, cc)) {
            continue;
        }
        if let Ok(a) = format!("sm_{}{}", cc.0, cc.1).parse::<Arch>() {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests;

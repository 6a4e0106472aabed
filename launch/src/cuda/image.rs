//! Which embedded image a device loads: the cubin of its exact compute capability, else the PTX
//! for the driver to JIT. Pure logic, no driver needed.

use std::fmt;

use crate::{Arch, Module, Variant};

/// What to load for a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prefer {
    /// The cubin of the device's compute capability if one is embedded, else the PTX.
    Auto,
    /// Only a cubin; an error if none runs natively on the device.
    Cubin,
    /// Only the PTX (the driver JITs it); an error if the device cannot take it.
    Ptx,
}

/// The image a module was (or will be) loaded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Image {
    /// An embedded cubin, run as is.
    Cubin {
        /// Its architecture (`sm_90`, `sm_90a`).
        arch: &'static str,
    },
    /// The embedded PTX, compiled by the driver's JIT for the device.
    Ptx {
        /// The architecture it was generated for (`sm_90` means `compute_90`).
        arch: &'static str,
        /// Its `.version` directive (PTX ISA), when present.
        isa: Option<(u32, u32)>,
    },
}

impl Image {
    /// Whether the driver had to JIT it.
    pub fn is_jit(&self) -> bool {
        matches!(self, Image::Ptx { .. })
    }

    /// The architecture name the image was built for.
    pub fn arch(&self) -> &'static str {
        match self {
            Image::Cubin { arch } | Image::Ptx { arch, .. } => arch,
        }
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Image::Cubin { arch } => write!(f, "cubin {arch}"),
            Image::Ptx { arch, isa: Some((a, b)) } => write!(f, "PTX {} (ISA {a}.{b}), JIT", virtual_name(arch)),
            Image::Ptx { arch, isa: None } => write!(f, "PTX {}, JIT", virtual_name(arch)),
        }
    }
}

fn virtual_name(arch: &str) -> String {
    arch.parse::<Arch>().map(|a| a.virtual_name()).unwrap_or_else(|_| arch.to_string())
}

/// Why no embedded image fits a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoImage {
    /// The module's source file.
    pub file: &'static str,
    /// The device's architecture (`sm_89`).
    pub device_arch: String,
    /// The embedded cubins' architectures.
    pub cubins: Vec<&'static str>,
    /// The PTX's architecture (empty when the module has no PTX).
    pub ptx_arch: &'static str,
    /// What was asked for.
    pub prefer: Prefer,
}

impl fmt::Display for NoImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cubins = if self.cubins.is_empty() { "none".to_string() } else { self.cubins.join(", ") };
        write!(f, "{}: no image runs on this {} device: cubins embedded for {cubins}", self.file, self.device_arch)?;
        match (self.prefer, self.ptx_arch) {
            (Prefer::Cubin, _) => write!(f, " (PTX not allowed by the caller)"),
            (_, "") => write!(f, "; no PTX embedded"),
            (_, ptx) => write!(
                f,
                "; the PTX is for {}, which a {} device cannot JIT (PTX runs on its own compute capability and newer; \
                 `a`/`f` PTX only on its own chip)",
                virtual_name(ptx),
                self.device_arch
            ),
        }?;
        write!(f, "; add \"{}\" to `arch` in [package.metadata.launch]", self.device_arch)
    }
}

/// The PTX ISA version of a PTX text (its `.version X.Y` directive).
pub fn ptx_isa_version(ptx: &str) -> Option<(u32, u32)> {
    ptx.lines().map(str::trim).find_map(|l| {
        let v = l.strip_prefix(".version")?.trim();
        let (a, b) = v.split_once('.')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    })
}

/// The newest PTX ISA a driver of this `cuDriverGetVersion` value JITs (CUDA 12.9 → 8.8,
/// 13.0 → 9.0, from the PTX ISA release notes); `None` for versions this table does not know.
pub fn max_ptx_isa(driver_version: i32) -> Option<(u32, u32)> {
    let (major, minor) = (driver_version / 1000, (driver_version % 1000) / 10);
    Some(match (major, minor) {
        (11, m @ 0..=8) => (7, m as u32),
        (12, m @ 0..=5) => (8, m as u32),
        (12, 6) => (8, 5),
        (12, 8) => (8, 7),
        (12, 9) => (8, 8),
        (13, 0) => (9, 0),
        _ => return None,
    })
}

fn variant_rank(v: Variant) -> u8 {
    // An arch-specific cubin is the most specific build for the chip, then family, then base.
    match v {
        Variant::Specific => 0,
        Variant::Family => 1,
        Variant::Base => 2,
    }
}

/// Whether PTX generated for `arch` can be JIT-compiled for a device of compute capability `cc`:
/// base PTX on its own compute capability and every newer one; `a`/`f` PTX only on its own.
pub fn ptx_runs_on(arch: Arch, cc: (u32, u32)) -> bool {
    match arch.variant {
        Variant::Base => arch.compute_capability() <= cc,
        Variant::Specific | Variant::Family => arch.compute_capability() == cc,
    }
}

/// Chooses the image of `module` for a device of compute capability `cc`.
///
/// A cubin runs only on its exact compute capability (`a`/`f` cubins only on their own chip);
/// among several for it the `a` build wins over `f` over the base build. Otherwise the PTX, if
/// its architecture is not newer than the device.
pub fn select_image(module: &Module, cc: (u32, u32), prefer: Prefer) -> Result<Image, NoImage> {
    let cubin = module
        .cubins
        .iter()
        .filter_map(|c| c.arch.parse::<Arch>().ok().map(|a| (a, c.arch)))
        .filter(|(a, _)| a.runs_natively_on(cc))
        .min_by_key(|(a, _)| variant_rank(a.variant))
        .map(|(_, name)| Image::Cubin { arch: name });
    let ptx = (!module.ptx.is_empty())
        .then_some(module.ptx_arch)
        .and_then(|name| name.parse::<Arch>().ok().map(|a| (a, name)))
        .filter(|(a, _)| ptx_runs_on(*a, cc))
        .map(|(_, name)| Image::Ptx { arch: name, isa: ptx_isa_version(module.ptx) });
    let chosen = match prefer {
        Prefer::Auto => cubin.or(ptx),
        Prefer::Cubin => cubin,
        Prefer::Ptx => ptx,
    };
    chosen.ok_or_else(|| NoImage {
        file: module.file,
        device_arch: format!("sm_{}{}", cc.0, cc.1),
        cubins: module.cubins.iter().map(|c| c.arch).collect(),
        ptx_arch: if module.ptx.is_empty() { "" } else { module.ptx_arch },
        prefer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cubin;

    static CUBINS: &[Cubin] = &[
        Cubin { arch: "sm_80", bytes: b"80" },
        Cubin { arch: "sm_90", bytes: b"90" },
        Cubin { arch: "sm_90a", bytes: b"90a" },
        Cubin { arch: "sm_100f", bytes: b"100f" },
    ];
    static M: Module =
        Module { file: "kernels/k.cu", cubins: CUBINS, ptx_arch: "sm_80", ptx: ".version 8.8\n.target sm_80\n" };

    #[test]
    fn the_exact_compute_capability_wins_and_a_beats_base() {
        assert_eq!(select_image(&M, (9, 0), Prefer::Auto), Ok(Image::Cubin { arch: "sm_90a" }));
        assert_eq!(select_image(&M, (8, 0), Prefer::Auto), Ok(Image::Cubin { arch: "sm_80" }));
        assert_eq!(select_image(&M, (10, 0), Prefer::Auto), Ok(Image::Cubin { arch: "sm_100f" }));
    }

    #[test]
    fn other_chips_jit_the_ptx_and_variants_never_run_elsewhere() {
        // sm_100f is family-specific, but only its own compute capability loads it as is.
        assert_eq!(select_image(&M, (10, 3), Prefer::Auto), Ok(Image::Ptx { arch: "sm_80", isa: Some((8, 8)) }));
        assert_eq!(select_image(&M, (8, 6), Prefer::Auto), Ok(Image::Ptx { arch: "sm_80", isa: Some((8, 8)) }));
        assert_eq!(select_image(&M, (9, 0), Prefer::Ptx), Ok(Image::Ptx { arch: "sm_80", isa: Some((8, 8)) }));
    }

    #[test]
    fn an_older_device_gets_an_error_naming_what_is_embedded() {
        let e = select_image(&M, (7, 5), Prefer::Auto).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernels/k.cu: no image runs on this sm_75 device: cubins embedded for sm_80, sm_90, sm_90a, sm_100f; \
             the PTX is for compute_80, which a sm_75 device cannot JIT (PTX runs on its own compute capability and \
             newer; `a`/`f` PTX only on its own chip); add \"sm_75\" to `arch` in [package.metadata.launch]"
        );
        let e = select_image(&M, (8, 6), Prefer::Cubin).unwrap_err();
        assert!(e.to_string().contains("PTX not allowed"), "{e}");
        assert!(!ptx_runs_on("sm_90a".parse().unwrap(), (10, 0)));
        assert!(ptx_runs_on("sm_90".parse().unwrap(), (12, 0)));
    }

    #[test]
    fn ptx_versions_are_read_and_known_drivers_mapped() {
        assert_eq!(ptx_isa_version("//\n// Generated\n.version 8.8\n.target sm_90\n"), Some((8, 8)));
        assert_eq!(ptx_isa_version(".target sm_90"), None);
        assert_eq!(max_ptx_isa(12090), Some((8, 8)));
        assert_eq!(max_ptx_isa(13000), Some((9, 0)));
        assert_eq!(max_ptx_isa(12040), Some((8, 4)));
        assert_eq!(max_ptx_isa(99000), None);
    }
}

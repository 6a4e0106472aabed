//! Which embedded image a device loads: a cubin that runs on its compute capability, else the PTX
//! for the driver to JIT, by `launch::compat`'s rule. Pure logic, no driver needed.

use std::fmt;

use crate::{Arch, Kernel, Module, Variant};

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
        arch: Arch,
    },
    /// The embedded PTX, compiled by the driver's JIT for the device.
    Ptx {
        /// The architecture it was generated for (`sm_90` means `compute_90`).
        arch: Arch,
        /// Its `.version` directive (PTX ISA), when present.
        isa: Option<(u32, u32)>,
    },
}

impl Image {
    /// Whether the driver had to JIT it.
    pub fn is_jit(&self) -> bool {
        matches!(self, Image::Ptx { .. })
    }

    /// The architecture the image was built for.
    pub fn arch(&self) -> Arch {
        match *self {
            Image::Cubin { arch } | Image::Ptx { arch, .. } => arch,
        }
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Image::Cubin { arch } => write!(f, "cubin {arch}"),
            Image::Ptx { arch, isa: Some((a, b)) } => write!(f, "PTX {} (ISA {a}.{b}), JIT", arch.virtual_name()),
            Image::Ptx { arch, isa: None } => write!(f, "PTX {}, JIT", arch.virtual_name()),
        }
    }
}

/// `sm_80, sm_90a`: arches as the messages list them.
pub(crate) fn arch_list(arches: &[Arch]) -> String {
    arches.iter().map(Arch::to_string).collect::<Vec<_>>().join(", ")
}

/// Why no embedded image fits a device.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NoImage {
    /// The module's source file.
    pub file: &'static str,
    /// The device's architecture (`sm_89`).
    pub device_arch: Arch,
    /// The embedded cubins' architectures.
    pub cubins: Vec<Arch>,
    /// The PTX's architecture (`None` when the module has no PTX).
    pub ptx_arch: Option<Arch>,
    /// What was asked for.
    pub prefer: Prefer,
    /// For a kernel's image: its name and the arches whose builds have it (an `#if
    /// __CUDA_ARCH__` left it out of the others), when the module has an image for the device
    /// that lacks the kernel. `None` for a whole module, and when no image of the module runs on
    /// the device at all (then the fix is the arch to add, whatever the kernel).
    /// (Boxed: errors stay small.)
    pub kernel: Option<Box<(&'static str, Vec<Arch>)>>,
}

impl fmt::Display for NoImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cubins = if self.cubins.is_empty() { "none".to_string() } else { arch_list(&self.cubins) };
        if let Some((name, arches)) = self.kernel.as_deref() {
            let on = if arches.is_empty() { "no arch".to_string() } else { arch_list(arches) };
            return write!(
                f,
                "{}: no image of kernel `{name}` runs on this {} device: the kernel exists only on {on} (the builds \
                 for the other arches leave it out, e.g. under `#if __CUDA_ARCH__ >= ...`); cubins embedded for \
                 {cubins}{}",
                self.file,
                self.device_arch,
                if self.prefer == Prefer::Cubin { " (PTX not allowed by the caller)" } else { "" }
            );
        }
        write!(f, "{}: no image runs on this {} device: cubins embedded for {cubins}", self.file, self.device_arch)?;
        match (self.prefer, self.ptx_arch) {
            (Prefer::Cubin, _) => write!(f, " (PTX not allowed by the caller)"),
            (_, None) => write!(f, "; no PTX embedded"),
            (_, Some(ptx)) => write!(
                f,
                "; the PTX is for {}, which a {} device cannot JIT (PTX runs on its own compute capability and newer; \
                 `a` PTX only on its own chip, `f` PTX on its family)",
                ptx.virtual_name(),
                self.device_arch
            ),
        }?;
        write!(f, "; add \"{}\" to `arch` in [package.metadata.launch]", self.device_arch)
    }
}

/// The PTX ISA version of a PTX text (its `.version X.Y` directive); see [`crate::compat`].
pub(crate) fn ptx_isa_version(ptx: &str) -> Option<(u32, u32)> {
    crate::compat::ptx_isa_version(ptx)
}

/// The newest PTX ISA a driver of this `cuDriverGetVersion` value JITs (CUDA 12.9 → 8.8,
/// 13.0 → 9.0), from [`crate::compat::TOOLKITS`]; `None` for versions the table does not know.
pub(crate) fn max_ptx_isa(driver_version: i32) -> Option<(u32, u32)> {
    crate::compat::max_ptx_isa(crate::compat::CudaVersion::from_driver(driver_version)?)
}

/// Chooses the image of `module` for a device of compute capability `cc`.
///
/// A cubin runs on its major version at the same or a newer minor (`a` cubins only on their own
/// chip); among several the nearest compute capability wins, and for one the `a` build over `f`
/// over the base build ([`crate::compat::best_cubin`]). Otherwise the fallback PTX, if its
/// architecture is not newer than the device ([`crate::compat::best_ptx`]).
pub(crate) fn select_image(module: &Module, cc: (u32, u32), prefer: Prefer) -> Result<Image, NoImage> {
    choose(module, None, cc, prefer)
}

/// Chooses the image that runs `kernel` on a device of compute capability `cc`: as
/// [`select_image`], among the images whose build has the kernel. A kernel that an `#if
/// __CUDA_ARCH__ >= 900` leaves out of the sm_80 build gets the sm_90 cubin on an sm_90 device,
/// the embedded compute_90 PTX on a newer one, and an error naming where it exists on an sm_80.
pub(crate) fn select_image_for(kernel: &Kernel, cc: (u32, u32), prefer: Prefer) -> Result<Image, NoImage> {
    choose(kernel.module, Some(kernel), cc, prefer)
}

/// The PTX text of an image chosen by [`select_image`] or [`select_image_for`].
pub(crate) fn ptx_text(module: &Module, image: Image) -> Option<&'static str> {
    match image {
        Image::Ptx { arch, .. } => module.ptx_texts().find(|(a, t)| *a == arch && !t.is_empty()).map(|(_, t)| t),
        Image::Cubin { .. } => None,
    }
}

fn choose(module: &Module, kernel: Option<&Kernel>, cc: (u32, u32), prefer: Prefer) -> Result<Image, NoImage> {
    let has = |arch: Arch| kernel.is_none_or(|k| k.exists_on(arch));
    // The rule is `compat`'s (shared with `cargo launch coverage`); here only the candidates: the
    // images whose build has the kernel.
    let cubin = crate::compat::best_cubin(module.cubins.iter().map(|c| c.arch).filter(|&a| has(a)), cc)
        .map(|arch| Image::Cubin { arch });
    let ptxs: Vec<(Arch, &'static str)> =
        module.ptx_texts().filter(|&(arch, text)| !text.is_empty() && has(arch)).collect();
    let ptx = crate::compat::best_ptx(ptxs.iter().map(|(a, _)| *a), cc)
        .and_then(|best| ptxs.iter().find(|(a, _)| *a == best))
        .map(|&(arch, text)| Image::Ptx { arch, isa: ptx_isa_version(text) });
    let chosen = match prefer {
        Prefer::Auto => cubin.or(ptx),
        Prefer::Cubin => cubin,
        Prefer::Ptx => ptx,
    };
    chosen.ok_or_else(|| NoImage {
        file: module.file,
        device_arch: Arch::new(cc.0, cc.1, Variant::Base),
        cubins: module.cubins.iter().map(|c| c.arch).collect(),
        ptx_arch: module.ptx_arch.filter(|_| !module.ptx.is_empty()),
        prefer,
        // The kernel's absence is the reason only when the module has an image this device
        // takes and the kernel is not in it; when no image of the module runs here (a crate built
        // for sm_100 alone on an sm_90), the arch to add is the fix, whatever the kernel.
        kernel: kernel
            .filter(|k| !k.resources.is_empty())
            .filter(|_| choose(module, None, cc, prefer).is_ok())
            .map(|k| Box::new((k.name, k.resources.iter().map(|r| r.arch).collect()))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cubin;

    const SM_80: Arch = Arch::new(8, 0, Variant::Base);
    const SM_90: Arch = Arch::new(9, 0, Variant::Base);
    const SM_90A: Arch = Arch::new(9, 0, Variant::Specific);
    const SM_100: Arch = Arch::new(10, 0, Variant::Base);
    const SM_100F: Arch = Arch::new(10, 0, Variant::Family);

    static CUBINS: &[Cubin] = &[
        Cubin { arch: SM_80, bytes: b"80" },
        Cubin { arch: SM_90, bytes: b"90" },
        Cubin { arch: SM_90A, bytes: b"90a" },
        Cubin { arch: SM_100F, bytes: b"100f" },
    ];
    static M: Module = Module {
        file: "kernels/k.cu",
        cubins: CUBINS,
        ptx_arch: Some(SM_80),
        ptx: ".version 8.8\n.target sm_80\n",
        extra_ptx: &[],
    };

    // kernels/gated.cu, arch = ["sm_80", "sm_90"]: `everywhere` on both, `fp8_only` under
    // `#if __CUDA_ARCH__ >= 900`, `pre_hopper` under `#if __CUDA_ARCH__ < 900`.
    static GATED_CUBINS: &[Cubin] = &[Cubin { arch: SM_80, bytes: b"80" }, Cubin { arch: SM_90, bytes: b"90" }];
    static GATED: Module = Module {
        file: "kernels/gated.cu",
        cubins: GATED_CUBINS,
        ptx_arch: Some(SM_80),
        ptx: ".version 8.8\n.target sm_80\n",
        extra_ptx: &[crate::PtxText { arch: SM_90, text: ".version 8.8\n.target sm_90\n" }],
    };
    const fn on(arches: &'static [crate::ArchResources]) -> Kernel {
        Kernel {
            name: "k",
            demangled: "k",
            line: 1,
            module: &GATED,
            contract: None,
            host_threads: 256,
            resources: arches,
            variants: &[],
            params: None,
        }
    }
    const R: crate::Resources = crate::Resources { registers: 8, ..crate::Resources::ZERO };
    static EVERYWHERE: Kernel = on(&[
        crate::ArchResources { arch: SM_80, resources: R, contract: None },
        crate::ArchResources { arch: SM_90, resources: R, contract: None },
    ]);
    static FP8_ONLY: Kernel = on(&[crate::ArchResources { arch: SM_90, resources: R, contract: None }]);
    static PRE_HOPPER: Kernel = on(&[crate::ArchResources { arch: SM_80, resources: R, contract: None }]);

    #[test]
    fn a_kernel_gated_to_newer_arches_gets_their_cubin_or_their_ptx() {
        let ptx90 = Image::Ptx { arch: SM_90, isa: Some((8, 8)) };
        let ptx80 = Image::Ptx { arch: SM_80, isa: Some((8, 8)) };
        // Its own cubin on sm_90, the compute_90 PTX on anything newer (never the sm_80 PTX, which lacks it).
        assert_eq!(select_image_for(&FP8_ONLY, (9, 0), Prefer::Auto), Ok(Image::Cubin { arch: SM_90 }));
        assert_eq!(select_image_for(&FP8_ONLY, (10, 0), Prefer::Auto), Ok(ptx90));
        assert_eq!(select_image_for(&FP8_ONLY, (12, 0), Prefer::Ptx), Ok(ptx90));
        assert_eq!(ptx_text(&GATED, ptx90), Some(".version 8.8\n.target sm_90\n"));
        // Not on sm_80 at all: the error says where it exists.
        let e = select_image_for(&FP8_ONLY, (8, 0), Prefer::Auto).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernels/gated.cu: no image of kernel `k` runs on this sm_80 device: the kernel exists only on sm_90 \
             (the builds for the other arches leave it out, e.g. under `#if __CUDA_ARCH__ >= ...`); cubins embedded \
             for sm_80, sm_90"
        );
        assert!(select_image_for(&FP8_ONLY, (8, 9), Prefer::Auto).is_err());
        // A kernel on every arch keeps the lowest PTX; one left out of the sm_90 build JITs the
        // sm_80 PTX on an sm_90 device rather than taking a cubin without it.
        assert_eq!(select_image_for(&EVERYWHERE, (10, 0), Prefer::Auto), Ok(ptx80));
        assert_eq!(select_image_for(&EVERYWHERE, (9, 0), Prefer::Auto), Ok(Image::Cubin { arch: SM_90 }));
        assert_eq!(select_image_for(&PRE_HOPPER, (9, 0), Prefer::Auto), Ok(ptx80));
        assert_eq!(
            select_image_for(&PRE_HOPPER, (9, 0), Prefer::Cubin).map_err(|e| e.to_string().contains("PTX not allowed")),
            Err(true)
        );
        // The module as a whole: the fallback PTX, as before.
        assert_eq!(select_image(&GATED, (10, 0), Prefer::Auto), Ok(ptx80));
    }

    #[test]
    fn the_exact_compute_capability_wins_and_a_beats_base() {
        assert_eq!(select_image(&M, (9, 0), Prefer::Auto), Ok(Image::Cubin { arch: SM_90A }));
        assert_eq!(select_image(&M, (8, 0), Prefer::Auto), Ok(Image::Cubin { arch: SM_80 }));
        assert_eq!(select_image(&M, (10, 0), Prefer::Auto), Ok(Image::Cubin { arch: SM_100F }));
    }

    #[test]
    fn same_major_chips_run_the_cubin_others_jit_the_ptx() {
        // sm_100f is family-specific: 10.3 runs it as is; sm_80 runs on 8.6; 12.0 JITs the PTX.
        assert_eq!(select_image(&M, (10, 3), Prefer::Auto), Ok(Image::Cubin { arch: SM_100F }));
        assert_eq!(select_image(&M, (8, 6), Prefer::Auto), Ok(Image::Cubin { arch: SM_80 }));
        assert_eq!(select_image(&M, (12, 0), Prefer::Auto), Ok(Image::Ptx { arch: SM_80, isa: Some((8, 8)) }));
        assert_eq!(select_image(&M, (9, 0), Prefer::Ptx), Ok(Image::Ptx { arch: SM_80, isa: Some((8, 8)) }));
    }

    #[test]
    fn an_older_device_gets_an_error_naming_what_is_embedded() {
        let e = select_image(&M, (7, 5), Prefer::Auto).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernels/k.cu: no image runs on this sm_75 device: cubins embedded for sm_80, sm_90, sm_90a, sm_100f; \
             the PTX is for compute_80, which a sm_75 device cannot JIT (PTX runs on its own compute capability and \
             newer; `a` PTX only on its own chip, `f` PTX on its family); add \"sm_75\" to `arch` in [package.metadata.launch]"
        );
        let e = select_image(&M, (12, 0), Prefer::Cubin).unwrap_err();
        assert!(e.to_string().contains("PTX not allowed"), "{e}");
        assert!(!crate::compat::ptx_runs_on("sm_90a".parse().unwrap(), (10, 0)));
        assert!(crate::compat::ptx_runs_on("sm_90".parse().unwrap(), (12, 0)));
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
    // kernels/one.cu built for sm_100 alone: nothing in it is arch-gated.
    static ONE_CUBINS: &[Cubin] = &[Cubin { arch: SM_100, bytes: b"100" }];
    static ONE: Module = Module {
        file: "kernels/one.cu",
        cubins: ONE_CUBINS,
        ptx_arch: Some(SM_100),
        ptx: ".version 8.8\n.target sm_100\n",
        extra_ptx: &[],
    };
    static ONLY_100: Kernel =
        Kernel { module: &ONE, ..on(&[crate::ArchResources { arch: SM_100, resources: R, contract: None }]) };

    /// Every kernel placement (on all the module's arches, on some, a module of one arch) × a
    /// device older than every build, of the same major, exact, newer × every preference: the
    /// `#if __CUDA_ARCH__` wording only where the module has an image for the device that lacks
    /// the kernel; everywhere else the module's message, which says which arch to add.
    #[test]
    fn the_arch_gated_wording_only_where_another_build_of_the_module_lacks_the_kernel() {
        let kernels: [(&str, &Kernel); 4] = [
            ("everywhere", &EVERYWHERE),
            ("fp8_only", &FP8_ONLY),
            ("pre_hopper", &PRE_HOPPER),
            ("only_100", &ONLY_100),
        ];
        let devices = [(7, 5), (8, 0), (8, 6), (9, 0), (10, 0), (10, 3), (12, 0)];
        let prefers = [Prefer::Auto, Prefer::Cubin, Prefer::Ptx];
        // The only cases where the module has an image this device takes and the kernel is absent from it.
        let gated = [
            ("fp8_only", (8, 0), Prefer::Auto),
            ("fp8_only", (8, 6), Prefer::Auto),
            ("fp8_only", (8, 0), Prefer::Cubin),
            ("fp8_only", (8, 6), Prefer::Cubin),
            ("fp8_only", (8, 0), Prefer::Ptx),
            ("fp8_only", (8, 6), Prefer::Ptx),
            ("pre_hopper", (9, 0), Prefer::Cubin),
        ];
        let (mut cases, mut errors, mut wrong) = (0, 0, Vec::new());
        for (name, kernel) in kernels {
            for cc in devices {
                for prefer in prefers {
                    cases += 1;
                    let Err(e) = select_image_for(kernel, cc, prefer) else { continue };
                    errors += 1;
                    let text = e.to_string();
                    let device = format!("sm_{}{}", cc.0, cc.1);
                    let says_gated = text.contains("#if __CUDA_ARCH__") && e.kernel.is_some();
                    let says_add = text.contains(&format!("add \"{device}\" to `arch`"));
                    let want_gated = gated.contains(&(name, cc, prefer));
                    let names_device = text.contains(&format!("this {device} device"));
                    let ok = names_device
                        && if want_gated { says_gated && !says_add } else { says_add && !says_gated }
                        && (prefer != Prefer::Cubin || text.contains("PTX not allowed"));
                    if !ok {
                        wrong.push(format!("{name} on {device} ({prefer:?}): {text}"));
                    }
                }
            }
        }
        assert_eq!(cases, 84);
        assert_eq!(errors, 38, "the enumeration's errors changed");
        assert!(wrong.is_empty(), "{} of {errors} errors say the wrong thing:\n{}", wrong.len(), wrong.join("\n"));
        // The H200 case of the report, word for word.
        assert_eq!(
            select_image_for(&ONLY_100, (9, 0), Prefer::Auto).unwrap_err().to_string(),
            "kernels/one.cu: no image runs on this sm_90 device: cubins embedded for sm_100; the PTX is for \
             compute_100, which a sm_90 device cannot JIT (PTX runs on its own compute capability and newer; `a` \
             PTX only on its own chip, `f` PTX on its family); add \"sm_90\" to `arch` in [package.metadata.launch]"
        );
    }
}

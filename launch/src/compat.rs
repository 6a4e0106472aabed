//! Driver compatibility: which device and driver take which embedded image. One table (per CUDA
//! toolkit: the PTX ISA its NVRTC writes and the Linux driver it shipped with, [`TOOLKITS`]) and
//! the rules the run time loads by:
//! * a cubin runs only on its own major version at the same or a newer minor (sm_80 on 8.6, not
//!   on 9.0), `a` builds only on their exact chip ([`cubin_runs_on`]);
//! * base PTX runs on its compute capability and every newer one, `f` PTX on its family (same
//!   major, same or newer minor), `a` PTX only on its own ([`ptx_runs_on`]), and only a driver at
//!   least as new as the toolkit that introduced its ISA JIT-compiles it ([`max_ptx_isa`]);
//! * of several images the device takes the best cubin ([`best_cubin`]), else the lowest PTX
//!   ([`best_ptx`]): the one rule `launch::cuda` loads by and `cargo launch coverage` predicts by.
//!
//! What a driver must be for a build (the minimum drivers, minor version compatibility) is asked
//! only by the tools, from this table: `launch_engine::compat`. Pure data, no driver needed.

use std::fmt;

use crate::{Arch, Variant};

/// A CUDA version as `cuDriverGetVersion` and `nvidia-smi` report it (`12.4`), or the version of a
/// toolkit (`12.9`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaVersion {
    /// `12` in 12.4.
    pub major: u32,
    /// `4` in 12.4.
    pub minor: u32,
}

impl CudaVersion {
    /// `major.minor`.
    pub const fn new(major: u32, minor: u32) -> CudaVersion {
        CudaVersion { major, minor }
    }

    /// From `cuDriverGetVersion`'s number (`12040` → 12.4); `None` when not positive.
    pub fn from_driver(version: i32) -> Option<CudaVersion> {
        let v = u32::try_from(version).ok().filter(|v| *v > 0)?;
        Some(CudaVersion::new(v / 1000, (v % 1000) / 10))
    }

    /// The row of [`TOOLKITS`] for this version, if NVIDIA released it.
    pub fn toolkit(self) -> Option<&'static Toolkit> {
        TOOLKITS.iter().find(|t| t.cuda == self)
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// One CUDA toolkit release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Toolkit {
    /// Its version.
    pub cuda: CudaVersion,
    /// The PTX ISA its NVRTC and nvcc write (`.version`).
    pub ptx_isa: (u32, u32),
    /// The Linux x86_64 driver it shipped with (its GA's minimum in the release notes' "CUDA
    /// Toolkit and Corresponding Driver Versions"); `None` where not recorded here.
    pub linux_driver: Option<&'static str>,
}

const fn row(major: u32, minor: u32, isa: (u32, u32), linux_driver: Option<&'static str>) -> Toolkit {
    Toolkit { cuda: CudaVersion::new(major, minor), ptx_isa: isa, linux_driver }
}

/// Every CUDA release from 11.0, oldest first. A new toolkit is one row.
///
/// PTX ISA per release: the PTX ISA's release history,
/// <https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes-ptx-release-history>
/// (through ISA 9.1 / CUDA 13.1; ISA 8.6 came with CUDA 12.7, never released, so CUDA 12.6 still
/// writes 8.5 and 12.8 writes 8.7), and the CUDA 13.2–13.5 release notes for 9.2–9.5.
/// Drivers: the CUDA Toolkit Release Notes (table "CUDA Toolkit and Corresponding Driver
/// Versions", <https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/>); the majors' minimums
/// (R450 for 11.x, R525 for 12.x, R580 for 13.x) from
/// <https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html>.
pub const TOOLKITS: &[Toolkit] = &[
    row(11, 0, (7, 0), Some("450.36.06")),
    row(11, 1, (7, 1), Some("455.23")),
    row(11, 2, (7, 2), Some("460.27.03")),
    row(11, 3, (7, 3), Some("465.19.01")),
    row(11, 4, (7, 4), Some("470.42.01")),
    row(11, 5, (7, 5), Some("495.29.05")),
    row(11, 6, (7, 6), Some("510.39.01")),
    row(11, 7, (7, 7), Some("515.43.04")),
    row(11, 8, (7, 8), Some("520.61.05")),
    row(12, 0, (8, 0), Some("525.60.13")),
    row(12, 1, (8, 1), Some("530.30.02")),
    row(12, 2, (8, 2), Some("535.54.03")),
    row(12, 3, (8, 3), Some("545.23.06")),
    row(12, 4, (8, 4), Some("550.54.14")),
    row(12, 5, (8, 5), Some("555.42.02")),
    row(12, 6, (8, 5), Some("560.28.03")),
    row(12, 8, (8, 7), Some("570.26")),
    row(12, 9, (8, 8), Some("575.51.03")),
    row(13, 0, (9, 0), Some("580.65.06")),
    row(13, 1, (9, 1), Some("590.44.01")),
    row(13, 2, (9, 2), None),
    row(13, 3, (9, 3), None),
    row(13, 4, (9, 4), None),
    row(13, 5, (9, 5), None),
];

/// The newest PTX ISA a driver of CUDA version `driver` JITs (12.9 → 8.8, 13.0 → 9.0); `None`
/// for a driver older or newer than every row (a newer one takes at least the last row's, but
/// how much more is not known here).
pub fn max_ptx_isa(driver: CudaVersion) -> Option<(u32, u32)> {
    if TOOLKITS.last().is_some_and(|t| driver > t.cuda) {
        return None;
    }
    TOOLKITS.iter().rev().find(|t| t.cuda <= driver).map(|t| t.ptx_isa)
}

/// Whether a cubin built for `arch` runs on a device of compute capability `cc` as is: its own
/// major version at the same or a newer minor; `a` builds only on their exact chip.
pub fn cubin_runs_on(arch: Arch, cc: (u32, u32)) -> bool {
    arch.runs_natively_on(cc)
}

/// Whether PTX generated for `arch` can be JIT-compiled for a device of compute capability `cc`:
/// base PTX on its own compute capability and every newer one; `f` PTX on its family (same
/// major, same or newer minor); `a` PTX only on its own.
pub fn ptx_runs_on(arch: Arch, cc: (u32, u32)) -> bool {
    match arch.variant {
        Variant::Base => arch.compute_capability() <= cc,
        Variant::Family => arch.major == cc.0 && arch.minor <= cc.1,
        Variant::Specific => arch.compute_capability() == cc,
    }
}

/// Of the cubins built for `arches`, the one a device of compute capability `cc` runs: the
/// nearest compute capability not newer than the device (its own before an older minor), and for
/// one compute capability the `a` build before the `f` before the base one (the most specific
/// build for the chip). `None` when none runs there.
pub fn best_cubin(arches: impl IntoIterator<Item = Arch>, cc: (u32, u32)) -> Option<Arch> {
    let specific = |a: Arch| match a.variant {
        Variant::Specific => 2,
        Variant::Family => 1,
        Variant::Base => 0,
    };
    arches.into_iter().filter(|a| cubin_runs_on(*a, cc)).max_by_key(|a| (a.minor, specific(*a)))
}

/// Of the PTX generated for `arches`, the one a device of compute capability `cc` JIT-compiles:
/// the lowest that runs there (the fallback PTX before the extras, which exist only for kernels
/// the fallback lacks). `None` when none runs there.
pub fn best_ptx(arches: impl IntoIterator<Item = Arch>, cc: (u32, u32)) -> Option<Arch> {
    arches.into_iter().filter(|a| ptx_runs_on(*a, cc)).min()
}

/// The PTX ISA version of a PTX text (its `.version X.Y` directive).
pub fn ptx_isa_version(ptx: &str) -> Option<(u32, u32)> {
    ptx.lines().map(str::trim).find_map(parse_isa_directive)
}

fn parse_isa_directive(line: &str) -> Option<(u32, u32)> {
    let (a, b) = line.strip_prefix(".version")?.trim().split_once('.')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

#[cfg(test)]
mod tests;

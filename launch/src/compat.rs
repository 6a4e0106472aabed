//! Driver compatibility: which CUDA driver loads which embedded image. One table (per CUDA
//! toolkit: the PTX ISA its NVRTC writes and the Linux driver it shipped with) and the rules,
//! shared by `cargo launch check`/`report` (what would load on `min-driver`) and by
//! `launch::cuda` (what a load error says). Pure data, no driver needed.
//!
//! The rules:
//! * a cubin built by toolkit major M loads on a driver whose CUDA version has major >= M (minor
//!   version compatibility: any CUDA 12 driver, R525+, runs CUDA 12.x cubins; CUDA 13 cubins need
//!   a CUDA 13 driver, R580+), and only on its own major version at the same or a newer minor
//!   (sm_80 on 8.6, not on 9.0), `a` builds only on their exact chip ([`cubin_runs_on`]);
//! * PTX of ISA X is JIT-compiled only by a driver at least as new as the toolkit that introduced
//!   X ([`ptx_jits_on`]), and base PTX runs on its compute capability and every newer one, `f`
//!   PTX on its family (same major, same or newer minor), `a` PTX only on its own
//!   ([`ptx_runs_on`]);
//! * of several images the device takes the best cubin ([`best_cubin`]), else the lowest PTX
//!   ([`best_ptx`]): the one rule `launch::cuda` loads by and `cargo launch coverage` predicts by.

use std::fmt;
use std::str::FromStr;

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

    /// The major and minor of a release string (`12.9.86` → 12.9), as the manifest records the
    /// toolchain; `None` for anything else (`none` in a docs.rs build).
    pub fn of_release(release: &str) -> Option<CudaVersion> {
        let mut parts = release.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        Some(CudaVersion::new(major, minor))
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

/// Why a string is not a CUDA version of [`TOOLKITS`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct VersionParseError {
    /// The rejected text (control characters escaped, cut short).
    pub input: String,
    /// Well formed (`12.7`) but not a CUDA release this table knows.
    pub unknown: bool,
}

impl fmt::Display for VersionParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known = || TOOLKITS.iter().map(|t| t.cuda.to_string()).collect::<Vec<_>>().join(", ");
        if self.unknown {
            return write!(
                f,
                "CUDA {} is not a CUDA release this version of launch knows; known: {}",
                self.input,
                known()
            );
        }
        write!(f, "`{}` is not a CUDA version; expected \"MAJOR.MINOR\" such as \"12.4\"", self.input)?;
        // A driver release (`550.54.14`) is the likeliest mistake: say which CUDA version it is.
        if let Some(t) = CudaVersion::of_release(&self.input).and_then(|v| by_linux_driver(v.major)) {
            write!(f, " (the CUDA version `nvidia-smi` shows; driver {} is CUDA {})", self.input, t.cuda)?;
        }
        write!(f, "; known: {}", known())
    }
}

impl std::error::Error for VersionParseError {}

impl FromStr for CudaVersion {
    type Err = VersionParseError;

    /// Exactly `MAJOR.MINOR` of a release in [`TOOLKITS`] (`12.4`; not `12`, `12.4.1` or `12.7`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let input: String = s
            .chars()
            .flat_map(|c| if c.is_control() { c.escape_debug().collect() } else { vec![c] })
            .take(40)
            .collect();
        // Digits only (no sign, no space) and short, so `parse` cannot overflow.
        let number = |t: &str| {
            (!t.is_empty() && t.len() <= 3 && t.bytes().all(|c| c.is_ascii_digit())).then(|| t.parse::<u32>().ok())?
        };
        let parsed = s.split_once('.').and_then(|(a, b)| Some(CudaVersion::new(number(a)?, number(b)?)));
        match parsed {
            Some(v) if v.toolkit().is_some() => Ok(v),
            Some(_) => Err(VersionParseError { input, unknown: true }),
            None => Err(VersionParseError { input, unknown: false }),
        }
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

/// The release whose driver branch is `branch` (`550` → 12.4): reads a driver release number as
/// the CUDA version it gives.
fn by_linux_driver(branch: u32) -> Option<&'static Toolkit> {
    let branch_of = |t: &Toolkit| t.linux_driver.and_then(|d| d.split('.').next()?.parse::<u32>().ok());
    TOOLKITS.iter().find(|t| branch_of(t) == Some(branch))
}

/// The PTX ISA the toolkit `cuda` writes; `None` for a version not in [`TOOLKITS`].
pub fn ptx_isa_of(cuda: CudaVersion) -> Option<(u32, u32)> {
    cuda.toolkit().map(|t| t.ptx_isa)
}

/// The newest PTX ISA a driver of CUDA version `driver` JITs (12.9 → 8.8, 13.0 → 9.0); `None`
/// for a driver older or newer than every row (a newer one takes at least the last row's, but
/// how much more is not known here).
pub fn max_ptx_isa(driver: CudaVersion) -> Option<(u32, u32)> {
    if TOOLKITS.last().is_some_and(|t| driver > t.cuda) {
        return None;
    }
    TOOLKITS.iter().rev().find(|t| t.cuda <= driver).map(|t| t.ptx_isa)
}

/// The oldest driver that JITs PTX of ISA `isa`: the first toolkit that writes it or a newer one
/// (ISA 8.6 → 12.8); `None` for an ISA newer than every row.
pub fn min_driver_for_ptx(isa: (u32, u32)) -> Option<CudaVersion> {
    TOOLKITS.iter().find(|t| t.ptx_isa >= isa).map(|t| t.cuda)
}

/// Whether a driver of CUDA version `driver` JITs PTX of ISA `isa`.
pub fn ptx_jits_on(isa: (u32, u32), driver: CudaVersion) -> bool {
    min_driver_for_ptx(isa).is_some_and(|v| driver >= v)
}

/// The oldest driver that loads cubins built by toolkit `toolkit`: the first of its major
/// (minor version compatibility; 12.9 cubins → 12.0).
pub fn min_driver_for_cubin(toolkit: CudaVersion) -> CudaVersion {
    CudaVersion::new(toolkit.major, 0)
}

/// Whether a driver of CUDA version `driver` loads cubins built by toolkit `toolkit`: a driver of
/// the same major or a newer one (12.9 cubins load on a 13.0 driver; 13.x cubins not on 12.x).
pub fn cubin_loads_on(toolkit: CudaVersion, driver: CudaVersion) -> bool {
    driver >= min_driver_for_cubin(toolkit)
}

/// The Linux driver a CUDA version needs at least (`12.4` → `550.54.14`), for messages.
pub fn linux_driver(cuda: CudaVersion) -> Option<&'static str> {
    cuda.toolkit().and_then(|t| t.linux_driver)
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

/// `8.8` → (8, 8): the PTX ISA as the manifest records it.
pub fn parse_ptx_isa(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.trim().split_once('.')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn parse_isa_directive(line: &str) -> Option<(u32, u32)> {
    parse_ptx_isa(line.strip_prefix(".version")?)
}

#[cfg(test)]
mod tests;

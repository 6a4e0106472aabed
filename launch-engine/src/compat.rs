//! What a driver must be for a build: the questions `check`, `report`, `coverage` and `doctor`
//! ask of [`launch::compat`]'s table (the run time needs none of them, so they are not in
//! `launch`). The rules:
//! * a cubin built by toolkit major M loads on a driver whose CUDA version has major >= M (minor
//!   version compatibility: any CUDA 12 driver, R525+, runs CUDA 12.x cubins; CUDA 13 cubins need
//!   a CUDA 13 driver, R580+) ([`cubin_loads_on`]);
//! * PTX of ISA X is JIT-compiled only by a driver at least as new as the toolkit that introduced
//!   X ([`ptx_jits_on`]).
//!
//! And how the tools read a CUDA version: strictly, from `min-driver` and `--driver`
//! ([`parse_version`]), or from the toolchain's release string in the manifest
//! ([`release_version`]).

use std::fmt;

use launch::compat::{CudaVersion, Toolkit, TOOLKITS};

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
        if let Some(t) = release_version(&self.input).and_then(|v| by_linux_driver(v.major)) {
            write!(f, " (the CUDA version `nvidia-smi` shows; driver {} is CUDA {})", self.input, t.cuda)?;
        }
        write!(f, "; known: {}", known())
    }
}

impl std::error::Error for VersionParseError {}

/// Exactly `MAJOR.MINOR` of a release in [`TOOLKITS`] (`12.4`; not `12`, `12.4.1` or `12.7`).
///
/// # Errors
/// A [`VersionParseError`] that says which of the two it is, and for a driver release
/// (`550.54.14`) which CUDA version that driver gives.
pub fn parse_version(s: &str) -> Result<CudaVersion, VersionParseError> {
    let input: String =
        s.chars().flat_map(|c| if c.is_control() { c.escape_debug().collect() } else { vec![c] }).take(40).collect();
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

/// The major and minor of a release string (`12.9.86` → 12.9), as the manifest records the
/// toolchain; `None` for anything else (`none` in a docs.rs build).
pub fn release_version(release: &str) -> Option<CudaVersion> {
    let mut parts = release.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some(CudaVersion::new(major, minor))
}

/// `8.8` → (8, 8): the PTX ISA as the manifest records it.
pub fn parse_ptx_isa(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.trim().split_once('.')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// The release whose driver branch is `branch` (`550` → 12.4): reads a driver release number as
/// the CUDA version it gives.
fn by_linux_driver(branch: u32) -> Option<&'static Toolkit> {
    let branch_of = |t: &Toolkit| t.linux_driver.and_then(|d| d.split('.').next()?.parse::<u32>().ok());
    TOOLKITS.iter().find(|t| branch_of(t) == Some(branch))
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

#[cfg(test)]
mod tests;

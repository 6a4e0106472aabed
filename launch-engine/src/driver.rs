//! The CUDA driver of this machine, for `cargo launch doctor`: its version from the driver library
//! (`cuDriverGetVersion`, which needs no GPU context), when a driver library loads. Never part of
//! a build.

use std::ffi::c_int;

/// The driver library names, in the order the CUDA runtime tries them.
const NAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

/// A loaded driver's version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverVersion {
    /// `cuDriverGetVersion`'s value: 13000 for CUDA 13.0.
    pub version: i32,
    /// The library name it was loaded by.
    pub library: &'static str,
}

/// The version of the first driver library that loads and answers; `None` without one (no GPU
/// driver installed).
pub fn version() -> Option<DriverVersion> {
    NAMES.iter().find_map(|&name| {
        // SAFETY: loading the driver library runs its initialisers, which have no preconditions;
        // cuDriverGetVersion's prototype is `CUresult cuDriverGetVersion(int*)` in every CUDA.
        unsafe {
            let lib = libloading::Library::new(name).ok()?;
            let get: libloading::Symbol<unsafe extern "C" fn(*mut c_int) -> c_int> =
                lib.get(b"cuDriverGetVersion").ok()?;
            let mut v: c_int = 0;
            (get(&mut v) == 0 && v > 0).then_some(DriverVersion { version: v, library: name })
        }
    })
}

//! Errors of loading and launching.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use cudarc::driver::DriverError;

use super::check::LaunchError;
use super::image::{arch_list, Image, NoImage};
use crate::Arch;

/// Why a device could not be opened, a module loaded or a launch made.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA driver library (`libcuda.so` / `nvcuda.dll`) could be loaded.
    NoDriver {
        /// The library names tried, in order.
        tried: Vec<String>,
    },
    /// The driver library is there but an operation failed (no device, driver too old, ...).
    Driver {
        /// What was being done.
        what: String,
        /// The driver's error.
        error: DriverError,
    },
    /// cudarc panicked inside the driver bindings (a symbol missing from an old driver).
    Panicked {
        /// What was being done.
        what: String,
        /// The panic's message.
        message: String,
    },
    /// No embedded image runs on this device.
    NoImage(NoImage),
    /// The driver refused to JIT-compile the embedded PTX.
    PtxRejected {
        /// The module's source file.
        file: &'static str,
        /// The device's arch.
        device_arch: Arch,
        /// The PTX's arch.
        ptx_arch: Arch,
        /// Its PTX ISA version.
        isa: Option<(u32, u32)>,
        /// `cuDriverGetVersion`.
        driver_version: i32,
        /// The embedded cubins' arches.
        cubins: Vec<Arch>,
        /// The driver's error.
        error: DriverError,
    },
    /// A kernel was looked up in a module that does not hold it.
    WrongModule {
        /// The kernel.
        kernel: &'static str,
        /// The module it belongs to.
        expected: &'static str,
        /// The module it was looked up in.
        found: &'static str,
    },
    /// The loaded image's build does not have the kernel (an `#if __CUDA_ARCH__` left it out).
    NotInImage {
        /// The kernel.
        kernel: &'static str,
        /// The module's file.
        file: &'static str,
        /// The image (its kind and arch).
        image: Image,
        /// The arches whose builds have the kernel.
        exists_on: Vec<Arch>,
    },
    /// A typed launch was given a loaded kernel that is neither its kernel nor one of its
    /// variants ([`crate::Typed::launch`]).
    WrongKernel {
        /// The typed kernel's symbol.
        expected: &'static str,
        /// The loaded kernel's symbol.
        found: &'static str,
    },
    /// A typed launch of a kernel of a documentation build (`DOCS_RS` set when the crate was
    /// built: no toolchain compiled it, and its parameters are not known).
    Uncompiled {
        /// The kernel's symbol.
        kernel: &'static str,
    },
    /// The driver's parameter list of a loaded function is not the one the build recorded: the
    /// image is not the build's (stale, or another crate's), and a launch would pass its
    /// arguments at the wrong offsets.
    Signature {
        /// The kernel.
        kernel: &'static str,
        /// The image it was loaded from.
        image: Image,
        /// What differs, with both sides.
        difference: String,
    },
    /// No kernel, or several, of that name ([`crate::find`]).
    Find(crate::FindError),
    /// The launch check refused the launch.
    Launch(LaunchError),
}

fn cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver { tried } => {
                let mut names: Vec<&str> = Vec::new();
                for t in tried {
                    if !names.contains(&t.as_str()) {
                        names.push(t);
                    }
                }
                let shown = match names.as_slice() {
                    [first, .., last] if names.len() > 3 => format!("{first}, …, {last} ({} names)", names.len()),
                    all => all.join(", "),
                };
                write!(
                    f,
                    "no CUDA driver: the driver library could not be loaded (tried {shown}); install the NVIDIA \
                     driver, or run on a machine with an NVIDIA GPU. Building and `cargo launch report` need no GPU; \
                     running kernels does"
                )
            }
            Error::Driver { what, error } => write!(f, "{what}: {}", driver_error(error)),
            Error::Panicked { what, message } => write!(f, "{what}: the CUDA bindings failed: {message}"),
            Error::NoImage(e) => e.fmt(f),
            Error::PtxRejected { file, device_arch, ptx_arch, isa, driver_version, cubins, error } => {
                let isa_text = isa.map(|(a, b)| format!("PTX ISA {a}.{b}")).unwrap_or_else(|| "PTX".into());
                write!(
                    f,
                    "{file}: the driver (CUDA {}) cannot JIT the embedded {isa_text} for {ptx_arch} on this {device_arch} \
                     device: {}",
                    cuda_version(*driver_version),
                    driver_error(error)
                )?;
                if let (Some(have), Some(max)) = (isa, super::image::max_ptx_isa(*driver_version)) {
                    if *have > max {
                        write!(f, "; this driver takes PTX ISA up to {}.{}: update the driver", max.0, max.1)?;
                    }
                }
                let cubins = if cubins.is_empty() { "none".to_string() } else { arch_list(cubins) };
                write!(
                    f,
                    "; cubins embedded for {cubins}: add \"{device_arch}\" to `arch` in [package.metadata.launch] to \
                     need no JIT"
                )
            }
            Error::WrongModule { kernel, expected, found } => {
                write!(f, "`{kernel}` is in {expected}, not in the loaded module {found}")
            }
            Error::NotInImage { kernel, file, image, exists_on } => write!(
                f,
                "`{kernel}` is not in the {image} build of {file}: it exists only on {}; load it with \
                 `Device::load`, which picks an image that has it",
                arch_list(exists_on)
            ),
            Error::WrongKernel { expected, found } => write!(
                f,
                "the typed launch of `{expected}` was given the loaded kernel `{found}`: load `{expected}` (or one of \
                 its variants) and pass that"
            ),
            Error::Uncompiled { kernel } => write!(
                f,
                "`{kernel}` is a kernel of a documentation build: DOCS_RS was set when the crate was built, so no \
                 toolchain compiled it; build without DOCS_RS to launch it"
            ),
            Error::Signature { kernel, image, difference } => write!(
                f,
                "`{kernel}` in the loaded {image} does not take the parameters the build recorded ({difference}): the \
                 image is not this build's; rebuild the crate"
            ),
            Error::Find(e) => e.fmt(f),
            Error::Launch(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver { error, .. } | Error::PtxRejected { error, .. } => Some(error),
            Error::Launch(e) => Some(e),
            Error::Find(e) => Some(e),
            _ => None,
        }
    }
}

impl From<LaunchError> for Error {
    fn from(e: LaunchError) -> Self {
        Error::Launch(e)
    }
}

impl From<NoImage> for Error {
    fn from(e: NoImage) -> Self {
        Error::NoImage(e)
    }
}

/// `CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected`.
pub fn driver_error(e: &DriverError) -> String {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{name} ({}): {text}", e.0 as i32)
}

impl Error {
    /// The driver's error, when there is one.
    pub fn driver_error(&self) -> Option<&DriverError> {
        match self {
            Error::Driver { error, .. } | Error::PtxRejected { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Runs `f`, turning a panic inside cudarc into an error.
pub(super) fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, DriverError>) -> Result<T, Error> {
    guarded_lazy(|| what.to_string(), f)
}

/// [`guarded`] with the description made only when there is an error (for the launch path).
#[inline]
pub(super) fn guarded_lazy<T>(
    what: impl FnOnce() -> String,
    f: impl FnOnce() -> Result<T, DriverError>,
) -> Result<T, Error> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(error)) => Err(Error::Driver { what: what(), error }),
        Err(p) => {
            let message = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(Error::Panicked { what: what(), message })
        }
    }
}

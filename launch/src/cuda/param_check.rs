//! The load-time check of a kernel's parameters: the driver's list for the loaded function
//! (`cuFuncGetParamInfo`, CUDA 12.4 and later) against the one the build recorded, once per
//! load, so that a stale or foreign image is an error naming the kernel instead of arguments
//! read at the wrong offsets at the first launch.

use cudarc::driver::sys::{self, cudaError_enum as R};
use cudarc::driver::CudaFunction;

use super::error::{guarded, Error};
use super::image::Image;
use crate::signature::{offsets, same_layout};
use crate::Kernel;
use crate::Param;

/// The first driver with `cuFuncGetParamInfo` (CUDA 12.4): older ones have no such symbol, and
/// cudarc's dynamic loader panics on a missing one, so it is not called there.
pub(super) const FIRST_DRIVER: i32 = 12040;

/// The driver's `(offset, size)` of parameter `index`; `None` past the last.
fn param_info(func: &CudaFunction, name: &str, index: usize) -> Result<Option<(usize, usize)>, Error> {
    let f = func.cu_function();
    let (mut offset, mut size) = (0usize, 0usize);
    let what = format!("reading parameter {index} of `{name}`");
    // SAFETY: a loaded function's handle, and two out-pointers that live across the call.
    let r = guarded(&what, || Ok(unsafe { sys::cuFuncGetParamInfo(f, index, &mut offset, &mut size) }))?;
    match r {
        R::CUDA_SUCCESS => Ok(Some((offset, size))),
        // Past the end (what the driver answers for an index ≥ the count).
        R::CUDA_ERROR_INVALID_VALUE => Ok(None),
        other => guarded(&what, || other.result()).map(|()| None),
    }
}

/// What differs between `recorded` and the driver's list (`info(i)` for parameter `i`), if
/// anything.
pub(super) fn difference(
    recorded: &[Param],
    mut info: impl FnMut(usize) -> Result<Option<(usize, usize)>, Error>,
) -> Result<Option<String>, Error> {
    let mut laid_out = Vec::with_capacity(recorded.len());
    for i in 0..recorded.len() {
        match info(i)? {
            Some((offset, size)) => laid_out.push((offset as u32, size as u32)),
            None => break,
        }
    }
    // The driver's offsets count from where the parameters start in the constant bank, which
    // need not be aligned to the largest of them (see `same_layout`).
    if laid_out.len() == recorded.len() && same_layout(recorded, &laid_out) && info(recorded.len())?.is_none() {
        return Ok(None);
    }
    for (i, (p, (offset, _))) in recorded.iter().zip(offsets(recorded)).enumerate() {
        let Some((d_offset, d_size)) = info(i)? else {
            return Ok(Some(format!(
                "the driver's function has {i} parameters, the build recorded {}",
                recorded.len()
            )));
        };
        // Each parameter's size is its type's, a struct's tail padding included (measured on the
        // H200: `{double; int}` is 16 bytes to the driver, as to the PTX and the cubin's table);
        // what the driver leaves out is the padding after the last parameter, in a total the
        // check does not use.
        if d_offset != offset as usize || d_size != p.size as usize {
            return Ok(Some(format!(
                "parameter {i} (`{}`) is {d_size} bytes at offset {d_offset} to the driver, {} bytes at offset {offset} \
                 in the build",
                p.ty, p.size
            )));
        }
    }
    if info(recorded.len())?.is_some() {
        let mut count = recorded.len() + 1;
        while count < 4096 && info(count)?.is_some() {
            count += 1;
        }
        return Ok(Some(format!(
            "the driver's function has {count} parameters, the build recorded {}",
            recorded.len()
        )));
    }
    Ok(None)
}

/// Checks `func`, loaded from `image`, against `kernel`'s recorded parameters where the driver
/// can say (`driver_version` ≥ 12.4) and the build recorded them.
pub(super) fn check(
    kernel: &'static Kernel,
    func: &CudaFunction,
    image: Image,
    driver_version: i32,
) -> Result<(), Error> {
    let Some(recorded) = kernel.params else { return Ok(()) };
    if driver_version < FIRST_DRIVER {
        return Ok(());
    }
    match difference(recorded, |i| param_info(func, kernel.name, i))? {
        None => Ok(()),
        Some(difference) => Err(Error::Signature { kernel: kernel.name, image, difference }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParamKind;

    fn p(ty: &'static str, size: u32, align: u32) -> Param {
        Param { ty: ty.into(), kind: ParamKind::Opaque, size, align }
    }

    fn driver(list: &'static [(usize, usize)]) -> impl FnMut(usize) -> Result<Option<(usize, usize)>, Error> {
        move |i| Ok(list.get(i).copied())
    }

    /// The same list agrees; a missing or extra parameter, a shifted offset or another size (a
    /// struct without its tail padding too) is named with both sides.
    #[test]
    fn the_drivers_list_is_compared_parameter_by_parameter() {
        let recorded = [p("float*", 8, 8), p("int", 4, 4), p("Pad", 16, 8)];
        assert_eq!(difference(&recorded, driver(&[(0, 8), (8, 4), (16, 16)])).unwrap(), None);
        let cases: [(&'static [(usize, usize)], &str); 5] = [
            (&[(0, 8), (8, 4)], "the driver's function has 2 parameters, the build recorded 3"),
            (&[(0, 8), (8, 4), (16, 16), (32, 8)], "the driver's function has 4 parameters, the build recorded 3"),
            (
                &[(0, 8), (8, 8), (16, 16)],
                "parameter 1 (`int`) is 8 bytes at offset 8 to the driver, 4 bytes at offset 8 in the build",
            ),
            (
                &[(0, 8), (12, 4), (16, 16)],
                "parameter 1 (`int`) is 4 bytes at offset 12 to the driver, 4 bytes at offset 8 in the build",
            ),
            (
                &[(0, 8), (8, 4), (16, 12)],
                "parameter 2 (`Pad`) is 12 bytes at offset 16 to the driver, 16 bytes at offset 16 in the build",
            ),
        ];
        for (list, want) in cases {
            assert_eq!(difference(&recorded, driver(list)).unwrap().as_deref(), Some(want));
        }
    }
}

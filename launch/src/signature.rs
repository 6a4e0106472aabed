//! A kernel's parameters as the compiler sees them, and the type-level form the generated
//! statics give them, so that a launch's arguments are checked when the user's crate compiles.
//!
//! The build recovers each kernel's parameter types from the compiler (its mangled name, or a
//! `decltype` probe for an `extern "C"` kernel) and holds every one to the PTX's `.param` list
//! on every arch. The data is [`Param`] ([`Kernel::params`], the manifest, the JSON report).
//! Where every parameter maps to a Rust type, the generated static
//! is a [`Typed`] kernel: its [`Signature`] names the parameters as Rust types, and
//! `launch::cuda`'s typed launch takes a tuple of arguments that must match them, element by
//! element, or the crate does not compile:
//!
//! | C++ parameter                 | [`Signature`] type | what a launch passes                                  |
//! |-------------------------------|--------------------|-------------------------------------------------------|
//! | `const T*`                    | `*const T`         | `&CudaSlice<T>`, `&CudaView<T>` or `&mut CudaSlice<T>` |
//! | `T*`                          | `*mut T`           | `&mut CudaSlice<T>` or `&mut CudaViewMut<T>`          |
//! | `const void*` / `void*`       | `*const Void` / `*mut Void` ([`types::Void`](crate::types::Void)) | as above, any element type |
//! | `int`, `unsigned`, `float`, … | `i32`, `u32`, `f32`, … (exact width) | the value                           |
//! | `size_t`, `long long`, …      | `u64`, `i64`       | the value (`usize`/`isize` too: the same width)        |
//! | `__half`, `__nv_bfloat16`     | [`types::f16`](crate::types::f16), [`types::bf16`](crate::types::bf16) | the value |
//! | `float4`, `int2`, `__half2`, … | [`types::f32x4`](crate::types::f32x4), …  | the value (same size and alignment) |
//! | a struct named in `[package.metadata.launch.types]` | the Rust type named there | the value (size and alignment asserted at compile time) |
//! | another struct by value | [`types::Opaque<AlignA, N>`](crate::types::Opaque) | its bytes, of the struct's size and alignment |
//!
//! A kernel with a parameter that maps to none of these (a pointer to a struct not named in
//! `types`, a pointer to a pointer) stays a plain [`Kernel`]: its launches go through the untyped
//! builder, which is `unsafe` for the arguments too.

use std::marker::PhantomData;

use crate::kernel::Param;
use crate::Kernel;

/// The parameters' `(offset, size)` in a parameter buffer aligned to the largest of them: each
/// at the next multiple of its alignment (C's layout).
pub fn offsets(params: &[Param]) -> impl Iterator<Item = (u32, u32)> + '_ {
    offsets_from(params, 0)
}

/// The same when the buffer starts `base` bytes past a multiple of the largest alignment.
fn offsets_from(params: &[Param], base: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
    let mut at = base;
    params.iter().map(move |p| {
        let address = at.next_multiple_of(p.align.max(1));
        at = address + p.size;
        (address - base, p.size)
    })
}

/// Whether `laid_out` (each parameter's `(offset, size)` as the assembler's table in a cubin or
/// the driver's `cuFuncGetParamInfo` gives it) is `params`' layout. The offsets count from where
/// the parameters start in the constant bank, which is 4-byte aligned but not always aligned to
/// the largest parameter (measured: a 64-byte-aligned `CUtensorMap` first is at offset 32 on
/// sm_80): so the layout agrees if it is C's from some 4-byte-aligned start.
pub fn same_layout(params: &[Param], laid_out: &[(u32, u32)]) -> bool {
    let largest = params.iter().map(|p| p.align).max().unwrap_or(1).max(4);
    laid_out.len() == params.len()
        && (0..largest).step_by(4).any(|base| offsets_from(params, base).eq(laid_out.iter().copied()))
}

/// The most parameters a typed launch takes (the tuples `launch::cuda::Args` is implemented
/// for); the build leaves a kernel with more untyped. Rust implements its own traits for tuples
/// up to 12; the widest kernels of the real folders tested take 11 (candle-kernels), 12 (dfdx)
/// and 14 (mistralrs-quant).
pub const MAX_PARAMS: usize = 16;

/// The `Params` of a kernel that no toolchain compiled (a documentation build, such as docs.rs'):
/// any tuple of arguments type-checks, so a crate whose code launches its kernels still builds
/// its documentation. Nothing of such a build loads (its modules hold no image), and a typed
/// launch through it is `Error::Uncompiled` before anything reaches a driver.
#[derive(Debug)]
pub enum Uncompiled {}

/// A kernel's parameters as Rust types, in order: `(*const f32, *mut f32, i32)` for
/// `(const float*, float*, int)`. The generated code implements it for a type named like the
/// kernel's static (`POLY_EVAL`), so that a compile error about a launch names the kernel.
pub trait Signature: 'static {
    /// The tuple of parameter types (see the [module](self) for the mapping).
    type Params;
    /// The kernel's symbol, for messages.
    const KERNEL: &'static str;
}

/// A kernel whose every parameter has a Rust type: what the generated statics are where the
/// build could map them (see the [module](self)). It is the [`Kernel`] it wraps everywhere a
/// `&'static Kernel` is expected (it dereferences to it), and, with feature `cudarc`, it
/// launches with arguments checked against `K` at compile time (`launch::cuda`'s
/// `Typed::launch`).
pub struct Typed<K: Signature> {
    kernel: &'static Kernel,
    // `fn() -> K`: the marker is never held, and the static is `Sync` whatever `K` is.
    signature: PhantomData<fn() -> K>,
}

impl<K: Signature> Typed<K> {
    /// The typed form of `kernel`, whose parameters `K` describes.
    ///
    /// # Safety
    /// `K` must be `kernel`'s signature: launches push the arguments `K` asks for. The generated
    /// code calls it, for the `K` the build recovered from the compiler and checked against the
    /// PTX.
    #[doc(hidden)]
    pub const unsafe fn new(kernel: &'static Kernel) -> Typed<K> {
        Typed { kernel, signature: PhantomData }
    }

    /// The kernel.
    pub const fn kernel(&self) -> &'static Kernel {
        self.kernel
    }
}

impl<K: Signature> std::ops::Deref for Typed<K> {
    type Target = Kernel;
    fn deref(&self) -> &Kernel {
        self.kernel
    }
}

impl<K: Signature> std::fmt::Debug for Typed<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Typed").field(&self.kernel.name).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::ParamKind;

    fn param(size: u32, align: u32) -> Param {
        Param { ty: "t".into(), kind: ParamKind::Opaque, size, align }
    }

    /// Offsets follow the C rule the PTX's parameter space has: each parameter at the next
    /// multiple of its own alignment, with no tail padding counted.
    #[test]
    fn offsets_align_each_parameter() {
        let ps = [param(8, 8), param(4, 4), param(16, 16), param(1, 1), param(12, 4)];
        let got: Vec<(u32, u32)> = offsets(&ps).collect();
        assert_eq!(got, [(0, 8), (8, 4), (16, 16), (32, 1), (36, 12)]);
        assert!(same_layout(&ps, &got));
    }

    /// A layout from a start that is not aligned to the largest parameter agrees (a 64-byte
    /// struct first at 32 on sm_80, whose parameters start at 0x160); any other does not.
    #[test]
    fn a_layout_from_an_unaligned_start_agrees() {
        let ps = [param(128, 64), param(4, 4)];
        assert!(same_layout(&ps, &[(0, 128), (128, 4)]));
        assert!(same_layout(&ps, &[(32, 128), (160, 4)]));
        assert!(!same_layout(&ps, &[(32, 128), (164, 4)]));
        assert!(!same_layout(&ps, &[(2, 128), (130, 4)]), "a start is 4-byte aligned");
        assert!(!same_layout(&ps, &[(0, 128)]), "the count");
        assert!(!same_layout(&[param(8, 8), param(4, 4)], &[(0, 8), (12, 4)]));
    }
}

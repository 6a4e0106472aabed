//! Typed launches: [`Typed::launch`] takes the arguments as one tuple that must match the
//! kernel's [`Signature`] element by element, or the crate does not compile.
//!
//! A wrong count, order, width, element type or mutability is a compile error that names the
//! kernel and the parameter:
//!
//! ```text
//! error[E0277]: kernel `POLY_EVAL`: parameter 2 is `i32`, and `u32` is not one
//!    |     unsafe { POLY_EVAL.launch(&k, &stream, cfg, (&x, &mut y, n as u32)) }?;
//!    |                                                             ^^^^^^^^ parameter 2 of `POLY_EVAL` takes a `i32`
//! ```

use std::sync::Arc;

use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg,
};

use super::check::Approval;
use super::error::Error;
use super::kernel::LoadedKernel;
use crate::signature::{Signature, Typed};
use crate::types::Void;
use crate::Kernel;

/// An argument a launch can pass for parameter `I` of kernel `K`, whose [`Signature`] type is
/// `P`. Implemented by this crate only, for the pairs the [signature
/// table](crate::signature) lists.
#[diagnostic::on_unimplemented(
    message = "kernel `{K}`: parameter {I} is `{P}`, and `{Self}` is not one",
    label = "parameter {I} of `{K}` takes a `{P}`",
    note = "a `*const T` parameter takes `&CudaSlice<T>`, `&CudaView<T>` or `&mut CudaSlice<T>`; a `*mut T` one \
            `&mut CudaSlice<T>` or `&mut CudaViewMut<T>`; a value its exact Rust type (`launch::signature` has the table)"
)]
pub trait Arg<K, const I: usize, P>: sealed::Sealed<P> {
    /// Pushes the argument; `'a` is how long the builder may hold it.
    #[doc(hidden)]
    fn push<'a>(&'a mut self, args: &mut LaunchArgs<'a>);
}

mod sealed {
    /// Only this crate decides what passes for a parameter.
    pub trait Sealed<P> {}
}

/// A value passes for a parameter of its own type (`i32` for `int`, `f32x4` for `float4`, a
/// `[package.metadata.launch.types]` struct for its C++ struct).
impl<K, const I: usize, T: DeviceRepr> Arg<K, I, T> for T {
    #[inline(always)]
    fn push<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
        args.arg(&*self);
    }
}
impl<T: DeviceRepr> sealed::Sealed<T> for T {}

/// `usize`/`isize` have the width of `unsigned long`/`long` on the 64-bit hosts CUDA supports:
/// `size_t` demangles to `unsigned long`, and a Rust length is a `usize`.
#[cfg(target_pointer_width = "64")]
mod pointer_width {
    use super::*;

    impl<K, const I: usize> Arg<K, I, u64> for usize {
        #[inline(always)]
        fn push<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
            args.arg(&*self);
        }
    }
    impl sealed::Sealed<u64> for usize {}
    impl<K, const I: usize> Arg<K, I, i64> for isize {
        #[inline(always)]
        fn push<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
            args.arg(&*self);
        }
    }
    impl sealed::Sealed<i64> for isize {}
}

/// The pointer arguments: `$arg` passes for a `$param` parameter, pushed as `$push` (a shared
/// buffer is pushed as read, a mutable one as written, which is what cudarc's stream tracking
/// keys on). `$t` is the element type; `$bound` is `Sized` for `*T`, and for `void*` any type.
macro_rules! pointers {
    ($($param:ty, $arg:ty, $push:ident;)+) => {$(
        impl<'b, 'c, K, const I: usize, T> Arg<K, I, $param> for $arg {
            #[inline(always)]
            fn push<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
                pointers!(@$push self, args);
            }
        }
        impl<'b, 'c, T> sealed::Sealed<$param> for $arg {}
    )+};
    (@shared $s:ident, $args:ident) => { $args.arg(&**$s) };
    (@mutable $s:ident, $args:ident) => { $args.arg(&mut **$s) };
}

pointers! {
    *const T, &'b CudaSlice<T>, shared;
    *const T, &'b mut CudaSlice<T>, shared;
    *const T, &'b CudaView<'c, T>, shared;
    *mut T, &'b mut CudaSlice<T>, mutable;
    *mut T, &'b mut CudaViewMut<'c, T>, mutable;
}

/// `void*`: any buffer. [`Void`] is no element type of a buffer (it is not `DeviceRepr`), so
/// these never overlap the impls above.
macro_rules! void_pointers {
    ($($param:ty, $arg:ty, $push:ident;)+) => {$(
        impl<'b, 'c, K, const I: usize, T: DeviceRepr> Arg<K, I, $param> for $arg {
            #[inline(always)]
            fn push<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
                pointers!(@$push self, args);
            }
        }
        impl<'b, 'c, T: DeviceRepr> sealed::Sealed<$param> for $arg {}
    )+};
}

void_pointers! {
    *const Void, &'b CudaSlice<T>, shared;
    *const Void, &'b mut CudaSlice<T>, shared;
    *const Void, &'b CudaView<'c, T>, shared;
    *mut Void, &'b mut CudaSlice<T>, mutable;
    *mut Void, &'b mut CudaViewMut<'c, T>, mutable;
}

/// A tuple of arguments for every parameter of kernel `K`, whose [`Signature::Params`] is `P`,
/// in order.
///
/// # Safety
/// Implemented here only: `push` pushes exactly one argument per parameter of `K`, each of the
/// parameter's size.
#[diagnostic::on_unimplemented(
    message = "kernel `{K}` does not take these arguments: `{Self}`",
    label = "not the parameters of `{K}`",
    note = "`{K}` takes one tuple with an argument for each of its parameters, in order: `{P}`"
)]
pub unsafe trait Args<K, P> {
    /// A documentation build's kernel ([`Uncompiled`](crate::signature::Uncompiled) parameters):
    /// nothing compiled it, and [`Typed::launch`] says so instead of launching.
    #[doc(hidden)]
    const UNCOMPILED: bool = false;

    /// Pushes every argument in order.
    #[doc(hidden)]
    fn push<'a>(&'a mut self, args: &mut LaunchArgs<'a>);
}

// SAFETY: never pushed: `Typed::launch` returns `Error::Uncompiled` first.
unsafe impl<K, A> Args<K, crate::signature::Uncompiled> for A {
    const UNCOMPILED: bool = true;

    fn push<'a>(&'a mut self, _args: &mut LaunchArgs<'a>) {}
}

/// The tuples up to [`MAX_PARAMS`](crate::signature::MAX_PARAMS) elements; the build leaves a
/// kernel with more parameters untyped. The parameter tuple is a trait parameter (not matched
/// through `K`'s associated type), so a tuple of another length matches no impl and the
/// message above, with the parameters, is what the compiler says.
macro_rules! tuples {
    ($(($($p:ident $a:ident $i:tt),*);)+) => {$(
        // SAFETY: one push per element, each element's own `Arg` impl for its parameter.
        unsafe impl<K, $($p, $a),*> Args<K, ($($p,)*)> for ($($a,)*)
        where
            $($a: Arg<K, $i, $p>,)*
        {
            #[inline(always)]
            #[allow(unused_variables)]
            fn push<'a>(&'a mut self, args: &mut LaunchArgs<'a>) {
                $(Arg::<K, $i, $p>::push(&mut self.$i, args);)*
            }
        }
    )+};
}

tuples! {
    ();
    (P0 A0 0);
    (P0 A0 0, P1 A1 1);
    (P0 A0 0, P1 A1 1, P2 A2 2);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9, P10 A10 10);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9, P10 A10 10,
     P11 A11 11);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9, P10 A10 10,
     P11 A11 11, P12 A12 12);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9, P10 A10 10,
     P11 A11 11, P12 A12 12, P13 A13 13);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9, P10 A10 10,
     P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14);
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9, P10 A10 10,
     P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15);
}

impl<K: Signature> Typed<K> {
    /// Checks `cfg` against the contract and the device, then launches `k` on `stream` with
    /// `args`, a tuple with one argument per parameter that the compiler has held to the
    /// kernel's signature (count, order, width, element type, mutability). `k` is this kernel
    /// or one of its tune variants, loaded ([`super::Device::load`]); the tuner's launch
    /// closure passes the variant it is given.
    ///
    /// # Safety
    /// The arguments' types are checked; what the kernel does with them is not: it must stay
    /// within the buffers it is given (every index it reads or writes below the buffer's
    /// length) and not race with other work on them.
    ///
    /// # Errors
    /// [`Error::WrongKernel`] when `k` is another kernel; [`Error::Uncompiled`] for a kernel of
    /// a documentation build (`DOCS_RS`: no toolchain compiled it); a launch the check refuses (nothing
    /// reaches the driver); the driver's error.
    #[inline]
    pub unsafe fn launch<A: Args<K, K::Params>>(
        &self,
        k: &LoadedKernel,
        stream: &Arc<CudaStream>,
        cfg: LaunchConfig,
        mut args: A,
    ) -> Result<Approval, Error> {
        if A::UNCOMPILED {
            return Err(Error::Uncompiled { kernel: K::KERNEL });
        }
        if !is_or_varies(self.kernel(), k.kernel()) {
            return Err(Error::WrongKernel { expected: K::KERNEL, found: k.kernel().name });
        }
        let mut builder = k.builder(stream);
        args.push(&mut builder);
        // SAFETY: the arguments match the signature (`A: Args<K, K::Params>`), which the build checked
        // against the PTX; memory is the caller's contract.
        unsafe { k.launch(&mut builder, cfg) }
    }
}

/// Whether `loaded` is `kernel` or one of its variants (which share its parameters: the build
/// derives them from its PTX with only the directives and the entry's name changed).
fn is_or_varies(kernel: &'static Kernel, loaded: &'static Kernel) -> bool {
    std::ptr::eq(kernel, loaded) || kernel.variants.iter().any(|v| std::ptr::eq(v, loaded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::Uncompiled;

    /// A documentation build's kernel takes any arguments and is refused at the launch (an
    /// `Error::Uncompiled`, never a panic); a compiled kernel's arguments are launched.
    #[test]
    fn only_a_documentation_builds_arguments_are_refused() {
        const fn uncompiled<K, P, A: Args<K, P>>() -> bool {
            A::UNCOMPILED
        }
        assert!(uncompiled::<(), Uncompiled, (u8, &str)>());
        assert!(!uncompiled::<(), (i32, f32), (i32, f32)>());
        assert!(!uncompiled::<(), (), ()>());
        let message = Error::Uncompiled { kernel: "axpy" }.to_string();
        assert!(message.contains("`axpy`") && message.contains("DOCS_RS"), "{message}");
    }
}

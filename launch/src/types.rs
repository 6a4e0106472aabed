//! Rust types with the layout of CUDA's value types, for typed launches
//! ([`crate::signature`]): the half-precision and fp8 scalars (the `half` and `float8` crates'
//! types, which cudarc's buffers hold) and CUDA's vector types (`float4` is [`f32x4`]: the same
//! size, alignment and field order).
//!
//! The generated code asserts at compile time that each type it passes has the size and
//! alignment the PTX declares for the parameter.

#![allow(non_camel_case_types)]

/// `__half`.
#[cfg(feature = "cudarc")]
pub type f16 = half::f16;
/// `__nv_bfloat16`.
#[cfg(feature = "cudarc")]
pub type bf16 = half::bf16;
/// `__nv_fp8_e4m3`.
#[cfg(feature = "cudarc")]
pub type f8e4m3 = float8::F8E4M3;
/// `__nv_fp8_e5m2`.
#[cfg(feature = "cudarc")]
pub type f8e5m2 = float8::F8E5M2;

/// Without feature `cudarc` (so without launches, which need it), the half-precision and fp8
/// scalars are stand-ins of their layout: the generated signatures name them, and a binary that
/// only reads the kernels' reports does not compile the `half` and `float8` crates.
#[cfg(not(feature = "cudarc"))]
mod stand_ins {
    macro_rules! stand_in {
        ($($name:ident: $cuda:literal, $bits:ty;)+) => {$(
            #[doc = concat!("`", $cuda, "` (a stand-in without feature `cudarc`: its bits).")]
            #[repr(transparent)]
            #[derive(Clone, Copy, Debug, Default, PartialEq)]
            pub struct $name(pub $bits);
        )+};
    }
    stand_in! {
        f16: "__half", u16;
        bf16: "__nv_bfloat16", u16;
        f8e4m3: "__nv_fp8_e4m3", u8;
        f8e5m2: "__nv_fp8_e5m2", u8;
    }
}
#[cfg(not(feature = "cudarc"))]
pub use stand_ins::{bf16, f16, f8e4m3, f8e5m2};

/// `void`, as the pointee of a `void*` parameter (`*mut Void`), which takes a buffer of any
/// element type. Never a value: it has none.
#[derive(Debug)]
pub enum Void {}

/// A struct passed by value whose Rust type the crate does not name (in `[package.metadata.launch]
/// types`): its `N` bytes, aligned like `A` ([`Align8`] for 8), which is all the PTX says of it.
/// A typed launch holds it to the parameter's size and alignment; its bytes are the caller's (for
/// a struct with no fields, such as an operation tag, [`Opaque::zeroed`]). Naming the struct's
/// Rust type instead lets the compiler check its fields too.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Opaque<A: Align, const N: usize> {
    _align: [A; 0],
    bytes: [u8; N],
}

impl<A: Align, const N: usize> Opaque<A, N> {
    /// All bytes zero.
    pub const fn zeroed() -> Self {
        Opaque { _align: [], bytes: [0; N] }
    }

    /// These bytes, in the struct's layout.
    pub const fn from_bytes(bytes: [u8; N]) -> Self {
        Opaque { _align: [], bytes }
    }

    /// Its bytes.
    pub const fn bytes(&self) -> &[u8; N] {
        &self.bytes
    }
}

impl<A: Align, const N: usize> std::fmt::Debug for Opaque<A, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Opaque<align {}, {N} bytes>", std::mem::align_of::<A>())
    }
}

// SAFETY: `repr(C)` bytes with the parameter's alignment: what the kernel reads for it.
#[cfg(feature = "cudarc")]
unsafe impl<A: Align, const N: usize> cudarc::driver::DeviceRepr for Opaque<A, N> {}

/// An alignment for [`Opaque`]: `Align1` … `Align256`.
pub trait Align: Copy + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! aligns {
    ($($name:ident $n:literal),+) => {$(
        #[doc = concat!("Aligned to ", $n, " bytes (for [`Opaque`]).")]
        #[repr(align($n))]
        #[derive(Clone, Copy, Debug)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl Align for $name {}
    )+};
}

aligns!(Align1 1, Align2 2, Align4 4, Align8 8, Align16 16, Align32 32, Align64 64, Align128 128, Align256 256);

macro_rules! vector {
    ($($name:ident: $cuda:literal, $elem:ty, align $align:literal, [$($field:ident),+];)+) => {$(
        #[doc = concat!("`", $cuda, "`: the same size, alignment and field order.")]
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name {
            $(#[doc = concat!("`.", stringify!($field), "`")] pub $field: $elem,)+
        }

        impl $name {
            /// Its fields in order.
            pub const fn new($($field: $elem),+) -> $name {
                $name { $($field),+ }
            }
        }

        // SAFETY: `repr(C)` with CUDA's alignment: the bytes the kernel reads for the parameter.
        #[cfg(feature = "cudarc")]
        unsafe impl cudarc::driver::DeviceRepr for $name {}
        // SAFETY: every field is a number, for which all-zero bits are a valid value.
        #[cfg(feature = "cudarc")]
        unsafe impl cudarc::driver::ValidAsZeroBits for $name {}
    )+};
}

vector! {
    f16x2: "__half2", f16, align 4, [x, y];
    bf16x2: "__nv_bfloat162", bf16, align 4, [x, y];
    i8x2: "char2", i8, align 2, [x, y];
    u8x2: "uchar2", u8, align 2, [x, y];
    i8x4: "char4", i8, align 4, [x, y, z, w];
    u8x4: "uchar4", u8, align 4, [x, y, z, w];
    i16x2: "short2", i16, align 4, [x, y];
    u16x2: "ushort2", u16, align 4, [x, y];
    i16x4: "short4", i16, align 8, [x, y, z, w];
    u16x4: "ushort4", u16, align 8, [x, y, z, w];
    i32x2: "int2", i32, align 8, [x, y];
    u32x2: "uint2", u32, align 8, [x, y];
    i32x3: "int3", i32, align 4, [x, y, z];
    u32x3: "uint3", u32, align 4, [x, y, z];
    i32x4: "int4", i32, align 16, [x, y, z, w];
    u32x4: "uint4", u32, align 16, [x, y, z, w];
    f32x2: "float2", f32, align 8, [x, y];
    f32x3: "float3", f32, align 4, [x, y, z];
    f32x4: "float4", f32, align 16, [x, y, z, w];
    i64x2: "long2 / longlong2", i64, align 16, [x, y];
    u64x2: "ulong2 / ulonglong2", u64, align 16, [x, y];
    f64x2: "double2", f64, align 16, [x, y];
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    /// The layouts CUDA's `vector_types.h` gives (sizes, alignments, and `.w` of `float4` after
    /// three floats): a mismatch would pass the kernel shifted bytes.
    #[test]
    fn vector_layouts_are_cudas() {
        assert_eq!((size_of::<f32x4>(), align_of::<f32x4>(), offset_of!(f32x4, w)), (16, 16, 12));
        assert_eq!((size_of::<f32x3>(), align_of::<f32x3>()), (12, 4));
        assert_eq!((size_of::<i16x4>(), align_of::<i16x4>()), (8, 8));
        assert_eq!((size_of::<i8x2>(), align_of::<i8x2>()), (2, 2));
        assert_eq!((size_of::<f16x2>(), align_of::<f16x2>()), (4, 4));
        assert_eq!((size_of::<f64x2>(), align_of::<f64x2>()), (16, 16));
        assert_eq!((size_of::<f16>(), size_of::<bf16>(), size_of::<f8e4m3>(), size_of::<f8e5m2>()), (2, 2, 1, 1));
        // An opaque struct: its size and alignment, its bytes where given.
        assert_eq!((size_of::<Opaque<Align8, 24>>(), align_of::<Opaque<Align8, 24>>()), (24, 8));
        assert_eq!((size_of::<Opaque<Align1, 1>>(), align_of::<Opaque<Align256, 256>>()), (1, 256));
        assert_eq!(Opaque::<Align4, 4>::from_bytes([1, 2, 3, 4]).bytes(), &[1, 2, 3, 4]);
    }
}

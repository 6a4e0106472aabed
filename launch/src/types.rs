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
    }
}

//! Typed launches on the GPU (issue 33 item 7): every parameter kind of
//! `fixtures/crates/typed_gpu` passed through `Typed::launch` arrives as the Rust side sent it
//! (each kernel writes back what it was given); the load-time check refuses a kernel record
//! whose parameters are not the image's; a typed launch given another kernel is refused.

use launch::cuda::cudarc::driver::{sys, LaunchConfig, PushKernelArg};
use launch::cuda::Error;
use launch::types::{bf16, bf16x2, f16, f16x2, f32x3, f32x4, f64x2, f8e4m3, f8e5m2, i16x2, i32x2, i8x4, u32x4, u8x2};
use launch::types::{Align4, Opaque};
use launch::{Kernel, Param, ParamKind};

use fixture_typed_gpu::{Affine, Pad, AXPY, COPY_BYTES, HALVES, NOTHING, SCALARS, SCALE_DOUBLE, SCALE_FLOAT};
use fixture_typed_gpu::{OPAQUE, STRUCTS, SUM4, UNTYPED, VECTORS};

use crate::{device, say};

/// One block of one thread: the fixture's value kernels do their work in thread 0.
const ONE: LaunchConfig = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };

fn blocks(n: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: ((n as u32).div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
}

#[test]
fn every_parameter_kind_arrives_as_passed() {
    let Some(dev) = device("every_parameter_kind_arrives_as_passed") else { return };
    let stream = dev.context().default_stream();

    // Every scalar width, at values that use the high bits.
    let k = dev.load(&SCALARS).unwrap();
    let (mut ints, mut reals) = (stream.alloc_zeros::<i64>(9).unwrap(), stream.alloc_zeros::<f64>(2).unwrap());
    let ull = (1u64 << 63) + 5;
    let args = (
        &mut ints,
        &mut reals,
        true,
        -5i8,
        250u8,
        -30_000i16,
        60_000u16,
        -2_000_000_000i32,
        4_000_000_000u32,
        -(1i64 << 60),
        ull,
        1.5f32,
        -2.25f64,
    );
    // SAFETY (every launch here): each kernel writes only within the buffers it is given, sized for it.
    unsafe { SCALARS.launch(&k, &stream, ONE, args) }.unwrap();
    let got = stream.clone_dtoh(&ints).unwrap();
    assert_eq!(got, [1, -5, 250, -30_000, 60_000, -2_000_000_000, 4_000_000_000, -(1i64 << 60), ull as i64]);
    assert_eq!(stream.clone_dtoh(&reals).unwrap(), [1.5, -2.25]);

    // Half, bfloat16 and fp8, alone and in pairs.
    let k = dev.load(&HALVES).unwrap();
    let mut out = stream.alloc_zeros::<f32>(8).unwrap();
    let h = |x: f32| f16::from_f32(x);
    let b = |x: f32| bf16::from_f32(x);
    let args = (
        &mut out,
        h(1.5),
        f16x2::new(h(0.25), h(-3.0)),
        b(2.5),
        bf16x2::new(b(-0.5), b(8.0)),
        f8e4m3::from_f32(1.75),
        f8e5m2::from_f32(-6.0),
    );
    unsafe { HALVES.launch(&k, &stream, ONE, args) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [1.5, 0.25, -3.0, 2.5, -0.5, 8.0, 1.75, -6.0]);

    // Vector types: each field where CUDA's layout puts it.
    let k = dev.load(&VECTORS).unwrap();
    let mut out = stream.alloc_zeros::<f64>(23).unwrap();
    let args = (
        &mut out,
        f32x4::new(1.0, 2.0, 3.0, 4.0),
        i32x2::new(-5, 6),
        f32x3::new(7.0, 8.0, 9.0),
        u32x4::new(10, 11, 12, 4_000_000_000),
        f64x2::new(-13.5, 14.25),
        i8x4::new(-1, 2, -3, 4),
        i16x2::new(-300, 301),
        u8x2::new(200, 7),
    );
    unsafe { VECTORS.launch(&k, &stream, ONE, args) }.unwrap();
    let want = [
        1.0, 2.0, 3.0, 4.0, -5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 4e9, -13.5, 14.25, -1.0, 2.0, -3.0, 4.0,
        -300.0, 301.0, 200.0, 7.0,
    ];
    assert_eq!(stream.clone_dtoh(&out).unwrap(), want);

    // Structs by value after a 1-byte value: every offset after it padded.
    let k = dev.load(&STRUCTS).unwrap();
    let mut out = stream.alloc_zeros::<f64>(7).unwrap();
    let args = (&mut out, b'x' as i8, Pad { d: 3.5, i: -7 }, Affine { a: 0.5, b: -1.25, shift: 9 }, 42i32);
    unsafe { STRUCTS.launch(&k, &stream, ONE, args) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [120.0, 3.5, -7.0, 0.5, -1.25, 9.0, 42.0]);
    say("gpu::typed: scalars, halves, fp8, vectors and structs by value arrive as passed");
}

#[test]
fn pointer_parameters_take_buffers_and_views_of_their_element_type() {
    let Some(dev) = device("pointer_parameters_take_buffers_and_views_of_their_element_type") else { return };
    let stream = dev.context().default_stream();
    let n = 100_000usize;

    // `const float*` from a view, `float*` from a buffer, `size_t` from a usize.
    let k = dev.load(&AXPY).unwrap();
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let x = stream.clone_htod(&xs).unwrap();
    let mut y = stream.clone_htod(&vec![1.0f32; n]).unwrap();
    unsafe { AXPY.launch(&k, &stream, blocks(n), (&x.slice(..), &mut y, 2.0f32, n)) }.unwrap();
    let got = stream.clone_dtoh(&y).unwrap();
    assert!(got.iter().zip(&xs).all(|(g, x)| *g == 2.0 * x + 1.0));

    // Pointers to a vector type and to half.
    let k = dev.load(&SUM4).unwrap();
    let v: Vec<f32x4> = (0..n).map(|i| f32x4::new(i as f32, 1.0, 2.0, 3.0)).collect();
    let hs: Vec<f16> = (0..n).map(|i| f16::from_f32((i % 7) as f32)).collect();
    let (v_dev, h_dev) = (stream.clone_htod(&v).unwrap(), stream.clone_htod(&hs).unwrap());
    let mut out = stream.alloc_zeros::<f64>(n).unwrap();
    unsafe { SUM4.launch(&k, &stream, blocks(n), (&v_dev, &mut out, &h_dev, n as i32)) }.unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    assert!(got.iter().enumerate().all(|(i, g)| *g == i as f64 + 6.0 + (i % 7) as f64));

    // `void*` takes a buffer of any element type.
    let k = dev.load(&COPY_BYTES).unwrap();
    let words: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let src = stream.clone_htod(&words).unwrap();
    let mut dst = stream.alloc_zeros::<u32>(n).unwrap();
    unsafe { COPY_BYTES.launch(&k, &stream, blocks(4 * n), (&src, &mut dst, 4 * n as u64)) }.unwrap();
    assert_eq!(stream.clone_dtoh(&dst).unwrap(), words);

    // A C++ template's two instantiations, each its own typed kernel.
    let (kf, kd) = (dev.load(&SCALE_FLOAT).unwrap(), dev.load(&SCALE_DOUBLE).unwrap());
    let mut vf = stream.clone_htod(&vec![3.0f32; n]).unwrap();
    let mut vd = stream.clone_htod(&vec![3.0f64; n]).unwrap();
    unsafe { SCALE_FLOAT.launch(&kf, &stream, blocks(n), (&mut vf, 0.5f32, n as i32)) }.unwrap();
    unsafe { SCALE_DOUBLE.launch(&kd, &stream, blocks(n), (&mut vd, -2.0f64, n as i32)) }.unwrap();
    assert!(stream.clone_dtoh(&vf).unwrap().iter().all(|v| *v == 1.5));
    assert!(stream.clone_dtoh(&vd).unwrap().iter().all(|v| *v == -6.0));

    // No parameters.
    let k = dev.load(&NOTHING).unwrap();
    unsafe { NOTHING.launch(&k, &stream, ONE, ()) }.unwrap();
    // An unnamed struct by value: its bytes.
    let k = dev.load(&OPAQUE).unwrap();
    let mut out = stream.alloc_zeros::<i32>(1).unwrap();
    let unnamed = Opaque::<Align4, 4>::from_bytes(77i32.to_ne_bytes()); // `struct Unnamed { int a; }`
    unsafe { OPAQUE.launch(&k, &stream, ONE, (&mut out, unnamed)) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [77]);
    let k = dev.load(&UNTYPED).unwrap();
    let inner = stream.clone_htod(&[-9i32]).unwrap();
    let mut args = k.builder(&stream);
    args.arg(&mut out).arg(&inner);
    // SAFETY: `untyped(int* out, const Unnamed* u)` writes out[0] from u->a; `Unnamed` is one int.
    unsafe { k.launch(&mut args, ONE) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [-9]);

    // A typed launch given another loaded kernel is refused before the driver sees it.
    let err = unsafe { AXPY.launch(&kf, &stream, blocks(n), (&x, &mut y, 1.0f32, n)) }.unwrap_err();
    assert!(matches!(err, Error::WrongKernel { expected: "axpy", .. }), "{err}");
    say(&format!("gpu::typed: buffers, views, void*, template instantiations, no parameters; refused: {err}"));
}

/// A record of `kernel` whose parameters are `params` instead (a stale or foreign image).
fn with_params(kernel: &'static Kernel, params: Vec<Param>) -> &'static Kernel {
    Box::leak(Box::new(Kernel { params: Some(Box::leak(params.into_boxed_slice())), ..*kernel }))
}

#[test]
fn the_load_time_check_refuses_an_image_whose_parameters_differ() {
    let Some(dev) = device("the_load_time_check_refuses_an_image_whose_parameters_differ") else { return };
    let version = dev.info().driver_version;
    if version < 12040 {
        say(&format!("gpu::typed: the driver ({version}) has no cuFuncGetParamInfo: the check is skipped there"));
        return;
    }
    let axpy = AXPY.kernel();
    let recorded = axpy.params.unwrap().to_vec();
    // The build's own record loads (so does the struct kernel: `Pad` has 4 bytes of tail padding).
    dev.load(axpy).unwrap();
    let structs = dev.load(STRUCTS.kernel()).unwrap();
    // What the driver itself says of the struct parameters (`Pad` is 16 bytes with 4 of tail
    // padding): the evidence for the check's padding rule.
    let f = structs.function().cu_function();
    let driver: Vec<(usize, usize)> = (0..5)
        .map(|i| {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: a loaded function and two out-pointers that outlive the call.
            let r = unsafe { sys::cuFuncGetParamInfo(f, i, &mut offset, &mut size) };
            assert_eq!(r, sys::cudaError_enum::CUDA_SUCCESS, "parameter {i}");
            (offset, size)
        })
        .collect();
    let layout: Vec<(u32, u32)> = launch::signature::offsets(STRUCTS.params.unwrap()).collect();
    say(&format!("gpu::typed: structs(double*, char, Pad, geo::Affine, int): driver (offset, size) {driver:?}, recorded {layout:?}"));
    let n = |size: u32| Param { ty: "int".into(), kind: ParamKind::Value { rust: "i32".into() }, size, align: size };
    let cases = [
        (recorded[..3].to_vec(), "the driver's function has 4 parameters, the build recorded 3"),
        ([recorded.clone(), vec![n(4)]].concat(), "the driver's function has 4 parameters, the build recorded 5"),
        (
            [recorded[..3].to_vec(), vec![n(4)]].concat(),
            "parameter 3 (`int`) is 8 bytes at offset 24 to the driver, 4 bytes at offset 20 in the build",
        ),
    ];
    for (params, want) in cases {
        let err = dev.load(with_params(axpy, params)).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Signature { kernel: "axpy", .. }), "{text}");
        assert!(text.contains(want), "{text}\nwanted: {want}");
        say(&format!("gpu::typed: refused at load: {text}"));
    }
}

//! mistralrs-quant's own launchers, from the library launch-build linked of its unmodified
//! `kernels/` (issue 34, item 5), called on the GPU and compared with the CPU; then every kernel of
//! the crate loaded from its embedded cubin, its record compared with the driver's attributes.
//!
//! The launchers take device pointers: memory comes from the CUDA runtime the library links
//! statically (`libcudart_static.a`), so the program needs the driver alone. mistralrs-quant
//! compiles with `--default-stream per-thread`; the launchers that take no stream use that one,
//! and `cudaDeviceSynchronize` waits for every stream. Exit 0: all right; 1: no GPU or a CUDA
//! error (said); 2: a wrong value; 3: a record the driver disagrees with.

use std::ffi::{c_char, c_int, c_void, CStr};

launch::include_kernels!();

// The launchers' C signatures, as mistralrs-quant 0.8.1's kernels define them (`extern "C"`).
extern "C" {
    fn count_nonzero_u32(d_in: *const u32, n: u32, stream: *mut c_void) -> u32;
    fn bitwise_xor_u32(d_in1: *const u32, d_in2: *const u32, d_out: *mut u32, n: u32);
    fn leftshift_u32(d_in1: *const u32, d_out: *mut u32, n: u32, k: i32);
    fn gptoss_swiglu_f32(gate: *const f32, up: *const f32, out: *mut f32, n: u32, alpha: f32, limit: f32, stream: *mut c_void);
    fn dequantize_8bit_u8_kernel_f32(wq: *mut u8, scale: *mut f32, zero: *mut f32, out: *mut f32, h: c_int, w: c_int);
}

// The static CUDA runtime's, which the library links.
extern "C" {
    fn cudaMalloc(p: *mut *mut c_void, bytes: usize) -> c_int;
    fn cudaMemcpy(dst: *mut c_void, src: *const c_void, bytes: usize, kind: c_int) -> c_int;
    fn cudaFree(p: *mut c_void) -> c_int;
    fn cudaDeviceSynchronize() -> c_int;
    fn cudaGetLastError() -> c_int;
    fn cudaGetErrorString(e: c_int) -> *const c_char;
}

const HOST_TO_DEVICE: c_int = 1;
const DEVICE_TO_HOST: c_int = 2;

/// Exits 1 with the runtime's words when `e` is an error.
fn checked(what: &str, e: c_int) {
    if e != 0 {
        // SAFETY: cudaGetErrorString returns a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr(cudaGetErrorString(e)) }.to_string_lossy();
        eprintln!("{what}: CUDA error {e} ({text})");
        std::process::exit(1);
    }
}

/// A launcher's completion: its launch error, then the kernel's own.
fn finished(what: &str) {
    // SAFETY: plain runtime calls without arguments.
    checked(what, unsafe { cudaGetLastError() });
    checked(what, unsafe { cudaDeviceSynchronize() });
}

/// Device memory holding `len` values of `T`.
struct Buf<T> {
    ptr: *mut T,
    len: usize,
}

impl<T: Copy + Default> Buf<T> {
    fn from(host: &[T]) -> Buf<T> {
        let b = Buf::<T>::zeroed(host.len());
        let bytes = std::mem::size_of_val(host);
        // SAFETY: b holds host.len() values of T.
        checked("cudaMemcpy", unsafe { cudaMemcpy(b.ptr.cast(), host.as_ptr().cast(), bytes, HOST_TO_DEVICE) });
        b
    }

    fn zeroed(len: usize) -> Buf<T> {
        let mut p = std::ptr::null_mut();
        // SAFETY: an out-pointer for the allocation.
        checked("cudaMalloc", unsafe { cudaMalloc(&mut p, len.max(1) * std::mem::size_of::<T>()) });
        Buf { ptr: p.cast(), len }
    }

    fn read(&self) -> Vec<T> {
        let mut host = vec![T::default(); self.len];
        let bytes = std::mem::size_of_val(host.as_slice());
        // SAFETY: both hold self.len values of T.
        checked("cudaMemcpy", unsafe { cudaMemcpy(host.as_mut_ptr().cast(), self.ptr.cast(), bytes, DEVICE_TO_HOST) });
        host
    }
}

impl<T> Drop for Buf<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by cudaMalloc, freed once.
        unsafe { cudaFree(self.ptr.cast()) };
    }
}

/// A deterministic pseudo-random stream (no dependency for it).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }

    fn unit(&mut self) -> f32 {
        (self.next() % 20001) as f32 / 1000.0 - 10.0
    }
}

/// One launcher's result against the CPU's: how many values differ beyond `tolerance` (relative,
/// with an absolute floor of the same size), and the largest difference.
fn compare(name: &str, got: &[f32], want: &[f32], tolerance: f32) -> usize {
    let mut wrong = 0;
    let mut worst = 0.0f32;
    for (g, w) in got.iter().zip(want) {
        let d = (g - w).abs();
        worst = worst.max(d);
        if d > tolerance * w.abs().max(1.0) || g.is_nan() != w.is_nan() {
            wrong += 1;
        }
    }
    println!("{name}: {} values, {wrong} wrong, largest difference {worst:e}", got.len());
    wrong
}

fn exact(name: &str, got: &[u32], want: &[u32]) -> usize {
    let wrong = got.iter().zip(want).filter(|(g, w)| g != w).count();
    println!("{name}: {} values, {wrong} wrong", got.len());
    wrong
}

/// gpt-oss's SwiGLU as ops.cu computes it, in f32.
fn swiglu(g: f32, u: f32, alpha: f32, limit: f32) -> f32 {
    let g = g.min(limit);
    let u = u.max(-limit).min(limit);
    let glu = g * (1.0 / (1.0 + (-(g * alpha)).exp()));
    (u + 1.0) * glu
}

fn launchers() -> usize {
    let mut rng = Lcg(34);
    let mut wrong = 0;
    // count_nonzero: CUB's DeviceReduce over a transform iterator, CUB's kernels named per arch.
    for n in [1usize, 1000, 1 << 20] {
        let x: Vec<u32> = (0..n).map(|_| if rng.next() % 3 == 0 { 0 } else { rng.next() }).collect();
        let d = Buf::from(&x);
        // SAFETY: d holds n u32; the default stream.
        let got = unsafe { count_nonzero_u32(d.ptr, n as u32, std::ptr::null_mut()) };
        finished("count_nonzero_u32");
        let want = x.iter().filter(|&&v| v != 0).count() as u32;
        println!("count_nonzero_u32 over {n}: {got}, CPU {want}");
        wrong += usize::from(got != want);
    }
    let n = 100_003usize;
    let a: Vec<u32> = (0..n).map(|_| rng.next()).collect();
    let b: Vec<u32> = (0..n).map(|_| rng.next()).collect();
    let (da, db, out) = (Buf::from(&a), Buf::from(&b), Buf::<u32>::zeroed(n));
    // SAFETY: each holds n u32.
    unsafe { bitwise_xor_u32(da.ptr, db.ptr, out.ptr, n as u32) };
    finished("bitwise_xor_u32");
    let want: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x ^ y).collect();
    wrong += exact("bitwise_xor_u32", &out.read(), &want);
    // SAFETY: as above.
    unsafe { leftshift_u32(da.ptr, out.ptr, n as u32, 7) };
    finished("leftshift_u32");
    let want: Vec<u32> = a.iter().map(|x| x << 7).collect();
    wrong += exact("leftshift_u32", &out.read(), &want);
    // Both of the launcher's paths: four at a time (n % 4 == 0) and one at a time.
    let (alpha, limit) = (1.702f32, 7.0f32);
    for n in [4096usize, 1001] {
        let g: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
        let u: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
        let (dg, du, out) = (Buf::from(&g), Buf::from(&u), Buf::<f32>::zeroed(n));
        // SAFETY: each holds n f32; the default stream.
        unsafe { gptoss_swiglu_f32(dg.ptr, du.ptr, out.ptr, n as u32, alpha, limit, std::ptr::null_mut()) };
        finished("gptoss_swiglu_f32");
        let want: Vec<f32> = g.iter().zip(&u).map(|(&g, &u)| swiglu(g, u, alpha, limit)).collect();
        // --use_fast_math: expf is the hardware's approximation.
        wrong += compare(&format!("gptoss_swiglu_f32 over {n}"), &out.read(), &want, 1e-5);
    }
    let (h, w) = (64usize, 300usize);
    let q: Vec<u8> = (0..h * w).map(|_| rng.next() as u8).collect();
    let scale: Vec<f32> = (0..w).map(|_| rng.unit() / 100.0).collect();
    let zero: Vec<f32> = (0..w).map(|_| (rng.next() % 256) as f32).collect();
    let (dq, ds, dz, out) = (Buf::from(&q), Buf::from(&scale), Buf::from(&zero), Buf::<f32>::zeroed(h * w));
    // SAFETY: dq holds h*w bytes, ds and dz w floats, out h*w floats.
    unsafe { dequantize_8bit_u8_kernel_f32(dq.ptr, ds.ptr, dz.ptr, out.ptr, h as c_int, w as c_int) };
    finished("dequantize_8bit_u8_kernel_f32");
    let want: Vec<f32> = (0..h * w).map(|i| (q[i] as f32 - zero[i % w]) * scale[i % w]).collect();
    wrong += compare("hqq dequantize_8bit_u8_kernel_f32", &out.read(), &want, 0.0);
    wrong
}

fn main() {
    let wrong = launchers();
    println!("launchers: {wrong} wrong");
    if wrong != 0 {
        std::process::exit(2);
    }
    let dev = match launch::cuda::Device::new(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("no device: {e}");
            std::process::exit(1);
        }
    };
    let mut differences = Vec::new();
    let mut loaded_count = 0;
    for k in KERNELS {
        match dev.load(k) {
            Ok(loaded) => {
                loaded_count += 1;
                differences.extend(loaded.cross_check().into_iter().map(|x| format!("{}: {x}", k.name)));
            }
            Err(e) => differences.push(format!("{}: {e}", k.name)),
        }
    }
    println!("{} kernels, {loaded_count} loaded, {} differences from the driver", KERNELS.len(), differences.len());
    for d in &differences {
        eprintln!("{d}");
    }
    if !differences.is_empty() {
        std::process::exit(3);
    }
    println!("ok");
}

//! The template's kernels (one `launch::Kernel` static each: `POLY_EVAL`, `POLY_EVAL_LB256`, ...,
//! and `KERNELS`), plus the CPU reference of their arithmetic.
#![allow(missing_docs)]

launch::include_kernels!();

/// Terms of the polynomial (`POLY_TERMS` in kernels/poly.cuh).
pub const POLY_TERMS: usize = 128;

/// The kernels' arithmetic for one element, on the CPU, in the same order (so the GPU result is
/// bit-identical: the same fused multiply-adds, the same summation order).
#[inline(always)]
fn poly_eval_one(v: f32) -> f32 {
    let mut acc = [0.0f32; POLY_TERMS];
    for (k, a) in acc.iter_mut().enumerate() {
        *a = v * (k as f32 + 1.0);
    }
    for _ in 0..8 {
        for k in 0..POLY_TERMS {
            acc[k] = acc[k].mul_add(v, acc[(k + 7) & (POLY_TERMS - 1)]);
        }
    }
    let mut s = 0.0f32;
    for a in acc {
        s += a;
    }
    s
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn poly_eval_fma(xs: &[f32], out: &mut [f32]) {
    for (x, o) in xs.iter().zip(out) {
        *o = poly_eval_one(*x);
    }
}

fn poly_eval_plain(xs: &[f32], out: &mut [f32]) {
    for (x, o) in xs.iter().zip(out) {
        *o = poly_eval_one(*x);
    }
}

/// `poly_eval` of every element of `xs` into `out`, on every CPU core (hardware FMA where the
/// CPU has it; `f32::mul_add` is exact either way).
pub fn poly_eval_cpu(xs: &[f32], out: &mut [f32]) {
    assert_eq!(xs.len(), out.len());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = xs.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (x, o) in xs.chunks(chunk).zip(out.chunks_mut(chunk)) {
            s.spawn(move || {
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU has FMA (checked just above).
                    unsafe { poly_eval_fma(x, o) };
                    return;
                }
                poly_eval_plain(x, o);
            });
        }
    });
}

/// A small deterministic generator (SplitMix64) for test inputs: no dependency, a fresh stream
/// per seed.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A float uniform in [-1, 1).
    pub fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// `n` floats uniform in [-1, 1).
    pub fn floats(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.next_f32()).collect()
    }
}

/// A seed that differs from run to run (time and process id).
pub fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    t ^ (u64::from(std::process::id()) << 32)
}

// Kernels for the H200 driver comparison (tools/h200/README.md).
//
// Every kernel is `extern "C"` and is never launched: only its resource usage matters (what ptxas
// assigns and what the driver reads from the cubin). They span
//
//   * register counts, forced with `__maxnreg__(R)` on a body that keeps more than R floats live
//     (ptxas then uses exactly R registers and spills the rest to local memory): `r024` ... `r255`;
//   * static shared memory of 0, 4096, 16384 and 40000 bytes: `s04k`, `s16k`, `s40k`, ...;
//   * CTA barriers: `bar.sync 0` (ptxas: `used 1 barriers`), and named barriers through inline PTX
//     `bar.sync n, 32`, which make ptxas report `used n+1 barriers`: 2, 4, 6 and 16 barriers;
//   * launch bounds: `__launch_bounds__(256, 4)`, `(128)`, `(96)`, `(1000)`, `(512, 2)`, `(1024, 1)`.
//
// No headers are included, so the file also compiles with NVRTC.

// K live floats per thread: every value is read, then updated in place twice in a chain that
// needs all K values until the end, then summed.
template <int K>
__device__ __forceinline__ void live(const float* __restrict__ in, float* __restrict__ out) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float v[K];
#pragma unroll
    for (int i = 0; i < K; ++i) v[i] = in[t + i * 4096u];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int i = 0; i < K; ++i) v[i] = v[i] * v[(i + 1) % K] + v[(i + 3) % K];
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i) s += v[i] * v[(i + K / 2) % K];
    out[t] = s;
}

// ---- Register counts: __maxnreg__(R) over R + 24 live values (no shared memory, no barrier) ----

#define REGS(NAME, R)                                                                   \
    extern "C" __global__ void __maxnreg__(R) NAME(const float* in, float* out) {       \
        live<R + 24>(in, out);                                                          \
    }

REGS(r024, 24)
REGS(r032, 32)
REGS(r037, 37)
REGS(r040, 40)
REGS(r048, 48)
REGS(r056, 56)
REGS(r064, 64)
REGS(r065, 65)
REGS(r072, 72)
REGS(r080, 80)
REGS(r088, 88)
REGS(r096, 96)
REGS(r104, 104)
REGS(r112, 112)
REGS(r120, 120)
REGS(r128, 128)
REGS(r136, 136)
REGS(r152, 152)
REGS(r168, 168)
REGS(r176, 176)
REGS(r200, 200)
REGS(r232, 232)
REGS(r255, 255)

// ---- Smallest kernels ----

// No registers beyond the minimum, no shared memory, no barrier.
extern "C" __global__ void empty() {}

// A few registers, no barrier.
extern "C" __global__ void small(const float* in, float* out) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = in[t] * 2.0f + 1.0f;
}

// ---- Static shared memory (with __syncthreads: 1 barrier) ----

template <int N>
__device__ __forceinline__ void smem_body(const float* __restrict__ in, float* __restrict__ out, float* buf) {
    for (unsigned i = threadIdx.x; i < N; i += blockDim.x) buf[i] = in[i];
    __syncthreads();
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = buf[(t * 7u) % N] + buf[(t * 13u + 5u) % N];
}

// 4096 bytes.
extern "C" __global__ void s04k(const float* in, float* out) {
    __shared__ float buf[1024];
    smem_body<1024>(in, out, buf);
}

// 16384 bytes.
extern "C" __global__ void s16k(const float* in, float* out) {
    __shared__ float buf[4096];
    smem_body<4096>(in, out, buf);
}

// 40000 bytes.
extern "C" __global__ void s40k(const float* in, float* out) {
    __shared__ float buf[10000];
    smem_body<10000>(in, out, buf);
}

// 40000 bytes and 128 registers.
extern "C" __global__ void __maxnreg__(128) s40k_r128(const float* in, float* out) {
    __shared__ float buf[10000];
    smem_body<10000>(in, out, buf);
    live<152>(in, out + 65536);
}

// 16384 bytes and 72 registers.
extern "C" __global__ void __maxnreg__(72) s16k_r072(const float* in, float* out) {
    __shared__ float buf[4096];
    smem_body<4096>(in, out, buf);
    live<96>(in, out + 65536);
}

// ---- Barriers: bar.sync with a barrier id; ptxas counts ids 0..n ----

#define BARRIER(ID) asm volatile("bar.sync " #ID ", 32;" ::: "memory")

// bar.sync 0, 32: 1 barrier.
extern "C" __global__ void b01(float* out) {
    float x = out[threadIdx.x];
    BARRIER(0);
    out[threadIdx.x] = x + 1.0f;
}

// bar.sync 1, 32: 2 barriers.
extern "C" __global__ void b02(float* out) {
    float x = out[threadIdx.x];
    BARRIER(1);
    out[threadIdx.x] = x + 1.0f;
}

// bar.sync 3, 32: 4 barriers.
extern "C" __global__ void b04(float* out) {
    float x = out[threadIdx.x];
    BARRIER(3);
    out[threadIdx.x] = x + 1.0f;
}

// bar.sync 5, 32: 6 barriers.
extern "C" __global__ void b06(float* out) {
    float x = out[threadIdx.x];
    BARRIER(5);
    out[threadIdx.x] = x + 1.0f;
}

// bar.sync 15, 32: 16 barriers (the most there are).
extern "C" __global__ void b16(float* out) {
    float x = out[threadIdx.x];
    BARRIER(15);
    out[threadIdx.x] = x + 1.0f;
}

// 16 barriers and 64 registers.
extern "C" __global__ void __maxnreg__(64) b16_r064(const float* in, float* out) {
    BARRIER(15);
    live<88>(in, out);
}

// 6 barriers, 104 registers (the register "hardware check" range) and 4096 bytes.
extern "C" __global__ void __maxnreg__(104) b06_r104_s04k(const float* in, float* out) {
    __shared__ float buf[1024];
    smem_body<1024>(in, out, buf);
    BARRIER(5);
    live<128>(in, out + 65536);
}

// 6 barriers and 16384 bytes.
extern "C" __global__ void b06_s16k(const float* in, float* out) {
    __shared__ float buf[4096];
    smem_body<4096>(in, out, buf);
    BARRIER(5);
    out[threadIdx.x] += 1.0f;
}

// 4 barriers and 40000 bytes.
extern "C" __global__ void b04_s40k(const float* in, float* out) {
    __shared__ float buf[10000];
    smem_body<10000>(in, out, buf);
    BARRIER(3);
    out[threadIdx.x] += 1.0f;
}

// ---- Launch bounds (register-hungry body: ptxas fits the registers to the bounds) ----

// .maxntid 256 + .minnctapersm 4: at most 64 registers.
extern "C" __global__ void __launch_bounds__(256, 4) lb256x4(const float* in, float* out) {
    live<96>(in, out);
}

// .maxntid 128: registers unconstrained by the bound.
extern "C" __global__ void __launch_bounds__(128) lb128(const float* in, float* out) {
    live<160>(in, out);
}

// .maxntid 96 (not a multiple of 64).
extern "C" __global__ void __launch_bounds__(96) lb096(const float* in, float* out) {
    live<48>(in, out);
}

// .maxntid 1000 (not a multiple of 32): the block-size search starts at 1000.
extern "C" __global__ void __launch_bounds__(1000) lb1000(const float* in, float* out) {
    live<80>(in, out);
}

// .maxntid 512 + .minnctapersm 2: at most 64 registers, 1 barrier, 4096 bytes.
extern "C" __global__ void __launch_bounds__(512, 2) lb512x2_s04k(const float* in, float* out) {
    __shared__ float buf[1024];
    smem_body<1024>(in, out, buf);
    live<96>(in, out + 65536);
}

// .maxntid 1024 + .minnctapersm 1: at most 64 registers.
extern "C" __global__ void __launch_bounds__(1024, 1) lb1024x1(const float* in, float* out) {
    live<120>(in, out);
}

// poly.cu — one register-hungry kernel, five launch contracts.
//
// Same body, five builds: ptxas picks very different register counts, spills and occupancy
// depending on what the launch bounds promise. `cargo launch report` shows all five per arch.
#include "poly.cuh"

// No bounds: ptxas optimises one thread (167 registers on sm_90) and records no block limit,
// so a 512-thread launch fails at run time.
extern "C" __global__ void poly_eval(const float* __restrict__ x, float* __restrict__ y, int n) {
    poly_eval_body(x, y, n);
}

// At most 256 threads per block: the cap is loose (255), ptxas spends 200 registers.
extern "C" __global__ void __launch_bounds__(256)
poly_eval_lb256(const float* __restrict__ x, float* __restrict__ y, int n) {
    poly_eval_body(x, y, n);
}

// 1024 threads must fit: 65,536 / 1024 = 64 registers per thread, the rest spills.
extern "C" __global__ void __launch_bounds__(1024)
poly_eval_lb1024(const float* __restrict__ x, float* __restrict__ y, int n) {
    poly_eval_body(x, y, n);
}

// 4 blocks of 256 must fit: also 1024 threads, also 64 registers.
extern "C" __global__ void __launch_bounds__(256, 4)
poly_eval_lb256x4(const float* __restrict__ x, float* __restrict__ y, int n) {
    poly_eval_body(x, y, n);
}

// 2 blocks of 1024 must fit: 2048 threads, 32 registers, full occupancy, most spills.
extern "C" __global__ void __launch_bounds__(1024, 2)
poly_eval_lb1024x2(const float* __restrict__ x, float* __restrict__ y, int n) {
    poly_eval_body(x, y, n);
}

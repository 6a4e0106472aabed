// poly.cuh — the body shared by the five poly_eval variants in poly.cu.
//
// POLY_TERMS partial sums stay live at once through the fully unrolled loops, which makes the
// register pressure a knob: at 128 terms the kernel wants ~167 registers per thread on sm_90.
#pragma once

#ifndef POLY_TERMS
#define POLY_TERMS 128
#endif

__device__ __forceinline__ void poly_eval_body(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float acc[POLY_TERMS];
#pragma unroll
    for (int k = 0; k < POLY_TERMS; ++k) acc[k] = v * (k + 1);
#pragma unroll
    for (int it = 0; it < 8; ++it)
#pragma unroll
        for (int k = 0; k < POLY_TERMS; ++k) acc[k] = fmaf(acc[k], v, acc[(k + 7) & (POLY_TERMS - 1)]);
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < POLY_TERMS; ++k) s += acc[k];
    y[i] = s;
}

#!/usr/bin/env python3
"""Writes the benchmark crate: N kernel files (one kernel each) x 3 arches (sm_80, sm_90, sm_100).

Every kernel includes include/common.cuh; kernel i also includes include/group_{i % 3}.cuh, so a
group header is shared by a third of the kernels. Path dependencies point at this repository.

    python3 bench/gen_crate.py DEST [--kernels 24] [--repo PATH]
"""
import argparse
import os
import pathlib

CARGO_TOML = """[package]
name = "{name}"
version = "0.1.0"
edition = "2021"
publish = false

[package.metadata.launch]
arch = ["sm_80", "sm_90", "sm_100"]
include = ["include"]
defines = {{ UNROLL = 16 }}

[dependencies]
launch = {{ path = "{repo}/launch" }}

[build-dependencies]
launch-build = {{ path = "{repo}/launch-build" }}
"""

MAIN_RS = """launch::include_kernels!();

fn main() {
    for k in KERNELS {
        println!("{} {}", k.name, k.block_size());
    }
}
"""

COMMON = """#pragma once
// Shared by every kernel of the benchmark crate.
template <int N>
__device__ __forceinline__ float horner(float x, const float (&c)[N]) {
    float r = c[N - 1];
#pragma unroll
    for (int i = N - 2; i >= 0; --i) r = fmaf(r, x, c[i]);
    return r;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
"""

GROUP = """#pragma once
// Shared by the kernels i with i % 3 == {g}.
__device__ __forceinline__ float group_mix_{g}(float a, float b) {{
    return {expr};
}}
"""

GROUP_EXPR = ["__sinf(a) * b + __cosf(b)", "__expf(-a * a) + b", "rsqrtf(a * a + 1.0f) * b"]

KERNEL = """#include <common.cuh>
#include <group_{g}.cuh>

// Benchmark kernel {i}: a register-heavy tile (unrolled polynomial + shared-memory reduction).
{launch}extern "C" __global__ void bench_{i}(const float* __restrict__ x, float* __restrict__ y, int n) {{
    __shared__ float partial[32];
    const float c[{terms}] = {{ {coeffs} }};
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
    float acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {{
        int j = base + u;
        float v = j < n ? x[j] : 0.0f;
        acc[u] = group_mix_{g}(horner(v, c), v * {scale}f);
    }}
    float s = 0.0f;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) s += acc[u] * acc[(u + {i}) % UNROLL];
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {{
        float t = threadIdx.x < (blockDim.x >> 5) ? partial[threadIdx.x] : 0.0f;
        t = warp_sum(t);
        if (threadIdx.x == 0) y[blockIdx.x] = t;
    }}
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {{
        int j = base + u;
        if (j < n) y[n + j] = acc[u];
    }}
}}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dest")
    ap.add_argument("--kernels", type=int, default=24)
    ap.add_argument("--repo", default=str(pathlib.Path(__file__).resolve().parent.parent))
    ap.add_argument("--name", default="bench-kernels")
    a = ap.parse_args()
    d = pathlib.Path(a.dest)
    for sub in ["kernels", "include", "src"]:
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "Cargo.toml").write_text(CARGO_TOML.format(name=a.name, repo=a.repo))
    (d / "build.rs").write_text("fn main() { launch_build::build() }\n")
    (d / "src/main.rs").write_text(MAIN_RS)
    (d / "include/common.cuh").write_text(COMMON)
    for g in range(3):
        (d / f"include/group_{g}.cuh").write_text(GROUP.format(g=g, expr=GROUP_EXPR[g]))
    for i in range(a.kernels):
        terms = 8 + (i % 5) * 2
        coeffs = ", ".join(f"{(k + 1) * 0.5 + i * 0.01:.3f}f" for k in range(terms))
        launch = "// @launch(256)\n" if i % 2 == 0 else ""
        (d / f"kernels/k{i:02}.cu").write_text(
            KERNEL.format(i=i, g=i % 3, terms=terms, coeffs=coeffs, scale=f"{1.0 + i / 10:.2f}", launch=launch)
        )


if __name__ == "__main__":
    main()

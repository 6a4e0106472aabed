#!/usr/bin/env python3
"""Writes fixtures/ptx/axpb135.cuda-13.5.ptx: our own one-line kernel compiled to PTX (ISA 9.5) by
NVIDIA's NVRTC 13.5, for the GPU test that checks a CUDA 13.0 driver refuses it exactly as
launch::compat predicts (tests/gpu/toolchains.rs). NVRTC 13.5 is not a pinned toolchain, so the
PTX is kept in the repository rather than made on every build.

    python3 -m pip download --no-deps nvidia-cuda-nvrtc==13.5.37 -d /tmp/nv135
    python3 -m zipfile -e /tmp/nv135/nvidia_cuda_nvrtc-13.5.37-*.whl /tmp/nv135/x
    python3 tools/gpu/make_ptx_13_5.py /tmp/nv135/x > fixtures/ptx/axpb135.cuda-13.5.ptx
"""
import ctypes
import glob
import sys

SOURCE = (b'extern "C" __global__ void axpb135(const float* x, float* y, float a, float b, int n) '
          b'{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = fmaf(a, x[i], b); }')


def main(root):
    lib = root + "/nvidia/cu13/lib/"
    # NVRTC 13's wheel does not find its builtins library by itself: load it first.
    for builtins in glob.glob(lib + "libnvrtc-builtins.so*"):
        ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
    nvrtc = ctypes.CDLL(lib + "libnvrtc.so.13")
    prog = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), SOURCE, b"axpb135.cu", 0, None, None):
        sys.exit("nvrtcCreateProgram failed")
    opts = (ctypes.c_char_p * 1)(b"-arch=compute_90")
    if nvrtc.nvrtcCompileProgram(prog, 1, opts):
        sys.exit("nvrtcCompileProgram failed")
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(prog, ptx)
    sys.stdout.write(ptx.value.decode())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

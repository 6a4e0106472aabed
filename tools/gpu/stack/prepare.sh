#!/bin/sh
# Compiles fixtures/crates/recursive_stack/kernels/stack.cu with each pinned toolchain's NVRTC
# (compute_90) and ptxas (sm_90, -v) into .device-carry/stack/: the cubins the H200 loads
# (device.py: python3 .device-carry/stack/device.py there) and ptxas's logs.
# Run from the repository root after `cargo launch setup --toolchain 12.9 --toolchain 13.0 --toolchain 13.5`.
set -eu
root=${XDG_CACHE_HOME:-$HOME/.cache}/cargo-launch/toolchain
out=.device-carry/stack
mkdir -p "$out"
cp tools/gpu/stack/device.py "$out/"
for t in "$root"/cuda-*; do
  v=${t##*/cuda-}
  nvrtc=$(find "$t" -name 'libnvrtc.so.1[0-9]' | head -1)
  ptxas=$(find "$t" -path '*bin/ptxas' | head -1)
  LD_LIBRARY_PATH=$(dirname "$nvrtc") python3 tools/gpu/stack/nvrtc.py "$nvrtc" fixtures/crates/recursive_stack/kernels/stack.cu "$out/stack-$v.ptx"
  "$ptxas" -v -arch=sm_90 "$out/stack-$v.ptx" -o "$out/stack-$v.cubin" 2>"$out/ptxas-$v.log"
done
ls -l "$out"

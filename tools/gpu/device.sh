#!/bin/sh
# Runs on the GPU machine, from the repository root, after tools/gpu/build.sh copied the binaries
# (the `gpu` test of launch-tests and the template's program) into .device-carry/. Writes the logs
# under $OUT (or ./gpu-out).
set -u
out=${OUT:-gpu-out}
mkdir -p "$out"
{
  date -u '+date: %Y-%m-%d %H:%M:%S UTC'
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader
  uname -srm
  ldconfig -p | grep -E 'libcuda.so|libnvrtc' || true
} 2>&1 | tee "$out/device.txt"
# JIT times without the driver's on-disk cache (a cached JIT is a file read).
export CUDA_CACHE_DISABLE=1
echo '$ LAUNCH_TEST_REQUIRE_GPU=1 CUDA_CACHE_DISABLE=1 .device-carry/gpu --test-threads=1 --nocapture' | tee "$out/gpu-tests.log"
LAUNCH_TEST_REQUIRE_GPU=1 .device-carry/gpu --test-threads=1 --nocapture 2>&1 | tee -a "$out/gpu-tests.log"
for i in 1 2; do
  echo "\$ .device-carry/launch-template   # run $i" | tee "$out/template-$i.log"
  .device-carry/launch-template 2>&1 | tee -a "$out/template-$i.log"
done

#!/bin/sh
# Runs on the GPU machine, from the repository root, after tools/gpu/build.sh copied the binaries
# (the `gpu` test of launch-tests and the template's program) into .device-carry/. Writes the logs
# under $OUT (or ./gpu-out).
set -u
out=${OUT:-gpu-out}
mkdir -p "$out"
{
  sh tools/gpu/describe.sh
  ldconfig -p | grep -E 'libcuda.so|libnvrtc' || true
} 2>&1 | tee "$out/device.txt"
# JIT times without the driver's on-disk cache (a cached JIT is a file read).
export CUDA_CACHE_DISABLE=1
export LAUNCH_EXPLORE_JSON=.device-carry/explore.json
echo '$ LAUNCH_TEST_REQUIRE_GPU=1 CUDA_CACHE_DISABLE=1 LAUNCH_EXPLORE_JSON=.device-carry/explore.json .device-carry/gpu --test-threads=1 --nocapture' | tee "$out/gpu-tests.log"
LAUNCH_TEST_REQUIRE_GPU=1 .device-carry/gpu --test-threads=1 --nocapture 2>&1 | tee -a "$out/gpu-tests.log"
# The tuner's cache starts empty: run 1 tunes (and times every candidate again, separately), run 2
# takes the remembered winner without timing.
export LAUNCH_TUNE_CACHE_DIR="${TMPDIR:-/tmp}/launch-tune-$$"
rm -rf "$LAUNCH_TUNE_CACHE_DIR"
for i in 1 2; do
  echo "\$ LAUNCH_TUNE_CACHE_DIR=<empty before run 1> .device-carry/launch-template   # run $i" | tee "$out/template-$i.log"
  t0=$(date +%s%N)
  .device-carry/launch-template 2>&1 | tee -a "$out/template-$i.log"
  echo "wall: $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$out/template-$i.log"
done
cp -r "$LAUNCH_TUNE_CACHE_DIR" "$out/tune-cache" 2>/dev/null || true
# The host file's launcher, called from Rust, with nothing from the machine's CUDA install on the
# search paths (the CUDA runtime is linked in statically; only the driver is needed).
{
  echo '$ ldd .device-carry/host-launcher'
  ldd .device-carry/host-launcher
  echo '$ env -i PATH=/usr/bin:/bin .device-carry/host-launcher'
  env -i PATH=/usr/bin:/bin .device-carry/host-launcher
  echo "exit=$?"
} 2>&1 | tee "$out/host-launcher.log"
# Separable compilation (issue 32, class 11): the launchers of two -rdc=true host files, linked by
# nvcc's device link, and every kernel's record against the driver's attributes.
{
  echo '$ env -i PATH=/usr/bin:/bin .device-carry/host-rdc'
  env -i PATH=/usr/bin:/bin .device-carry/host-rdc
  echo "exit=$?"
} 2>&1 | tee "$out/host-rdc.log"

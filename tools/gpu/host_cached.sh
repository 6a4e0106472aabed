#!/bin/sh
# Issue 25: the `host` fixtures' programs built from cached objects, for the GPU machine.
# Builds fixtures/crates/host_launcher (saxpy, a host file + an NVRTC file) and
# fixtures/crates/host_flags (a __device__ lambda, --default-stream per-thread, -Xcompiler) twice,
# each time in an empty target folder, with one kernel cache: the first build compiles, the second
# takes every host object from the cache (its build-stats.json says `"from": "cache"` and 0 jobs
# compiled). The second build's programs and statistics go into .device-carry/host-cached/ with
# tools/gpu/host_cached_device.sh, which runs them there:
#   sh tools/gpu/host_cached.sh
#   device run, carry [".device-carry"], command: sh .device-carry/host-cached/run.sh
set -eu
out=.device-carry/host-cached
rm -rf "$out" target/host-cached
mkdir -p "$out"
cache=$(mktemp -d)
# The kernel cache starts empty; the toolchain is the installed 13.0 one (LAUNCH_CACHE_DIR would
# otherwise be searched for it).
toolchain=${LAUNCH_TOOLCHAIN:-$HOME/.cache/cargo-launch/toolchain/cuda-13.0.88}
for fixture in host_launcher host_flags; do
  bin=$(echo "$fixture" | tr _ -)
  cp Cargo.lock "fixtures/crates/$fixture/Cargo.lock"
  for pass in compile cached; do
    rm -rf "target/host-cached/$fixture"
    # Both for sm_80 and sm_90 (the H200's), whatever the fixture lists.
    LAUNCH_ARCH=sm_80,sm_90 LAUNCH_CACHE_DIR="$cache" LAUNCH_TOOLCHAIN="$toolchain" CARGO_TARGET_DIR="target/host-cached/$fixture" \
      cargo build --release --manifest-path "fixtures/crates/$fixture/Cargo.toml"
    stats=$(ls target/host-cached/"$fixture"/release/build/fixture-"$bin"-*/out/launch/build-stats.json)
    cp "$stats" "$out/$fixture.$pass.build-stats.json"
  done
  rm "fixtures/crates/$fixture/Cargo.lock"
  cp "target/host-cached/$fixture/release/$bin" "$out/$bin"
done
rm -rf "$cache"
cp tools/gpu/host_cached_device.sh "$out/run.sh"
ls -l "$out"

#!/bin/sh
# Issue 20: a downstream program built from a packaged crate's prebuilt kernels, for the GPU machine.
#
# 1. fixtures/crates/prebuilt_kernels (two kernels, sm_80 + sm_90, a tune grid) gets its kernels
#    prebuilt (`cargo launch prebuild`, the pinned 12.9 toolchain) and verified
#    (`prebuild --verify`), then `cargo package` packs it and tar unpacks it, as a registry
#    dependency is unpacked;
# 2. fixtures/crates/prebuilt_downstream, depending on the unpacked crate, is built (--release) with
#    no python on PATH, an empty cargo-launch cache, LAUNCH_NO_SYSTEM_TOOLCHAIN=1 and cargo offline;
#    its build-stats.json must say prebuilt, 0 compiled;
# 3. the program, the kernel crate's build-stats and prebuilt.json go to .device-carry/prebuilt/,
#    with tools/gpu/prebuilt_device.sh, which runs the program there (`--gpu`: both kernels on GPU
#    0, every result compared with the CPU):
#   sh tools/gpu/prebuilt.sh
#   device run, carry [".device-carry"], command: sh .device-carry/prebuilt/run.sh
set -eu
repo=$(pwd)
out=.device-carry/prebuilt
work=$(mktemp -d)
rm -rf "$out"
mkdir -p "$out" "$work/kernels" "$work/unpacked" "$work/bin" "$work/cache"
cargo build --release -p cargo-launch
cp -r fixtures/crates/prebuilt_kernels/. "$work/kernels"
sed -i "s|{{ROOT}}|$repo|g" "$work/kernels/Cargo.toml"
target="$work/target"
(cd "$work/kernels" && CARGO_TARGET_DIR="$target" "$repo/target/release/cargo-launch" launch prebuild \
  && CARGO_TARGET_DIR="$target" "$repo/target/release/cargo-launch" launch prebuild --verify \
  && CARGO_TARGET_DIR="$target" cargo package --no-verify --offline --allow-dirty --exclude-lockfile)
tar xzf "$target/package/fixture-prebuilt-kernels-0.1.0.crate" -C "$work/unpacked"
kernels="$work/unpacked/fixture-prebuilt-kernels-0.1.0"
cp -r fixtures/crates/prebuilt_downstream "$work/down"
sed -i "s|{{ROOT}}|$repo|g; s|{{KERNELS}}|$kernels|g; s|{{KERNELS_NAME}}|fixture-prebuilt-kernels|g" "$work/down/Cargo.toml"
# PATH: links to every program of /usr/bin and /bin but python's, then cargo's folder.
bare_bin="$work/bin"
. "$repo/tools/bare_path.sh"
start=$(date +%s.%N)
env -u LAUNCH_TOOLCHAIN -u LAUNCH_PYTHON PATH="$bare_path" LAUNCH_CACHE_DIR="$work/cache" \
  XDG_CACHE_HOME="$work/cache" LAUNCH_NO_SYSTEM_TOOLCHAIN=1 CARGO_NET_OFFLINE=true CARGO_TARGET_DIR="$work/down-target" \
  cargo build --release --manifest-path "$work/down/Cargo.toml"
end=$(date +%s.%N)
echo "downstream build (bare environment, cold target): $(echo "$end - $start" | bc) s" | tee "$out/build.txt"
cp "$work"/down-target/release/build/fixture-prebuilt-kernels-*/out/launch/build-stats.json "$out/kernels.build-stats.json"
grep -q '"prebuilt": {' "$out/kernels.build-stats.json"
cp "$kernels/launch-prebuilt/prebuilt.json" "$out/prebuilt.json"
cp "$work/down-target/release/fixture-prebuilt-downstream" "$out/prebuilt-downstream"
"$out/prebuilt-downstream" --dump "$out/embedded"
cp tools/gpu/prebuilt_device.sh "$out/run.sh"
rm -rf "$work"
ls -l "$out"

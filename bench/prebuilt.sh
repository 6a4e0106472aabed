#!/bin/sh
# Issue 20: a downstream build with prebuilt kernels against the same build from source, back to
# back, on the template (poly_eval: 5 kernels, sm_90 + sm_100, 10 tune variants).
#
#   sh bench/prebuilt.sh [runs]        (default 3 runs of each; prints one line per run)
#
# A copy of template/ gets its kernels prebuilt (`cargo launch prebuild`, pinned 12.9 toolchain).
# Then, `runs` times each, alternating: the template's crate is cleaned (`cargo clean -p`; its
# dependencies stay built) and built again
#   prebuilt:    no python on PATH, an empty cargo-launch cache, LAUNCH_NO_SYSTEM_TOOLCHAIN=1, offline
#   from source: LAUNCH_PREBUILT=ignore, the pinned toolchain, LAUNCH_NO_CACHE=1 (every kernel compiled)
# and the wall time of `cargo build` printed, with build-stats.json's wall_ms (the compile step: keys,
# lookups, NVRTC and ptxas; not the tune variants' ptxas runs), jobs compiled and whether it was prebuilt.
set -eu
runs=${1:-3}
repo=$(pwd)
work=$(mktemp -d)
mkdir -p "$work/bin" "$work/cache"
cargo build --release -p cargo-launch >/dev/null 2>&1
cp -r template "$work/crate"
rm -f "$work/crate/Cargo.lock"
sed -i "s|path = \"../launch\"|path = \"$repo/launch\"|; s|path = \"../launch-build\"|path = \"$repo/launch-build\"|" "$work/crate/Cargo.toml"
export CARGO_TARGET_DIR="$work/target"
(cd "$work/crate" && "$repo/target/release/cargo-launch" launch prebuild >/dev/null 2>&1)
# PATH: links to every program of /usr/bin and /bin but python's, then cargo's folder.
bare_bin="$work/bin"
. "$repo/tools/bare_path.sh"
toolchain=$HOME/.cache/cargo-launch/toolchain/cuda-12.9.86
# Dependencies built once, so each run below times the kernel crate alone.
(cd "$work/crate" && cargo build >/dev/null 2>&1)
one() {
  (cd "$work/crate" && cargo clean -p launch-template >/dev/null 2>&1)
  start=$(date +%s.%N)
  (cd "$work/crate" && "$@" cargo build >/dev/null 2>&1)
  end=$(date +%s.%N)
  f=$(ls "$CARGO_TARGET_DIR"/debug/build/launch-template-*/out/launch/build-stats.json)
  python_free=$(grep -c '"prebuilt": {' "$f" || true)
  printf '%s %.2f s (build-stats wall_ms %s, jobs compiled %s, prebuilt %s)\n' "$label" "$(echo "$end - $start" | bc)" \
    "$(grep '"wall_ms"' "$f" | tr -dc '0-9.')" "$(grep '"compiled":' "$f" | head -1 | tr -dc '0-9')" "$python_free"
}
for i in $(seq "$runs"); do
  label="run $i prebuilt:   " one env -u LAUNCH_TOOLCHAIN PATH="$bare_path" LAUNCH_CACHE_DIR="$work/cache" \
    XDG_CACHE_HOME="$work/cache" LAUNCH_NO_SYSTEM_TOOLCHAIN=1 CARGO_NET_OFFLINE=true
  label="run $i from source:" one env LAUNCH_PREBUILT=ignore LAUNCH_TOOLCHAIN="$toolchain" LAUNCH_NO_CACHE=1
done
du -sb "$work/crate/launch-prebuilt" | awk '{print "launch-prebuilt/: " $1 " bytes"}'
rm -rf "$work"

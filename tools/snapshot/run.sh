#!/usr/bin/env bash
# Every user-visible output of cargo-launch on a set of crates, written under one folder, so that a
# refactor can be shown to change nothing: run it before and after, then `diff -r BEFORE AFTER`.
#
#   tools/snapshot/run.sh BINARY OUT [CANDLE_SRC]
#
# BINARY is a built cargo-launch; OUT a folder to fill (the crates are copied under OUT/work, so
# paths inside the outputs are the same from run to run when OUT is). The crates: the template,
# the fixture crates listed below, and, when CANDLE_SRC names the `src/` folder of the published
# candle-kernels 0.11.1 (see tests/candle_kernels.rs), that real kernel folder with the config the
# candle test uses. Outputs: report (text, --summary, --detailed, json), check (text, json, sarif),
# explore (text, json) of the first kernel, the manifest and the generated kernels.rs; the exit
# code of each command is recorded next to its output. Timings (build-stats.json) are left out.
set -uo pipefail
bin=$(realpath "$1"); out=$2; candle=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/work" "$out/target"
out=$(realpath "$out")
crates=(contracts multi naming real_config tune_grid headers host_launcher baseline_keys ci)
unset LAUNCH_TOOLCHAIN LAUNCH_CACHE_DIR LAUNCH_NO_CACHE LAUNCH_ARCH DOCS_RS RUSTFLAGS CARGO_MAKEFLAGS MAKEFLAGS
export CARGO_TARGET_DIR=$out/target CARGO_TERM_COLOR=never

prepare() { # name source-folder
  rm -rf "$out/work/$1"; cp -r "$2" "$out/work/$1"
  # Fixtures name this checkout as {{ROOT}}; the template and some fixtures by relative paths.
  sed -i -E "s#\{\{ROOT\}\}#$root#g; s#path = \"(\.\./)+(launch|launch-build)\"#path = \"$root/\2\"#g" "$out/work/$1/Cargo.toml"
}
capture() { # name
  local m=$out/work/$1/Cargo.toml d=$out/$1; mkdir -p "$d"
  run() { local f=$1; shift; "$bin" launch "$@" --manifest-path "$m" >"$d/$f" 2>"$d/$f.stderr"; echo $? >"$d/$f.code"; }
  run report.txt report
  run report-summary.txt report --summary
  run report-detailed.txt report --detailed
  run report.json report --format json
  run check.txt check
  run check.json check --format json
  run check.sarif check --format sarif
  local first
  first=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); k=d.get("records") or []; print(k[0]["qualified"] if k else "")' "$d/report.json" 2>/dev/null)
  if [ -n "$first" ]; then
    run explore.txt explore "$first"
    run explore.json explore "$first" --format json
  fi
  local launch
  launch=$(ls -td "$CARGO_TARGET_DIR"/debug/build/*/out/launch 2>/dev/null | while read -r l; do
    grep -q "\"package\": *\"$(grep -m1 '^name' "$m" | cut -d'"' -f2)\"" "$l/manifest.json" 2>/dev/null && echo "$l" && break; done)
  if [ -n "$launch" ]; then cp "$launch/manifest.json" "$launch/kernels.rs" "$d/"; fi
  # Paths of this run's temporary folders are not outputs.
  sed -i "s#$out#OUT#g" "$d"/* 2>/dev/null
}
prepare template "$root/template"; capture template
for c in "${crates[@]}"; do prepare "$c" "$root/fixtures/crates/$c"; capture "$c"; done
if [ -n "$candle" ]; then
  rm -rf "$out/work/candle"; mkdir -p "$out/work/candle"; cp -r "$candle" "$out/work/candle/src"
  chmod -R u+w "$out/work/candle"
  cat >"$out/work/candle/Cargo.toml" <<TOML
[package]
name = "snapshot-candle"
version = "0.1.0"
edition = "2021"
publish = false

[lib]
path = "lib.rs"

[package.metadata.launch]
arch = ["sm_80", "sm_90"]
kernels = "src"
exclude = ["moe", "mmq_gguf", "mmvq_gguf.cu"]
flags = ["--expt-relaxed-constexpr", "-std=c++17"]

[dependencies]
launch = { path = "$root/launch" }

[build-dependencies]
launch-build = { path = "$root/launch-build" }

[workspace]
TOML
  printf 'fn main() {\n    launch_build::build()\n}\n' >"$out/work/candle/build.rs"
  printf '#![allow(missing_docs)]\n\nlaunch::include_kernels!();\n' >"$out/work/candle/lib.rs"
  capture candle
fi

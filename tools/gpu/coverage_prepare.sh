#!/usr/bin/env bash
# Builds the fixtures `coverage_device.py` loads on a GPU and writes, per build, its embedded
# images (OUT_DIR/launch: manifest.json, cubins, PTX) and `cargo launch coverage --gpu H200
# --driver 13.0 --format json` (the prediction for the H200's driver 580, CUDA 13.0) into DEST,
# plus the PTX of ISA 9.5 (fixtures/ptx/axpb135.cuda-13.5.ptx) that a CUDA 13.0 driver refuses.
#
#   tools/gpu/coverage_prepare.sh DEST     (DEST: a folder the device call carries)
set -euo pipefail
dest=${1:?usage: coverage_prepare.sh DEST}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/target/debug/cargo-launch"
cargo build -q --manifest-path "$root/Cargo.toml" -p cargo-launch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$work/target}"
rm -rf "$dest" && mkdir -p "$dest"
for name in coverage gated_gpu; do
    cp -a "$root/fixtures/crates/$name" "$work/$name"
    sed -i "s#{{ROOT}}#$root#; s#\.\./\.\./\.\./#$root/#" "$work/$name/Cargo.toml"
    "$bin" launch coverage --manifest-path "$work/$name/Cargo.toml" --gpu H200 --driver 13.0 --format json \
        > "$dest/$name.predicted.json"
    package=$(sed -n 's/^name = "\(.*\)"/\1/p' "$work/$name/Cargo.toml" | head -1)
    out=$(ls -td "$CARGO_TARGET_DIR"/debug/build/"$package"-????????????????/out/launch | head -1)
    mkdir -p "$dest/$name"
    # Only what the manifest names, flattened (the device's $OUT keeps two folder levels).
    python3 - "$out" "$dest/$name" <<'PY'
import json, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
m = json.load(open(f"{src}/manifest.json"))
shutil.copy(f"{src}/manifest.json", dst)
for mod in m["modules"]:
    for path in [mod["ptx"]] + [c["path"] for c in mod["cubins"]] + [p["path"] for p in mod.get("extra_ptx", [])]:
        if path:
            shutil.copy(f"{src}/{path}", f"{dst}/{path.replace('/', '__')}")
PY
done
cp "$root/fixtures/ptx/axpb135.cuda-13.5.ptx" "$dest/"
ls -la "$dest" "$dest"/*/

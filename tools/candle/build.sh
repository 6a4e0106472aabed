#!/bin/bash
# Builds candle-core 0.11.1's own test binaries (release, stripped, `--features cuda`) three ways
# and packs them for tools/candle/device.sh into .device-carry/candle/:
#   i  candle's own build: cudaforge, nvcc 13.0 from the pinned toolchain, CUDA_COMPUTE_CAP=90
#   a  cargo-launch's recipe (tools/candle/adapt.py), candle-core unchanged: it loads our PTX
#   b  the recipe with `--cubins` and tools/candle/core_cubins.py: candle-core loads our cubins
# No GPU here: the link needs CUDA's libraries, which come from NVIDIA's PyPI wheels (cuBLAS,
# cuRAND; NVRTC and the runtime from the pinned toolchain) and, for the driver, a stub libcuda.so
# generated from the functions cudarc declares. Nothing of NVIDIA's or candle's is committed.
#   tools/candle/build.sh WORK [--pack-only]      (VARIANTS="a b" builds only those again)
set -euo pipefail
work=${1:?usage: tools/candle/build.sh WORK [--pack-only]}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
tc=${XDG_CACHE_HOME:-$HOME/.cache}/cargo-launch/toolchain/cuda-13.0.88/nvidia/cu13
[ -x "$tc/bin/nvcc" ] || { echo "no CUDA 13.0 toolchain: cargo launch setup --toolchain 13.0" >&2; exit 1; }
# The packages, from cargo's registry folder.
mkdir -p "$work/fetch/src" && echo 'fn main() {}' > "$work/fetch/src/main.rs"
printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ncandle-core = { version = "=0.11.1", features = ["cuda"] }\n[workspace]\n' > "$work/fetch/Cargo.toml"
meta=$(cargo metadata --format-version 1 --manifest-path "$work/fetch/Cargo.toml")
pkg() { python3 -c 'import json,sys,os; m=json.load(sys.stdin); print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"]==sys.argv[1]))' "$1" <<<"$meta"; }
core=$(pkg candle-core); kernels=$(pkg candle-kernels); cudarc=$(pkg cudarc)
if [ "${2:-}" != "--pack-only" ]; then
  # The link folder: CUDA_PATH for cudarc's build script.
  lib=$work/cuda/lib64 && mkdir -p "$lib" "$work/wheels"
  python3 -m pip download -q --no-deps -d "$work/wheels" nvidia-cublas==13.0.2.14 nvidia-curand==10.4.0.35
  for w in "$work"/wheels/*.whl; do python3 -m zipfile -e "$w" "$work/wheels/x"; done
  grep -oE "fn cu[A-Za-z0-9_]+\(" "$cudarc/src/driver/sys/mod.rs" | sort -u | sed -E 's/fn (cu[A-Za-z0-9_]+)\(/void \1(void) {}/' > "$work/cuda/stub.c"
  gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$lib/libcuda.so" "$work/cuda/stub.c"
  for l in libnvrtc.so.13 libcudart.so.13; do ln -sf "$tc/lib/$l" "$lib/$l"; ln -sf "$tc/lib/$l" "$lib/${l%.*}"; done
  for l in libcublas.so.13 libcublasLt.so.13 libcurand.so.10; do ln -sf "$work/wheels/x/nvidia/cu13/lib/$l" "$lib/$l"; ln -sf "$lib/$l" "$lib/${l%.*}"; done
  export PATH=$tc/bin:$PATH CUDA_PATH=$work/cuda LD_LIBRARY_PATH=$lib CARGO_PROFILE_RELEASE_STRIP=symbols CARGO_INCREMENTAL=0
  python3 "$repo/tools/candle/adapt.py" "$kernels" "$work/candle-kernels" --launch-build "$repo/launch-build"
  python3 "$repo/tools/candle/adapt.py" "$kernels" "$work/candle-kernels-cubins" --launch-build "$repo/launch-build" --cubins
  for v in ${VARIANTS:-i a b}; do
    rm -rf "$work/$v" && cp -r "$core" "$work/$v" && chmod -R u+w "$work/$v"
    printf '\n[workspace]\n' >> "$work/$v/Cargo.toml"
    case $v in
      i) (cd "$work/i" && CUDA_COMPUTE_CAP=90 CARGO_TARGET_DIR=$work/target-i cargo test --release --features cuda --no-run 2>&1 | tee "$work/build-i.log") ;;
      a|b)
        [ "$v" = a ] && k=$work/candle-kernels || { k=$work/candle-kernels-cubins; python3 "$repo/tools/candle/core_cubins.py" "$work/b"; }
        printf '\n[patch.crates-io]\ncandle-kernels = { path = "%s" }\n' "$k" >> "$work/$v/Cargo.toml"
        # candle-core's package ships its Cargo.lock, with a cc older than launch-build needs:
        # only cc moves; every other version stays as candle locked it.
        (cd "$work/$v" && cargo update -q -p cc)
        (cd "$work/$v" && CARGO_TARGET_DIR=$work/target-ii cargo test --release --features cuda --no-run 2>&1 | tee "$work/build-$v.log") ;;
    esac
  done
fi
# Pack: each build's test binaries by name (candle's cutile and metal tests build empty here).
carry=$repo/.device-carry/candle && rm -rf "$carry" && mkdir -p "$carry"
for v in i a b; do
  rm -rf "$work/bin-$v" && mkdir -p "$work/bin-$v"
  sed -nE -e 's/^ *Executable unittests src\/lib\.rs \((.*)\)$/candle_core_lib \1/p' \
    -e 's/^ *Executable tests\/([a-z_]+)\.rs \((.*)\)$/\1 \2/p' "$work/build-$v.log" |
    while read -r name path; do
      case "$name" in cutile_tests|metal_concurrent_tests) continue ;; esac
      cp "$path" "$work/bin-$v/$name"
    done
  tar -C "$work/bin-$v" -cf - . | xz -T1 --lzma2=preset=6,dict=768MiB > "$carry/$v.tar.xz"
done
mkdir -p "$work/data/tests" && cp "$core"/tests/*.{npy,npz,pt,pth} "$work/data/tests/"
tar -C "$work" -cf "$carry/data.tar" data
# The modules for load_times.py: candle's PTX (sm_90), our fallback PTX (sm_80) and sm_90 cubins.
m=$work/modules && rm -rf "$m" && mkdir -p "$m/i" "$m/a" "$m/b"
cp "$(ls -d "$work"/target-i/release/build/candle-kernels-*/out | head -1)"/*.ptx "$m/i/"
launch=$(dirname "$(ls -t "$work"/target-ii/release/build/candle-kernels-*/out/launch/manifest.json | head -1)")
for p in "$m"/i/*.ptx; do
  s=$(basename "$p" .ptx)
  cp "$launch"/ptx/src+"$s".cu.sm_80.ptx "$m/a/$s.ptx"
  cp "$launch"/cubin/src+"$s".cu.sm_90.cubin "$m/b/$s.cubin"
done
tar -C "$m" -cf - . | xz -T2 -6 > "$carry/modules.tar.xz"
ls -la "$carry"

#!/bin/sh
# Runs on the GPU machine, from the repository root, after tools/candle/build.sh put candle-core's
# test binaries of each build into .device-carry/candle/: (i) candle's own cudaforge build, (ii-a)
# cargo-launch's recipe with candle-core unchanged (PTX), (ii-b) the recipe with the cubins change.
# Writes device.txt, times.txt and the load times under $OUT (or ./candle-out), and every test
# binary's log in $OUT/logs.tar.gz (a call brings back at most 8 files).
#   sh tools/candle/device.sh [VARIANTS]   (default "i a b"; the load times run when b does)
# A binary still running near the call's 600 s limit would lose every log: the run stops starting
# binaries after DEADLINE_S (default 480) seconds and says which it left out.
set -u
variants=${1:-i a b}
deadline=$(( $(date +%s) + ${DEADLINE_S:-480} ))
out=${OUT:-candle-out}
carry=.device-carry/candle
work=${TMPDIR:-/tmp}/candle-$$
logs=$work/logs
mkdir -p "$out" "$work" "$logs"
sh tools/gpu/describe.sh 2>&1 | tee "$out/device.txt"
# The CUDA libraries candle-core links (cudarc's dynamic-linking): the machine's own, wherever its
# CUDA install or Python packages put them; the folders found are logged.
dirs=""
for lib in libcublas.so.13 libcublasLt.so.13 libcurand.so.10 libnvrtc.so.13 libcudart.so.13; do
  found=$(find /usr/local/cuda*/ /usr/lib/x86_64-linux-gnu $(python3 -c 'import site; print(" ".join(site.getsitepackages()))') \
    -name "$lib" 2>/dev/null | head -1)
  echo "$lib: ${found:-MISSING}" | tee -a "$out/device.txt"
  [ -n "$found" ] && dirs="$dirs:$(dirname "$found")"
done
export LD_LIBRARY_PATH="${dirs#:}"
tar -C "$work" -xf "$carry/data.tar"
for v in $variants; do
  mkdir -p "$work/$v" "$logs/$v"
  xz -dc "$carry/$v.tar.xz" | tar -C "$work/$v" -xf -
  # Each build JIT-compiles into its own, empty, driver cache (as a fresh machine would).
  export CUDA_CACHE_PATH="$work/nv-cache-$v"
  t0=$(date +%s%N)
  for bin in "$work/$v"/*; do
    name=$(basename "$bin")
    if [ "$(date +%s)" -ge "$deadline" ]; then echo "$v/$name: not run (deadline)" | tee -a "$out/times.txt"; continue; fi
    b0=$(date +%s%N)
    left=$(( deadline + 60 - $(date +%s) )); [ "$left" -gt 240 ] && left=240
    # cargo test runs test binaries in the package folder: the tests read tests/test.npy etc.
    (cd "$work/data" && timeout "$left" "$bin" --test-threads=4 > "$logs/$v/$name.log" 2>&1; echo "exit=$?" >> "$logs/$v/$name.log")
    echo "$v/$name: $(( ($(date +%s%N) - b0) / 1000000 )) ms" >> "$out/times.txt"
  done
  echo "$v: $(( ($(date +%s%N) - t0) / 1000000 )) ms for every test binary" | tee -a "$out/times.txt"
  # After each build, so that a later one cut off still leaves the earlier logs.
  tar -C "$logs" -czf "$out/logs.tar.gz" .
done
case " $variants " in *" b "*) ;; *) ls -la "$out"; exit 0 ;; esac
# First-use load time of each module, PTX JIT vs cubin, the JIT cache off.
mkdir -p "$work/modules"
xz -dc "$carry/modules.tar.xz" | tar -C "$work/modules" -xf -
CUDA_CACHE_DISABLE=1 python3 tools/candle/load_times.py "$work/modules" 3 > "$out/load-times.jsonl" 2> "$out/load-times.err"
ls -la "$out"

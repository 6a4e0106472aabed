#!/bin/sh
# Runs on the GPU machine, from the repository root, after tools/mistralrs/build.py copied the
# program (gzip-compressed) into .device-carry/: the machine's description, then the program with nothing from the
# machine's CUDA install on the library path (the library links the static runtime; the driver is
# the system's). Writes under $OUT (or ./gpu-out).
set -u
out=${OUT:-gpu-out}
mkdir -p "$out"
sh tools/gpu/describe.sh 2>&1 | tee "$out/device.txt"
bin="${TMPDIR:-/tmp}/mistralrs-quant-run"
gunzip -c .device-carry/mistralrs-quant-run.gz >"$bin" && chmod +x "$bin"
echo "\$ env -i PATH=/usr/bin:/bin $bin" | tee "$out/mistralrs-quant-run.log"
t0=$(date +%s%N)
env -i PATH=/usr/bin:/bin "$bin" >>"$out/mistralrs-quant-run.log" 2>&1
rc=$?
echo "exit: $rc, wall: $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$out/mistralrs-quant-run.log"
tail -20 "$out/mistralrs-quant-run.log"
exit $rc

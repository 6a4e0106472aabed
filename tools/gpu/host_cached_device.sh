#!/bin/sh
# Runs on the GPU machine (see tools/gpu/host_cached.sh): the host fixtures' programs, built from
# cached objects, with nothing from the machine's CUDA install on the search paths.
set -u
out=${OUT:-gpu-out}
here=$(dirname "$0")
mkdir -p "$out"
{
  date -u '+date: %Y-%m-%d %H:%M:%S UTC'
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  for p in host-launcher host-flags; do
    echo "\$ ldd $p"; ldd "$here/$p"
    echo "\$ env -i PATH=/usr/bin:/bin $p"; env -i PATH=/usr/bin:/bin "$here/$p"; echo "exit=$?"
  done
} 2>&1 | tee "$out/host-cached.log"
cp "$here"/*.build-stats.json "$out/" 2>/dev/null || true

#!/bin/sh
# Runs on the GPU machine (see tools/gpu/prebuilt.sh): the downstream program built from the
# packaged crate's prebuilt kernels, with nothing from the machine's CUDA install on its paths.
set -u
out=${OUT:-gpu-out}
here=$(dirname "$0")
mkdir -p "$out"
{
  date -u '+date: %Y-%m-%d %H:%M:%S UTC'
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  echo "\$ sha256sum of the embedded images (dumped on the build machine)"
  (cd "$here/embedded" && sha256sum *)
  echo "\$ env -i PATH=/usr/bin:/bin prebuilt-downstream --gpu"
  env -i PATH=/usr/bin:/bin "$here/prebuilt-downstream" --gpu
  echo "exit=$?"
} 2>&1 | tee "$out/prebuilt.log"
cp "$here"/*.json "$here"/build.txt "$out/" 2>/dev/null || true

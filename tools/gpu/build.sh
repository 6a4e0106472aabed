#!/bin/sh
# Builds what runs on the GPU machine and copies it into .device-carry/ (ignored by git):
#   gpu              the GPU tests (tests/gpu/main.rs, test `gpu` of launch-tests), release build
#   launch-template  the template's program (Section 5 table)
#   device.sh        the script that runs both there
# Run from the repository root: sh tools/gpu/build.sh
set -eu
cargo test -p launch-tests --release --test gpu --no-run
bin=$(cargo test -p launch-tests --release --test gpu --no-run --message-format=json 2>/dev/null |
  sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
cargo build --release --manifest-path template/Cargo.toml
mkdir -p .device-carry
cp "$bin" .device-carry/gpu
cp template/target/release/launch-template .device-carry/launch-template
cp tools/gpu/device.sh .device-carry/device.sh
ls -l .device-carry

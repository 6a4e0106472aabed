#!/bin/sh
# Builds what runs on the GPU machine and copies it into .device-carry/ (ignored by git):
#   gpu              the GPU tests (tests/gpu/main.rs, test `gpu` of launch-tests), release build
#   launch-template  the template's program (Section 5 table)
#   explore.json     `cargo launch explore poly_eval` over the template's tune grid (the build-time
#                    variants' contracts), which the GPU test explore_vs_driver compares with the driver
#   host-launcher    fixtures/crates/host_launcher's program: a `host` file (nvcc through cc, CUDA 13.0,
#                    static cudart) whose extern "C" launcher Rust calls
#   host-rdc         fixtures/crates/host_rdc's program: `host` files compiled with -rdc=true and
#                    device-linked; it calls every launcher and compares every kernel's record with
#                    the driver's attributes of the embedded (linked) cubin
#   device.sh        the script that runs them there
# Run from the repository root: sh tools/gpu/build.sh
set -eu
cargo test -p launch-tests --release --test gpu --no-run
bin=$(cargo test -p launch-tests --release --test gpu --no-run --message-format=json 2>/dev/null |
  sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
cargo build --release --manifest-path template/Cargo.toml
mkdir -p .device-carry
cp "$bin" .device-carry/gpu
cp template/target/release/launch-template .device-carry/launch-template
cp Cargo.lock fixtures/crates/host_launcher/Cargo.lock
CARGO_TARGET_DIR=target/host-launcher cargo build --release --manifest-path fixtures/crates/host_launcher/Cargo.toml
rm fixtures/crates/host_launcher/Cargo.lock
cp target/host-launcher/release/host-launcher .device-carry/host-launcher
cp Cargo.lock fixtures/crates/host_rdc/Cargo.lock
CARGO_TARGET_DIR=target/host-rdc cargo build --release --manifest-path fixtures/crates/host_rdc/Cargo.toml
rm fixtures/crates/host_rdc/Cargo.lock
cp target/host-rdc/release/host-rdc .device-carry/host-rdc
cp tools/gpu/device.sh .device-carry/device.sh
# The template's grid is threads = [256, 1024], max_regs = "cliffs"; these are its caps on sm_90 and
# sm_100 (explore matches records to variants by contract, so extra combinations do no harm).
cargo run -q -p cargo-launch -- launch explore poly_eval --manifest-path template/Cargo.toml \
  --arch sm_90,sm_100 --threads 256,1024 --max-regs 255,128,80,64,48,40,32 --format json >.device-carry/explore.json
ls -l .device-carry

//! `launch`'s integration-test binary: the occupancy calculator against NVIDIA's own. These tests
//! use only this crate, a C compiler and recorded data, never NVRTC or ptxas, so `cargo test -p
//! launch` builds on a machine without a CUDA toolchain. The end-to-end tests of the `cargo launch`
//! binary and the GPU tests live in the `launch-tests` crate (tests/).

/// The oracle's `cuda_occupancy.h`: where it is found, and what happens when it is not.
mod header;

/// Our occupancy calculator against NVIDIA's own `cuda_occupancy.h`, compiled with the C compiler.
mod occupancy_oracle;

/// Our calculator against the driver of a real H200 (recorded results in fixtures/h200/).
mod h200_driver;

//! Property and fuzz targets for launch-build's parsers, run by `cargo test` within a small time
//! budget (the harness, its variables and the long-run command: the `fuzz-harness` crate).
//! They are unit tests so that they reach the parsers through `crate::` paths, not the public API.

mod cache;
mod config;
mod manifest;
mod pattern;
mod ptx;
mod ptxas_log;
mod source;

use std::path::Path;

/// The package a failure's replay command names.
const PACKAGE: &str = env!("CARGO_PKG_NAME");

/// The corpus files under `dirs` of the workspace (the recorded ptxas logs and the fixture
/// crates in fixtures/, the template's kernels), which sits above this crate.
fn corpus(dirs: &[&str], exts: &[&str]) -> Vec<String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("launch-build/ has a parent");
    fuzz_harness::corpus(workspace, dirs, exts)
}

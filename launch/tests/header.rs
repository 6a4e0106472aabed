//! Where the oracle finds `cuda_occupancy.h`. It is NVIDIA's licensed header and is not copied
//! into this repository: it comes from a CUDA toolchain, the one `LAUNCH_TOOLCHAIN` names or else
//! the one `cargo launch setup` installed in the user cache (launch-build's own folders, through
//! its `tooling` module: a dev-dependency, which builds without any CUDA toolchain). Without one
//! the oracle tests print why and pass, so `cargo test -p launch` needs no CUDA toolchain;
//! `LAUNCH_TEST_REQUIRE_ORACLE=1` (set by .ci/run) makes that a failure.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

/// The header's folder, or `None` after printing why `test` skips.
pub fn include_dir(test: &str) -> Option<PathBuf> {
    let searched = candidates();
    if let Some(dir) = searched.iter().find(|d| d.join("cuda_occupancy.h").is_file()) {
        return Some(dir.clone());
    }
    let looked: Vec<String> = searched.iter().map(|d| format!("  {}", d.display())).collect();
    let why = format!(
        "cuda_occupancy.h is in none of these folders (`cargo launch setup` installs it):\n{}",
        if looked.is_empty() {
            "  (LAUNCH_CACHE_DIR, XDG_CACHE_HOME and HOME are unset)".to_string()
        } else {
            looked.join("\n")
        }
    );
    assert!(
        var("LAUNCH_TEST_REQUIRE_ORACLE").is_none_or(|v| v != "1"),
        "{test}: LAUNCH_TEST_REQUIRE_ORACLE=1, but {why}"
    );
    // Past the harness's capture, so a skip is visible in a plain `cargo test`.
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
    None
}

/// Include folders to look in, best first.
fn candidates() -> Vec<PathBuf> {
    let env = launch_engine::tooling::Env::cli();
    // An explicit toolchain is the only one looked at, as in the build; else the pinned install.
    let root = match var("LAUNCH_TOOLCHAIN") {
        Some(root) => Some(PathBuf::from(root)),
        None => launch_engine::tooling::toolchain::pinned_dir(&env),
    };
    root.into_iter()
        // The wheels' layout (what setup installs), then a CUDA toolkit's.
        .flat_map(|root| [root.join("nvidia/cuda_runtime/include"), root.join("include")])
        .collect()
}

fn var(name: &str) -> Option<OsString> {
    #[allow(clippy::disallowed_methods)] // test switches and the user's folders, not build configuration
    std::env::var_os(name)
}

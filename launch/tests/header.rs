//! Where the oracle finds `cuda_occupancy.h`. It is NVIDIA's licensed header and is not copied
//! into this repository: it comes from a CUDA toolchain, the one `LAUNCH_TOOLCHAIN` names or else
//! the one `cargo launch setup` installed in the user cache (the search launch-build's
//! `toolchain::discover` makes, reduced to this header, since `launch` cannot depend on
//! launch-build). Without one the oracle tests print why and pass, so `cargo test -p launch`
//! needs no CUDA toolchain; `LAUNCH_TEST_REQUIRE_ORACLE=1` (set by .ci/run) makes that a failure.

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
    // An explicit toolchain is the only one looked at, as in the build.
    let roots = match var("LAUNCH_TOOLCHAIN") {
        Some(root) => vec![PathBuf::from(root)],
        None => cached_toolchains(),
    };
    roots
        .into_iter()
        // The wheels' layout (what setup installs), then a CUDA toolkit's.
        .flat_map(|root| [root.join("nvidia/cuda_runtime/include"), root.join("include")])
        .collect()
}

/// The toolchains `cargo launch setup` installed (`<cache>/toolchain/cuda-<version>`), newest first.
fn cached_toolchains() -> Vec<PathBuf> {
    let cache = var("LAUNCH_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("cargo-launch")))
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache/cargo-launch")));
    let Some(Ok(entries)) = cache.map(|c| std::fs::read_dir(c.join("toolchain"))) else {
        return Vec::new();
    };
    let mut found: Vec<(Vec<u64>, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let version =
                name.strip_prefix("cuda-")?.split('.').map(|n| n.parse().ok()).collect::<Option<Vec<u64>>>()?;
            Some((version, e.path()))
        })
        .collect();
    found.sort();
    found.into_iter().rev().map(|(_, path)| path).collect()
}

fn var(name: &str) -> Option<OsString> {
    #[allow(clippy::disallowed_methods)] // test switches and the user's folders, not build configuration
    std::env::var_os(name)
}

//! Every `cargo:` line the build script prints, in one place: cargo reads them from its stdout
//! (<https://doc.rust-lang.org/cargo/reference/build-scripts.html#outputs-of-the-build-script>).
//! The rest of the crate calls these functions and never prints a `cargo:` line itself, so the
//! protocol (and a future switch to the `cargo::` spelling) lives here alone.
//!
//! Callers decide whether they run inside a build script ([`Env::is_build_script`]); these
//! functions only print.
//!
//! [`Env::is_build_script`]: crate::env::Env::is_build_script
// The crate's one writer of stdout (clippy.toml): cargo reads every line of a build script's.
#![allow(clippy::disallowed_macros)]

use std::path::Path;
use std::sync::Mutex;

/// Every line but the warnings printed by this process, in order: what a rerun that keeps the
/// outputs prints again ([`crate::fresh`]), since cargo forgets a script's lines when it reruns.
static PRINTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Prints a directive and remembers it.
fn directive(line: String) {
    println!("{line}");
    PRINTED.lock().unwrap_or_else(|e| e.into_inner()).push(line);
}

/// The directives printed so far (warnings excepted).
pub(crate) fn printed() -> Vec<String> {
    PRINTED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Prints `line`, a directive an earlier run printed, unless this run printed it already.
pub(crate) fn replay(line: &str) {
    if !line.starts_with("cargo:") || line.contains('\n') || printed().iter().any(|p| p == line) {
        return;
    }
    directive(line.to_string());
}

/// `cargo:warning=TEXT`: shown by cargo under the crate's name; through `launch_remote::redact`,
/// so no warning shows a password.
pub(crate) fn warning(text: &str) {
    println!("cargo:warning={}", launch_remote::redact(text));
}

/// `cargo:warning=launch-build: TEXT`: a warning about launch-build itself (the cache, the
/// commands it runs), not about the user's kernels.
pub(crate) fn launch_build_warning(text: &str) {
    warning(&format!("launch-build: {text}"));
}

/// `cargo:rerun-if-changed=PATH`: rerun the script when `path` (a file or a folder) changes.
pub(crate) fn rerun_if_changed(path: &Path) {
    directive(format!("cargo:rerun-if-changed={}", path.display()));
}

/// `cargo:rerun-if-env-changed=NAME`: rerun the script when the variable `name` changes.
pub(crate) fn rerun_if_env_changed(name: &str) {
    directive(format!("cargo:rerun-if-env-changed={name}"));
}

/// `cargo:rustc-link-search=native=DIR`: a folder the linker searches for native libraries.
pub(crate) fn rustc_link_search(dir: &Path) {
    directive(format!("cargo:rustc-link-search=native={}", dir.display()));
}

/// `cargo:rustc-link-lib=LIB` (`static=name` or `name`): a native library to link.
pub(crate) fn rustc_link_lib(lib: &str) {
    directive(format!("cargo:rustc-link-lib={lib}"));
}

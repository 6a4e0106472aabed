//! A fresh folder under the system's temporary folder for unit tests, removed when dropped
//! (`launch-remote` has no dependencies without its feature, so no `tempfile`).

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    /// A new empty folder whose name holds `what`, the process id and a counter.
    pub(crate) fn new(what: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "launch-remote-{what}-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

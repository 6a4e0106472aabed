//! Writing outputs under `OUT_DIR/launch`: only what changed, atomically.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Writes `bytes` to `path` unless it already holds exactly them (keeps the mtime, so nothing
/// downstream rebuilds). Writes a temporary file in the same folder and renames it into place, so
/// a reader never sees half a file. Returns whether the file was written.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    refuse_non_regular(path)?;
    if fs::read(path).map(|old| old == bytes).unwrap_or(false) {
        return Ok(false);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(Error::io("create folder", dir))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    fs::write(&tmp, bytes).map_err(Error::io("write", &tmp))?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io("rename into place", path)(e)
    })?;
    Ok(true)
}

/// Fails when something other than a regular file is at `path`: reading a FIFO or a device to
/// compare would block or never end, and renaming over it would replace the node itself (as root,
/// `/dev/null`). A missing path is fine: it is created.
pub fn refuse_non_regular(path: &Path) -> Result<(), Error> {
    match fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => {
            let what = if m.file_type().is_symlink() {
                "a symbolic link"
            } else if m.is_dir() {
                "a folder"
            } else {
                "not a regular file (a FIFO, socket or device)"
            };
            Err(Error::Io {
                path: path.to_path_buf(),
                action: "write",
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("it is {what}; refusing to replace it with an output file"),
                ),
            })
        }
        _ => Ok(()),
    }
}

/// Deletes files in `dir` that are not in `keep` (outputs of kernels or arches that no longer
/// exist), so nothing stale survives in the persistent `OUT_DIR`.
pub fn remove_stale(dir: &Path, keep: &BTreeSet<PathBuf>) -> Result<(), Error> {
    let Ok(rd) = fs::read_dir(dir) else { return Ok(()) };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_file() && !keep.contains(&p) {
            fs::remove_file(&p).map_err(Error::io("remove stale output", &p))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn unchanged_content_is_not_rewritten() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/f.bin");
        assert!(write_if_changed(&p, b"abc").unwrap());
        assert!(!write_if_changed(&p, b"abc").unwrap());
        assert!(write_if_changed(&p, b"abd").unwrap());
        assert_eq!(fs::read(&p).unwrap(), b"abd");
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(d.path().join("sub")).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn fifos_devices_links_and_folders_are_never_replaced() {
        // Before: a FIFO blocked the comparison read, and the rename replaced a device node.
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path().join("target"), &link).unwrap();
        let folder = d.path().join("folder");
        fs::create_dir(&folder).unwrap();
        for p in [&fifo, &link, &folder, &PathBuf::from("/dev/null")] {
            let e = write_if_changed(p, b"x").unwrap_err().to_string();
            assert!(e.contains("refusing to replace it"), "{e}");
        }
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    #[test]
    fn stale_files_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        fs::write(&a, "").unwrap();
        fs::write(&b, "").unwrap();
        remove_stale(d.path(), &[a.clone()].into_iter().collect()).unwrap();
        assert!(a.exists() && !b.exists());
    }
}

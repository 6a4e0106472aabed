//! Writing files atomically, and outputs under `OUT_DIR/launch` only when they changed.
//!
//! [`write_atomically`] is the one temp-file-and-rename of the crate: the outputs here and the
//! kernel cache's entries and compile times ([`crate::cache`]) all go through it.

use std::collections::BTreeSet;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Writes `bytes` to `path` unless it already holds exactly them (keeps the mtime, so nothing
/// downstream rebuilds), creating its folder. Refuses to replace anything but a regular file
/// (`refuse_non_regular`). A reader never sees half a file (`write_atomically`). Returns
/// whether the file was written.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    refuse_non_regular(path)?;
    if fs::read(path).map(|old| old == bytes).unwrap_or(false) {
        return Ok(false);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(Error::io("create folder", dir))?;
    write_atomically(path, bytes).map_err(Error::io("write", path))?;
    Ok(true)
}

/// Replaces `path` (whose folder must exist) with `bytes`, all or nothing: the bytes go to a new
/// temporary file `.<name>.<random>.tmp` in the same folder, created exclusively (two writers at
/// once never share one), then renamed over `path`. A reader sees the old file or the new one,
/// never half of either; of two writers at once the last rename wins. On an error the temporary
/// file is removed; a killed process can leave one behind, never a half-written `path` (the cache
/// sweeps such leftovers: their names start with `.` and end in `.tmp`).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The permissions `fs::write` gives (0666 less the umask), not tempfile's private 0600:
    // outputs and cache entries are read like any other file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.flush()?;
    // On failure the temporary file is dropped, which deletes it.
    tmp.persist(path).map(drop).map_err(|e| e.error)
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

    #[test]
    fn atomic_writes_replace_whole_files_and_leave_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let big: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10 {
                        write_atomically(&p, &big).unwrap();
                    }
                });
                s.spawn(|| {
                    for _ in 0..20 {
                        if let Ok(read) = fs::read(&p) {
                            assert_eq!(read.len(), big.len(), "a reader saw half a file");
                        }
                    }
                });
            }
        });
        assert_eq!(fs::read(&p).unwrap(), big);
        let names: Vec<_> = fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["f"]);
        // No folder, no file: the error is the OS's, and nothing is left.
        assert!(write_atomically(&d.path().join("missing/f"), b"x").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn atomic_writes_get_the_usual_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        fs::write(&a, b"x").unwrap();
        write_atomically(&b, b"x").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&b), mode(&a), "as fs::write would create it");
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

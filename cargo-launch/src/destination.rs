//! Where a command writes. Every command that writes (`init`, `new`, `check --bless`, `--plot`,
//! `setup`) checks each path it will write before any work, through these functions, so a path
//! that cannot be written is a usage error (exit 2) and nothing is built, created or changed.
//!
//! A folder is tested by creating (and at once removing) a file in it: that is the only test the
//! system answers truthfully for every user, root included (`/proc`, a read-only mount).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Checks that a file can be created or replaced at `path`: it names a file (not `.`, `..` or a
/// path ending in `/`), nothing but a regular file is there, and its folder exists and takes new
/// files. `what` begins the message ("writing the plot to x.svg").
pub(crate) fn file(path: &Path, what: &str) -> Result<(), Error> {
    let refuse = |why: String| Err(Error::Usage(anyhow::anyhow!("{what}: {why}")));
    let text = path.as_os_str().to_string_lossy();
    if path.file_name().is_none() || text.ends_with('/') || text.ends_with("/.") {
        return refuse("it names a folder, not a file; pass a file's path".into());
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(m) => {
            let kind = if m.is_dir() {
                "a folder"
            } else if m.file_type().is_symlink() {
                "a symbolic link"
            } else {
                "not a regular file (a FIFO, socket or device)"
            };
            return refuse(format!("it is {kind}; refusing to replace it: pass a file's path"));
        }
        Err(e) if e.kind() == ErrorKind::NotFound || e.kind() == ErrorKind::NotADirectory => {}
        Err(e) => return refuse(e.to_string()),
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => writable(dir).or_else(refuse),
        Ok(_) => refuse(format!("`{}` is a file, not a folder", dir.display())),
        Err(_) => refuse(format!("the folder {} does not exist", dir.display())),
    }
}

/// Checks that a folder can be created at `path` (with the folders above it that are missing),
/// or that the folder there takes new entries: nothing but a folder is at `path`, and the nearest
/// folder that exists (`path` or one above it) takes new entries. Returns the
/// folders that are missing, deepest first, so a failed command can remove exactly those.
pub(crate) fn new_folder(path: &Path, what: &str) -> Result<Vec<PathBuf>, Error> {
    let refuse = |why: String| Err(Error::Usage(anyhow::anyhow!("{what}: {why}")));
    let mut missing = Vec::new();
    let mut at = path.to_path_buf();
    loop {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => break,
            Ok(_) if missing.is_empty() => return refuse(format!("`{}` exists and is not a folder", at.display())),
            Ok(_) => return refuse(format!("`{}` is a file, not a folder", at.display())),
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) if e.kind() == ErrorKind::NotADirectory => {}
            Err(e) => return refuse(format!("`{}`: {e}", at.display())),
        }
        missing.push(at.clone());
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p.to_path_buf(),
            _ => {
                at = PathBuf::from(".");
                break;
            }
        }
    }
    match writable(&at) {
        Ok(()) => Ok(missing),
        Err(why) => refuse(why),
    }
}

/// Removes the folders `new_folder` reported missing, deepest first, where they are empty.
pub(crate) fn remove_created(folders: &[PathBuf]) {
    for dir in folders {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Whether `dir` (an existing folder) takes new files: one is created and removed at once.
fn writable(dir: &Path) -> Result<(), String> {
    let probe = dir.join(format!(".cargo-launch-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => {
            Err(format!("cannot create files in {} ({e}); pass a path in a folder you can write to", dir.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_destination_must_be_a_file_in_a_writable_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("Cargo.toml");
        std::fs::write(&file, "").unwrap();
        assert!(file_ok(&tmp.path().join("x.svg")));
        assert!(file_ok(&file), "an existing file is replaced");
        for bad in [tmp.path().to_path_buf(), tmp.path().join("."), file.join("x"), PathBuf::from("/proc/x.svg")] {
            assert!(!file_ok(&bad), "{}", bad.display());
        }
        assert!(!file_ok(&tmp.path().join("no/x.svg")), "a missing folder is not created");
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no probe left");
    }

    #[test]
    fn a_new_folder_lists_what_is_missing() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("f"), "").unwrap();
        let missing = new_folder(&tmp.path().join("a/b"), "x").unwrap();
        assert_eq!(missing, [tmp.path().join("a/b"), tmp.path().join("a")]);
        assert!(new_folder(&tmp.path().join("f/b"), "x").is_err());
        assert!(new_folder(&tmp.path().join("f"), "x").is_err());
        assert!(new_folder(Path::new("/proc/x"), "x").is_err());
    }

    fn file_ok(p: &Path) -> bool {
        file(p, "w").is_ok()
    }
}

//! The `file://` store: a folder, typically on a shared disk; and the file primitives it shares
//! with the tune cache's local folder (bounded reads that never block on a FIFO, whole writes).

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Backend, Failure};

/// Objects as files under a folder (`<folder>/<object path>`).
pub(crate) struct FolderBackend(pub(crate) PathBuf);

impl Backend for FolderBackend {
    fn get(&self, path: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, Failure> {
        let file = self.0.join(path);
        // Nothing can be there when a folder above it is a file: no entry, not a damaged one
        // (writing it fails and turns the store off with its warning).
        if fs::metadata(&file).is_err_and(|e| e.kind() == io::ErrorKind::NotADirectory) {
            return Ok(None);
        }
        read_bounded(&file, max_bytes).map_err(Failure::Damaged)
    }

    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), Failure> {
        let file = self.0.join(path);
        let write = || -> io::Result<()> {
            fs::create_dir_all(file.parent().expect("objects live in a folder"))?;
            write_whole(&file, bytes)
        };
        write().map_err(|e| Failure::Unavailable(format!("{}: {e}", file.display())))
    }
}

/// The file's bytes; `None` when there is no file. `Err` says why it cannot be an entry: not a
/// regular file, larger than `limit`, unreadable. Never blocks on a FIFO and never reads more
/// than `limit + 1` bytes.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, String> {
    // The type first (following links): opening a FIFO to read would wait for a writer.
    match fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
        Ok(m) if !m.is_file() => return Err(format!("not a regular file ({})", kind_of(&m))),
        Ok(_) => {}
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    nonblocking(&mut options);
    let file = match options.open(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
        Ok(file) => file,
    };
    // Again on what was opened: it may have been swapped since the check above.
    match file.metadata() {
        Ok(m) if m.is_file() => {}
        Ok(m) => return Err(format!("not a regular file ({})", kind_of(&m))),
        Err(e) => return Err(format!("cannot read it: {e}")),
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than {limit} bytes"));
    }
    Ok(Some(bytes))
}

fn kind_of(m: &fs::Metadata) -> &'static str {
    if m.is_dir() {
        "a folder"
    } else {
        "a FIFO, socket or device"
    }
}

/// `O_NONBLOCK` where its value is known without libc, so that a FIFO swapped in between the type
/// check and the open cannot block the open either (on a regular file it changes nothing).
fn nonblocking(options: &mut fs::OpenOptions) {
    #[cfg(all(
        target_os = "linux",
        any(
            target_arch = "x86",
            target_arch = "x86_64",
            target_arch = "arm",
            target_arch = "aarch64",
            target_arch = "riscv64",
            target_arch = "powerpc64",
            target_arch = "s390x",
            target_arch = "loongarch64"
        )
    ))]
    std::os::unix::fs::OpenOptionsExt::custom_flags(options, 0o4000);
    #[cfg(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "openbsd",
        target_os = "netbsd"
    ))]
    std::os::unix::fs::OpenOptionsExt::custom_flags(options, 0x0004);
    let _ = options;
}

/// Writes `bytes` as `path` whole: to a temporary file in the same folder, renamed over whatever
/// is in its place (an older file, a damaged one, a folder), so a reader sees the old file or the
/// new one, never a part of one, and of two writers at once the last rename wins whole.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(temp_name(path));
    let written = write_new(&tmp, bytes).and_then(|()| replace(&tmp, path));
    if written.is_err() {
        // Best effort: the error that matters is the one returned.
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// `.<file name>.<pid>.<n>.tmp`: unique among this process's writers (the counter) and other
/// processes' (the pid); the leading dot keeps it out of a plain `ls`.
fn temp_name(path: &Path) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    format!(".{name}.{}.{}.tmp", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

fn write_new(tmp: &Path, bytes: &[u8]) -> io::Result<()> {
    // `create_new`: never write through a file (or link) a crashed writer left under this name.
    let mut file = fs::OpenOptions::new().write(true).create_new(true).open(tmp)?;
    file.write_all(bytes)
}

fn replace(tmp: &Path, path: &Path) -> io::Result<()> {
    match fs::rename(tmp, path) {
        // A folder in the file's place: rename cannot replace it. It is under our own file name in
        // our own folder, so it is removed (not followed, if it is a link: `symlink_metadata`).
        Err(_) if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) => {
            fs::remove_dir_all(path)?;
            fs::rename(tmp, path)
        }
        other => other,
    }
}

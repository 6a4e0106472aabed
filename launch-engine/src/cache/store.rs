//! Where cache entries are kept: the [`Store`] interface, and [`LocalFolder`], the per-user
//! folder every build uses today.
//!
//! A store moves opaque entry bytes by [`Key`]; it never decodes them. The checksum, the format
//! and the key inside an entry are checked by [`Cache::load`](super::Cache::load) on whatever a
//! store returns, so a store cannot hand the build a damaged entry, whichever store it is.
//!
//! # A shared store
//! The remote store for teams and CI fleets ([`super::remote`]: S3 and WebDAV on OpenDAL, or a
//! shared folder) sits behind this interface's local folder, in [`Cache`](super::Cache) itself:
//! the local folder is read first and written always; the remote is read on a local miss and
//! written unless read-only, with every entry it returns checked like a local one.

use std::fs;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Key, MAX_ENTRY};
use crate::out;

/// Entry storage by key.
pub trait Store: Send + Sync {
    /// The bytes stored under `key`: `Ok(None)` when there are none; `Err(reason)` when something
    /// is there that cannot be an entry (more than [`MAX_ENTRY`] bytes, not a regular file, a read
    /// error): the job is compiled again and the next [`Store::put`] replaces it. Never returns
    /// more than [`MAX_ENTRY`] bytes.
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>, String>;

    /// Stores `bytes` under `key`, replacing whatever is there, all or nothing: a concurrent
    /// [`Store::get`] (another build) sees the old bytes, the new ones, or none, never part of
    /// them; of two builds putting the same key at once, either one's bytes may remain.
    fn put(&self, key: &Key, bytes: &[u8]) -> io::Result<()>;

    /// Marks the entry of `key` used now without reading it, for a build that kept its outputs
    /// (`crate::fresh`): the size limit evicts the least recently used first. Best effort;
    /// nothing for a store without use times. Returns whether the entry is there (a store that
    /// cannot tell says it is).
    fn mark_used(&self, _key: &Key) -> bool {
        true
    }

    /// Removes the entry of `key`, if any (best effort; nothing for a store that cannot).
    fn remove(&self, _key: &Key) {}

    /// Where the store is, for messages (a folder, a bucket).
    fn location(&self) -> String;

    /// Where the entry of `key` is, for messages.
    fn entry_location(&self, key: &Key) -> String {
        format!("{}/{key}", self.location())
    }
}

/// Temporary files older than this in an entry folder are leftovers of a killed build.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// Entries as files in a local folder: `<dir>/<first two hex digits>/<key hex>`.
///
/// Only a regular file is read as an entry, never more than [`MAX_ENTRY`] bytes, and links are
/// never followed: a symbolic link (to `/dev/zero`, say), a FIFO, a device or a folder in an
/// entry's place is damaged like a bad checksum, and the next `put` replaces it. An entry is
/// written with [`out::write_atomically`] (a unique temporary file in its folder, renamed into
/// place), so no lock is taken anywhere.
#[derive(Clone, Debug)]
pub struct LocalFolder {
    dir: PathBuf,
}

impl LocalFolder {
    /// The folder `dir` (created on the first `put`).
    pub fn new(dir: PathBuf) -> LocalFolder {
        LocalFolder { dir }
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry of `key` lives.
    pub fn entry_path(&self, key: &Key) -> PathBuf {
        let hex = key.to_string();
        self.dir.join(&hex[..2]).join(hex)
    }
}

impl Store for LocalFolder {
    /// A hit refreshes the entry's modification time: the size limit evicts the least recently
    /// used entries first ([`super::limit`]).
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>, String> {
        read_bounded_as(&self.entry_path(key), MAX_ENTRY, true)
    }

    /// A lost race with another build counts as success (same key, same entry): a rename that
    /// finds the entry in place on platforms where rename does not replace.
    fn put(&self, key: &Key, bytes: &[u8]) -> io::Result<()> {
        let path = self.entry_path(key);
        let dir = path.parent().expect("entries live in a folder");
        fs::create_dir_all(dir)?;
        sweep_stale_temps(dir);
        // A rename cannot replace a folder: a folder in the entry's place goes first, or every
        // build would compile this job again. (Links, FIFOs and devices are replaced by the
        // rename itself, never written through.)
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            match fs::remove_dir_all(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        match out::write_atomically(&path, bytes) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            r => r,
        }
    }

    fn remove(&self, key: &Key) {
        // A regular file or a link only: never a folder someone put there.
        let path = self.entry_path(key);
        if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) {
            let _ = fs::remove_file(path);
        }
    }

    fn mark_used(&self, key: &Key) -> bool {
        // A regular file only, never through a link (as `get` reads).
        let Ok(file) = open_no_follow(&self.entry_path(key)) else { return false };
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return false;
        }
        let _ = file.set_modified(std::time::SystemTime::now());
        true
    }

    fn location(&self) -> String {
        self.dir.display().to_string()
    }

    fn entry_location(&self, key: &Key) -> String {
        self.entry_path(key).display().to_string()
    }
}

/// The bytes of the file at `path`: `Ok(None)` when there is none, `Err(reason)` when something
/// other than a regular file of at most `limit` bytes is there. Never follows a link, never
/// blocks on a FIFO, never allocates more than the file holds.
pub(super) fn read_bounded(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, String> {
    read_bounded_as(path, limit, false)
}

/// [`read_bounded`]; with `used`, a whole read sets the file's modification time to now (best
/// effort: an entry of another user stays as it was).
fn read_bounded_as(path: &Path, limit: u64, used: bool) -> Result<Option<Vec<u8>>, String> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        // Nothing can be there when a folder above it is a file (`LAUNCH_CACHE_DIR` set to a
        // file): no entry, not a damaged one; storing it fails and says so.
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    regular(&meta, limit)?;
    let mut file = match open_no_follow(path) {
        Ok(f) => f,
        // Removed since it was looked at (the size limit's pruning, `cargo launch cache clear`):
        // no entry, not a damaged one.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(match e.raw_os_error() {
                #[cfg(unix)]
                Some(libc::ELOOP) => "a symbolic link, not a cache entry".to_string(),
                _ => e.to_string(),
            })
        }
    };
    // Checked again on what was opened: the path may have been replaced in between.
    let meta = file.metadata().map_err(|e| e.to_string())?;
    regular(&meta, limit)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // `take` bounds the read even if the file grows while it is read.
    (&mut file).take(limit + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("more than {limit} bytes, larger than any entry"));
    }
    if used {
        let _ = file.set_modified(std::time::SystemTime::now());
    }
    Ok(Some(bytes))
}

/// Fails unless `meta` is a regular file of at most `limit` bytes.
fn regular(meta: &fs::Metadata, limit: u64) -> Result<(), String> {
    let t = meta.file_type();
    if t.is_file() {
        if meta.len() > limit {
            return Err(format!("{} bytes, larger than any entry (at most {limit})", meta.len()));
        }
        return Ok(());
    }
    let what = if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a folder"
    } else {
        crate::input::kind_of_special(&t)
    };
    Err(format!("{what}, not a cache entry"))
}

/// Opens for reading without following a final symbolic link and without blocking (a FIFO would
/// wait for a writer).
pub(super) fn open_no_follow(path: &Path) -> io::Result<fs::File> {
    crate::input::open_nonblocking(path, false)
}

/// Removes temporary files that a killed build left in `dir` (older than an hour, so never one
/// a running build is still writing): [`out::write_atomically`] names them `.<name>.<random>.tmp`.
pub(super) fn sweep_stale_temps(dir: &Path) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with('.') && name.ends_with(".tmp")) {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMP);
        if old {
            let _ = fs::remove_file(e.path());
        }
    }
}

//! The build's own copies of the entries it used, under `OUT_DIR/launch/work/entries/` (issue 32,
//! class 10): a rerun that changed one file reads that file's entries from the cache and every
//! other unit's from here, without the cache and without checking its checksum again.
//!
//! Checking an entry costs a SHA-256 over all its bytes, and build scripts run unoptimised: on
//! mistralrs-quant's 137 MB of entries that was most of a one-file edit's build script. A copy is
//! trusted without that check only when its size and modification time are the ones this build
//! folder recorded when it wrote the copy (`entries.tsv`, written once the compile stage
//! succeeded); anything else (no record, another stamp, a copy that does not parse) is no copy,
//! and the unit is looked up in the cache as before. The copies are files of the same layout as
//! the cache's entries, written atomically; the record lists exactly the last build's keys, and
//! saving it removes the copies it no longer lists.
//!
//! They cost the disk space of the entries a second time in the target folder (as the cache is
//! outside it): cargo's `target/` is the place for what makes a rebuild fast.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::UNIX_EPOCH;

use super::{store, Key, MAX_ENTRY};
use crate::out;

/// The record's name in the copies' folder.
const RECORD: &str = "entries.tsv";

/// The record's first line; another is no record.
const HEADER: &str = "# launch-build entry copies 1";

/// A file's size and modification time (nanoseconds since the epoch).
type Stamp = (u64, u64);

/// The copies in one folder, and what this build used of them.
#[derive(Debug)]
pub struct Copies {
    dir: PathBuf,
    /// What the last build recorded.
    recorded: BTreeMap<Key, Stamp>,
    /// What this build used or wrote: the next record.
    used: Mutex<BTreeMap<Key, Stamp>>,
}

impl Copies {
    /// The copies in `dir` (created on the first [`Copies::put`]); an unreadable or damaged
    /// record means none are trusted.
    pub fn open(dir: PathBuf) -> Copies {
        let recorded = fs::read_to_string(dir.join(RECORD)).map(|t| parse(&t)).unwrap_or_default();
        Copies { dir, recorded, used: Mutex::new(BTreeMap::new()) }
    }

    fn path(&self, key: &Key) -> PathBuf {
        self.dir.join(key.to_string())
    }

    /// The bytes of `key`'s copy, when it is exactly as this folder's record says it was written;
    /// `None` otherwise (the caller reads the cache).
    pub fn get(&self, key: &Key) -> Option<Vec<u8>> {
        let recorded = *self.recorded.get(key)?;
        let path = self.path(key);
        if stamp(&path)? != recorded {
            return None;
        }
        let bytes = store::read_bounded(&path, MAX_ENTRY).ok()??;
        // Checked again on what was read: a copy replaced in between is no copy.
        if bytes.len() as u64 != recorded.0 || stamp(&path)? != recorded {
            return None;
        }
        self.lock().insert(*key, recorded);
        Some(bytes)
    }

    /// Keeps `bytes` (an encoded entry, checked or just made) as `key`'s copy, replacing any (an
    /// entry compiled again because the one read was unusable replaces it). Best effort: a copy
    /// that cannot be written costs the next build a cache read, nothing more.
    pub fn put(&self, key: &Key, bytes: &[u8]) {
        let path = self.path(key);
        let written = fs::create_dir_all(&self.dir).and_then(|()| out::write_atomically(&path, bytes));
        if let Some(s) = written.ok().and_then(|()| stamp(&path)) {
            self.lock().insert(*key, s);
        }
    }

    /// Writes the record of what this build used, and removes every other copy. Call it once the
    /// build's outputs are whole: a failed build leaves the last record, which trusts only copies
    /// still as it recorded them.
    ///
    /// # Errors
    /// The record cannot be written (the copies then go untrusted, never wrong).
    pub fn save(&self) -> io::Result<()> {
        let used = self.lock().clone();
        if used.is_empty() && !self.dir.exists() {
            return Ok(());
        }
        fs::create_dir_all(&self.dir)?;
        let mut text = format!("{HEADER}\n");
        for (key, (len, mtime)) in &used {
            text.push_str(&format!("{key}\t{len}\t{mtime}\n"));
        }
        out::write_atomically(&self.dir.join(RECORD), text.as_bytes())?;
        for e in fs::read_dir(&self.dir)?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let listed = parse_key(&name).is_some_and(|k| used.contains_key(&k));
            if name != RECORD && !listed && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = fs::remove_file(e.path());
            }
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Key, Stamp>> {
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The folder of a build's copies under its `launch_dir` (`OUT_DIR/launch`).
pub fn folder(launch_dir: &Path) -> PathBuf {
    launch_dir.join("work").join("entries")
}

/// Size and modification time of the regular file at `path` (links not followed).
fn stamp(path: &Path) -> Option<Stamp> {
    let meta = fs::symlink_metadata(path).ok().filter(fs::Metadata::is_file)?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some((meta.len(), u64::try_from(mtime.as_nanos()).ok()?))
}

/// The record's lines; a record with another header, or any line that does not parse, is none.
fn parse(text: &str) -> BTreeMap<Key, Stamp> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return BTreeMap::new();
    }
    let mut out = BTreeMap::new();
    for line in lines {
        let mut f = line.split('\t');
        let entry = (|| {
            let key = parse_key(f.next()?)?;
            let len = f.next()?.parse().ok()?;
            let mtime = f.next()?.parse().ok()?;
            f.next().is_none().then_some((key, (len, mtime)))
        })();
        let Some((key, s)) = entry else { return BTreeMap::new() };
        out.insert(key, s);
    }
    out
}

/// A key from its 64 lowercase hex digits.
fn parse_key(hex: &str) -> Option<Key> {
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(Key(key))
}

#[cfg(test)]
mod tests;

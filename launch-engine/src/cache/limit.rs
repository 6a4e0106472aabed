//! The local cache's size limit: least recently used entries go first.
//!
//! Every hit refreshes its entry's modification time ([`super::LocalFolder`]), so the oldest time
//! is the least recently used entry. After a build that stored entries, when the entries exceed
//! the limit ([`LAUNCH_CACHE_MAX_SIZE`](crate::env), default [`DEFAULT_MAX_SIZE`]), the oldest
//! are removed until they hold at most 90 % of it ([`prune`]), so the next few builds store
//! without pruning again.
//!
//! Pruning takes no lock and is safe while other builds read and write: an entry is one file,
//! read whole and checked against its checksum, so one removed under a reader is a miss (the job
//! compiles again), never half an entry; a writer's temporary file is never touched unless it is
//! an hour old (a killed build's, see `store::sweep_stale_temps`); a file another pruner removed
//! first is skipped. The shard folders (`<first two hex digits>/`) stay, so a writer never finds
//! its folder gone between creating it and renaming its entry in.
//!
//! A build does not scan the cache every time: `<cache root>/kernel-cache-size` holds the bytes of
//! the last scan plus what builds stored since, and the folder is scanned only when that estimate
//! passes the limit or the last scan is a day old (two builds updating it at once lose one
//! update, which the daily scan corrects).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::store::sweep_stale_temps;
use crate::out;

/// The default limit: 5 GiB (about 170 000 entries of 30 KB).
pub const DEFAULT_MAX_SIZE: u64 = 5 << 30;

/// The size estimate's file, in the cache root.
pub const ESTIMATE_FILE: &str = "kernel-cache-size";

/// How old an estimate may be before the folder is scanned anyway.
const RESCAN: Duration = Duration::from_secs(24 * 3600);

/// A size as `LAUNCH_CACHE_MAX_SIZE` and `cargo launch cache prune --max-size` take it: bytes,
/// or a number with a binary unit `K`, `M`, `G` or `T` (optionally followed by `B` or `iB`, any
/// case; `500M`, `5G`, `1.5GiB`). `0` means no limit (`None`).
///
/// # Errors
/// Anything else, as a sentence that says what is accepted.
pub fn parse_size(text: &str) -> Result<Option<u64>, String> {
    let form =
        "expected bytes or a number with a unit K, M, G or T (powers of 1024), such as 500M or 5G; 0 for no limit";
    // Exactly as written: `5 G`, ` 5G` and an empty value are no sizes.
    if text.chars().any(char::is_whitespace) {
        return Err(format!("`{}` is not a size (it holds a space): {form}", text.escape_debug()));
    }
    let lower = text.to_ascii_lowercase();
    let unit_at = lower.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(lower.len());
    let (number, unit) = lower.split_at(unit_at);
    let scale = unit.strip_suffix("ib").or_else(|| unit.strip_suffix('b')).unwrap_or(unit);
    let shift = match scale {
        "" if unit.is_empty() || unit == "b" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(format!("`{}` is not a size: {form}", text.escape_debug())),
    };
    let valid = !number.is_empty() && number.bytes().filter(|&b| b == b'.').count() <= 1 && number != ".";
    let value: f64 = match number.parse() {
        Ok(v) if valid => v,
        _ => return Err(format!("`{}` is not a size: {form}", text.escape_debug())),
    };
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("`{}` is too large: {form}", text.escape_debug()));
    }
    // Whole bytes; a fraction of a byte rounds down.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bytes = bytes as u64;
    Ok((bytes > 0).then_some(bytes))
}

/// `bytes` for people: `812 B`, `30.2 KiB`, `5.0 GiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// How many entries, and their bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Entries (files named by a key).
    pub entries: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// What [`prune`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// The entries it removed.
    pub removed: Usage,
    /// The entries left.
    pub left: Usage,
    /// What it could not read or remove, each path with why (an entry another process removed
    /// first is gone all the same, no failure). Empty when it did all it should.
    pub failed: Vec<(PathBuf, String)>,
}

/// One entry file, as a scan found it.
#[derive(Debug)]
struct Item {
    used: SystemTime,
    bytes: u64,
    path: PathBuf,
}

/// Whether `name` is an entry's: 64 lowercase hex digits (a key).
fn is_entry_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Every entry under `dir` (`<dir>/<2 hex>/<64 hex>`, regular files only), sweeping stale
/// temporary files on the way. What vanishes while it is scanned is left out; a folder that is
/// there but cannot be read goes into `failed`.
fn scan(dir: &Path, failed: &mut Vec<(PathBuf, String)>) -> Vec<Item> {
    let mut items = Vec::new();
    let shards = match fs::read_dir(dir) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return items,
        Err(e) => {
            failed.push((dir.to_path_buf(), e.to_string()));
            return items;
        }
    };
    for shard in shards.flatten() {
        let name = shard.file_name();
        let name = name.to_string_lossy();
        if name.len() != 2 || !shard.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        sweep_stale_temps(&shard.path());
        let files = match fs::read_dir(shard.path()) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => {
                failed.push((shard.path(), e.to_string()));
                continue;
            }
        };
        for f in files.flatten() {
            if !is_entry_name(&f.file_name().to_string_lossy()) {
                continue;
            }
            // `DirEntry::metadata` does not follow links: a link is no entry's bytes.
            let Ok(meta) = f.metadata() else { continue };
            if meta.is_file() {
                let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                items.push(Item { used, bytes: meta.len(), path: f.path() });
            }
        }
    }
    items
}

fn total(items: &[Item]) -> Usage {
    Usage { entries: items.len() as u64, bytes: items.iter().map(|i| i.bytes).sum() }
}

/// The entries under the entry folder `dir` and their bytes.
pub fn usage(dir: &Path) -> Usage {
    total(&scan(dir, &mut Vec::new()))
}

/// When the entries under `dir` hold more than `limit` bytes, removes the least recently used
/// (oldest modification time first) until they hold at most 90 % of it. Safe while other builds
/// read, write and prune (see the module's notes): a file already gone is skipped, one that cannot
/// be removed is left (counted as left, and in [`Pruned::failed`] with why, as is a folder that
/// cannot be read).
pub fn prune(dir: &Path, limit: u64) -> Pruned {
    let mut failed = Vec::new();
    let mut items = scan(dir, &mut failed);
    let mut left = total(&items);
    let mut removed = Usage::default();
    if left.bytes <= limit {
        return Pruned { removed, left, failed };
    }
    let target = limit / 10 * 9;
    items.sort_by(|a, b| a.used.cmp(&b.used).then_with(|| a.path.cmp(&b.path)));
    for item in items {
        if left.bytes <= target {
            break;
        }
        match fs::remove_file(&item.path) {
            Ok(()) => {
                removed.entries += 1;
                removed.bytes += item.bytes;
            }
            // Another pruner (or `cache clear`) was first: gone all the same.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                failed.push((item.path, e.to_string()));
                continue;
            }
        }
        left.entries -= 1;
        left.bytes -= item.bytes;
    }
    Pruned { removed, left, failed }
}

/// After a build stored `stored` bytes in the entry folder `dir`: prunes it to `limit` when the
/// estimate in `root` says it may be over (or is missing or a day old), and records the new
/// estimate. `None` when no scan was needed.
pub fn after_store(dir: &Path, root: &Path, stored: u64, limit: u64) -> Option<Pruned> {
    let file = root.join(ESTIMATE_FILE);
    let estimate = read_estimate(&file);
    let fresh = |at: SystemTime| SystemTime::now().duration_since(at).is_ok_and(|age| age < RESCAN);
    if let Some((bytes, at)) = estimate {
        let bytes = bytes.saturating_add(stored);
        if bytes <= limit && fresh(at) {
            write_estimate(&file, bytes, at);
            return None;
        }
    }
    let pruned = prune(dir, limit);
    write_estimate(&file, pruned.left.bytes, SystemTime::now());
    Some(pruned)
}

/// `bytes TAB unix-seconds-of-the-last-scan`; `None` when missing or damaged.
fn read_estimate(file: &Path) -> Option<(u64, SystemTime)> {
    let bytes = super::read_entry_limited(file, 4096)?;
    let text = String::from_utf8(bytes).ok()?;
    let (size, at) = text.trim().split_once('\t')?;
    let at = SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(at.parse().ok()?))?;
    Some((size.parse().ok()?, at))
}

/// Best effort: without it the next storing build scans.
fn write_estimate(file: &Path, bytes: u64, at: SystemTime) {
    let secs = at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if let Some(dir) = file.parent() {
        let _ =
            fs::create_dir_all(dir).and_then(|()| out::write_atomically(file, format!("{bytes}\t{secs}\n").as_bytes()));
    }
}

/// `cargo launch cache clear`: removes every entry under the cache root `root`'s `kernels/`,
/// the compile times (`kernel-timings/`), the build log and the size estimate; leaves writers'
/// young temporary files and everything else in the root (the toolchains under `toolchain/`,
/// the tools' digests). Safe while builds run: they compile what they miss. What it cannot
/// remove is in [`Pruned::failed`].
pub fn clear(root: &Path) -> Pruned {
    // Pruning to nothing removes every entry it can.
    let mut pruned = prune(&root.join("kernels"), 0);
    let mut remove = |path: PathBuf| match fs::remove_file(&path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => pruned.failed.push((path, e.to_string())),
        _ => {}
    };
    if let Ok(files) = fs::read_dir(root.join("kernel-timings")) {
        for f in files.flatten() {
            if f.file_name().to_string_lossy().ends_with(".tsv") {
                remove(f.path());
            }
        }
    }
    remove(root.join(ESTIMATE_FILE));
    remove(super::build_log::path(root));
    pruned
}

#[cfg(test)]
mod tests;

//! The on-disk store of tuning winners: one small text file per [`TuneKey`], written atomically.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::key::{DeviceKey, StableHasher, TuneKey};
use super::shared;
use launch_remote::{Mode, RemoteConfig, RemoteStore, RemoteUrl, DEFAULT_TIMEOUT};

/// The variant that won a tuning run, and how it did.
#[derive(Clone, Debug, PartialEq)]
pub struct Winner {
    /// The winning variant's symbol name (`Kernel::name`).
    pub variant: String,
    /// Its median time per launch, in milliseconds.
    pub median_ms: f64,
    /// Its fastest launch.
    pub min_ms: f64,
    /// Its slowest launch.
    pub max_ms: f64,
    /// How many timed launches the statistics are of.
    pub repetitions: u32,
    /// When it was measured, in seconds since the Unix epoch.
    pub measured_at: u64,
}

/// Why no winner is remembered: what [`TuneCache::get`] says ([`Miss::NotStored`],
/// [`Miss::Damaged`]), and the tuner's lookup besides (its policy, its cache, its candidates).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Miss {
    /// `LAUNCH_TUNE=off`: the cache is not read.
    Off,
    /// `LAUNCH_TUNE=always`: the cache is not read; every run times.
    Always,
    /// No folder for the cache (see [`TuneCache::from_env`]).
    NoCacheDir,
    /// Nothing remembered for this key (never tuned, or a key part changed; or a file for another
    /// key whose hash is the same).
    NotStored,
    /// A file that cannot be read as a result (why, with its path): time again, and the next
    /// [`TuneCache::put`] replaces it.
    Damaged(String),
    /// The remembered winner is none of the candidates.
    UnknownVariant(String),
}

/// The first line of every cache file; a file with another version is [`Miss::Damaged`].
const HEADER: &str = "cargo-launch tune cache v";
/// The format this build writes and reads. Version 2 added the checksum line (version 1 files
/// have none: they read as damaged and are replaced by the next tuning run).
const FORMAT_VERSION: u32 = 2;
/// A cache file is a few hundred bytes; anything larger is not one of ours, and is not read.
pub const MAX_FILE_BYTES: u64 = 16 * 1024;

/// No cache folder could be named from the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NoCacheDir;

impl std::fmt::Display for NoCacheDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "no folder for the tune cache: set LAUNCH_TUNE_CACHE_DIR (neither XDG_CACHE_HOME nor HOME is set to an absolute path)",
        )
    }
}

impl std::error::Error for NoCacheDir {}

/// The tune cache folder: `LAUNCH_TUNE_CACHE_DIR`, else `$XDG_CACHE_HOME/cargo-launch/tune`, else
/// `$HOME/.cache/cargo-launch/tune`, reading variables through `var` (empty counts as unset).
/// `XDG_CACHE_HOME` and `HOME` count only when absolute, as the XDG specification asks.
pub(crate) fn cache_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(dir) = var("LAUNCH_TUNE_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".cache")))
        .map(|cache| cache.join("cargo-launch").join("tune"))
}

/// Winners on disk, one file per key (`<key hash>.tune`) in one folder, with optionally a fleet's
/// remote store behind it ([`TuneCache::with_remote`]).
#[derive(Clone, Debug)]
pub struct TuneCache {
    dir: PathBuf,
    remote: Option<Arc<RemoteStore>>,
}

impl TuneCache {
    /// A cache in `dir` (created on the first [`TuneCache::put`]).
    pub fn new(dir: impl Into<PathBuf>) -> TuneCache {
        TuneCache { dir: dir.into(), remote: None }
    }

    /// The same cache with a fleet's remote store behind it (S3, WebDAV or a shared folder: see
    /// [`crate::remote`]), that machines with the same GPU model and driver share, so one of them
    /// tunes and the others reuse its winners before their first timing run. [`TuneCache::get`]
    /// reads the local folder, then the remote (a remote hit, checked like a local one, checksum
    /// and whole key, is copied into the local folder; anything else there is a miss);
    /// [`TuneCache::put`] writes both, the remote best effort and never when it is read-only (for
    /// untrusted machines). Winners live under the remote's `tune/` (`tune/<key hash>.tune`, the
    /// local folder's file names), beside the kernel cache's `kernels/`, so one URL serves both.
    /// A remote that is down or slow costs one warning (its store's) and this process tunes
    /// locally.
    pub fn with_remote(self, remote: RemoteStore) -> TuneCache {
        TuneCache { remote: Some(Arc::new(remote)), ..self }
    }

    /// [`TuneCache::with_remote`] with a shared folder (a network disk, a mounted bucket) as the
    /// remote, `dir/tune/` holding the winners; a failure to write it is one warning on stderr.
    pub fn with_shared(self, dir: impl Into<PathBuf>, read_only: bool) -> TuneCache {
        let mode = if read_only { Mode::ReadOnly } else { Mode::ReadWrite };
        let url = RemoteUrl::Folder(dir.into());
        let config = RemoteConfig { url, mode, timeout: DEFAULT_TIMEOUT, source: "TuneCache::with_shared".into() };
        self.with_remote(shared::open(config))
    }

    /// The remote store, if any (its configuration, and what this process did with it).
    pub fn remote(&self) -> Option<&RemoteStore> {
        self.remote.as_deref()
    }

    /// The cache the environment names: the folder `LAUNCH_TUNE_CACHE_DIR` names (else
    /// `$XDG_CACHE_HOME/cargo-launch/tune`, else `$HOME/.cache/cargo-launch/tune`), and the remote of
    /// [`remote_config_from`](super::remote_config_from) (`LAUNCH_TUNE_CACHE_REMOTE`) behind it,
    /// one store per process (every cache from the environment shares it, and its one warning).
    /// A remote variable that is not right is one warning on stderr (once per process), and the
    /// cache works without it.
    ///
    /// # Errors
    /// No variable names a folder.
    pub fn from_env() -> Result<TuneCache, NoCacheDir> {
        let cache = cache_dir_from(super::env_var).map(TuneCache::new).ok_or(NoCacheDir)?;
        Ok(match shared::remote_config_from(super::env_var) {
            Ok(Some(config)) => TuneCache { remote: Some(shared::open_shared(config)), ..cache },
            Ok(None) => cache,
            Err(why) => {
                shared::warn_once(&why);
                cache
            }
        })
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds `key`'s winner.
    pub fn path(&self, key: &TuneKey) -> PathBuf {
        self.dir.join(format!("{:016x}.tune", key.hash()))
    }

    /// The winner remembered for `key`. Never blocks on a FIFO and never reads more than
    /// [`MAX_FILE_BYTES`]; any file that is not a whole, current-version result is
    /// [`Miss::Damaged`].
    ///
    /// # Errors
    /// [`Miss::NotStored`] or [`Miss::Damaged`].
    pub fn get(&self, key: &TuneKey) -> Result<Winner, Miss> {
        let local = self.get_local(key);
        let Some(remote) = self.remote.as_deref() else { return local };
        if local.is_ok() {
            return local;
        }
        match remote_get(remote, key) {
            Some(winner) => {
                // Best effort: without the local copy the next run reads the remote again.
                let _ = self.put_local(key, &winner);
                Ok(winner)
            }
            None => local,
        }
    }

    /// The local folder's answer alone.
    fn get_local(&self, key: &TuneKey) -> Result<Winner, Miss> {
        let path = self.path(key);
        let damaged = |why: String| Err(Miss::Damaged(format!("{}: {why}", path.display())));
        let text = match read_bounded(&path) {
            Ok(Some(text)) => text,
            Ok(None) => return Err(Miss::NotStored),
            Err(why) => return damaged(self.folder_problem().unwrap_or(why)),
        };
        match decode(&text) {
            Ok((stored, winner)) if stored == *key => Ok(winner),
            // Another key with the same hash: not ours, and not damaged.
            Ok(_) => Err(Miss::NotStored),
            Err(why) => damaged(why),
        }
    }

    /// Remembers `winner` for `key`, replacing whatever is in its file's place (an older result, a
    /// damaged file, a folder). Written to a temporary file in the same folder and renamed over
    /// the old one, so a reader sees the old file or the new one, never a part of one, and of two
    /// writers at once the last rename wins whole.
    ///
    /// # Errors
    /// The folder cannot be created or written; a winner with a time that is not a finite,
    /// non-negative number, or a key too long for a cache file ([`io::ErrorKind::InvalidInput`]).
    pub fn put(&self, key: &TuneKey, winner: &Winner) -> io::Result<()> {
        let local = self.put_local(key, winner);
        if let Some(remote) = self.remote.as_deref() {
            // Best effort (read-only writes nothing; a failure is the store's one warning): a
            // remote that cannot be written costs the fleet a tuning run, never this program
            // its result.
            if let Ok(text) = encode(key, winner) {
                remote.put(&shared::object(key), text.as_bytes());
            }
        }
        local
    }

    /// Writes the local folder alone.
    fn put_local(&self, key: &TuneKey, winner: &Winner) -> io::Result<()> {
        let text = encode(key, winner)?;
        let located = |e: io::Error| match self.folder_problem() {
            Some(why) => io::Error::new(e.kind(), why),
            None => e,
        };
        fs::create_dir_all(&self.dir).map_err(|e| {
            let why = format!("cannot create the tune cache folder {}: {e}", self.dir.display());
            located(io::Error::new(e.kind(), why))
        })?;
        launch_remote::write_whole(&self.path(key), text.as_bytes()).map_err(located)
    }

    /// Why the folder cannot hold the cache when that is because it, or a folder above it, is
    /// something other than a folder (a file, say), naming both paths; `None` otherwise.
    fn folder_problem(&self) -> Option<String> {
        // The nearest existing one of the folder and its parents (followed, if a link).
        let existing = self.dir.ancestors().find_map(|p| fs::metadata(p).ok().map(|m| (p, m)))?;
        let (at, meta) = existing;
        if meta.is_dir() {
            return None;
        }
        let what = if meta.is_file() { "a file" } else { "a FIFO, socket or device" };
        let place = if at == self.dir {
            format!("the tune cache folder {} is {what}, not a folder", at.display())
        } else {
            format!(
                "{} is {what}, not a folder, so the tune cache folder {} cannot be in it",
                at.display(),
                self.dir.display()
            )
        };
        Some(format!("{place}: set LAUNCH_TUNE_CACHE_DIR to a folder, or move the file"))
    }
}

/// `key`'s winner on `remote`, verified as a local file is (see `shared`'s documentation); `None`
/// for a miss, a remote that is off, and anything that is not exactly this key's whole entry.
fn remote_get(remote: &RemoteStore, key: &TuneKey) -> Option<Winner> {
    let bytes = remote.get(&shared::object(key), MAX_FILE_BYTES).ok()??;
    let text = std::str::from_utf8(&bytes).ok()?;
    match decode(text) {
        Ok((stored, winner)) if stored == *key => {
            remote.hit(bytes.len());
            Some(winner)
        }
        _ => None,
    }
}

/// The file's text; `None` when there is no file. `Err` says why it cannot be read as a result.
fn read_bounded(path: &Path) -> Result<Option<String>, String> {
    match launch_remote::read_bounded(path, MAX_FILE_BYTES)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| "not UTF-8 text".to_string()),
    }
}

// The file: the header with the version, then one `name value` line per field in this order, then
// `checksum` (of every line above it), then `end` (a file cut short has no `end`). Strings escape
// `\`, newline and carriage return, so a carriage return in the file can only be a line end's
// (an editor's CRLF), which the reader drops.
const FIELDS: [&str; 14] = [
    "kernel",
    "variants",
    "device_name",
    "compute_capability",
    "driver_version",
    "problem",
    "variant",
    "median_ms",
    "min_ms",
    "max_ms",
    "repetitions",
    "measured_at",
    "checksum",
    "end",
];

/// The checksum of a file's lines above its `checksum` line (each without its line end): any edit
/// of a value, a name or the header changes it. A check against damage and hand edits, not
/// against forgery (see [`StableHasher`]).
fn checksum<'a>(lines: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut h = StableHasher::new();
    h.field(b"cargo-launch tune cache entry");
    for line in lines {
        h.field(line.as_bytes());
    }
    h.finish()
}

pub(super) fn encode(key: &TuneKey, w: &Winner) -> io::Result<String> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
    for (name, ms) in [("median", w.median_ms), ("min", w.min_ms), ("max", w.max_ms)] {
        if !(ms.is_finite() && ms >= 0.0) {
            return Err(invalid(format!("the winner's {name} time, {ms} ms, is not a time")));
        }
    }
    let (major, minor) = key.device.compute_capability;
    let values = [
        format!("{:016x}", key.kernel),
        format!("{:016x}", key.variants),
        escape(&key.device.name),
        format!("{major}.{minor}"),
        key.device.driver_version.to_string(),
        escape(&key.problem),
        escape(&w.variant),
        // `{}` of an f64 is the shortest text that reads back to the same number.
        w.median_ms.to_string(),
        w.min_ms.to_string(),
        w.max_ms.to_string(),
        w.repetitions.to_string(),
        w.measured_at.to_string(),
    ];
    let mut lines = vec![format!("{HEADER}{FORMAT_VERSION}")];
    lines.extend(FIELDS.iter().zip(&values).map(|(name, value)| format!("{name} {value}")));
    let sum = checksum(lines.iter().map(String::as_str));
    let mut text = String::new();
    for line in lines {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(&format!("checksum {sum:016x}\nend\n"));
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(invalid(format!(
            "the key is too long for a tune cache file ({} bytes, at most {MAX_FILE_BYTES})",
            text.len()
        )));
    }
    Ok(text)
}

pub(super) fn decode(text: &str) -> Result<(TuneKey, Winner), String> {
    // CRLF line ends (an editor's, or a checkout's) read as LF ones.
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let header = lines.next().unwrap_or_default();
    let Some(version) = header.strip_prefix(HEADER) else { return Err("not a tune cache file".into()) };
    if version != FORMAT_VERSION.to_string() {
        return Err(format!("format version `{}`, this build reads version {FORMAT_VERSION}", version.escape_debug()));
    }
    let mut values = Vec::with_capacity(FIELDS.len());
    for field in FIELDS {
        let line = lines.next().ok_or_else(|| format!("cut short before `{field}`"))?;
        if field == "end" {
            if line != "end" {
                return Err(format!("`{line}` where `end` belongs"));
            }
            break;
        }
        let value = line
            .strip_prefix(field)
            .and_then(|rest| rest.strip_prefix(' '))
            .ok_or_else(|| format!("`{line}` where `{field}` belongs"))?;
        values.push(value);
    }
    // `end` then a newline, or `end` alone (a final newline is not needed to be whole).
    if !matches!((lines.next(), lines.next()), (Some(""), None) | (None, None)) {
        return Err("text after `end`".into());
    }
    let bad = |field: &str, value: &str| format!("`{field}` is `{value}`");
    let hex = |i: usize| u64::from_str_radix(values[i], 16).map_err(|_| bad(FIELDS[i], values[i]));
    let string = |i: usize| unescape(values[i]).ok_or_else(|| bad(FIELDS[i], values[i]));
    let number = |i: usize| values[i].parse::<u64>().map_err(|_| bad(FIELDS[i], values[i]));
    let ms = |i: usize| {
        values[i].parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| bad(FIELDS[i], values[i]))
    };
    let compute_capability = values[3]
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .ok_or_else(|| bad(FIELDS[3], values[3]))?;
    let key = TuneKey {
        kernel: hex(0)?,
        variants: hex(1)?,
        device: DeviceKey {
            name: string(2)?,
            compute_capability,
            driver_version: values[4].parse().map_err(|_| bad(FIELDS[4], values[4]))?,
        },
        problem: string(5)?,
    };
    let winner = Winner {
        variant: string(6)?,
        median_ms: ms(7)?,
        min_ms: ms(8)?,
        max_ms: ms(9)?,
        repetitions: u32::try_from(number(10)?).map_err(|_| bad(FIELDS[10], values[10]))?,
        measured_at: number(11)?,
    };
    // Last, so that a value that does not parse is named as such; this catches the edits that do.
    let checksum_at = FIELDS.len() - 2;
    let lines_above = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).take(checksum_at + 1);
    // As text: `+` or upper case would parse to the same number from an edited line.
    if values[checksum_at] != format!("{:016x}", checksum(lines_above)) {
        return Err("its checksum does not match its contents: edited or damaged since it was written".into());
    }
    Ok((key, winner))
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n").replace('\r', "\\r")
}

fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            '\\' => match chars.next()? {
                '\\' => '\\',
                'n' => '\n',
                'r' => '\r',
                _ => return None,
            },
            c => c,
        });
    }
    Some(out)
}

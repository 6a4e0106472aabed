//! The on-disk store of tuning winners: one small text file per [`TuneKey`], written atomically.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::key::{DeviceKey, StableHasher, TuneKey};

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

/// What [`TuneCache::get`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum Lookup {
    /// A winner remembered for exactly this key.
    Hit(Winner),
    /// Nothing for this key (no file, or a file for another key whose hash is the same).
    Miss,
    /// A file that cannot be read as a result (why, with its path): time again, and the next
    /// [`TuneCache::put`] replaces it.
    Damaged(String),
}

/// The first line of every cache file; a file with another version is [`Lookup::Damaged`].
const HEADER: &str = "cargo-launch tune cache v";
/// The format this build writes and reads. Version 2 added the checksum line (version 1 files
/// have none: they read as damaged and are replaced by the next tuning run).
pub const FORMAT_VERSION: u32 = 2;
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
pub fn cache_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(dir) = var("LAUNCH_TUNE_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".cache")))
        .map(|cache| cache.join("cargo-launch").join("tune"))
}

/// Winners on disk, one file per key (`<key hash>.tune`) in one folder, with optionally a shared
/// folder behind it ([`TuneCache::with_shared`]).
#[derive(Clone, Debug)]
pub struct TuneCache {
    dir: PathBuf,
    shared: Option<Box<Shared>>,
}

/// A fleet's shared tune folder behind the local one.
#[derive(Clone, Debug)]
struct Shared {
    cache: TuneCache,
    read_only: bool,
}

/// The shared tune folder the environment names: `LAUNCH_TUNE_CACHE_REMOTE`, an absolute folder or
/// a `file:///folder` URL (anything else counts as unset, as a relative `XDG_CACHE_HOME` does),
/// read-only when `LAUNCH_TUNE_CACHE_REMOTE_MODE` is `ro`.
pub fn shared_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<(PathBuf, bool)> {
    let value = var("LAUNCH_TUNE_CACHE_REMOTE")?;
    let text = value.to_string_lossy();
    let dir = PathBuf::from(text.strip_prefix("file://").unwrap_or(&text));
    let read_only = var("LAUNCH_TUNE_CACHE_REMOTE_MODE")
        .is_some_and(|m| matches!(m.to_string_lossy().trim().to_ascii_lowercase().as_str(), "ro" | "read-only"));
    dir.is_absolute().then_some((dir, read_only))
}

impl TuneCache {
    /// A cache in `dir` (created on the first [`TuneCache::put`]).
    pub fn new(dir: impl Into<PathBuf>) -> TuneCache {
        TuneCache { dir: dir.into(), shared: None }
    }

    /// The same cache with a shared folder behind it (a network disk, a mounted bucket) that a
    /// fleet of machines with the same GPU model and driver reads, so one of them tunes and the
    /// others reuse its winners before their first timing run. [`TuneCache::get`] reads the local
    /// folder, then the shared one (a shared hit, checked like a local one, is copied into the
    /// local folder; a damaged shared file is a miss); [`TuneCache::put`] writes both, the shared
    /// one best effort and never with `read_only` (for untrusted machines).
    pub fn with_shared(self, dir: impl Into<PathBuf>, read_only: bool) -> TuneCache {
        TuneCache { shared: Some(Box::new(Shared { cache: TuneCache::new(dir), read_only })), ..self }
    }

    /// The shared folder, and whether it is read-only.
    pub fn shared(&self) -> Option<(&Path, bool)> {
        self.shared.as_ref().map(|s| (s.cache.dir(), s.read_only))
    }

    /// The cache in the folder the environment names (see [`cache_dir_from`]).
    ///
    /// # Errors
    /// No variable names a folder.
    pub fn from_env() -> Result<TuneCache, NoCacheDir> {
        let cache = cache_dir_from(super::env_var).map(TuneCache::new).ok_or(NoCacheDir)?;
        Ok(match shared_dir_from(super::env_var) {
            Some((dir, read_only)) => cache.with_shared(dir, read_only),
            None => cache,
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
    /// [`Lookup::Damaged`].
    pub fn get(&self, key: &TuneKey) -> Lookup {
        let local = self.get_local(key);
        let Some(shared) = self.shared.as_deref() else { return local };
        if matches!(local, Lookup::Hit(_)) {
            return local;
        }
        match shared.cache.get_local(key) {
            Lookup::Hit(winner) => {
                // Best effort: without the local copy the next run reads the shared folder again.
                let _ = self.put_local(key, &winner);
                Lookup::Hit(winner)
            }
            Lookup::Miss | Lookup::Damaged(_) => local,
        }
    }

    /// The local folder's answer alone.
    fn get_local(&self, key: &TuneKey) -> Lookup {
        let path = self.path(key);
        let damaged = |why: String| Lookup::Damaged(format!("{}: {why}", path.display()));
        let text = match read_bounded(&path) {
            Ok(Some(text)) => text,
            Ok(None) => return Lookup::Miss,
            Err(why) => return damaged(self.folder_problem().unwrap_or(why)),
        };
        match decode(&text) {
            Ok((stored, winner)) if stored == *key => Lookup::Hit(winner),
            // Another key with the same hash: not ours, and not damaged.
            Ok(_) => Lookup::Miss,
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
        if let Some(shared) = self.shared.as_deref().filter(|s| !s.read_only) {
            // Best effort: a shared folder that cannot be written costs the fleet a tuning run,
            // never this program its result.
            let _ = shared.cache.put_local(key, winner);
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
        let path = self.path(key);
        let tmp = self.dir.join(temp_name(&path));
        let written = write_new(&tmp, text.as_bytes()).and_then(|()| replace(&tmp, &path));
        if written.is_err() {
            // Best effort: the error that matters is the one returned.
            let _ = fs::remove_file(&tmp);
        }
        written.map_err(located)
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

/// The file's text; `None` when there is no file. `Err` says why it cannot be read as a result.
fn read_bounded(path: &Path) -> Result<Option<String>, String> {
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
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    String::from_utf8(bytes).map(Some).map_err(|_| "not UTF-8 text".to_string())
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

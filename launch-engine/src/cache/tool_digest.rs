//! A tool's part of a cache key: the SHA-256 of its bytes, so that two installs of the same
//! toolchain (another folder, another day, another machine) give the same keys, and a changed
//! byte gives others.
//!
//! Hashing NVRTC (about 100 MB) and ptxas (35 MB) takes 3 s in a build script (build scripts and
//! their dependencies are compiled without optimisation: 0.2 s optimised), so a digest is
//! memoised by the file's (path, size, modification time): in this process, and across builds in
//! `<cache root>/tool-digests.tsv` (a line per tool: `sha256-hex TAB size TAB mtime-ns TAB path`),
//! written whole with [`out::write_atomically`]. The memo only saves the reading: a tool replaced
//! in place changes its size or time and is hashed again. A missing, damaged or unreadable memo
//! file means "no memo"; two builds writing it at once lose one line at worst.
//!
//! A tool installed from a pip wheel (the pinned toolchains) is not even read the first time: the
//! wheel's `*.dist-info/RECORD` beside it lists the SHA-256 of each of its files, which is the
//! same digest, taken when the file's size matches the one RECORD gives ([`from_record`]).

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::out;

/// The memo file's name, in the cache root.
pub const MEMO_FILE: &str = "tool-digests.tsv";

/// The largest memo file read; a larger one is no memo.
const MAX_MEMO: u64 = 1 << 20;

/// At most this many tools are remembered in the file (a few per toolchain); past it, the file
/// starts again from the tool just hashed.
const MAX_TOOLS: usize = 256;

/// What a memoised digest is valid for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Stamp {
    pub(super) path: PathBuf,
    pub(super) size: u64,
    pub(super) mtime_ns: u128,
}

type Memo = HashMap<Stamp, [u8; 32]>;

/// The memo file of digests taken by reading the bytes, never from a RECORD
/// ([`read_digest`]: what a toolchain's files are checked with).
pub const READ_MEMO_FILE: &str = "tool-checks.tsv";

/// The in-process memo: every build of a process (a test binary, `cargo launch`) shares it.
fn process_memo() -> &'static Mutex<Memo> {
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    MEMO.get_or_init(Mutex::default)
}

/// The in-process memo of [`read_digest`].
fn read_memo_of_process() -> &'static Mutex<Memo> {
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    MEMO.get_or_init(Mutex::default)
}

/// The SHA-256 of the bytes of the file at `path` (links followed), memoised in this process
/// and, with `memo_dir` (the cache root), in its [`MEMO_FILE`]. A file that cannot be read
/// hashes as its error text: the compile that uses it fails anyway.
pub fn tool_digest(path: &Path, memo_dir: Option<&Path>) -> [u8; 32] {
    digest_with(path, memo_dir, process_memo(), Source::RecordOrBytes)
}

/// The SHA-256 of the bytes of the file at `path` as read (never taken from a RECORD: this is
/// what a file is checked against its RECORD with), memoised like [`tool_digest`] in its own
/// [`READ_MEMO_FILE`], so that a build reads a toolchain's files once.
pub fn read_digest(path: &Path, memo_dir: Option<&Path>) -> [u8; 32] {
    digest_with(path, memo_dir, read_memo_of_process(), Source::Bytes)
}

/// What [`digest_with`] may take a digest from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The wheel's RECORD when it lists the file at its size, else the bytes.
    RecordOrBytes,
    /// The bytes only.
    Bytes,
}

fn digest_with(path: &Path, memo_dir: Option<&Path>, memory: &Mutex<Memo>, source: Source) -> [u8; 32] {
    let unreadable = |e: io::Error| -> [u8; 32] { Sha256::digest(format!("unreadable: {e}").as_bytes()).into() };
    let stamp = match stamp_of(path) {
        Ok(s) => s,
        Err(e) => return unreadable(e),
    };
    let lock = || memory.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = lock().get(&stamp) {
        return *d;
    }
    let name = if source == Source::Bytes { READ_MEMO_FILE } else { MEMO_FILE };
    let file = memo_dir.map(|d| d.join(name));
    let mut memo = file.as_deref().map(read_memo).unwrap_or_default();
    if let Some(d) = memo.get(&stamp) {
        lock().insert(stamp, *d);
        return *d;
    }
    let recorded = if source == Source::Bytes { None } else { from_record(path, stamp.size) };
    let digest = match recorded.map_or_else(|| hash_file(path), Ok) {
        Ok(d) => d,
        Err(e) => return unreadable(e),
    };
    // A file replaced while it was read: its digest is right for no stamp, so it is not kept.
    if stamp_of(path).ok().as_ref() != Some(&stamp) {
        return digest;
    }
    lock().insert(stamp.clone(), digest);
    if let Some(file) = file {
        if memo.len() >= MAX_TOOLS {
            memo.clear();
        }
        memo.insert(stamp, digest);
        // Best effort: without the file the next build hashes again, nothing worse.
        let _ = fs::create_dir_all(file.parent().unwrap_or(Path::new("."))).and_then(|()| write_memo(&file, &memo));
    }
    digest
}

pub(super) fn stamp_of(path: &Path) -> io::Result<Stamp> {
    let meta = fs::metadata(path)?;
    let mtime_ns = meta.modified()?.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    Ok(Stamp { path: path.to_path_buf(), size: meta.len(), mtime_ns })
}

fn hash_file(path: &Path) -> io::Result<[u8; 32]> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(hasher.finalize().into());
        }
        hasher.update(&buf[..n]);
    }
}

/// How many folders above a file are searched for the wheel's `*.dist-info` (a wheel's tools are
/// two or three levels below it, `nvidia/cuda_nvcc/bin/ptxas`; CCCL's headers five,
/// `nvidia/cuda_cccl/include/cuda/std/version`).
const RECORD_LEVELS: usize = 8;

/// The largest RECORD read.
const MAX_RECORD: u64 = 8 << 20;

/// The SHA-256 of the file at `path` as the RECORD of the pip wheel that installed it says, when
/// one of the `*.dist-info` folders up to [`RECORD_LEVELS`] above it lists `path` (relative to
/// that folder's parent) with `size` bytes.
fn from_record(path: &Path, size: u64) -> Option<[u8; 32]> {
    recorded(path).filter(|(_, listed)| *listed == size).map(|(digest, _)| digest)
}

/// The SHA-256 and size the RECORD of the pip wheel that installed the file at `path` lists for
/// it (a `*.dist-info` folder up to [`RECORD_LEVELS`] above it, `path` relative to its parent);
/// `None` when no RECORD lists it.
pub fn recorded(path: &Path) -> Option<([u8; 32], u64)> {
    for top in path.ancestors().skip(1).take(RECORD_LEVELS) {
        let Ok(rel) = path.strip_prefix(top) else { continue };
        let rel: Vec<&str> = rel.iter().map(|c| c.to_str()).collect::<Option<_>>()?;
        let prefix = format!("{},sha256=", rel.join("/"));
        let Ok(dir) = fs::read_dir(top) else { continue };
        for e in dir.flatten() {
            if !e.file_name().to_string_lossy().ends_with(".dist-info") {
                continue;
            }
            let Some(bytes) = super::read_entry_limited(&e.path().join("RECORD"), MAX_RECORD) else { continue };
            let text = String::from_utf8_lossy(&bytes);
            let Some(line) = text.lines().find(|l| l.starts_with(&prefix)) else { continue };
            let (b64, listed) = line[prefix.len()..].split_once(',')?;
            return Some((from_base64url(b64)?, listed.trim().parse::<u64>().ok()?));
        }
    }
    None
}

/// 32 bytes from unpadded URL-safe base64 (43 characters), as RECORD writes digests.
fn from_base64url(text: &str) -> Option<[u8; 32]> {
    let value = |c: u8| -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        }))
    };
    let text = text.trim_end_matches('=').as_bytes();
    if text.len() != 43 {
        return None;
    }
    let mut out = Vec::with_capacity(33);
    for chunk in text.chunks(4) {
        let mut acc = 0u32;
        for &c in chunk {
            acc = acc << 6 | value(c)?;
        }
        // A last chunk of 3 characters holds 18 bits: 2 bytes and 2 zero bits.
        let bytes = acc.to_be_bytes();
        match chunk.len() {
            4 => out.extend_from_slice(&bytes[1..]),
            3 => out.extend_from_slice(&(acc >> 2).to_be_bytes()[2..]),
            _ => return None,
        }
    }
    out.try_into().ok()
}

/// The memo file's lines; anything that does not parse is skipped, a file that cannot be read is
/// empty.
fn read_memo(file: &Path) -> Memo {
    let Some(bytes) = super::read_entry_limited(file, MAX_MEMO) else { return Memo::new() };
    String::from_utf8_lossy(&bytes).lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<(Stamp, [u8; 32])> {
    let mut parts = line.splitn(4, '\t');
    let (hex, size, mtime, path) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let digest = from_hex(hex)?;
    let stamp = Stamp { path: PathBuf::from(path), size: size.parse().ok()?, mtime_ns: mtime.parse().ok()? };
    Some((stamp, digest))
}

fn from_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

fn write_memo(file: &Path, memo: &Memo) -> io::Result<()> {
    let mut lines: Vec<String> = memo
        .iter()
        .filter_map(|(s, d)| {
            let path = s.path.to_str().filter(|p| !p.contains(['\n', '\r']))?;
            let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
            Some(format!("{hex}\t{}\t{}\t{path}\n", s.size, s.mtime_ns))
        })
        .collect();
    lines.sort();
    out::write_atomically(file, lines.concat().as_bytes())
}

#[cfg(test)]
mod tests;

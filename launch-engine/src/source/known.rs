//! What the build knows of each header by its version (path, size, modification time, inode):
//! its `#include` directives and the SHA-256 of its bytes. Each version is read once per process,
//! and a build script remembers them across builds in one file ([`remember_in`]): a rerun then
//! scans and hashes none of the thousand toolkit headers behind `<cub/cub.cuh>` again (issue 32,
//! class 10; they were 90% of a kept rerun's time on mistralrs-quant).
//!
//! A version modified less than [`SETTLED`] before it is written to the file is not written: the
//! file clock ticks in milliseconds, and a second edit within the tick that keeps the size would
//! keep the version (git's "racy" entries). Such a header is read again by the next build.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::input;
use crate::out;

/// How long after its last modification a version is trusted to stay what it is.
const SETTLED: Duration = Duration::from_secs(2);

/// The memo file's layout; another first line is no memo.
const FORMAT: &str = "launch-headers-1";

/// The largest memo file read; a larger one is no memo.
const MAX_MEMO: u64 = 64 << 20;

/// One `#include` of a file: its line (0-based), the column of its `#`, the name it writes and
/// whether it was quoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Directive {
    pub index: usize,
    pub col: u32,
    pub name: String,
    pub quoted: bool,
}

/// A file's version: size, modification time (ns since the epoch) and inode.
type Version = (u64, u128, u64);

#[derive(Clone, Debug)]
struct Known {
    version: Version,
    digest: [u8; 32],
    directives: Arc<Vec<Directive>>,
}

#[derive(Default)]
struct Memo {
    files: HashMap<PathBuf, Known>,
    /// Where it is remembered across builds, once [`remember_in`] named it.
    file: Option<PathBuf>,
    /// Learnt since it was read.
    changed: bool,
}

fn memo() -> std::sync::MutexGuard<'static, Memo> {
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    MEMO.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner())
}

fn version(path: &Path) -> Option<Version> {
    let meta = fs::metadata(path).ok()?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let ino = 0;
    Some((meta.len(), mtime, ino))
}

/// What is known of `path` as it is now: from the memo, else read (through [`input::read`]) and
/// remembered. `None` when it cannot be read.
fn known(path: &Path) -> Option<Known> {
    let version = version(path)?;
    if let Some(k) = memo().files.get(path).filter(|k| k.version == version) {
        return Some(k.clone());
    }
    let bytes = input::read(path).ok()?;
    let known = Known { version, digest: Sha256::digest(&bytes).into(), directives: Arc::new(parse(&bytes)) };
    // Changed while it was read: right for no version.
    if self::version(path) == Some(version) {
        let mut m = memo();
        m.files.insert(path.to_path_buf(), known.clone());
        m.changed = true;
    }
    Some(known)
}

/// The `#include` directives of the file at `path` (see [`includes`]); `None`
/// when it cannot be read.
pub(crate) fn directives(path: &Path) -> Option<Arc<Vec<Directive>>> {
    known(path).map(|k| k.directives)
}

/// The SHA-256 of `path`'s bytes; `None` when it cannot be read.
pub(crate) fn digest(path: &Path) -> Option<[u8; 32]> {
    known(path).map(|k| k.digest)
}

/// `#include "x"` / `#include <x>` targets of one file, with whether they were quoted. Headers are
/// read as they are on disk, so LF, CRLF and lone CR all end a line, and a byte-order mark at the
/// start is skipped (as `decode` does for kernel files).
pub fn includes(src: &str) -> Vec<(String, bool)> {
    src.strip_prefix('\u{feff}')
        .unwrap_or(src)
        .split(['\n', '\r'])
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?.trim_start();
            let (close, quoted) = match rest.chars().next()? {
                '"' => ('"', true),
                '<' => ('>', false),
                _ => return None,
            };
            let inner = &rest[1..];
            let end = inner.find(close)?;
            Some((inner[..end].to_string(), quoted))
        })
        .collect()
}

fn parse(bytes: &[u8]) -> Vec<Directive> {
    let text = String::from_utf8_lossy(bytes);
    let mut found = Vec::new();
    // A header with lone CR line ends is one `lines()` line: each of its includes counts.
    for (index, line) in text.lines().enumerate().filter(|(_, l)| l.contains('#')) {
        for (name, quoted) in includes(line).into_iter().filter(|(n, _)| !n.is_empty()) {
            let col = line.find('#').map_or(1, |c| c as u32 + 1);
            found.push(Directive { index, col, name, quoted });
        }
    }
    found
}

/// Remembers what is learnt across builds in `file` (the build's `OUT_DIR/launch/work/`), reading
/// what earlier builds left there first. Once per process; a missing or damaged file is no memo.
pub(crate) fn remember_in(file: &Path) {
    let mut m = memo();
    if m.file.is_some() {
        return;
    }
    m.file = Some(file.to_path_buf());
    let Ok(meta) = fs::metadata(file) else { return };
    if meta.len() > MAX_MEMO {
        return;
    }
    let Ok(text) = fs::read_to_string(file) else { return };
    let mut lines = text.lines();
    if lines.next() != Some(FORMAT) {
        return;
    }
    for line in lines {
        if let Some((path, k)) = read_line(line) {
            m.files.entry(path).or_insert(k);
        }
    }
}

/// Writes the memo's file when something was learnt (best effort: without it the next build
/// reads the headers again, nothing worse).
pub(crate) fn save() {
    let mut m = memo();
    let (Some(file), true) = (m.file.clone(), m.changed) else { return };
    let settled = SystemTime::now().checked_sub(SETTLED).and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    let Some(settled) = settled.map(|d| d.as_nanos()) else { return };
    let mut text = format!("{FORMAT}\n");
    let mut paths: Vec<&PathBuf> = m.files.keys().collect();
    paths.sort();
    for path in paths {
        let k = &m.files[path];
        if k.version.1 <= settled {
            if let Some(line) = write_line(path, k) {
                text.push_str(&line);
            }
        }
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    if fs::create_dir_all(dir).is_ok() && out::write_atomically(&file, text.as_bytes()).is_ok() {
        m.changed = false;
    }
}

/// `size TAB mtime-ns TAB inode TAB sha256-hex TAB path TAB directives`, each directive
/// `line,col,q,name` (q: 1 quoted, 0 angled), separated by U+001F. `None` for a path or name that
/// holds a separator.
fn write_line(path: &Path, k: &Known) -> Option<String> {
    let path = path.to_str().filter(|p| !p.contains(['\t', '\n', '\r']))?;
    let mut directives = Vec::with_capacity(k.directives.len());
    for d in k.directives.iter() {
        if d.name.contains(['\t', '\n', '\r', '\u{1f}']) {
            return None;
        }
        directives.push(format!("{},{},{},{}", d.index, d.col, u8::from(d.quoted), d.name));
    }
    let hex: String = k.digest.iter().map(|b| format!("{b:02x}")).collect();
    let (size, mtime, ino) = k.version;
    Some(format!("{size}\t{mtime}\t{ino}\t{hex}\t{path}\t{}\n", directives.join("\u{1f}")))
}

fn read_line(line: &str) -> Option<(PathBuf, Known)> {
    let mut parts = line.split('\t');
    let (size, mtime, ino, hex, path, list) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || hex.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (i, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    let mut directives = Vec::new();
    for d in list.split('\u{1f}').filter(|d| !d.is_empty()) {
        let mut f = d.splitn(4, ',');
        let (index, col, quoted, name) = (f.next()?, f.next()?, f.next()?, f.next()?);
        let quoted = match quoted {
            "1" => true,
            "0" => false,
            _ => return None,
        };
        directives.push(Directive {
            index: index.parse().ok()?,
            col: col.parse().ok()?,
            name: name.to_string(),
            quoted,
        });
    }
    let version = (size.parse().ok()?, mtime.parse().ok()?, ino.parse().ok()?);
    Some((PathBuf::from(path), Known { version, digest, directives: Arc::new(directives) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_written_and_a_damaged_one_is_nothing() {
        let k = Known {
            version: (12, 1_700_000_000_123_456_789, 42),
            digest: [7; 32],
            directives: Arc::new(vec![
                Directive { index: 3, col: 1, name: "cub/cub.cuh".into(), quoted: false },
                Directive { index: 9, col: 2, name: "a,b.h".into(), quoted: true },
            ]),
        };
        let line = write_line(Path::new("/x/y.cuh"), &k).unwrap();
        let (path, back) = read_line(line.trim_end()).unwrap();
        assert_eq!((path.as_path(), back.version, back.digest), (Path::new("/x/y.cuh"), k.version, k.digest));
        assert_eq!(back.directives, k.directives);
        for bad in ["", "1\t2\t3", &line.replace("\t42\t", "\tx\t"), &line.replace(",1,0,", ",1,2,")] {
            assert!(read_line(bad.trim_end()).is_none(), "{bad:?}");
        }
        let odd = Known { directives: Arc::new(Vec::new()), ..k };
        assert!(write_line(Path::new("/x/a\tb.h"), &odd).is_none());
    }

    #[test]
    fn directives_are_found_on_lines_with_a_hash_only() {
        let found = parse(b"int x; // include <no.h>\n  #  include \"a.h\"\n#include<b.h>\r\n#define X\n");
        let names: Vec<(&str, bool, usize, u32)> =
            found.iter().map(|d| (d.name.as_str(), d.quoted, d.index, d.col)).collect();
        assert_eq!(names, [("a.h", true, 1, 3), ("b.h", false, 2, 1)]);
    }
}

//! `<cache root>/kernel-builds.tsv`: a line per build that went through the local cache (time,
//! package, jobs, from the cache, compiled), read by `cargo launch cache` for the hit rate of the
//! last builds.
//!
//! A build appends one short line in one write (builds appending at once do not interleave);
//! past [`MAX_BYTES`] the file is rewritten with its last [`KEEP`] lines (written whole and
//! renamed; two builds trimming at once may lose a line). Like the compile times it is a record
//! only: a missing or damaged file, or a line that does not parse, is skipped.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::out;

/// The log's name, in the cache root.
pub const FILE: &str = "kernel-builds.tsv";

/// Past this size the log is trimmed.
const MAX_BYTES: u64 = 256 << 10;

/// Lines kept when the log is trimmed.
const KEEP: usize = 1000;

/// One build's use of the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildRecord {
    /// When it ended, seconds since the Unix epoch.
    pub time: u64,
    /// The package built (`CARGO_PKG_NAME`, else the crate folder's name).
    pub package: String,
    /// Its jobs (kernel file × arch).
    pub jobs: u64,
    /// Jobs taken from the cache.
    pub cached: u64,
    /// Jobs compiled (missed, or damaged in the cache).
    pub compiled: u64,
}

impl BuildRecord {
    fn line(&self) -> String {
        let package: String = self.package.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        format!("{}\t{}\t{}\t{}\t{package}\n", self.time, self.jobs, self.cached, self.compiled)
    }

    /// The record a line holds, `None` for a line no build could have written: a field missing
    /// or not a number, jobs that are not the sum of those from the cache and those compiled, a
    /// time before [`EARLIEST`] or more than a day ahead of `now` (seconds since the epoch).
    fn parse(line: &str, now: u64) -> Option<BuildRecord> {
        let mut parts = line.splitn(5, '\t');
        let mut number = || parts.next()?.parse::<u64>().ok();
        let (time, jobs, cached, compiled) = (number()?, number()?, number()?, number()?);
        let package = parts.next()?.to_string();
        let possible =
            cached.checked_add(compiled) == Some(jobs) && (EARLIEST..=now.saturating_add(86_400)).contains(&time);
        possible.then_some(BuildRecord { time, package, jobs, cached, compiled })
    }
}

/// No build was logged before this time (2020-01-01, seconds since the epoch): an earlier one is
/// a damaged line (a build "in 1970").
const EARLIEST: u64 = 1_577_836_800;

/// What [`read_counted`] found in the log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log {
    /// The records, oldest first.
    pub records: Vec<BuildRecord>,
    /// Lines that hold no record a build could have written (blank lines aside): skipped.
    pub skipped: usize,
}

/// Appends `record` to the log in `root` (created with the root).
///
/// # Errors
/// When the log cannot be written; the build goes on (it is a record only).
pub fn append(root: &Path, record: &BuildRecord) -> io::Result<()> {
    fs::create_dir_all(root)?;
    let path = root.join(FILE);
    // A link or a FIFO in its place is not written through.
    if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut file = fs::File::options().create(true).append(true).open(&path)?;
    file.write_all(record.line().as_bytes())?;
    if file.metadata()?.len() > MAX_BYTES {
        let all = read(root);
        let kept: String = all[all.len().saturating_sub(KEEP)..].iter().map(BuildRecord::line).collect();
        out::write_atomically(&path, kept.as_bytes())?;
    }
    Ok(())
}

/// Every record in the log in `root`, oldest first; none when there is no readable log.
pub fn read(root: &Path) -> Vec<BuildRecord> {
    read_counted(root).records
}

/// Every record in the log in `root`, oldest first, and how many lines were skipped as damaged.
pub fn read_counted(root: &Path) -> Log {
    let Some(bytes) = super::read_entry_limited(&root.join(FILE), 4 * MAX_BYTES) else { return Log::default() };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut log = Log::default();
    for line in String::from_utf8_lossy(&bytes).lines().filter(|l| !l.trim().is_empty()) {
        match BuildRecord::parse(line, now) {
            Some(r) => log.records.push(r),
            None => log.skipped += 1,
        }
    }
    log
}

/// The log's file in the cache root `root`.
pub fn path(root: &Path) -> PathBuf {
    root.join(FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: u64) -> BuildRecord {
        BuildRecord {
            time: 1_700_000_000 + i,
            package: format!("crate-{i}"),
            jobs: 6,
            cached: i % 7,
            compiled: 6 - i % 7,
        }
    }

    #[test]
    fn records_are_read_back_in_order_and_bad_lines_skipped() {
        let root = tempfile::tempdir().unwrap();
        assert!(read(root.path()).is_empty());
        append(root.path(), &record(1)).unwrap();
        fs::OpenOptions::new()
            .append(true)
            .open(root.path().join(FILE))
            .unwrap()
            .write_all(b"garbage\n1\t2\n")
            .unwrap();
        let odd = BuildRecord { package: "tab\there\nand newline".into(), ..record(2) };
        append(root.path(), &odd).unwrap();
        let back = read(root.path());
        assert_eq!(back.len(), 2, "{back:?}");
        assert_eq!(back[0], record(1));
        assert_eq!(back[1].package, "tab here and newline");
        assert_eq!(back[1].compiled, odd.compiled);
    }

    /// Issue 32, class 8: a line no build could have written is skipped (and counted), never
    /// read into impossible statistics ("100% of 3 jobs from the cache, 5 compiled", a build in
    /// 1970): each kind of bad line between two good ones.
    #[test]
    fn every_kind_of_impossible_line_is_skipped() {
        let bad: &[(&str, &[u8])] = &[
            ("not a number", b"garbage\n"),
            ("too few fields", b"1700000000\t2\n"),
            ("no package field", b"1700000000\t3\t3\t0\n"),
            ("a negative count", b"1700000000\t3\t-1\t4\tp\n"),
            ("more from the cache than jobs", b"1700000000\t3\t5\t0\tp\n"),
            ("cached + compiled above jobs", b"1700000000\t3\t3\t5\tp\n"),
            ("cached + compiled below jobs", b"1700000000\t6\t1\t2\tp\n"),
            ("a count that overflows", b"1700000000\t3\t18446744073709551615\t4\tp\n"),
            ("a build in 1970", b"0\t3\t3\t0\tp\n"),
            ("a build far ahead", b"99999999999\t3\t3\t0\tp\n"),
            ("bytes that are not text", b"\xff\xfe\t\x00\n"),
        ];
        let mut wrong = Vec::new();
        for (what, line) in bad {
            let root = tempfile::tempdir().unwrap();
            append(root.path(), &record(1)).unwrap();
            fs::OpenOptions::new().append(true).open(root.path().join(FILE)).unwrap().write_all(line).unwrap();
            append(root.path(), &record(2)).unwrap();
            let back = read(root.path());
            if back != [record(1), record(2)] {
                wrong.push(format!("{what}: {back:?}"));
            }
        }
        assert!(wrong.is_empty(), "{} of {} bad lines read as records:\n{}", wrong.len(), bad.len(), wrong.join("\n"));
    }

    #[test]
    fn skipped_lines_are_counted_and_blank_ones_ignored() {
        let root = tempfile::tempdir().unwrap();
        append(root.path(), &record(1)).unwrap();
        fs::OpenOptions::new()
            .append(true)
            .open(root.path().join(FILE))
            .unwrap()
            .write_all(b"garbage\n\n0\t3\t3\t0\tp\n")
            .unwrap();
        assert_eq!(read_counted(root.path()), Log { records: vec![record(1)], skipped: 2 });
    }

    #[test]
    fn the_log_is_trimmed_to_its_last_lines() {
        let root = tempfile::tempdir().unwrap();
        let mut i = 0;
        while fs::metadata(root.path().join(FILE)).map_or(0, |m| m.len()) < MAX_BYTES - 64 {
            append(root.path(), &record(i)).unwrap();
            i += 1;
        }
        for _ in 0..3 {
            append(root.path(), &record(i)).unwrap();
            i += 1;
        }
        let back = read(root.path());
        assert!(back.len() <= KEEP + 2, "{}", back.len());
        assert_eq!(back.last(), Some(&record(i - 1)));
        assert!(fs::metadata(root.path().join(FILE)).unwrap().len() <= MAX_BYTES);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_its_place_is_not_written_through() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("elsewhere");
        fs::write(&target, "x").unwrap();
        std::os::unix::fs::symlink(&target, root.path().join(FILE)).unwrap();
        assert!(append(root.path(), &record(1)).is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "x");
    }
}

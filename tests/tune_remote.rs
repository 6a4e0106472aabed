//! Issue 21 item 7 without a GPU: the tuner's winners on the remote store, through the tune cache's
//! API (`TuneCache::with_remote`, the cache `launch::cuda::Tuner` reads before any timing run),
//! against the real rclone S3 and WebDAV servers the kernel cache's tests start (`remote_cache`'s
//! [`Server`]). Each "machine" is a `TuneCache` with its own empty local folder; they share one
//! server, and the tests read and damage the server's folder directly.
//!
//! Without the server each test skips, saying why (`LAUNCH_TEST_REQUIRE_SERVERS=1` makes it fail).
#![cfg(unix)]

use std::fs;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use launch::remote::{Mode, RemoteConfig, RemoteStore, RemoteUrl};
use launch::tune::{DeviceKey, Miss, TuneCache, TuneKey, Winner, MAX_FILE_BYTES};

use crate::remote_cache::{rclone, Kind, Server, KEY_ID, SECRET};

/// The S3 client reads its credentials from the AWS variables (as in a fleet), set once for this
/// test binary: the servers the tests start take these and no others. No instance-metadata
/// lookups from a test.
fn aws_credentials() {
    static SET: Once = Once::new();
    SET.call_once(|| {
        std::env::set_var("AWS_ACCESS_KEY_ID", KEY_ID);
        std::env::set_var("AWS_SECRET_ACCESS_KEY", SECRET);
        std::env::set_var("AWS_EC2_METADATA_DISABLED", "true");
    });
}

/// The whole key of a tuning result: the kernel's and the variant set's hashes, the device and
/// driver, the problem.
fn key(problem: &str) -> TuneKey {
    TuneKey {
        kernel: 0x41d5_3467_8ce2_6d93,
        variants: 0x0123_4567_89ab_cdef,
        device: DeviceKey { name: "NVIDIA H200".into(), compute_capability: (9, 0), driver_version: 13000 },
        problem: problem.into(),
    }
}

fn winner(variant: &str) -> Winner {
    Winner {
        variant: variant.into(),
        median_ms: 0.059,
        min_ms: 0.0588,
        max_ms: 0.0673,
        repetitions: 10,
        measured_at: 1_796_000_000,
    }
}

type Warnings = Arc<Mutex<Vec<String>>>;

/// A machine: its own empty local tune folder, the remote `url` behind it.
struct Machine {
    local: tempfile::TempDir,
    cache: TuneCache,
    warnings: Warnings,
}

impl Machine {
    fn new(url: &str, mode: Mode, timeout_s: u64) -> Machine {
        aws_credentials();
        let local = tempfile::tempdir().unwrap();
        let warnings = Warnings::default();
        let sink = warnings.clone();
        let config = RemoteConfig {
            url: RemoteUrl::parse(url).unwrap(),
            mode,
            timeout: Duration::from_secs(timeout_s),
            source: "test".into(),
        };
        let store = RemoteStore::open(config, move |w: &str| sink.lock().unwrap().push(w.to_string()));
        let cache = TuneCache::new(local.path()).with_remote(store);
        Machine { local, cache, warnings }
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.lock().unwrap().clone()
    }

    /// What its local folder alone answers.
    fn local_only(&self, key: &TuneKey) -> Result<Winner, Miss> {
        TuneCache::new(self.local.path()).get(key)
    }
}

/// `url` for `kind`'s server with a region (the tests' AWS variables name none).
fn url_of(server: &Server, kind: Kind) -> String {
    match kind {
        Kind::S3 => format!("{}&region=us-east-1", server.url(kind)),
        Kind::Webdav => server.url(kind),
    }
}

/// The server's folder for the tune entries under the URL's path.
fn tune_dir(server: &Server, kind: Kind) -> PathBuf {
    match kind {
        Kind::S3 => server.data.path().join("fleet/team/tune"),
        Kind::Webdav => server.data.path().join("team/tune"),
    }
}

fn tune_files(server: &Server, kind: Kind) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        fs::read_dir(tune_dir(server, kind)).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    files.sort();
    files
}

/// Machine A tunes (stores its winner: local and server); machine B, with an empty local cache,
/// gets the winner from the server before any timing run, verified and copied into its local
/// folder; a read-only machine's own winners never reach the server.
fn a_winner_travels(kind: Kind) {
    let Some(rclone) = rclone() else { return };
    let server = Server::start(&rclone, kind);
    let url = url_of(&server, kind);

    let a = Machine::new(&url, Mode::ReadWrite, 5);
    assert_eq!(a.cache.get(&key("n=2^20")), Err(Miss::NotStored), "an empty server");
    a.cache.put(&key("n=2^20"), &winner("poly_eval__t256_r128")).unwrap();
    let on_server = tune_files(&server, kind);
    assert_eq!(on_server.len(), 1, "{on_server:?}");
    let name = on_server[0].file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(name, format!("{:016x}.tune", key("n=2^20").hash()), "the local folder's file name");
    assert_eq!(fs::read(&on_server[0]).unwrap(), fs::read(a.cache.path(&key("n=2^20"))).unwrap());
    let used = a.cache.remote().unwrap().usage();
    assert_eq!((used.writes, used.bytes_written), (1, fs::metadata(&on_server[0]).unwrap().len()));

    let b = Machine::new(&url, Mode::ReadOnly, 5);
    assert_eq!(b.local_only(&key("n=2^20")), Err(Miss::NotStored), "B starts empty");
    assert_eq!(b.cache.get(&key("n=2^20")), Ok(winner("poly_eval__t256_r128")));
    assert_eq!(b.local_only(&key("n=2^20")), Ok(winner("poly_eval__t256_r128")), "copied local");
    assert_eq!(b.cache.remote().unwrap().usage().hits, 1);

    // Read-only: B's own winner for another problem stays on B.
    b.cache.put(&key("n=2^24"), &winner("poly_eval")).unwrap();
    assert_eq!(tune_files(&server, kind).len(), 1, "a read-only machine wrote to the server");
    assert_eq!(b.local_only(&key("n=2^24")), Ok(winner("poly_eval")));
    assert_eq!(b.cache.remote().unwrap().usage().writes, 0);

    // The key is whole: another driver (or device, or variant set) is a miss, never A's winner.
    let mut other_driver = key("n=2^20");
    other_driver.device.driver_version = 12090;
    let c = Machine::new(&url, Mode::ReadWrite, 5);
    assert_eq!(c.cache.get(&other_driver), Err(Miss::NotStored));
    let mut other_variants = key("n=2^20");
    other_variants.variants ^= 1;
    assert_eq!(c.cache.get(&other_variants), Err(Miss::NotStored));
    assert!(a.warnings().is_empty() && b.warnings().is_empty() && c.warnings().is_empty());
}

#[test]
fn s3_a_winner_one_machine_stored_is_another_ones_before_any_timing_and_read_only_writes_nothing() {
    a_winner_travels(Kind::S3);
}

#[test]
fn webdav_a_winner_one_machine_stored_is_another_ones_before_any_timing_and_read_only_writes_nothing() {
    a_winner_travels(Kind::Webdav);
}

/// A damaged entry on the server (one byte changed; an entry for another key under this key's
/// name; an object far larger than any entry) is a miss, never a winner and never copied local;
/// the next read-write machine's winner replaces it.
fn a_damaged_entry_is_a_miss(kind: Kind) {
    let Some(rclone) = rclone() else { return };
    let server = Server::start(&rclone, kind);
    let url = url_of(&server, kind);
    let a = Machine::new(&url, Mode::ReadWrite, 5);
    a.cache.put(&key("n=2^20"), &winner("poly_eval__t256_r128")).unwrap();
    let file = tune_files(&server, kind).pop().unwrap();
    let good = fs::read(&file).unwrap();

    let mut flipped = good.clone();
    let at = good.iter().position(|&b| b == b'_').unwrap();
    flipped[at] = b'-';
    let mut other = key("n=2^20");
    other.device.name = "NVIDIA H100".into();
    let other_machine = tempfile::tempdir().unwrap();
    TuneCache::new(other_machine.path()).put(&other, &winner("poly_eval")).unwrap();
    let other_bytes = fs::read(TuneCache::new(other_machine.path()).path(&other)).unwrap();
    let huge = vec![b'x'; MAX_FILE_BYTES as usize + 1];
    // Written through the server, as a forger would (rclone's WebDAV caches what it served, so a
    // file changed behind its back is answered with its old length).
    let forger = Machine::new(&url, Mode::ReadWrite, 5);
    let object = format!("tune/{}", file.file_name().unwrap().to_string_lossy());
    for (what, bytes) in [("one byte changed", flipped), ("another key's entry", other_bytes), ("too large", huge)] {
        forger.cache.remote().unwrap().put(&object, &bytes);
        assert_eq!(fs::read(&file).unwrap(), bytes, "{what}: on the server");
        let b = Machine::new(&url, Mode::ReadOnly, 5);
        assert_eq!(b.cache.get(&key("n=2^20")), Err(Miss::NotStored), "{what}");
        assert_eq!(b.local_only(&key("n=2^20")), Err(Miss::NotStored), "{what}: copied local");
        assert_eq!(b.cache.remote().unwrap().usage().hits, 0, "{what}");
        assert!(b.warnings().is_empty(), "{what}: damage is a miss, not the server's failure: {:?}", b.warnings());
    }
    let c = Machine::new(&url, Mode::ReadWrite, 5);
    assert_eq!(c.cache.get(&key("n=2^20")), Err(Miss::NotStored));
    c.cache.put(&key("n=2^20"), &winner("poly_eval__t256_r255")).unwrap();
    let d = Machine::new(&url, Mode::ReadOnly, 5);
    assert_eq!(d.cache.get(&key("n=2^20")), Ok(winner("poly_eval__t256_r255")));
}

#[test]
fn s3_a_damaged_entry_on_the_server_is_a_miss_and_the_next_winner_replaces_it() {
    a_damaged_entry_is_a_miss(Kind::S3);
}

#[test]
fn webdav_a_damaged_entry_on_the_server_is_a_miss_and_the_next_winner_replaces_it() {
    a_damaged_entry_is_a_miss(Kind::Webdav);
}

/// The server killed: the next read is a miss with one warning, the local folder works on, and
/// no later read or write asks the server again (each would cost a connection attempt).
#[test]
fn s3_a_server_that_is_down_is_one_warning_and_the_local_cache_works_on() {
    let Some(rclone) = rclone() else { return };
    let kind = Kind::S3;
    let mut server = Server::start(&rclone, kind);
    let url = url_of(&server, kind);
    let a = Machine::new(&url, Mode::ReadWrite, 5);
    a.cache.put(&key("n=2^20"), &winner("poly_eval")).unwrap();
    server.kill();

    let b = Machine::new(&url, Mode::ReadWrite, 5);
    let started = Instant::now();
    assert_eq!(b.cache.get(&key("n=2^20")), Err(Miss::NotStored));
    for i in 0..5 {
        let k = key(&format!("n=2^{i}"));
        b.cache.put(&k, &winner("poly_eval")).unwrap();
        assert_eq!(b.cache.get(&k), Ok(winner("poly_eval")), "the local folder answers");
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}");
    let warnings = b.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(b.cache.remote().unwrap().usage().failed);
    eprintln!("server down: 1 miss, 5 local writes and reads in {took:?}; the warning: {}", warnings[0]);
}

/// A server that accepts connections and never answers: the first read waits for the timeout
/// once (2 s), then the remote is off and the rest is local.
#[test]
fn a_server_that_never_answers_costs_one_timeout() {
    if rclone().is_none() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().take(64) {
            held.push(s);
        }
    });
    for url in [
        format!("s3://fleet/team?endpoint=http://127.0.0.1:{port}&region=us-east-1"),
        format!("webdav+http://127.0.0.1:{port}/team"),
    ] {
        let m = Machine::new(&url, Mode::ReadWrite, 2);
        let started = Instant::now();
        assert_eq!(m.cache.get(&key("n=2^20")), Err(Miss::NotStored));
        let first = started.elapsed();
        m.cache.put(&key("n=2^20"), &winner("poly_eval")).unwrap();
        assert_eq!(m.cache.get(&key("n=2^20")), Ok(winner("poly_eval")));
        let all = started.elapsed();
        assert!(first >= Duration::from_secs(2) && first < Duration::from_secs(4), "{url}: first read took {first:?}");
        assert!(all - first < Duration::from_millis(500), "{url}: after the timeout the server is left alone: {all:?}");
        let warnings = m.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:#?}");
        assert!(warnings[0].contains("within 2s"), "{}", warnings[0]);
        eprintln!("{url}: first read {first:?} (timeout 2 s), then local; the warning: {}", warnings[0]);
    }
}

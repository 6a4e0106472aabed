use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use launch_remote::Failure;

use super::*;
use crate::cache::{encode, Cache, Entry, Lookup, Source};

thread_local! {
    static WARNINGS: Cell<usize> = const { Cell::new(0) };
}

/// Counts the warnings of the test's own thread (every call here is on it).
fn count_warning(_: &str) {
    WARNINGS.with(|w| w.set(w.get() + 1));
}

fn warnings() -> usize {
    WARNINGS.with(Cell::get)
}

fn config(url: RemoteUrl, mode: Mode) -> RemoteConfig {
    RemoteConfig { url, mode, timeout: DEFAULT_TIMEOUT, source: "test".into() }
}

fn entry(tag: &str) -> Entry {
    Entry {
        ptx: format!("ptx {tag}"),
        cubin: vec![1, 2, 3],
        ptxas_log: "log".into(),
        nvrtc_log: String::new(),
        probes: String::new(),
    }
}

/// A local cache in `dir/local` with a `file://` remote in `dir/remote`.
fn tiered(dir: &Path, mode: Mode) -> Cache {
    let remote = Remote::open(config(RemoteUrl::Folder(dir.join("remote")), mode), count_warning);
    Cache::new(dir.join("local/kernels")).with_remote(remote)
}

fn remote_file(dir: &Path, key: &Key) -> std::path::PathBuf {
    dir.join("remote").join(Remote::object(key))
}

#[test]
fn a_remote_hit_is_verified_copied_local_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let key = Key([7; 32]);
    // Another builder filled the remote.
    tiered(&dir.path().join("other"), Mode::ReadWrite).store(&key, &entry("a")).unwrap();
    std::fs::rename(dir.path().join("other/remote"), dir.path().join("remote")).unwrap();

    let cache = tiered(dir.path(), Mode::ReadWrite);
    let (lookup, source) = cache.load_traced(&key);
    assert!(matches!(lookup, Lookup::Hit(e) if e == entry("a")));
    assert_eq!(source, Source::Remote);
    assert_eq!(cache.remote().unwrap().usage().hits, 1);
    // Copied into the local folder: the next lookup is local.
    assert!(cache.entry_path(&key).is_file());
    assert_eq!(cache.load_traced(&key).1, Source::Local);
    assert_eq!(warnings(), 0);
}

#[test]
fn a_damaged_remote_entry_is_a_miss_and_the_next_store_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let key = Key([9; 32]);
    let file = remote_file(dir.path(), &key);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    // A forged entry: right magic, format and key, wrong checksum.
    let mut forged = encode(&key, &entry("evil"));
    let at = forged.len() - 40;
    forged[at] ^= 0xff;
    std::fs::write(&file, &forged).unwrap();

    let cache = tiered(dir.path(), Mode::ReadWrite);
    let Lookup::Corrupt(reason) = cache.load(&key) else { panic!("a forged entry must not load") };
    assert!(reason.contains("checksum") && reason.contains("file://"), "{reason}");
    assert!(!cache.entry_path(&key).exists(), "never copied local");
    cache.store(&key, &entry("good")).unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), encode(&key, &entry("good")));
    assert_eq!(warnings(), 0, "damage is the build's damage warning, not the remote's");
}

#[test]
fn read_only_writes_nothing_and_reads_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tiered(dir.path(), Mode::ReadOnly);
    cache.store(&Key([1; 32]), &entry("x")).unwrap();
    assert!(!dir.path().join("remote").exists(), "a read-only remote got a write");
    assert!(cache.entry_path(&Key([1; 32])).is_file(), "the local folder is written");
    assert_eq!(cache.remote().unwrap().usage().writes, 0);
}

#[test]
fn a_store_writes_local_and_remote() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tiered(dir.path(), Mode::ReadWrite);
    let key = Key([2; 32]);
    cache.store(&key, &entry("y")).unwrap();
    assert!(cache.entry_path(&key).is_file());
    assert_eq!(std::fs::read(remote_file(dir.path(), &key)).unwrap(), encode(&key, &entry("y")));
    let used = cache.remote().unwrap().usage();
    assert_eq!((used.writes, used.bytes_written), (1, encode(&key, &entry("y")).len() as u64));
}

/// A backend that fails every call, and counts them.
struct Down(Arc<AtomicUsize>);

impl Backend for Down {
    fn get(&self, _: &str, _: u64) -> Result<Option<Vec<u8>>, Failure> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Err(Failure::Unavailable("connection refused".into()))
    }
    fn put(&self, _: &str, _: &[u8]) -> Result<(), Failure> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Err(Failure::Unavailable("disk full".into()))
    }
}

#[test]
fn a_failing_remote_is_one_warning_then_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let url = RemoteUrl::parse("webdav+http://127.0.0.1:1/cache").unwrap();
    let remote = Remote::from_backend(config(url, Mode::ReadWrite), Ok(Box::new(Down(calls.clone()))), count_warning);
    let cache = Cache::new(dir.path().join("kernels")).with_remote(remote);
    for i in 0..5 {
        assert!(matches!(cache.load(&Key([i; 32])), Lookup::Miss));
        cache.store(&Key([i; 32]), &entry("z")).unwrap();
    }
    assert_eq!(warnings(), 1);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1, "the server is asked once per build");
    assert!(cache.remote().unwrap().usage().failed);
    // The local folder works on.
    assert!(matches!(cache.load(&Key([3; 32])), Lookup::Hit(_)));
}

#[test]
fn a_store_that_cannot_be_set_up_is_one_warning() {
    let url = RemoteUrl::parse("s3://b/p").unwrap();
    let remote = Remote::from_backend(config(url, Mode::ReadWrite), Err("not compiled in".into()), count_warning);
    assert_eq!(remote.get(&Key([0; 32])), Ok(None));
    remote.put(&Key([0; 32]), b"x");
    assert_eq!(warnings(), 1);
}

#[test]
fn the_remote_is_a_store_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote::open(config(RemoteUrl::Folder(dir.path().to_path_buf()), Mode::ReadWrite), count_warning);
    let only_remote = Cache::with_store(remote);
    only_remote.store(&Key([5; 32]), &entry("r")).unwrap();
    assert!(matches!(only_remote.load(&Key([5; 32])), Lookup::Hit(e) if e == entry("r")));
    assert!(dir.path().join(Remote::object(&Key([5; 32]))).is_file());
    assert_eq!(only_remote.location(), format!("file://{}", dir.path().display()));
}

/// The password of the enumeration below.
const SECRET: &str = "hunter2-launch-secret";

/// A backend whose failures repeat the URL it was given, password and all (an OpenDAL error that
/// passes its request's URL through).
struct Echo(String);

impl Backend for Echo {
    fn get(&self, _: &str, _: u64) -> Result<Option<Vec<u8>>, Failure> {
        Err(Failure::Unavailable(format!("read failed: GET {}/kernels/ab: connection refused", self.0)))
    }
    fn put(&self, _: &str, _: &[u8]) -> Result<(), Failure> {
        Err(Failure::Unavailable(format!("write failed: PUT {}", self.0)))
    }
}

static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn keep_warning(w: &str) {
    WARNED.lock().unwrap().push(w.to_string());
}

/// Issue 32 class 4, the kernel cache's printers: a password in each position a configured URL
/// can hold one (WebDAV userinfo; an S3 endpoint's userinfo and query, as code can build them) ×
/// the remote's `Debug`, its location and an entry's, the build's one warning when the client's
/// error repeats the URL, build-stats.json's `remote.url` and the `LAUNCH_BUILD_DEBUG` summary.
#[test]
fn no_kernel_cache_printer_shows_a_password() {
    let urls = [
        (
            RemoteUrl::parse(&format!("webdav+https://ci:{SECRET}@dav.test:8443/kernels")).unwrap(),
            format!("webdav+https://ci:{SECRET}@dav.test:8443/kernels"),
        ),
        (
            RemoteUrl::S3 {
                bucket: "fleet".into(),
                prefix: "team".into(),
                endpoint: Some(format!("http://key:{SECRET}@127.0.0.1:9")),
                region: None,
            },
            format!("http://key:{SECRET}@127.0.0.1:9"),
        ),
        (
            RemoteUrl::S3 {
                bucket: "fleet".into(),
                prefix: "team".into(),
                endpoint: Some(format!("http://127.0.0.1:9?token={SECRET}")),
                region: Some("auto".into()),
            },
            format!("http://127.0.0.1:9?token={SECRET}"),
        ),
    ];
    let (mut cases, mut shown) = (0, Vec::new());
    for (url, raw) in urls {
        WARNED.lock().unwrap().clear();
        let remote = Remote::from_backend(config(url, Mode::ReadWrite), Ok(Box::new(Echo(raw.clone()))), keep_warning);
        let key = Key([7; 32]);
        let mut printed = vec![
            ("Debug of the remote", format!("{remote:?}")),
            ("the remote's location", Store::location(&remote)),
            ("an entry's location", remote.entry_location(&key)),
        ];
        assert_eq!(remote.get(&key), Ok(None));
        printed.push(("the build's warning", WARNED.lock().unwrap().join("\n")));
        let mut stats = crate::compile::stats::counts(4, 4, 0, None, &crate::compile::scheduler::Tokens::Serial, 0);
        crate::compile::stats::add_remote(&mut stats, Some(&remote), Vec::new());
        printed.push(("build-stats.json", serde_json::to_string(&stats).unwrap()));
        printed.push(("the build summary", crate::compile::stats::summary(&stats)));
        for (printer, text) in printed {
            cases += 1;
            if text.contains(SECRET) {
                shown.push(format!("{raw} × {printer}: {text}"));
            }
        }
    }
    assert!(shown.is_empty(), "{} of {cases} cases show the password:\n{}", shown.len(), shown.join("\n"));
}

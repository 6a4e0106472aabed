use std::fs;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::*;

use crate::test_dir::TempDir;

fn config(url: RemoteUrl, mode: Mode) -> RemoteConfig {
    RemoteConfig { url, mode, timeout: DEFAULT_TIMEOUT, source: "test".into() }
}

/// A warning sink for one test, and what it got.
fn sink() -> (impl Fn(&str) + Send + Sync + 'static, Arc<Mutex<Vec<String>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let to = got.clone();
    (move |w: &str| to.lock().unwrap().push(w.to_string()), got)
}

#[test]
fn urls_parse_and_never_show_a_password() {
    let s3 = RemoteUrl::parse("s3://team-cache/kernels/v1/?endpoint=http://127.0.0.1:9000&region=auto").unwrap();
    assert_eq!(
        s3,
        RemoteUrl::S3 {
            bucket: "team-cache".into(),
            prefix: "kernels/v1".into(),
            endpoint: Some("http://127.0.0.1:9000".into()),
            region: Some("auto".into()),
        }
    );
    assert_eq!(s3.to_string(), "s3://team-cache/kernels/v1?endpoint=http://127.0.0.1:9000&region=auto");
    let dav = RemoteUrl::parse("webdav+https://ci:s3cret@dav.example:8443/cache/").unwrap();
    assert!(dav.has_password());
    assert_eq!(dav.to_string(), "webdav+https://ci:***@dav.example:8443/cache");
    assert!(!format!("{dav:?}").contains("s3cret"));
    let RemoteUrl::Webdav { endpoint, path, .. } = &dav else { panic!("{dav}") };
    assert_eq!((endpoint.as_str(), path.as_str()), ("https://dav.example:8443", "cache"));
    assert!(!RemoteUrl::parse("webdav+http://ci@h/p").unwrap().has_password());
    assert_eq!(RemoteUrl::parse("file:///srv/cache").unwrap(), RemoteUrl::Folder("/srv/cache".into()));
    for bad in ["s3://", "s3://k:p@b/x", "http://h/p", "file://rel", "s3://b/p?acl=x", "nothing", "webdav+http:///p"] {
        let e = RemoteUrl::parse(bad).unwrap_err();
        assert!(e.contains("expected s3://bucket/prefix"), "{bad}: {e}");
    }
}

#[test]
fn modes_are_rw_or_ro() {
    assert_eq!(Mode::parse(""), Some(Mode::ReadWrite));
    assert_eq!(Mode::parse(" RO "), Some(Mode::ReadOnly));
    assert_eq!(Mode::parse("read-only"), Some(Mode::ReadOnly));
    assert_eq!(Mode::parse("w"), None);
}

#[test]
fn timeouts_are_whole_seconds_from_one_to_a_day() {
    assert_eq!(parse_timeout(" 2 "), Ok(Duration::from_secs(2)));
    assert_eq!(parse_timeout("86400"), Ok(Duration::from_secs(MAX_TIMEOUT_SECS)));
    for bad in ["0", "+5", "1.5", "86401", "", "ten"] {
        let e = parse_timeout(bad).unwrap_err();
        assert!(e.contains("whole seconds from 1 to 86400 (the default is 10)"), "{bad}: {e}");
    }
}

#[test]
fn a_folder_store_writes_whole_objects_and_bounds_its_reads() {
    let dir = TempDir::new("remote");
    let (warn, warnings) = sink();
    let store = RemoteStore::open(config(RemoteUrl::Folder(dir.0.clone()), Mode::ReadWrite), warn);
    assert_eq!(store.get("tune/a.tune", 16), Ok(None));
    store.put("tune/a.tune", b"0123456789");
    assert_eq!(fs::read(dir.0.join("tune/a.tune")).unwrap(), b"0123456789");
    assert_eq!(store.get("tune/a.tune", 10), Ok(Some(b"0123456789".to_vec())));
    // Larger than the caller's bound: damaged, never read whole, and not the store's failure.
    let e = store.get("tune/a.tune", 9).unwrap_err();
    assert!(e.contains("larger than 9 bytes"), "{e}");
    // A folder in an object's place is damaged too.
    fs::create_dir_all(dir.0.join("tune/b.tune")).unwrap();
    assert!(store.get("tune/b.tune", 16).unwrap_err().contains("not a regular file"));
    let used = store.usage();
    assert_eq!((used.writes, used.bytes_written, used.failed), (1, 10, false));
    assert!(warnings.lock().unwrap().is_empty());
    assert_eq!(store.location("tune/a.tune"), format!("file://{}/tune/a.tune", dir.0.display()));
}

#[test]
fn read_only_never_writes() {
    let dir = TempDir::new("remote");
    let (warn, warnings) = sink();
    let store = RemoteStore::open(config(RemoteUrl::Folder(dir.0.join("remote")), Mode::ReadOnly), warn);
    store.put("tune/a.tune", b"x");
    assert!(!dir.0.join("remote").exists(), "a read-only store wrote");
    assert_eq!(store.usage().writes, 0);
    assert!(warnings.lock().unwrap().is_empty());
}

/// A backend that fails every call, and counts them.
struct Down(Arc<AtomicUsize>);

impl Backend for Down {
    fn get(&self, _: &str, _: u64) -> Result<Option<Vec<u8>>, Failure> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(Failure::Unavailable("connection refused".into()))
    }
    fn put(&self, _: &str, _: &[u8]) -> Result<(), Failure> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(Failure::Unavailable("disk full".into()))
    }
}

#[test]
fn a_failing_store_is_one_warning_then_left_alone() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (warn, warnings) = sink();
    let url = RemoteUrl::parse("s3://b/p?endpoint=http://127.0.0.1:1").unwrap();
    let store = RemoteStore::from_backend(config(url, Mode::ReadWrite), Ok(Box::new(Down(calls.clone()))), warn);
    for _ in 0..5 {
        assert_eq!(store.get("tune/x.tune", 100), Ok(None));
        store.put("tune/x.tune", b"x");
    }
    assert_eq!(*warnings.lock().unwrap(), ["connection refused"]);
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the server is asked once per process");
    assert!(store.usage().failed);
}

/// Without the `remote-store` feature an s3:// or webdav store is the one warning, naming the
/// feature; with it the store opens (and the server is only asked on the first operation).
#[test]
fn a_network_store_needs_the_feature_and_says_so() {
    let (warn, warnings) = sink();
    let url = RemoteUrl::parse("webdav+http://127.0.0.1:1/cache").unwrap();
    assert_eq!(url.is_compiled_in(), NETWORK_STORES);
    let store = RemoteStore::open(config(url, Mode::ReadWrite), warn);
    if NETWORK_STORES {
        assert!(warnings.lock().unwrap().is_empty(), "opening asks no server");
        assert!(!store.usage().failed);
    } else {
        let got = warnings.lock().unwrap().clone();
        assert_eq!(got.len(), 1);
        assert!(got[0].contains("`remote-store` feature of the `launch` crate"), "{got:?}");
        assert_eq!(store.get("tune/x.tune", 100), Ok(None));
    }
}

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
    assert_eq!(Mode::parse("RO"), Some(Mode::ReadOnly));
    assert_eq!(Mode::parse("rw"), Some(Mode::ReadWrite));
    // One grammar, exactly as written: empty and padded values are refused (issue 32 class 7).
    for bad in ["", " ", " ro", "ro ", "r o"] {
        assert_eq!(Mode::parse(bad), None, "{bad:?}");
    }
    assert_eq!(Mode::parse("read-only"), Some(Mode::ReadOnly));
    assert_eq!(Mode::parse("w"), None);
}

#[test]
fn timeouts_are_whole_seconds_from_one_to_a_day() {
    assert_eq!(parse_timeout("2"), Ok(Duration::from_secs(2)));
    assert_eq!(parse_timeout("86400"), Ok(Duration::from_secs(MAX_TIMEOUT_SECS)));
    for bad in ["0", "+5", "1.5", "86401", "", "ten", " 2 ", "2 ", "\t2"] {
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

/// Without the `network` feature (`launch`'s `remote-store`) an s3:// or webdav store is the one warning, naming the
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

/// The password every case of the enumeration below hides.
const SECRET: &str = "hunter2-launch-secret";

/// A backend whose every failure repeats the URL it was given, as written, password and all: an
/// OpenDAL error that passes its request's URL through.
struct Echo(String);

impl Backend for Echo {
    fn get(&self, _: &str, _: u64) -> Result<Option<Vec<u8>>, Failure> {
        Err(Failure::Damaged(format!("{} answered 500 for {}/kernels/ab/ab12", self.0, self.0)))
    }
    fn put(&self, _: &str, _: &[u8]) -> Result<(), Failure> {
        Err(Failure::Unavailable(format!("write failed: PUT {} (context: {{ uri: {} }})", self.0, self.0)))
    }
}

/// Issue 32 class 4: a password in each position a URL can hold one (userinfo of a WebDAV URL,
/// of an S3 endpoint, of an s3:// URL; a query parameter of either scheme; valid URLs and ones
/// the grammar refuses) × every printer of `launch-remote` (the URL's `Display` and `Debug`, the
/// configuration's, the store's `Debug`, an entry's location, the store's one warning and a
/// damaged entry's reason when its client's error repeats the URL, the parse error): none shows
/// the password.
#[test]
fn no_printer_shows_a_password_in_any_position() {
    let positions = [
        format!("webdav+https://ci:{SECRET}@dav.test:8443/kernels"),
        format!("webdav+http://ci:{SECRET}@127.0.0.1:1/kernels/"),
        format!("webdav+http://ci:{SECRET}@dav.test:99999/kernels"),
        format!("webdav+http://ci:{SECRET}@/kernels"),
        format!("webdav+https://dav.test/kernels?token={SECRET}"),
        format!("webdav+https://dav.test/kernels?user=ci&password={SECRET}"),
        format!("s3://fleet/team?endpoint=http://key:{SECRET}@127.0.0.1:9"),
        format!("s3://fleet/team?endpoint=http://127.0.0.1:9&secret_access_key={SECRET}"),
        format!("s3://fleet/team?X-Amz-Signature={SECRET}&region=auto"),
        format!("s3://key:{SECRET}@fleet/team"),
        format!("s3://fleet/team?endpoint=ftp://key:{SECRET}@127.0.0.1:9"),
        format!("s3://fle et/team?endpoint=http://key:{SECRET}@127.0.0.1:9"),
    ];
    let mut cases = 0;
    let mut shown = Vec::new();
    for raw in &positions {
        let mut printed: Vec<(&str, String)> = Vec::new();
        match RemoteUrl::parse(raw) {
            Err(e) => printed.push(("the parse error", e)),
            Ok(url) => {
                printed.push(("Display of the URL", url.to_string()));
                printed.push(("Debug of the URL", format!("{url:?}")));
                let config = config(url, Mode::ReadWrite);
                printed.push(("Display of the configuration", config.to_string()));
                printed.push(("Debug of the configuration", format!("{config:?}")));
                let (warn, warnings) = sink();
                let store = RemoteStore::from_backend(config, Ok(Box::new(Echo(raw.clone()))), warn);
                printed.push(("Debug of the store", format!("{store:?}")));
                printed.push(("an entry's location", store.location("kernels/ab/ab12")));
                printed.push(("a damaged entry's reason", store.get("kernels/ab/ab12", 10).unwrap_err()));
                store.put("kernels/ab/ab12", b"x");
                printed.push(("the store's warning", warnings.lock().unwrap().join("\n")));
            }
        }
        for (printer, text) in printed {
            cases += 1;
            if text.contains(SECRET) {
                shown.push(format!("{raw} × {printer}: {text}"));
            }
        }
    }
    assert!(shown.is_empty(), "{} of {cases} cases show the password:\n{}", shown.len(), shown.join("\n"));
}

/// The redaction's rules on running text: userinfo, query values but `endpoint=`/`region=`,
/// bare secret-named pairs, given secrets wherever they appear; other text as it was.
#[test]
fn redaction_hides_each_kind_of_secret_and_keeps_the_rest() {
    let cases = [
        ("webdav+http://ci:pw@h:1/p", "webdav+http://ci:***@h:1/p"),
        ("error at `https://u:p@x/y?z=1`: refused", "error at `https://u:***@x/y?z=***`: refused"),
        ("s3://b/p?endpoint=http://k:s@h:9&region=r", "s3://b/p?endpoint=http://k:***@h:9&region=r"),
        (
            "s3://b/p?endpoint=http://h:9?sig=abc&X-Amz-Credential=AK",
            "s3://b/p?endpoint=http://h:9?sig=***&X-Amz-Credential=***",
        ),
        ("AWS_SECRET_ACCESS_KEY=abc AWS_REGION=eu", "AWS_SECRET_ACCESS_KEY=*** AWS_REGION=eu"),
        ("webdav+https://ci@h/p (read-only)", "webdav+https://ci@h/p (read-only)"),
        ("file:///srv/cache/kernels/ab", "file:///srv/cache/kernels/ab"),
        ("no URL here: 3 jobs", "no URL here: 3 jobs"),
    ];
    for (text, want) in cases {
        assert_eq!(redact::redact_with(text, &[]), want, "{text}");
    }
    let secrets = vec!["pa ss word".to_string(), "xy".to_string()];
    assert_eq!(redact::redact_with("got pa ss word, xy", &secrets), "got ***, xy", "short secrets stay where they are");
    assert_eq!(redact::secrets_in("webdav+http://u:pa ss@h/p?token=abcd&region=eu"), ["pa ss", "abcd"]);
    // What it prints is redacted already: a second pass changes nothing.
    let once = redact::redact_with("https://u:p@h/x?k=v", &[]);
    assert_eq!(redact::redact_with(&once, &[]), once);
}

/// Issue 32 class 7: each malformed URL is refused when it is parsed, saying what is wrong.
#[test]
fn malformed_urls_are_refused_with_the_reason() {
    let cases = [
        ("", "is empty"),
        (" s3://b/p", "holds a space"),
        ("s3://b/p ", "holds a space"),
        ("s3://fle et/team", "holds a space"),
        ("s3://b%20x/team", "in its bucket"),
        ("s3://b/p?endpoint=notaurl", "not an http:// or https:// URL"),
        ("s3://b/p?endpoint=ftp://h:21", "the scheme `ftp`"),
        ("s3://b/p?endpoint=http://h:99999", "port `99999`"),
        ("s3://b/p?endpoint=http://h:0", "port `0`"),
        ("s3://b/p?endpoint=http://:9000", "names no host"),
        ("s3://b/p?endpoint=", "empty `endpoint=`"),
        ("s3://b/p?region=a&region=b", "twice"),
        ("s3://b/p?region=eu/west", "region"),
        ("s3://b/p?&", "query parameter"),
        ("s3://b/p;endpoint=http://h:9", "in its prefix"),
        ("s3://b/p#x", "in its prefix"),
        ("webdav+http://h:99999/p", "port `99999`"),
        ("webdav+http://h:/p", "port ``"),
        ("webdav+http://h:8o/p", "port `8o`"),
        ("webdav+http://h/p?x=1", "takes none"),
        ("webdav+http://ho_st!/p", "not a host name"),
        ("webdav+http://[::1/p", "unclosed"),
        ("ftp://h/p", "scheme `ftp`"),
    ];
    for (url, why) in cases {
        let e = RemoteUrl::parse(url).unwrap_err();
        assert!(e.contains(why) && e.contains("expected s3://bucket/prefix"), "{url:?}: {e}");
    }
    for good in ["webdav+http://[::1]:8080/p", "webdav+https://dav.test/p", "s3://my.bucket_1-x/p?region=eu-west-1"] {
        RemoteUrl::parse(good).unwrap_or_else(|e| panic!("{good}: {e}"));
    }
}

//! The remote store that the kernel cache (launch-build, through launch-engine) and the tune cache
//! (`launch::tune`) share: where a fleet's entries live (S3, WebDAV or a shared folder), how its URL is written,
//! how each read and write is bounded in time, and how a failing server is left alone after one
//! warning. The caches on top decide what an entry is and verify every one they read (the kernel
//! cache by its checksum and key, the tune cache by its checksum and whole key): a store hands
//! out bytes, never trust.
//!
//! * **URLs** ([`RemoteUrl`], [`SCHEMES`]): `s3://bucket/prefix` (`?endpoint=http://host:port`
//!   and `?region=...` may follow: any S3-compatible server), `webdav+http://host:port/path` or
//!   `webdav+https://...` (`user:password@` before the host), `file:///folder` (a shared disk, no
//!   server). Credentials come from the environment or the service's standard chain (for S3 the
//!   AWS variables, `~/.aws/`, instance metadata), never from a file of the project.
//! * **Bounded** ([`RemoteConfig::timeout`], default [`DEFAULT_TIMEOUT`]): a read or write that
//!   takes longer is dropped (its connection closed) and counts as a failure.
//! * **One warning** ([`RemoteStore`]): the first failure of any kind (down, slow, full, refusing,
//!   a store that is not compiled in) turns the store off for the rest of the process, with one
//!   warning; reads then miss and writes do nothing, so the cache on top works from its local
//!   folder and never fails or hangs because of the server.
//! * **Read-only** ([`Mode::ReadOnly`]): [`RemoteStore::put`] writes nothing, for untrusted
//!   consumers (pull requests from forks).
//! * **Bounded reads**: every read names the most bytes an entry can have; an object larger than
//!   that is damaged ([`Failure::Damaged`]) and is never read whole.
//!
//! Layout: the kernel cache keeps its entries under `kernels/`, the tune cache under `tune/`, so
//! one URL can serve both (`LAUNCH_CACHE_REMOTE` and `LAUNCH_TUNE_CACHE_REMOTE` may be equal).
//!
//! # Why a crate of its own, behind a feature
//! The S3 and WebDAV clients are [OpenDAL](https://crates.io/crates/opendal)'s (what sccache uses
//! for the same job; see launch-engine's `cache::remote` for why OpenDAL and why WebDAV). They cost
//! about 150 crates (tokio, reqwest, rustls, the AWS signer), so they are compiled only with this
//! crate's `network` feature (`launch`'s `remote-store`, launch-build's `remote`); without it this
//! crate is plain Rust with no dependency (the URL grammar, the folder store, the failure policy,
//! the redaction of secrets, the file primitives the tune cache's local folder shares), an `s3://`
//! or `webdav` URL is the store's one warning naming the feature, and `launch` stays as light as
//! before for every program that does not share a tune cache.
//!
//! It has two users in two audiences, which is why it is neither `launch`'s nor the engine's: the
//! tuner runs inside the user's program (`launch`), where the build is never linked, and the
//! kernel cache runs in the build (`launch-engine`). One crate below both keeps one URL grammar,
//! one failure policy and one redaction, and keeps the store out of the run-time crate's API
//! (`launch` re-exports this crate as `launch::remote` only because `TuneCache::with_remote`
//! takes a [`RemoteStore`]).

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

mod folder;
#[cfg(feature = "network")]
mod opendal_store;
mod redact;

pub use folder::{read_bounded, write_whole};
pub use redact::{redact, REDACTED, SECRET_VARIABLES, URL_VARIABLES};

/// How long one remote read or write may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest timeout a configuration may set, in seconds (a day).
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// The schemes a remote URL may have.
pub const SCHEMES: &str =
    "s3://bucket/prefix, webdav+http://host:port/path, webdav+https://host/path or file:///folder";

/// Whether the S3 and WebDAV stores are compiled in (this crate's `network` feature, which
/// `launch`'s `remote-store` and launch-build's `remote` turn on).
pub const NETWORK_STORES: bool = cfg!(feature = "network");

/// A parsed remote URL.
#[derive(Clone, PartialEq, Eq)]
pub enum RemoteUrl {
    /// `s3://bucket/prefix?endpoint=...&region=...`.
    S3 {
        /// The bucket.
        bucket: String,
        /// The path under it (no leading or trailing `/`).
        prefix: String,
        /// `endpoint=`: an S3-compatible server (default: AWS, or `AWS_ENDPOINT_URL`).
        endpoint: Option<String>,
        /// `region=` (default: `AWS_REGION`, else `us-east-1`).
        region: Option<String>,
    },
    /// `webdav+http(s)://[user[:password]@]host[:port]/path`.
    Webdav {
        /// `http://host:port` or `https://host`.
        endpoint: String,
        /// The path on the server (no leading or trailing `/`).
        path: String,
        /// The user and password, where the URL has them.
        user: Option<(String, Option<String>)>,
    },
    /// `file:///folder`: a folder, typically on a shared disk.
    Folder(PathBuf),
}

/// Never shows a password ([`redact`]).
impl fmt::Debug for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string())
    }
}

/// The URL as written, through [`redact`]: no password, no secret.
impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut written = String::new();
        match self {
            RemoteUrl::S3 { bucket, prefix, endpoint, region } => {
                written.push_str(&format!("s3://{bucket}"));
                if !prefix.is_empty() {
                    written.push_str(&format!("/{prefix}"));
                }
                let query: Vec<String> = [("endpoint", endpoint), ("region", region)]
                    .iter()
                    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}")))
                    .collect();
                if !query.is_empty() {
                    written.push_str(&format!("?{}", query.join("&")));
                }
            }
            RemoteUrl::Webdav { endpoint, path, user } => {
                let (scheme, host) = endpoint.split_once("://").unwrap_or(("http", endpoint));
                let user = user.as_ref().map(|(u, p)| format!("{u}{}@", if p.is_some() { ":***" } else { "" }));
                written.push_str(&format!("webdav+{scheme}://{}{host}/{path}", user.unwrap_or_default()));
            }
            RemoteUrl::Folder(dir) => written.push_str(&format!("file://{}", dir.display())),
        }
        f.write_str(&redact(&written))
    }
}

impl RemoteUrl {
    /// Parses a remote URL (one of [`SCHEMES`]), exactly as written: no space anywhere (nor
    /// around it), a host that is a host name or address with a port from 1 to 65535, an S3
    /// bucket of letters, digits, `.`, `-` and `_`, an `endpoint=` that is an `http://` or
    /// `https://` URL of a host (no credentials, no query), no query on a WebDAV URL.
    ///
    /// # Errors
    /// A sentence saying what is wrong and what is accepted; it shows the URL through
    /// [`redact`], with its own password hidden too.
    pub fn parse(text: &str) -> Result<RemoteUrl, String> {
        let shown = redact::redact_with(&redact(text), &redact::secrets_in(text));
        let bad = |why: &str| format!("`{}` {why}; expected {SCHEMES}", shown.escape_debug());
        if text.is_empty() {
            return Err(bad("is empty"));
        }
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("holds a space or a control character (a URL has none: write a space as %20)"));
        }
        let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("is not a URL"))?;
        match scheme.to_ascii_lowercase().as_str() {
            "s3" => parse_s3(rest).map_err(|why| bad(&why)),
            "webdav+http" | "webdav+https" => {
                let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
                if path.contains(['?', '#']) {
                    return Err(bad("has a query or fragment: a webdav URL takes none"));
                }
                let (user, host) = match authority.rsplit_once('@') {
                    Some((u, h)) => {
                        let (name, password) = u.split_once(':').unwrap_or((u, ""));
                        if name.is_empty() {
                            return Err(bad("names no user before its `@`"));
                        }
                        (Some((name.to_string(), (!password.is_empty()).then(|| password.to_string()))), h)
                    }
                    None => (None, authority),
                };
                check_host(host).map_err(|why| bad(&why))?;
                let http = &scheme["webdav+".len()..].to_ascii_lowercase();
                let path = path.trim_matches('/').to_string();
                Ok(RemoteUrl::Webdav { endpoint: format!("{http}://{host}"), path, user })
            }
            "file" => {
                let dir = PathBuf::from(rest);
                if !dir.is_absolute() {
                    return Err(bad("is not an absolute folder (file:///folder)"));
                }
                Ok(RemoteUrl::Folder(dir))
            }
            _ => Err(bad(&format!("has the scheme `{}`", scheme.escape_debug()))),
        }
    }

    /// Whether the URL holds a password (refused in Cargo.toml).
    pub fn has_password(&self) -> bool {
        matches!(self, RemoteUrl::Webdav { user: Some((_, Some(_))), .. })
    }

    /// Whether its store is compiled in: a folder always, S3 and WebDAV with [`NETWORK_STORES`].
    pub fn is_compiled_in(&self) -> bool {
        matches!(self, RemoteUrl::Folder(_)) || NETWORK_STORES
    }
}

/// The part of an `s3://` URL after the scheme.
fn parse_s3(rest: &str) -> Result<RemoteUrl, String> {
    let (path, query) = rest.split_once('?').map_or((rest, None), |(p, q)| (p, Some(q)));
    let (bucket, prefix) = path.split_once('/').unwrap_or((path, ""));
    if bucket.is_empty() || bucket.contains(['@', ':']) {
        return Err("names no bucket (credentials never go in an s3:// URL)".into());
    }
    if let Some(c) = bucket.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))) {
        return Err(format!(
            "has `{}` in its bucket (a bucket is letters, digits, `.`, `-` and `_`)",
            c.escape_debug()
        ));
    }
    // The characters S3 calls safe in a key: anything else (`;`, `:`, `#`, `%`) is a typo or a
    // separator that belongs elsewhere.
    let safe = |c: char| c.is_ascii_alphanumeric() || "/!-_.*'()".contains(c);
    if let Some(c) = prefix.chars().find(|c| !safe(*c)) {
        return Err(format!(
            "has `{}` in its prefix (a prefix is letters, digits, `/` and `!-_.*'()`; its query starts at `?`)",
            c.escape_debug()
        ));
    }
    let (mut endpoint, mut region) = (None, None);
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let slot = match name {
            "endpoint" => &mut endpoint,
            "region" => &mut region,
            _ => {
                return Err(format!(
                    "has the query parameter `{}`: an s3:// URL takes endpoint= and region= only (credentials come \
                     from the environment)",
                    name.escape_debug()
                ))
            }
        };
        if value.is_empty() {
            return Err(format!("has an empty `{name}=`"));
        }
        if slot.is_some() {
            return Err(format!("has `{name}=` twice"));
        }
        if name == "endpoint" {
            check_endpoint(value)?;
        } else if !value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(format!("has the region `{}`, which is not letters, digits and `-`", value.escape_debug()));
        }
        *slot = Some(value.to_string());
    }
    let prefix = prefix.trim_matches('/').to_string();
    Ok(RemoteUrl::S3 { bucket: bucket.to_string(), prefix, endpoint, region })
}

/// `endpoint=`: `http://host[:port][/path]` or `https://…`, no credentials, no query.
fn check_endpoint(value: &str) -> Result<(), String> {
    let shown = redact(value);
    let Some((scheme, rest)) = value.split_once("://") else {
        return Err(format!("has the endpoint `{}`, which is not an http:// or https:// URL", shown.escape_debug()));
    };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return Err(format!(
            "has an endpoint with the scheme `{}`: an S3 server is reached over http:// or https://",
            scheme.escape_debug()
        ));
    }
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return Err("has credentials in its endpoint (they come from the environment)".into());
    }
    if rest.contains(['?', '#']) {
        return Err("has a query or fragment in its endpoint".into());
    }
    check_host(authority).map_err(|why| format!("has an endpoint that {why}"))
}

/// `host[:port]`: a host name or IPv4 address of letters, digits, `.`, `-` and `_`, or `[IPv6]`,
/// and a port from 1 to 65535.
fn check_host(authority: &str) -> Result<(), String> {
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or("has an unclosed `[` in its host")?;
        if addr.is_empty() || !addr.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.') {
            return Err("has a bracketed host that is not an IPv6 address".into());
        }
        match after {
            "" => (addr, None),
            _ => (addr, Some(after.strip_prefix(':').ok_or("has text after its `[IPv6]` host")?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("names no host".into());
    }
    if !authority.starts_with('[') {
        let valid = host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
        if !valid || host.starts_with(['.', '-']) || host.ends_with('-') || host.contains("..") {
            return Err(format!("has the host `{}`, which is not a host name or address", host.escape_debug()));
        }
    }
    if let Some(p) = port {
        let ok = !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit());
        match p.parse::<u32>() {
            Ok(n) if ok && (1..=65_535).contains(&n) => {}
            _ => return Err(format!("has the port `{}`: a port is a number from 1 to 65535", p.escape_debug())),
        }
    }
    Ok(())
}

/// Whether a cache writes to its remote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `rw` (default): read and write.
    ReadWrite,
    /// `ro`: read only, for untrusted consumers.
    ReadOnly,
}

impl Mode {
    /// The words a mode variable takes.
    pub const VALUES: [&'static str; 2] = ["rw", "ro"];

    /// Parses a value exactly as written (any case; `read-write`/`read-only` too); `None` for
    /// anything else: empty, or with spaces around it.
    pub fn parse(text: &str) -> Option<Mode> {
        match text.to_ascii_lowercase().as_str() {
            "rw" | "read-write" => Some(Mode::ReadWrite),
            "ro" | "read-only" => Some(Mode::ReadOnly),
            _ => None,
        }
    }
}

/// Parses a timeout in whole seconds, from 1 to [`MAX_TIMEOUT_SECS`].
///
/// # Errors
/// A sentence saying what is accepted.
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    // No spaces around the digits, as in every other value's grammar.
    let digits = text;
    match digits.parse::<u64>() {
        // Digits only: `+5` parses, but is not what the grammar says.
        Ok(s) if (1..=MAX_TIMEOUT_SECS).contains(&s) && digits.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(Duration::from_secs(s))
        }
        _ => Err(format!(
            "`{}` is not whole seconds from 1 to {MAX_TIMEOUT_SECS} (the default is {})",
            text.escape_debug(),
            DEFAULT_TIMEOUT.as_secs()
        )),
    }
}

/// A remote's whole configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteConfig {
    /// Where.
    pub url: RemoteUrl,
    /// Read-only or not.
    pub mode: Mode,
    /// The bound on each read and write.
    pub timeout: Duration,
    /// Where the URL came from, for messages (`LAUNCH_CACHE_REMOTE`, `Cargo.toml:12:16`).
    pub source: String,
}

impl fmt::Display for RemoteConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = if self.mode == Mode::ReadOnly { "read-only" } else { "read-write" };
        write!(f, "{} ({mode}, timeout {}s, from {})", self.url, self.timeout.as_secs(), self.source)
    }
}

/// Why a [`Backend`] operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The server is down, slow, full, refusing, or misconfigured: the store is turned off.
    Unavailable(String),
    /// Something is there that cannot be an entry (larger than the caller's bound, not a file):
    /// a damaged entry, a miss for the cache on top.
    Damaged(String),
}

/// A remote service: opaque bytes by object path (`kernels/ab/ab12…`, `tune/0123….tune`).
/// [`open_backend`] gives the built-in ones; another service (or a test's fake) implements this
/// and goes to [`RemoteStore::from_backend`].
pub trait Backend: Send + Sync {
    /// The object at `path`: `Ok(None)` when there is none; [`Failure::Damaged`] when it is
    /// larger than `max_bytes` (never read whole).
    ///
    /// # Errors
    /// As [`Failure`] says.
    fn get(&self, path: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, Failure>;

    /// Writes the object at `path`, whole or not at all as readers see it.
    ///
    /// # Errors
    /// As [`Failure`] says.
    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), Failure>;
}

/// The store `url` names, each operation bounded by `timeout` (a folder's are local file
/// operations, not bounded).
///
/// # Errors
/// The store is not compiled in (the sentence names `launch`'s `remote-store` feature), or cannot be
/// set up.
pub fn open_backend(url: &RemoteUrl, timeout: Duration) -> Result<Box<dyn Backend>, String> {
    match url {
        RemoteUrl::Folder(dir) => Ok(Box::new(folder::FolderBackend(dir.clone()))),
        #[cfg(feature = "network")]
        url => opendal_store::open(url, timeout),
        #[cfg(not(feature = "network"))]
        _ => {
            let _ = timeout;
            Err("the s3:// and webdav stores are not compiled into this program: they need the `remote-store` \
                 feature of the `launch` crate"
                .to_string())
        }
    }
}

/// What a process did with its remote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteUse {
    /// Entries read from it (whole and verified by the cache on top, which calls [`RemoteStore::hit`]).
    pub hits: u64,
    /// Their bytes.
    pub bytes_read: u64,
    /// Entries written to it.
    pub writes: u64,
    /// Their bytes.
    pub bytes_written: u64,
    /// Whether it was turned off by a failure.
    pub failed: bool,
}

type Warn = Box<dyn Fn(&str) + Send + Sync>;

/// A remote store: a [`Backend`], its configuration, and whether it failed yet. Shared by
/// reference between threads (its counters and its on/off switch are atomic).
pub struct RemoteStore {
    config: RemoteConfig,
    backend: Option<Box<dyn Backend>>,
    warn: Warn,
    failed: AtomicBool,
    hits: AtomicU64,
    bytes_read: AtomicU64,
    writes: AtomicU64,
    bytes_written: AtomicU64,
}

impl fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteStore")
            .field("config", &self.config)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl RemoteStore {
    /// The store `config` describes. `warn` is called once, with the reason, when the store is
    /// turned off (its caller words the warning: which cache, and what happens instead). A store
    /// that is not compiled in, or cannot be set up, is that warning at once.
    pub fn open(config: RemoteConfig, warn: impl Fn(&str) + Send + Sync + 'static) -> RemoteStore {
        let backend = open_backend(&config.url, config.timeout);
        RemoteStore::from_backend(config, backend, warn)
    }

    /// The store over `backend` (or, when it could not be set up, off with its warning).
    pub fn from_backend(
        config: RemoteConfig,
        backend: Result<Box<dyn Backend>, String>,
        warn: impl Fn(&str) + Send + Sync + 'static,
    ) -> RemoteStore {
        let store = RemoteStore {
            backend: None,
            warn: Box::new(warn),
            failed: AtomicBool::new(false),
            hits: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            config,
        };
        match backend {
            Ok(b) => RemoteStore { backend: Some(b), ..store },
            Err(reason) => {
                store.fail(&reason);
                store
            }
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &RemoteConfig {
        &self.config
    }

    /// What this process did with it so far.
    pub fn usage(&self) -> RemoteUse {
        RemoteUse {
            hits: self.hits.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
        }
    }

    /// Where `object` is, for messages (the URL without its password, then the object's path).
    pub fn location(&self, object: &str) -> String {
        format!("{}/{object}", self.config.url)
    }

    /// Turns the store off for the rest of the process; the first time, with the warning.
    /// The reason goes through [`redact`]: a client's error may repeat the URL it was given.
    fn fail(&self, reason: &str) {
        if !self.failed.swap(true, Ordering::SeqCst) {
            (self.warn)(&redact(reason));
        }
    }

    fn backend(&self) -> Option<&dyn Backend> {
        self.backend.as_deref().filter(|_| !self.failed.load(Ordering::SeqCst))
    }

    /// The bytes of `object`: `Ok(None)` when there are none or the store is off;
    /// `Err(reason)` when what is there cannot be an entry (larger than `max_bytes`).
    ///
    /// # Errors
    /// A damaged object, as said.
    pub fn get(&self, object: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, String> {
        let Some(backend) = self.backend() else { return Ok(None) };
        match backend.get(object, max_bytes) {
            Ok(bytes) => Ok(bytes),
            Err(Failure::Damaged(reason)) => Err(redact(&reason)),
            Err(Failure::Unavailable(reason)) => {
                self.fail(&reason);
                Ok(None)
            }
        }
    }

    /// Records a verified hit of `bytes` bytes (the cache on top verified it).
    pub fn hit(&self, bytes: usize) {
        self.hits.fetch_add(1, Ordering::Relaxed);
        self.bytes_read.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Writes `object`, unless read-only or off; a failure turns the store off (the warning),
    /// never an error of the caller's.
    pub fn put(&self, object: &str, bytes: &[u8]) {
        if self.config.mode == Mode::ReadOnly {
            return;
        }
        let Some(backend) = self.backend() else { return };
        match backend.put(object, bytes) {
            Ok(()) => {
                self.writes.fetch_add(1, Ordering::Relaxed);
                self.bytes_written.fetch_add(bytes.len() as u64, Ordering::Relaxed);
            }
            Err(Failure::Unavailable(reason) | Failure::Damaged(reason)) => self.fail(&reason),
        }
    }
}

#[cfg(test)]
mod test_dir;
#[cfg(test)]
mod tests;

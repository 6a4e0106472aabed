//! A shared remote kernel cache for teams and CI fleets, behind the local folder.
//!
//! # What it does
//! [`Cache::load`](super::Cache::load) reads the local folder first, then the remote; a remote hit
//! is checked like any entry (checksum, format, key: a damaged or forged entry is a miss and is
//! compiled, never embedded) and copied into the local folder. [`Cache::store`](super::Cache::store)
//! writes the local folder, then the remote unless it is read-only (`LAUNCH_CACHE_REMOTE_MODE=ro`,
//! for untrusted consumers such as pull requests from forks). A job compiled because the remote's
//! entry was damaged stores a good one over it.
//!
//! Every remote read and write is bounded by a timeout (`LAUNCH_CACHE_REMOTE_TIMEOUT`, default
//! [`DEFAULT_TIMEOUT`]). The first failure of any kind (down, slow, full, refusing, a bad
//! configuration) turns the remote off for the rest of the build with **one** warning: the build
//! compiles what the local folder lacks and never fails or hangs because of the remote.
//!
//! # Configuration
//! `LAUNCH_CACHE_REMOTE`, else `[package.metadata.launch] cache-remote`, a URL ([`RemoteUrl`]):
//! `s3://bucket/prefix` (S3 or any S3-compatible server; `?endpoint=http://host:port` and
//! `?region=...` may follow), `webdav+http://host:port/path` or `webdav+https://...`, and
//! `file:///shared/folder` (a folder on a shared disk, no server). Credentials come only from the
//! environment or the service's standard chain (for S3: `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `~/.aws/`, instance metadata, as the AWS tools
//! read them; for WebDAV: `user:password@` in `LAUNCH_CACHE_REMOTE` itself). A URL with a password
//! in Cargo.toml is refused at its file:line: Cargo.toml is committed and published.
//!
//! Entries live under the URL's path as `kernels/<first two hex digits>/<key hex>`: the key holds
//! nothing about the machine or the checkout (see [`super`]), so every builder shares them.
//!
//! # Why OpenDAL, and why behind a feature
//! The S3 and WebDAV clients are [OpenDAL](https://crates.io/crates/opendal)'s (what sccache uses
//! for the same job): a maintained Apache project whose S3 service signs requests with the AWS
//! standard credential chain and speaks to every S3-compatible server, with WebDAV, GCS, Azure,
//! Redis and the GitHub Actions cache a feature away. Its cost is its dependencies: tokio, reqwest,
//! rustls with aws-lc, the AWS signer: 192 crates, 126 CPU-seconds of clean debug build on a
//! two-CPU machine, against 50 for launch-build and its dependencies without it (`docs/src/design/evidence.md`). launch-build is a build-dependency of every kernel
//! crate, so that cost must not fall on everyone: the OpenDAL stores are compiled only with
//! launch-build's `remote` feature (off by default). A team turns it on once, in any crate of its
//! build (`launch-build = { version = "...", features = ["remote"] }` under
//! `[build-dependencies]`); cargo unifies the feature for every kernel crate of that build. The
//! `file://` store needs no feature. A URL whose store is not compiled in is one warning, and the
//! build goes on with the local cache.
//!
//! WebDAV is the second backend because it is the one any team can run anywhere without an
//! account (nginx, Apache, rclone, Caddy and most NAS boxes serve it), it needs no server-side
//! software of ours, and its PUT/GET map one to one onto entries; Redis keeps everything in
//! memory (a poor fit for gigabytes of cubins), GCS needs an account, and the GitHub Actions cache
//! is reachable only inside a GitHub workflow (where S3 or WebDAV work too).

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::{Key, LocalFolder, Store, MAX_ENTRY};

#[cfg(feature = "remote")]
mod opendal_store;

/// How long one remote read or write may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The schemes a remote URL may have.
pub const SCHEMES: &str =
    "s3://bucket/prefix, webdav+http://host:port/path, webdav+https://host/path or file:///folder";

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

/// Never shows a password.
impl fmt::Debug for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string())
    }
}

/// The URL as written, without its password.
impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteUrl::S3 { bucket, prefix, endpoint, region } => {
                write!(f, "s3://{bucket}")?;
                if !prefix.is_empty() {
                    write!(f, "/{prefix}")?;
                }
                let query: Vec<String> = [("endpoint", endpoint), ("region", region)]
                    .iter()
                    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}")))
                    .collect();
                if !query.is_empty() {
                    write!(f, "?{}", query.join("&"))?;
                }
                Ok(())
            }
            RemoteUrl::Webdav { endpoint, path, user } => {
                let (scheme, host) = endpoint.split_once("://").unwrap_or(("http", endpoint));
                let user = user.as_ref().map(|(u, p)| format!("{u}{}@", if p.is_some() { ":***" } else { "" }));
                write!(f, "webdav+{scheme}://{}{host}/{path}", user.unwrap_or_default())
            }
            RemoteUrl::Folder(dir) => write!(f, "file://{}", dir.display()),
        }
    }
}

impl RemoteUrl {
    /// Parses a remote URL (one of `SCHEMES`).
    ///
    /// # Errors
    /// A sentence saying what is wrong and what is accepted.
    pub fn parse(text: &str) -> Result<RemoteUrl, String> {
        let t = text.trim();
        let bad = |why: &str| format!("`{}` {why}; expected {SCHEMES}", t.escape_debug());
        let (scheme, rest) = t.split_once("://").ok_or_else(|| bad("is not a URL"))?;
        match scheme.to_ascii_lowercase().as_str() {
            "s3" => {
                let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
                let (bucket, prefix) = path.split_once('/').unwrap_or((path, ""));
                if bucket.is_empty() || bucket.contains('@') {
                    return Err(bad("names no bucket (credentials never go in an s3:// URL)"));
                }
                let (mut endpoint, mut region) = (None, None);
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    match pair.split_once('=') {
                        Some(("endpoint", v)) if !v.is_empty() => endpoint = Some(v.to_string()),
                        Some(("region", v)) if !v.is_empty() => region = Some(v.to_string()),
                        _ => return Err(bad(&format!("has `{pair}`: an s3:// URL takes endpoint= and region="))),
                    }
                }
                let prefix = prefix.trim_matches('/').to_string();
                Ok(RemoteUrl::S3 { bucket: bucket.to_string(), prefix, endpoint, region })
            }
            "webdav+http" | "webdav+https" => {
                let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
                let (user, host) = match authority.rsplit_once('@') {
                    Some((u, h)) => {
                        let (name, password) = u.split_once(':').unwrap_or((u, ""));
                        (Some((name.to_string(), (!password.is_empty()).then(|| password.to_string()))), h)
                    }
                    None => (None, authority),
                };
                if host.is_empty() {
                    return Err(bad("names no host"));
                }
                let http = &scheme["webdav+".len()..];
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
            _ => Err(bad(&format!("has the scheme `{scheme}`"))),
        }
    }

    /// Whether the URL holds a password (refused in Cargo.toml).
    pub fn has_password(&self) -> bool {
        matches!(self, RemoteUrl::Webdav { user: Some((_, Some(_))), .. })
    }
}

/// `LAUNCH_CACHE_REMOTE_MODE`: whether builds write to the remote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `rw` (default): read and write.
    ReadWrite,
    /// `ro`: read only, for untrusted consumers.
    ReadOnly,
}

impl Mode {
    /// The values `LAUNCH_CACHE_REMOTE_MODE` takes.
    pub const VALUES: [&'static str; 2] = ["rw", "ro"];

    /// Parses a value (any case; `read-write`/`read-only` too); `None` for anything else.
    pub fn parse(text: &str) -> Option<Mode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "rw" | "read-write" => Some(Mode::ReadWrite),
            "ro" | "read-only" => Some(Mode::ReadOnly),
            _ => None,
        }
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

/// Why a remote operation failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The server is down, slow, full, refusing, or misconfigured: the remote is turned off.
    Unavailable(String),
    /// Something is there that cannot be an entry (larger than [`MAX_ENTRY`]): a damaged entry.
    Damaged(String),
}

/// A remote service: opaque bytes by object path.
pub(crate) trait Backend: Send + Sync {
    /// The object at `path`: `Ok(None)` when there is none.
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, Failure>;
    /// Writes the object at `path`.
    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), Failure>;
}

/// A `file://` remote: a [`LocalFolder`] on a shared disk.
struct FolderBackend(LocalFolder);

impl Backend for FolderBackend {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, Failure> {
        super::store::read_bounded(&self.0.dir().join(path), MAX_ENTRY).map_err(Failure::Damaged)
    }

    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), Failure> {
        let file = self.0.dir().join(path);
        let write = || -> io::Result<()> {
            std::fs::create_dir_all(file.parent().expect("entries live in a folder"))?;
            crate::out::write_atomically(&file, bytes)
        };
        write().map_err(|e| Failure::Unavailable(format!("{}: {e}", file.display())))
    }
}

/// What one build did with the remote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteUse {
    /// Entries read from it (whole and verified).
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

/// The remote of one build: a backend, its configuration, and whether it failed yet.
pub struct Remote {
    config: RemoteConfig,
    backend: Option<Box<dyn Backend>>,
    warn: fn(&str),
    failed: AtomicBool,
    hits: AtomicU64,
    bytes_read: AtomicU64,
    writes: AtomicU64,
    bytes_written: AtomicU64,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote").field("config", &self.config).field("failed", &self.failed).finish_non_exhaustive()
    }
}

impl Remote {
    /// The remote `config` describes; `warn` prints the build's one warning. A store that is not
    /// compiled in, or that cannot be set up, is that warning at once (and no remote).
    pub fn open(config: RemoteConfig, warn: fn(&str)) -> Remote {
        let backend: Result<Box<dyn Backend>, String> = match &config.url {
            RemoteUrl::Folder(dir) => Ok(Box::new(FolderBackend(LocalFolder::new(dir.clone())))),
            #[cfg(feature = "remote")]
            url => opendal_store::open(url, config.timeout),
            #[cfg(not(feature = "remote"))]
            _ => Err("this launch-build was compiled without its `remote` feature, which the s3:// and webdav \
                      stores need: add `features = [\"remote\"]` to launch-build under [build-dependencies] in \
                      one crate of the build"
                .to_string()),
        };
        Remote::from_backend(config, backend, warn)
    }

    /// The remote over `backend` (or, when it could not be set up, off with its warning).
    pub(crate) fn from_backend(
        config: RemoteConfig,
        backend: Result<Box<dyn Backend>, String>,
        warn: fn(&str),
    ) -> Remote {
        let remote = Remote {
            backend: None,
            warn,
            failed: AtomicBool::new(false),
            hits: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            config,
        };
        match backend {
            Ok(b) => Remote { backend: Some(b), ..remote },
            Err(reason) => {
                remote.fail(&reason);
                remote
            }
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &RemoteConfig {
        &self.config
    }

    /// What this build did with it so far.
    pub fn usage(&self) -> RemoteUse {
        RemoteUse {
            hits: self.hits.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
        }
    }

    /// The object path of `key`'s entry.
    pub fn object(key: &Key) -> String {
        let hex = key.to_string();
        format!("kernels/{}/{hex}", &hex[..2])
    }

    /// Where `key`'s entry is, for messages.
    pub fn entry_location(&self, key: &Key) -> String {
        format!("{}/{}", self.config.url, Remote::object(key))
    }

    /// Turns the remote off for the rest of the build; the first time, with the warning.
    fn fail(&self, reason: &str) {
        if !self.failed.swap(true, Ordering::SeqCst) {
            (self.warn)(&format!(
                "the remote kernel cache {} is not used by this build: {reason}; what the local cache lacks is \
                 compiled here",
                self.config.url
            ));
        }
    }

    fn backend(&self) -> Option<&dyn Backend> {
        self.backend.as_deref().filter(|_| !self.failed.load(Ordering::SeqCst))
    }

    /// The bytes of `key`'s entry: `Ok(None)` when there are none or the remote is off;
    /// `Err(reason)` when what is there cannot be an entry.
    pub fn get(&self, key: &Key) -> Result<Option<Vec<u8>>, String> {
        let Some(backend) = self.backend() else { return Ok(None) };
        match backend.get(&Remote::object(key)) {
            Ok(bytes) => Ok(bytes),
            Err(Failure::Damaged(reason)) => Err(reason),
            Err(Failure::Unavailable(reason)) => {
                self.fail(&reason);
                Ok(None)
            }
        }
    }

    /// Records a verified hit of `bytes` bytes.
    pub fn hit(&self, bytes: usize) {
        self.hits.fetch_add(1, Ordering::Relaxed);
        self.bytes_read.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Writes `key`'s entry, unless read-only or off; a failure turns the remote off.
    pub fn put(&self, key: &Key, bytes: &[u8]) {
        if self.config.mode == Mode::ReadOnly {
            return;
        }
        let Some(backend) = self.backend() else { return };
        match backend.put(&Remote::object(key), bytes) {
            Ok(()) => {
                self.writes.fetch_add(1, Ordering::Relaxed);
                self.bytes_written.fetch_add(bytes.len() as u64, Ordering::Relaxed);
            }
            Err(Failure::Unavailable(reason) | Failure::Damaged(reason)) => self.fail(&reason),
        }
    }
}

/// The remote is a [`Store`] too (a cache with no local folder: `Cache::with_store(remote)`);
/// a build's cache keeps it behind the local folder instead ([`Cache::with_remote`](super::Cache::with_remote)).
/// A failed write is the remote's one warning, never an error: the build goes on.
impl Store for Remote {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>, String> {
        Remote::get(self, key)
    }

    fn put(&self, key: &Key, bytes: &[u8]) -> io::Result<()> {
        Remote::put(self, key, bytes);
        Ok(())
    }

    fn location(&self) -> String {
        self.config.url.to_string()
    }

    fn entry_location(&self, key: &Key) -> String {
        Remote::entry_location(self, key)
    }
}

#[cfg(test)]
mod tests;

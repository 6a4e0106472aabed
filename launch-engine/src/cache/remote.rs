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
//! launch-build's `remote` feature (off by default), which turns on `launch`'s `remote-store`. A
//! team turns it on once, in any crate of its build (`launch-build = { version = "...",
//! features = ["remote"] }` under `[build-dependencies]`); cargo unifies the feature for every
//! kernel crate of that build. The `file://` store needs no feature. A URL whose store is not
//! compiled in is one warning, and the build goes on with the local cache.
//!
//! The store itself (URLs, the OpenDAL setup, timeouts, read-only, the one-warning policy) is
//! the crate `launch-remote`'s, shared with the tuner's cache, which runs in users' programs where
//! this crate is never linked (see that crate for why it is one of its own); this module adds
//! what is the kernel cache's: where an entry lives (`kernels/…`), the bound on its size, and the
//! warning's wording.
//!
//! WebDAV is the second backend because it is the one any team can run anywhere without an
//! account (nginx, Apache, rclone, Caddy and most NAS boxes serve it), it needs no server-side
//! software of ours, and its PUT/GET map one to one onto entries; Redis keeps everything in
//! memory (a poor fit for gigabytes of cubins), GCS needs an account, and the GitHub Actions cache
//! is reachable only inside a GitHub workflow (where S3 or WebDAV work too).

use std::fmt;
use std::io;

use launch_remote::{Backend, RemoteStore};
pub use launch_remote::{Mode, RemoteConfig, RemoteUrl, RemoteUse, DEFAULT_TIMEOUT};

use super::{Key, Store, MAX_ENTRY};

/// The remote of one build: launch's [`RemoteStore`] with the kernel cache's layout and wording.
pub struct Remote {
    store: RemoteStore,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote").field("store", &self.store).finish()
    }
}

impl Remote {
    /// The remote `config` describes; `warn` prints the build's one warning. A store that is not
    /// compiled in, or that cannot be set up, is that warning at once (and no remote).
    pub fn open(config: RemoteConfig, warn: fn(&str)) -> Remote {
        let backend = if config.url.is_compiled_in() {
            launch_remote::open_backend(&config.url, config.timeout)
        } else {
            Err("this launch-build was compiled without its `remote` feature, which the s3:// and webdav \
                 stores need: add `features = [\"remote\"]` to launch-build under [build-dependencies] in \
                 one crate of the build"
                .to_string())
        };
        Remote::from_backend(config, backend, warn)
    }

    /// The remote over `backend` (or, when it could not be set up, off with its warning).
    pub(crate) fn from_backend(
        config: RemoteConfig,
        backend: Result<Box<dyn Backend>, String>,
        warn: fn(&str),
    ) -> Remote {
        let url = config.url.to_string();
        let warning = move |reason: &str| {
            warn(&format!(
                "the remote kernel cache {url} is not used by this build: {reason}; what the local cache lacks is \
                 compiled here"
            ));
        };
        Remote { store: RemoteStore::from_backend(config, backend, warning) }
    }

    /// Its configuration.
    pub fn config(&self) -> &RemoteConfig {
        self.store.config()
    }

    /// What this build did with it so far.
    pub fn usage(&self) -> RemoteUse {
        self.store.usage()
    }

    /// The object path of `key`'s entry.
    pub fn object(key: &Key) -> String {
        let hex = key.to_string();
        format!("kernels/{}/{hex}", &hex[..2])
    }

    /// Where `key`'s entry is, for messages.
    pub fn entry_location(&self, key: &Key) -> String {
        self.store.location(&Remote::object(key))
    }

    /// The bytes of `key`'s entry: `Ok(None)` when there are none or the remote is off;
    /// `Err(reason)` when what is there cannot be an entry.
    pub fn get(&self, key: &Key) -> Result<Option<Vec<u8>>, String> {
        self.store.get(&Remote::object(key), MAX_ENTRY)
    }

    /// Records a verified hit of `bytes` bytes.
    pub fn hit(&self, bytes: usize) {
        self.store.hit(bytes);
    }

    /// Writes `key`'s entry, unless read-only or off; a failure turns the remote off.
    pub fn put(&self, key: &Key, bytes: &[u8]) {
        self.store.put(&Remote::object(key), bytes);
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
        self.config().url.to_string()
    }

    fn entry_location(&self, key: &Key) -> String {
        Remote::entry_location(self, key)
    }
}

#[cfg(test)]
mod tests;

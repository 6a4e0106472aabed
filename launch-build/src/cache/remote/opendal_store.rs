//! The S3 and WebDAV stores, on OpenDAL (launch-build's `remote` feature; see [`super`] for why).
//!
//! OpenDAL is asynchronous; a build script is not. Each store owns a small tokio runtime (two
//! worker threads) and blocks on one operation at a time per calling thread, each bounded by
//! the remote's timeout: a future that does not finish in time is dropped, which closes its
//! connection. The runtime is shut down in the background when the store goes, so a request the
//! server never answers cannot hold the build at its end either.

use std::time::Duration;

use opendal::{services, ErrorKind, Operator};

use super::{Backend, Failure, RemoteUrl};
use crate::cache::MAX_ENTRY;

/// An OpenDAL operator and the runtime that drives it.
struct OpendalBackend {
    runtime: Option<tokio::runtime::Runtime>,
    op: Operator,
    timeout: Duration,
}

/// The store `url` names (S3 or WebDAV).
pub(super) fn open(url: &RemoteUrl, timeout: Duration) -> Result<Box<dyn Backend>, String> {
    let op = match url {
        RemoteUrl::S3 { bucket, prefix, endpoint, region } => {
            let mut b = services::S3::default().bucket(bucket).root(&format!("/{prefix}"));
            if let Some(e) = endpoint {
                b = b.endpoint(e);
            }
            if let Some(r) = region {
                b = b.region(r);
            }
            Operator::new(b).map(|o| o.finish())
        }
        RemoteUrl::Webdav { endpoint, path, user } => {
            let mut b = services::Webdav::default().endpoint(endpoint).root(&format!("/{path}"));
            if let Some((name, password)) = user {
                b = b.username(name);
                if let Some(p) = password {
                    b = b.password(p);
                }
            }
            Operator::new(b).map(|o| o.finish())
        }
        RemoteUrl::Folder(_) => unreachable!("a folder is no OpenDAL store"),
    }
    .map_err(|e| format!("cannot set it up: {e}"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("launch-remote-cache")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start its client: {e}"))?;
    Ok(Box::new(OpendalBackend { runtime: Some(runtime), op, timeout }))
}

impl OpendalBackend {
    /// Runs `work` to completion within the timeout.
    fn bounded<T>(
        &self,
        what: &str,
        work: impl std::future::Future<Output = Result<T, Failure>>,
    ) -> Result<T, Failure> {
        let runtime = self.runtime.as_ref().expect("the runtime lives as long as the store");
        let timeout = self.timeout;
        runtime.block_on(async move {
            match tokio::time::timeout(timeout, work).await {
                Ok(r) => r,
                Err(_) => Err(Failure::Unavailable(format!(
                    "no answer to a {what} within {}s (LAUNCH_CACHE_REMOTE_TIMEOUT)",
                    timeout.as_secs()
                ))),
            }
        })
    }
}

fn unavailable(what: &str, e: &opendal::Error) -> Failure {
    Failure::Unavailable(format!("{what} failed: {e}"))
}

impl Backend for OpendalBackend {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, Failure> {
        self.bounded("read", async {
            let meta = match self.op.stat(path).await {
                Ok(m) => m,
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(unavailable("read", &e)),
            };
            if meta.content_length() > MAX_ENTRY {
                return Err(Failure::Damaged(format!(
                    "{} bytes, larger than any entry (at most {MAX_ENTRY})",
                    meta.content_length()
                )));
            }
            match self.op.read(path).await {
                Ok(buffer) if buffer.len() as u64 > MAX_ENTRY => {
                    Err(Failure::Damaged(format!("more than {MAX_ENTRY} bytes, larger than any entry")))
                }
                Ok(buffer) => Ok(Some(buffer.to_vec())),
                // Removed between the two requests (another builder's cleanup): no entry.
                Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
                Err(e) => Err(unavailable("read", &e)),
            }
        })
    }

    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), Failure> {
        let bytes = bytes.to_vec();
        self.bounded("write", async move {
            self.op.write(path, bytes).await.map(drop).map_err(|e| unavailable("write", &e))
        })
    }
}

impl Drop for OpendalBackend {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

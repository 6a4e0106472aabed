//! The S3 and WebDAV stores, on OpenDAL (this crate's `network` feature; see [`super`] for
//! why).
//!
//! OpenDAL is asynchronous; a build script and a tuner are not. Each store owns a small tokio
//! runtime (two worker threads, started by its first operation, so a cache whose local folder
//! answers never starts it). An operation is spawned on that runtime and waited for on a channel,
//! bounded by the remote's timeout: a future that does not finish in time is dropped, which
//! closes its connection. Waiting on a channel, not `block_on`, so that a caller already inside
//! an async runtime (a tuner called from a tokio task) blocks its thread for at most the timeout
//! instead of panicking. The runtime is shut down in the background when the store goes, so a
//! request the server never answers cannot hold the process at its end either.

use std::future::Future;
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

use opendal::{services, ErrorKind, Operator};

use super::{Backend, Failure, RemoteUrl};

/// An OpenDAL operator and the runtime that drives it.
struct OpendalBackend {
    runtime: OnceLock<Result<tokio::runtime::Runtime, String>>,
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
    Ok(Box::new(OpendalBackend { runtime: OnceLock::new(), op, timeout }))
}

impl OpendalBackend {
    fn runtime(&self) -> Result<&tokio::runtime::Runtime, Failure> {
        let built = self.runtime.get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("launch-remote-store")
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start its client: {e}"))
        });
        built.as_ref().map_err(|e| Failure::Unavailable(e.clone()))
    }

    /// Runs `work` to completion within the timeout.
    fn bounded<T: Send + 'static>(
        &self,
        what: &str,
        work: impl Future<Output = Result<T, Failure>> + Send + 'static,
    ) -> Result<T, Failure> {
        let timeout = self.timeout;
        let late = || {
            Failure::Unavailable(format!("no answer to a {what} within {}s (the remote's timeout)", timeout.as_secs()))
        };
        let (tx, rx) = mpsc::sync_channel(1);
        self.runtime()?.spawn(async move {
            // The receiver may have given up: nobody to tell.
            let _ = tx.send(tokio::time::timeout(timeout, work).await);
        });
        // The runtime's own timer bounds the work; this bound is for a runtime that cannot run it.
        match rx.recv_timeout(timeout + Duration::from_secs(1)) {
            Ok(Ok(result)) => result,
            Ok(Err(_)) | Err(_) => Err(late()),
        }
    }
}

fn unavailable(what: &str, e: &opendal::Error) -> Failure {
    Failure::Unavailable(format!("{what} failed: {e}"))
}

impl Backend for OpendalBackend {
    fn get(&self, path: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, Failure> {
        let (op, path) = (self.op.clone(), path.to_string());
        self.bounded("read", async move {
            let meta = match op.stat(&path).await {
                Ok(m) => m,
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(unavailable("read", &e)),
            };
            if meta.content_length() > max_bytes {
                return Err(Failure::Damaged(format!(
                    "{} bytes, larger than any entry (at most {max_bytes})",
                    meta.content_length()
                )));
            }
            match op.read(&path).await {
                Ok(buffer) if buffer.len() as u64 > max_bytes => {
                    Err(Failure::Damaged(format!("more than {max_bytes} bytes, larger than any entry")))
                }
                Ok(buffer) => Ok(Some(buffer.to_vec())),
                // Removed between the two requests (another machine's cleanup): no entry.
                Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
                Err(e) => Err(unavailable("read", &e)),
            }
        })
    }

    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), Failure> {
        let (op, path, bytes) = (self.op.clone(), path.to_string(), bytes.to_vec());
        self.bounded(
            "write",
            async move { op.write(&path, bytes).await.map(drop).map_err(|e| unavailable("write", &e)) },
        )
    }
}

impl Drop for OpendalBackend {
    fn drop(&mut self) {
        if let Some(Ok(runtime)) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

//! A fleet's tune cache: the remote store behind the local folder (`LAUNCH_TUNE_CACHE_REMOTE`,
//! [`TuneCache::with_remote`](super::TuneCache::with_remote)), on `launch::remote`, the store
//! launch-build's kernel cache uses, with the same URLs, read-only mode and timeouts.
//!
//! What is read from the remote is trusted no more than a local file: it must be a whole,
//! current-version file whose checksum matches and whose key is this lookup's whole key (kernel
//! hash, variant set, device name, compute capability, driver version, problem); anything else
//! is a miss and the caller tunes. The checksum is against damage, not forgery: a machine that
//! may write the remote can choose, for the others, which of a kernel's own variants runs (the
//! tuner loads a remembered winner only when it is one of the candidates it was given), never
//! what code runs. Untrusted machines read with `LAUNCH_TUNE_CACHE_REMOTE_MODE=ro`.

use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::key::TuneKey;
use launch_remote::{parse_timeout, Mode, RemoteConfig, RemoteStore, RemoteUrl, DEFAULT_TIMEOUT};

/// The object that holds `key`'s winner on the remote: `tune/<key hash>.tune`.
pub(super) fn object(key: &TuneKey) -> String {
    format!("tune/{:016x}.tune", key.hash())
}

/// The remote store `config` names, whose one warning (down, slow, not compiled in) goes to
/// stderr.
pub(super) fn open(config: RemoteConfig) -> RemoteStore {
    let url = config.url.to_string();
    RemoteStore::open(config, move |reason: &str| {
        eprintln!(
            "warning: the remote tune cache {url} is not used by this program: {reason}; kernels the local tune \
             cache lacks are tuned here"
        );
    })
}

/// The store for `config`, one per process and configuration: every [`TuneCache::from_env`]
/// (each `Tuner::new` makes one) shares it, so a server that is down is one warning and one
/// attempt per program, not one per tuner.
///
/// [`TuneCache::from_env`]: super::TuneCache::from_env
pub(super) fn open_shared(config: RemoteConfig) -> Arc<RemoteStore> {
    static OPEN: Mutex<Vec<Arc<RemoteStore>>> = Mutex::new(Vec::new());
    let mut open = OPEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(store) = open.iter().find(|s| *s.config() == config) {
        return store.clone();
    }
    let store = Arc::new(self::open(config));
    open.push(store.clone());
    store
}

/// A remote variable that is not right: one warning per process.
pub(super) fn warn_once(why: &str) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::SeqCst) {
        eprintln!("warning: {}; the tune cache works without a remote", launch_remote::redact(why));
    }
}

/// The remote the environment names, reading variables through `var` (empty counts as unset):
/// `LAUNCH_TUNE_CACHE_REMOTE`, a URL as `LAUNCH_CACHE_REMOTE` takes it (`s3://bucket/prefix`,
/// `webdav+http(s)://…`, `file:///folder`: [`crate::remote::SCHEMES`]) or an absolute folder;
/// `LAUNCH_TUNE_CACHE_REMOTE_MODE` (`rw`, `ro`); `LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT` (seconds,
/// default 10). An `s3://` URL without `region=` takes `AWS_REGION`, else `AWS_DEFAULT_REGION`,
/// else `us-east-1`, as launch-build's does. `Ok(None)` when the remote variable is unset.
///
/// # Errors
/// A value that is not right, as a sentence naming the variable.
pub fn remote_config_from(var: impl Fn(&str) -> Option<OsString>) -> Result<Option<RemoteConfig>, String> {
    const NAME: &str = "LAUNCH_TUNE_CACHE_REMOTE";
    let Some(value) = var(NAME) else { return Ok(None) };
    let text = value.to_string_lossy();
    let mut url = if Path::new(text.as_ref()).is_absolute() && text.trim() == text {
        RemoteUrl::Folder(text.as_ref().into())
    } else {
        RemoteUrl::parse(&text).map_err(|m| format!("{NAME}: {m} (or an absolute folder)"))?
    };
    if let RemoteUrl::S3 { region: region @ None, .. } = &mut url {
        let from_env = var("AWS_REGION").or_else(|| var("AWS_DEFAULT_REGION"));
        *region = Some(from_env.map_or_else(|| "us-east-1".to_string(), |r| r.to_string_lossy().into_owned()));
    }
    let mode = match var("LAUNCH_TUNE_CACHE_REMOTE_MODE") {
        None => Mode::ReadWrite,
        Some(v) => Mode::parse(&v.to_string_lossy()).ok_or_else(|| {
            format!(
                "LAUNCH_TUNE_CACHE_REMOTE_MODE: `{}` is not {} (unset means rw)",
                v.to_string_lossy().escape_debug(),
                Mode::VALUES.join(" or ")
            )
        })?,
    };
    let timeout = match var("LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT") {
        None => DEFAULT_TIMEOUT,
        Some(v) => parse_timeout(&v.to_string_lossy()).map_err(|m| format!("LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT: {m}"))?,
    };
    Ok(Some(RemoteConfig { url, mode, timeout, source: NAME.to_string() }))
}

//! The content-addressed cache of compiled kernels: one entry per kernel file × arch, holding
//! everything a [`JobOutput`](crate::compile::JobOutput) is rebuilt from without compiling (the
//! PTX, the cubin, ptxas's raw `-v` log and NVRTC's log).
//!
//! # Key
//! SHA-256 over, each field named and length-prefixed: [`FORMAT`], launch-build's version, the
//! file's name as NVRTC sees it, its text after the `@launch` contracts were applied, the path
//! (relative to the crate or toolchain root) and content digest of every header it includes
//! transitively, the NVRTC options (include folders as `$CRATE/...`, defines), the arch, the
//! `@launch` annotations, NVRTC's and ptxas's versions and the SHA-256 of the NVRTC library's and
//! the ptxas executable's bytes ([`tool_digest`], memoised by path, size and modification time in
//! `<cache root>/tool-digests.tsv`). Content, never file times or places, decides: touching a file
//! changes no key, and nothing absolute about the checkout or the toolchain's install goes in, so
//! two checkouts of a crate, two crates with the same kernel, and two installs of one toolchain
//! (another folder, another day, another machine) share entries. (A `host` file's key names nvcc
//! and the host compiler by their versions, see `crate::compile::host`.)
//!
//! # Entries
//! `<cache>/<first two hex digits>/<key hex>`, one file:
//!
//! ```text
//! "LAUNCHKC"  format: u32 LE  key: 32 bytes
//! 4 × (length: u64 LE, bytes)      PTX, cubin, ptxas log, NVRTC log
//! SHA-256 of everything above: 32 bytes
//! ```
//!
//! An entry is written to a unique temporary name in its folder and renamed into place, so a reader
//! sees a whole entry or none; two builds writing the same key at once write the same bytes, and
//! whichever rename lands last wins. An entry cut short (a killed build, a full disk) or damaged
//! fails the checksum and is compiled again, never loaded. No lock is taken anywhere.
//!
//! Only a regular file is read as an entry, never more than [`MAX_ENTRY`] bytes, and links are
//! never followed: a symbolic link (to `/dev/zero`, say), a FIFO, a device or a folder in an
//! entry's place is damaged like a bad checksum, and the next store replaces it.
//!
//! # Storage
//! [`Cache`] encodes, checks and decodes entries; where their bytes live is a [`Store`]
//! ([`store`]): the local folder above ([`LocalFolder`]), with, where one is configured, a shared
//! [`Remote`] behind it for teams and CI fleets ([`remote`]: read local, then remote, then
//! compile; write local, then remote unless read-only; every remote entry checked like a local
//! one).
//!
//! # Size limit and build log
//! A hit refreshes its entry's modification time; after a build that stored entries, the least
//! recently used go while the folder is over `LAUNCH_CACHE_MAX_SIZE` ([`limit`], safe while
//! other builds read and write). Each build through the cache appends a line (time, package,
//! jobs, from the cache, compiled) to `<cache root>/kernel-builds.tsv` ([`build_log`]), which
//! `cargo launch cache` reads for the hit rate of the last builds.
//!
//! # Compile times
//! Beside the entry folder, `<cache root>/kernel-timings/<crate>.tsv` ([`Timings`]) holds each
//! job's last compile time, by (file, arch) as the crate names them, so the next build that has to compile starts
//! the longest jobs first. It is a hint only: it is not part of any key or entry, a missing or
//! unreadable file means "no history", and two builds writing it at once lose one update at worst.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::contract::Annotation;
use crate::out;

pub mod build_log;
pub mod copies;
pub mod limit;
pub mod remote;
mod store;
mod tool_answer;
mod tool_digest;
pub use copies::Copies;
pub use remote::{Remote, RemoteConfig, RemoteUrl};
pub use store::{LocalFolder, Store};
pub use tool_answer::tool_answer;
pub use tool_digest::{read_digest, recorded, tool_digest};

/// Version of the key and entry layout. Bump it whenever either changes, or whenever something
/// new can change a compiler's output. 3: entries hold the signature probes.
pub const FORMAT: u32 = 3;

const MAGIC: &[u8; 8] = b"LAUNCHKC";

/// The largest entry that is read (PTX and cubins of one file and arch are megabytes at most);
/// anything larger is damaged, never loaded into memory.
pub const MAX_ENTRY: u64 = 1 << 30;

/// A cache key: SHA-256 of a job's inputs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(pub [u8; 32]);

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({self})")
    }
}

/// Everything about the toolchain that goes into a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolchainId {
    /// NVRTC's version (`12.9.86`).
    pub nvrtc_version: String,
    /// NVRTC's own `nvrtcVersion()` (`12.9`).
    pub nvrtc_api: (i32, i32),
    /// ptxas's version (`12.9.86`).
    pub ptxas_version: String,
    /// SHA-256 of the NVRTC library's bytes ([`tool_digest`]).
    pub nvrtc: [u8; 32],
    /// SHA-256 of the ptxas executable's bytes.
    pub ptxas: [u8; 32],
}

/// One job's inputs, as hashed into its key.
#[derive(Clone, Debug)]
pub struct KeyInputs<'a> {
    /// The file's name as NVRTC sees it (relative to the crate, `/`-separated).
    pub file: &'a str,
    /// The source after the `@launch` contracts were applied.
    pub text: &'a str,
    /// Every header it includes, transitively: portable path and SHA-256 of the content, sorted.
    pub headers: &'a [(String, [u8; 32])],
    /// NVRTC options in their portable form.
    pub options: &'a [String],
    /// The options added to ptxas's (`ptxas-flags`; i1 owns this field).
    pub ptxas_options: &'a [String],
    /// The target arch (`sm_90a`).
    pub arch: &'a str,
    /// The file's `@launch` annotations.
    pub annotations: &'a [Annotation],
    /// The toolchain.
    pub toolchain: &'a ToolchainId,
}

/// Feeds named, length-prefixed fields to SHA-256, so no two different inputs hash the same bytes.
struct KeyHasher(Sha256);

impl KeyHasher {
    fn field(&mut self, name: &str, value: &[u8]) {
        self.0.update((name.len() as u64).to_le_bytes());
        self.0.update(name.as_bytes());
        self.0.update((value.len() as u64).to_le_bytes());
        self.0.update(value);
    }
}

/// The key of one job.
pub fn key(k: &KeyInputs) -> Key {
    let mut h = KeyHasher(Sha256::new());
    h.field("format", &FORMAT.to_le_bytes());
    h.field("launch-build", env!("CARGO_PKG_VERSION").as_bytes());
    h.field("file", k.file.as_bytes());
    h.field("text", k.text.as_bytes());
    h.field("headers", &(k.headers.len() as u64).to_le_bytes());
    for (path, digest) in k.headers {
        h.field("header.path", path.as_bytes());
        h.field("header.sha256", digest);
    }
    h.field("options", &(k.options.len() as u64).to_le_bytes());
    for o in k.options {
        h.field("option", o.as_bytes());
    }
    h.field("ptxas.options", &(k.ptxas_options.len() as u64).to_le_bytes());
    for o in k.ptxas_options {
        h.field("ptxas.option", o.as_bytes());
    }
    h.field("arch", k.arch.as_bytes());
    h.field("annotations", &(k.annotations.len() as u64).to_le_bytes());
    for a in k.annotations {
        let text = format!("{}|{}|{:?}|{:?}|{}", a.kernel, a.threads, a.min_blocks, a.max_regs, a.line);
        h.field("annotation", text.as_bytes());
    }
    let t = k.toolchain;
    h.field("nvrtc.version", t.nvrtc_version.as_bytes());
    h.field("nvrtc.api", format!("{}.{}", t.nvrtc_api.0, t.nvrtc_api.1).as_bytes());
    h.field("ptxas.version", t.ptxas_version.as_bytes());
    h.field("nvrtc.sha256", &t.nvrtc);
    h.field("ptxas.sha256", &t.ptxas);
    Key(h.0.finalize().into())
}

/// The key of one part of a multi-part entry: a `host` file's compile is stored as one entry per
/// arch and one for its object, under keys derived from the compile's key (see
/// `compile::cached`). The object's entry is stored last and looked up first.
pub fn part_key(key: &Key, part: &str) -> Key {
    let mut h = KeyHasher(Sha256::new());
    h.field("format", &FORMAT.to_le_bytes());
    h.field("kind", b"part");
    h.field("of", &key.0);
    h.field("part", part.as_bytes());
    Key(h.0.finalize().into())
}

/// A variant's ptxas run (`crate::variants`: a build's tune variants, `cargo launch explore`'s
/// grid), as hashed into its key: the edited PTX holds everything NVRTC produced, so no source,
/// header or NVRTC option goes in, and of the toolchain only ptxas counts.
#[derive(Clone, Debug)]
pub struct VariantKeyInputs<'a> {
    /// The PTX ptxas reads: the kernel's entry alone, its contract written in (renamed, for a
    /// build's tune variant).
    pub text: &'a str,
    /// ptxas's options besides `-arch` and `-v` (the file's `ptxas-flags`).
    pub ptxas_options: &'a [String],
    /// The target arch.
    pub arch: &'a str,
    /// ptxas's version (`12.9.86`).
    pub ptxas_version: &'a str,
    /// SHA-256 of the ptxas executable's bytes ([`tool_digest`]).
    pub ptxas: &'a [u8; 32],
}

/// The key of one variant's ptxas run. Its fields differ from a job's ([`key`]) from the first
/// one on, so the two kinds of entry never share a key.
pub fn variant_key(k: &VariantKeyInputs) -> Key {
    let mut h = KeyHasher(Sha256::new());
    h.field("format", &FORMAT.to_le_bytes());
    h.field("kind", b"tune-variant");
    h.field("launch-build", env!("CARGO_PKG_VERSION").as_bytes());
    h.field("ptx", k.text.as_bytes());
    h.field("ptxas.options", &(k.ptxas_options.len() as u64).to_le_bytes());
    for o in k.ptxas_options {
        h.field("ptxas.option", o.as_bytes());
    }
    h.field("arch", k.arch.as_bytes());
    h.field("ptxas.version", k.ptxas_version.as_bytes());
    h.field("ptxas.sha256", k.ptxas);
    Key(h.0.finalize().into())
}

/// SHA-256 of each header's content, each file read once per build.
#[derive(Debug, Default)]
pub struct HeaderDigests(BTreeMap<PathBuf, [u8; 32]>);

impl HeaderDigests {
    /// The digest of `path`'s content; a file that cannot be read hashes as its error text (so a
    /// header that appears later still changes the key).
    pub fn digest(&mut self, path: &Path) -> [u8; 32] {
        // Remembered by the file's version, across builds too (`source::known`).
        *self.0.entry(path.to_path_buf()).or_insert_with(|| match crate::source::header_digest(path) {
            Some(digest) => digest,
            None => match crate::input::read(path) {
                Ok(bytes) => Sha256::digest(&bytes).into(),
                Err(e) => Sha256::digest(format!("unreadable: {e}").as_bytes()).into(),
            },
        })
    }
}

/// What an entry holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The PTX (contracts applied), as ptxas read it.
    pub ptx: String,
    /// The cubin.
    pub cubin: Vec<u8>,
    /// ptxas's stderr (the `-v` report), with the work folder written as a placeholder.
    pub ptxas_log: String,
    /// NVRTC's log, with the crate root written as a placeholder.
    pub nvrtc_log: String,
    /// The signature probes' lowered names, one `entry\tlowered` line per `extern "C"` entry
    /// (nothing after the tab where the probe gave none).
    pub probes: String,
}

/// The result of a lookup.
#[derive(Debug)]
pub enum Lookup {
    /// A whole, verified entry.
    Hit(Entry),
    /// No entry.
    Miss,
    /// An entry exists but is damaged or cut short: it is compiled again and replaced.
    Corrupt(String),
}

/// Serialises an entry for `key`.
pub fn encode(key: &Key, e: &Entry) -> Vec<u8> {
    let sections: [&[u8]; 5] =
        [e.ptx.as_bytes(), &e.cubin, e.ptxas_log.as_bytes(), e.nvrtc_log.as_bytes(), e.probes.as_bytes()];
    let mut out = Vec::with_capacity(8 + 4 + 32 + sections.iter().map(|s| s.len() + 8).sum::<usize>() + 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&key.0);
    for s in sections {
        put_section(&mut out, s);
    }
    let digest: [u8; 32] = Sha256::digest(&out).into();
    out.extend_from_slice(&digest);
    out
}

/// Appends `s` as a section: its length (8 bytes, little-endian), then its bytes. The layout of an
/// entry's sections, and of the files kept in one (`compile::host::steps::pack`).
pub(crate) fn put_section(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
}

/// The section at the start of `rest` ([`put_section`]'s layout), `rest` moved past it; `None`
/// when the bytes are too few for its length or its bytes.
pub(crate) fn take_section<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (len, tail) = rest.split_first_chunk::<8>()?;
    let (s, tail) = tail.split_at_checked(usize::try_from(u64::from_le_bytes(*len)).ok()?)?;
    *rest = tail;
    Some(s)
}

/// Reads an entry back, checking the checksum, the format and that it belongs to `key`.
pub fn decode(key: &Key, bytes: &[u8]) -> Result<Entry, String> {
    decode_checked(key, bytes, true)
}

/// [`decode`] with the checksum checked or not: a build's own [`Copies`] are trusted by their
/// stamp (the layout, format and key are checked all the same).
fn decode_checked(key: &Key, bytes: &[u8], checksum: bool) -> Result<Entry, String> {
    let header = MAGIC.len() + 4 + 32;
    if bytes.len() < header + 5 * 8 + 32 {
        return Err(format!("{} bytes: cut short", bytes.len()));
    }
    let (body, digest) = bytes.split_at(bytes.len() - 32);
    if checksum && Sha256::digest(body).as_slice() != digest {
        return Err("checksum mismatch: cut short or damaged".into());
    }
    if &body[..8] != MAGIC {
        return Err("not a launch-build cache entry".into());
    }
    let format = u32::from_le_bytes(body[8..12].try_into().expect("4 bytes"));
    if format != FORMAT {
        return Err(format!("format {format}, expected {FORMAT}"));
    }
    if body[12..44] != key.0 {
        return Err("entry of another key".into());
    }
    let mut rest = &body[header..];
    let mut section = || -> Result<Vec<u8>, String> {
        if rest.len() < 8 {
            return Err("cut short".into());
        }
        take_section(&mut rest).map(<[u8]>::to_vec).ok_or_else(|| "section overruns the entry".to_string())
    };
    let text = |b: Vec<u8>| String::from_utf8(b).map_err(|_| "text section is not UTF-8".to_string());
    let ptx = text(section()?)?;
    let cubin = section()?;
    let ptxas_log = text(section()?)?;
    let nvrtc_log = text(section()?)?;
    let probes = text(section()?)?;
    if !rest.is_empty() {
        return Err("trailing bytes".into());
    }
    Ok(Entry { ptx, cubin, ptxas_log, nvrtc_log, probes })
}

/// The kernel cache: entries encoded, checked and decoded here, their bytes kept in a [`Store`]
/// (by default the local folder, [`LocalFolder`]).
#[derive(Clone, Debug)]
pub struct Cache<S = LocalFolder> {
    store: S,
    remote: Option<std::sync::Arc<Remote>>,
    /// The build folder's own copies, read before the store and kept of every entry used.
    copies: Option<std::sync::Arc<Copies>>,
}

/// Where a lookup's answer came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The local store (or nowhere: a miss with no remote entry either).
    Local,
    /// The remote store.
    Remote,
}

impl Cache {
    /// The cache in the local folder `dir` (created on first store).
    pub fn new(dir: PathBuf) -> Cache {
        Cache::with_store(LocalFolder::new(dir))
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        self.store.dir()
    }

    /// The folder above it, the cache root (`kernels/`'s parent): where the tool digests' memo
    /// and the build log live.
    pub fn root(&self) -> &Path {
        self.store.dir().parent().unwrap_or(Path::new("."))
    }

    #[cfg(test)]
    /// Where the entry of `key` lives.
    pub fn entry_path(&self, key: &Key) -> PathBuf {
        self.store.entry_path(key)
    }
}

impl<S: Store> Cache<S> {
    /// A cache whose entries live in `store`.
    pub fn with_store(store: S) -> Cache<S> {
        Cache { store, remote: None, copies: None }
    }

    /// The same cache with the build folder's `copies` in front of its store ([`copies`]).
    pub fn with_copies(self, copies: Copies) -> Cache<S> {
        Cache { copies: Some(std::sync::Arc::new(copies)), ..self }
    }

    /// The copies in front of it, if any.
    pub fn copies(&self) -> Option<&Copies> {
        self.copies.as_deref()
    }

    /// The same cache with `remote` behind its store.
    pub fn with_remote(self, remote: Remote) -> Cache<S> {
        Cache { remote: Some(std::sync::Arc::new(remote)), ..self }
    }

    /// The remote behind it, if any.
    pub fn remote(&self) -> Option<&Remote> {
        self.remote.as_deref()
    }

    /// Where the store is, for messages.
    pub fn location(&self) -> String {
        self.store.location()
    }

    /// Marks the local entry of `key` used now, without reading it ([`Store::mark_used`]).
    pub fn mark_used(&self, key: &Key) {
        self.store.mark_used(key);
    }

    /// Looks `key` up. An entry that fails the checksum or belongs to another key, or that the
    /// store cannot hand over as one (for the local folder: not a regular file of at most
    /// [`MAX_ENTRY`] bytes), is [`Lookup::Corrupt`] (it is rebuilt and replaced).
    pub fn load(&self, key: &Key) -> Lookup {
        self.load_traced(key).0
    }

    /// [`Cache::load`], saying where the answer came from. The local store first; on a local miss
    /// (or a damaged local entry), the remote, whose entry is checked the same way and, when
    /// whole, copied into the local store. A damaged remote entry is [`Lookup::Corrupt`] (the job
    /// compiles and [`Cache::store`] replaces it there too); a remote that is unavailable is a
    /// miss (and the build's one warning, see [`remote`]).
    ///
    /// With [`Copies`], a trusted copy comes first and counts as a local hit (its entry is marked
    /// used, as if read); an entry read from a store is copied.
    pub fn load_traced(&self, key: &Key) -> (Lookup, Source) {
        if let Some(copies) = self.copies.as_deref() {
            if let Some((e, bytes)) = copies.get(key).and_then(|b| Some((decode_checked(key, &b, false).ok()?, b))) {
                // A cache emptied or another cache folder gets the entry back: it holds what the
                // build used, for the next checkout.
                if !self.store.mark_used(key) {
                    let _ = self.store.put(key, &bytes);
                }
                return (Lookup::Hit(e), Source::Local);
            }
        }
        let (local, bytes) = self.load_local_bytes(key);
        if let (Some(copies), Some(bytes)) = (self.copies.as_deref(), bytes) {
            copies.put(key, &bytes);
        }
        let Some(remote) = self.remote.as_deref() else { return (local, Source::Local) };
        if matches!(local, Lookup::Hit(_)) {
            return (local, Source::Local);
        }
        let damaged =
            |reason: String| (Lookup::Corrupt(format!("{}: {reason}", remote.entry_location(key))), Source::Remote);
        match remote.get(key) {
            Ok(Some(bytes)) => match decode(key, &bytes) {
                Ok(e) => {
                    remote.hit(bytes.len());
                    // Best effort: without the local copy the next build reads the remote again.
                    let _ = self.store.put(key, &bytes);
                    if let Some(copies) = self.copies.as_deref() {
                        copies.put(key, &bytes);
                    }
                    (Lookup::Hit(e), Source::Remote)
                }
                Err(reason) => damaged(reason),
            },
            Ok(None) => (local, Source::Local),
            Err(reason) => damaged(reason),
        }
    }

    /// The local store's answer alone.
    fn load_local(&self, key: &Key) -> Lookup {
        self.load_local_bytes(key).0
    }

    /// [`Cache::load_local`], with a hit's bytes.
    fn load_local_bytes(&self, key: &Key) -> (Lookup, Option<Vec<u8>>) {
        let damaged = |reason: String| Lookup::Corrupt(format!("{}: {reason}", self.store.entry_location(key)));
        match self.store.get(key) {
            Ok(Some(bytes)) => match decode(key, &bytes) {
                Ok(e) => (Lookup::Hit(e), Some(bytes)),
                Err(reason) => (damaged(reason), None),
            },
            Ok(None) => (Lookup::Miss, None),
            Err(reason) => (damaged(reason), None),
        }
    }

    /// The local store's entry of `key` alone: no copies, no remote (an entry that only a build
    /// of this machine can use, such as the arches of a host compile that did not finish).
    pub fn load_only_local(&self, key: &Key) -> Lookup {
        self.load_local(key)
    }

    /// Stores `entry` under `key` in the local store alone (see [`Cache::load_only_local`]).
    pub fn store_only_local(&self, key: &Key, entry: &Entry) -> io::Result<()> {
        self.store.put(key, &encode(key, entry))
    }

    /// Removes the local store's entry of `key` (see [`Cache::load_only_local`]).
    pub fn remove_only_local(&self, key: &Key) {
        self.store.remove(key);
    }

    /// Stores `entry` under `key`, all or nothing ([`Store::put`]). Another build storing the same
    /// key at the same time is harmless (same bytes; the last write wins; a lost race counts as
    /// success: a failed put with a whole entry in place is no failure).
    ///
    /// With a remote, the entry is written there too (unless it is read-only or has failed in this
    /// build), whatever became of the local write; a failed remote write is the remote's one
    /// warning, never an error here.
    pub fn store(&self, key: &Key, entry: &Entry) -> io::Result<()> {
        let bytes = encode(key, entry);
        if let Some(copies) = self.copies.as_deref() {
            copies.put(key, &bytes);
        }
        let local = match self.store.put(key, &bytes) {
            Ok(()) => Ok(()),
            Err(_) if matches!(self.load_local(key), Lookup::Hit(_)) => Ok(()),
            Err(e) => Err(e),
        };
        if let Some(remote) = self.remote.as_deref() {
            remote.put(key, &bytes);
        }
        local
    }
}

/// Each job's last compile time (NVRTC + ptxas, milliseconds) for one crate, by (file, arch).
///
/// One text file per crate, `<dir>/<16 hex digits of SHA-256 of the crate root>.tsv`,
/// a line per job: `milliseconds TAB arch TAB file`. Written whole to a temporary file and renamed.
/// Keyed by the file's name, not its content, so an edited file (a new cache key) still has its
/// history: that is exactly when the order matters.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    path: Option<PathBuf>,
    times: BTreeMap<(String, String), u64>,
}

/// The largest timings file that is read; a larger one is ignored (no history).
const MAX_TIMINGS: u64 = 4 << 20;

impl Timings {
    /// The history of the crate at `root`, in the timings folder `dir` (beside the entry folder,
    /// never inside it); empty when there is none or it cannot be read.
    pub fn load(dir: &Path, root: &Path) -> Timings {
        let digest = Sha256::digest(root.display().to_string().as_bytes());
        let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let path = dir.join(format!("{name}.tsv"));
        let times = match read_entry_limited(&path, MAX_TIMINGS) {
            Some(bytes) => parse_timings(&String::from_utf8_lossy(&bytes)),
            None => BTreeMap::new(),
        };
        Timings { path: Some(path), times }
    }

    /// The last compile time of `file` for `arch`, milliseconds.
    pub fn get(&self, file: &str, arch: &str) -> Option<u64> {
        self.times.get(&(file.to_string(), arch.to_string())).copied()
    }

    /// Records a compile time (kept in memory until [`Timings::save`]).
    pub fn record(&mut self, file: &str, arch: &str, ms: u64) {
        self.times.insert((file.to_string(), arch.to_string()), ms);
    }

    /// Writes the history back. Only for loaded histories; a failure leaves the old file.
    pub fn save(&self) -> io::Result<()> {
        let Some(path) = &self.path else { return Ok(()) };
        let dir = path.parent().expect("timings live in a folder");
        fs::create_dir_all(dir)?;
        store::sweep_stale_temps(dir);
        let mut text = String::new();
        for ((file, arch), ms) in &self.times {
            text.push_str(&format!("{ms}\t{arch}\t{file}\n"));
        }
        out::write_atomically(path, text.as_bytes())
    }
}

/// `ms TAB arch TAB file` lines; anything else is skipped.
fn parse_timings(text: &str) -> BTreeMap<(String, String), u64> {
    let mut times = BTreeMap::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, '\t');
        let (Some(ms), Some(arch), Some(file)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if let Ok(ms) = ms.parse::<u64>() {
            if !arch.is_empty() && !file.is_empty() {
                times.insert((file.to_string(), arch.to_string()), ms);
            }
        }
    }
    times
}

/// A regular file's bytes when it holds at most `limit` bytes; `None` otherwise (missing, a link,
/// a FIFO, too large, unreadable).
fn read_entry_limited(path: &Path, limit: u64) -> Option<Vec<u8>> {
    store::read_bounded(path, limit).ok().flatten()
}

/// Replaces each `(text, placeholder)` pair's text by its placeholder, in order (put the longer,
/// more specific path first).
pub fn to_placeholders(text: &str, pairs: &[(String, &str)]) -> String {
    let mut s = text.to_string();
    for (from, to) in pairs {
        if !from.is_empty() {
            s = s.replace(from.as_str(), to);
        }
    }
    s
}

/// The reverse of [`to_placeholders`].
pub fn from_placeholders(text: &str, pairs: &[(String, &str)]) -> String {
    let mut s = text.to_string();
    for (to, from) in pairs {
        s = s.replace(from, to);
    }
    s
}

#[cfg(test)]
mod tests;

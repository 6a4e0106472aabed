//! Reading, checking and writing the `launch-prebuilt/` folder.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path};

use launch_schema::prebuilt::{PinnedToolchain, Record, ShippedFile, VERSION};
use sha2::{Digest as _, Sha256};

use super::fingerprint::{hex, Fingerprint};
use super::RECORD;
use crate::error::Error;
use crate::out;
use launch_schema::manifest::Manifest;

/// The largest file a prebuilt folder may ship (a cubin of a huge kernel file is tens of MB).
const MAX_FILE: u64 = 256 << 20;

/// A prebuilt folder's files, in memory: the record and every other file by its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contents {
    /// The record.
    pub record: Record,
    /// Every file but the record, by path relative to the folder (`manifest.json`,
    /// `cubin/kernels+poly.cu.sm_90.cubin`, ...).
    pub files: BTreeMap<String, Vec<u8>>,
}

impl Contents {
    /// The record's bytes as written (pretty JSON, a final newline): the same contents always
    /// give the same bytes.
    pub fn record_bytes(&self) -> Vec<u8> {
        let mut json = serde_json::to_string_pretty(&self.record).expect("the record serialises");
        json.push('\n');
        json.into_bytes()
    }

    /// Every file of the folder, the record included, by path.
    pub fn all_files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut all = self.files.clone();
        all.insert(RECORD.to_string(), self.record_bytes());
        all
    }
}

/// The prebuilt folder made from a from-source build: the manifest (its toolchain described
/// without the machine's paths), every file it embeds, read from `launch_dir` (`OUT_DIR/launch`),
/// and the record for `fp`.
///
/// # Errors
/// [`Error::Prebuilt`] for a build that cannot be shipped (compiled with another toolchain than
/// the crate's pinned one, or with `host` files, which need nvcc and a host compiler to link);
/// a file of the build that cannot be read.
pub fn contents(launch_dir: &Path, manifest: &Manifest, fp: &Fingerprint) -> Result<Contents, Error> {
    let refuse = |problem: String, instead: &str| Error::Prebuilt {
        folder: super::FOLDER.into(),
        problems: vec![problem],
        instead: instead.to_string(),
        no_toolchain: false,
    };
    if manifest.toolchain.compilers.nvrtc != fp.pin_version || manifest.toolchain.compilers.ptxas != fp.pin_version {
        return Err(refuse(
            format!(
                "it was compiled with NVRTC {} and ptxas {}, not the crate's pinned {} toolchain ({})",
                manifest.toolchain.compilers.nvrtc, manifest.toolchain.compilers.ptxas, fp.pin, fp.pin_version
            ),
            "Prebuilt kernels must come from the pinned toolchain, so that anyone can compile them again and \
             compare: install it with `cargo launch setup` and unset LAUNCH_TOOLCHAIN.",
        ));
    }
    if let Some(h) = manifest.host.first() {
        return Err(refuse(
            format!("`{}` is a `host` file", h.file),
            "Host files are compiled by nvcc and linked with the CUDA runtime by the host compiler: a crate with \
             `host` files builds from source.",
        ));
    }
    let mut shipped = manifest.clone();
    shipped.toolchain.description = format!(
        "NVRTC {}, ptxas {} (prebuilt with the pinned {} toolchain)",
        manifest.toolchain.compilers.nvrtc, manifest.toolchain.compilers.ptxas, fp.pin
    );
    let mut files = BTreeMap::new();
    let mut json = serde_json::to_string_pretty(&shipped).expect("the manifest serialises");
    json.push('\n');
    files.insert("manifest.json".to_string(), json.into_bytes());
    for path in crate::embed::embedded_files(manifest) {
        let at = launch_dir.join(&path);
        let bytes = fs::read(&at).map_err(Error::io("read", &at))?;
        files.insert(path, bytes);
    }
    let record = Record {
        schema: VERSION,
        key: fp.key.clone(),
        package: fp.package.clone(),
        made_by: format!("launch-build {}", env!("CARGO_PKG_VERSION")),
        toolchain: PinnedToolchain { pin: fp.pin.to_string(), compilers: manifest.toolchain.compilers.clone() },
        arches: fp.arches.clone(),
        inputs: fp.inputs.clone(),
        files: files
            .iter()
            .map(|(path, bytes)| ShippedFile {
                path: path.clone(),
                bytes: bytes.len() as u64,
                sha256: hex(&Sha256::digest(bytes)),
            })
            .collect(),
    };
    Ok(Contents { record, files })
}

/// The record of the prebuilt folder `folder`; `None` when there is no folder.
///
/// # Errors
/// [`Error::Prebuilt`] when the folder has no readable record of a version this launch-build reads.
pub fn read_record(folder: &Path) -> Result<Option<Record>, Error> {
    if fs::symlink_metadata(folder).is_err() {
        return Ok(None);
    }
    let path = folder.join(RECORD);
    let bytes = read_bounded(&path).map_err(|e| damaged(folder, format!("{RECORD}: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| damaged(folder, format!("{RECORD} is not UTF-8")))?;
    Record::from_json(&text).map(Some).map_err(|e| damaged(folder, format!("{RECORD}: {e}")))
}

/// Every file `record` lists, read from `folder` and checked against its size and digest; the
/// manifest among them must be the record's package's.
///
/// # Errors
/// [`Error::Prebuilt`] naming every file that is missing, damaged or not where a record may point.
pub fn read_files(folder: &Path, record: &Record) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    let mut files = BTreeMap::new();
    let mut problems = Vec::new();
    for f in &record.files {
        if !is_plain_relative(&f.path) || f.path == RECORD {
            problems.push(format!("{RECORD} lists `{}`, which is not a file of the folder", f.path));
            continue;
        }
        match read_bounded(&folder.join(&f.path)) {
            Ok(bytes) if bytes.len() as u64 == f.bytes && hex(&Sha256::digest(&bytes)) == f.sha256 => {
                files.insert(f.path.clone(), bytes);
            }
            Ok(_) => problems.push(format!("`{}` is damaged (its size or SHA-256 differs from {RECORD})", f.path)),
            Err(e) => problems.push(format!("`{}`: {e}", f.path)),
        }
    }
    if problems.is_empty() && !files.contains_key("manifest.json") {
        problems.push(format!("{RECORD} lists no manifest.json"));
    }
    if problems.is_empty() {
        Ok(files)
    } else {
        Err(Error::Prebuilt { folder: folder.to_path_buf(), problems, instead: String::new(), no_toolchain: false })
    }
}

/// What differs between the inputs `record` was made from and the sources at hand (`fp`), one
/// entry per difference, in the record's order; empty when the keys are equal.
pub fn changes(record: &Record, fp: &Fingerprint) -> Vec<String> {
    if record.key == fp.key {
        return Vec::new();
    }
    let mut out = Vec::new();
    if record.package != fp.package {
        out.push(format!("it was made for package `{}`, this is `{}`", record.package, fp.package));
    }
    if record.arches != fp.arches {
        let list = |a: &[launch::Arch]| a.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
        out.push(format!("it holds {}, this build wants {}", list(&record.arches), list(&fp.arches)));
    }
    if record.toolchain.pin != fp.pin {
        out.push(format!("it was made with the {} toolchain, the crate asks for {}", record.toolchain.pin, fp.pin));
    } else if record.toolchain.compilers.ptxas != fp.pin_version {
        out.push(format!(
            "it was made with {}, this launch-build pins {}",
            record.toolchain.compilers.ptxas, fp.pin_version
        ));
    }
    let old: BTreeMap<&str, &str> = record.inputs.iter().map(|d| (d.path.as_str(), d.sha256.as_str())).collect();
    let new: BTreeMap<&str, &str> = fp.inputs.iter().map(|d| (d.path.as_str(), d.sha256.as_str())).collect();
    for (path, sha) in &new {
        match old.get(path) {
            Some(o) if o == sha => {}
            Some(_) => out.push(format!("{path} changed")),
            None => out.push(format!("{path} is new")),
        }
    }
    out.extend(old.keys().filter(|p| !new.contains_key(*p)).map(|p| format!("{p} is gone")));
    if out.is_empty() {
        out.push(format!(
            "{} wrote it for another output format (this launch-build's is {})",
            record.made_by,
            super::OUTPUT_FORMAT
        ));
    }
    out
}

/// Writes `contents` as the folder `folder`, all or nothing: into a new folder beside it, then
/// swapped into place. Returns `false` (and touches nothing) when the folder holds exactly these
/// files already.
///
/// # Errors
/// A file or folder that cannot be written; what was created is removed.
pub fn write_folder(folder: &Path, contents: &Contents) -> Result<bool, Error> {
    let all = contents.all_files();
    if holds_exactly(folder, &all) {
        return Ok(false);
    }
    let parent = folder.parent().unwrap_or(Path::new("."));
    let name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let staging = parent.join(format!(".{name}.{}.new", std::process::id()));
    let old = parent.join(format!(".{name}.{}.old", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    let written = (|| {
        for (path, bytes) in &all {
            let p = staging.join(path);
            let dir = p.parent().unwrap_or(&staging);
            fs::create_dir_all(dir).map_err(Error::io("create folder", dir))?;
            out::write_atomically(&p, bytes).map_err(Error::io("write", &p))?;
        }
        if fs::symlink_metadata(folder).is_ok() {
            fs::rename(folder, &old).map_err(Error::io("move aside", folder))?;
        }
        fs::rename(&staging, folder).map_err(Error::io("move into place", &staging))
    })();
    if written.is_err() {
        let _ = fs::remove_dir_all(&staging);
        // Put the previous folder back if it was moved aside.
        if fs::symlink_metadata(folder).is_err() && fs::symlink_metadata(&old).is_ok() {
            let _ = fs::rename(&old, folder);
        }
    }
    written?;
    let _ = fs::remove_dir_all(&old);
    Ok(true)
}

/// Whether `folder` holds exactly `files` (no other file, the same bytes).
fn holds_exactly(folder: &Path, files: &BTreeMap<String, Vec<u8>>) -> bool {
    let mut found = Vec::new();
    if !list(folder, "", &mut found) || found.len() != files.len() {
        return false;
    }
    found.iter().all(|p| files.get(p).is_some_and(|b| fs::read(folder.join(p)).is_ok_and(|d| &d == b)))
}

/// Every regular file under `dir`, relative and `/`-separated; `false` when something else is there.
fn list(dir: &Path, prefix: &str, out: &mut Vec<String>) -> bool {
    let Ok(rd) = fs::read_dir(dir) else { return false };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        match e.file_type() {
            Ok(t) if t.is_dir() => {
                if !list(&e.path(), &rel, out) {
                    return false;
                }
            }
            Ok(t) if t.is_file() => out.push(rel),
            _ => return false,
        }
    }
    true
}

/// A path a record may name: relative, `/`-separated, no `.`, `..` or empty segment.
fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && Path::new(path).components().all(|c| matches!(c, Component::Normal(_)))
        && path.split('/').all(|s| !s.is_empty() && s != "." && s != "..")
}

/// The bytes of a regular file (never a link, a FIFO or a device) of at most [`MAX_FILE`].
fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    let meta = fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".to_string());
    }
    if meta.len() > MAX_FILE {
        return Err(format!("{} bytes, more than a prebuilt file may have", meta.len()));
    }
    fs::read(path).map_err(|e| e.to_string())
}

fn damaged(folder: &Path, problem: String) -> Error {
    Error::Prebuilt {
        folder: folder.to_path_buf(),
        problems: vec![problem],
        instead: String::new(),
        no_toolchain: false,
    }
}

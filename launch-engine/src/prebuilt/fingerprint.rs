//! The key of a crate's prebuilt kernels: everything a from-source build's outputs depend on,
//! computed without a toolchain (the build script computes it before looking for one, and
//! `cargo launch` without building).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Component, Path};

use launch::Arch;
use launch_schema::prebuilt::Digest;
use sha2::{Digest as _, Sha256};
use toml_edit::{Item, Value};

use crate::error::Error;
use crate::plan::Plan;
use crate::source;

/// The input that stands for the crate's `[package.metadata.launch]` table.
pub const METADATA_INPUT: &str = "Cargo.toml [package.metadata.launch]";

/// What a from-source build of the crate at hand depends on, and its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// SHA-256 (hex) over everything below and [`super::OUTPUT_FORMAT`].
    pub key: String,
    /// The package.
    pub package: String,
    /// The arches built, lowest first.
    pub arches: Vec<Arch>,
    /// The pinned toolchain the crate asks for (`12.9`).
    pub pin: &'static str,
    /// That pin's exact version (`12.9.86`): what a prebuilt folder's compilers must be.
    pub pin_version: &'static str,
    /// Every input with its digest, sorted by path (see `launch_schema::prebuilt::Record::inputs`).
    pub inputs: Vec<Digest>,
}

/// The fingerprint of `plan`'s build: the metadata table, every planned kernel file and every
/// crate header they include (found in the kernel folder and the `include` folders, as the build
/// announces them to cargo; the toolchain's own headers are covered by the pin).
///
/// # Errors
/// A kernel file, a header or Cargo.toml that cannot be read (the build would fail on it too).
pub fn of_plan(plan: &Plan) -> Result<Fingerprint, Error> {
    let config = &plan.config;
    let root = config.root();
    let mut inputs =
        vec![Digest { path: METADATA_INPUT.to_string(), sha256: hex(&metadata_digest(&config.manifest_path)?) }];
    let include_dirs = config.include_path();
    let mut headers = BTreeSet::new();
    for f in &plan.files {
        let s = &f.source;
        let bytes = crate::input::read_kernel(&s.file, &s.path, &s.kernel_rel)?;
        inputs.push(Digest { path: s.file.clone(), sha256: hex(&Sha256::digest(&bytes)) });
        headers.extend(source::dependencies(&s.path, &include_dirs, root)?);
    }
    for h in headers {
        let shown = relative(&h, root);
        let bytes = crate::input::read(&h).map_err(|r| r.into_error(&shown, &h, None, "make it a regular file"))?;
        inputs.push(Digest { path: shown, sha256: hex(&Sha256::digest(&bytes)) });
    }
    inputs.sort();
    // A `.cu` file that another one includes is both a kernel file and a header.
    inputs.dedup();
    let arches: Vec<Arch> = config.arches.clone();
    let pin = config.toolchain;
    let key = key(&config.package, &arches, pin.name, pin.version, &inputs);
    Ok(Fingerprint { key, package: config.package.clone(), arches, pin: pin.name, pin_version: pin.version, inputs })
}

/// SHA-256 over named, length-prefixed fields (as the kernel cache's keys), so no two different
/// sets of inputs hash the same bytes.
pub fn key(package: &str, arches: &[Arch], pin: &str, pin_version: &str, inputs: &[Digest]) -> String {
    let mut h = Sha256::new();
    let mut field = |name: &str, value: &[u8]| {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((value.len() as u64).to_le_bytes());
        h.update(value);
    };
    field("kind", b"launch-prebuilt");
    field("output-format", &super::OUTPUT_FORMAT.to_le_bytes());
    field("package", package.as_bytes());
    let arches: Vec<String> = arches.iter().map(|a| a.to_string()).collect();
    field("arches", arches.join(",").as_bytes());
    field("toolchain.pin", pin.as_bytes());
    field("toolchain.version", pin_version.as_bytes());
    field("inputs", &(inputs.len() as u64).to_le_bytes());
    for i in inputs {
        field("input.path", i.path.as_bytes());
        field("input.sha256", i.sha256.as_bytes());
    }
    hex(&h.finalize())
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// SHA-256 of the canonical form of `[package.metadata.launch]` ([`canonical`]): `cargo package`
/// rewrites Cargo.toml (other formatting, no comments, tables made inline or not), and the crate
/// unpacked from a registry must have the key of the crate that was packaged.
fn metadata_digest(manifest_path: &Path) -> Result<[u8; 32], Error> {
    let shown = manifest_path.display().to_string();
    let bytes = crate::input::read(manifest_path)
        .map_err(|r| r.into_error(&shown, manifest_path, None, "make it a regular file"))?;
    let text = String::from_utf8_lossy(&bytes);
    // Config::load parsed this file already; a file changed since then is told apart by its digest.
    let doc: toml_edit::ImDocument<String> = text.parse().map_err(|e: toml_edit::TomlError| Error::Io {
        path: manifest_path.to_path_buf(),
        action: "read",
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
    })?;
    let table = doc.get("package").and_then(|p| p.get("metadata")).and_then(|m| m.get("launch"));
    let mut s = String::new();
    if let Some(t) = table {
        canonical(&mut s, t);
    }
    Ok(Sha256::digest(s.as_bytes()).into())
}

/// A TOML item with its meaning only: keys sorted, no formatting, no comments, a table and an
/// inline table alike.
pub fn canonical(s: &mut String, item: &Item) {
    match item {
        Item::None => s.push_str("none"),
        Item::Value(v) => canonical_value(s, v),
        Item::Table(t) => canonical_table(s, t.iter().map(|(k, v)| (k, v.clone()))),
        Item::ArrayOfTables(a) => {
            s.push('[');
            for t in a.iter() {
                canonical_table(s, t.iter().map(|(k, v)| (k, v.clone())));
                s.push(',');
            }
            s.push(']');
        }
    }
}

fn canonical_value(s: &mut String, v: &Value) {
    match v {
        Value::String(x) => {
            let _ = write!(s, "{:?}", x.value());
        }
        Value::Integer(x) => {
            let _ = write!(s, "{}", x.value());
        }
        Value::Float(x) => {
            let _ = write!(s, "{:?}", x.value());
        }
        Value::Boolean(x) => {
            let _ = write!(s, "{}", x.value());
        }
        Value::Datetime(x) => {
            let _ = write!(s, "datetime:{}", x.value());
        }
        Value::Array(a) => {
            s.push('[');
            for x in a.iter() {
                canonical_value(s, x);
                s.push(',');
            }
            s.push(']');
        }
        Value::InlineTable(t) => canonical_table(s, t.iter().map(|(k, v)| (k, Item::Value(v.clone())))),
    }
}

fn canonical_table<'a>(s: &mut String, entries: impl Iterator<Item = (&'a str, Item)>) {
    let mut entries: Vec<(&str, Item)> = entries.filter(|(_, v)| !v.is_none()).collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    s.push('{');
    for (k, v) in entries {
        let _ = write!(s, "{k:?}=");
        canonical(s, &v);
        s.push(',');
    }
    s.push('}');
}

/// `path` relative to `root`, `/`-separated, with `..` for a header outside the crate (which a
/// packaged crate cannot ship; the record then says where it was).
pub fn relative(path: &Path, root: &Path) -> String {
    let path_parts: Vec<Component> = path.components().collect();
    let root_parts: Vec<Component> = root.components().collect();
    let common = path_parts.iter().zip(&root_parts).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); root_parts.len() - common];
    parts.extend(path_parts[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}

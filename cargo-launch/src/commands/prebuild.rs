//! `cargo launch prebuild [--verify]`: the crate's kernels compiled from source and written to
//! `launch-prebuilt/` (what a build embeds without any toolchain, see `launch_engine::prebuilt`),
//! or compiled again without the cache and compared with it byte for byte.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context;
use launch_engine::prebuilt::{self, Contents};
use launch_schema::manifest::Manifest;
use launch_schema::prebuilt::{Cost, Difference, PackageSummary, Summary, VERSION};
use sha2::{Digest as _, Sha256};

use crate::cargo::Selection;
use crate::cli::{Format, PrebuildArgs};
use crate::error::Error;
use crate::records::PackageKernels;
use crate::toolchain;

/// crates.io refuses a `.crate` file larger than this.
const CRATES_IO_LIMIT: u64 = 10 * 1000 * 1000;

/// Runs `cargo launch prebuild`.
pub(crate) fn run(args: &PrebuildArgs) -> Result<(), Error> {
    let selection = Selection::of(&args.packages)?;
    refuse_host_files(&selection)?;
    refuse_another_pin(&selection)?;
    toolchain::ensure(args.no_setup, &selection)?;
    let packages = selection.build_from_source(args.verify)?;
    let mut summaries = Vec::new();
    for p in &packages {
        summaries.push(package(p, args.verify)?);
    }
    let summary =
        Summary { schema: VERSION, mode: if args.verify { "verify" } else { "write" }.into(), packages: summaries };
    let mut out = crate::stdout::stdout();
    let written = match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &summary).map_err(std::io::Error::from).and_then(|()| writeln!(out))
        }
        Format::Text => text(&mut out, &summary),
    };
    written.context("writing to stdout").map_err(Error::Failure)?;
    for w in summary.packages.iter().filter_map(size_warning) {
        eprintln!("warning: {w}");
    }
    if summary.packages.iter().any(|p| !p.differences.is_empty()) {
        return Err(Error::CheckFailed);
    }
    Ok(())
}

/// A usage error for a selected package with `host` files, located at its first entry: those
/// are compiled by nvcc and linked with the CUDA runtime by the user's host compiler, so such a
/// crate has no prebuilt form (checked before any build or toolchain install).
fn refuse_host_files(selection: &Selection) -> Result<(), Error> {
    let Some((config, first)) = selection.configs().find_map(|c| c.host.first().map(|h| (c, h))) else {
        return Ok(());
    };
    Err(Error::Usage(anyhow::anyhow!(
        "{}: `cargo launch prebuild` does not support crates with `host` files ({} lists `{}`): host files are \
         compiled by nvcc and linked with the CUDA runtime by the host C++ compiler, so the crate always builds \
         from source and its users need the toolchain; remove `host` to ship prebuilt kernels",
        first.location,
        config.package,
        first.pattern
    )))
}

/// A usage error when `LAUNCH_TOOLCHAIN_PIN` names another toolchain than a selected crate's
/// `toolchain` (checked before any build or toolchain install): prebuilt kernels are those of the
/// crate's pinned toolchain, which anyone can compile again and compare, and a build with another
/// would find them stale.
fn refuse_another_pin(selection: &Selection) -> Result<(), Error> {
    let env = launch_engine::tooling::Env::cli();
    let Some(value) = env.get(launch_engine::tooling::var::LAUNCH_TOOLCHAIN_PIN) else { return Ok(()) };
    let value = value.to_string_lossy();
    if pin_of(value.trim()).is_none() {
        return Err(Error::Usage(anyhow::anyhow!(
            "LAUNCH_TOOLCHAIN_PIN=`{}` is not a pinned toolchain; valid choices: {}",
            value.escape_debug(),
            launch_engine::tooling::toolchain::pin::names()
        )));
    }
    let Some(config) = selection.configs().find(|c| c.toolchain.name != value.trim()) else { return Ok(()) };
    Err(Error::Usage(anyhow::anyhow!(
        "LAUNCH_TOOLCHAIN_PIN={value}: `cargo launch prebuild` ships the kernels of the toolchain the crate pins \
         ({} has `toolchain = \"{}\"`), so that anyone can compile them again and compare; unset \
         LAUNCH_TOOLCHAIN_PIN, or set `toolchain = \"{}\"` in its [package.metadata.launch]",
        config.package,
        config.toolchain.name,
        value.trim()
    )))
}

/// The warning for a folder that alone would make the package larger than crates.io takes.
fn size_warning(p: &PackageSummary) -> Option<String> {
    (p.compressed_bytes > CRATES_IO_LIMIT).then(|| {
        let arches: Vec<String> = (p.costs.iter())
            .filter(|c| c.part.starts_with("sm_"))
            .map(|c| format!("{} {}", c.part, mb(c.compressed_bytes)))
            .collect();
        format!(
            "{}: {} compresses to about {}, more than crates.io's 10 MB package limit (cubins per arch, compressed: \
             {}); list fewer arches or tune variants, or ship the kernels another way",
            p.package,
            p.folder,
            mb(p.compressed_bytes),
            arches.join(", ")
        )
    })
}

/// Writes or verifies one package's folder.
fn package(p: &PackageKernels, verify: bool) -> Result<PackageSummary, Error> {
    let fp = prebuilt::fingerprint(&p.config)?;
    let contents = prebuilt::contents(&p.launch_dir, &p.manifest, &fp)?;
    let folder = prebuilt::folder(p.config.root());
    let shown =
        folder.strip_prefix(std::env::current_dir().unwrap_or_default()).unwrap_or(&folder).display().to_string();
    let (outcome, differences) = if verify {
        let differences = compare(&folder, &contents)?;
        (if differences.is_empty() { "verified" } else { "differs" }, differences)
    } else if prebuilt::write_folder(&folder, &contents)? {
        ("written", Vec::new())
    } else {
        ("unchanged", Vec::new())
    };
    let costs = costs(&p.manifest, &contents);
    Ok(PackageSummary {
        package: p.package.clone(),
        folder: shown,
        key: fp.key,
        outcome: outcome.to_string(),
        bytes: costs.iter().map(|c| c.bytes).sum(),
        compressed_bytes: costs.iter().map(|c| c.compressed_bytes).sum(),
        costs,
        differences,
    })
}

/// Every difference between the shipped folder and `contents` (a compile from source): files only
/// in one of them, and files whose bytes differ.
fn compare(folder: &Path, contents: &Contents) -> Result<Vec<Difference>, Error> {
    if !folder.is_dir() {
        return Err(Error::Usage(anyhow::anyhow!(
            "{} does not exist: there is nothing to verify; write it with `cargo launch prebuild`",
            folder.display()
        )));
    }
    let mut shipped = BTreeMap::new();
    read_tree(folder, "", &mut shipped).with_context(|| format!("reading {}", folder.display()))?;
    let mut compiled = contents.all_files();
    // Which launch-build wrote the record is for people, not part of what is verified: a newer
    // patch release verifying an older folder compares everything else.
    if let Some(Ok(record)) =
        shipped.get(prebuilt::RECORD).map(|b| prebuilt::Record::from_json(&String::from_utf8_lossy(b)))
    {
        let mut ours = contents.clone();
        ours.record.made_by = record.made_by;
        compiled.insert(prebuilt::RECORD.to_string(), ours.record_bytes());
    }
    let mut out = Vec::new();
    for (path, bytes) in &compiled {
        match shipped.get(path) {
            None => out.push(Difference { path: path.clone(), what: "missing from the shipped folder".into() }),
            Some(s) if s != bytes => out.push(Difference {
                path: path.clone(),
                what: format!("shipped {}, compiled {}", describe(s), describe(bytes)),
            }),
            Some(_) => {}
        }
    }
    for path in shipped.keys().filter(|p| !compiled.contains_key(*p)) {
        out.push(Difference {
            path: path.clone(),
            what: "only in the shipped folder (the compile has no such file)".into(),
        });
    }
    // A record that differs because the sources did: say which.
    if let Ok(Some(record)) = prebuilt::read_record(folder) {
        let changed = prebuilt::changes(&record, &fingerprint_of(contents));
        if let Some(d) = out.iter_mut().find(|d| d.path == prebuilt::RECORD) {
            if !changed.is_empty() {
                d.what = format!("{}: {}", d.what, changed.join("; "));
            }
        }
    }
    Ok(out)
}

/// The fingerprint the compiled contents were made for (its record holds all of it).
fn fingerprint_of(contents: &Contents) -> prebuilt::Fingerprint {
    let r = &contents.record;
    prebuilt::Fingerprint {
        key: r.key.clone(),
        package: r.package.clone(),
        arches: r.arches.clone(),
        pin: pin_of(&r.toolchain.pin).map_or("", |p| p.name),
        pin_version: pin_of(&r.toolchain.pin).map_or("", |p| p.version),
        inputs: r.inputs.clone(),
    }
}

fn pin_of(name: &str) -> Option<launch_engine::tooling::toolchain::Pin> {
    launch_engine::tooling::toolchain::pin::PINS.into_iter().find(|p| p.name == name)
}

fn describe(bytes: &[u8]) -> String {
    let sha = Sha256::digest(bytes);
    format!("{} bytes (sha256 {:02x}{:02x}{:02x}{:02x}…)", bytes.len(), sha[0], sha[1], sha[2], sha[3])
}

/// Every regular file under `dir`, by `/`-separated relative path.
fn read_tree(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        if e.file_type()?.is_dir() {
            read_tree(&e.path(), &rel, out)?;
        } else {
            out.insert(rel, std::fs::read(e.path())?);
        }
    }
    Ok(())
}

/// What each part of the folder costs: per arch its cubins (tune variants' included), the PTX,
/// and the records.
fn costs(manifest: &Manifest, contents: &Contents) -> Vec<Cost> {
    let variant_modules = manifest.kernels.iter().flat_map(|k| &k.variants).filter_map(|v| v.module.as_ref());
    let mut part_of: BTreeMap<&str, String> = BTreeMap::new();
    for m in manifest.modules.iter().chain(variant_modules) {
        for c in &m.cubins {
            part_of.insert(&c.path, c.arch.to_string());
        }
    }
    let mut parts: BTreeMap<(u8, Option<launch::Arch>, String), Cost> = BTreeMap::new();
    for (path, bytes) in contents.all_files() {
        let part = part_of
            .get(path.as_str())
            .cloned()
            .unwrap_or_else(|| if path.ends_with(".ptx") { "ptx" } else { "records" }.to_string());
        let order = match part.parse::<launch::Arch>() {
            Ok(a) => (0, Some(a)),
            Err(_) => (if part == "ptx" { 1 } else { 2 }, None),
        };
        let cost = parts.entry((order.0, order.1, part.clone())).or_insert(Cost {
            part,
            files: 0,
            bytes: 0,
            compressed_bytes: 0,
        });
        cost.files += 1;
        cost.bytes += bytes.len() as u64;
        cost.compressed_bytes += gzip_len(&bytes);
    }
    parts.into_values().collect()
}

/// The size of `bytes` gzip-compressed (as `cargo package` compresses a package).
fn gzip_len(bytes: &[u8]) -> u64 {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = enc.write_all(bytes);
    enc.finish().map_or(bytes.len() as u64, |v| v.len() as u64)
}

fn mb(bytes: u64) -> String {
    format!("{:.2} MB", bytes as f64 / 1e6)
}

fn text(out: &mut impl std::io::Write, summary: &Summary) -> std::io::Result<()> {
    for p in &summary.packages {
        let what = match p.outcome.as_str() {
            "written" => format!("wrote {}", p.folder),
            "unchanged" => format!("{} is up to date (nothing rewritten)", p.folder),
            "verified" => format!("{} is identical to a compile from source, byte for byte", p.folder),
            _ => format!("{} differs from a compile from source", p.folder),
        };
        writeln!(out, "{}: {what} (key {})", p.package, &p.key[..12])?;
        writeln!(out, "  {:<8} {:>6} {:>12} {:>14}", "part", "files", "bytes", "compressed")?;
        for c in &p.costs {
            writeln!(out, "  {:<8} {:>6} {:>12} {:>14}", c.part, c.files, mb(c.bytes), mb(c.compressed_bytes))?;
        }
        let files: usize = p.costs.iter().map(|c| c.files).sum();
        writeln!(out, "  {:<8} {:>6} {:>12} {:>14}", "total", files, mb(p.bytes), mb(p.compressed_bytes))?;
        for d in &p.differences {
            writeln!(out, "  differs: {}: {}", d.path, d.what)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(costs: &[(&str, u64)]) -> PackageSummary {
        let costs: Vec<Cost> = costs
            .iter()
            .map(|(part, c)| Cost { part: part.to_string(), files: 1, bytes: c * 3, compressed_bytes: *c })
            .collect();
        PackageSummary {
            package: "k".into(),
            folder: "launch-prebuilt".into(),
            key: "0".repeat(64),
            outcome: "written".into(),
            bytes: costs.iter().map(|c| c.bytes).sum(),
            compressed_bytes: costs.iter().map(|c| c.compressed_bytes).sum(),
            costs,
            differences: Vec::new(),
        }
    }

    #[test]
    fn a_folder_past_the_registry_limit_is_warned_about_with_each_arch_cost() {
        assert_eq!(size_warning(&summary(&[("sm_90", 4_000_000), ("ptx", 1_000_000)])), None);
        let w = size_warning(&summary(&[("sm_80", 5_000_000), ("sm_90", 5_500_000), ("ptx", 700_000)])).unwrap();
        assert!(w.contains("about 11.20 MB, more than crates.io's 10 MB"), "{w}");
        assert!(w.contains("sm_80 5.00 MB, sm_90 5.50 MB"), "{w}");
    }
}

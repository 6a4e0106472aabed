use std::fs;

use launch_schema::prebuilt::Digest;

use super::fingerprint::{canonical, key, relative};
use super::*;

fn canon(toml: &str) -> String {
    let doc: toml_edit::ImDocument<String> = toml.parse().unwrap();
    let mut s = String::new();
    canonical(&mut s, doc.get("package").unwrap().get("metadata").unwrap().get("launch").unwrap());
    s
}

#[test]
fn the_metadata_table_counts_by_meaning_not_by_formatting() {
    // As written by hand, and as `cargo package` rewrites it (no comments, other order, tables
    // inline or not): one canonical form.
    let by_hand = "[package]\nname = \"k\"\n\n[package.metadata.launch]\n# the arches\narch = [ \"sm_90\",\"sm_100\" ] # two\n\
                   include = [\"inc\"]\n\n[package.metadata.launch.tune.poly]\nthreads = [256, 1024]\nmax_regs = \"cliffs\"\n";
    let packaged =
        "[package]\nname = \"k\"\n[package.metadata.launch]\ninclude = [\"inc\"]\narch = [\"sm_90\", \"sm_100\"]\n\
                    tune = { poly = { max_regs = \"cliffs\", threads = [256, 1024] } }\n";
    assert_eq!(canon(by_hand), canon(packaged));
    // Any change of a value, an order within a list, or a key: another form.
    for changed in [
        by_hand.replace("\"sm_100\" ]", "\"sm_120\" ]"),
        by_hand.replace("[ \"sm_90\",\"sm_100\" ]", "[\"sm_100\", \"sm_90\"]"),
        by_hand.replace("[256, 1024]", "[256]"),
        by_hand.replace("include = [\"inc\"]", "include = [\"inc2\"]"),
        by_hand.replace("max_regs = \"cliffs\"", "max_regs = 64"),
    ] {
        assert_ne!(canon(by_hand), canon(&changed), "{changed}");
    }
}

#[test]
fn headers_outside_the_crate_are_named_relative_to_it() {
    let root = std::path::Path::new("/w/crate");
    assert_eq!(relative(std::path::Path::new("/w/crate/kernels/a.cuh"), root), "kernels/a.cuh");
    assert_eq!(relative(std::path::Path::new("/w/common/b.cuh"), root), "../common/b.cuh");
}

fn digest(path: &str, sha: &str) -> Digest {
    Digest { path: path.into(), sha256: sha.into() }
}

fn fp(inputs: Vec<Digest>, arches: &[&str]) -> Fingerprint {
    let arches: Vec<launch::Arch> = arches.iter().map(|a| a.parse().unwrap()).collect();
    Fingerprint {
        key: key("k", &arches, "12.9", "12.9.86", &inputs),
        package: "k".into(),
        arches,
        pin: "12.9",
        pin_version: "12.9.86",
        inputs,
    }
}

fn record_of(f: &Fingerprint) -> Record {
    Record {
        schema: launch_schema::prebuilt::VERSION,
        key: f.key.clone(),
        package: f.package.clone(),
        made_by: "launch-build test".into(),
        toolchain: launch_schema::prebuilt::PinnedToolchain {
            pin: f.pin.into(),
            compilers: launch_schema::manifest::Toolchain { nvrtc: f.pin_version.into(), ptxas: f.pin_version.into() },
        },
        arches: f.arches.clone(),
        inputs: f.inputs.clone(),
        files: Vec::new(),
    }
}

#[test]
fn every_input_is_in_the_key_and_a_mismatch_names_each_change() {
    let base = vec![digest(METADATA_INPUT, "m"), digest("kernels/a.cu", "1"), digest("kernels/h.cuh", "2")];
    let made = fp(base.clone(), &["sm_90"]);
    let record = record_of(&made);
    assert!(changes(&record, &made).is_empty());
    let edited =
        fp(vec![digest(METADATA_INPUT, "m"), digest("kernels/a.cu", "1"), digest("kernels/h.cuh", "3")], &["sm_90"]);
    assert_ne!(edited.key, made.key);
    assert_eq!(changes(&record, &edited), ["kernels/h.cuh changed"]);
    let moved =
        fp(vec![digest(METADATA_INPUT, "m2"), digest("kernels/b.cu", "1"), digest("kernels/h.cuh", "2")], &["sm_90"]);
    assert_eq!(
        changes(&record, &moved),
        ["Cargo.toml [package.metadata.launch] changed", "kernels/b.cu is new", "kernels/a.cu is gone"]
    );
    let arches = fp(base.clone(), &["sm_90", "sm_100"]);
    assert_eq!(changes(&record, &arches), ["it holds sm_90, this build wants sm_90, sm_100"]);
    let other_package =
        Fingerprint { key: key("j", &made.arches, "12.9", "12.9.86", &base), package: "j".into(), ..made.clone() };
    assert_eq!(changes(&record, &other_package), ["it was made for package `k`, this is `j`"]);
    // Same inputs under another key (another output format): still named, never silent.
    let forged = Record { key: "0".repeat(64), ..record.clone() };
    assert_eq!(changes(&forged, &made).len(), 1);
    assert!(changes(&forged, &made)[0].contains("another output format"), "{:?}", changes(&forged, &made));
}

fn contents_of(files: &[(&str, &[u8])]) -> Contents {
    use sha2::Digest as _;
    let made = fp(vec![digest("kernels/a.cu", "1")], &["sm_90"]);
    let mut record = record_of(&made);
    record.files = files
        .iter()
        .map(|(p, b)| launch_schema::prebuilt::ShippedFile {
            path: p.to_string(),
            bytes: b.len() as u64,
            sha256: super::fingerprint::hex(&sha2::Sha256::digest(b)),
        })
        .collect();
    Contents { record, files: files.iter().map(|(p, b)| (p.to_string(), b.to_vec())).collect() }
}

#[test]
fn the_folder_is_written_whole_rewritten_only_when_it_changes_and_read_back_checked() {
    let d = tempfile::tempdir().unwrap();
    let folder = d.path().join(FOLDER);
    let one = contents_of(&[("manifest.json", b"{}"), ("cubin/a.sm_90.cubin", b"cubin")]);
    assert!(write_folder(&folder, &one).unwrap());
    assert!(!write_folder(&folder, &one).unwrap(), "identical contents were rewritten");
    let record = read_record(&folder).unwrap().unwrap();
    assert_eq!(record, one.record);
    assert_eq!(read_files(&folder, &record).unwrap(), one.files);
    // A stray file makes the folder differ; a new write removes it. No staging folder is left.
    fs::write(folder.join("stray"), "x").unwrap();
    assert!(write_folder(&folder, &one).unwrap());
    assert!(!folder.join("stray").exists());
    let names: Vec<String> =
        fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    assert_eq!(names, [FOLDER]);

    // A damaged or missing file, and a record naming a path outside the folder, are refused by name.
    fs::write(folder.join("cubin/a.sm_90.cubin"), b"cubiN").unwrap();
    let e = read_files(&folder, &record).unwrap_err().to_string();
    assert!(e.contains("`cubin/a.sm_90.cubin` is damaged"), "{e}");
    fs::remove_file(folder.join("cubin/a.sm_90.cubin")).unwrap();
    assert!(read_files(&folder, &record).unwrap_err().to_string().contains("`cubin/a.sm_90.cubin`: "));
    let mut forged = record.clone();
    forged.files[0].path = "../../etc/passwd".into();
    let e = read_files(&folder, &forged).unwrap_err().to_string();
    assert!(e.contains("lists `../../etc/passwd`, which is not a file of the folder"), "{e}");
    // A record that is not one: an error naming it; no folder at all: none.
    fs::write(folder.join(RECORD), "{").unwrap();
    assert!(read_record(&folder).unwrap_err().to_string().contains("prebuilt.json"));
    assert_eq!(read_record(&d.path().join("absent")).unwrap(), None);
}

#[test]
fn launch_prebuilt_takes_three_words_exactly_as_written() {
    assert_eq!(Mode::parse("Auto"), Some(Mode::Auto));
    assert_eq!(Mode::parse("ignore"), Some(Mode::Ignore));
    assert_eq!(Mode::parse("REQUIRE"), Some(Mode::Require));
    // Issue 32 class 7: set to nothing or padded is a malformed value (refused where it is read,
    // naming the variable), not `auto`; unset is `auto`, which the reader decides, not this parser.
    for bad in ["", " ignore ", " auto", "1"] {
        assert_eq!(Mode::parse(bad), None, "{bad:?}");
    }
}

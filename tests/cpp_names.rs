//! Newcomer review finding 1: `[package.metadata.launch.kernel."<key>"]` tables name C++ (not
//! `extern "C"`) kernels by their demangled name or bare function name and apply their settings;
//! a bare name several kernels share is an error listing them; a table that names no kernel is a
//! warning at `Cargo.toml:LINE:COL` listing the closest few kernels as keys.

use std::collections::BTreeMap;
use std::path::Path;

use launch_schema::report::Document;

use crate::support::{cargo_launch, fixture, run};

/// `cargo launch report --format json` in `dir`: exit code, document (when 0) and stderr.
fn report(dir: &Path) -> (i32, Option<Document>, String) {
    let (code, out, err) = run(cargo_launch().args(["launch", "report", "--format", "json"]).current_dir(dir));
    (code, (code == 0).then(|| Document::from_json(&out).unwrap()), err)
}

/// Appends `tables` to `dir`'s Cargo.toml, before its dependencies.
fn add_tables(dir: &Path, tables: &str) {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("[dependencies]", &format!("{tables}\n\n[dependencies]"))).unwrap();
}

#[test]
fn cpp_kernels_get_the_settings_of_their_demangled_and_bare_names() {
    let dir = fixture("cpp_names");
    add_tables(dir.path(), "[package.metadata.launch.kernel.pack_8bit]\nthreads = 1");
    let (code, doc, err) = report(dir.path());
    assert_eq!(code, 0, "{err}");
    let threads: BTreeMap<String, u32> =
        doc.unwrap().records.iter().map(|r| (r.kernel.display_name.clone(), r.occupancy.threads)).collect();
    let expected: BTreeMap<String, u32> = [
        ("pack_8bit_kernel(unsigned char const*, unsigned char*, unsigned long)", 96),
        ("scale(double*)", 64),
        ("scale(float*)", 256),
        ("void gemv<4>(float*)", 32),
        ("void gemv<8>(float*)", 256),
    ]
    .into_iter()
    .map(|(k, t)| (k.to_string(), t))
    .collect();
    assert_eq!(threads, expected);
    // Only the misspelt table is unused, and its warning lists the kernel it was meant for, as a
    // key, at the table in Cargo.toml (a relative location, one candidate, not every kernel).
    let text = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
    let (n, line) = text.lines().enumerate().find(|(_, l)| l.contains("pack_8bit]")).unwrap();
    let at = format!("Cargo.toml:{}:{}", n + 1, line.find("pack_8bit").unwrap() + 1);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("names no kernel")).collect();
    assert_eq!(
        warnings,
        [format!(
            "warning: {at}: [package.metadata.launch.kernel.pack_8bit] names no kernel; its settings are unused; \
             closest kernels, as keys: \"pack_8bit_kernel\""
        )],
        "{err}"
    );
}

#[test]
fn a_bare_name_of_several_kernels_is_an_error_listing_them() {
    let dir = fixture("cpp_names");
    add_tables(dir.path(), "[package.metadata.launch.kernel.gemv]\nthreads = 16");
    let (code, _, err) = report(dir.path());
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains(
            "`package.metadata.launch.kernel.gemv`: `gemv` is the name of 2 kernels; write one's qualified name (or \
             its symbol) as the key: kernels/names.cu::void gemv<4>(float*); kernels/names.cu::void gemv<8>(float*)"
        ),
        "{err}"
    );
}

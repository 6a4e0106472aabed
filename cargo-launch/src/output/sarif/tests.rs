//! The SARIF writer: the shape GitHub code scanning needs (unit tests, no network), and every
//! kind of document validated against the SARIF 2.1.0 JSON schema, fetched through cargo.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::*;

fn alert<'a>(
    kind: FindingKind,
    level: Severity,
    message: &'a str,
    uri: &str,
    line: u32,
    kernel: Option<&'a str>,
) -> Alert<'a> {
    Alert {
        kind,
        level,
        message,
        uri: uri.into(),
        line,
        col: 0,
        package: "demo",
        kernel,
        arch: kernel.map(|_| "sm_90"),
    }
}

/// Several alerts of every kind and level, with and without a line, a column and a kernel, two of
/// one kernel and kind (as contract notes are), and file names that need encoding.
fn sample() -> Vec<Alert<'static>> {
    let mut out = Vec::new();
    for (i, kind) in FindingKind::ALL.into_iter().enumerate() {
        let level = [Severity::Error, Severity::Warning, Severity::Note][i % 3];
        out.push(alert(kind, level, "with a line", "demo/kernels/gemm.cu", 12, Some("gemm")));
        out.push(alert(kind, level, "without a line", "demo/Cargo.toml", 0, None));
        out.push(alert(kind, Severity::Warning, "another one", "demo/kernels/a%20b%3Ac.cu", 3, Some("gemm")));
        out.push(Alert { col: 17, ..alert(kind, level, "with a column", "demo/kernels/k.cu", 15, None) });
    }
    out.push(alert(FindingKind::Contract, Severity::Warning, "min_blocks 4 cannot be met", "demo/k.cu", 7, Some("k")));
    out.push(alert(FindingKind::Contract, Severity::Warning, "max_regs 255 is above 64", "demo/k.cu", 7, Some("k")));
    out
}

/// The log as the JSON text `write` produces, parsed.
fn json(log: &Log) -> Value {
    let mut out = Vec::new();
    write(&mut out, log).expect("write to a Vec");
    assert!(out.ends_with(b"}\n"), "one document and a newline");
    serde_json::from_slice(&out).expect("the writer writes JSON")
}

#[test]
fn every_kind_has_one_rule_with_its_text() {
    let mut names = std::collections::BTreeSet::new();
    for kind in FindingKind::ALL {
        let r = rule(kind);
        assert!(!r.short.is_empty() && !r.full.is_empty() && !r.help.is_empty(), "{kind}");
        assert!(names.insert(r.name), "two kinds share the rule name {}", r.name);
    }
    let log = document(&[], "0.1.0", None);
    let rules = &log.runs[0].tool.driver.rules;
    let ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, FindingKind::ALL.iter().map(|k| format!("launch/{k}")).collect::<Vec<_>>());
}

#[test]
fn kinds_and_levels_serialise_as_the_ids_and_levels_sarif_and_json_use() {
    // The JSON document's `kind` (serde) and the SARIF rule id (`id()`) name a kind alike.
    for kind in FindingKind::ALL {
        assert_eq!(serde_json::to_value(kind).expect("a kind serialises"), Value::from(kind.id()), "{kind:?}");
        let back: FindingKind = serde_json::from_value(Value::from(kind.id())).expect("the id reads back");
        assert_eq!(back, kind);
    }
    // SARIF's `level` is one of error, warning, note (and none, which no finding has).
    for (severity, level) in [(Severity::Error, "error"), (Severity::Warning, "warning"), (Severity::Note, "note")] {
        assert_eq!(serde_json::to_value(severity).expect("a severity serialises"), Value::from(level));
        assert_eq!(severity.name(), level);
    }
}

#[test]
fn results_point_at_their_rule_with_their_level() {
    let alerts = sample();
    let log = document(&alerts, "1.2.3", None);
    let run = &log.runs[0];
    assert_eq!(run.tool.driver.name, "cargo-launch");
    assert_eq!(run.tool.driver.version, "1.2.3");
    assert_eq!(run.results.len(), alerts.len());
    for (r, a) in run.results.iter().zip(&alerts) {
        assert_eq!(r.rule_id, format!("launch/{}", a.kind.id()));
        assert_eq!(run.tool.driver.rules[r.rule_index].id, r.rule_id);
        assert_eq!(r.level, a.level);
        assert_eq!(r.message.text, a.message);
        let loc = &r.locations[0].physical_location;
        assert_eq!(loc.artifact_location.uri, a.uri);
        assert_eq!(loc.artifact_location.uri_base_id.as_deref(), Some("%SRCROOT%"));
    }
    let v = json(&log);
    assert_eq!(v["version"], "2.1.0");
    assert_eq!(v["runs"][0]["results"][0]["level"], "error");
    assert_eq!(v["runs"][0]["results"][1]["level"], "error");
    assert_eq!(v["runs"][0]["results"][4]["level"], "warning");
    assert_eq!(v["runs"][0]["results"][8]["level"], "note");
    assert_eq!(v["runs"][0]["results"][0]["partialFingerprints"].as_object().map(|o| o.len()), Some(1));
}

#[test]
fn a_region_only_where_the_line_is_known_and_a_column_where_that_is() {
    let log = document(&sample(), "0.1.0", None);
    let v = json(&log);
    let results = v["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results[0]["locations"][0]["physicalLocation"]["region"], serde_json::json!({ "startLine": 12 }));
    assert!(results[1]["locations"][0]["physicalLocation"].get("region").is_none(), "{}", results[1]);
    assert_eq!(
        results[3]["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({ "startLine": 15, "startColumn": 17 })
    );
    // A column without a line places nothing.
    let no_line = [Alert { col: 4, ..alert(FindingKind::Config, Severity::Warning, "x", "Cargo.toml", 0, None) }];
    let v = json(&document(&no_line, "0.1.0", None));
    assert!(v["runs"][0]["results"][0]["locations"][0]["physicalLocation"].get("region").is_none(), "{v}");
}

#[test]
fn the_writer_and_the_types_round_trip() {
    let log = document(&sample(), "0.1.0", Some(Path::new("/work/my repo")));
    let back: Log = serde_json::from_value(json(&log)).expect("the types read what they write");
    assert_eq!(back, log);
}

#[test]
fn fingerprints_ignore_the_line_and_the_numbers_and_count_repeats() {
    let before = [alert(FindingKind::Spills, Severity::Error, "8 bytes, over 0", "d/k.cu", 10, Some("k"))];
    let after = [alert(FindingKind::Spills, Severity::Error, "16 bytes, over 0", "d/k.cu", 14, Some("k"))];
    let fp = |alerts: &[Alert]| document(alerts, "0.1.0", None).runs[0].results[0].partial_fingerprints.clone();
    assert_eq!(fp(&before), fp(&after), "the same kernel's spills are the same alert");
    let other_arch = [Alert { arch: Some("sm_80"), ..before[0].clone() }];
    let other_kind = [Alert { kind: FindingKind::MaxRegs, ..before[0].clone() }];
    let other_kernel = [Alert { kernel: Some("j"), ..before[0].clone() }];
    for other in [&other_arch, &other_kind, &other_kernel] {
        assert_ne!(fp(&before), fp(other), "{other:?}");
    }
    // Findings about no kernel are told apart by what their message names.
    let config = |m| [alert(FindingKind::Config, Severity::Warning, m, "d/Cargo.toml", 0, None)];
    assert_ne!(fp(&config("`gemm2` names no kernel")), fp(&config("`gemv` names no kernel")));

    let log = document(&sample(), "0.1.0", None);
    let results = &log.runs[0].results;
    let two: Vec<&String> =
        results[results.len() - 2..].iter().map(|r| &r.partial_fingerprints[FINGERPRINT_KEY]).collect();
    assert!(two[0].ends_with(":1") && two[1].ends_with(":2"), "{two:?}");
    assert_eq!(two[0].split(':').next(), two[1].split(':').next());
}

#[test]
fn uris_are_relative_encoded_and_inside_the_root() {
    let root = Path::new("/repo");
    assert_eq!(
        relative_uri(root, Path::new("/repo/crates/k/kernels/gemm.cu")).as_deref(),
        Some("crates/k/kernels/gemm.cu")
    );
    assert_eq!(relative_uri(root, Path::new("/repo/a b/c:d/é#.cu")).as_deref(), Some("a%20b/c%3Ad/%C3%A9%23.cu"));
    assert_eq!(relative_uri(root, Path::new("/elsewhere/x.cu")), None);
    assert_eq!(relative_uri(root, Path::new("/repo/../etc/x")), None);
    assert_eq!(relative_uri(root, root), None);

    let log = document(&[], "0.1.0", Some(Path::new("/work/my repo")));
    let base = &log.runs[0].original_uri_base_ids[SRCROOT];
    assert_eq!(base.uri, "file:///work/my%20repo/");
    assert!(document(&[], "0.1.0", Some(Path::new("relative"))).runs[0].original_uri_base_ids.is_empty());
    assert!(document(&[], "0.1.0", None).runs[0].original_uri_base_ids.is_empty());
}

/// The package that ships the schema, and the schema's SHA-256 there: the OASIS SARIF 2.1.0
/// schema in its draft-07 form (as the standard's repository had it in 2020) with eight typos
/// in descriptions corrected. The errata version (draft-04) adds "type": "string" to enums, a
/// stricter language-tag pattern and, for `region`, that one of startLine, charOffset or
/// byteOffset is present: our enums are strings, we write no language tag, and [`Region`] always
/// has `startLine`. The old language-tag pattern has an unbalanced `]`, which is no regex in the
/// Unicode mode JSON Schema validators use, so [`errata_language_pattern`] applies the errata's.
const SCHEMA_PACKAGE: (&str, &str) = ("serde-sarif", "0.8.0");
const SCHEMA_SHA256: &str = "af47e7b67f24efe74076621fd3a5fbe7398add9e84fe820c971219a385895cea";

/// Curl's codes for a network that cannot be reached (cargo prints them as `[6] Could not
/// resolve host ...`), and cargo's words when it is set to offline (`--offline`, `net.offline`,
/// `CARGO_NET_OFFLINE`).
fn offline(stderr: &str) -> bool {
    let no_network = regex::Regex::new(r"\[(5|6|7|28|35|56)\] ").expect("a valid pattern");
    no_network.is_match(stderr) || stderr.contains("--offline was specified") || stderr.contains("offline mode")
}

/// `cargo metadata` on a copy of fixtures/sarif_schema (in a temporary folder: cargo writes a lock
/// file beside the manifest), which downloads serde-sarif into cargo's registry folder and builds
/// nothing. It runs `--offline` first, so a machine that has the package needs no network;
/// `Err` only when the network cannot be reached, with cargo's words.
fn schema_path() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cargo-launch/ has a parent").to_path_buf();
    let dir = tempfile::tempdir().expect("temp dir");
    let from = root.join("fixtures/sarif_schema");
    fs::create_dir_all(dir.path().join("src")).expect("create src");
    fs::copy(from.join("Cargo.toml"), dir.path().join("Cargo.toml")).expect("copy the fetch manifest");
    fs::copy(from.join("src/lib.rs"), dir.path().join("src/lib.rs")).expect("copy lib.rs");
    let metadata = |offline: bool| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["metadata", "--format-version", "1", "--manifest-path"]).arg(dir.path().join("Cargo.toml"));
        if offline {
            cmd.arg("--offline");
        }
        cmd.output().expect("cargo runs")
    };
    let mut out = metadata(true);
    if !out.status.success() {
        out = metadata(false);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let (name, version) = SCHEMA_PACKAGE;
        assert!(offline(&stderr), "cargo metadata could not fetch {name} {version}:\n{stderr}");
        return Err(stderr.trim().to_string());
    }
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let (name, version) = SCHEMA_PACKAGE;
    let package = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == name && p["version"] == version)
        .unwrap_or_else(|| panic!("{name} {version} is not among the packages cargo resolved"));
    let manifest = PathBuf::from(package["manifest_path"].as_str().expect("manifest_path"));
    Ok(manifest.parent().expect("the manifest is in a folder").join("src/schema.json"))
}

/// The switch that makes a skipped schema validation a failure (`.ci/run` sets it), so that CI
/// cannot pass without having validated a document.
const REQUIRE_SCHEMA: &launch_engine::tooling::EnvVar = launch_engine::tooling::var::LAUNCH_TEST_REQUIRE_SARIF_SCHEMA;

fn require_schema() -> bool {
    launch_engine::tooling::Env::cli().get(REQUIRE_SCHEMA).is_some_and(|v| v == "1")
}

/// Replaces the pre-errata language-tag pattern with the errata's, in memory (the file in
/// cargo's folder is left as it is); returns how many it replaced.
fn errata_language_pattern(schema: &mut Value) -> usize {
    const OLD: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    const ERRATA: &str = "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$";
    match schema {
        Value::Object(map) => {
            let mut n = 0;
            for (key, value) in map.iter_mut() {
                if key == "pattern" && value == OLD {
                    *value = ERRATA.into();
                    n += 1;
                } else {
                    n += errata_language_pattern(value);
                }
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(errata_language_pattern).sum(),
        _ => 0,
    }
}

#[test]
fn documents_validate_against_the_sarif_2_1_0_schema() {
    let path = match schema_path() {
        Ok(path) => path,
        Err(why) => {
            let (name, version) = SCHEMA_PACKAGE;
            let why = format!("the network is unreachable and {name} {version} is not in cargo's cache: {why}");
            assert!(!require_schema(), "{}=1, but {why}", REQUIRE_SCHEMA.name);
            eprintln!("skipped: {why}");
            return;
        }
    };
    let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(sha, SCHEMA_SHA256, "{} is not the schema this test was written against", path.display());
    let mut schema: Value = serde_json::from_slice(&bytes).expect("the schema is JSON");
    assert_eq!(errata_language_pattern(&mut schema), 2, "the language-tag pattern of run and toolComponent");
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert!(schema["title"].as_str().is_some_and(|t| t.contains("2.1.0")), "{}", schema["title"]);
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("the validator reads the schema: {e}"));

    let alerts = sample();
    let documents = [
        ("every kind", document(&alerts, "0.1.0", Some(Path::new("/work/my repo")))),
        ("every kind, no root", document(&alerts, "0.1.0-alpha.1+build.5", None)),
        ("no finding", document(&[], "0.1.0", None)),
    ];
    for (what, log) in &documents {
        let v = json(log);
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{what}: {} errors against the SARIF schema:\n{}", errors.len(), errors.join("\n"));
    }
    // The validator does reject what the schema forbids, so a pass above means something.
    let mut bad = json(&documents[0].1);
    bad["runs"][0]["results"][0]["level"] = "fatal".into();
    bad["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0.into();
    bad["runs"][0]["results"][3]["locations"][0]["physicalLocation"]["region"]["startColumn"] = 0.into();
    bad["runs"][0]["tool"]["driver"]["informationUri"] = "not a uri".into();
    assert_eq!(
        validator.iter_errors(&bad).count(),
        4,
        "the schema rejects a bad level, line 0, column 0 and a bad URI"
    );
}

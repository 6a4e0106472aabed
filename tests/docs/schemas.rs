//! Issue 22 item 5: a JSON Schema per document under docs/src/schemas/, generated from the Rust
//! types that write and read the documents (`launch_schema`, feature `json-schema`), and the page
//! docs/src/reference/json.md that lists them, both compared to what the types generate (written
//! instead with `LAUNCH_BLESS_DOCS=1`); `real` validates documents that the real binary and build
//! script write against the committed schemas.

mod catalog;
mod page;
mod real;

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use launch_engine::tooling::{var, Env};

use catalog::documents;
use page::BLESS;

/// docs/src of the repository.
fn docs_src() -> PathBuf {
    support::root().join("docs/src")
}

/// Every generated file, by path relative to docs/src, with its text.
fn generated() -> BTreeMap<String, String> {
    let docs = documents();
    let mut files: BTreeMap<String, String> = docs.iter().map(|d| (d.file(), d.schema_text())).collect();
    files.insert("reference/json.md".into(), page::page(&docs));
    files
}

/// The committed schemas and page are what the types generate; `LAUNCH_BLESS_DOCS=1` writes them
/// (and removes a schema no document has any more).
#[test]
fn the_schemas_and_the_json_page_are_generated_from_the_types() {
    let bless = Env::cli().flag(var::LAUNCH_BLESS_DOCS).expect("LAUNCH_BLESS_DOCS is 1 or 0");
    let files = generated();
    let schemas_dir = docs_src().join("schemas");
    let stale: Vec<PathBuf> = std::fs::read_dir(&schemas_dir)
        .map(|dir| dir.filter_map(Result::ok).map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".schema.json"))
        .filter(|p| !files.contains_key(&format!("schemas/{}", p.file_name().unwrap().to_string_lossy())))
        .collect();
    let mut wrong = Vec::new();
    for (rel, text) in &files {
        let path = docs_src().join(rel);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
                std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
            wrong.push(format!("docs/src/{rel} differs from what the types generate"));
        }
    }
    for p in &stale {
        if bless {
            std::fs::remove_file(p).unwrap();
        } else {
            wrong.push(format!("{} is no document's schema", p.display()));
        }
    }
    assert!(wrong.is_empty(), "{}\nregenerate with `{BLESS}` and commit the result", wrong.join("\n"));
}

/// Every module of launch_schema that has a `VERSION` is a document of the page (a new document
/// cannot go without its schema), and each schema states its version three ways.
#[test]
fn every_document_module_has_a_schema_that_names_its_version() {
    let dir = support::root().join("launch-schema/src");
    let docs = documents();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.contains("pub const VERSION: u32") {
            continue;
        }
        let module = format!("launch_schema::{}::", stem(&path));
        assert!(
            docs.iter().any(|d| d.types.iter().any(|t| t.starts_with(&module))),
            "{} has a VERSION but no document of tests/docs/schemas/catalog.rs is one of its types",
            path.display()
        );
    }
    for d in &docs {
        let schema = d.schema();
        let v = d.version;
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", "{}", d.name);
        assert_eq!(schema["$id"], format!("urn:cargo-launch:schema:{}:{v}", d.name));
        assert!(schema["title"].as_str().unwrap().ends_with(&format!("version {v}")), "{}", schema["title"]);
        assert_eq!(schema["properties"]["schema"]["const"], v, "{}", d.name);
        assert!(schema["required"].as_array().unwrap().iter().any(|r| r == "schema"), "{}", d.name);
        // A schema by draft 2020-12's own meta-schema (bundled with the validator: no network).
        jsonschema::meta::validate(&schema).unwrap_or_else(|e| panic!("{}: not a valid schema: {e}", d.name));
    }
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// What serde writes is what the schemas say, pinned on the attributes that change the shape:
/// a skipped-when-empty field is not required, a defaulted one is not either, a renamed field
/// has its JSON name, a flattened struct's fields sit in the parent, a tagged enum has its tag.
#[test]
fn the_schemas_follow_serdes_attributes() {
    let by_name = |n: &str| documents().into_iter().find(|d| d.name == n).unwrap().schema();
    let required = |s: &serde_json::Value| -> Vec<String> {
        s["required"]
            .as_array()
            .map(|r| r.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let manifest = by_name("manifest");
    let m = required(&manifest);
    // skip_serializing_if: left out when empty.
    assert!(!m.contains(&"host".into()) && !m.contains(&"min_driver".into()), "{m:?}");
    assert!(m.contains(&"kernels".into()) && m.contains(&"arches".into()), "{m:?}");
    // An Option without a default is written as null: required, nullable.
    let kernel = &manifest["$defs"]["KernelEntry"];
    assert!(required(kernel).contains(&"contract".into()));
    assert!(kernel["properties"]["contract"].to_string().contains("null"), "{}", kernel["properties"]["contract"]);
    // A default: absent from older documents of the version.
    assert!(!required(kernel).contains(&"qualified".into()));
    // Internally tagged: Origin's `kind`.
    assert!(manifest["$defs"]["Origin"].to_string().contains("\"kind\""), "{}", manifest["$defs"]["Origin"]);
    // Renamed: doctor's `crate`.
    let doctor = by_name("doctor");
    assert!(doctor["properties"].get("crate").is_some() && doctor["properties"].get("krate").is_none());
    // Flattened: a report record has the kernel's fields and ptxas has the resources' (`cmem`
    // renamed).
    let report = by_name("report");
    let record = &report["$defs"]["Record"];
    assert!(required(record).contains(&"qualified".into()) && record["properties"].get("kernel").is_none());
    assert!(report["$defs"]["Ptxas"]["properties"].get("cmem").is_some(), "{}", report["$defs"]["Ptxas"]);
    // Arch names and limiter names.
    assert_eq!(report["$defs"]["Arch"]["pattern"], "^sm_[0-9]+[af]?$");
    assert!(report["$defs"]["Limiter"].to_string().contains("shared_memory"));
}

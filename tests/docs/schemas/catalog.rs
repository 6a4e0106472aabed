//! Every JSON document the tools write, and its JSON Schema generated from the Rust type that
//! writes it (schemars, with serde's attributes: renames, tags, flattening, skipped fields).

use std::any::type_name;

use launch_schema::{
    check, coverage, diagnostics, diff, doctor, explore, manifest, occupancy, prebuilt, report, stats,
};
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

/// One document.
pub struct Document {
    /// The schema's file stem (`docs/src/schemas/<name>.schema.json`) and the page's heading.
    pub name: &'static str,
    /// Where it is written and by what (markdown).
    pub writer: &'static str,
    /// What it holds, one sentence (markdown); also the schema's description.
    pub about: &'static str,
    /// The Rust type(s) serde writes it with.
    pub types: Vec<&'static str>,
    /// Its version: the module's `VERSION`.
    pub version: u32,
    /// The schema as schemars derives it, before [`finish`].
    derive: fn() -> Value,
}

/// `cargo launch occupancy --format json` writes one or the other; the schema takes either.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Occupancy {
    Detail(occupancy::Detail),
    Sweep(occupancy::Sweep),
}

/// The documents, in the order of the page: the build script's files, then the commands'.
pub fn documents() -> Vec<Document> {
    let mut docs = build_documents();
    docs.extend(command_documents());
    docs
}

/// What the build script writes in `OUT_DIR/launch/`.
fn build_documents() -> Vec<Document> {
    vec![
        Document {
            name: "manifest",
            writer: "`OUT_DIR/launch/manifest.json`, by the build script (launch-build) on every successful build; \
                     also `launch-prebuilt/manifest.json` in a crate with prebuilt kernels",
            about: "Everything the build learned about one crate's kernels: toolchain, arches, files, kernels with \
                    their contracts, `ptxas -v` resources per arch, tune variants and host files.",
            types: vec![type_name::<manifest::Manifest>()],
            version: manifest::VERSION,
            derive: derive::<manifest::Manifest>,
        },
        Document {
            name: "diagnostics",
            writer: "`OUT_DIR/launch/diagnostics.json`, by the build script when the kernel build fails (removed when \
                     it succeeds)",
            about: "The located errors of a failed kernel build (`file:line:col`, severity, message, excerpt) and the \
                    kind of failure, which decides `cargo launch`'s exit code.",
            types: vec![type_name::<diagnostics::Diagnostics>()],
            version: diagnostics::VERSION,
            derive: derive::<diagnostics::Diagnostics>,
        },
        Document {
            name: "build-stats",
            writer: "`OUT_DIR/launch/build-stats.json`, by the build script on every successful build",
            about: "What one build did: jobs compiled and served from the caches, compiler times, parallelism, \
                    prebuilt kernels used, the remote cache's traffic.",
            types: vec![type_name::<stats::BuildStats>()],
            version: stats::VERSION,
            derive: derive::<stats::BuildStats>,
        },
    ]
}

/// What the commands write.
fn command_documents() -> Vec<Document> {
    vec![
        Document {
            name: "report",
            writer: "`cargo launch report --format json`, on stdout",
            about: "One record per kernel × arch: contract, `ptxas -v` numbers, occupancy at the launch block size \
                    and what limits it, why a launch fails, the next-block cliff, spills by line.",
            types: vec![type_name::<report::Document>()],
            version: report::VERSION,
            derive: derive::<report::Document>,
        },
        Document {
            name: "check",
            writer: "`cargo launch check --format json`, on stdout",
            about: "The verdict: counts, the baseline each package was compared with, and every finding with its \
                    rule, location and message.",
            types: vec![type_name::<check::Document>()],
            version: check::VERSION,
            derive: derive::<check::Document>,
        },
        Document {
            name: "occupancy",
            writer: "`cargo launch occupancy --format json`, on stdout: a `Detail`, or with `--sweep` a `Sweep`",
            about: "NVIDIA's Occupancy Calculator for a hypothetical kernel: one configuration in detail, or a \
                    graph over threads, registers or shared memory.",
            types: vec![type_name::<occupancy::Detail>(), type_name::<occupancy::Sweep>()],
            version: occupancy::VERSION,
            derive: derive::<Occupancy>,
        },
        Document {
            name: "explore",
            writer: "`cargo launch explore --format json`, on stdout",
            about: "One kernel under several launch contracts, each written into its PTX and assembled by ptxas, \
                    per arch, with the occupancy/spill frontier.",
            types: vec![type_name::<explore::Document>()],
            version: explore::VERSION,
            derive: derive::<explore::Document>,
        },
        Document {
            name: "diff",
            writer: "`cargo launch diff --format json`, on stdout",
            about: "What changed per kernel × arch between two sides (two toolchains, a git revision and the \
                    working tree, or two report documents), and the totals.",
            types: vec![type_name::<diff::Document>()],
            version: diff::VERSION,
            derive: derive::<diff::Document>,
        },
        Document {
            name: "prebuilt",
            writer: "`launch-prebuilt/prebuilt.json` in a kernel crate, by `cargo launch prebuild`; read by the \
                     build script",
            about: "The record of a crate's prebuilt kernels: the key of their inputs, each input's digest and each \
                    shipped file's size and digest.",
            types: vec![type_name::<prebuilt::Record>()],
            version: prebuilt::VERSION,
            derive: derive::<prebuilt::Record>,
        },
        Document {
            name: "prebuild",
            writer: "`cargo launch prebuild --format json`, on stdout",
            about: "Per package, what `prebuild` wrote or verified and what the prebuilt folder costs in a package.",
            types: vec![type_name::<prebuilt::Summary>()],
            version: prebuilt::VERSION,
            derive: derive::<prebuilt::Summary>,
        },
        Document {
            name: "coverage",
            writer: "`cargo launch coverage --format json`, on stdout",
            about: "Per GPU, what of the crate's embedded images loads there (a cubin, PTX through the JIT, or \
                    nothing), the bytes per arch, and the smallest arch list for the GPUs.",
            types: vec![type_name::<coverage::Document>()],
            version: coverage::VERSION,
            derive: derive::<coverage::Document>,
        },
        Document {
            name: "doctor",
            writer: "`cargo launch doctor --format json`, on stdout",
            about: "The state of everything a build depends on (toolchains, environment, cache, driver, the crate's \
                    configuration) and every problem with its fix.",
            types: vec![type_name::<doctor::Document>()],
            version: doctor::VERSION,
            derive: derive::<doctor::Document>,
        },
    ]
}

impl Document {
    /// The schema's file, relative to docs/src.
    pub fn file(&self) -> String {
        format!("schemas/{}.schema.json", self.name)
    }

    /// The schema, as committed.
    pub fn schema(&self) -> Value {
        finish(self, (self.derive)())
    }

    /// The schema as the committed file's text.
    pub fn schema_text(&self) -> String {
        serde_json::to_string_pretty(&self.schema()).expect("a schema serialises") + "\n"
    }
}

/// `T`'s schema for what serde writes (the `Serialize` contract: a field skipped when empty is not
/// required), draft 2020-12.
fn derive<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12().for_serialize().into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// The schemars output made into the committed schema: named and versioned, the `schema` field a
/// constant, fields with a serde default not required (a document of this version written before
/// the field existed lacks it, and readers take it), and rustdoc's link syntax out of the texts.
fn finish(doc: &Document, mut schema: Value) -> Value {
    walk(&mut schema, doc.version);
    let root = schema.as_object_mut().expect("a schema is an object");
    root.insert("$id".into(), json!(format!("urn:cargo-launch:schema:{}:{}", doc.name, doc.version)));
    root.insert("title".into(), json!(format!("cargo-launch {} document, version {}", doc.name, doc.version)));
    root.insert("description".into(), json!(format!("{} Where: {}.", plain(doc.about), plain(doc.writer))));
    if !root.contains_key("properties") {
        // Several shapes (occupancy): each carries the version; the root says so too.
        root.insert("properties".into(), json!({ "schema": version_schema(doc.version) }));
        root.insert("required".into(), json!(["schema"]));
    }
    schema
}

fn walk(value: &mut Value, version: u32) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(d)) = map.get_mut("description") {
                *d = plain(d);
            }
            let mut defaulted = Vec::new();
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                if props.contains_key("schema") {
                    props.insert("schema".into(), version_schema(version));
                }
                defaulted = props.iter().filter(|(_, p)| p.get("default").is_some()).map(|(k, _)| k.clone()).collect();
            }
            if let Some(Value::Array(required)) = map.get_mut("required") {
                required.retain(|r| !defaulted.iter().any(|d| r == d));
            }
            if map.get("required").is_some_and(|r| r.as_array().is_some_and(Vec::is_empty)) {
                map.remove("required");
            }
            map.values_mut().for_each(|v| walk(v, version));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| walk(v, version)),
        _ => {}
    }
}

/// The `schema` field: this version and no other.
fn version_schema(version: u32) -> Value {
    json!({
        "description": format!(
            "The document's version: {version}. Readers refuse another one; see the compatibility rule in \
             docs/src/reference/json.md."
        ),
        "type": "integer",
        "const": version,
    })
}

/// A doc comment as plain text: lines of a paragraph joined, rustdoc links (`[`x`]`,
/// `[`x`](path)`) as their code text.
pub fn plain(text: &str) -> String {
    let paragraphs: Vec<String> =
        text.split("\n\n").map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    let mut s = paragraphs.join("\n\n");
    while let Some(at) = s.find("[`") {
        let Some(len) = s[at..].find("`]") else { break };
        let code = s[at + 1..at + len + 1].to_string();
        let mut end = at + len + 2;
        if s[end..].starts_with('(') {
            end += s[end..].find(')').map_or(0, |c| c + 1);
        }
        s.replace_range(at..end, &code);
    }
    s
}

/// The property map of an object schema (empty for another schema).
pub fn properties(schema: &Value) -> Map<String, Value> {
    schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default()
}

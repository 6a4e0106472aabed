//! Reading a document back: its JSON, then its version.

use std::fmt;

use serde::de::DeserializeOwned;

/// Why a document could not be read. Plain data (not the JSON library's error), so readers and
/// tests can compare it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// Not JSON, or not the shape of the document.
    Json {
        /// The JSON reader's message, with its position (`... at line 3 column 7`).
        message: String,
        /// 1-based line of the fault (0 when it has none).
        line: usize,
        /// 1-based column of the fault.
        column: usize,
    },
    /// Another kind of document (a `prebuilt.json` given as a report): its fields are not the
    /// expected document's, so its version says nothing about who wrote it.
    Kind {
        /// The document expected (`report`).
        document: &'static str,
        /// What it is, where its fields are those of another document this crate knows.
        found: Option<&'static str>,
    },
    /// Another version of the document: written by another launch-build or cargo-launch.
    Version {
        /// The document (`manifest`).
        document: &'static str,
        /// Its `schema`.
        found: u32,
        /// The version this code reads.
        expected: u32,
        /// What to do: `rebuild the crate`, ...
        hint: &'static str,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Json { message, .. } => write!(f, "{message}"),
            ReadError::Kind { document, found: Some(found) } => {
                write!(f, "this is cargo-launch's `{found}` document, not its `{document}` document")
            }
            ReadError::Kind { document, found: None } => {
                write!(
                    f,
                    "its fields are not those of cargo-launch's `{document}` document, nor of another of its documents"
                )
            }
            ReadError::Version { document, found, expected, hint } => {
                write!(f, "{document} schema {found} (this tool reads {expected}); {hint}")
            }
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads a document whose `schema` field must be `expected`. The version is checked first, so a
/// document of another version says so (with `hint`: what to do about it) instead of failing on
/// a field that version does not have.
pub(crate) fn read<T: DeserializeOwned>(
    text: &str,
    document: &'static str,
    expected: u32,
    hint: &'static str,
    known: &[Known],
) -> Result<T, ReadError> {
    #[derive(serde::Deserialize)]
    struct Version {
        schema: u32,
    }
    let v: Version = read_json(text)?;
    // The kind first: another document's version says nothing about who wrote this one.
    let keys = top_level_keys(text);
    let own = fields_of::<T>();
    if !own.is_empty() {
        let mine = likeness(&keys, own);
        let other = known
            .iter()
            .filter(|(name, _)| *name != document)
            .map(|(name, fields)| (likeness(&keys, fields()), *name))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let found = other.filter(|(score, _)| *score > mine).map(|(_, name)| name);
        if found.is_some() || mine == 0.0 {
            return Err(ReadError::Kind { document, found });
        }
    }
    if v.schema != expected {
        return Err(ReadError::Version { document, found: v.schema, expected, hint });
    }
    read_json(text)
}

/// `text` as a `T`.
fn read_json<T: DeserializeOwned>(text: &str) -> Result<T, ReadError> {
    serde_json::from_str(text).map_err(|e| ReadError::Json {
        message: e.to_string(),
        line: e.line(),
        column: e.column(),
    })
}

/// The top-level keys of the JSON object `text` (none when it is not one).
fn top_level_keys(text: &str) -> Vec<String> {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// How much a document with top-level `keys` looks like one whose fields are `fields`: the
/// share of their union that both have (`schema` aside; 1 for a document of `schema` alone).
/// A document is read as the kind it looks most like: an older or newer version of it differs
/// by a field or two, another document by most.
fn likeness(keys: &[String], fields: &[&str]) -> f64 {
    let others: Vec<&str> = keys.iter().map(String::as_str).filter(|k| *k != "schema").collect();
    if others.is_empty() {
        return 1.0;
    }
    let both = others.iter().filter(|k| fields.contains(k)).count();
    let union = others.len() + fields.iter().filter(|f| **f != "schema" && !others.contains(f)).count();
    both as f64 / union as f64
}

/// A document this crate reads: the name its reader gives it, and its fields ([`fields_of`]).
pub(crate) type Known = (&'static str, fn() -> &'static [&'static str]);

/// The fields a struct's `Deserialize` names (serde hands them to `deserialize_struct`); none
/// for a type read as a map (one with a flattened field).
pub(crate) fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    let seen = std::cell::Cell::new(&[][..]);
    let _ = T::deserialize(Fields(&seen));
    seen.get()
}

/// A deserializer that only notes the fields of the struct asked of it.
struct Fields<'a>(&'a std::cell::Cell<&'static [&'static str]>);

impl<'de> serde::Deserializer<'de> for Fields<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("fields only"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(fields);
        Err(serde::de::Error::custom("fields only"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reader, by its document's name.
    type Reader = fn(&str) -> Result<(), ReadError>;
    fn readers() -> Vec<(&'static str, Reader)> {
        vec![
            ("report", |t| crate::report::Document::from_json(t).map(drop)),
            ("check", |t| crate::check::Document::from_json(t).map(drop)),
            ("coverage", |t| crate::coverage::Document::from_json(t).map(drop)),
            ("diff", |t| crate::diff::Document::from_json(t).map(drop)),
            ("doctor", |t| crate::doctor::Document::from_json(t).map(drop)),
            ("explore", |t| crate::explore::Document::from_json(t).map(drop)),
            ("occupancy sweep", |t| crate::occupancy::Sweep::from_json(t).map(drop)),
            ("manifest", |t| crate::manifest::Manifest::from_json(t).map(drop)),
            ("diagnostics", |t| crate::diagnostics::Diagnostics::from_json(t).map(drop)),
            ("build-stats.json", |t| crate::stats::BuildStats::from_json(t).map(drop)),
            ("launch-prebuilt/prebuilt.json", |t| crate::prebuilt::Record::from_json(t).map(drop)),
        ]
    }

    /// Issue 32, class 8: a document given to another document's reader says what it is, never
    /// that "another version of cargo-launch" wrote it (`diff` on a `prebuilt.json`); its own
    /// reader still says the version. Every document (its fields, a version no reader reads) ×
    /// every reader.
    #[test]
    fn a_document_of_another_kind_is_named_never_blamed_on_a_version() {
        let mut wrong = Vec::new();
        let mut cases = 0;
        for &(name, fields) in crate::KNOWN {
            let fields = fields();
            assert!(!fields.is_empty(), "{name}: no fields seen");
            let doc: serde_json::Map<String, serde_json::Value> = fields
                .iter()
                .map(|f| (f.to_string(), serde_json::Value::Null))
                .chain([("schema".to_string(), serde_json::json!(999))])
                .collect();
            let text = serde_json::Value::Object(doc).to_string();
            for (reader, read) in readers() {
                cases += 1;
                let got = read(&text).unwrap_err();
                let right = if reader == name {
                    matches!(got, ReadError::Version { found: 999, .. })
                } else {
                    got == ReadError::Kind { document: reader, found: Some(name) }
                };
                if !right {
                    wrong.push(format!("{name} read as {reader}: {got}"));
                }
            }
        }
        assert!(wrong.is_empty(), "{} of {cases} cases wrong:\n{}", wrong.len(), wrong.join("\n"));
    }
}

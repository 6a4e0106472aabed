//! The serde types of every machine-readable output, defined once and shared by the writer, the
//! reader and the tests. Each document has its own `VERSION`.
//!
//! # Stability
//!
//! An additive change (a new field, a new enum value a reader may ignore) keeps a document's
//! version; a field removed, renamed or given another meaning bumps it. Readers refuse a version
//! they do not know, with a message saying what to rebuild or upgrade.

pub mod check;
pub mod report;
pub mod stats;

use std::fmt;

/// A document this version of the tools cannot read.
#[derive(Debug)]
pub enum SchemaError {
    /// Not JSON of the document's shape.
    Json(serde_json::Error),
    /// Another version of the document.
    Version {
        /// Which document.
        document: &'static str,
        /// The version found.
        found: u32,
        /// The version these tools read.
        expected: u32,
    },
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::Json(e) => write!(f, "{e}"),
            SchemaError::Version { document, found, expected } => {
                write!(f, "{document} schema {found} (this tool reads {expected})")
            }
        }
    }
}

impl std::error::Error for SchemaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SchemaError::Json(e) => Some(e),
            SchemaError::Version { .. } => None,
        }
    }
}

/// Reads a document whose `schema` field must be `expected`: the version is checked before the
/// rest, so a document of another version says so instead of failing on a field.
pub(crate) fn read<T: serde::de::DeserializeOwned>(
    text: &str,
    document: &'static str,
    expected: u32,
) -> Result<T, SchemaError> {
    #[derive(serde::Deserialize)]
    struct Version {
        schema: u32,
    }
    let v: Version = serde_json::from_str(text).map_err(SchemaError::Json)?;
    if v.schema != expected {
        return Err(SchemaError::Version { document, found: v.schema, expected });
    }
    serde_json::from_str(text).map_err(SchemaError::Json)
}

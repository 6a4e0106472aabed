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
) -> Result<T, ReadError> {
    #[derive(serde::Deserialize)]
    struct Version {
        schema: u32,
    }
    let v: Version = read_json(text)?;
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

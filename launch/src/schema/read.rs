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
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Json { message, .. } => write!(f, "{message}"),
            ReadError::Version { document, found, expected } => {
                write!(f, "{document} schema {found} (this tool reads {expected}); rebuild the crate")
            }
        }
    }
}

impl std::error::Error for ReadError {}

/// `text` as a `T`.
pub(crate) fn read_json<T: DeserializeOwned>(text: &str) -> Result<T, ReadError> {
    serde_json::from_str(text).map_err(|e| ReadError::Json {
        message: e.to_string(),
        line: e.line(),
        column: e.column(),
    })
}

/// Refuses a version other than `expected`.
pub(crate) fn check_version(document: &'static str, found: u32, expected: u32) -> Result<(), ReadError> {
    if found == expected {
        Ok(())
    } else {
        Err(ReadError::Version { document, found, expected })
    }
}

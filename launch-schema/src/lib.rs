//! The documents of cargo-launch: the serde types of every machine-readable output, defined once
//! and shared by the writer (launch-build, cargo-launch), the reader and the tests, and usable by
//! any other tool that reads them. Each document has its own `VERSION`; this crate is versioned on
//! its own, and a user's binary never links it.
//!
//! # Stability
//!
//! A new field keeps a document's version: readers ignore fields they do not know, and the new
//! field is given a default so that documents written before it still read. Anything an older
//! reader would refuse bumps the version: a new value of an enum field (the enums deserialize
//! strictly, so an older reader rejects a value it does not know), a field removed, renamed or
//! given another meaning. Readers refuse a version they do not know, with a message saying what to
//! rebuild or upgrade.
//!
//! With feature `json-schema` every document type implements `schemars::JsonSchema`; the JSON
//! Schemas under `docs/src/schemas/` and the reference page `docs/src/reference/json.md` are
//! generated from them.
#![deny(missing_docs)]

pub mod check;
pub mod coverage;
pub mod diagnostics;
pub mod diff;
pub mod doctor;
pub mod explore;
pub mod manifest;
pub mod occupancy;
pub mod prebuilt;
mod read;
pub mod report;
pub mod stats;

pub use read::ReadError;

/// Every document this crate reads, by the name its reader gives it, with its fields: a reader
/// tells a document of another kind from another version of its own by them.
const KNOWN: &[read::Known] = &[
    ("report", read::fields_of::<report::Document>),
    ("check", read::fields_of::<check::Document>),
    ("coverage", read::fields_of::<coverage::Document>),
    ("diff", read::fields_of::<diff::Document>),
    ("doctor", read::fields_of::<doctor::Document>),
    ("explore", read::fields_of::<explore::Document>),
    ("occupancy sweep", read::fields_of::<occupancy::Sweep>),
    ("manifest", read::fields_of::<manifest::Manifest>),
    ("diagnostics", read::fields_of::<diagnostics::Diagnostics>),
    ("build-stats.json", read::fields_of::<stats::BuildStats>),
    ("launch-prebuilt/prebuilt.json", read::fields_of::<prebuilt::Record>),
];

/// Reads a document whose `schema` field must be `expected` (see [`read::read`]), told apart
/// from the other documents of [`KNOWN`].
pub(crate) fn read<T: serde::de::DeserializeOwned>(
    text: &str,
    document: &'static str,
    expected: u32,
    hint: &'static str,
) -> Result<T, ReadError> {
    read::read(text, document, expected, hint, KNOWN)
}

#[cfg(test)]
mod tests;

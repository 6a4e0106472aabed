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

pub(crate) use read::read;
pub use read::ReadError;

#[cfg(test)]
mod tests;

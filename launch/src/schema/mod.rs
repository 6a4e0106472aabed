//! The serde types of every machine-readable output, defined once and shared by the writer, the
//! reader and the tests. Each document has its own `VERSION`.
//!
//! # Stability
//!
//! An additive change (a new field, a new enum value a reader may ignore) keeps a document's
//! version; a field removed, renamed or given another meaning bumps it. Readers refuse a version
//! they do not know, with a message saying what to rebuild or upgrade.

pub mod check;
pub mod diagnostics;
pub mod manifest;
pub mod occupancy;
mod read;
pub mod report;
pub mod stats;

pub(crate) use read::read;
pub use read::ReadError;

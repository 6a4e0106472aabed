//! The serde types of every machine-readable output, defined once and shared by the writer, the
//! reader and the tests. Each document has its own `VERSION`.
//!
//! # Stability
//!
//! A new field keeps a document's version: readers ignore fields they do not know, and the new
//! field is given a default so that documents written before it still read. Anything an older
//! reader would refuse bumps the version: a new value of an enum field (the enums deserialize
//! strictly, so an older reader rejects a value it does not know), a field removed, renamed or
//! given another meaning. Readers refuse a version they do not know, with a message saying what to
//! rebuild or upgrade.

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
mod tests {
    /// README's table of documents says each one's version: the constants, row by row.
    #[test]
    fn the_readme_table_has_every_documents_version() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
        let rows = [
            ("schema::manifest::Manifest", super::manifest::VERSION),
            ("schema::diagnostics::Diagnostics", super::diagnostics::VERSION),
            ("schema::stats::BuildStats", super::stats::VERSION),
            ("schema::report::Document", super::report::VERSION),
            ("schema::check::Document", super::check::VERSION),
            ("schema::occupancy::{Detail, Sweep}", super::occupancy::VERSION),
            ("schema::explore::Document", super::explore::VERSION),
            ("schema::prebuilt::Record", super::prebuilt::VERSION),
            ("schema::coverage::Document", super::coverage::VERSION),
            ("schema::doctor::Document", super::doctor::VERSION),
            ("schema::diff::Document", super::diff::VERSION),
        ];
        for (ty, version) in rows {
            let line = readme
                .lines()
                .find(|l| l.starts_with('|') && l.contains(&format!("`{ty}`")))
                .unwrap_or_else(|| panic!("README's table of documents has no row for `{ty}`"));
            let last = line.trim_end_matches('|').rsplit('|').next().unwrap().trim();
            assert_eq!(last, version.to_string(), "README says version {last} for `{ty}`, the code {version}");
        }
    }
}

//! The documentation's tests: the book under docs/ builds and its examples run, generated pages
//! match their sources. Run with `cargo test -p launch-tests --test docs`; with
//! `LAUNCH_BLESS_DOCS=1` they write what they generate instead of comparing it.

// The end-to-end harness (the real binary, fixture copies); each docs module uses part of it.
#[allow(dead_code)]
#[path = "../support/mod.rs"]
mod support;

/// The book builds with the pinned mdBook, its links resolve, its code blocks compile or run.
mod book;

/// The reference pages (commands, configuration, environment, exit codes) match their sources.
mod reference;

/// JSON Schemas of the documents (docs/src/schemas/) and their page (docs/src/reference/json.md),
/// and real documents validated against them.
mod schemas;

//! The generated documentation under docs/src: each generated file is compared to what its source
//! generates, and written instead with `LAUNCH_BLESS_DOCS=1`
//! (`LAUNCH_BLESS_DOCS=1 cargo test -p launch-tests --test docs`).

/// JSON Schemas of the documents (docs/src/schemas/) and their page (docs/src/reference/json.md),
/// and real documents validated against them.
mod schemas;

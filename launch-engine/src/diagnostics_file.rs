//! `OUT_DIR/launch/diagnostics.json`: a failed build's located errors, for `cargo launch check`
//! and editors, with the error's kind (`cargo launch`'s exit code); removed again once a build
//! succeeds.

use std::path::Path;

use launch_schema::diagnostics::{self, Diagnostics};

use crate::error::{Error, DIAGNOSTICS_FILE};

/// Writes `launch_dir/diagnostics.json` for a failed build of `package`: `error`'s diagnostics,
/// with files under `root` made relative to it. Written whole or not at all (a reader never sees
/// half a document).
pub(crate) fn write_diagnostics(
    launch_dir: &Path,
    root: &Path,
    package: &str,
    run: Option<String>,
    error: &Error,
) -> Result<(), Error> {
    let mut list = error.diagnostics();
    for d in &mut list {
        // `check` prints these (text, JSON, SARIF): no message or excerpt line shows a password
        // (a `cache-remote` line of Cargo.toml may hold one).
        d.message = launch_remote::redact(&d.message);
        d.excerpt = d.excerpt.iter().map(|l| launch_remote::redact(l)).collect();
        d.file = crate::input::shown(Path::new(&d.file), root);
    }
    let doc = Diagnostics {
        schema: diagnostics::VERSION,
        package: package.to_string(),
        root: root.display().to_string(),
        run,
        diagnostics: list,
        kind: Some(error.kind()),
    };
    let json =
        serde_json::to_string_pretty(&doc).map_err(|e| Error::io("serialise", launch_dir.to_path_buf())(e.into()))?;
    // Written on every failed run, even unchanged: a failure is a fresh report each time.
    let path = launch_dir.join(DIAGNOSTICS_FILE);
    std::fs::create_dir_all(launch_dir).map_err(Error::io("create", launch_dir.to_path_buf()))?;
    crate::out::write_atomically(&path, json.as_bytes()).map_err(Error::io("write", path))
}

/// Removes a `diagnostics.json` left by an earlier failed build, once a build succeeds.
pub(crate) fn remove_diagnostics(launch_dir: &Path) -> Result<(), Error> {
    let path = launch_dir.join(DIAGNOSTICS_FILE);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io("remove", path)(e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Diagnostic, Location};

    #[test]
    fn a_failed_build_writes_the_document_and_a_good_one_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let launch_dir = dir.path().join("out/launch");
        let root = dir.path().join("crate");
        let e = Error::Config {
            location: Location::File { path: root.join("Cargo.toml"), at: Some((7, 8)) },
            key: "k".into(),
            message: "m".into(),
        };
        write_diagnostics(&launch_dir, &root, "p", Some("run-1".into()), &e).unwrap();
        let path = launch_dir.join(DIAGNOSTICS_FILE);
        let doc = Diagnostics::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!((doc.package.as_str(), doc.run.as_deref()), ("p", Some("run-1")));
        // Relative to the crate root, so the document does not depend on the checkout's place.
        assert_eq!(doc.diagnostics, [Diagnostic::error("Cargo.toml", 7, 8, "`k`: m")]);
        // The error's kind, which decides `cargo launch`'s exit code.
        assert_eq!(doc.kind, Some(crate::error::ErrorKind::Config));
        // No temporary file is left next to it.
        assert_eq!(std::fs::read_dir(&launch_dir).unwrap().count(), 1);
        remove_diagnostics(&launch_dir).unwrap();
        assert!(!path.exists());
        remove_diagnostics(&launch_dir).unwrap();
    }
}

//! What `init` and `new` write, all or nothing: the paths are checked before anything is written
//! and what was created is removed again on a failure.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::BUILD_LINE;
use crate::destination;
use crate::error::Error;

/// The build script to write (relative to the crate root), if there is none; one that exists
/// without `launch_build::build` is a to-do. A path that is there but cannot be read as a file
/// (a folder) or written (`/proc`) is a usage error, before anything is written.
pub(super) fn build_script(crate_dir: &Path, rel: &Path, todo: &mut Vec<String>) -> Result<Option<PathBuf>, Error> {
    let path = crate_dir.join(rel);
    let what = format!("the build script `{}` (Cargo.toml's `package.build`, else build.rs)", path.display());
    match std::fs::read_to_string(&path) {
        Ok(s) if s.contains("launch_build::build") => Ok(None),
        Ok(_) => {
            todo.push(format!("{} exists and was left as it is: add `{BUILD_LINE}` to its main()", rel.display()));
            Ok(None)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            destination::file(&path, &format!("cannot write {what}"))?;
            Ok(Some(rel.to_path_buf()))
        }
        Err(e) => Err(Error::Usage(anyhow::anyhow!("cannot read {what}: {e}; make it a file or set `build` to one"))),
    }
}

/// Creates `files` (each new), then replaces `manifest`, all or nothing: on a failure the files
/// created are removed again.
pub(super) fn write_all(files: &[(PathBuf, &str)], manifest: Option<(&PathBuf, &str)>) -> Result<(), Error> {
    let mut written: Vec<&Path> = Vec::new();
    let mut result = Ok(());
    for (path, text) in files {
        result = std::fs::write(path, text).with_context(|| format!("cannot write `{}`", path.display()));
        if result.is_err() {
            break;
        }
        written.push(path);
    }
    if let (Ok(()), Some((path, text))) = (&result, manifest) {
        result = launch_engine::tooling::write_if_changed(path, text.as_bytes())
            .map(drop)
            .with_context(|| format!("cannot write `{}`", path.display()));
    }
    if result.is_err() {
        for path in written {
            let _ = std::fs::remove_file(path);
        }
    }
    result.map_err(Error::from)
}

/// Writes `files` into `staging` (created) and renames it to `dir`, creating the folders above
/// `dir` that are missing.
pub(super) fn write_crate(staging: &Path, files: &[(&str, String)], dir: &Path) -> anyhow::Result<()> {
    for (rel, text) in files {
        let path = staging.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create `{}`", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create `{}`", parent.display()))?;
    }
    std::fs::rename(staging, dir).with_context(|| format!("cannot move `{}` to `{}`", staging.display(), dir.display()))
}

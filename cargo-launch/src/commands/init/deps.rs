//! The `launch` and `launch-build` dependencies `init` and `new` write: a path into the checkout
//! and that checkout's version, so the crate builds against the checkout today and `cargo package`
//! turns each into a registry dependency of the same version (it drops `path`, keeps `version`).

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, InlineTable, Item, Value};

/// The checkout the dependencies point into, with the versions of its two crates.
pub(crate) struct Deps {
    pub(crate) root: PathBuf,
    launch: String,
    launch_build: String,
}

impl Deps {
    /// Reads the versions of `root/launch` and `root/launch-build` (each its own, or the
    /// workspace's `[workspace.package] version` in `root/Cargo.toml`).
    pub(crate) fn read(root: PathBuf) -> Result<Self, String> {
        let launch = crate_version(&root, "launch")?;
        let launch_build = crate_version(&root, "launch-build")?;
        Ok(Deps { root, launch, launch_build })
    }

    #[cfg(test)]
    pub(crate) fn at(root: &str, version: &str) -> Self {
        Deps { root: PathBuf::from(root), launch: version.to_string(), launch_build: version.to_string() }
    }

    /// `{ path = "ROOT/KRATE", version = "V" }`.
    pub(crate) fn dependency(&self, krate: &str) -> InlineTable {
        let mut dep = InlineTable::new();
        self.point(&mut dep, krate);
        dep
    }

    /// Sets `path` and `version` in `dep`, first and in that order, keeping its other keys
    /// (`features`) after them.
    pub(crate) fn point(&self, dep: &mut InlineTable, krate: &str) {
        let rest: Vec<(String, Value)> = dep
            .iter()
            .filter(|(k, _)| *k != "path" && *k != "version")
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        dep.clear();
        dep.insert("path", self.root.join(krate).display().to_string().into());
        dep.insert("version", self.version(krate).into());
        for (k, v) in rest {
            dep.insert(&k, v);
        }
        // The moved values keep their old spacing; lay the table out afresh.
        dep.fmt();
    }

    fn version(&self, krate: &str) -> &str {
        if krate == "launch" {
            &self.launch
        } else {
            &self.launch_build
        }
    }
}

/// The version of the package in `root/krate`.
fn crate_version(root: &Path, krate: &str) -> Result<String, String> {
    let read = |path: &Path| -> Result<DocumentMut, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        text.parse().map_err(|e| format!("`{}` is not valid TOML: {e}", path.display()))
    };
    let manifest = root.join(krate).join("Cargo.toml");
    let version = read(&manifest)?.get("package").and_then(|p| p.get("version")).cloned();
    let (version, from) = match version {
        Some(v) if v.get("workspace").and_then(Item::as_bool) == Some(true) => {
            let ws = root.join("Cargo.toml");
            (read(&ws)?.get("workspace").and_then(|w| w.get("package")).and_then(|p| p.get("version")).cloned(), ws)
        }
        v => (v, manifest),
    };
    version
        .and_then(|v| v.as_str().map(str::to_string))
        .ok_or_else(|| format!("`{}` gives {krate} no version (`package.version`)", from.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_come_from_the_crate_or_its_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("launch")).unwrap();
        std::fs::create_dir_all(root.join("launch-build")).unwrap();
        std::fs::write(root.join("Cargo.toml"), "[workspace.package]\nversion = \"0.3.1\"\n").unwrap();
        std::fs::write(root.join("launch/Cargo.toml"), "[package]\nversion.workspace = true\n").unwrap();
        std::fs::write(root.join("launch-build/Cargo.toml"), "[package]\nversion = \"0.3.2\"\n").unwrap();
        let deps = Deps::read(root.to_path_buf()).unwrap();
        assert_eq!((deps.launch.as_str(), deps.launch_build.as_str()), ("0.3.1", "0.3.2"));
        std::fs::write(root.join("launch-build/Cargo.toml"), "[package]\nname = \"launch-build\"\n").unwrap();
        let err = Deps::read(root.to_path_buf()).err().unwrap();
        assert!(err.contains("gives launch-build no version"), "{err}");
    }

    #[test]
    fn the_checkouts_own_versions_are_the_workspace_version() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let deps = Deps::read(root.to_path_buf()).unwrap();
        assert_eq!(deps.launch, env!("CARGO_PKG_VERSION"));
        assert_eq!(deps.launch_build, env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn path_and_version_come_first_and_other_keys_stay() {
        let deps = Deps::at("/co", "1.2.3");
        let mut dep: InlineTable = "{ features = [\"cudarc\"], path = \"../launch\" }"
            .parse::<Value>()
            .unwrap()
            .as_inline_table()
            .unwrap()
            .clone();
        deps.point(&mut dep, "launch");
        assert_eq!(dep.to_string(), "{ path = \"/co/launch\", version = \"1.2.3\", features = [\"cudarc\"] }");
        assert_eq!(deps.dependency("launch-build").to_string(), "{ path = \"/co/launch-build\", version = \"1.2.3\" }");
    }
}

//! Selecting the packages a command works on (one `cargo metadata`, each configuration loaded
//! once), building them through cargo and collecting the manifests their build scripts wrote.
//! `cargo check` runs the build scripts exactly as `cargo build` does and shares their results, so
//! a crate that was built already reports at once.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;
use cargo_metadata::{Message, MetadataCommand, PackageId};
use launch::Arch;
use launch_schema::manifest::Manifest;

use crate::cli::PackageArgs;
use crate::error::{BuildFailure, Error};
use crate::records::PackageKernels;

/// The cargo to call back: `$CARGO` (set when run as `cargo launch`), else `cargo`.
pub fn cargo_program() -> PathBuf {
    let cargo = launch_engine::tooling::Env::cli().get(launch_engine::tooling::var::CARGO);
    cargo.map(PathBuf::from).unwrap_or_else(|| PathBuf::from("cargo"))
}

/// The packages a command works on, chosen once per run: one `cargo metadata`, and each
/// package's `[package.metadata.launch]` loaded once. The toolchain step reads it
/// ([`Selection::toolchains`]), then the build consumes it, and the configs travel on into the
/// [`PackageKernels`] it returns.
pub struct Selection {
    /// The command line's `--manifest-path`, `-p` and `--workspace`, passed on to `cargo check`.
    args: PackageArgs,
    /// The packages.
    packages: Vec<SelectedPackage>,
    /// `cargo metadata`'s `target_directory` (honours `CARGO_TARGET_DIR` and `.cargo/config.toml`).
    target_dir: PathBuf,
    /// `cargo metadata`'s `workspace_root`.
    workspace_root: PathBuf,
    /// For `cargo launch diff`: where to build and with which toolchain ([`Selection::for_diff`]).
    diff: Option<DiffBuild>,
}

/// A build of one side of `cargo launch diff`.
struct DiffBuild {
    /// Its target folder.
    target: PathBuf,
    /// The pinned toolchain it builds with, whatever the crate's `toolchain` key says.
    pin: Option<launch_engine::tooling::toolchain::Pin>,
}

/// One selected package.
struct SelectedPackage {
    id: PackageId,
    name: String,
    manifest_path: PathBuf,
    /// For a package that builds kernels, its `[package.metadata.launch]`.
    config: Option<launch_engine::Config>,
}

impl Selection {
    /// The packages the user asked about: `-p` names, `--workspace`, or the package of the
    /// manifest (the workspace's default members when it is a virtual manifest), each
    /// configuration checked (a usage error, exit 2, with the build script's exact message).
    pub fn of(sel: &PackageArgs) -> Result<Selection, Error> {
        let (packages, target_dir, workspace_root) = selected_packages(sel)?;
        Ok(Selection { args: sel.clone(), packages, target_dir, workspace_root, diff: None })
    }

    /// The toolchains the selected packages build with (`toolchain` of each one that builds
    /// kernels), each once, oldest first; the default one when none builds kernels (the build
    /// then says so).
    pub fn toolchains(&self) -> Vec<launch_engine::tooling::toolchain::Pin> {
        use launch_engine::tooling::toolchain::pin;
        let wanted: Vec<_> = self.packages.iter().filter_map(|p| p.config.as_ref().map(|c| c.toolchain)).collect();
        let pins: Vec<_> = pin::PINS.into_iter().filter(|p| wanted.contains(p)).collect();
        if pins.is_empty() {
            vec![pin::DEFAULT]
        } else {
            pins
        }
    }

    /// The `[package.metadata.launch]` of each selected package that builds kernels.
    pub fn configs(&self) -> impl Iterator<Item = &launch_engine::Config> {
        self.packages.iter().filter_map(|p| p.config.as_ref())
    }

    /// The target folder.
    pub fn target_dir(&self) -> &Path {
        &self.target_dir
    }

    /// The workspace's root folder.
    pub fn workspace_root(&self) -> &Path {
        &self.workspace_root
    }

    /// The Cargo.toml of each selected package, with its name.
    pub fn manifests(&self) -> Vec<(String, PathBuf)> {
        self.packages.iter().map(|p| (p.name.clone(), p.manifest_path.clone())).collect()
    }

    /// The arches the selected packages that build kernels list, each once, sorted.
    pub fn listed_arches(&self) -> Vec<Arch> {
        let all: Vec<Arch> =
            self.packages.iter().filter_map(|p| p.config.as_ref()).flat_map(|c| c.arches.clone()).collect();
        sorted(&all)
    }

    /// For `cargo launch diff`: [`Selection::build`] builds into `target`, from source
    /// (`LAUNCH_PREBUILT=ignore`) through the kernel cache, and with `pin` whatever the crates'
    /// `toolchain` says (`LAUNCH_TOOLCHAIN_PIN`); `arches`, when given, replace the crates' lists.
    pub fn for_diff(mut self, target: PathBuf, pin: Option<launch_engine::tooling::toolchain::Pin>) -> Selection {
        self.diff = Some(DiffBuild { target, pin });
        self
    }

    /// The folders of the selected packages that build kernels (their Cargo.toml's folder).
    pub fn kernel_package_roots(&self) -> Vec<PathBuf> {
        (self.packages.iter().filter(|p| p.config.is_some()))
            .map(|p| p.manifest_path.parent().unwrap_or(Path::new(".")).to_path_buf())
            .collect()
    }

    /// Builds the selected packages (`cargo check`) and returns their manifests. With `arches`
    /// given, every package is built for exactly those arches when some package does not list
    /// them all; the caller filters the records to `arches` either way.
    ///
    /// Arches a crate does not list are compiled through `LAUNCH_ARCH` into a target folder of
    /// their own, `<target>/launch-arch/<arches>`: building them into the normal one would rerun
    /// the build script there, so the next `cargo build` would rerun it again and, until then,
    /// embed the wrong arches.
    pub fn build(self, arches: &[Arch]) -> Result<Vec<PackageKernels>, Error> {
        let purpose = if self.diff.is_some() { Purpose::Diff } else { Purpose::Normal };
        build_in(self, arches, purpose)
    }

    /// Builds the selected packages from source for the arches they list (`LAUNCH_PREBUILT=ignore`,
    /// `LAUNCH_ARCH` unset), into a target folder of its own, `<target>/launch-prebuild`, so the
    /// normal build stays fresh: what `cargo launch prebuild` ships. `verify`: without the kernel
    /// cache (`LAUNCH_NO_CACHE=1`), into `<target>/launch-prebuild-verify`, so every kernel is
    /// compiled by this run.
    pub fn build_from_source(self, verify: bool) -> Result<Vec<PackageKernels>, Error> {
        build_in(self, &[], if verify { Purpose::Verify } else { Purpose::Prebuild })
    }

    /// Whether every selected package that builds kernels ships prebuilt kernels that match its
    /// sources and hold `arches` (all it lists when empty), and the environment lets the build use
    /// them: then its build needs no toolchain. A package whose status cannot be read counts as
    /// not covered (its build says why).
    pub fn prebuilt_covers(&self, arches: &[Arch]) -> bool {
        use launch_engine::prebuilt::{self, Mode, Status};
        let env = launch_engine::tooling::Env::cli();
        // Another arch list or toolchain than the crate names is not what its folder holds.
        let overridden = env.get(launch_engine::tooling::var::LAUNCH_ARCH).is_some()
            || env.get(launch_engine::tooling::var::LAUNCH_TOOLCHAIN_PIN).is_some();
        if env.prebuilt_mode().map_or(true, |m| m == Mode::Ignore) || overridden {
            return false;
        }
        let configs: Vec<&launch_engine::Config> = self.packages.iter().filter_map(|p| p.config.as_ref()).collect();
        !configs.is_empty()
            && configs.iter().all(|c| {
                arches.iter().all(|a| c.arches.contains(a)) && matches!(prebuilt::status(c), Ok(Status::Fresh(_)))
            })
    }

    /// `e`, a toolchain error met before building, as the build of a selected package would give
    /// it: the stale prebuilt folder's error (what changed, `cargo launch prebuild`, `cargo launch
    /// setup`) where a package has one (`launch_engine::tooling::explain_no_toolchain`), so that
    /// `report`, `check` and `coverage` say what `cargo build` says.
    pub fn explain_no_toolchain(&self, e: Error) -> Error {
        let Error::NoToolchain(why) = &e else { return e };
        let env = launch_engine::tooling::Env::cli();
        let why = crate::error::message(why);
        self.packages
            .iter()
            .filter_map(|p| p.config.as_ref())
            .find_map(|c| launch_engine::tooling::explain_no_toolchain(&env, c, &why))
            .map_or(e, Error::from)
    }

    /// [`Selection::build`] with every arch's PTX written too (`LAUNCH_ALL_PTX=1`, see
    /// `launch_engine::tooling::all_ptx_path`), into a target folder of its own,
    /// `<target>/launch-explore/<arches or "listed">`, so the normal build stays fresh. The kernel
    /// cache serves what the normal build compiled: no new NVRTC run.
    pub fn build_with_all_ptx(self, arches: &[Arch]) -> Result<Vec<PackageKernels>, Error> {
        build_in(self, arches, Purpose::AllPtx)
    }
}

/// Why a command builds: each purpose but the normal one builds into a target folder of its own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    /// `report`, `check`: the crate's own build.
    Normal,
    /// `explore`: with every arch's PTX.
    AllPtx,
    /// `prebuild`: from source, through the kernel cache.
    Prebuild,
    /// `prebuild --verify`: from source, without the kernel cache.
    Verify,
    /// `diff`: one side, from source, through the kernel cache ([`Selection::for_diff`]).
    Diff,
}

/// A manifest the build wrote: which selected package, where, and what.
struct Built {
    /// Index into the selection's packages.
    index: usize,
    launch_dir: PathBuf,
    manifest: Manifest,
    /// The configuration of a package that was not known to build kernels when selected (its
    /// build script wrote a manifest all the same), loaded now.
    late_config: Option<launch_engine::Config>,
}

fn build_in(mut selected: Selection, arches: &[Arch], purpose: Purpose) -> Result<Vec<PackageKernels>, Error> {
    let index: BTreeMap<PackageId, usize> =
        selected.packages.iter().enumerate().map(|(i, p)| (p.id.clone(), i)).collect();

    let mut cmd = Command::new(cargo_program());
    cmd.arg("check").arg("--message-format=json-render-diagnostics");
    push_selection(&mut cmd, &selected.args);
    let arches = sorted(arches);
    let unlisted = !arches.is_empty()
        && selected
            .packages
            .iter()
            .any(|p| p.config.as_ref().is_some_and(|c| arches.iter().any(|a| !c.arches.contains(a))));
    let target_dir = if let Some(d) = selected.diff.as_ref().filter(|_| purpose == Purpose::Diff) {
        diff_side(d, &arches, &mut cmd)
    } else if matches!(purpose, Purpose::Prebuild | Purpose::Verify) {
        let dir = selected.target_dir.join(if purpose == Purpose::Verify {
            "launch-prebuild-verify"
        } else {
            "launch-prebuild"
        });
        cmd.arg("--target-dir").arg(&dir).env("LAUNCH_PREBUILT", "ignore").env_remove("LAUNCH_ARCH");
        if purpose == Purpose::Verify {
            cmd.env("LAUNCH_NO_CACHE", "1");
        }
        dir
    } else if purpose == Purpose::AllPtx {
        let name: Vec<String> = arches.iter().map(|a| a.to_string()).collect();
        let dir = if unlisted { name.join("-") } else { "listed".to_string() };
        let dir = selected.target_dir.join("launch-explore").join(dir);
        cmd.arg("--target-dir").arg(&dir).env("LAUNCH_ALL_PTX", "1");
        dir
    } else if unlisted {
        let dir = arch_target_dir(&selected.target_dir, &arches);
        cmd.arg("--target-dir").arg(&dir);
        dir
    } else {
        selected.target_dir.clone()
    };
    if unlisted {
        cmd.env("LAUNCH_ARCH", arches.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(","));
    }
    // cargo's progress and any build error go straight to the user's terminal.
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).stdin(Stdio::null());
    // The build scripts write it into a failed build's diagnostics.json: this run's failure, not an
    // earlier one's left in the target folder.
    let run = run_id();
    cmd.env("LAUNCH_RUN_ID", &run);
    let mut child = cmd.spawn().with_context(|| format!("could not start `{}`", cargo_program().display()))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for msg in Message::parse_stream(BufReader::new(stdout)) {
        let msg = msg.context("reading cargo's JSON messages")?;
        if let Message::BuildScriptExecuted(script) = msg {
            let Some(&i) = index.get(&script.package_id) else { continue };
            if !seen.insert(script.package_id.clone()) {
                continue;
            }
            let launch_dir = script.out_dir.join("launch").into_std_path_buf();
            let path = launch_dir.join("manifest.json");
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let manifest = Manifest::from_json(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let p = &selected.packages[i];
            let late_config = match p.config {
                Some(_) => None,
                None => Some(launch_engine::Config::load(&p.manifest_path).map_err(|e| Error::Usage(e.into()))?),
            };
            found.push(Built { index: i, launch_dir, manifest, late_config });
        }
    }
    let status = child.wait().context("waiting for cargo")?;
    if !status.success() {
        let failures = selected
            .packages
            .iter()
            .filter(|p| p.config.is_some())
            .filter_map(|p| failure(&target_dir, p, &run))
            .collect();
        return Err(Error::Build { error: anyhow::anyhow!("`cargo check` failed (see its output above)"), failures });
    }
    if found.is_empty() {
        return Err(Error::Usage(anyhow::anyhow!(
                "no selected package builds kernels with launch-build; its build.rs must be `fn main() {{ launch_build::build() }}` \
                 and Cargo.toml must have [package.metadata.launch]"
            ),
        ));
    }
    let mut found: Vec<PackageKernels> = found
        .into_iter()
        .map(|b| {
            // The configuration loaded when selecting, moved along: each is loaded once per run.
            let config = b.late_config.or_else(|| selected.packages[b.index].config.take());
            let config = config.expect("a package that built kernels has its configuration");
            PackageKernels {
                package: b.manifest.package.clone(),
                launch_dir: b.launch_dir,
                manifest: b.manifest,
                config,
            }
        })
        .collect();
    found.sort_by(|a, b| a.package.cmp(&b.package));
    Ok(found)
}

/// A `diff` side's build: its target folder, from source, with its pin and `arches` (when given).
fn diff_side(d: &DiffBuild, arches: &[Arch], cmd: &mut Command) -> PathBuf {
    cmd.arg("--target-dir").arg(&d.target).env("LAUNCH_PREBUILT", "ignore").env_remove("LAUNCH_TOOLCHAIN_PIN");
    if let Some(pin) = &d.pin {
        cmd.env("LAUNCH_TOOLCHAIN_PIN", pin.name);
    }
    if !arches.is_empty() {
        cmd.env("LAUNCH_ARCH", arches.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(","));
    }
    d.target.clone()
}

/// `arches` sorted by number (sm_90 before sm_100), each once.
pub fn sorted(arches: &[Arch]) -> Vec<Arch> {
    let mut a = arches.to_vec();
    a.sort();
    a.dedup();
    a
}

/// The target folder for a build for `arches` (sorted): `<target>/launch-arch/sm_80-sm_100`. One
/// folder per list, so alternating between two lists rebuilds neither.
pub fn arch_target_dir(target: &Path, arches: &[Arch]) -> PathBuf {
    let name: Vec<String> = arches.iter().map(|a| a.to_string()).collect();
    target.join("launch-arch").join(name.join("-"))
}

fn push_selection(cmd: &mut Command, sel: &PackageArgs) {
    if let Some(p) = &sel.manifest_path {
        cmd.arg("--manifest-path").arg(p);
    }
    for p in &sel.packages {
        cmd.arg("--package").arg(p);
    }
    if sel.workspace {
        cmd.arg("--workspace");
    }
}

/// An id no other run shares: this process and the time.
fn run_id() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// The located errors the failed build script of `p` wrote in run `run`, if it wrote any: the
/// `build/<name>-*/out/launch/diagnostics.json` under the target folder (or a `<target>/<triple>/`
/// one) of this run and this checkout of the package (copies of one package can share a target
/// folder, and a failed build leaves its document until the next success).
fn failure(target: &Path, p: &SelectedPackage, run: &str) -> Option<BuildFailure> {
    use launch_schema::diagnostics::Diagnostics;
    let root = p.manifest_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let same_root = |r: &str| std::fs::canonicalize(r).ok() == std::fs::canonicalize(&root).ok();
    let prefix = format!("{}-", p.name);
    let profiles = std::iter::once(target.join("debug"))
        .chain(std::fs::read_dir(target).into_iter().flatten().flatten().map(|e| e.path().join("debug")));
    for build in profiles.map(|d| d.join("build")) {
        for entry in std::fs::read_dir(&build).into_iter().flatten().flatten() {
            if !entry.file_name().to_string_lossy().starts_with(&prefix) {
                continue;
            }
            let path = entry.path().join("out/launch").join(launch_engine::error::DIAGNOSTICS_FILE);
            let Some(doc) = std::fs::read_to_string(&path).ok().and_then(|t| Diagnostics::from_json(&t).ok()) else {
                continue;
            };
            if doc.run.as_deref() == Some(run) && same_root(&doc.root) {
                return Some(BuildFailure {
                    package: p.name.clone(),
                    root,
                    diagnostics: doc.diagnostics,
                    kind: doc.kind,
                });
            }
        }
    }
    None
}

/// The selected packages, each with its configuration when it builds kernels, and the target folder.
fn selected_packages(sel: &PackageArgs) -> Result<(Vec<SelectedPackage>, PathBuf, PathBuf), Error> {
    let mut mc = MetadataCommand::new();
    mc.cargo_path(cargo_program()).no_deps();
    if let Some(p) = &sel.manifest_path {
        mc.manifest_path(p);
    }
    let meta = mc.exec().map_err(|e| Error::Usage(anyhow::Error::new(e).context("`cargo metadata` failed")))?;
    let members: Vec<_> = meta.workspace_packages();
    let ids: BTreeSet<PackageId> = if !sel.packages.is_empty() {
        let mut ids = BTreeSet::new();
        for name in &sel.packages {
            match members.iter().find(|p| p.name.as_str() == name.as_str()) {
                Some(p) => {
                    ids.insert(p.id.clone());
                }
                None => {
                    let names: Vec<&str> = members.iter().map(|p| p.name.as_str()).collect();
                    return Err(Error::Usage(anyhow::anyhow!(
                        "package `{name}` is not in this workspace; its packages: {}",
                        names.join(", ")
                    )));
                }
            }
        }
        ids
    } else if sel.workspace {
        members.iter().map(|p| p.id.clone()).collect()
    } else if let Some(root) = meta.root_package() {
        [root.id.clone()].into_iter().collect()
    } else {
        meta.workspace_default_members.iter().cloned().collect()
    };
    if ids.is_empty() {
        return Err(Error::Usage(anyhow::anyhow!("no package selected")));
    }
    // Check [package.metadata.launch] before building, so a configuration error is a usage error
    // (exit 2) with the build script's exact message rather than a failed build. A package that
    // builds with launch-build but has no table at all is one too.
    let uses_launch_build = |p: &cargo_metadata::Package| {
        p.dependencies.iter().any(|d| d.name == "launch-build" && d.kind == cargo_metadata::DependencyKind::Build)
    };
    let mut packages = Vec::new();
    for p in members.iter().filter(|p| ids.contains(&p.id)) {
        let config = if p.metadata.get("launch").is_some() || uses_launch_build(p) {
            Some(launch_engine::Config::load(p.manifest_path.as_std_path()).map_err(|e| Error::Usage(e.into()))?)
        } else {
            None
        };
        packages.push(SelectedPackage {
            id: p.id.clone(),
            name: p.name.to_string(),
            manifest_path: p.manifest_path.clone().into_std_path_buf(),
            config,
        });
    }
    Ok((packages, meta.target_directory.clone().into_std_path_buf(), meta.workspace_root.clone().into_std_path_buf()))
}

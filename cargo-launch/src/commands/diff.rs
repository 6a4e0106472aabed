//! `cargo launch diff`: two sides' report records compared per kernel × arch (`crate::diff`),
//! rendered as text, JSON (`launch_schema::diff`) or markdown. A side is a build with a pinned
//! toolchain (`--toolchain OLD..NEW`), the crate at a git revision built in a temporary worktree
//! (`--rev REV`, against the working tree), or a `report --format json` file.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use launch::Arch;
use launch_engine::tooling::toolchain::Pin;
use launch_engine::tooling::Tool;
use launch_schema::diff::Side;
use launch_schema::report::{Document as Report, Record};

use crate::cargo::Selection;
use crate::cli::{DiffArgs, DiffFormat, PackageArgs};
use crate::error::Error;
use crate::records::{self, PackageKernels};
use crate::{diff, output, toolchain};

/// One side: its label and its records.
type Records = (Side, Vec<Record>);

/// Runs `cargo launch diff`.
pub(crate) fn run(args: &DiffArgs) -> Result<(), Error> {
    if args.pressure && args.toolchain.is_none() && args.rev.is_none() {
        return Err(Error::Usage(anyhow::anyhow!(
            "--pressure builds each side with line info, and two files are not built: make them with `cargo launch \
             report --pressure --format json` (their live registers are then compared), or use --toolchain or --rev"
        )));
    }
    let (old, new) = if let Some((a, b)) = args.toolchain {
        toolchains(args, a, b)?
    } else if let Some(rev) = &args.rev {
        revision(args, rev)?
    } else {
        (file(&args.files[0])?, file(&args.files[1])?)
    };
    let doc = diff::compare((old.0, &old.1), (new.0, &new.1));
    let mut out = crate::stdout::stdout();
    match args.format {
        DiffFormat::Text => output::diff::text(&mut out, &doc),
        DiffFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from).and_then(|_| writeln!(out))
        }
        DiffFormat::Markdown => out.write_all(output::diff::markdown(&doc).as_bytes()),
    }
    .context("writing the diff")?;
    if args.fail_on.is_some() && diff::has_regression(&doc) {
        eprintln!("error: {} regression(s) (--fail-on regression)", doc.totals.regressions);
        return Err(Error::CheckFailed);
    }
    Ok(())
}

/// A `report --format json` document; one that cannot be read is a usage error naming it.
fn file(path: &Path) -> Result<Records, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(anyhow::anyhow!("{}: cannot read it: {e}", path.display())))?;
    let doc = Report::from_json(&text).map_err(|e| {
        Error::Usage(anyhow::anyhow!("{}: not a `cargo launch report --format json` document: {e}", path.display()))
    })?;
    Ok((Side { label: path.display().to_string(), toolchain: doc.toolchain }, doc.records))
}

/// The records of a build, as `report --format json` writes them (tune variants left out), with
/// their live registers when `pressure`.
fn records_of(label: String, packages: &[PackageKernels], pressure: bool) -> Result<Records, Error> {
    let rows = records::rows(packages, &[])?;
    let t = &packages[0].manifest.toolchain;
    let toolchain = t.compilers.clone();
    let found = if pressure { Some(crate::pressure::collect(packages, &rows)?) } else { None };
    let records = rows
        .iter()
        .map(|r| {
            let mut rec = Record::new(r.id.clone(), r.lines.clone(), &r.report);
            rec.pressure = found.as_ref().and_then(|f| f.of(r));
            rec
        })
        .collect();
    Ok((Side { label, toolchain }, records))
}

/// `--toolchain OLD..NEW`: the selection built with each, into `target/launch-diff/<name>`, for
/// the arches the crates list that both can target.
fn toolchains(args: &DiffArgs, old: Pin, new: Pin) -> Result<(Records, Records), Error> {
    if launch_engine::tooling::Env::cli().get(launch_engine::tooling::var::LAUNCH_TOOLCHAIN).is_some() {
        return Err(Error::Usage(anyhow::anyhow!(
            "LAUNCH_TOOLCHAIN names one toolchain root, and `diff --toolchain` builds with two: unset it (each side \
             uses its pinned toolchain from the cache)"
        )));
    }
    toolchain::ensure_pins(args.no_setup, &[old, new])?;
    let probe = Selection::of(&args.packages)?;
    let listed = probe.listed_arches();
    let (both, left): (Vec<Arch>, Vec<Arch>) = listed.iter().partition(|a| old.can_target(**a) && new.can_target(**a));
    if both.is_empty() && !listed.is_empty() {
        return Err(Error::Usage(anyhow::anyhow!(
            "no arch the packages list can be built by both toolchain {} and {}",
            old.name,
            new.name
        )));
    }
    for a in &left {
        eprintln!("note: {a} left out: toolchain {} and {} cannot both target it", old.name, new.name);
    }
    let arches = if left.is_empty() { Vec::new() } else { both };
    let mut sides = Vec::new();
    for pin in [old, new] {
        let selection = Selection::of(&args.packages)?;
        let target = selection.target_dir().join("launch-diff").join(format!("cuda-{}", pin.name));
        let packages = selection.for_diff(target, Some(pin)).build(&arches)?;
        sides.push(records_of(format!("toolchain {}", pin.name), &packages, args.pressure)?);
    }
    let new = sides.pop().expect("two sides");
    Ok((sides.pop().expect("two sides"), new))
}

/// `--rev REV`: the selection at `rev`, checked out into a temporary worktree and built into
/// `target/launch-diff/rev`, against the working tree's normal build.
fn revision(args: &DiffArgs, rev: &str) -> Result<(Records, Records), Error> {
    let selection = Selection::of(&args.packages)?;
    let roots = selection.kernel_package_roots();
    let first = roots.first().cloned().unwrap_or_else(|| selection.workspace_root().to_path_buf());
    let top = git(&first, &["rev-parse", "--show-toplevel"])
        .map_err(|e| Error::Usage(anyhow::anyhow!("--rev needs a git repository at {}: {e}", first.display())))?;
    let top = PathBuf::from(top.trim());
    let sha = git(&top, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
        .map_err(|_| Error::Usage(anyhow::anyhow!("`{rev}` is not a commit of the repository at {}", top.display())))?;
    let sha = sha.trim().to_string();
    let tree = Worktree::add(&top, &sha)?;
    let rev_args = mapped_args(&selection, &top, &tree.path)?;
    // The working tree's lock file when the revision has none, so that nothing is resolved anew.
    let lock = selection.workspace_root().join("Cargo.lock");
    if let Some(there) = inside(&top, &lock).map(|rel| tree.path.join(rel)) {
        if !there.exists() && lock.is_file() {
            std::fs::copy(&lock, &there).with_context(|| format!("copying {}", lock.display()))?;
        }
    }
    let target = selection.target_dir().join("launch-diff").join("rev");
    let at_rev = Selection::of(&rev_args)?.for_diff(target, None).build(&[])?;
    let short: String = sha.chars().take(12).collect();
    let old = records_of(format!("{rev} ({short})"), &at_rev, args.pressure)?;
    drop(tree);
    let new = records_of("working tree".into(), &selection.build(&[])?, args.pressure)?;
    Ok((old, new))
}

/// `path` relative to `top`, when it lies under it (both canonical).
fn inside(top: &Path, path: &Path) -> Option<PathBuf> {
    let top = std::fs::canonicalize(top).ok()?;
    // A file that is not there yet (the lock file) by its folder.
    let path = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(_) => std::fs::canonicalize(path.parent()?).ok()?.join(path.file_name()?),
    };
    path.strip_prefix(&top).ok().map(Path::to_path_buf)
}

/// The selection's packages in the worktree at `tree`: the one package's Cargo.toml there, or the
/// workspace's with the same `-p` names.
fn mapped_args(selection: &Selection, top: &Path, tree: &Path) -> Result<PackageArgs, Error> {
    let manifests = selection.manifests();
    let manifest = match manifests.as_slice() {
        [(_, one)] => one.clone(),
        _ => selection.workspace_root().join("Cargo.toml"),
    };
    let rel = inside(top, &manifest).ok_or_else(|| {
        Error::Usage(anyhow::anyhow!("{} is not inside the git repository at {}", manifest.display(), top.display()))
    })?;
    let there = tree.join(&rel);
    if !there.is_file() {
        return Err(Error::Usage(anyhow::anyhow!("{} does not exist at that revision", rel.display())));
    }
    let packages = if manifests.len() > 1 { manifests.into_iter().map(|(n, _)| n).collect() } else { Vec::new() };
    Ok(PackageArgs { manifest_path: Some(there), packages, workspace: false })
}

/// `git -C dir args...`'s stdout.
fn git(dir: &Path, args: &[&str]) -> Result<String, Error> {
    Tool::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .run()
        .map(|o| o.stdout)
        .map_err(|e| Error::Failure(anyhow::Error::from(e)))
}

/// A temporary `git worktree` of one commit, removed (with its folder) when dropped, also when
/// the build in it failed.
struct Worktree {
    top: PathBuf,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Worktree {
    fn add(top: &Path, sha: &str) -> Result<Worktree, Error> {
        let dir = tempfile::Builder::new()
            .prefix("cargo-launch-diff-")
            .tempdir()
            .context("creating a temporary folder for the worktree")?;
        let path = dir.path().join("tree");
        let p = path.display().to_string();
        git(top, &["worktree", "add", "--detach", "--quiet", &p, sha])?;
        Ok(Worktree { top: top.to_path_buf(), path, _dir: dir })
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let p = self.path.display().to_string();
        if git(&self.top, &["worktree", "remove", "--force", &p]).is_err() {
            // The folder goes with the temporary folder; git forgets it here.
            let _ = std::fs::remove_dir_all(&self.path);
            let _ = git(&self.top, &["worktree", "prune"]);
        }
    }
}

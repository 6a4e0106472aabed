//! `cargo launch check`: the CI gate. Compiles every kernel for the requested arches (no GPU) and
//! fails where a launch would fail (error 701), where spills exceed the budget, where resources
//! regressed against the committed baseline, or where the toolchain cannot target an arch.
//!
//! The rules are elsewhere: about one kernel on one arch in `launch_analysis`, about packages in
//! `package_rules`; here the packages, records and baseline files are mapped to them, and
//! `check_render` prints what they found.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context;

use launch::Arch;
use launch_analysis::{self as analysis, Detail, Finding, FindingKind, Location, Severity};
use launch_engine::tooling::toolchain::Pin;
use launch_schema::check::{BaselineState, BaselineUse};

use crate::baseline::{self, Baseline};
use crate::cargo::{self, Selection};
use crate::cli::CheckArgs;
use crate::error::Error;
use crate::output::check::{self as check_render, Checked};
use crate::records::{self, PackageKernels, Row};
use crate::spills::Lines;
use crate::{package_rules, toolchain};

/// The baseline beside a package's Cargo.toml when `--baseline` is not given.
const DEFAULT_BASELINE: &str = "launch-baseline.txt";

/// Runs `cargo launch check`.
pub fn run(args: &CheckArgs) -> Result<(), Error> {
    let explicit = explicit_baseline(args)?;
    let selection = Selection::of(&args.packages)?;
    if args.bless && args.baseline.is_none() {
        // The default baselines, known from the selection: refused before anything is built.
        for root in selection.kernel_package_roots() {
            let path = root.join(DEFAULT_BASELINE);
            let _absent = usable(&path, "", "write")?;
            writable_baseline(&path, "")?;
        }
    }
    let prebuilt = !args.spills && selection.prebuilt_covers(&cargo::sorted(&args.arch));
    let pins = toolchain::ensure_unless_prebuilt(args.no_setup, args.spills, &selection, &cargo::sorted(&args.arch))?;
    // Arches the toolchain cannot target are findings, not a failed build; the rest is checked.
    let (arches, mut findings) = targetable(args, &pins, prebuilt)?;
    if !args.arch.is_empty() && arches.is_empty() {
        // Nothing is built: the manifest named on the command line (or here) stands for the package.
        let manifest = absolute(args.packages.manifest_path.as_deref().unwrap_or(Path::new("Cargo.toml")));
        return finish(args, Some(&manifest), &[], &[], findings, &[]);
    }
    let packages = match selection.build(&arches) {
        Ok(packages) => packages,
        // The kernels did not build: their located errors are findings too (placed in SARIF and
        // in annotations), then the exit code is the failed build's.
        // (A failure located nowhere, such as a bad environment variable, is cargo's output alone.)
        Err(Error::Build { error, failures }) if failures.iter().any(|f| !f.diagnostics.is_empty()) => {
            findings.extend(failures.iter().flat_map(package_rules::compile));
            let manifest = failures.first().map(|f| f.root.join("Cargo.toml"));
            let _verdict = finish(args, manifest.as_deref(), &[], &[], findings, &[]);
            return Err(Error::Build { error, failures });
        }
        Err(e) => return Err(e),
    };
    if args.baseline.is_some() && packages.len() > 1 {
        // One file cannot hold several packages' baselines (their kernels could share names).
        return Err(Error::Usage(anyhow::anyhow!(
            "--baseline names one file but {} packages are checked; leave it out (each package then uses the \
                 launch-baseline.txt next to its Cargo.toml) or select one package with -p",
            packages.len()
        )));
    }
    let records = records::rows(&packages, &arches)?;
    // Tune variants are checked like kernels; they stay out of the baseline (a grid is edited
    // freely, and the kernel's own records already gate its code).
    let variants = records::variants(&packages, &arches)?;
    // `--spills`: spill findings point at the line with the most spill code (only spilling files
    // are compiled again, with line info, and the result is cached).
    let spill_lines = if args.spills { Some(crate::spills::collect(&packages, records.iter())?) } else { None };
    if args.bless {
        // Every package's baseline can be written, or none is.
        let given = if args.baseline.is_some() { " given with --baseline" } else { "" };
        for p in &packages {
            let path = baseline_path(args, p);
            let _absent = usable(&path, given, "write")?;
            writable_baseline(&path, given)?;
        }
    }
    let mut baselines = Vec::new();
    for p in &packages {
        let recs: Vec<&Row> = records.iter().filter(|r| r.id.package == p.package).collect();
        findings.extend(kernel_rules(p, &recs, &variants, spill_lines.as_ref()));
        findings.extend(package_rules::package(p, &variants.refused));
        findings.extend(package_rules::unchecked(p, &arches, recs.len()));
        baselines.push(baseline(args, p, &recs, explicit.as_ref(), &arches, &mut findings)?);
    }
    let manifest = packages.first().map(|p| p.config.manifest_path.clone());
    finish(args, manifest.as_deref(), &packages, &records, findings, &baselines)
}

/// The baseline named with `--baseline`, read and checked before anything is built: a typo in
/// its path would otherwise turn the regression gate off without a word. With `--bless` it is
/// not read, but a path that cannot be written to (a folder, a FIFO) is refused as early.
fn explicit_baseline(args: &CheckArgs) -> Result<Option<baseline::Parsed>, Error> {
    match (&args.baseline, args.bless) {
        (Some(path), false) => read_baseline(path, true),
        (Some(path), true) => {
            // Absent is fine: --bless creates it, in a folder that exists and takes files.
            let _absent = usable(path, " given with --baseline", "write")?;
            writable_baseline(path, " given with --baseline")?;
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// The arches of `--arch` the toolchain can target (`prebuilt`: the pinned toolchains' list, when
/// the prebuilt kernels make the build need none) (sorted; empty without `--arch`: the crates'
/// own), and a finding for each one it cannot.
fn targetable(args: &CheckArgs, pins: &[Pin], prebuilt: bool) -> Result<(Vec<Arch>, Vec<Finding>), Error> {
    if args.arch.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    // Prebuilt kernels hold every arch asked for, compiled by the pinned toolchain.
    let supported = if prebuilt { toolchain::pinned_targets(pins) } else { toolchain::supported_arches(pins)? };
    let (ok, bad): (Vec<Arch>, Vec<Arch>) =
        cargo::sorted(&args.arch).into_iter().partition(|a| supported.is_empty() || supported.contains(&a.sm()));
    Ok((ok, bad.into_iter().map(|a| package_rules::unsupported_arch(a, &supported)).collect()))
}

/// Compares the records of `p` with its baseline, adding what that finds to `findings`, or, with
/// `--bless`, writes them as its baseline. `explicit`: the `--baseline` file, already read;
/// `arches`: `--arch`'s (empty: the package's own).
fn baseline(
    args: &CheckArgs,
    p: &PackageKernels,
    recs: &[&Row],
    explicit: Option<&baseline::Parsed>,
    arches: &[Arch],
    findings: &mut Vec<Finding>,
) -> Result<BaselineUse, Error> {
    let path = baseline_path(args, p);
    let current = current_baseline(recs);
    let used = |state, records| BaselineUse { package: p.package.clone(), path: path.clone(), state, records };
    if args.bless {
        let text = baseline::render(&current);
        // The writer reads the old file to skip an unchanged write: a FIFO there would block
        // it forever, so the path must be a regular file or nothing (exit 2 otherwise); a
        // failure while writing (a read-only file system) is exit 4, whoever named the path.
        let given = if args.baseline.is_some() { " given with --baseline" } else { "" };
        let _absent = usable(&path, given, "write")?;
        launch_engine::tooling::write_if_changed(&path, text.as_bytes())
            .map_err(|e| Error::Failure(anyhow::Error::new(e).context("cannot write the baseline")))?;
        eprintln!("wrote {} records to {}", current.len(), path.display());
        return Ok(used(BaselineState::Written, current.len()));
    }
    let old = match explicit {
        Some(parsed) => parsed.clone(),
        None => match read_baseline(&path, false)? {
            Some(parsed) => parsed,
            None => return Ok(used(BaselineState::Absent, 0)),
        },
    };
    let checked: Vec<String> =
        if arches.is_empty() { &p.manifest.arches } else { arches }.iter().map(|a| a.to_string()).collect();
    findings.extend(compare(p, recs, &old, &path, &checked));
    Ok(used(BaselineState::Compared, old.records.len()))
}

/// Reads and parses a baseline. A missing default file is `None` (nothing to compare); a missing
/// explicit one, an unreadable one (a folder, no permission), a non-UTF-8 or damaged one is a
/// usage error naming the path and the reason.
fn read_baseline(path: &Path, explicit: bool) -> Result<Option<baseline::Parsed>, Error> {
    use std::io::Read;
    let given = if explicit { " given with --baseline" } else { "" };
    let unreadable =
        |why: String| Error::Usage(anyhow::anyhow!("cannot read the baseline `{}`{given}: {why}", path.display()));
    if let Err(e) = usable(path, given, "read")? {
        if explicit {
            return Err(unreadable(e.to_string()));
        }
        return Ok(None);
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_BASELINE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| unreadable(e.to_string()))?;
    if bytes.len() as u64 > MAX_BASELINE_BYTES {
        return Err(unreadable(format!("larger than {} MiB, far more than any baseline", MAX_BASELINE_BYTES >> 20)));
    }
    baseline::decode(path, &bytes).map(Some).map_err(Error::Usage)
}

/// Whether a baseline's path can be read or written: `Ok(Ok(()))` for a regular file (or a link
/// to one), `Ok(Err(_))` with the system's error when nothing is there, and a usage error (exit 2)
/// for anything else: a folder, a FIFO (reading it would block), a device (`/dev/zero` never
/// ends), or a symbolic link whose target is missing (which would turn the gate off silently).
fn usable(path: &Path, given: &str, action: &str) -> Result<Result<(), std::io::Error>, Error> {
    let refuse =
        |why: String| Error::Usage(anyhow::anyhow!("cannot {action} the baseline `{}`{given}: {why}", path.display()));
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Err(e)),
        Err(e) => return Err(refuse(e.to_string())),
        Ok(_) => {}
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(Ok(())),
        Ok(m) if m.is_dir() => Err(refuse("Is a directory".into())),
        Ok(_) => Err(refuse("not a regular file".into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let target = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
            Err(refuse(format!("a symbolic link to `{target}`, which does not exist")))
        }
        Err(e) => Err(refuse(e.to_string())),
    }
}

/// Refuses a baseline path `--bless` could not write (see `destination::file`): exit 2.
fn writable_baseline(path: &Path, given: &str) -> Result<(), Error> {
    crate::destination::file(path, &format!("cannot write the baseline `{}`{given}", path.display()))
}

/// About 800,000 records: far above any crate's kernels × arches.
const MAX_BASELINE_BYTES: u64 = 64 << 20;

/// `path` from the current folder, with `.` and `..` resolved by name (the file may not exist
/// yet), so it compares with paths under the repository and prints plainly.
fn absolute(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in std::env::current_dir().unwrap_or_default().join(path).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The baseline's line `line`, shown relative to the package root when the file is inside it.
fn baseline_location(p: &PackageKernels, path: &Path, line: u32) -> Location {
    // Inside the package: from its root; elsewhere as the summary line shows it (from here).
    let file = match path.strip_prefix(p.config.root()) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => check_render::relative(path, &std::env::current_dir().unwrap_or_default()),
    };
    Location { file, line, col: 0, path: Some(path.to_path_buf()) }
}

/// A finding of a kernel rule about `r` (a kernel or tune variant on one arch), at its definition.
fn at_kernel(p: &PackageKernels, r: &Row, (severity, kind, detail): (Severity, FindingKind, Detail)) -> Finding {
    Finding {
        severity,
        kind,
        package: p.package.clone(),
        kernel: Some(r.id.display_name.clone()),
        arch: Some(r.arch()),
        location: Some(package_rules::kernel_location(p, &r.id)),
        detail,
    }
}

/// The kernel rules (`launch_analysis`) for package `p`: each of its kernels on each arch of
/// `recs` (spill findings at the top spill line with `--spills`), then each of its tune variants
/// under its kernel's settings.
fn kernel_rules(
    p: &PackageKernels,
    recs: &[&Row],
    variants: &records::Variants,
    spills: Option<&Lines>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for r in recs {
        out.extend(at_spill_line(row_findings(p, r), p, r, spills));
    }
    for (r, _) in variants.rows.iter().filter(|(r, _)| r.id.package == p.package) {
        let rules = analysis::variant_findings(&r.report, r.spill_budget);
        out.extend(rules.into_iter().map(|rule| at_kernel(p, r, rule)));
    }
    out
}

/// The baseline of `p`: `--baseline` made absolute (so that its findings are placed relative to
/// the package or the repository like any other file), else `launch-baseline.txt` beside the
/// package's Cargo.toml.
fn baseline_path(args: &CheckArgs, p: &PackageKernels) -> PathBuf {
    match &args.baseline {
        Some(b) => absolute(b),
        None => p.config.root().join(DEFAULT_BASELINE),
    }
}

/// The records as `--bless` writes them: keyed by file and symbol, which stay the same when the
/// display name changes and hold no space.
fn current_baseline(recs: &[&Row]) -> Baseline {
    recs.iter().map(|r| ((baseline::key(&r.id.file, &r.id.name), r.arch().to_string()), entry(r))).collect()
}

/// The baseline record of `r`: whether the launch works is not recorded (its occupancy is 0).
fn entry(r: &Row) -> baseline::Entry {
    baseline::Entry::of(&r.report.resources, r.report.occupancy.percent, None)
}

/// `check --spills`: the spill findings of `r` located at its top spill line (the kernel stays
/// named in the finding); unchanged without spill lines for it.
fn at_spill_line(mut found: Vec<Finding>, p: &PackageKernels, r: &Row, lines: Option<&Lines>) -> Vec<Finding> {
    let Some((file, line, path)) =
        lines.and_then(|l| l.of(r)).and_then(|s| crate::spills::top_line(p.config.root(), s))
    else {
        return found;
    };
    for f in found.iter_mut().filter(|f| f.kind == FindingKind::Spills) {
        f.location = Some(Location { file: file.clone(), line, col: 0, path: Some(path.clone()) });
    }
    found
}

/// The launch, spill and contract rules (`launch_analysis::kernel_findings`) for one kernel (or
/// tune variant) on one arch, under its spill budget (a variant's is its kernel's).
fn row_findings(p: &PackageKernels, r: &Row) -> Vec<Finding> {
    analysis::kernel_findings(&r.report, r.spill_budget).into_iter().map(|rule| at_kernel(p, r, rule)).collect()
}

/// What the baseline `old` (at `path`) says of the records `recs` of `p`: its format when old,
/// each record's regressions or absence (`launch_analysis::baseline_finding`), and its records
/// of a `checked` arch that no kernel produced. A v1/v2 baseline is matched by display name.
fn compare(p: &PackageKernels, recs: &[&Row], old: &baseline::Parsed, path: &Path, checked: &[String]) -> Vec<Finding> {
    let at = |line| baseline_location(p, path, line);
    let mut out: Vec<Finding> = package_rules::old_baseline_format(&p.package, old.version, at).into_iter().collect();
    let mut seen = BTreeSet::new();
    for r in recs {
        let kernel =
            if old.version < baseline::V3 { r.id.display_name.clone() } else { baseline::key(&r.id.file, &r.id.name) };
        let key = (kernel, r.arch().to_string());
        let worse = old.records.get(&key).map(|before| baseline::regressions(before, &entry(r)));
        out.extend(analysis::baseline_finding(worse).map(|rule| at_kernel(p, r, rule)));
        seen.insert(key);
    }
    out.extend(package_rules::not_built(&p.package, old, &seen, checked, at));
    out
}

/// Prints the findings in the chosen format and gives the verdict. `manifest`: the first
/// package's Cargo.toml (absolute), or the failed build's: where the repository root is searched
/// from, and where SARIF shows a finding about no file.
fn finish(
    args: &CheckArgs,
    manifest: Option<&Path>,
    packages: &[PackageKernels],
    records: &[Row],
    mut findings: Vec<Finding>,
    baselines: &[BaselineUse],
) -> Result<(), Error> {
    check_render::sort(&mut findings);
    let mut arches: Vec<Arch> = records.iter().map(Row::arch).collect();
    arches.sort();
    arches.dedup();
    let checked = Checked { packages, records, arches: &arches, baselines };
    let mut out = crate::stdout::stdout();
    check_render::write(&mut out, args.format, args.verbose, &findings, &checked, manifest)?;
    let env = launch_engine::tooling::Env::cli();
    if env.get(launch_engine::tooling::var::GITHUB_ACTIONS).is_some_and(|v| v == "true") {
        check_render::github_annotations(&mut out, &findings).context("writing annotations")?;
    }
    let warnings = check_render::count(&findings, Severity::Warning);
    let denied = args.deny.iter().any(|d| d == "warnings") && warnings > 0;
    if check_render::count(&findings, Severity::Error) > 0 || denied {
        return Err(Error::CheckFailed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `--baseline ../crate/b.txt` from a sibling folder names the file without `..`, so it
    /// compares with paths under the repository (SARIF) and prints plainly.
    #[test]
    fn a_baseline_path_is_made_absolute_by_name() {
        let cwd = std::env::current_dir().unwrap();
        let parent = cwd.parent().unwrap_or(&cwd).to_path_buf();
        assert_eq!(absolute(Path::new("../crate/./b.txt")), parent.join("crate/b.txt"));
        assert_eq!(absolute(Path::new("/x/y/../z")), PathBuf::from("/x/z"));
    }
}

#[cfg(test)]
mod grouping {
    use super::*;
    use crate::output::check::{finding_line, sort, text_lines};
    use crate::records::testing;

    fn findings(n: usize, arches: &[&str]) -> Vec<Finding> {
        let dir = tempfile::tempdir().unwrap();
        let p = testing::package(dir.path(), n, arches, &[]);
        let recs = records::rows(std::slice::from_ref(&p), &[]).unwrap();
        let mut f: Vec<Finding> = recs.iter().flat_map(|r| row_findings(&p, r)).collect();
        sort(&mut f);
        f
    }

    /// A tune variant is checked like a kernel on the arches it is embedded for (its findings
    /// name it, under its kernel's spill budget); an arch it was refused on is a note naming the
    /// variant, its contract, its kernel and why, which fails nothing by itself.
    #[test]
    fn tune_variants_are_checked_and_a_refused_one_is_a_note() {
        use launch_schema::manifest::{KernelArch, RefusedArch, VariantEntry};
        let dir = tempfile::tempdir().unwrap();
        let mut p = testing::package(dir.path(), 1, &["sm_75", "sm_90"], &[]);
        let arch = |a: &str| a.parse::<Arch>().unwrap();
        let contract = launch::Contract {
            source: launch::ContractSource::LaunchBounds,
            threads: Some(128),
            min_blocks: None,
            max_regs: Some(32),
            exact: false,
        };
        let spilling = launch::Resources { registers: 32, spill_stores: 8, spill_loads: 8, ..Default::default() };
        p.manifest.kernels[0].variants = vec![VariantEntry {
            name: "k00__t128_r32".into(),
            contract,
            module: None,
            arches: vec![KernelArch {
                arch: arch("sm_90"),
                resources: spilling,
                ptxas_lines: Vec::new(),
                dynamic_stack: None,
                contract: None,
            }],
            refused: vec![RefusedArch {
                arch: arch("sm_75"),
                reason: "cannot launch at 128 threads: too much shared memory".into(),
                resources: spilling,
            }],
        }];
        let v = records::variants(std::slice::from_ref(&p), &[]).unwrap();
        assert_eq!((v.rows.len(), v.refused.len()), (1, 1));
        let (row, _) = &v.rows[0];
        let f = row_findings(&p, row);
        let lines: Vec<String> = f.iter().map(finding_line).collect();
        assert!(
            lines.iter().any(|l| l
                == "warning[spills]: kernels/many.cu:10: k00__t128_r32 on sm_90: 8 bytes spill stores + 8 bytes spill loads = 16 bytes; no max-spill-bytes budget set"),
            "{lines:#?}"
        );
        let note = package_rules::refused_variant(&p, &v.refused[0]);
        assert_eq!(note.severity, Severity::Note);
        assert_eq!(
            finding_line(&note),
            "note[launch]: kernels/many.cu:10: tune variant k00__t128_r32 (__launch_bounds__(128) __maxnreg__(32)) of k00 is not embedded for sm_75: cannot launch at 128 threads: too much shared memory"
        );
        // --arch limits them as it limits kernels.
        let only = records::variants(std::slice::from_ref(&p), &[arch("sm_90")]).unwrap();
        assert_eq!((only.rows.len(), only.refused.len()), (1, 0));
    }

    #[test]
    fn many_findings_of_one_kind_are_one_line_and_verbose_lists_all() {
        let f = findings(30, &["sm_90", "sm_100"]);
        let lines = text_lines(&f, false);
        assert_eq!(
            lines[0],
            "warning[unbounded]: 30 kernels × 2 arches have no launch contract (first: k00, k01, k02, …); --verbose lists all",
            "60 unbounded findings are one line, where the first was: {lines:#?}"
        );
        assert_eq!(
            lines[1],
            "warning[spills]: kernels/many.cu:16: k06 on sm_90: 4 bytes spill stores + 4 bytes spill loads = 8 bytes; no max-spill-bytes budget set",
            "8 spill findings are listed one by one: {lines:#?}"
        );
        assert_eq!(lines.len(), 8 + 1, "{lines:#?}");
        assert_eq!(lines.iter().filter(|l| l.starts_with("warning[unbounded]")).count(), 1);
        let all = text_lines(&f, true);
        assert_eq!(all.len(), 68);
        assert!(all.contains(&"warning[unbounded]: kernels/many.cu:39: k29 on sm_100: no launch contract: checked at the host block size 256; the largest block that launches is 1024".to_string()), "{all:#?}");
    }

    #[test]
    fn few_findings_stay_one_line_each_and_arches_sort_by_number() {
        let f = findings(3, &["sm_100", "sm_90"]);
        let lines = text_lines(&f, false);
        assert_eq!(lines.len(), 6);
        assert!(lines[0].contains("k00 on sm_90:"), "sm_90 before sm_100: {lines:#?}");
        assert!(lines[1].contains("k00 on sm_100:"), "{lines:#?}");
    }
}

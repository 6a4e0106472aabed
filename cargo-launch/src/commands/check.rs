//! `cargo launch check`: the CI gate. Compiles every kernel for the requested arches (no GPU) and
//! fails where a launch would fail (error 701), where spills exceed the budget, where resources
//! regressed against the committed baseline, or where the toolchain cannot target an arch.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use launch::analysis::{kernel_findings, Detail, Finding, FindingKind, Location, Severity};
use launch::schema::check::{BaselineState, BaselineUse, Document, FindingRecord, VERSION};
use launch::schema::report::Toolchain;
use launch::Arch;

use crate::baseline::{self, Baseline};
use crate::cargo;
use crate::cli::{CheckArgs, CheckFormat};
use crate::error::{BuildFailure, Error};
use crate::output::sarif;
use crate::records::{self, PackageKernels, Row};
use crate::toolchain;

/// Runs `cargo launch check`.
pub fn run(args: &CheckArgs) -> Result<(), Error> {
    // A baseline named on the command line must be readable and well-formed before anything is
    // built: a typo in its path would otherwise turn the regression gate off without a word.
    let explicit = match (&args.baseline, args.bless) {
        (Some(path), false) => Some(read_baseline(path, true)?.expect("an explicit baseline is read or an error")),
        // A path --bless cannot write to (a folder, a FIFO) is refused before building too.
        (Some(path), true) => {
            // Absent is fine: --bless creates it.
            let _absent = usable(path, " given with --baseline", "write")?;
            None
        }
        _ => None,
    };
    let pins = toolchain::ensure_toolchain(args.no_setup, &args.packages)?;
    let mut findings = Vec::new();

    // Arches the toolchain cannot target are findings, not a failed build; the rest is checked.
    let mut arches = Vec::new();
    if !args.arch.is_empty() {
        let supported = toolchain::supported_arches(&pins)?;
        let (ok, bad): (Vec<Arch>, Vec<Arch>) =
            cargo::sorted(&args.arch).into_iter().partition(|a| supported.is_empty() || supported.contains(&a.sm()));
        for a in bad {
            findings.push(Finding {
                severity: Severity::Error,
                kind: FindingKind::Arch,
                package: String::new(),
                kernel: None,
                arch: Some(a),
                location: None,
                detail: Detail::Text(format!(
                    "the toolchain cannot target {a}; it supports: {}",
                    supported.iter().map(|c| format!("sm_{c}")).collect::<Vec<_>>().join(", ")
                )),
            });
        }
        if ok.is_empty() {
            // Nothing is built: the manifest named on the command line (or here) stands for the package.
            let manifest = absolute(args.packages.manifest_path.as_deref().unwrap_or(Path::new("Cargo.toml")));
            return finish(args, Some(&manifest), &[], &[], findings, Vec::new(), &[]);
        }
        arches = ok;
    }

    let packages = match cargo::build(&args.packages, &arches) {
        Ok(packages) => packages,
        // The kernels did not build: their located errors are findings too (placed in SARIF and
        // in annotations), then the exit code is the failed build's.
        // (A failure located nowhere, such as a bad environment variable, is cargo's output alone.)
        Err(Error::Build { error, failures }) if failures.iter().any(|f| !f.diagnostics.is_empty()) => {
            findings.extend(failures.iter().flat_map(compile_findings));
            let manifest = failures.first().map(|f| f.root.join("Cargo.toml"));
            let _verdict = finish(args, manifest.as_deref(), &[], &[], findings, Vec::new(), &[]);
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
    let mut baselines = Vec::new();
    for p in &packages {
        let recs: Vec<&Row> = records.iter().filter(|r| r.id.package == p.package).collect();
        for r in &recs {
            findings.extend(at_spill_line(row_findings(p, r, &r.id), p, r, spill_lines.as_ref()));
        }
        for (r, kernel) in variants.rows.iter().filter(|(r, _)| r.id.package == p.package) {
            findings.extend(row_findings(p, r, kernel).into_iter().map(variant_severity));
        }
        findings.extend(variants.refused.iter().filter(|r| r.id.package == p.package).map(|r| refused(p, r)));
        findings.extend(unknown_kernel_settings(p));
        findings.extend(crate::compat_check::findings(p));
        if p.manifest.kernels.is_empty() {
            findings.push(no_kernels(p));
        }
        let path = baseline_path(args, p);
        let current = current_baseline(&recs);
        let mut used = |state: BaselineState, records| {
            baselines.push(BaselineUse { package: p.package.clone(), path: path.clone(), state, records })
        };
        if args.bless {
            let text = baseline::render(&current);
            // The writer reads the old file to skip an unchanged write: a FIFO there would block
            // it forever, so the path must be a regular file or nothing (exit 2 otherwise); a
            // failure while writing (a read-only file system) is exit 4, whoever named the path.
            let given = if args.baseline.is_some() { " given with --baseline" } else { "" };
            let _absent = usable(&path, given, "write")?;
            launch_build::tooling::write_if_changed(&path, text.as_bytes())
                .map_err(|e| Error::Failure(anyhow::Error::new(e).context("cannot write the baseline")))?;
            eprintln!("wrote {} records to {}", current.len(), path.display());
            used(BaselineState::Written, current.len());
            continue;
        }
        let old = match &explicit {
            Some(parsed) => Some(parsed.clone()),
            None => read_baseline(&path, false)?,
        };
        match old {
            Some(old) => {
                if old.version < baseline::VERSION {
                    findings.push(old_format(p, &path, old.version));
                }
                let checked: Vec<String> = if arches.is_empty() { &p.manifest.arches } else { &arches }
                    .iter()
                    .map(|a| a.to_string())
                    .collect();
                findings.extend(compare(p, &recs, &old, &path, &checked));
                used(BaselineState::Compared, old.records.len());
            }
            None => used(BaselineState::Absent, 0),
        }
    }
    let arches: Vec<Arch> = {
        let mut a: Vec<Arch> = records.iter().map(Row::arch).collect();
        a.sort();
        a.dedup();
        a
    };
    let manifest = packages.first().map(|p| p.config.manifest_path.clone());
    finish(args, manifest.as_deref(), &packages, &records, findings, arches, &baselines)
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

/// About 800,000 records: far above any crate's kernels × arches.
const MAX_BASELINE_BYTES: u64 = 64 << 20;

/// The errors a failed build script wrote, as findings at their lines.
fn compile_findings(failure: &BuildFailure) -> Vec<Finding> {
    failure
        .diagnostics
        .iter()
        .map(|d| Finding {
            severity: d.severity,
            kind: FindingKind::Compile,
            package: failure.package.clone(),
            kernel: None,
            arch: None,
            location: Some(Location {
                file: d.file.clone(),
                line: d.line,
                col: d.col,
                path: Some(failure.root.join(&d.file)),
            }),
            detail: Detail::Text(match &d.tool {
                Some(tool) => format!("{} ({tool})", d.message),
                None => d.message.clone(),
            }),
        })
        .collect()
}

/// A package whose kernel folder holds no kernel: the gate would pass having checked nothing.
/// Shown on the package's manifest, which says where the kernels are (`kernels`).
fn no_kernels(p: &PackageKernels) -> Finding {
    let dir = p.config.kernel_dir.display().to_string();
    let files = p.manifest.modules.len();
    let why = if files == 0 {
        format!("no .cu file in {dir}/")
    } else {
        format!("no kernel in the {files} .cu file{} of {dir}/", if files == 1 { "" } else { "s" })
    };
    Finding {
        severity: Severity::Warning,
        kind: FindingKind::Empty,
        package: p.package.clone(),
        kernel: None,
        arch: None,
        location: Some(manifest_location(p)),
        detail: Detail::Text(format!("nothing to check in package `{}`: {why}", p.package)),
    }
}

/// A version-1 or -2 baseline: compared by display name, which changes when a kernel's name
/// becomes ambiguous; v1 cannot even tell a cut-short file from removed kernels.
fn old_format(p: &PackageKernels, path: &Path, version: u32) -> Finding {
    let why = if version < baseline::V2 {
        "has no record count, so a truncated file cannot be detected"
    } else {
        "keys kernels by display name, which changes when another file defines a kernel of the same name"
    };
    Finding {
        severity: Severity::Warning,
        kind: FindingKind::Baseline,
        package: p.package.clone(),
        kernel: None,
        arch: None,
        location: Some(baseline_location(p, path, 1)),
        detail: Detail::Text(format!(
            "baseline format v{version} {why}; re-bless with `cargo launch check --bless` to write format v{}",
            baseline::VERSION
        )),
    }
}

/// A line of the baseline file, shown relative to the package root when it is inside.
fn baseline_location(p: &PackageKernels, path: &Path, line: u32) -> Location {
    // Inside the package: from its root; elsewhere as the summary line shows it (from here).
    let file = match path.strip_prefix(p.config.root()) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => relative(path, &std::env::current_dir().unwrap_or_default()),
    };
    Location { file, line, col: 0, path: Some(path.to_path_buf()) }
}

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

/// The package's `Cargo.toml`, as a whole.
fn manifest_location(p: &PackageKernels) -> Location {
    Location { file: "Cargo.toml".into(), line: 0, col: 0, path: Some(p.config.manifest_path.clone()) }
}

/// `[package.metadata.launch.kernel.<name>]` tables whose name matches no kernel (a typo would
/// otherwise silently drop a spill budget or a dynamic shared-memory size).
fn unknown_kernel_settings(p: &PackageKernels) -> Vec<Finding> {
    records::unknown_kernel_settings(&p.config, &p.manifest)
        .into_iter()
        .map(|message| Finding {
            severity: Severity::Warning,
            kind: FindingKind::Config,
            package: p.package.clone(),
            kernel: None,
            arch: None,
            location: Some(manifest_location(p)),
            detail: Detail::Text(message),
        })
        .collect()
}

/// The baseline of `p`: `--baseline` made absolute (so that its findings are placed relative to
/// the package or the repository like any other file), else `launch-baseline.txt` beside the
/// package's Cargo.toml.
fn baseline_path(args: &CheckArgs, p: &PackageKernels) -> PathBuf {
    match &args.baseline {
        Some(b) => absolute(b),
        None => p.config.root().join("launch-baseline.txt"),
    }
}

/// The records as `--bless` writes them: keyed by file and symbol, which stay the same when the
/// display name changes and hold no space.
fn current_baseline(recs: &[&Row]) -> Baseline {
    recs.iter().map(|r| ((baseline::key(&r.id.file, &r.id.name), r.arch().to_string()), entry(r))).collect()
}

fn entry(r: &Row) -> baseline::Entry {
    let res = &r.report.resources;
    baseline::Entry {
        registers: res.registers,
        spill_bytes: r.spill_bytes(),
        stack: res.stack_frame,
        shared: res.shared_static,
        occupancy: r.report.occupancy.percent,
    }
}

/// A finding about the kernel of `r` on its arch, at its definition.
fn finding(p: &PackageKernels, r: &Row, severity: Severity, kind: FindingKind, detail: Detail) -> Finding {
    Finding {
        severity,
        kind,
        package: p.package.clone(),
        kernel: Some(r.id.display_name.clone()),
        arch: Some(r.arch()),
        location: Some(Location {
            file: r.id.file.clone(),
            line: r.id.line,
            col: 0,
            path: Some(p.config.root().join(&r.id.file)),
        }),
        detail,
    }
}

/// `check --spills`: the spill findings of `r` located at its top spill line (the kernel stays
/// named in the finding); unchanged without spill lines for it.
fn at_spill_line(
    mut found: Vec<Finding>,
    p: &PackageKernels,
    r: &Row,
    lines: Option<&crate::spills::Lines>,
) -> Vec<Finding> {
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

/// A tune variant the build did not embed for an arch: a note, not an error. The build already
/// kept it off that arch, so no launch can fail there (the runtime finds no image of it, and the
/// tuner skips it); a grid spanning arches of different sizes meets this as a matter of course,
/// so it must not fail `check` (nor `--deny warnings`), yet the reader learns which points of the
/// grid exist where.
fn refused(p: &PackageKernels, r: &records::Refused) -> Finding {
    Finding {
        severity: Severity::Note,
        kind: FindingKind::Launch,
        package: p.package.clone(),
        kernel: Some(r.id.display_name.clone()),
        arch: Some(r.arch),
        location: Some(Location {
            file: r.id.file.clone(),
            line: r.id.line,
            col: 0,
            path: Some(p.config.root().join(&r.id.file)),
        }),
        detail: Detail::Text(format!(
            "tune variant {} ({}) of {} is not embedded for {}: {}",
            r.id.display_name, r.contract, r.kernel, r.arch, r.reason
        )),
    }
}

/// A tune variant's warning is a note: a grid trades spills and register caps for occupancy on
/// purpose, and the tuner measures which wins; its errors (a launch that fails, a spill budget
/// exceeded) stay errors, since the program may launch any variant.
fn variant_severity(mut f: Finding) -> Finding {
    if f.severity == Severity::Warning {
        f.severity = Severity::Note;
    }
    f
}

/// The launch, spill and contract rules (`launch::analysis::kernel_findings`) for one kernel (or
/// tune variant) on one arch, under the settings of `kernel` (the variant's kernel's).
fn row_findings(p: &PackageKernels, r: &Row, kernel: &launch::schema::report::KernelId) -> Vec<Finding> {
    kernel_findings(&r.report, records::spill_budget(&p.config, kernel))
        .into_iter()
        .map(|(severity, kind, detail)| finding(p, r, severity, kind, detail))
        .collect()
}

/// Regressions against the baseline (errors), records it lacks (notes), and its records of a
/// checked arch that no kernel produced (warnings: a renamed, moved or removed kernel would
/// otherwise leave the gate without a word). A v1/v2 baseline is matched by display name.
fn compare(p: &PackageKernels, recs: &[&Row], old: &baseline::Parsed, path: &Path, checked: &[String]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in recs {
        let kernel = if old.version < baseline::VERSION {
            r.id.display_name.clone()
        } else {
            baseline::key(&r.id.file, &r.id.name)
        };
        let key = (kernel, r.arch().to_string());
        match old.records.get(&key) {
            Some(before) => {
                let worse = baseline::regressions(before, &entry(r));
                if !worse.is_empty() {
                    out.push(finding(
                        p,
                        r,
                        Severity::Error,
                        FindingKind::Regression,
                        Detail::Regression { changes: worse },
                    ));
                }
            }
            None => out.push(finding(p, r, Severity::Note, FindingKind::New, Detail::NotInBaseline)),
        }
        seen.insert(key);
    }
    for (key, line) in &old.lines {
        if seen.contains(key) || !checked.contains(&key.1) {
            continue;
        }
        let (kernel, arch) = key;
        // `kernels/t.cu::_Z4tmplILi8EEvPi` says little to a reader: add what it demangles to.
        let symbol = kernel.rsplit("::").next().unwrap_or(kernel);
        let readable = launch_build::tooling::demangle(symbol);
        let shown = if old.version == baseline::VERSION && readable != symbol {
            format!("{kernel} ({readable})")
        } else {
            kernel.clone()
        };
        out.push(Finding {
            severity: Severity::Warning,
            kind: FindingKind::Baseline,
            package: p.package.clone(),
            kernel: Some(kernel.clone()),
            arch: arch.parse().ok(),
            location: Some(baseline_location(p, path, u32::try_from(*line).unwrap_or(u32::MAX))),
            detail: Detail::Text(format!(
                "{shown} {arch} is in the baseline but was not built (renamed, removed or moved?); re-bless with \
                 `cargo launch check --bless` if intended"
            )),
        });
    }
    out
}

/// Prints the findings in the chosen format and gives the verdict. `start` is the first package's
/// folder (or the failed build's), where the search for the repository root begins (SARIF).
/// `manifest`: the first package's Cargo.toml (absolute): where the repository root is searched
/// from, and where SARIF shows a finding about no file.
fn finish(
    args: &CheckArgs,
    manifest: Option<&Path>,
    packages: &[PackageKernels],
    records: &[Row],
    mut findings: Vec<Finding>,
    arches: Vec<Arch>,
    baselines: &[BaselineUse],
) -> Result<(), Error> {
    sort(&mut findings);
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = findings.iter().filter(|f| f.severity == Severity::Warning).count();
    let kernels: usize = packages.iter().map(|p| p.manifest.kernels.len()).sum();
    let tuned: usize = packages.iter().flat_map(|p| &p.manifest.kernels).map(|k| k.variants.len()).sum();
    let mut out = std::io::stdout().lock();
    match args.format {
        CheckFormat::Sarif => {
            let root = repository_root(manifest.and_then(Path::parent));
            let fallback = manifest.and_then(|m| sarif::relative_uri(&root, m)).unwrap_or_else(|| "Cargo.toml".into());
            let log = sarif_log(&findings, &root, &fallback);
            sarif::write(&mut out, &log).context("writing SARIF")?;
        }
        CheckFormat::Json => {
            let toolchain = packages.first().map(|p| Toolchain {
                nvrtc: p.manifest.toolchain.nvrtc.clone(),
                ptxas: p.manifest.toolchain.ptxas.clone(),
            });
            let doc = Document {
                schema: VERSION,
                toolchain,
                kernels,
                arches: arches.clone(),
                errors,
                warnings,
                baselines: baselines.to_vec(),
                findings: findings.iter().map(FindingRecord::from).collect(),
            };
            serde_json::to_writer_pretty(&mut out, &doc).context("writing JSON")?;
            writeln!(out).context("writing JSON")?;
        }
        CheckFormat::Text => {
            for line in text_lines(&findings, args.verbose) {
                writeln!(out, "{line}").context("writing the report")?;
            }
            let counts = format!(
                "{errors} error{}, {warnings} warning{}",
                if errors == 1 { "" } else { "s" },
                if warnings == 1 { "" } else { "s" }
            );
            let built = !findings.iter().any(|f| f.kind == FindingKind::Compile);
            let checked = if !built {
                "the kernels did not build".to_string()
            } else if records.is_empty() {
                let why = if packages.is_empty() {
                    "the toolchain can target none of the requested arches".to_string()
                } else {
                    let dirs: Vec<String> =
                        packages.iter().map(|p| format!("{}/", p.config.kernel_dir.display())).collect();
                    format!("no kernels found in {}", dirs.join(", "))
                };
                format!("nothing to check: {why}")
            } else {
                let names: Vec<String> = arches.iter().map(Arch::to_string).collect();
                let variants = if tuned > 0 { format!(" (+ {tuned} tune variants)") } else { String::new() };
                format!("checked {kernels} kernels{variants} × {} arches ({})", arches.len(), names.join(", "))
            };
            writeln!(out, "{checked}: {counts}{}", baseline_summary(baselines)).context("writing the report")?;
        }
    }
    #[allow(clippy::disallowed_methods)] // a CI switch, not a build input
    if std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true") {
        github_annotations(&mut out, &findings).context("writing annotations")?;
    }
    let denied = args.deny.iter().any(|d| d == "warnings") && warnings > 0;
    if errors > 0 || denied {
        return Err(Error::CheckFailed);
    }
    Ok(())
}

/// The folder SARIF paths are relative to: the nearest folder holding `.git` above `start` (GitHub
/// resolves `%SRCROOT%` to the repository's checkout, which may hold the workspace in a
/// subfolder); outside a repository, the current directory when `start` is inside it (a workspace
/// checked from its root), else `start` itself, so that the package's files are inside the root.
fn repository_root(start: Option<&Path>) -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    let start = start.unwrap_or(&cwd);
    match start.ancestors().find(|d| d.join(".git").exists()) {
        Some(repo) => repo.to_path_buf(),
        None if start.starts_with(&cwd) => cwd,
        None => start.to_path_buf(),
    }
}

/// The findings as a SARIF log, their files relative to `root`. A finding about no file (an
/// arch the toolchain cannot target) or about one outside `root` is shown on `fallback` (the first
/// package's manifest relative to `root`, else `Cargo.toml`), as a whole file: GitHub refuses a
/// result without a location, and its line would point into another file.
fn sarif_log(findings: &[Finding], root: &Path, fallback: &str) -> sarif::Log {
    let messages: Vec<String> = findings.iter().map(Finding::message).collect();
    let arches: Vec<Option<String>> = findings.iter().map(|f| f.arch.map(|a| a.to_string())).collect();
    let alerts: Vec<sarif::Alert> = findings
        .iter()
        .zip(messages.iter().zip(&arches))
        .map(|(f, (message, arch))| {
            let placed = f.location.as_ref().and_then(|l| l.path.as_deref()).and_then(|p| sarif::relative_uri(root, p));
            let (uri, line, col) = match placed {
                Some(uri) => (uri, f.line(), f.col()),
                None => (fallback.to_string(), 0, 0),
            };
            sarif::Alert {
                kind: f.kind,
                level: f.severity,
                message,
                uri,
                line,
                col,
                package: &f.package,
                kernel: f.kernel.as_deref(),
                arch: arch.as_deref(),
            }
        })
        .collect();
    sarif::document(&alerts, env!("CARGO_PKG_VERSION"), Some(root))
}

/// Above this many findings of one severity and kind, the text form prints one line for them
/// (`--verbose` lists all).
pub const GROUP_ABOVE: usize = 10;

/// Names listed in a grouped line.
const FIRST_NAMES: usize = 3;

/// Most severe first, then by package, file, line, column and arch (by number: sm_90 before sm_100).
fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        (a.severity, &a.package, a.file(), a.line(), a.col(), a.arch).cmp(&(
            b.severity,
            &b.package,
            b.file(),
            b.line(),
            b.col(),
            b.arch,
        ))
    });
}

/// One finding as a line: `warning[kind]: file:line: message` (`file:line:col` where the column
/// is known, `file` alone where the line is not).
pub fn finding_line(f: &Finding) -> String {
    let loc = match &f.location {
        Some(l) if l.line == 0 => format!("{}: ", l.file),
        Some(l) if l.col == 0 => format!("{}:{}: ", l.file, l.line),
        Some(l) => format!("{}:{}:{}: ", l.file, l.line, l.col),
        None => String::new(),
    };
    format!("{}[{}]: {loc}{}", f.severity.name(), f.kind, f.message())
}

/// The text lines for `findings` (sorted): every finding when `verbose`; otherwise a severity
/// and kind with more than [`GROUP_ABOVE`] findings about kernels becomes one line, where its
/// first finding was, with the count and the first names (an error group also shows its first
/// finding in full, for the arithmetic).
pub fn text_lines(findings: &[Finding], verbose: bool) -> Vec<String> {
    use std::collections::BTreeMap;
    let mut count: BTreeMap<(Severity, FindingKind), usize> = BTreeMap::new();
    for f in findings.iter().filter(|f| f.kernel.is_some()) {
        *count.entry((f.severity, f.kind)).or_default() += 1;
    }
    let grouped = |f: &Finding| {
        !verbose && f.kernel.is_some() && count.get(&(f.severity, f.kind)).is_some_and(|&n| n > GROUP_ABOVE)
    };
    let mut out = Vec::new();
    let mut done: std::collections::BTreeSet<(Severity, FindingKind)> = Default::default();
    for f in findings {
        if !grouped(f) {
            out.push(finding_line(f));
            continue;
        }
        if !done.insert((f.severity, f.kind)) {
            continue;
        }
        let members: Vec<&Finding> =
            findings.iter().filter(|g| g.kernel.is_some() && g.severity == f.severity && g.kind == f.kind).collect();
        if f.severity == Severity::Error {
            out.push(finding_line(f));
        }
        out.push(group_line(&members));
    }
    out
}

/// `warning[unbounded]: 748 kernels × 2 arches have no launch contract (first: a, b, c, …); --verbose lists all`.
fn group_line(members: &[&Finding]) -> String {
    let first = members[0];
    let mut names: Vec<&str> = Vec::new();
    let mut kernels = std::collections::BTreeSet::new();
    let mut arches = std::collections::BTreeSet::new();
    for f in members {
        let name = f.kernel.as_deref().unwrap_or_default();
        // The package and file tell apart kernels of one name in several files.
        if kernels.insert((&f.package, f.file(), name)) && names.len() <= FIRST_NAMES && !names.contains(&name) {
            names.push(name);
        }
        arches.insert(f.arch);
    }
    let more = kernels.len() > FIRST_NAMES;
    names.truncate(FIRST_NAMES);
    let plural =
        |n: usize, one: &str, many: &str| format!("{} {}", crate::words::thousands(n), if n == 1 { one } else { many });
    let who = if kernels.len() * arches.len() == members.len() {
        format!("{} × {}", plural(kernels.len(), "kernel", "kernels"), plural(arches.len(), "arch", "arches"))
    } else {
        format!(
            "{} ({})",
            plural(members.len(), "kernel × arch record", "kernel × arch records"),
            plural(kernels.len(), "kernel", "kernels")
        )
    };
    let what = match (first.kind, first.severity) {
        (FindingKind::Unbounded, _) => "have no launch contract".to_string(),
        (FindingKind::Spills, Severity::Error) => "spill more than their max-spill-bytes budget".to_string(),
        (FindingKind::Spills, _) => "spill with no max-spill-bytes budget set".to_string(),
        (FindingKind::Launch, _) => "cannot launch at their block size".to_string(),
        (FindingKind::Regression, _) => "regressed since the baseline".to_string(),
        (FindingKind::New, _) => "are not in the baseline (`cargo launch check --bless` records them)".to_string(),
        (FindingKind::Baseline, _) => "are in the baseline but were not built (renamed, removed or moved?)".to_string(),
        (FindingKind::Contract, _) => "ask for what the arch does not give (ptxas ignores or overrides it)".to_string(),
        (FindingKind::MaxRegs, _) => "have a register cap that forces spills".to_string(),
        (kind, _) => format!("have `{kind}` findings"),
    };
    format!(
        "{}[{}]: {who} {what} (first: {}{}); --verbose lists all",
        first.severity.name(),
        first.kind,
        names.join(", "),
        if more { ", …" } else { "" }
    )
}

/// `; baseline ...` for the summary line: what was compared, written, or that nothing was.
fn baseline_summary(baselines: &[BaselineUse]) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let parts: Vec<String> = baselines
        .iter()
        .map(|b| {
            let path = relative(&b.path, &cwd);
            match b.state {
                BaselineState::Compared => format!("compared against {path} ({} records)", b.records),
                BaselineState::Written => format!("baseline {path} written ({} records)", b.records),
                BaselineState::Absent => {
                    format!("no baseline compared ({path} not found; `cargo launch check --bless` writes it)")
                }
            }
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join("; "))
    }
}

/// `::error file=...,line=...,title=...::message` lines that GitHub Actions turns into annotations.
fn github_annotations(out: &mut impl Write, findings: &[Finding]) -> std::io::Result<()> {
    let cwd = std::env::current_dir().unwrap_or_default();
    for f in findings {
        let level = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let mut props = Vec::new();
        if let Some(Location { path: Some(p), line, col, .. }) = &f.location {
            props.push(format!("file={}", escape_property(&relative(p, &cwd))));
            if *line > 0 {
                props.push(format!("line={line}"));
                if *col > 0 {
                    props.push(format!("col={col}"));
                }
            }
        }
        props.push(format!("title={}", escape_property(&format!("cargo launch check: {}", f.kind))));
        writeln!(out, "::{level} {}::{}", props.join(","), escape_data(&f.message()))?;
    }
    Ok(())
}

fn relative(p: &Path, base: &Path) -> String {
    p.strip_prefix(base).unwrap_or(p).display().to_string()
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
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

    #[test]
    fn annotation_text_is_escaped_as_github_documents() {
        assert_eq!(escape_data("a%b\nc"), "a%25b%0Ac");
        assert_eq!(escape_property("check: x,y"), "check%3A x%2Cy");
    }

    fn at(path: &str, line: u32, col: u32) -> Finding {
        Finding {
            severity: Severity::Error,
            kind: FindingKind::Compile,
            package: "demo".into(),
            kernel: None,
            arch: None,
            location: Some(Location { file: "kernels/a.cu".into(), line, col, path: Some(PathBuf::from(path)) }),
            detail: Detail::Text("bad".into()),
        }
    }

    #[test]
    fn sarif_places_a_finding_outside_the_root_or_about_no_file_on_the_fallback_without_a_line() {
        let root = Path::new("/repo");
        let nowhere = Finding { location: None, ..at("/repo/x", 0, 0) };
        let findings = [at("/repo/crate/kernels/a.cu", 3, 7), at("/elsewhere/b.txt", 5, 2), nowhere];
        let log = sarif_log(&findings, root, "crate/Cargo.toml");
        let places: Vec<(&str, Option<&sarif::Region>)> = log.runs[0]
            .results
            .iter()
            .map(|r| {
                (
                    r.locations[0].physical_location.artifact_location.uri.as_str(),
                    r.locations[0].physical_location.region.as_ref(),
                )
            })
            .collect();
        let region = sarif::Region { start_line: 3, start_column: Some(7) };
        assert_eq!(
            places,
            [("crate/kernels/a.cu", Some(&region)), ("crate/Cargo.toml", None), ("crate/Cargo.toml", None)]
        );
    }

    #[test]
    fn the_text_line_shows_the_column_where_it_is_known() {
        assert_eq!(finding_line(&at("/r/kernels/a.cu", 3, 7)), "error[compile]: kernels/a.cu:3:7: bad");
        assert_eq!(finding_line(&at("/r/kernels/a.cu", 3, 0)), "error[compile]: kernels/a.cu:3: bad");
        assert_eq!(finding_line(&at("/r/kernels/a.cu", 0, 7)), "error[compile]: kernels/a.cu: bad");
    }

    #[test]
    fn the_repository_root_holds_the_package_even_outside_a_repository() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("crate");
        std::fs::create_dir_all(&package).unwrap();
        assert_eq!(repository_root(Some(&package)), package, "no .git above a folder outside the current one");
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert_eq!(repository_root(Some(&package)), dir.path());
    }
}

#[cfg(test)]
mod grouping {
    use super::*;
    use crate::records::testing;

    fn findings(n: usize, arches: &[&str]) -> Vec<Finding> {
        let dir = tempfile::tempdir().unwrap();
        let p = testing::package(dir.path(), n, arches, &[]);
        let recs = records::rows(std::slice::from_ref(&p), &[]).unwrap();
        let mut f: Vec<Finding> = recs.iter().flat_map(|r| row_findings(&p, r, &r.id)).collect();
        sort(&mut f);
        f
    }

    /// A tune variant is checked like a kernel on the arches it is embedded for (its findings
    /// name it, under its kernel's spill budget); an arch it was refused on is a note naming the
    /// variant, its contract, its kernel and why, which fails nothing by itself.
    #[test]
    fn tune_variants_are_checked_and_a_refused_one_is_a_note() {
        use launch_build::manifest::{KernelArch, RefusedArch, VariantEntry};
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
            arches: vec![KernelArch { arch: arch("sm_90"), resources: spilling, ptxas_lines: Vec::new() }],
            refused: vec![RefusedArch {
                arch: arch("sm_75"),
                reason: "cannot launch at 128 threads: too much shared memory".into(),
                resources: spilling,
            }],
        }];
        let v = records::variants(std::slice::from_ref(&p), &[]).unwrap();
        assert_eq!((v.rows.len(), v.refused.len()), (1, 1));
        let (row, kernel) = &v.rows[0];
        let f = row_findings(&p, row, kernel);
        let lines: Vec<String> = f.iter().map(finding_line).collect();
        assert!(
            lines.iter().any(|l| l
                == "warning[spills]: kernels/many.cu:10: k00__t128_r32 on sm_90: 8 bytes spill stores + 8 bytes spill loads = 16 bytes; no max-spill-bytes budget set"),
            "{lines:#?}"
        );
        let note = refused(&p, &v.refused[0]);
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

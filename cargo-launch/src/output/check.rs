//! What `cargo launch check` prints: its findings as text lines (many of one kind grouped into
//! one), the summary line, the JSON document, SARIF, and GitHub Actions annotations.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use launch::Arch;
use launch_analysis::{Finding, FindingKind, Location, Severity};
use launch_schema::check::{BaselineState, BaselineUse, Document, FindingRecord, VERSION};

use crate::cli::CheckFormat;
use crate::output::{names, sarif};
use crate::records::{PackageKernels, Row};

/// What was checked, for the JSON document and the summary line.
pub struct Checked<'a> {
    /// The packages built (none when the build failed or no arch could be targeted).
    pub packages: &'a [PackageKernels],
    /// Their kernels × arches.
    pub records: &'a [Row],
    /// The arches of the records.
    pub arches: &'a [Arch],
    /// What was done with each package's baseline.
    pub baselines: &'a [BaselineUse],
}

/// Writes `findings` (sorted) to `out` in `format` (text: grouped unless `verbose`). `manifest`:
/// the first package's Cargo.toml (absolute): where the repository root is searched from, and
/// where SARIF shows a finding about no file.
pub fn write(
    out: &mut impl Write,
    format: CheckFormat,
    verbose: bool,
    findings: &[Finding],
    checked: &Checked,
    manifest: Option<&Path>,
) -> anyhow::Result<()> {
    match format {
        CheckFormat::Sarif => {
            let root = repository_root(manifest.and_then(Path::parent));
            let fallback = manifest.and_then(|m| sarif::relative_uri(&root, m)).unwrap_or_else(|| "Cargo.toml".into());
            let log = sarif_log(findings, &root, &fallback);
            sarif::write(out, &log).context("writing SARIF")
        }
        CheckFormat::Json => {
            let doc = Document {
                schema: VERSION,
                toolchain: checked.packages.first().map(|p| p.manifest.toolchain.compilers.clone()),
                kernels: kernels(checked.packages),
                arches: checked.arches.to_vec(),
                errors: count(findings, Severity::Error),
                warnings: count(findings, Severity::Warning),
                baselines: checked.baselines.to_vec(),
                findings: findings.iter().map(FindingRecord::from).collect(),
            };
            serde_json::to_writer_pretty(&mut *out, &doc).context("writing JSON")?;
            writeln!(out).context("writing JSON")
        }
        CheckFormat::Text => {
            for line in text_lines(findings, verbose) {
                writeln!(out, "{line}").context("writing the report")?;
            }
            writeln!(out, "{}", summary_line(findings, checked)).context("writing the report")
        }
    }
}

/// The findings of `severity`.
pub fn count(findings: &[Finding], severity: Severity) -> usize {
    findings.iter().filter(|f| f.severity == severity).count()
}

/// The kernels of `packages` (their tune variants not counted).
fn kernels(packages: &[PackageKernels]) -> usize {
    packages.iter().map(|p| p.manifest.kernels.len()).sum()
}

/// `checked 3 kernels × 2 arches (sm_80, sm_90): 0 errors, 1 warning; compared against ...`, or
/// why nothing was checked.
fn summary_line(findings: &[Finding], checked: &Checked) -> String {
    let (errors, warnings) = (count(findings, Severity::Error), count(findings, Severity::Warning));
    let counts = format!(
        "{errors} error{}, {warnings} warning{}",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    );
    let built = !findings.iter().any(|f| f.kind == FindingKind::Compile);
    let what = if !built {
        "the kernels did not build".to_string()
    } else if checked.records.is_empty() {
        let why = if checked.packages.is_empty() {
            "the toolchain can target none of the requested arches".to_string()
        } else if kernels(checked.packages) > 0 {
            let n = kernels(checked.packages);
            format!("none of the {n} kernel{} is built for the selected arches", if n == 1 { "" } else { "s" })
        } else {
            let dirs: Vec<String> =
                checked.packages.iter().map(|p| format!("{}/", p.config.kernel_dir.display())).collect();
            format!("no kernels found in {}", dirs.join(", "))
        };
        format!("nothing to check: {why}")
    } else {
        let tuned: usize = checked.packages.iter().flat_map(|p| &p.manifest.kernels).map(|k| k.variants.len()).sum();
        let names: Vec<String> = checked.arches.iter().map(Arch::to_string).collect();
        let variants = if tuned > 0 { format!(" (+ {tuned} tune variants)") } else { String::new() };
        format!(
            "checked {} kernels{variants} × {} arches ({})",
            kernels(checked.packages),
            checked.arches.len(),
            names.join(", ")
        )
    };
    format!("{what}: {counts}{}", baseline_summary(checked.baselines))
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
pub fn sort(findings: &mut [Finding]) {
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
/// finding in full, for the arithmetic). Kernels are named as [`names::Short`] prints them (JSON,
/// SARIF and annotations keep the full names).
pub fn text_lines(findings: &[Finding], verbose: bool) -> Vec<String> {
    use std::collections::BTreeMap;
    let short = names::Short::new(findings.iter().filter_map(|f| f.kernel.as_deref()), names::KERNEL_WIDTH);
    let findings: &[Finding] = &findings
        .iter()
        .map(|f| Finding { kernel: f.kernel.as_deref().map(|k| short.of(k).to_string()), ..f.clone() })
        .collect::<Vec<_>>();
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
        (FindingKind::Stack, _) => "have a stack size that cannot be statically determined (recursion)".to_string(),
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
pub fn github_annotations(out: &mut impl Write, findings: &[Finding]) -> std::io::Result<()> {
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

/// `p` relative to `base` when it is inside, else as it is.
pub fn relative(p: &Path, base: &Path) -> String {
    p.strip_prefix(base).unwrap_or(p).display().to_string()
}

/// Escapes an annotation's message as GitHub's workflow commands document.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes an annotation's property (`file=`, `title=`) as GitHub's workflow commands document.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use launch_analysis::Detail;

    use super::*;

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
    fn text_lines_name_kernels_shortly_and_json_and_sarif_in_full() {
        let long = |i: usize| format!("void gemm<{i}, {}>(float*)", "cub::detail::Policy<int>, ".repeat(20));
        let spills = |kernel: String| Finding {
            severity: Severity::Warning,
            kind: FindingKind::Spills,
            kernel: Some(kernel),
            arch: Some("sm_90".parse().unwrap()),
            detail: Detail::Spills { stores: 4, loads: 4, budget: None },
            ..at("/r/kernels/a.cu", 3, 0)
        };
        let findings = [spills(long(1)), spills(long(2)), spills("fill".into())];
        let lines = text_lines(&findings, false);
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("warning[spills]: kernels/a.cu:3: gemm<1, …> on sm_90: 4 bytes"), "{lines:#?}");
        assert!(lines[1].starts_with("warning[spills]: kernels/a.cu:3: gemm<2, …> on sm_90: "), "{lines:#?}");
        assert!(lines[2].starts_with("warning[spills]: kernels/a.cu:3: fill on sm_90: "), "{lines:#?}");
        // Grouped, the first names are the short ones too.
        let many: Vec<Finding> = (0..GROUP_ABOVE + 1).map(|i| spills(long(i))).collect();
        let lines = text_lines(&many, false);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("(first: gemm<0, …>, gemm<1, …>, gemm<2, …>, …)"), "{lines:#?}");
        // SARIF keeps the full name.
        let log = sarif_log(&findings, Path::new("/r"), "Cargo.toml");
        let sarif = serde_json::to_string(&log).unwrap();
        assert!(sarif.contains(&long(1)) && !sarif.contains("…"), "{sarif}");
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

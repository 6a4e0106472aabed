//! `cargo launch check`: the CI gate. Compiles every kernel for the requested arches (no GPU) and
//! fails where a launch would fail (error 701), where spills exceed the budget, where resources
//! regressed against the committed baseline, or where the toolchain cannot target an arch.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use launch::Arch;
use launch_build::env::Env;
use serde::Serialize;

use crate::baseline::{self, Baseline};
use crate::cargo::{self, PackageKernels};
use crate::cli::{CheckArgs, Format};
use crate::report::{self, Record};
use crate::{exit, Exit};

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Fails the check.
    Error,
    /// Fails only with `--deny warnings`.
    Warning,
    /// Information (kernels new since the baseline).
    Note,
}

/// One problem, for one kernel on one arch where that applies.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// Error, warning or note.
    pub severity: Severity,
    /// `launch`, `spills`, `regression`, `arch`, `contract`, `unbounded`, `max-regs`, `new`, `config`.
    pub kind: &'static str,
    /// Package.
    pub package: String,
    /// Kernel (demangled), when the finding is about one.
    pub kernel: Option<String>,
    /// Arch, when the finding is about one.
    pub arch: Option<String>,
    /// Source file, relative to the package root.
    pub file: Option<String>,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// What is wrong, with the arithmetic.
    pub message: String,
    /// Absolute path of `file`, for annotations.
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

#[derive(Serialize)]
struct CheckJson<'a> {
    schema: u32,
    toolchain: Option<report::Toolchain<'a>>,
    kernels: usize,
    arches: Vec<String>,
    errors: usize,
    warnings: usize,
    findings: &'a [Finding],
}

/// Runs `cargo launch check`.
pub fn run(args: &CheckArgs) -> Result<(), Exit> {
    report::ensure_toolchain(args.no_setup)?;
    let mut findings = Vec::new();

    // Arches the toolchain cannot target are findings, not a failed build; the rest is checked.
    let mut extra_env = Vec::new();
    if !args.arch.is_empty() {
        let supported = supported_arches()?;
        let (ok, bad): (Vec<Arch>, Vec<Arch>) =
            args.arch.iter().partition(|a| supported.is_empty() || supported.contains(&(a.major * 10 + a.minor)));
        for a in bad {
            findings.push(Finding {
                severity: Severity::Error,
                kind: "arch",
                package: String::new(),
                kernel: None,
                arch: Some(a.to_string()),
                file: None,
                line: 0,
                message: format!(
                    "the toolchain cannot target {a}; it supports: {}",
                    supported.iter().map(|c| format!("sm_{c}")).collect::<Vec<_>>().join(", ")
                ),
                path: None,
            });
        }
        if ok.is_empty() {
            return finish(args, &[], &[], findings, Vec::new());
        }
        extra_env.push(("LAUNCH_ARCH", ok.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",")));
    }

    let packages = cargo::build(&args.packages, &extra_env)?;
    if args.baseline.is_some() && packages.len() > 1 {
        // One file cannot hold several packages' baselines (their kernels could share names).
        return Err(Exit::new(
            exit::USAGE,
            anyhow::anyhow!(
                "--baseline names one file but {} packages are checked; leave it out (each package then uses the \
                 launch-baseline.txt next to its Cargo.toml) or select one package with -p",
                packages.len()
            ),
        ));
    }
    let records = report::records(&packages, &[])?;
    for p in &packages {
        let recs: Vec<&Record> = records.iter().filter(|r| r.package == p.package).collect();
        for r in &recs {
            findings.extend(record_findings(p, r));
        }
        findings.extend(unknown_kernel_settings(p));
        let path = baseline_path(args, p);
        let current = current_baseline(&recs);
        if args.bless {
            let text = baseline::render(&current);
            launch_build::out::write_if_changed(&path, text.as_bytes()).map_err(anyhow::Error::new)?;
            eprintln!("wrote {} records to {}", current.len(), path.display());
        } else if path.is_file() {
            let text =
                std::fs::read_to_string(&path).with_context(|| format!("failed to read `{}`", path.display()))?;
            let old = baseline::parse(&path, &text).map_err(|e| Exit::new(exit::USAGE, e))?;
            findings.extend(compare(p, &recs, &old, &current));
        }
    }
    let arches: Vec<String> = {
        let mut a: Vec<String> = records.iter().map(|r| r.arch.to_string()).collect();
        a.sort_by_key(|s| s.parse::<Arch>().ok());
        a.dedup();
        a
    };
    finish(args, &packages, &records, findings, arches)
}

fn supported_arches() -> Result<Vec<u32>, Exit> {
    let tc = launch_build::toolchain::discover(&Env::cli()).map_err(|e| Exit::new(exit::NO_TOOLCHAIN, e))?;
    let nvrtc = launch_build::nvrtc::Nvrtc::load(&tc.nvrtc).map_err(|e| Exit::new(exit::NO_TOOLCHAIN, e))?;
    Ok(nvrtc.supported_archs().into_iter().map(|c| c as u32).collect())
}

/// `[package.metadata.launch.kernel.<name>]` tables whose name matches no kernel (a typo would
/// otherwise silently drop a spill budget or a dynamic shared-memory size).
fn unknown_kernel_settings(p: &PackageKernels) -> Vec<Finding> {
    report::unknown_kernel_settings(&p.config, &p.manifest)
        .into_iter()
        .map(|message| Finding {
            severity: Severity::Warning,
            kind: "config",
            package: p.package.clone(),
            kernel: None,
            arch: None,
            file: Some("Cargo.toml".into()),
            line: 0,
            message,
            path: Some(p.config.manifest_path.clone()),
        })
        .collect()
}

fn baseline_path(args: &CheckArgs, p: &PackageKernels) -> PathBuf {
    match &args.baseline {
        Some(b) => b.clone(),
        None => p.config.root().join("launch-baseline.txt"),
    }
}

fn current_baseline(recs: &[&Record]) -> Baseline {
    recs.iter()
        .map(|r| {
            let res = &r.ptxas.resources;
            (
                (r.display_name.clone(), r.arch.to_string()),
                baseline::Entry {
                    registers: res.registers,
                    spill_bytes: res.spill_stores + res.spill_loads,
                    stack: res.stack_frame,
                    shared: res.shared_static,
                    occupancy: r.occupancy.percent,
                },
            )
        })
        .collect()
}

fn finding(p: &PackageKernels, r: &Record, severity: Severity, kind: &'static str, message: String) -> Finding {
    Finding {
        severity,
        kind,
        package: p.package.clone(),
        kernel: Some(r.display_name.clone()),
        arch: Some(r.arch.to_string()),
        file: Some(r.file.clone()),
        line: r.line,
        message: format!("{} on {}: {message}", r.display_name, r.arch),
        path: Some(p.config.root().join(&r.file)),
    }
}

/// The launch, spill and contract rules for one kernel on one arch.
fn record_findings(p: &PackageKernels, r: &Record) -> Vec<Finding> {
    let mut out = Vec::new();
    let o = &r.occupancy;
    if let Some(e) = &o.launch_error {
        let fix = if r.contract.is_none() && r.max_threads_per_block < o.threads {
            format!("; add __launch_bounds__({}) or launch ≤ {}", o.threads, r.max_threads_per_block)
        } else {
            String::new()
        };
        let at = if o.threads_from == "host" { " (host block size)" } else { "" };
        out.push(finding(
            p,
            r,
            Severity::Error,
            "launch",
            format!("cannot launch at {} threads{at}: {e}{fix}", o.threads),
        ));
    }
    let res = &r.ptxas.resources;
    let spills = res.spill_stores + res.spill_loads;
    let kernel_budget =
        p.config.kernel.get(&r.name).or_else(|| p.config.kernel.get(&r.display_name)).and_then(|k| k.max_spill_bytes);
    let spill_text =
        format!("{} bytes spill stores + {} bytes spill loads = {spills} bytes", res.spill_stores, res.spill_loads);
    match kernel_budget.or(p.config.max_spill_bytes) {
        Some(budget) if spills > budget => out.push(finding(
            p,
            r,
            Severity::Error,
            "spills",
            format!("{spill_text}, over the budget of {budget} (max-spill-bytes)"),
        )),
        None if spills > 0 => {
            out.push(finding(p, r, Severity::Warning, "spills", format!("{spill_text}; no max-spill-bytes budget set")))
        }
        _ => {}
    }
    for n in &r.notes {
        out.push(finding(p, r, Severity::Warning, "contract", n.clone()));
    }
    if r.contract.is_none() {
        out.push(finding(
            p,
            r,
            Severity::Warning,
            "unbounded",
            format!(
                "no launch contract: checked at the host block size {}; the largest block that launches is {}",
                o.threads, r.max_threads_per_block
            ),
        ));
    }
    if let (Some(c), Some(cap)) = (&r.contract, r.register_cap) {
        if c.max_regs.is_some() && spills > 0 && res.registers >= cap {
            out.push(finding(
                p,
                r,
                Severity::Warning,
                "max-regs",
                format!("the cap of {cap} registers per thread forces {spills} bytes of spills"),
            ));
        }
    }
    out
}

fn compare(p: &PackageKernels, recs: &[&Record], old: &Baseline, new: &Baseline) -> Vec<Finding> {
    let mut out = Vec::new();
    for (key, entry) in new {
        let r = recs.iter().find(|r| r.display_name == key.0 && r.arch.to_string() == key.1).expect("built from recs");
        match old.get(key) {
            Some(before) => {
                let worse = baseline::regressions(before, entry);
                if !worse.is_empty() {
                    out.push(finding(
                        p,
                        r,
                        Severity::Error,
                        "regression",
                        format!("since the baseline: {}", worse.join(", ")),
                    ));
                }
            }
            None => out.push(finding(
                p,
                r,
                Severity::Note,
                "new",
                "not in the baseline (new kernel or arch); run `cargo launch check --bless` to record it".into(),
            )),
        }
    }
    out
}

fn finish(
    args: &CheckArgs,
    packages: &[PackageKernels],
    records: &[Record],
    mut findings: Vec<Finding>,
    arches: Vec<String>,
) -> Result<(), Exit> {
    findings.sort_by(|a, b| {
        (a.severity, &a.package, &a.file, a.line, &a.arch).cmp(&(b.severity, &b.package, &b.file, b.line, &b.arch))
    });
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = findings.iter().filter(|f| f.severity == Severity::Warning).count();
    let kernels: usize = packages.iter().map(|p| p.manifest.kernels.len()).sum();
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            let toolchain = packages
                .first()
                .map(|p| report::Toolchain { nvrtc: &p.manifest.toolchain.nvrtc, ptxas: &p.manifest.toolchain.ptxas });
            let doc = CheckJson {
                schema: 1,
                toolchain,
                kernels,
                arches: arches.clone(),
                errors,
                warnings,
                findings: &findings,
            };
            serde_json::to_writer_pretty(&mut out, &doc).context("writing JSON")?;
            writeln!(out).context("writing JSON")?;
        }
        Format::Text => {
            for f in &findings {
                let sev = match f.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Note => "note",
                };
                let loc = match (&f.file, f.line) {
                    (Some(file), 0) => format!("{file}: "),
                    (Some(file), line) => format!("{file}:{line}: "),
                    _ => String::new(),
                };
                writeln!(out, "{sev}[{}]: {loc}{}", f.kind, f.message).context("writing the report")?;
            }
            let _ = records;
            writeln!(
                out,
                "checked {kernels} kernels × {} arches ({}): {errors} error{}, {warnings} warning{}",
                arches.len(),
                arches.join(", "),
                if errors == 1 { "" } else { "s" },
                if warnings == 1 { "" } else { "s" }
            )
            .context("writing the report")?;
        }
    }
    #[allow(clippy::disallowed_methods)] // a CI switch, not a build input
    if std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true") {
        github_annotations(&mut out, &findings).context("writing annotations")?;
    }
    let denied = args.deny.iter().any(|d| d == "warnings") && warnings > 0;
    if errors > 0 || denied {
        return Err(Exit::silent(exit::CHECK_FAILED));
    }
    Ok(())
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
        if let Some(p) = &f.path {
            props.push(format!("file={}", escape_property(&relative(p, &cwd))));
            if f.line > 0 {
                props.push(format!("line={}", f.line));
            }
        }
        props.push(format!("title={}", escape_property(&format!("cargo launch check: {}", f.kind))));
        writeln!(out, "::{level} {}::{}", props.join(","), escape_data(&f.message))?;
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

    #[test]
    fn annotation_text_is_escaped_as_github_documents() {
        assert_eq!(escape_data("a%b\nc"), "a%25b%0Ac");
        assert_eq!(escape_property("check: x,y"), "check%3A x%2Cy");
    }
}

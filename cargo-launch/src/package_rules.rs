//! The rules about packages rather than one kernel on one arch, which `cargo launch check` adds to
//! the kernel rules of `launch_analysis`: an arch the toolchain cannot target, the errors of a
//! build that failed, tune variants the build refused for an arch, kernel settings that name no
//! kernel, a package with nothing to check, the baseline file's own problems (an old format,
//! records nothing built) and the driver (`compat_check`). Each takes what the check found and
//! returns findings; reading files and placing kernels is the caller's.

use std::collections::BTreeSet;

use launch::Arch;
use launch_analysis::{Detail, Finding, FindingKind, Location, Severity};
use launch_schema::report::KernelId;

use crate::baseline;
use crate::error::BuildFailure;
use crate::records::{self, PackageKernels, Refused};

/// A requested arch the toolchain cannot target (`supported`: the compute capabilities it can):
/// an error about no package and no file, since nothing is built for it.
pub fn unsupported_arch(arch: Arch, supported: &[u32]) -> Finding {
    Finding {
        severity: Severity::Error,
        kind: FindingKind::Arch,
        package: String::new(),
        kernel: None,
        arch: Some(arch),
        location: None,
        detail: Detail::Text(format!(
            "the toolchain cannot target {arch}; it supports: {}",
            supported.iter().map(|c| format!("sm_{c}")).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The errors a failed build script wrote, as findings at their lines.
pub fn compile(failure: &BuildFailure) -> Vec<Finding> {
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

/// The rules about one built package, in the order they are reported: its tune variants refused
/// for an arch (of `refused`, every package's), its kernel settings that name no kernel, the
/// driver it must load on, and a kernel folder with no kernel.
pub fn package(p: &PackageKernels, refused: &[Refused]) -> Vec<Finding> {
    let mut out: Vec<Finding> =
        refused.iter().filter(|r| r.id.package == p.package).map(|r| refused_variant(p, r)).collect();
    out.extend(unknown_kernel_settings(p));
    out.extend(crate::compat_check::findings(p));
    out.extend(empty(p));
    out.extend(stale_prebuilt(p));
    out
}

/// A prebuilt folder (`launch-prebuilt/`) that does not match the sources: an error, so CI keeps
/// what the crate ships current. Placed on the folder's record, naming every changed input.
fn stale_prebuilt(p: &PackageKernels) -> Option<Finding> {
    use launch_engine::prebuilt::{self, Status};
    let (why, line) = match prebuilt::status(&p.config) {
        Ok(Status::Absent | Status::Fresh(_)) => return None,
        Ok(Status::Stale(_, changed)) => (changed.join("; "), 0),
        Err(e) => (e.to_string(), 0),
    };
    let folder = prebuilt::folder(p.config.root());
    Some(Finding {
        severity: Severity::Error,
        kind: FindingKind::Config,
        package: p.package.clone(),
        kernel: None,
        arch: None,
        location: Some(Location {
            file: format!("{}/{}", prebuilt::FOLDER, prebuilt::RECORD),
            line,
            col: 0,
            path: Some(folder.join(prebuilt::RECORD)),
        }),
        detail: Detail::Text(format!(
            "the prebuilt kernels of package `{}` do not match its sources ({why}): the crate would ship stale \
             kernels; run `cargo launch prebuild` and commit {}/",
            p.package,
            prebuilt::FOLDER
        )),
    })
}

/// A tune variant the build did not embed for an arch: a note, not an error. The build already
/// kept it off that arch, so no launch can fail there (the runtime finds no image of it, and the
/// tuner skips it); a grid spanning arches of different sizes meets this as a matter of course,
/// so it must not fail `check` (nor `--deny warnings`), yet the reader learns which points of the
/// grid exist where.
pub fn refused_variant(p: &PackageKernels, r: &Refused) -> Finding {
    Finding {
        severity: Severity::Note,
        kind: FindingKind::Launch,
        package: p.package.clone(),
        kernel: Some(r.id.display_name.clone()),
        arch: Some(r.arch),
        location: Some(kernel_location(p, &r.id)),
        detail: Detail::Text(format!(
            "tune variant {} ({}) of {} is not embedded for {}: {}",
            r.id.display_name, r.contract, r.kernel, r.arch, r.reason
        )),
    }
}

/// The definition of kernel `id` of `p` (a tune variant's is its kernel's), where the findings
/// about it are shown.
pub fn kernel_location(p: &PackageKernels, id: &KernelId) -> Location {
    Location { file: id.file.clone(), line: id.line, col: 0, path: Some(p.config.root().join(&id.file)) }
}

/// `[package.metadata.launch.kernel.<name>]` tables whose name matches no kernel (a typo would
/// otherwise silently drop a spill budget or a dynamic shared-memory size).
fn unknown_kernel_settings(p: &PackageKernels) -> Vec<Finding> {
    records::unknown_kernel_settings(&p.manifest, &p.config)
        .into_iter()
        .map(|(at, message)| Finding {
            severity: Severity::Warning,
            kind: FindingKind::Config,
            package: p.package.clone(),
            kernel: None,
            arch: None,
            location: Some(match at {
                Some((line, col)) => Location { line, col, ..manifest_location(p) },
                None => manifest_location(p),
            }),
            detail: Detail::Text(message),
        })
        .collect()
}

/// A package whose kernel folder holds no kernel: the gate would pass having checked nothing.
/// Shown on the package's manifest, which says where the kernels are (`kernels`).
fn empty(p: &PackageKernels) -> Option<Finding> {
    if !p.manifest.kernels.is_empty() {
        return None;
    }
    let dir = p.config.kernel_dir.display().to_string();
    let files = p.manifest.modules.len();
    let why = if files == 0 {
        format!("no .cu file in {dir}/")
    } else {
        format!("no kernel in the {files} .cu file{} of {dir}/", if files == 1 { "" } else { "s" })
    };
    Some(empty_warning(p, format!("nothing to check in package `{}`: {why}", p.package)))
}

/// A warning that the gate checks nothing of package `p`, on its manifest.
fn empty_warning(p: &PackageKernels, text: String) -> Finding {
    Finding {
        severity: Severity::Warning,
        kind: FindingKind::Empty,
        package: p.package.clone(),
        kernel: None,
        arch: None,
        location: Some(manifest_location(p)),
        detail: Detail::Text(text),
    }
}

/// A package with kernels of which the selection checks none (`checked`: its records on
/// `arches`, `--arch`'s or, when empty, its own): the gate would pass having checked nothing. A
/// warning that says, per file, which file table (or the PTX) left its kernels off those arches.
pub fn unchecked(p: &PackageKernels, arches: &[Arch], checked: usize) -> Option<Finding> {
    let kernels = &p.manifest.kernels;
    if checked > 0 || kernels.is_empty() {
        return None;
    }
    let wanted = if arches.is_empty() { &p.manifest.arches[..] } else { arches };
    let mut files: Vec<(&str, usize, String)> = Vec::new();
    for k in kernels {
        match files.iter_mut().find(|f| f.0 == k.file) {
            Some(f) => f.1 += 1,
            None => files.push((&k.file, 1, why_unchecked(p, k, wanted))),
        }
    }
    let names: Vec<String> = wanted.iter().map(Arch::to_string).collect();
    let why: Vec<String> = files
        .iter()
        .map(|(file, n, why)| format!("{file} ({n} kernel{}) {why}", if *n == 1 { "" } else { "s" }))
        .collect();
    Some(empty_warning(
        p,
        format!(
            "nothing checked in package `{}`: none of its {} kernel{} is built for {}: {}; add the arch to that \
             table, or check an arch the kernels are built for",
            p.package,
            kernels.len(),
            if kernels.len() == 1 { "" } else { "s" },
            names.join(", "),
            why.join("; ")
        ),
    ))
}

/// Why kernel `k` has no record on `wanted`: the file table whose `arch` leaves them out, else
/// the manifest's reason (absent from the PTX), else the arches it is built for.
fn why_unchecked(p: &PackageKernels, k: &launch_schema::manifest::KernelEntry, wanted: &[Arch]) -> String {
    let built: Vec<String> = k.arches.iter().map(|a| a.arch.to_string()).collect();
    let on = if built.is_empty() { "no arch".to_string() } else { built.join(", ") };
    let dir = format!("{}/", p.config.kernel_dir.display());
    let rel = k.file.strip_prefix(&dir).unwrap_or(&k.file);
    let table =
        p.config.files.iter().rev().find(|f| f.arch.is_some() && launch_engine::config::path_matches(&f.pattern, rel));
    match (table, k.missing.iter().find(|m| wanted.contains(&m.arch))) {
        (Some(f), _) => {
            format!("is built for {on} only, by the `arch` of [package.metadata.launch.file.\"{}\"]", f.pattern)
        }
        (None, Some(m)) => format!("is not built for {}: {}", m.arch, m.reason),
        (None, None) => format!("is built for {on} only"),
    }
}

/// The package's `Cargo.toml`, as a whole.
fn manifest_location(p: &PackageKernels) -> Location {
    Location { file: "Cargo.toml".into(), line: 0, col: 0, path: Some(p.config.manifest_path.clone()) }
}

/// A version-1 or -2 baseline (`at`: a line of the file): compared by display name, which changes
/// when a kernel's name becomes ambiguous; v1 cannot even tell a cut-short file from removed
/// kernels. Nothing for v3 (keyed as the current format; its five numbers are judged as they
/// were) or the current format.
pub fn old_baseline_format(package: &str, version: u32, at: impl Fn(u32) -> Location) -> Option<Finding> {
    if version >= baseline::V3 {
        return None;
    }
    let why = if version < baseline::V2 {
        "has no record count, so a truncated file cannot be detected"
    } else {
        "keys kernels by display name, which changes when another file defines a kernel of the same name"
    };
    Some(Finding {
        severity: Severity::Warning,
        kind: FindingKind::Baseline,
        package: package.to_string(),
        kernel: None,
        arch: None,
        location: Some(at(1)),
        detail: Detail::Text(format!(
            "baseline format v{version} {why}; re-bless with `cargo launch check --bless` to write format v{}",
            baseline::VERSION
        )),
    })
}

/// The records of `old` on a `checked` arch that no kernel produced (`seen`: the keys the build
/// did), as warnings at their lines (`at`): a renamed, moved or removed kernel would otherwise
/// leave the gate without a word.
pub fn not_built(
    package: &str,
    old: &baseline::Parsed,
    seen: &BTreeSet<(String, String)>,
    checked: &[String],
    at: impl Fn(u32) -> Location,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (key, line) in &old.lines {
        if seen.contains(key) || !checked.contains(&key.1) {
            continue;
        }
        let (kernel, arch) = key;
        // `kernels/t.cu::_Z4tmplILi8EEvPi` says little to a reader: add what it demangles to.
        let symbol = kernel.rsplit("::").next().unwrap_or(kernel);
        let readable = launch_engine::tooling::demangle(symbol);
        let shown = if old.version >= baseline::V3 && readable != symbol {
            format!("{kernel} ({readable})")
        } else {
            kernel.clone()
        };
        out.push(Finding {
            severity: Severity::Warning,
            kind: FindingKind::Baseline,
            package: package.to_string(),
            kernel: Some(kernel.clone()),
            arch: arch.parse().ok(),
            location: Some(at(u32::try_from(*line).unwrap_or(u32::MAX))),
            detail: Detail::Text(format!(
                "{shown} {arch} is in the baseline but was not built (renamed, removed or moved?); re-bless with \
                 `cargo launch check --bless` if intended"
            )),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use launch_schema::diagnostics::Diagnostic;

    use super::*;
    use crate::records::testing;

    fn line(f: &Finding) -> String {
        crate::output::check::finding_line(f)
    }

    #[test]
    fn an_arch_the_toolchain_cannot_target_is_an_error_about_no_file() {
        let f = unsupported_arch("sm_110".parse().unwrap(), &[75, 80]);
        assert_eq!((f.severity, f.location.as_ref(), f.package.as_str()), (Severity::Error, None, ""));
        assert_eq!(line(&f), "error[arch]: the toolchain cannot target sm_110; it supports: sm_75, sm_80");
    }

    #[test]
    fn a_failed_builds_errors_are_placed_at_their_lines_with_the_tool() {
        let mut d = Diagnostic::error("kernels/a.cu", 3, 7, "`x` is undefined");
        d.tool = Some("NVRTC 12.9.86, sm_90".into());
        let failure =
            BuildFailure { package: "demo".into(), root: PathBuf::from("/r"), diagnostics: vec![d], kind: None };
        let f = compile(&failure);
        assert_eq!(line(&f[0]), "error[compile]: kernels/a.cu:3:7: `x` is undefined (NVRTC 12.9.86, sm_90)");
        assert_eq!(f[0].location.as_ref().unwrap().path, Some(PathBuf::from("/r/kernels/a.cu")));
    }

    #[test]
    fn kernel_settings_that_name_no_kernel_and_an_empty_folder_are_warnings_on_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = testing::package(dir.path(), 0, &["sm_90"], &[]);
        // As the build records a `[package.metadata.launch.kernel.nope]` that names no kernel.
        p.manifest.unused_kernel_settings = vec!["nope".into()];
        let lines: Vec<String> = package(&p, &[]).iter().map(line).collect();
        let dir = p.config.kernel_dir.display();
        assert_eq!(
            lines,
            [
                "warning[config]: Cargo.toml: [package.metadata.launch.kernel.nope] names no kernel; its settings are \
                 unused; no kernel's name is close to it"
                    .to_string(),
                format!("warning[empty]: Cargo.toml: nothing to check in package `pkg`: no .cu file in {dir}/"),
            ]
        );
        let one = testing::package(tempfile::tempdir().unwrap().path(), 1, &["sm_90"], &[]);
        assert!(package(&one, &[]).is_empty(), "a kernel, no settings: nothing");
    }

    #[test]
    fn a_v1_or_v2_baseline_is_a_warning_to_re_bless() {
        let at = |line| Location { file: "b.txt".into(), line, col: 0, path: None };
        let v1 = old_baseline_format("pkg", 1, at).unwrap();
        assert!(line(&v1).starts_with("warning[baseline]: b.txt:1: baseline format v1 has no record count"), "{v1:?}");
        let v2 = old_baseline_format("pkg", 2, at).unwrap();
        assert!(line(&v2).contains("format v2 keys kernels by display name"), "{v2:?}");
        assert!(line(&v2).ends_with("re-bless with `cargo launch check --bless` to write format v4"), "{v2:?}");
        assert_eq!(old_baseline_format("pkg", baseline::V3, at), None);
        assert_eq!(old_baseline_format("pkg", baseline::VERSION, at), None);
    }

    #[test]
    fn records_of_a_checked_arch_that_nothing_built_are_warnings_at_their_lines() {
        let key = |k: &str, a: &str| (k.to_string(), a.to_string());
        let lines = BTreeMap::from([
            (key("kernels/t.cu::_Z4tmplILi8EEvPi", "sm_90"), 3),
            (key("kernels/a.cu::built", "sm_90"), 4),
            (key("kernels/a.cu::other_arch", "sm_80"), 5),
        ]);
        let old = baseline::Parsed { records: Default::default(), version: baseline::VERSION, lines };
        let seen = BTreeSet::from([key("kernels/a.cu::built", "sm_90")]);
        let at = |line| Location { file: "b.txt".into(), line, col: 0, path: None };
        let f = not_built("pkg", &old, &seen, &["sm_90".into()], at);
        let lines: Vec<String> = f.iter().map(line).collect();
        assert_eq!(
            lines,
            ["warning[baseline]: b.txt:3: kernels/t.cu::_Z4tmplILi8EEvPi (void tmpl<8>(int*)) sm_90 is in the \
              baseline but was not built (renamed, removed or moved?); re-bless with `cargo launch check --bless` if \
              intended"]
        );
    }
}

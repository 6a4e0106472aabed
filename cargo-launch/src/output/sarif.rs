//! `cargo launch check --format sarif`: the findings as a SARIF 2.1.0 log, the format GitHub code
//! scanning (and editors' SARIF viewers) read.
//!
//! Only the subset of SARIF this tool needs is modelled: one run, one rule (`reportingDescriptor`)
//! per finding kind with the id `launch/<kind>`, one result per finding with its level, message,
//! one location (a path relative to the repository root, under the base id `%SRCROOT%`, as GitHub
//! requires) and a `partialFingerprints` entry that survives unrelated edits, so an alert is
//! tracked across runs instead of being closed and reopened whenever a line moves.
//!
//! The input is [`Alert`], a view of a finding with its kind and severity as the analysis's own
//! enums ([`FindingKind`], [`Severity`]): the rules are an exhaustive `match` on the kind, so a new
//! kind cannot lack one. The output is validated against the SARIF 2.1.0 JSON schema by the test
//! in `sarif/tests.rs`.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Component, Path};

use launch_analysis::{FindingKind, Severity};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The `$schema` every log names: the OASIS standard's schema (2.1.0 with its errata).
pub(crate) const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The SARIF version written.
pub(crate) const VERSION: &str = "2.1.0";

/// The base id every location is relative to; GitHub resolves it to the checkout.
pub(crate) const SRCROOT: &str = "%SRCROOT%";

/// The key of our own entry in `partialFingerprints` (versioned: a change of what is hashed must
/// not match alerts fingerprinted the old way).
pub(crate) const FINGERPRINT_KEY: &str = "launchFinding/v1";

/// One finding as this module needs it; the caller builds one from its own finding type.
#[derive(Clone, Debug)]
pub(crate) struct Alert<'a> {
    /// The finding kind; the rule is `launch/<kind>`.
    pub(crate) kind: FindingKind,
    /// Error, warning or note (SARIF's `level` has the same three names).
    pub(crate) level: Severity,
    /// What is wrong, in full.
    pub(crate) message: &'a str,
    /// The file the finding is shown on, as a URI relative to the repository root (see
    /// [`relative_uri`]). A finding about no file (an arch the toolchain cannot target) names the
    /// manifest that asks for it: GitHub refuses a result without a location.
    pub(crate) uri: String,
    /// 1-based line, 0 when unknown (no region is written then).
    pub(crate) line: u32,
    /// 1-based column, 0 when unknown (the region then has only the line).
    pub(crate) col: u32,
    /// Package ("" when the finding is about none).
    pub(crate) package: &'a str,
    /// Kernel, when the finding is about one.
    pub(crate) kernel: Option<&'a str>,
    /// Arch, when the finding is about one.
    pub(crate) arch: Option<&'a str>,
}

/// What a finding kind means: the text of its rule.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rule {
    /// PascalCase name (SARIF's `name`, shown by viewers).
    pub(crate) name: &'static str,
    /// One line.
    pub(crate) short: &'static str,
    /// What the finding means.
    pub(crate) full: &'static str,
    /// What to do about it.
    pub(crate) help: &'static str,
    /// The level most of its findings have (a result's own level overrides it).
    pub(crate) level: Severity,
}

/// The rule of a finding kind. An exhaustive `match`: a kind added to the analysis does not
/// compile until it has its rule here.
pub(crate) fn rule(kind: FindingKind) -> Rule {
    match kind {
        FindingKind::Launch => LAUNCH,
        FindingKind::Spills => SPILLS,
        FindingKind::Stack => STACK,
        FindingKind::Regression => REGRESSION,
        FindingKind::Arch => ARCH,
        FindingKind::Contract => CONTRACT,
        FindingKind::Unbounded => UNBOUNDED,
        FindingKind::MaxRegs => MAX_REGS,
        FindingKind::New => NEW,
        FindingKind::Config => CONFIG,
        FindingKind::Empty => EMPTY,
        FindingKind::Baseline => BASELINE,
        FindingKind::Compile => COMPILE,
        FindingKind::Driver => DRIVER,
    }
}

const LAUNCH: Rule = Rule {
    name: "LaunchFails",
    short: "A kernel cannot launch at its block size.",
    full: "The kernel asks for more registers, shared memory or threads per block than the arch gives one \
           block, so its launch fails with CUDA error 701 (too many resources requested for launch).",
    help: "Launch with fewer threads per block, add __launch_bounds__ with the block size the host uses so \
           that ptxas limits registers, or use less shared memory. `cargo launch report` shows the largest \
           block that launches on each arch.",
    level: Severity::Error,
};

const SPILLS: Rule = Rule {
    name: "RegisterSpills",
    short: "A kernel spills registers to local memory.",
    full: "ptxas spilled registers to local memory (spill stores and loads). Over the package's or kernel's \
           max-spill-bytes budget this is an error; with no budget set, a warning.",
    help: "Lower register pressure, raise the register cap of the launch contract, or accept the spills with \
           max-spill-bytes in [package.metadata.launch] or [package.metadata.launch.kernel.<name>].",
    level: Severity::Error,
};

const STACK: Rule = Rule {
    name: "DynamicStack",
    short: "A kernel's stack size cannot be statically determined.",
    full: "The kernel reaches a recursion (direct or mutual) through a function with a stack frame, so each \
           level takes another frame and the depth is known only at run time. The driver sizes the stack \
           from cudaLimitStackSize (1,024 bytes per thread by default); a deeper recursion fails with an \
           illegal address (CUDA error 700). The record's stack frame is what the driver reports.",
    help: "Bound the recursion's depth (or rewrite it as a loop), or raise the limit with \
           cuCtxSetLimit(CU_LIMIT_STACK_SIZE) before launching, to the deepest call's frames.",
    level: Severity::Warning,
};

const REGRESSION: Rule = Rule {
    name: "ResourceRegression",
    short: "A kernel's resources got worse than the committed baseline.",
    full: "Registers, spills, stack frame, static shared memory or occupancy regressed against the \
           committed baseline (launch-baseline.txt).",
    help: "Undo the regression, or accept it with `cargo launch check --bless` and commit the baseline.",
    level: Severity::Error,
};

const ARCH: Rule = Rule {
    name: "UnsupportedArch",
    short: "The CUDA toolchain cannot target a requested arch.",
    full: "An arch given with --arch or in [package.metadata.launch] is not among those the toolchain's NVRTC \
           can compile for, so nothing was checked for it.",
    help: "Drop the arch, or use a toolchain that supports it (`cargo launch setup` installs the pinned one).",
    level: Severity::Error,
};

const CONTRACT: Rule = Rule {
    name: "ContractNotHonoured",
    short: "A launch contract asks for what the arch does not give.",
    full: "The kernel's launch contract (__launch_bounds__ or @launch: threads, min blocks, max registers) \
           cannot be met on this arch, so ptxas ignores or overrides part of it.",
    help: "Change the contract to what the arch gives; the message says which limit is in the way.",
    level: Severity::Warning,
};

const UNBOUNDED: Rule = Rule {
    name: "NoLaunchContract",
    short: "A kernel has no launch contract.",
    full: "Without __launch_bounds__, ptxas may use so many registers that large blocks cannot launch; the \
           kernel was checked only at the host block size.",
    help: "Add __launch_bounds__(threads) (or @launch) with the largest block size the host launches.",
    level: Severity::Warning,
};

const MAX_REGS: Rule = Rule {
    name: "RegisterCapSpills",
    short: "A register cap forces spills.",
    full: "The kernel uses every register its contract's cap allows and still spills: the cap is what \
           forces the spills.",
    help: "Raise the register cap (max_regs, __maxnreg__) or lower the kernel's register pressure.",
    level: Severity::Warning,
};

const NEW: Rule = Rule {
    name: "NotInBaseline",
    short: "A kernel or arch is not in the baseline.",
    full: "The baseline has no record of this kernel on this arch, so no regression is checked for it.",
    help: "Record it with `cargo launch check --bless` and commit the baseline.",
    level: Severity::Note,
};

const CONFIG: Rule = Rule {
    name: "UnknownKernelSettings",
    short: "Kernel settings name no kernel.",
    full: "A [package.metadata.launch.kernel.<name>] table matches no kernel, so its settings (a spill \
           budget, a dynamic shared-memory size) apply to nothing.",
    help: "Correct the kernel name in Cargo.toml; the message lists the kernels of the package.",
    level: Severity::Warning,
};

const EMPTY: Rule = Rule {
    name: "NothingToCheck",
    short: "A package's kernel folder holds no kernel.",
    full: "The package uses launch-build but its kernel folder has no .cu file or no kernel in them, so the \
           gate would pass having checked nothing.",
    help: "Point `kernels` in [package.metadata.launch] at the folder that holds the .cu files.",
    level: Severity::Warning,
};

const BASELINE: Rule = Rule {
    name: "StaleBaseline",
    short: "The baseline is out of date.",
    full: "The baseline is in an old format, or records kernels of a checked arch that were not built \
           (renamed, removed or moved), which would leave them unchecked without a word.",
    help: "If the change is intended, re-bless with `cargo launch check --bless` and commit the baseline.",
    level: Severity::Warning,
};

const COMPILE: Rule = Rule {
    name: "KernelBuildFailed",
    short: "The kernels did not build.",
    full: "NVRTC or ptxas refused a kernel file, or launch-build refused it first: a bad `@launch`, a bad \
           [package.metadata.launch] setting, host code in a kernel file. Nothing else is checked until it builds.",
    help: "Fix the error at its line; the build's full log (cargo's output) has the compiler's message and \
           excerpt.",
    level: Severity::Error,
};

const DRIVER: Rule = Rule {
    name: "NoImageForMinDriver",
    short: "Nothing embedded would load on the oldest driver the crate must run on.",
    full: "On the driver `min-driver` names, no embedded image of a listed arch loads (its cubins come from a \
           newer CUDA major, its PTX has a newer ISA than that driver JITs), or a GPU newer than every listed \
           arch would find no PTX that driver JITs.",
    help: "Raise `min-driver`, or build with an older toolchain whose cubins and PTX that driver takes.",
    level: Severity::Error,
};

/// The SARIF log: the top-level object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Log {
    /// [`SCHEMA_URI`].
    #[serde(rename = "$schema")]
    pub(crate) schema: String,
    /// [`VERSION`].
    pub(crate) version: String,
    /// Exactly one.
    pub(crate) runs: Vec<Run>,
}

/// One run of the tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Run {
    /// `cargo-launch` and its rules.
    pub(crate) tool: Tool,
    /// `%SRCROOT%` → the repository root as a `file:` URI, when it was given.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) original_uri_base_ids: BTreeMap<String, ArtifactLocation>,
    /// One per finding.
    pub(crate) results: Vec<SarifResult>,
}

/// `tool`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Tool {
    /// The tool itself.
    pub(crate) driver: Driver,
}

/// `tool.driver`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Driver {
    /// `cargo-launch`.
    pub(crate) name: String,
    /// The tool's version.
    pub(crate) version: String,
    /// The same version, as semver (GitHub shows it).
    pub(crate) semantic_version: String,
    /// Every rule, also those with no result this run (a result's `ruleIndex` points here).
    pub(crate) rules: Vec<ReportingDescriptor>,
}

/// A rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReportingDescriptor {
    /// `launch/<kind>`.
    pub(crate) id: String,
    /// PascalCase name.
    pub(crate) name: String,
    /// One line.
    pub(crate) short_description: Message,
    /// What it means.
    pub(crate) full_description: Message,
    /// What to do.
    pub(crate) help: Message,
    /// The level of most of its results.
    pub(crate) default_configuration: Configuration,
}

/// `defaultConfiguration`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Configuration {
    /// Error, warning or note.
    pub(crate) level: Severity,
}

/// A plain-text message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Message {
    /// The text.
    pub(crate) text: String,
}

/// One finding (SARIF's `result`; named so as not to shadow `Result`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SarifResult {
    /// `launch/<kind>`.
    pub(crate) rule_id: String,
    /// Index of the rule in `tool.driver.rules`.
    pub(crate) rule_index: usize,
    /// Error, warning or note.
    pub(crate) level: Severity,
    /// What is wrong.
    pub(crate) message: Message,
    /// Exactly one.
    pub(crate) locations: Vec<Location>,
    /// [`FINGERPRINT_KEY`] → a hash of what identifies the finding (see [`document`]).
    pub(crate) partial_fingerprints: BTreeMap<String, String>,
    /// Package, kernel and arch, for readers that filter.
    pub(crate) properties: Properties,
}

/// A result's property bag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Properties {
    /// Package ("" when about none).
    pub(crate) package: String,
    /// Kernel, when about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kernel: Option<String>,
    /// Arch, when about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) arch: Option<String>,
}

/// `location`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Location {
    /// The file and line.
    pub(crate) physical_location: PhysicalLocation,
}

/// `physicalLocation`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PhysicalLocation {
    /// The file.
    pub(crate) artifact_location: ArtifactLocation,
    /// The line; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) region: Option<Region>,
}

/// `artifactLocation`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ArtifactLocation {
    /// Relative to `uriBaseId` when that is set, else absolute.
    pub(crate) uri: String,
    /// [`SRCROOT`] for a result's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) uri_base_id: Option<String>,
}

/// `region`: the line, and the column where a compiler gave one (ptxas and the manifest tell
/// only the line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Region {
    /// 1-based.
    pub(crate) start_line: u32,
    /// 1-based; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) start_column: Option<u32>,
}

/// The SARIF log of `alerts` (in their order) from `cargo-launch` `tool_version`. With `root` (the
/// repository root the alerts' URIs are relative to), `%SRCROOT%` is also given as a `file:` URI
/// so that a local viewer can open the files; GitHub uses its checkout either way.
///
/// Fingerprints hash the rule, package, file, kernel and arch (and the message for a finding
/// about no kernel, whose message names what it is about), never the line or the numbers: a
/// kernel that moves or spills a little more stays the same alert. Equal hashes (two contract
/// notes of one kernel) are told apart by a `:<n>` occurrence suffix, as GitHub's own
/// `primaryLocationLineHash` does.
pub(crate) fn document(alerts: &[Alert], tool_version: &str, root: Option<&Path>) -> Log {
    let mut rules: Vec<ReportingDescriptor> = FindingKind::ALL.into_iter().map(descriptor).collect();
    let mut index: BTreeMap<FindingKind, usize> = FindingKind::ALL.into_iter().zip(0..).collect();
    let mut occurrences: BTreeMap<String, usize> = BTreeMap::new();
    let mut results = Vec::with_capacity(alerts.len());
    for a in alerts {
        // Every kind is in `ALL`; should one be left out of it, its result still points at its
        // own rule (appended) rather than at none.
        let rule_index = *index.entry(a.kind).or_insert_with(|| {
            rules.push(descriptor(a.kind));
            rules.len() - 1
        });
        let hash = fingerprint(a);
        let n = occurrences.entry(hash.clone()).or_default();
        *n += 1;
        results.push(SarifResult {
            rule_id: rule_id(a.kind),
            rule_index,
            level: a.level,
            message: Message { text: a.message.to_string() },
            locations: vec![Location {
                physical_location: PhysicalLocation {
                    artifact_location: ArtifactLocation { uri: a.uri.clone(), uri_base_id: Some(SRCROOT.into()) },
                    region: (a.line > 0)
                        .then_some(Region { start_line: a.line, start_column: (a.col > 0).then_some(a.col) }),
                },
            }],
            partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY.to_string(), format!("{hash}:{n}"))]),
            properties: Properties {
                package: a.package.to_string(),
                kernel: a.kernel.map(str::to_string),
                arch: a.arch.map(str::to_string),
            },
        });
    }
    let original_uri_base_ids = root
        .and_then(file_uri)
        .map(|uri| BTreeMap::from([(SRCROOT.to_string(), ArtifactLocation { uri, uri_base_id: None })]))
        .unwrap_or_default();
    Log {
        schema: SCHEMA_URI.into(),
        version: VERSION.into(),
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "cargo-launch".into(),
                    version: tool_version.into(),
                    semantic_version: tool_version.into(),
                    rules,
                },
            },
            original_uri_base_ids,
            results,
        }],
    }
}

/// Writes the log as indented JSON and a final newline.
pub(crate) fn write(out: &mut impl Write, log: &Log) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, log).map_err(io::Error::from)?;
    writeln!(out)
}

/// `launch/<kind>`.
fn rule_id(kind: FindingKind) -> String {
    format!("launch/{}", kind.id())
}

fn descriptor(kind: FindingKind) -> ReportingDescriptor {
    let r = rule(kind);
    ReportingDescriptor {
        id: rule_id(kind),
        name: r.name.into(),
        short_description: Message { text: r.short.into() },
        full_description: Message { text: r.full.into() },
        help: Message { text: r.help.into() },
        default_configuration: Configuration { level: r.level },
    }
}

/// The first 16 hex digits of the SHA-256 of what identifies an alert (a stable hash: the
/// standard library's hasher may change between releases).
fn fingerprint(a: &Alert) -> String {
    let mut h = Sha256::new();
    // Each field ends with a NUL, which no field holds, so ("ab", "c") and ("a", "bc") differ.
    let what = if a.kernel.is_none() { a.message } else { "" };
    for field in [a.kind.id(), a.package, &a.uri, a.kernel.unwrap_or(""), a.arch.unwrap_or(""), what] {
        h.update(field.as_bytes());
        h.update([0]);
    }
    h.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// `path` relative to `root` as a URI reference (`/` between segments, anything but letters,
/// digits and `-._~` percent-encoded, so a `:` or a space cannot change its meaning); `None` when
/// `path` is not inside `root` or leaves it through `..`.
pub(crate) fn relative_uri(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut segments = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => segments.push(encode(&s.to_string_lossy())),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!segments.is_empty()).then(|| segments.join("/"))
}

/// `file:///…/` for an absolute folder (the trailing `/` makes it a base that relative URIs
/// resolve under); `None` for a relative path or a Windows prefix other than a drive letter.
fn file_uri(dir: &Path) -> Option<String> {
    let mut uri = String::from("file://");
    let mut absolute = false;
    for c in dir.components() {
        match c {
            Component::Prefix(p) => match p.kind() {
                std::path::Prefix::Disk(d) | std::path::Prefix::VerbatimDisk(d) => {
                    uri.push('/');
                    uri.push(char::from(d));
                    uri.push(':');
                }
                _ => return None,
            },
            Component::RootDir => absolute = true,
            Component::Normal(s) => {
                uri.push('/');
                uri.push_str(&encode(&s.to_string_lossy()));
            }
            Component::CurDir | Component::ParentDir => return None,
        }
    }
    uri.push('/');
    absolute.then_some(uri)
}

/// Percent-encodes one path segment (RFC 3986: only unreserved characters stay as they are).
fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests;

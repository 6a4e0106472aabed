//! The rules about one kernel (or tune variant) on one arch: what `cargo launch check` finds in
//! its analysis, under its settings, and against its baseline record. Each returns the severity,
//! the rule and the detail; the caller places them (package, kernel name, file and line).

use super::{Detail, FindingKind, KernelReport, Severity};

/// The rules about one kernel on one arch, given its spill budget (`max-spill-bytes`, the
/// kernel's own or the crate's): a launch that fails (error), spills over the budget (error) or
/// without one (warning), a stack that cannot be sized statically (warning), what the contract
/// asks that the arch does not give (warning), no contract (warning), a `max_regs` cap that
/// forces spills (warning).
pub fn kernel_findings(r: &KernelReport, spill_budget: Option<u32>) -> Vec<(Severity, FindingKind, Detail)> {
    let mut out = Vec::new();
    let o = &r.occupancy;
    if let Some(failure) = r.launch_failure {
        out.push((
            Severity::Error,
            FindingKind::Launch,
            Detail::Launch {
                threads: o.threads,
                threads_from: o.threads_from,
                failure,
                largest_block: r.largest_block,
                bounded: r.contract.is_some(),
            },
        ));
    }
    let res = &r.resources;
    let spills = res.spill_bytes();
    let detail = |budget| Detail::Spills { stores: res.spill_stores, loads: res.spill_loads, budget };
    match spill_budget {
        Some(budget) if spills > budget => out.push((Severity::Error, FindingKind::Spills, detail(Some(budget)))),
        None if spills > 0 => out.push((Severity::Warning, FindingKind::Spills, detail(None))),
        _ => {}
    }
    if let Some(stack) = &r.dynamic_stack {
        out.push((Severity::Warning, FindingKind::Stack, Detail::Stack(stack.clone())));
    }
    for n in &r.notes {
        out.push((Severity::Warning, FindingKind::Contract, Detail::Contract(*n)));
    }
    if r.contract.is_none() {
        out.push((
            Severity::Warning,
            FindingKind::Unbounded,
            Detail::Unbounded { threads: o.threads, largest_block: r.largest_block },
        ));
    }
    if let (Some(c), Some(cap)) = (&r.contract, r.register_cap) {
        if c.max_regs.is_some() && spills > 0 && res.registers >= cap {
            out.push((Severity::Warning, FindingKind::MaxRegs, Detail::MaxRegs { cap, spill_bytes: spills }));
        }
    }
    out
}

/// [`kernel_findings`] for a tune variant: its warnings are notes, since a grid trades spills and
/// register caps for occupancy on purpose and the tuner measures which wins; its errors (a launch
/// that fails, a spill budget exceeded) stay errors, since the program may launch any variant.
pub fn variant_findings(r: &KernelReport, spill_budget: Option<u32>) -> Vec<(Severity, FindingKind, Detail)> {
    let mut out = kernel_findings(r, spill_budget);
    for (severity, _, _) in &mut out {
        if *severity == Severity::Warning {
            *severity = Severity::Note;
        }
    }
    out
}

/// The baseline rule for one kernel on one arch, given what got worse since its record (`None`:
/// the baseline has no record of it): a regression is an error, a kernel or arch the baseline
/// lacks a note (`--bless` records it), nothing worse nothing.
pub fn baseline_finding(worse: Option<Vec<String>>) -> Option<(Severity, FindingKind, Detail)> {
    match worse {
        None => Some((Severity::Note, FindingKind::New, Detail::NotInBaseline)),
        Some(changes) if changes.is_empty() => None,
        Some(changes) => Some((Severity::Error, FindingKind::Regression, Detail::Regression { changes })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{analyze, HostLaunch};
    use launch::{Arch, Contract, ContractSource, Resources};

    const HOST: HostLaunch = HostLaunch { threads: 256, dynamic_smem: 0 };

    fn report(registers: u32, spills: u32, max_regs: Option<u32>) -> KernelReport {
        let contract = Contract {
            source: ContractSource::LaunchBounds,
            threads: Some(128),
            min_blocks: None,
            max_regs,
            exact: false,
        };
        let res = Resources { registers, spill_stores: spills, spill_loads: spills, ..Default::default() };
        analyze("sm_90".parse::<Arch>().unwrap(), &res, Some(contract), HOST).unwrap()
    }

    fn kinds(f: &[(Severity, FindingKind, Detail)]) -> Vec<(Severity, FindingKind)> {
        f.iter().map(|(s, k, _)| (*s, *k)).collect()
    }

    #[test]
    fn a_variants_warnings_are_notes_and_its_errors_stay_errors() {
        let r = report(32, 8, Some(32));
        assert_eq!(
            kinds(&kernel_findings(&r, None)),
            [(Severity::Warning, FindingKind::Spills), (Severity::Warning, FindingKind::MaxRegs)]
        );
        assert_eq!(
            kinds(&variant_findings(&r, None)),
            [(Severity::Note, FindingKind::Spills), (Severity::Note, FindingKind::MaxRegs)]
        );
        assert_eq!(
            kinds(&variant_findings(&r, Some(4))),
            [(Severity::Error, FindingKind::Spills), (Severity::Note, FindingKind::MaxRegs)]
        );
    }

    #[test]
    fn a_max_regs_cap_that_forces_spills_is_a_warning() {
        let (_, kind, detail) = kernel_findings(&report(32, 8, Some(32)), None).pop().unwrap();
        assert_eq!(kind, FindingKind::MaxRegs);
        assert_eq!(detail.to_string(), "the cap of 32 registers per thread forces 16 bytes of spills");
        assert!(kernel_findings(&report(32, 0, Some(32)), None).is_empty(), "no spills, no finding");
    }

    #[test]
    fn the_baseline_rule_flags_regressions_and_notes_new_records() {
        let (severity, kind, detail) = baseline_finding(None).unwrap();
        assert_eq!((severity, kind, detail), (Severity::Note, FindingKind::New, Detail::NotInBaseline));
        assert_eq!(baseline_finding(Some(Vec::new())), None, "nothing worse");
        let (severity, kind, detail) = baseline_finding(Some(vec!["registers 32 → 40 (+8)".into()])).unwrap();
        assert_eq!((severity, kind), (Severity::Error, FindingKind::Regression));
        assert_eq!(detail.to_string(), "since the baseline: registers 32 → 40 (+8)");
    }
}

//! Each entry's stack as the driver will see it (see `launch_analysis::DynamicStack`): a
//! recursion the PTX's call graph reaches (every toolchain), or ptxas's own warning that the size
//! cannot be determined (13.5), after which the driver reports no local memory for the entry.

use std::collections::BTreeMap;

use launch::Resources;
use launch_analysis::DynamicStack;

use crate::names::demangle;
use crate::ptx::calls::recursive_entries;
use crate::ptxas_log::PtxasLog;

/// The entries of one arch's PTX and ptxas log whose stack is not static, by symbol.
pub(crate) fn dynamic_stacks(ptx: &str, log: &PtxasLog) -> BTreeMap<String, DynamicStack> {
    let frame = |f: &str| log.function(f).map(|r| r.stack_frame);
    let mut out: BTreeMap<String, DynamicStack> = recursive_entries(ptx, frame)
        .into_iter()
        .map(|(entry, r)| {
            let through = r.cycle.iter().map(|f| demangle(f)).collect();
            (entry, DynamicStack { through, ptxas_frame: 0, ptxas_warned: false })
        })
        .collect();
    for entry in log.warnings().filter_map(|d| undetermined_stack(&d.message)) {
        out.entry(entry.to_string())
            .or_insert_with(|| DynamicStack { through: Vec::new(), ptxas_frame: 0, ptxas_warned: false })
            .ptxas_warned = true;
    }
    for (entry, d) in &mut out {
        d.ptxas_frame = log.entry(entry).map_or(0, |e| e.resources.stack_frame);
    }
    out
}

/// The resources the driver will report for an entry ptxas printed as `printed`: no local memory
/// where ptxas warned that the stack size cannot be determined (the H200's driver reports
/// `LOCAL_SIZE_BYTES` 0 for such a cubin of ptxas 13.5), the printed numbers otherwise.
pub(crate) fn as_the_driver_reports(printed: Resources, stack: Option<&DynamicStack>) -> Resources {
    match stack {
        Some(d) if d.ptxas_warned => Resources { stack_frame: 0, ..printed },
        _ => printed,
    }
}

/// `Stack size for entry function 'k_fib' cannot be statically determined` → `k_fib`.
fn undetermined_stack(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("Stack size for entry function '")?;
    let (name, tail) = rest.split_once('\'')?;
    tail.trim().starts_with("cannot be statically determined").then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_13_5s_warning_names_the_entry() {
        let m = "Stack size for entry function 'k_frame_fib' cannot be statically determined";
        assert_eq!(undetermined_stack(m), Some("k_frame_fib"));
        assert_eq!(undetermined_stack("Stack size for entry function 'k' is 8 bytes"), None);
        assert_eq!(undetermined_stack("Stack size for entry function 'k"), None);
        assert_eq!(undetermined_stack(".minnctapersm is ignored"), None);
    }

    #[test]
    fn the_driver_reports_no_local_memory_only_where_ptxas_warned() {
        let printed = Resources { stack_frame: 160, cumulative_stack: 160, registers: 40, ..Resources::default() };
        let warned = DynamicStack { through: vec!["fib(int)".into()], ptxas_frame: 160, ptxas_warned: true };
        let silent = DynamicStack { ptxas_warned: false, ..warned.clone() };
        let driver = as_the_driver_reports(printed, Some(&warned));
        assert_eq!((driver.stack_frame, driver.cumulative_stack, driver.registers), (0, 160, 40));
        assert_eq!(as_the_driver_reports(printed, Some(&silent)), printed);
        assert_eq!(as_the_driver_reports(printed, None), printed);
    }
}

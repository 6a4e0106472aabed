//! The GPU driver against what the crate embeds: pure, so it is tested without a GPU.

use launch::compat::CudaVersion;
use launch_engine::compat as driver_rules;
use launch_schema::doctor::Problem;

/// What a driver of CUDA version `driver` (from `cuDriverGetVersion`) cannot do for a crate whose
/// `min-driver` is `min_driver` and whose toolchain `toolkit` wrote its cubins and PTX: an empty
/// list when it runs everything.
pub(crate) fn problems(driver: CudaVersion, min_driver: Option<CudaVersion>, toolkit: CudaVersion) -> Vec<Problem> {
    let mut out = Vec::new();
    let linux =
        |v: CudaVersion| v.toolkit().and_then(|t| t.linux_driver).map(|d| format!(" (Linux {d}+)")).unwrap_or_default();
    if let Some(min) = min_driver.filter(|m| driver < *m) {
        out.push(Problem {
            blocking: false,
            what: format!("this machine's driver is CUDA {driver}, older than the crate's `min-driver` {min}"),
            fix: format!("update the driver to CUDA {min} or newer{}", linux(min)),
        });
    }
    if !driver_rules::cubin_loads_on(toolkit, driver) {
        let need = driver_rules::min_driver_for_cubin(toolkit);
        out.push(Problem {
            blocking: false,
            what: format!("cubins built by CUDA {toolkit} do not load on this CUDA {driver} driver"),
            fix: format!("update the driver to CUDA {need} or newer{}", linux(need)),
        });
    }
    if let Some(isa) = toolkit.toolkit().map(|t| t.ptx_isa).filter(|isa| !driver_rules::ptx_jits_on(*isa, driver)) {
        let need = driver_rules::min_driver_for_ptx(isa).unwrap_or(toolkit);
        out.push(Problem {
            blocking: false,
            what: format!(
                "the crate's PTX (ISA {}.{}, CUDA {toolkit}) is refused by this CUDA {driver} driver on GPUs without a \
                 cubin (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)",
                isa.0, isa.1
            ),
            fix: format!("update the driver to CUDA {need} or newer{}", linux(need)),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> CudaVersion {
        driver_rules::parse_version(s).unwrap()
    }

    #[test]
    fn a_driver_older_than_min_driver_is_named_with_its_fix() {
        let p = problems(v("12.2"), Some(v("12.4")), v("12.9"));
        assert_eq!(p.len(), 2, "{p:#?}");
        assert_eq!(p[0].what, "this machine's driver is CUDA 12.2, older than the crate's `min-driver` 12.4");
        assert_eq!(p[0].fix, "update the driver to CUDA 12.4 or newer (Linux 550.54.14+)");
        // ISA 8.8 needs 12.9.
        assert!(p[1].what.starts_with("the crate's PTX (ISA 8.8, CUDA 12.9) is refused"), "{}", p[1].what);
        assert_eq!(p[1].fix, "update the driver to CUDA 12.9 or newer (Linux 575.51.03+)");
    }

    #[test]
    fn a_new_enough_driver_has_no_problem_and_a_12_x_driver_cannot_load_13_0_cubins() {
        assert!(problems(v("13.0"), Some(v("12.4")), v("12.9")).is_empty());
        assert!(problems(v("12.9"), None, v("12.9")).is_empty());
        let p = problems(v("12.9"), None, v("13.0"));
        assert_eq!(p[0].what, "cubins built by CUDA 13.0 do not load on this CUDA 12.9 driver");
        assert_eq!(p[0].fix, "update the driver to CUDA 13.0 or newer (Linux 580.65.06+)");
        assert_eq!(p.len(), 2);
    }
}

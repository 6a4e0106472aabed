use std::path::PathBuf;
use std::time::Duration;

use super::key::EMPTY;
use super::outcome::FALSE;
use super::report::rank;
use super::*;
use crate::occupancy::{self, Carveout, DeviceLimits, FunctionAttrs};
use crate::tune::{kernel_hash, Winner};
use crate::{Contract, ContractSource, Cubin, Module};

fn timed(variant: &'static str, ms: &[f64]) -> Row {
    let mut row = Row::new(variant, None, Status::Timed(Timing::of(ms).unwrap()));
    row.registers = Some(40);
    row.spill_bytes = Some(0);
    // 40 registers at 256 threads on an H200: 6 blocks, 75 %.
    let h200 = DeviceLimits::lookup(9, 0).unwrap();
    row.threads = Some(256);
    row.occupancy = occupancy::occupancy(h200, &FunctionAttrs::new(40, 0, 1), 256, 0, Carveout::Default).ok();
    row
}

fn report(rows: Vec<Row>, statistic: Statistic) -> Result<TuneReport, TuneError> {
    TuneReport::new("k", "n=2^20", "NVIDIA H200 (sm_90)", statistic, (3, 5), rows, Duration::from_millis(1500))
        .map_err(|rows| TuneError::NothingTimed { kernel: "k", rows })
}

#[test]
fn timing_statistics_of_odd_and_even_counts() {
    let t = Timing::of(&[3.0, 1.0, 2.0]).unwrap();
    assert_eq!((t.median_ms, t.min_ms, t.max_ms, t.mean_ms, t.repetitions), (2.0, 1.0, 3.0, 2.0, 3));
    let t = Timing::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
    assert_eq!((t.median_ms, t.mean_ms), (2.5, 2.5));
    assert_eq!(t.get(Statistic::Median), 2.5);
    assert_eq!(t.get(Statistic::Min), 1.0);
    assert_eq!(t.get(Statistic::Mean), 2.5);
    assert_eq!(Timing::of(&[]), None);
    assert_eq!(Timing::of(&[1.0, f64::NAN]), None);
    assert_eq!(Timing::of(&[1.0, -0.5]), None);
    assert_eq!(Timing::of(&[f64::INFINITY]), None);
}

#[test]
fn the_fastest_by_the_statistic_wins_and_the_relative_column_is_to_it() {
    // By the median `b` wins; by the minimum `a` (one lucky launch) does.
    let rows = || vec![timed("a", &[0.5, 3.0, 3.0]), timed("b", &[2.0, 2.0, 2.0]), timed("c", &[4.0, 4.0, 4.0])];
    let r = report(rows(), Statistic::Median).unwrap();
    assert_eq!(r.winner().variant, "b");
    let rel: Vec<f64> = r.rows.iter().map(|r| r.relative.unwrap()).collect();
    assert_eq!(rel, [1.5, 1.0, 2.0]);
    assert_eq!(report(rows(), Statistic::Min).unwrap().winner().variant, "a");
    // Means: a 2.1667, b 2, c 4.
    assert_eq!(report(rows(), Statistic::Mean).unwrap().winner().variant, "b");
}

#[test]
fn a_tie_goes_to_the_earlier_candidate() {
    let r = report(vec![timed("plain", &[1.0]), timed("variant", &[1.0])], Statistic::Median).unwrap();
    assert_eq!(r.winner, 0);
    let mut rows =
        vec![Row::new("refused", None, Status::Refused("no".into())), timed("x", &[1.0]), timed("y", &[1.0])];
    assert_eq!(rank(&mut rows, Statistic::Median), Some(1));
    assert_eq!(rows[0].relative, None);
    assert_eq!(rows[2].relative, Some(1.0));
}

#[test]
fn a_wrong_refused_or_failed_variant_is_never_crowned_however_fast() {
    let mut wrong = timed("fast_but_wrong", &[0.001]);
    wrong.status = Status::Wrong("y[0] = NaN, expected 1.5".into());
    let rows = vec![
        wrong,
        Row::new("refused", None, Status::Refused("`k` on sm_90: 512 threads ...".into())),
        Row::new("failed", None, Status::Failed("not loaded: no image".into())),
        timed("slow_but_right", &[9.0]),
    ];
    let r = report(rows, Statistic::Median).unwrap();
    assert_eq!(r.winner().variant, "slow_but_right");
    assert_eq!(r.winner_record(7).variant, "slow_but_right");
    assert!(r.rows[..3].iter().all(|row| row.relative.is_none()));
}

#[test]
fn nothing_timed_is_a_typed_error_that_lists_each_reason() {
    let rows = vec![
        Row::new("k", None, Status::Refused("512 threads need 86,016 registers".into())),
        Row::new("k_lb", None, Status::Wrong("the correctness check returned false".into())),
    ];
    let e = report(rows, Statistic::Median).unwrap_err();
    assert!(matches!(&e, TuneError::NothingTimed { rows, .. } if rows.len() == 2));
    assert_eq!(
        e.to_string(),
        "no variant of `k` could be timed; k: refused (512 threads need 86,016 registers); k_lb: wrong (the \
         correctness check returned false)"
    );
    let none = report(Vec::new(), Statistic::Median).unwrap_err();
    assert_eq!(none.to_string(), "no variant of `k` to time: the candidate list is empty");
}

#[test]
fn a_zero_time_best_gives_finite_relatives_where_it_can() {
    let mut rows = vec![timed("a", &[0.0]), timed("b", &[0.0]), timed("c", &[1.0])];
    assert_eq!(rank(&mut rows, Statistic::Median), Some(0));
    assert_eq!(rows.iter().map(|r| r.relative.unwrap()).collect::<Vec<_>>(), [1.0, 1.0, f64::INFINITY]);
}

#[test]
fn the_winner_record_is_what_the_cache_stores() {
    let r = report(vec![timed("a", &[2.0, 1.0, 3.0]), timed("b", &[5.0])], Statistic::Median).unwrap();
    assert_eq!(
        r.winner_record(1_700_000_000),
        Winner {
            variant: "a".into(),
            median_ms: 2.0,
            min_ms: 1.0,
            max_ms: 3.0,
            repetitions: 3,
            measured_at: 1_700_000_000
        }
    );
}

#[test]
fn the_table_lists_every_variant_marks_the_winner_and_gives_the_reasons() {
    let c = Contract {
        source: ContractSource::Annotation,
        threads: Some(256),
        min_blocks: Some(2),
        max_regs: None,
        exact: true,
    };
    let mut b = timed("poly_eval_t256", &[0.25, 0.25, 0.3]);
    b.contract = Some(c);
    let mut refused = Row::new("poly_eval", None, Status::Refused("`poly_eval` on sm_90: 167 registers × 512".into()));
    refused.registers = Some(167);
    refused.spill_bytes = Some(0);
    let mut r = report(vec![refused, timed("poly_eval_lb384", &[0.5, 0.5, 0.5]), b], Statistic::Median).unwrap();
    r.stored = Ok(PathBuf::from("/cache/0123456789abcdef.tune"));
    let text = r.to_string();
    let want = "\
tune `k` for `n=2^20` on NVIDIA H200 (sm_90): 2 of 3 candidates timed, median of 5 launches after 3 warm-ups each, 1.50 s
   variant          contract         regs  spill B  block      occupancy  median ms  min ms  max ms  vs best
   poly_eval        none              167        0      -              -          -       -       -  refused
   poly_eval_lb384  none               40        0    256  6 blk, 75.0 %     0.5000  0.5000  0.5000   2.000×
*  poly_eval_t256   @launch(256, 2)    40        0    256  6 blk, 75.0 %     0.2500  0.2500  0.3000   1.000×
poly_eval refused: `poly_eval` on sm_90: 167 registers × 512
winner: poly_eval_t256, remembered in /cache/0123456789abcdef.tune";
    assert_eq!(text, want, "\n{text}");
    r.stored = Err("no folder for the tune cache".into());
    assert!(r.to_string().ends_with("winner: poly_eval_t256, not remembered: no folder for the tune cache"));
}

#[test]
fn verdicts_accept_true_unit_and_ok_and_reject_the_rest_with_a_reason() {
    assert_eq!(true.verdict(), Ok(()));
    assert_eq!(().verdict(), Ok(()));
    assert_eq!(false.verdict(), Err(FALSE.to_string()));
    assert_eq!(Ok::<bool, String>(true).verdict(), Ok(()));
    assert_eq!(Ok::<bool, String>(false).verdict(), Err(FALSE.to_string()));
    assert_eq!(Err::<bool, _>("y[3] = 7, expected 8").verdict(), Err("y[3] = 7, expected 8".to_string()));
    assert_eq!(Ok::<(), String>(()).verdict(), Ok(()));
    assert_eq!(Err::<(), _>(std::fmt::Error).verdict(), Err("an error occurred when formatting an argument".into()));
}

const SM_90: crate::Arch = crate::Arch::new(9, 0, crate::Variant::Base);
const fn module(file: &'static str, cubins: &'static [Cubin]) -> Module {
    Module { file, cubins, ptx_arch: Some(SM_90), ptx: "", extra_ptx: &[] }
}
static M1: Module = module("a.cu", &[Cubin { arch: SM_90, bytes: b"one" }]);
static M2: Module = module("b.cu", &[Cubin { arch: SM_90, bytes: b"two" }]);
const fn kernel(name: &'static str, module: &'static Module, variants: &'static [Kernel]) -> Kernel {
    Kernel {
        name,
        demangled: name,
        line: 1,
        module,
        contract: None,
        host_threads: 256,
        resources: &[],
        variants,
        params: None,
    }
}
static VARIANTS: [Kernel; 2] = [kernel("k_r64", &M1, &[]), kernel("k_r32", &M1, &[])];
static K: Kernel = kernel("k", &M1, &VARIANTS);
static K_LB: Kernel = kernel("k_lb", &M1, &[]);
static OTHER: Kernel = kernel("other", &M2, &[]);

#[test]
fn the_candidates_are_the_kernel_then_its_variants() {
    let names: Vec<&str> = with_variants(&K).iter().map(|k| k.name).collect();
    assert_eq!(names, ["k", "k_r64", "k_r32"]);
    assert_eq!(with_variants(&K_LB).len(), 1);
}

#[test]
fn the_candidates_hash_is_the_kernel_hash_for_one_module_and_covers_every_module_otherwise() {
    let device = crate::tune::DeviceKey { name: "H200".into(), compute_capability: (9, 0), driver_version: 13000 };
    let same = [&K, &K_LB];
    assert_eq!(candidates_hash(&same), TuneKey::new(&K, &same, device, "p").kernel);
    assert_eq!(candidates_hash(&same), kernel_hash(&K));
    let mixed = [&K, &OTHER];
    assert_ne!(candidates_hash(&mixed), kernel_hash(&K));
    assert_ne!(candidates_hash(&mixed), candidates_hash(&[&K, &K_LB, &OTHER][..2]));
    // Memoised: the same answer again, without rehashing.
    assert_eq!(candidates_hash(&mixed), candidates_hash(&mixed));
    assert_eq!(candidates_hash(&[]), kernel_hash(&EMPTY));
}

#[test]
fn progress_lines_say_what_became_of_each_variant() {
    let line = progress_line(1, 4, &timed("k_r64", &[1.0, 2.0, 3.0]), Duration::from_millis(1200));
    assert_eq!(line, "  [2/4] k_r64: median 2.0000 ms (min 1.0000, max 3.0000) (1.2 s)");
    let refused = Row::new("k", None, Status::Refused("too many registers".into()));
    assert_eq!(progress_line(0, 4, &refused, Duration::ZERO), "  [1/4] k: refused: too many registers (0.0 s)");
}

#[test]
fn tune_errors_name_the_policy() {
    assert!(TuneError::Off.to_string().starts_with("LAUNCH_TUNE=off: this program may not time kernels"));
    let bad = crate::tune::TunePolicy::parse(Some(std::ffi::OsStr::new("sometimes"))).unwrap_err();
    assert!(TuneError::Policy(bad).to_string().contains("`sometimes`"));
}

//! What a tuning run found, as plain data: the statistics of each variant's timed launches, the
//! ranking, the winner and the table. No GPU here, so all of it is unit-tested.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::occupancy::Occupancy;
use crate::tune::Winner;
use crate::Contract;

/// Which number of a variant's timed launches ranks it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Statistic {
    /// The median (the default): robust to the odd slow launch.
    #[default]
    Median,
    /// The fastest launch.
    Min,
    /// The arithmetic mean.
    Mean,
}

impl fmt::Display for Statistic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Statistic::Median => "median",
            Statistic::Min => "min",
            Statistic::Mean => "mean",
        })
    }
}

/// The statistics of one variant's timed launches, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// The median (of an even count, the mean of the middle two).
    pub median_ms: f64,
    /// The fastest launch.
    pub min_ms: f64,
    /// The slowest launch.
    pub max_ms: f64,
    /// The mean.
    pub mean_ms: f64,
    /// How many launches.
    pub repetitions: u32,
}

impl Timing {
    /// The statistics of `ms`; `None` when it is empty or holds a value that is not a finite,
    /// non-negative time.
    pub(crate) fn of(ms: &[f64]) -> Option<Timing> {
        if ms.is_empty() || ms.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return None;
        }
        let mut sorted = ms.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        Some(Timing {
            median_ms: median,
            min_ms: sorted[0],
            max_ms: sorted[n - 1],
            mean_ms: sorted.iter().sum::<f64>() / n as f64,
            repetitions: u32::try_from(n).unwrap_or(u32::MAX),
        })
    }

    /// The number `statistic` ranks by.
    pub(crate) fn get(&self, statistic: Statistic) -> f64 {
        match statistic {
            Statistic::Median => self.median_ms,
            Statistic::Min => self.min_ms,
            Statistic::Mean => self.mean_ms,
        }
    }
}

/// What became of one variant.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Its launches were timed.
    Timed(Timing),
    /// The launch check refused its launch on this device (nothing reached the driver): why.
    Refused(String),
    /// The correctness hook rejected its result: why.
    Wrong(String),
    /// It did not load, or a launch or the driver failed: why.
    Failed(String),
}

impl Status {
    /// `timed`, `refused`, `wrong`, `failed`.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Status::Timed(_) => "timed",
            Status::Refused(_) => "refused",
            Status::Wrong(_) => "wrong",
            Status::Failed(_) => "failed",
        }
    }

    /// The reason of a variant that was not timed.
    pub(crate) fn reason(&self) -> Option<&str> {
        match self {
            Status::Timed(_) => None,
            Status::Refused(why) | Status::Wrong(why) | Status::Failed(why) => Some(why),
        }
    }
}

/// One variant in a [`TuneReport`].
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The variant's symbol name.
    pub variant: &'static str,
    /// Its launch contract.
    pub contract: Option<Contract>,
    /// Registers per thread, as the driver loaded it (`None`: it did not load).
    pub registers: Option<u32>,
    /// Spill stores + loads in bytes, as ptxas reported them (`None` for a JIT-compiled PTX).
    pub spill_bytes: Option<u32>,
    /// Threads per block of the launch it was timed with (`None`: unknown).
    pub threads: Option<u32>,
    /// Occupancy at that block size, by the calculator (`None`: unknown).
    pub occupancy: Option<Occupancy>,
    /// Timed, or why not.
    pub status: Status,
    /// Its ranking statistic over the winner's (1.0 for the winner); set when the tuner ranks the rows.
    pub relative: Option<f64>,
}

impl Row {
    /// A row with only a name, a contract and a status (what is known of a variant that did not
    /// load).
    pub(crate) fn new(variant: &'static str, contract: Option<Contract>, status: Status) -> Row {
        Row {
            variant,
            contract,
            registers: None,
            spill_bytes: None,
            threads: None,
            occupancy: None,
            status,
            relative: None,
        }
    }

    /// Its timing, when it was timed.
    pub fn timing(&self) -> Option<&Timing> {
        match &self.status {
            Status::Timed(t) => Some(t),
            _ => None,
        }
    }
}

/// The index of the winner among `rows` by `statistic` (ties go to the earlier row: the plain
/// kernel comes first, so it wins a tie), and each timed row's statistic relative to the winner's.
/// `None` when no row was timed.
pub(crate) fn rank(rows: &mut [Row], statistic: Statistic) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, row) in rows.iter().enumerate() {
        if let Some(t) = row.timing() {
            let v = t.get(statistic);
            if best.is_none_or(|(_, b)| v < b) {
                best = Some((i, v));
            }
        }
    }
    let (winner, b) = best?;
    for row in rows.iter_mut() {
        row.relative = row.timing().map(|t| relative(t.get(statistic), b));
    }
    Some(winner)
}

fn relative(v: f64, best: f64) -> f64 {
    if best > 0.0 {
        v / best
    } else if v == best {
        1.0
    } else {
        f64::INFINITY
    }
}

/// A tuning run: every candidate with what became of it, and the winner.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneReport {
    /// The kernel tuned (the first candidate).
    pub kernel: &'static str,
    /// The caller's problem key.
    pub problem: String,
    /// The device, as `NVIDIA H200 (sm_90)`.
    pub device: String,
    /// What ranks the variants.
    pub statistic: Statistic,
    /// Untimed launches per variant before timing.
    pub warmup: u32,
    /// Timed launches per variant.
    pub repetitions: u32,
    /// One per candidate, in the candidates' order.
    pub rows: Vec<Row>,
    /// The index of the winner in `rows`.
    pub(crate) winner: usize,
    /// How long the whole run took.
    pub elapsed: Duration,
    /// Where the winner was remembered, or why it was not.
    pub stored: Result<PathBuf, String>,
}

impl TuneReport {
    /// Ranks `rows` (see [`rank`]) into a report; `stored` starts as "not stored".
    ///
    /// # Errors
    /// The rows back when none was timed (all refused, wrong or failed, or no rows).
    pub(crate) fn new(
        kernel: &'static str,
        problem: impl Into<String>,
        device: impl Into<String>,
        statistic: Statistic,
        (warmup, repetitions): (u32, u32),
        mut rows: Vec<Row>,
        elapsed: Duration,
    ) -> Result<TuneReport, Vec<Row>> {
        let Some(winner) = rank(&mut rows, statistic) else { return Err(rows) };
        Ok(TuneReport {
            kernel,
            problem: problem.into(),
            device: device.into(),
            statistic,
            warmup,
            repetitions,
            rows,
            winner,
            elapsed,
            stored: Err("not stored".into()),
        })
    }

    /// The winner's row.
    pub fn winner(&self) -> &Row {
        &self.rows[self.winner]
    }

    /// The winner as the tune cache stores it, measured at `measured_at` (seconds since the
    /// Unix epoch).
    pub(crate) fn winner_record(&self, measured_at: u64) -> Winner {
        let row = self.winner();
        let t = row.timing().copied().unwrap_or(Timing {
            median_ms: 0.0,
            min_ms: 0.0,
            max_ms: 0.0,
            mean_ms: 0.0,
            repetitions: 0,
        });
        Winner {
            variant: row.variant.to_string(),
            median_ms: t.median_ms,
            min_ms: t.min_ms,
            max_ms: t.max_ms,
            repetitions: t.repetitions,
            measured_at,
        }
    }
}

const HEADER: [&str; 11] =
    ["", "variant", "contract", "regs", "spill B", "block", "occupancy", "median ms", "min ms", "max ms", "vs best"];
/// Which columns are right-aligned (numbers).
const RIGHT: [bool; 11] = [false, false, false, true, true, true, true, true, true, true, true];

fn cells(row: &Row, winner: bool) -> [String; 11] {
    let opt = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
    let t = row.timing();
    [
        if winner { "*".into() } else { String::new() },
        row.variant.to_string(),
        row.contract.map_or("none".into(), |c| c.to_string()),
        opt(row.registers),
        opt(row.spill_bytes),
        opt(row.threads),
        row.occupancy.map_or("-".into(), |o| format!("{} blk, {:.1} %", o.active_blocks, o.percent())),
        ms(t.map(|t| t.median_ms)),
        ms(t.map(|t| t.min_ms)),
        ms(t.map(|t| t.max_ms)),
        match (&row.status, row.relative) {
            (Status::Timed(_), Some(r)) => format!("{r:.3}×"),
            (status, _) => status.word().into(),
        },
    ]
}

/// The table: one line per variant (the winner marked `*`), then the reason of each variant that
/// was not timed, then where the winner was remembered.
impl fmt::Display for TuneReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "tune `{}` for `{}` on {}: {} of {} candidates timed, {} of {} launches after {} warm-ups each, {:.2} s",
            self.kernel,
            self.problem,
            self.device,
            self.rows.iter().filter(|r| r.timing().is_some()).count(),
            self.rows.len(),
            self.statistic,
            self.repetitions,
            self.warmup,
            self.elapsed.as_secs_f64()
        )?;
        let lines: Vec<[String; 11]> = std::iter::once(HEADER.map(String::from))
            .chain(self.rows.iter().enumerate().map(|(i, r)| cells(r, i == self.winner)))
            .collect();
        let widths: Vec<usize> =
            (0..HEADER.len()).map(|c| lines.iter().map(|l| l[c].chars().count()).max().unwrap_or(0)).collect();
        for line in &lines {
            let mut text = String::new();
            for (c, cell) in line.iter().enumerate() {
                let pad = " ".repeat(widths[c] - cell.chars().count());
                if c > 0 {
                    text.push_str("  ");
                }
                if RIGHT[c] {
                    text.push_str(&pad);
                    text.push_str(cell);
                } else {
                    text.push_str(cell);
                    text.push_str(&pad);
                }
            }
            writeln!(f, "{}", text.trim_end())?;
        }
        for row in &self.rows {
            if let Some(why) = row.status.reason() {
                writeln!(f, "{} {}: {why}", row.variant, row.status.word())?;
            }
        }
        let w = self.winner();
        write!(f, "winner: {}", w.variant)?;
        match &self.stored {
            Ok(path) => write!(f, ", remembered in {}", path.display()),
            Err(why) => write!(f, ", not remembered: {why}"),
        }
    }
}

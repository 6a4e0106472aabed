//! The tuner's vocabulary: what a correctness hook answers, when progress shows, and what a
//! tuning run or a cache lookup returns, or why it failed.

use std::fmt;

use super::report::{Row, TuneReport};
use crate::cuda::error::Error;
use crate::cuda::kernel::LoadedKernel;
use crate::tune::{Miss, TunePolicyError, Winner};
use crate::Kernel;
#[cfg(doc)]
use {super::Tuner, crate::tune::TuneCache};

/// What a correctness hook may answer: `true`/`()`/`Ok(true)`/`Ok(())` accept the variant;
/// `false`, `Ok(false)` and any `Err` reject it (the error's text is the reason).
pub trait Verdict {
    /// `Err(reason)` when the variant computed the wrong result.
    fn verdict(self) -> Result<(), String>;
}

pub(super) const FALSE: &str = "the correctness check returned false";

impl Verdict for bool {
    fn verdict(self) -> Result<(), String> {
        if self {
            Ok(())
        } else {
            Err(FALSE.into())
        }
    }
}

impl Verdict for () {
    fn verdict(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: fmt::Display> Verdict for Result<bool, E> {
    fn verdict(self) -> Result<(), String> {
        self.map_err(|e| e.to_string())?.verdict()
    }
}

impl<E: fmt::Display> Verdict for Result<(), E> {
    fn verdict(self) -> Result<(), String> {
        self.map_err(|e| e.to_string())
    }
}

/// When the tuner reports its progress on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Progress {
    /// Once a run has taken more than a second (the default): a line per variant from then on.
    #[default]
    Auto,
    /// A line per variant, always.
    Always,
    /// Never.
    Never,
}

/// Why a tuning run or a cache lookup failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum TuneError {
    /// `LAUNCH_TUNE=off`: this program may not time kernels.
    Off,
    /// `LAUNCH_TUNE` holds something else than `off`, `cached` or `always`.
    Policy(TunePolicyError),
    /// No candidate was timed (or there were none): each row says why.
    NothingTimed {
        /// The kernel tuned.
        kernel: &'static str,
        /// Every candidate, none timed.
        rows: Vec<Row>,
    },
    /// A driver call of the tuner's own (events, synchronisation) or loading the winner failed.
    Cuda(Error),
}

impl fmt::Display for TuneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuneError::Off => f.write_str(
                "LAUNCH_TUNE=off: this program may not time kernels (unset it, or set `cached` or `always`)",
            ),
            TuneError::Policy(e) => e.fmt(f),
            TuneError::NothingTimed { kernel, rows } if rows.is_empty() => {
                write!(f, "no variant of `{kernel}` to time: the candidate list is empty")
            }
            TuneError::NothingTimed { kernel, rows } => {
                write!(f, "no variant of `{kernel}` could be timed")?;
                for row in rows {
                    write!(f, "; {}: {} ({})", row.variant, row.status.word(), row.status.reason().unwrap_or("-"))?;
                }
                Ok(())
            }
            TuneError::Cuda(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TuneError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TuneError::Policy(e) => Some(e),
            TuneError::Cuda(e) => Some(e),
            TuneError::Off | TuneError::NothingTimed { .. } => None,
        }
    }
}

impl From<Error> for TuneError {
    fn from(e: Error) -> Self {
        TuneError::Cuda(e)
    }
}

/// What [`Tuner::lookup`] found.
#[derive(Clone, Debug)]
pub enum Recall {
    /// The remembered winner, one of the candidates.
    Hit {
        /// The winning candidate.
        kernel: &'static Kernel,
        /// How it did when it was timed.
        winner: Winner,
    },
    /// No usable winner, and why.
    Miss(Miss),
}

/// A finished tuning run: the report and the winner, loaded.
#[derive(Debug)]
pub struct Tuned {
    /// Every candidate's row and the winner.
    pub report: TuneReport,
    /// The winner, loaded (its last approved launch is the probe's).
    pub best: LoadedKernel,
}

/// What [`Tuner::best_or_tune`] chose, and how.
#[derive(Debug)]
pub struct Chosen {
    /// The variant to launch.
    pub kernel: LoadedKernel,
    /// The tuning run, when there was one (`None`: a cache hit, or `LAUNCH_TUNE=off`).
    pub report: Option<TuneReport>,
}

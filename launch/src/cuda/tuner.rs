//! The tuner ([`Tuner`], documented there) and what it answers.

mod key;
mod outcome;
mod report;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};

pub use outcome::{Chosen, Progress, Recall, TuneError, Tuned, Verdict};
pub use report::{Row, Statistic, Status, Timing, TuneReport};

use key::{candidates_hash, with_variants};

use super::device::Device;
use super::error::guarded;
use super::kernel::LoadedKernel;
use crate::tune::{variants_hash, DeviceKey, Miss, NoCacheDir, TuneCache, TuneKey, TunePolicy, TunePolicyError};
use crate::Kernel;

type Hook<'a> = Box<dyn FnMut(&LoadedKernel, &Arc<CudaStream>) -> Result<(), String> + 'a>;

/// Times a kernel's variants on one device and remembers the fastest.
///
/// ```no_run
/// use launch::cuda::{cudarc::driver::{LaunchConfig, PushKernelArg}, Device, Tuner};
/// # fn close(got: &[f32], want: &[f32]) -> bool { got == want }
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # static MODULE: launch::Module = launch::Module {
/// #     file: "kernels/poly.cu", cubins: &[], ptx: "", extra_ptx: &[],
/// #     ptx_arch: Some(launch::Arch::new(9, 0, launch::Variant::Base)),
/// # };
/// # static POLY_EVAL: launch::Kernel = launch::Kernel {
/// #     name: "poly_eval", demangled: "poly_eval", line: 1, module: &MODULE, contract: None,
/// #     host_threads: 256, resources: &[], variants: &[], params: None,
/// # };
/// # let (n, want) = (1u32 << 20, vec![0.0f32; 1 << 20]);
///
/// let dev = Device::new(0)?;
/// let stream = dev.context().default_stream();
/// let x = stream.alloc_zeros::<f32>(n as usize)?;
/// let y = stream.alloc_zeros::<f32>(n as usize)?;
/// let mut tuner = Tuner::new(&dev).repetitions(50).verify(|_variant, stream| {
///     stream.synchronize()?;                               // the probe launch wrote `y`
///     Ok::<_, Box<dyn std::error::Error>>(close(&stream.clone_dtoh(&y)?, &want))
/// });
/// let tuned = tuner.tune(&POLY_EVAL, "n=2^20", |variant, stream| {
///     let block = variant.kernel().block_size();
///     let cfg = LaunchConfig { grid_dim: (n.div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
///     let mut args = variant.builder(stream);
///     let n_arg = n as i32;
///     args.arg(&x).arg(&y).arg(&n_arg);
///     // SAFETY: poly_eval takes (const float*, float*, int) and touches elements below n only.
///     unsafe { variant.launch(&mut args, cfg) }.map(|_| ())
/// })?;
/// println!("{}", tuned.report);                          // the table
/// // Next run: the winner, no timing (a file read and a module lookup: microseconds).
/// let k = tuner.best(&POLY_EVAL, "n=2^20")?.expect("tuned before");
/// # let _ = k;
/// # Ok(())
/// # }
/// ```
///
/// * **Candidates**: [`Tuner::tune`] takes the kernel and its build-time variants
///   ([`Kernel::variants`]), the plain kernel first; [`Tuner::tune_candidates`] any list.
/// * **Per candidate**: load it (a failure is listed, not fatal); one probe launch through the
///   caller's closure, whose checked launch the check may refuse (listed as refused with the
///   reason, never timed); the correctness hook ([`Tuner::verify`]) once (a variant it rejects is
///   listed as wrong, never crowned); the warm-up launches; then each timed launch between two
///   CUDA events recorded around the closure, all enqueued before one synchronisation.
/// * **Ranking**: by the [`Statistic`] (median by default; min, max and mean kept); a tie goes to
///   the earlier candidate.
/// * **Memory**: the winner is stored in the [`TuneCache`] under a [`TuneKey`] of the candidates'
///   code, their names and contracts, the device and driver, and the problem key.
///
/// `LAUNCH_TUNE` ([`TunePolicy`]) decides: `off` — [`Tuner::tune`] is refused
/// ([`TuneError::Off`]), [`Tuner::best`] reads nothing and answers `None`, and
/// [`Tuner::best_or_tune`] loads the plain kernel; `cached` (the default) — `best` answers from
/// the cache, `tune` times when called, `best_or_tune` times only on a miss; `always` — `best`
/// answers `None` without reading, so every `best_or_tune` times and overwrites the winner.
pub struct Tuner<'a> {
    device: &'a Device,
    stream: Option<Arc<CudaStream>>,
    warmup: u32,
    repetitions: u32,
    statistic: Statistic,
    progress: Progress,
    cache: Result<TuneCache, NoCacheDir>,
    policy: Result<TunePolicy, TunePolicyError>,
    verify: Option<Hook<'a>>,
}

impl fmt::Debug for Tuner<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tuner")
            .field("device", &self.device.info().name)
            .field("warmup", &self.warmup)
            .field("repetitions", &self.repetitions)
            .field("statistic", &self.statistic)
            .field("progress", &self.progress)
            .field("cache", &self.cache)
            .field("policy", &self.policy)
            .field("verify", &self.verify.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> Tuner<'a> {
    /// A tuner on `device`'s default stream: 3 warm-up and 20 timed launches per variant, ranked
    /// by the median; the cache and the policy from the environment (`LAUNCH_TUNE_CACHE_DIR`,
    /// `LAUNCH_TUNE`; a bad value is reported by the first call that needs it), with the fleet's
    /// remote store behind the cache when `LAUNCH_TUNE_CACHE_REMOTE` names one
    /// ([`TuneCache::from_env`]): a remembered winner found there is used before any timing run.
    pub fn new(device: &'a Device) -> Tuner<'a> {
        Tuner {
            device,
            stream: None,
            warmup: 3,
            repetitions: 20,
            statistic: Statistic::Median,
            progress: Progress::Auto,
            cache: TuneCache::from_env(),
            policy: TunePolicy::from_env(),
            verify: None,
        }
    }

    /// Untimed launches per variant before timing.
    pub fn warmup(mut self, launches: u32) -> Self {
        self.warmup = launches;
        self
    }

    /// Timed launches per variant (at least 1).
    pub fn repetitions(mut self, launches: u32) -> Self {
        self.repetitions = launches.max(1);
        self
    }

    /// What ranks the variants.
    pub fn statistic(mut self, statistic: Statistic) -> Self {
        self.statistic = statistic;
        self
    }

    /// Where winners are remembered.
    pub fn cache(mut self, cache: TuneCache) -> Self {
        self.cache = Ok(cache);
        self
    }

    /// What the tuner may do, instead of `LAUNCH_TUNE`.
    pub fn policy(mut self, policy: TunePolicy) -> Self {
        self.policy = Ok(policy);
        self
    }

    /// When to report progress on stderr.
    pub fn progress(mut self, progress: Progress) -> Self {
        self.progress = progress;
        self
    }

    /// The stream the launches go to (the default: the context's default stream).
    pub fn stream(mut self, stream: Arc<CudaStream>) -> Self {
        self.stream = Some(stream);
        self
    }

    /// A correctness hook, run once per variant after its probe launch and before its timing;
    /// a variant it rejects (see [`Verdict`]) is listed as wrong and never wins. The probe
    /// launch's work is on the stream, not yet synchronised. Capture buffers the launch closure
    /// also uses by shared reference (`args.arg(&y)` pushes the same pointer as `&mut y`).
    pub fn verify<V: Verdict>(mut self, mut hook: impl FnMut(&LoadedKernel, &Arc<CudaStream>) -> V + 'a) -> Self {
        self.verify = Some(Box::new(move |k: &LoadedKernel, s: &Arc<CudaStream>| hook(k, s).verdict()));
        self
    }

    fn policy_now(&self) -> Result<TunePolicy, TuneError> {
        self.policy.clone().map_err(TuneError::Policy)
    }

    /// The cache key of `candidates` on this device for `problem`.
    pub(crate) fn key(&self, candidates: &[&'static Kernel], problem: &str) -> TuneKey {
        TuneKey {
            kernel: candidates_hash(candidates),
            variants: variants_hash(candidates),
            device: DeviceKey::from(self.device.info()),
            problem: problem.to_string(),
        }
    }

    /// Times `kernel` and every variant of it ([`Kernel::variants`]), the plain kernel first;
    /// see [`Tuner::tune_candidates`].
    ///
    /// # Errors
    /// As [`Tuner::tune_candidates`].
    pub fn tune<E: fmt::Display>(
        &mut self,
        kernel: &'static Kernel,
        problem: &str,
        launch: impl FnMut(&LoadedKernel, &Arc<CudaStream>) -> Result<(), E>,
    ) -> Result<Tuned, TuneError> {
        self.tune_candidates(&with_variants(kernel), problem, launch)
    }

    /// Times each of `candidates` with `launch` (which pushes the arguments and launches the
    /// variant it is given, through [`LoadedKernel::launch`] so that the check sees it), ranks
    /// them, and stores the winner in the cache (whether it was is in the report: a cache that
    /// cannot be written does not fail the run). Times whatever the cache holds: to use a
    /// remembered winner, [`Tuner::best`] or [`Tuner::best_or_tune`].
    ///
    /// # Errors
    /// [`TuneError::Off`] under `LAUNCH_TUNE=off`; [`TuneError::NothingTimed`] when no candidate
    /// was timed; a failing event, synchronisation, or load of the winner.
    pub fn tune_candidates<E: fmt::Display>(
        &mut self,
        candidates: &[&'static Kernel],
        problem: &str,
        mut launch: impl FnMut(&LoadedKernel, &Arc<CudaStream>) -> Result<(), E>,
    ) -> Result<Tuned, TuneError> {
        if !self.policy_now()?.times() {
            return Err(TuneError::Off);
        }
        let name = candidates.first().map_or("(none)", |k| k.name);
        let start = Instant::now();
        let stream = self.stream.clone().unwrap_or_else(|| self.device.context().default_stream());
        let events = self.events()?;
        let mut rows = Vec::with_capacity(candidates.len());
        let mut loaded = Vec::with_capacity(candidates.len());
        let mut announced = false;
        for (i, &kernel) in candidates.iter().enumerate() {
            let (row, k) = self.measure(kernel, &stream, &events, &mut launch);
            let show = match self.progress {
                Progress::Always => true,
                Progress::Never => false,
                Progress::Auto => start.elapsed() > Duration::from_secs(1),
            };
            if show {
                if !announced {
                    eprintln!("tuning `{name}` for `{problem}`: {} candidates", candidates.len());
                    announced = true;
                }
                eprintln!("{}", progress_line(i, candidates.len(), &row, start.elapsed()));
            }
            rows.push(row);
            loaded.push(k);
        }
        let info = self.device.info();
        let device = format!("{} ({})", info.name, info.arch());
        let mut report = TuneReport::new(
            name,
            problem,
            device,
            self.statistic,
            (self.warmup, self.repetitions),
            rows,
            start.elapsed(),
        )
        .map_err(|rows| TuneError::NothingTimed { kernel: name, rows })?;
        let best = match loaded.swap_remove(report.winner) {
            Some(k) => k,
            None => self.device.load(candidates[report.winner])?,
        };
        let measured_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        report.stored = match &self.cache {
            Ok(cache) => {
                let key = self.key(candidates, problem);
                cache
                    .put(&key, &report.winner_record(measured_at))
                    .map(|()| cache.path(&key))
                    .map_err(|e| format!("cannot write {}: {e}", cache.path(&key).display()))
            }
            Err(e) => Err(e.to_string()),
        };
        Ok(Tuned { report, best })
    }

    /// `repetitions` pairs of timing events, shared by every candidate of a run.
    fn events(&self) -> Result<Vec<(CudaEvent, CudaEvent)>, TuneError> {
        let ctx = self.device.context();
        let new = || guarded("creating a timing event", || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)));
        (0..self.repetitions).map(|_| Ok((new()?, new()?))).collect()
    }

    /// One candidate: load, probe, verify, warm up, time. Never an error: what went wrong is
    /// the row's status.
    fn measure<E: fmt::Display>(
        &mut self,
        kernel: &'static Kernel,
        stream: &Arc<CudaStream>,
        events: &[(CudaEvent, CudaEvent)],
        launch: &mut impl FnMut(&LoadedKernel, &Arc<CudaStream>) -> Result<(), E>,
    ) -> (Row, Option<LoadedKernel>) {
        let mut row = Row::new(kernel.name, kernel.contract, Status::Failed(String::new()));
        let k = match self.device.load(kernel) {
            Ok(k) => k,
            Err(e) => {
                row.status = Status::Failed(format!("not loaded: {e}"));
                return (row, None);
            }
        };
        row.registers = Some(k.function_info().registers);
        row.spill_bytes = k.embedded().map(|r| r.spill_bytes());
        row.status = self.run(&k, stream, events, launch);
        // The block of the probe's checked launch; for a closure that launched unchecked, the
        // kernel's own block size.
        (row.threads, row.occupancy) = match k.last_approved() {
            Some((_, _, a)) => (Some(a.threads), Some(a.occupancy)),
            None => (Some(kernel.block_size()), k.occupancy(kernel.block_size(), 0).ok()),
        };
        (row, Some(k))
    }

    fn run<E: fmt::Display>(
        &mut self,
        k: &LoadedKernel,
        stream: &Arc<CudaStream>,
        events: &[(CudaEvent, CudaEvent)],
        launch: &mut impl FnMut(&LoadedKernel, &Arc<CudaStream>) -> Result<(), E>,
    ) -> Status {
        let sync = |stream: &CudaStream| guarded("synchronising the stream", || stream.synchronize());
        let refusals = k.refusals();
        if let Err(e) = launch(k, stream) {
            // A refusal is counted by the check: tell it from the closure's or the driver's error.
            return if k.refusals() > refusals {
                Status::Refused(e.to_string())
            } else {
                Status::Failed(e.to_string())
            };
        }
        if let Some(verify) = self.verify.as_mut() {
            if let Err(why) = verify(k, stream) {
                return Status::Wrong(why);
            }
        }
        for _ in 0..self.warmup {
            if let Err(e) = launch(k, stream) {
                return Status::Failed(format!("warm-up launch: {e}"));
            }
        }
        if let Err(e) = sync(stream) {
            return Status::Failed(e.to_string());
        }
        for (start, end) in events {
            let recorded = guarded("recording a timing event", || start.record(stream));
            if let Err(e) = recorded {
                return Status::Failed(e.to_string());
            }
            if let Err(e) = launch(k, stream) {
                return Status::Failed(format!("timed launch: {e}"));
            }
            if let Err(e) = guarded("recording a timing event", || end.record(stream)) {
                return Status::Failed(e.to_string());
            }
        }
        if let Err(e) = sync(stream) {
            return Status::Failed(e.to_string());
        }
        let mut ms = Vec::with_capacity(events.len());
        for (start, end) in events {
            match guarded("reading a timing event", || start.elapsed_ms(end)) {
                Ok(v) => ms.push(f64::from(v)),
                Err(e) => return Status::Failed(e.to_string()),
            }
        }
        match Timing::of(&ms) {
            Some(t) => Status::Timed(t),
            None => Status::Failed(format!("the events gave no time: {ms:?}")),
        }
    }

    /// What the cache remembers for `candidates` and `problem`, without loading anything.
    ///
    /// # Errors
    /// A bad `LAUNCH_TUNE` value.
    pub fn lookup(&self, candidates: &[&'static Kernel], problem: &str) -> Result<Recall, TuneError> {
        match self.policy_now()? {
            TunePolicy::Off => return Ok(Recall::Miss(Miss::Off)),
            TunePolicy::Always => return Ok(Recall::Miss(Miss::Always)),
            TunePolicy::Cached => {}
        }
        let Ok(cache) = &self.cache else { return Ok(Recall::Miss(Miss::NoCacheDir)) };
        Ok(match cache.get(&self.key(candidates, problem)) {
            Ok(winner) => match candidates.iter().find(|k| k.name == winner.variant) {
                Some(&kernel) => Recall::Hit { kernel, winner },
                None => Recall::Miss(Miss::UnknownVariant(winner.variant)),
            },
            Err(miss) => Recall::Miss(miss),
        })
    }

    /// The remembered winner among `kernel` and its variants, loaded, with no timing; `None` on
    /// a miss and whenever `LAUNCH_TUNE` is `off` or `always` (see [`Tuner::lookup`] for why).
    ///
    /// # Errors
    /// A bad `LAUNCH_TUNE` value; the winner failing to load.
    pub fn best(&self, kernel: &'static Kernel, problem: &str) -> Result<Option<LoadedKernel>, TuneError> {
        self.best_of(&with_variants(kernel), problem)
    }

    /// [`Tuner::best`] for an explicit candidate list (as given to [`Tuner::tune_candidates`]).
    ///
    /// # Errors
    /// As [`Tuner::best`].
    pub fn best_of(&self, candidates: &[&'static Kernel], problem: &str) -> Result<Option<LoadedKernel>, TuneError> {
        match self.lookup(candidates, problem)? {
            Recall::Hit { kernel, .. } => Ok(Some(self.device.load(kernel)?)),
            Recall::Miss(_) => Ok(None),
        }
    }

    /// What a program calls before its launches: under `off` the plain kernel; under `cached` the
    /// remembered winner, or a tuning run on a miss; under `always` a tuning run.
    ///
    /// # Errors
    /// As [`Tuner::best`] and [`Tuner::tune`].
    pub fn best_or_tune<E: fmt::Display>(
        &mut self,
        kernel: &'static Kernel,
        problem: &str,
        launch: impl FnMut(&LoadedKernel, &Arc<CudaStream>) -> Result<(), E>,
    ) -> Result<Chosen, TuneError> {
        let candidates = with_variants(kernel);
        if self.policy_now()? == TunePolicy::Off {
            return Ok(Chosen { kernel: self.device.load(kernel)?, report: None });
        }
        if let Some(k) = self.best_of(&candidates, problem)? {
            return Ok(Chosen { kernel: k, report: None });
        }
        let tuned = self.tune_candidates(&candidates, problem, launch)?;
        Ok(Chosen { kernel: tuned.best, report: Some(tuned.report) })
    }
}

fn progress_line(i: usize, n: usize, row: &Row, elapsed: Duration) -> String {
    let what = match &row.status {
        Status::Timed(t) => format!("median {:.4} ms (min {:.4}, max {:.4})", t.median_ms, t.min_ms, t.max_ms),
        other => format!("{}: {}", other.word(), other.reason().unwrap_or("")),
    };
    format!("  [{}/{n}] {}: {what} ({:.1} s)", i + 1, row.variant, elapsed.as_secs_f64())
}

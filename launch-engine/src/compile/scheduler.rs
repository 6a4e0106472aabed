//! The jobserver scheduler: runs a build's jobs side by side, one per job slot, the longest
//! first, and keeps every job's result. It knows nothing of compilers or the cache: a job is an
//! index and a function ([`parallel`]); [`crate::compile::cached`] decides which jobs run.
//!
//! # Parallelism
//! Cargo gives every build script one job slot (the process's implicit token) and a jobserver to
//! ask for more (`CARGO_MAKEFLAGS`). Here the implicit token runs one job, and every extra token
//! the jobserver hands out runs one more, on a scoped thread that returns its token as soon as no
//! job is left. Tokens are requested one at a time, only while unclaimed jobs remain, from
//! `jobserver`'s helper thread, so a request that cargo never grants (`cargo build -j1`, or every
//! slot busy with other crates) costs nothing and is cancelled at the end. No thread pool is sized
//! to the machine: `cargo build -j1` compiles one job at a time, `-jN` at most N. Nothing here
//! waits on a child that needs a token (ptxas does not use the jobserver), so holding a token
//! while ptxas runs cannot deadlock. Without a jobserver (the build script run by hand) a private
//! one is made with `NUM_JOBS` slots (counting the implicit one); without either, jobs run one at a
//! time. The last job to start can take the slots that are free at that moment for itself
//! ([`Tokens::spare`]): a `host` file's nvcc then compiles its arches side by side.
//!
//! # Order and failures
//! Jobs start longest first ([`start_order`]: the last compile time the cache recorded, else the
//! size of the file and its headers), so a lopsided folder's one slow file does not start last.
//! Results are collected in job order whatever order the jobs finish in. A job that does not
//! compile does not stop the others: every job runs and every failing file is reported
//! ([`Error::Failed`], in file order). Only a failure of the tools themselves
//! ([`stops_the_build`]) stops new jobs from starting.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};

use crate::env::{var, Env};
use crate::error::Error;

/// Where extra job slots come from.
#[derive(Debug, Clone)]
pub enum Tokens {
    /// Only the implicit slot: one job at a time.
    Serial,
    /// A jobserver: cargo's (inherited) or a private one sized from `NUM_JOBS`.
    Jobserver {
        /// The client.
        client: jobserver::Client,
        /// Where it came from, for messages and statistics.
        origin: &'static str,
    },
}

impl Tokens {
    /// Up to `n` more job slots, only those free right now (never waiting: a slot another crate's
    /// job would take is not taken from it). Each is given back when dropped. None from a
    /// jobserver that cannot be asked without waiting, nor when serial.
    pub fn spare(&self, n: usize) -> Vec<jobserver::Acquired> {
        let Tokens::Jobserver { client, .. } = self else { return Vec::new() };
        let mut out = Vec::new();
        while out.len() < n {
            match client.try_acquire() {
                Ok(Some(token)) => out.push(token),
                // None free, or a jobserver that cannot say without waiting.
                Ok(None) | Err(_) => break,
            }
        }
        out
    }

    /// `cargo jobserver`, `NUM_JOBS`, or `serial`.
    pub fn describe(&self) -> &'static str {
        match self {
            Tokens::Serial => "serial",
            Tokens::Jobserver { origin, .. } => origin,
        }
    }
}

/// cargo's jobserver, adopted once per process.
fn inherited() -> Option<jobserver::Client> {
    static CLIENT: OnceLock<Option<jobserver::Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // SAFETY: `from_env_ext` adopts the two descriptors that CARGO_MAKEFLAGS names (or opens
            // the named FIFO). The hazard its docs warn about is a descriptor number that was closed
            // and then reused for another file before this call, which would make us read and write
            // someone else's file. Here: cargo hands the build script both descriptors open;
            // launch-build never closes a descriptor it did not open; std never closes descriptors it
            // does not own, and a newly opened file always takes the lowest *free* number, so it
            // cannot take one that is still open. Only a user build.rs that closes descriptors it
            // does not own before calling `launch_build::build()` could break that, and against it
            // `check_pipe = true` makes the crate verify (fstat) that both descriptors are pipes or
            // FIFOs, refusing anything else; we then fall back to NUM_JOBS. On Linux the crate
            // reopens them through /dev/fd, so cargo's descriptions are never made non-blocking.
            // Called at most once per process (OnceLock), and only from a build script.
            let from_env = unsafe { jobserver::Client::from_env_ext(true) };
            from_env.client.ok()
        })
        .clone()
}

/// The job slots of this run: cargo's jobserver in a build script, else a private one with
/// `NUM_JOBS` slots, else serial.
pub fn tokens(env: &Env) -> Tokens {
    if env.is_build_script() {
        if let Some(client) = inherited() {
            return Tokens::Jobserver { client, origin: "cargo jobserver" };
        }
    }
    let jobs = env.get(var::NUM_JOBS).and_then(|n| n.to_string_lossy().trim().parse::<usize>().ok()).unwrap_or(1);
    // The implicit slot is one of the NUM_JOBS.
    if jobs > 1 {
        if let Ok(client) = jobserver::Client::new(jobs - 1) {
            return Tokens::Jobserver { client, origin: "NUM_JOBS" };
        }
    }
    Tokens::Serial
}

enum Msg {
    Token(io::Result<jobserver::Acquired>),
    /// A worker claimed the last job, or stopped: time to look at whether to stop asking.
    Wake,
}

/// Whether a failed job stops the build: a failure of the tools themselves (cannot start, cannot
/// load NVRTC, cannot write the work folder) would fail every other job the same way. A file that
/// does not compile, a compile that timed out, a report that cannot be read concern that job
/// only: the other jobs still run, so one build shows every failing file.
pub fn stops_the_build(e: &Error) -> bool {
    !matches!(
        e,
        Error::Compile { .. } | Error::Report { .. } | Error::Kernels(_) | Error::ToolTimedOut { file: Some(_), .. }
    )
}

struct Shared<'o, T> {
    order: &'o [usize],
    next: AtomicUsize,
    stopped: AtomicBool,
    active: AtomicUsize,
    max_active: AtomicUsize,
    results: Mutex<Vec<Option<Result<T, Error>>>>,
}

impl<T> Shared<'_, T> {
    fn n(&self) -> usize {
        self.order.len()
    }

    fn done(&self) -> bool {
        self.stopped.load(Ordering::SeqCst) || self.next.load(Ordering::SeqCst) >= self.n()
    }

    /// Claims and runs jobs, in `order`, until none is left or one failed in a way that stops
    /// the build.
    fn work(&self, run: &(dyn Fn(usize) -> Result<T, Error> + Sync), wake: &mpsc::Sender<Msg>) {
        loop {
            if self.stopped.load(Ordering::SeqCst) {
                break;
            }
            let k = self.next.fetch_add(1, Ordering::SeqCst);
            let Some(&i) = self.order.get(k) else { break };
            if k + 1 == self.n() {
                let _ = wake.send(Msg::Wake);
            }
            let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_active.fetch_max(now, Ordering::SeqCst);
            let r = run(i);
            self.active.fetch_sub(1, Ordering::SeqCst);
            if r.as_ref().err().is_some_and(stops_the_build) {
                self.stopped.store(true, Ordering::SeqCst);
            }
            if let Some(slot) = self.results.lock().unwrap_or_else(|e| e.into_inner()).get_mut(i) {
                *slot = Some(r);
            }
        }
        let _ = wake.send(Msg::Wake);
    }
}

/// What [`parallel`] ran.
#[derive(Debug)]
pub struct Ran<T> {
    /// Each job's result, by job index; `None` for a job that never started because another
    /// failed in a way that [stops the build](stops_the_build).
    pub results: Vec<Option<Result<T, Error>>>,
    /// The most jobs that ran at once.
    pub max_active: usize,
}

impl<T> Ran<T> {
    #[cfg(test)]
    /// Every result, or the error of the lowest failed index.
    pub fn all(self) -> Result<Vec<T>, Error> {
        let mut out = Vec::with_capacity(self.results.len());
        for r in self.results {
            match r {
                Some(Ok(v)) => out.push(v),
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        Ok(out)
    }
}

/// Runs `run(i)` for every index in `order` (a permutation of `0..n`), starting them in that order,
/// one job per slot, and returns the results by index. Every job runs, whatever the others gave,
/// unless one fails in a way that [stops the build](stops_the_build): then no new job starts.
pub fn parallel<T: Send>(tokens: &Tokens, order: &[usize], run: impl Fn(usize) -> Result<T, Error> + Sync) -> Ran<T> {
    let n = order.len();
    let shared = Shared {
        order,
        next: AtomicUsize::new(0),
        stopped: AtomicBool::new(false),
        active: AtomicUsize::new(0),
        max_active: AtomicUsize::new(0),
        results: Mutex::new((0..n).map(|_| None).collect()),
    };
    let run: &(dyn Fn(usize) -> Result<T, Error> + Sync) = &run;
    let client = match tokens {
        Tokens::Jobserver { client, .. } if n > 1 => Some(client.clone()),
        _ => None,
    };
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<Msg>();
        // The implicit slot.
        {
            let tx = tx.clone();
            let shared = &shared;
            s.spawn(move || shared.work(run, &tx));
        }
        let helper = client.and_then(|c| {
            let tx = tx.clone();
            c.into_helper_thread(move |token| {
                let _ = tx.send(Msg::Token(token));
            })
            .ok()
        });
        if let Some(h) = &helper {
            h.request_token();
        }
        while !shared.done() {
            let Ok(msg) = rx.recv() else { break };
            match msg {
                Msg::Token(Ok(token)) => {
                    let unclaimed = n.saturating_sub(shared.next.load(Ordering::SeqCst));
                    if unclaimed == 0 || shared.stopped.load(Ordering::SeqCst) {
                        continue; // dropping the token gives it back
                    }
                    let tx = tx.clone();
                    let shared = &shared;
                    s.spawn(move || {
                        shared.work(run, &tx);
                        drop(token);
                    });
                    if unclaimed > 1 {
                        if let Some(h) = &helper {
                            h.request_token();
                        }
                    }
                }
                // The jobserver broke: carry on with the slots we have.
                Msg::Token(Err(_)) => {}
                Msg::Wake => {}
            }
        }
        // Cancels a pending request; a token acquired meanwhile is dropped, i.e. given back.
        drop(helper);
    });
    let max_active = shared.max_active.load(Ordering::SeqCst);
    let results = shared.results.into_inner().unwrap_or_else(|e| e.into_inner());
    Ran { results, max_active }
}

/// The order to start jobs in: longest expected first, so the one slow file of a lopsided folder
/// does not start last and run alone at the end. `cost[i]` is job `i`'s expected time: its last
/// compile time where the cache knows it, else its size (source plus headers, bytes) scaled by the
/// milliseconds per byte of the jobs that have a history (or just its size when none has). Ties
/// keep job order.
pub fn start_order(history: &[Option<u64>], bytes: &[u64]) -> Vec<usize> {
    let known: (u64, u64) = history
        .iter()
        .zip(bytes)
        .filter_map(|(h, &b)| h.map(|ms| (ms, b)))
        .fold((0, 0), |(m, b), (ms, by)| (m.saturating_add(ms), b.saturating_add(by)));
    let per_byte = if known.1 > 0 { known.0 as f64 / known.1 as f64 } else { 1.0 };
    let cost: Vec<f64> = history
        .iter()
        .zip(bytes)
        .map(|(h, &b)| match h {
            Some(ms) => *ms as f64,
            None => b as f64 * per_byte,
        })
        .collect();
    let mut order: Vec<usize> = (0..cost.len()).collect();
    // Stable: equal costs keep job order.
    order.sort_by(|&a, &b| cost[b].total_cmp(&cost[a]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn sleepy(i: usize) -> Result<usize, Error> {
        std::thread::sleep(Duration::from_millis(20));
        Ok(i * 10)
    }

    fn in_order(n: usize) -> Vec<usize> {
        (0..n).collect()
    }

    fn compile_error(i: usize) -> Error {
        Error::Compile { compiler: "NVRTC".into(), file: format!("job {i}"), arch: "sm_90".into(), log: String::new() }
    }

    #[test]
    fn serial_runs_one_at_a_time_in_order() {
        let ran = parallel(&Tokens::Serial, &in_order(5), sleepy);
        assert_eq!(ran.max_active, 1);
        assert_eq!(ran.all().unwrap(), [0, 10, 20, 30, 40]);
    }

    #[test]
    fn a_jobserver_with_one_extra_token_runs_two_at_once() {
        let client = jobserver::Client::new(1).unwrap();
        let tokens = Tokens::Jobserver { client: client.clone(), origin: "test" };
        let ran = parallel(&tokens, &in_order(8), sleepy);
        assert_eq!(ran.max_active, 2, "the implicit slot plus one token");
        assert_eq!(ran.all().unwrap(), (0..8).map(|i| i * 10).collect::<Vec<_>>());
        // Every token went back.
        assert_eq!(client.available().unwrap(), 1);
    }

    #[test]
    fn an_empty_jobserver_means_one_at_a_time_and_does_not_hang() {
        let client = jobserver::Client::new(1).unwrap();
        let held = client.acquire().unwrap();
        let tokens = Tokens::Jobserver { client: client.clone(), origin: "test" };
        let started = Instant::now();
        let ran = parallel(&tokens, &in_order(4), sleepy);
        assert_eq!(ran.max_active, 1);
        assert_eq!(ran.all().unwrap().len(), 4);
        assert!(started.elapsed() < Duration::from_secs(5), "cancelling the pending request took too long");
        drop(held);
        assert_eq!(client.available().unwrap(), 1);
    }

    /// Issue 10 item 5: before, the first failed job stopped the build and only its file was shown.
    #[test]
    fn every_job_runs_after_compile_failures_and_each_failure_is_kept() {
        let started = AtomicUsize::new(0);
        let ran = parallel(&Tokens::Serial, &in_order(10), |i| {
            started.fetch_add(1, Ordering::SeqCst);
            if i == 3 || i == 5 {
                Err(compile_error(i))
            } else {
                Ok(i)
            }
        });
        assert_eq!(started.load(Ordering::SeqCst), 10, "every job runs");
        let failed: Vec<usize> = (0..10).filter(|&i| matches!(ran.results[i], Some(Err(_)))).collect();
        assert_eq!(failed, [3, 5]);
        match ran.all() {
            Err(Error::Compile { file, .. }) => assert_eq!(file, "job 3", "the lowest index first"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_failure_of_the_tools_stops_new_jobs() {
        let started = AtomicUsize::new(0);
        let ran = parallel(&Tokens::Serial, &in_order(10), |i| {
            started.fetch_add(1, Ordering::SeqCst);
            if i == 3 {
                Err(Error::ToolNotFound { tool: "ptxas".into() })
            } else {
                Ok(i)
            }
        });
        assert_eq!(started.load(Ordering::SeqCst), 4);
        assert!(ran.results[4..].iter().all(Option::is_none));
        assert!(matches!(ran.all(), Err(Error::ToolNotFound { .. })));
    }

    #[test]
    fn with_many_tokens_every_failure_is_kept_by_index() {
        let client = jobserver::Client::new(3).unwrap();
        let tokens = Tokens::Jobserver { client, origin: "test" };
        for _ in 0..5 {
            let ran = parallel(&tokens, &in_order(6), |i| {
                // Job 1 fails late, job 4 fails early: both are kept, at their own index.
                std::thread::sleep(Duration::from_millis(if i == 1 { 60 } else { 5 }));
                if i == 1 || i == 4 {
                    Err(compile_error(i))
                } else {
                    Ok(i)
                }
            });
            let failed: Vec<usize> = (0..6).filter(|&i| matches!(ran.results[i], Some(Err(_)))).collect();
            assert_eq!(failed, [1, 4]);
            assert!(matches!(ran.all(), Err(Error::Compile { file, .. }) if file == "job 1"));
        }
    }

    #[test]
    fn jobs_start_in_the_given_order_and_results_come_back_by_index() {
        let starts = Mutex::new(Vec::new());
        let ran = parallel(&Tokens::Serial, &[2, 0, 3, 1], |i| {
            starts.lock().unwrap().push(i);
            Ok(i)
        });
        assert_eq!(*starts.lock().unwrap(), [2, 0, 3, 1]);
        assert_eq!(ran.all().unwrap(), [0, 1, 2, 3]);
    }

    /// Issue 10 item 11: before, jobs started in file order, so a folder whose largest file comes
    /// last ran it alone at the end.
    #[test]
    fn the_longest_jobs_start_first() {
        // No history: by size, ties in job order.
        assert_eq!(start_order(&[None, None, None, None], &[100, 5000, 100, 300]), [1, 3, 0, 2]);
        // History wins over size: job 0 was slow last time although it is small.
        assert_eq!(start_order(&[Some(9000), Some(100), None], &[10, 1000, 500]), [0, 2, 1]);
        // A job without history is scaled by the others' milliseconds per byte: 1000 bytes at
        // 2 ms/byte (2000 ms) comes before a 1500 ms job.
        assert_eq!(start_order(&[Some(1500), Some(200), None], &[750, 100, 1000]), [2, 0, 1]);
        assert!(start_order(&[], &[]).is_empty());
    }

    /// A lopsided folder (one job as long as the rest together): longest first lands on the
    /// floor max(sum / slots, longest); file order (the long job last) does not.
    #[test]
    fn longest_first_reaches_the_floor_on_a_lopsided_folder() {
        let cost_ms = [20u64, 20, 20, 20, 20, 20, 120];
        let bytes: Vec<u64> = cost_ms.iter().map(|c| c * 100).collect();
        let client = jobserver::Client::new(1).unwrap();
        let tokens = Tokens::Jobserver { client, origin: "test" };
        let time = |order: &[usize]| {
            let started = Instant::now();
            let ran = parallel(&tokens, order, |i| {
                std::thread::sleep(Duration::from_millis(cost_ms[i]));
                Ok(i)
            });
            assert_eq!(ran.all().unwrap().len(), cost_ms.len());
            started.elapsed()
        };
        let floor = Duration::from_millis(120);
        let longest_first = time(&start_order(&[None; 7], &bytes));
        let file_order = time(&in_order(7));
        assert!(longest_first < floor + Duration::from_millis(60), "{longest_first:?}");
        assert!(file_order >= Duration::from_millis(170), "{file_order:?}");
    }

    #[test]
    fn zero_jobs() {
        let ran = parallel(&Tokens::Serial, &[], sleepy);
        assert_eq!(ran.max_active, 0);
        assert!(ran.all().unwrap().is_empty());
    }
}

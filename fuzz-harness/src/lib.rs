//! The property/fuzz harness of the project's parsers. The targets live in the crates they fuzz,
//! as `#[cfg(test)] mod fuzz` (launch-engine: `src/fuzz/`, launch: `src/tune/fuzz.rs`,
//! cargo-launch: `src/fuzz.rs`), so they reach the parsers through `crate::` paths; this crate
//! depends on none of them.
//!
//! Each target generates inputs with a seeded PRNG: mutations of real inputs (the recorded ptxas
//! logs, the kernels of the template and the fixtures, the fixtures' PTX, rendered baselines and
//! manifests), inputs built from a grammar whose expected parse is known, and random bytes. Each
//! input is checked against properties (round trips, numbers that appear in the text, positions
//! that are where the text says), not only "does not panic"; a panic is caught and reported as a
//! failure with its input. Inputs are at most [`MAX_INPUT`] bytes (one scaling probe excepted), and
//! an input that takes longer than the per-input limit is a failure too, so a quadratic parser
//! shows up as one.
//!
//! Two ways to run:
//!
//! * **`cargo test`** (the default) is deterministic: each target checks the seeds recorded for it
//!   in `fuzz-harness/regressions.txt` (inputs that once failed, kept after their fix), then
//!   [`DEFAULT_INPUTS`] inputs from a fixed run seed of its own (the hash of its name). The same
//!   inputs on every machine and every run: a failure in CI is one a developer gets too.
//! * **The long run**, a separate command, draws a fresh random run seed and runs for a time
//!   budget per target (`LAUNCH_FUZZ_SECONDS`); what it finds is replayed with its seed and then
//!   recorded in `regressions.txt`.
//!
//! * `LAUNCH_FUZZ_SECONDS`: the long run, this many seconds per target with a random run seed.
//! * `LAUNCH_FUZZ_INPUTS`: the deterministic run's input count per target (default
//!   [`DEFAULT_INPUTS`]).
//! * `LAUNCH_FUZZ_SEED`: run just the one input of that seed (printed with every failure), to
//!   replay it.
//! * `LAUNCH_FUZZ_INPUT_SECONDS`: the per-input limit (default 1 s).
//! * `LAUNCH_FUZZ_KEEP_GOING=1`: report up to 20 failures per target instead of stopping at the
//!   first.
//!
//! A failure names the target, the seed, the broken property and the input (escaped; the whole
//! input is also written to a file in the temporary folder). The long run:
//!
//! ```sh
//! LAUNCH_FUZZ_SECONDS=300 cargo test --release -p launch-engine --lib fuzz:: -- --test-threads=2 --nocapture
//! LAUNCH_FUZZ_SECONDS=300 cargo test --release -p cargo-launch --lib fuzz:: -- --nocapture
//! LAUNCH_FUZZ_SECONDS=300 cargo test --release -p launch --lib tune::fuzz:: -- --nocapture
//! ```
//!
//! (`--nocapture` shows each target's input count and rate.)

use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};

/// The largest generated input. Big enough for a quadratic parser to show as slow, small enough
/// that a linear one checks thousands of inputs a second.
pub const MAX_INPUT: usize = 64 * 1024;

/// A seedable PRNG (splitmix64): fast, and every input is reproducible from its seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        let span = hi.wrapping_sub(lo).wrapping_add(1);
        if span == 0 {
            self.next_u64()
        } else {
            lo + self.next_u64() % span
        }
    }

    /// True once in `n` times.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    pub fn pick_ref<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// A number that is usually small, sometimes at a type's edge.
    pub fn number(&mut self) -> u64 {
        match self.below(8) {
            0 => self.pick(&[0, 1, u32::MAX as u64, u32::MAX as u64 + 1, u64::MAX, i64::MAX as u64]),
            1 => self.range(0, u32::MAX as u64),
            2 => self.range(0, 1 << 20),
            _ => self.range(0, 300),
        }
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    /// A short random identifier.
    pub fn ident(&mut self) -> String {
        const FIRST: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_";
        const REST: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_";
        let mut s = String::new();
        s.push(self.pick(FIRST) as char);
        for _ in 0..self.below(12) {
            s.push(self.pick(REST) as char);
        }
        s
    }
}

/// Tokens that break parsers: numbers at and past the integer limits, delimiters, line ends,
/// bytes that are not UTF-8 (or not whole characters), NUL.
pub const TOKENS: &[&[u8]] = &[
    b"4294967296",
    b"4294967295",
    b"4294967298",
    b"18446744073709551616",
    b"99999999999999999999",
    b"-1",
    b"0",
    b"-0",
    b"1e9",
    b"NaN",
    b"inf",
    b"(",
    b")",
    b"*/",
    b"/*",
    b"//",
    b"\n",
    b"\r\n",
    b"\r",
    b"\"",
    b"'",
    b"\\",
    b",",
    b" ",
    b"\t",
    b"=",
    b"{",
    b"}",
    b"[",
    b"]",
    b";",
    b"#",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    "é".as_bytes(),
    "€".as_bytes(),
    "\u{1F600}".as_bytes(),
    b"\0",
];

/// One to four random edits of `input`: byte flips, token insertions (from [`TOKENS`] and
/// `extra`), deletions, truncation, duplicated, dropped or swapped lines, a number replaced by an
/// edge value, a chunk copied elsewhere. The result is at most [`MAX_INPUT`] bytes.
pub fn mutate(rng: &mut Rng, input: &[u8], extra: &[&[u8]]) -> Vec<u8> {
    let mut b = input.to_vec();
    for _ in 0..rng.range(1, 4) {
        let at = if b.is_empty() { 0 } else { rng.below(b.len() + 1) };
        match rng.below(11) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            1 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] = rng.next_u64() as u8;
            }
            2 | 3 => {
                let tok: &[u8] = if !extra.is_empty() && rng.one_in(2) { rng.pick(extra) } else { rng.pick(TOKENS) };
                b.splice(at..at, tok.iter().copied());
            }
            4 if !b.is_empty() => {
                let end = (at + rng.range(1, 16) as usize).min(b.len());
                b.drain(at.min(end)..end);
            }
            5 => b.truncate(at),
            6..=8 => {
                let mut lines: Vec<Vec<u8>> = b.split_inclusive(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                if lines.is_empty() {
                    continue;
                }
                let i = rng.below(lines.len());
                match rng.below(3) {
                    0 => {
                        let copy = lines[i].clone();
                        lines.insert(i, copy);
                    }
                    1 => {
                        lines.remove(i);
                    }
                    _ => {
                        let j = rng.below(lines.len());
                        lines.swap(i, j);
                    }
                }
                b = lines.concat();
            }
            9 => {
                // A run of digits becomes an edge value.
                let digits: Vec<usize> = (0..b.len()).filter(|&i| b[i].is_ascii_digit()).collect();
                if digits.is_empty() {
                    continue;
                }
                let s = rng.pick(&digits);
                let e = (s..b.len()).find(|&i| !b[i].is_ascii_digit()).unwrap_or(b.len());
                let s = (0..=s).rev().take_while(|&i| b[i].is_ascii_digit()).last().unwrap_or(s);
                let tok: &[u8] = rng.pick(&[
                    b"4294967296".as_slice(),
                    b"4294967295",
                    b"4294967298",
                    b"99999999999999999999",
                    b"0",
                    b"-1",
                    b"2147483648",
                    b"65536",
                ]);
                b.splice(s..e, tok.iter().copied());
            }
            _ if !b.is_empty() => {
                let s = rng.below(b.len());
                let e = (s + rng.range(1, 256) as usize).min(b.len());
                let chunk = b[s..e].to_vec();
                b.splice(at..at, chunk);
            }
            _ => {}
        }
    }
    b.truncate(MAX_INPUT);
    b
}

/// Random bytes of a random length, mostly ASCII so that some of it looks like text.
pub fn random_bytes(rng: &mut Rng) -> Vec<u8> {
    let max = if rng.one_in(8) { MAX_INPUT } else { 512 };
    let n = rng.below(max);
    let ascii = rng.one_in(2);
    (0..n)
        .map(|_| {
            let c = rng.next_u64() as u8;
            if ascii {
                b" \n\t0123456789abcdefxyz_,()[]{}=;\"'/*.-:#@"[c as usize % 41]
            } else {
                c
            }
        })
        .collect()
}

/// The text a `&str` parser gets from arbitrary bytes (each invalid sequence becomes U+FFFD).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// One generated input: what the parser gets, and what the property expects of it.
pub struct Input<E> {
    /// The bytes (UTF-8 text for the parsers that take `&str`).
    pub data: Vec<u8>,
    /// What the generator knows the parse must give, if anything.
    pub expect: E,
}

impl<E> Input<E> {
    pub fn new(data: impl Into<Vec<u8>>, expect: E) -> Input<E> {
        Input { data: data.into(), expect }
    }

    /// The data as text (generators for `&str` parsers only make UTF-8).
    pub fn str(&self) -> &str {
        std::str::from_utf8(&self.data).expect("text targets generate UTF-8")
    }
}

/// A `LAUNCH_FUZZ_*` variable, trimmed; unset when empty. Read directly, not through
/// launch-build's `Env` (this crate depends on none of the crates it fuzzes): a test run is no
/// build script, so there is no rerun line to print.
fn env(name: &str) -> Option<String> {
    #[allow(clippy::disallowed_methods)]
    let value = std::env::var_os(name)?;
    Some(value.to_string_lossy().trim().to_string()).filter(|v| !v.is_empty())
}

/// A variable that is on when set to anything but empty, `0`, `false`, `no` or `off` (as
/// launch-build's `Env::flag`).
fn flag(name: &str) -> bool {
    env(name).is_some_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off"))
}

fn seconds(name: &str, default: f64) -> Duration {
    let v = env(name).map(|s| s.parse::<f64>().unwrap_or_else(|_| panic!("{name}={s} is not a number of seconds")));
    Duration::from_secs_f64(v.unwrap_or(default).max(0.0))
}

fn parse_seed(s: &str) -> u64 {
    let r = match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    r.unwrap_or_else(|_| panic!("LAUNCH_FUZZ_SEED={s} is not a seed (decimal or 0x hex)"))
}

/// The deterministic run's inputs per target, after its recorded regressions.
pub const DEFAULT_INPUTS: u64 = 400;

/// How long a target runs: a fixed count of inputs from a fixed seed (`cargo test`), or a time
/// budget from a random seed (the long run, `LAUNCH_FUZZ_SECONDS`).
struct Plan {
    run_seed: u64,
    inputs: Option<u64>,
    budget: Duration,
}

impl Plan {
    fn from_env(target: &str) -> Plan {
        if env("LAUNCH_FUZZ_SECONDS").is_some() {
            let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
            return Plan { run_seed: now ^ hash(target), inputs: None, budget: seconds("LAUNCH_FUZZ_SECONDS", 0.0) };
        }
        let inputs = env("LAUNCH_FUZZ_INPUTS").map_or(DEFAULT_INPUTS, |s| {
            s.parse().unwrap_or_else(|_| panic!("LAUNCH_FUZZ_INPUTS={s} is not a number of inputs"))
        });
        Plan { run_seed: hash(target), inputs: Some(inputs), budget: Duration::MAX }
    }

    /// Whether the run is over after `count` inputs (recorded regressions included) and `elapsed`.
    fn done(&self, count: u64, elapsed: Duration) -> bool {
        match self.inputs {
            Some(n) => count >= n,
            None => elapsed >= self.budget,
        }
    }
}

/// The seeds recorded for `target` in `fuzz-harness/regressions.txt`: lines `TARGET SEED` (decimal
/// or 0x hex); `#` starts a comment.
fn regressions(target: &str) -> Vec<u64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_regressions(&text, target)
}

fn parse_regressions(text: &str, target: &str) -> Vec<u64> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter_map(|l| l.split_once(char::is_whitespace))
        .filter(|(t, _)| *t == target)
        .map(|(_, seed)| parse_seed(seed.trim()))
        .collect()
}

/// FNV-1a, to give each target its own stream from one run seed.
fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Rust's `{:?}` of the input as text when it is UTF-8, else its bytes escaped; long inputs are
/// cut in the message (the whole input goes to a file).
pub fn escape(data: &[u8]) -> String {
    const SHOWN: usize = 2048;
    let cut = &data[..data.len().min(SHOWN)];
    let s = match std::str::from_utf8(cut) {
        Ok(s) => format!("{s:?}"),
        Err(_) => format!("b\"{}\"", cut.escape_ascii()),
    };
    if data.len() > SHOWN {
        format!("{s} … ({} bytes in all)", data.len())
    } else {
        s
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs one target of `package` (the crate whose tests call it, for the replay command a failure
/// prints): inputs from `gen` (each from its own seed) checked by `check` on a worker
/// thread, until the time budget is spent; fails with the seed and input of the first input
/// that breaks a property, panics, or takes longer than the per-input limit. With
/// `LAUNCH_FUZZ_KEEP_GOING=1` it reports up to 20 failures and fails at the end (to survey a
/// target that has known failures).
pub fn run<E, G, C>(package: &str, target: &str, mut gen: G, check: C)
where
    E: Debug + Send + 'static,
    G: FnMut(&mut Rng) -> Input<E>,
    C: Fn(&Input<E>) -> Result<(), String> + Send + Sync + 'static,
{
    let plan = Plan::from_env(target);
    let limit = seconds("LAUNCH_FUZZ_INPUT_SECONDS", 1.0);
    let replay = env("LAUNCH_FUZZ_SEED").map(|s| parse_seed(&s));
    let keep_going = flag("LAUNCH_FUZZ_KEEP_GOING");
    let run_seed = plan.run_seed;
    let mut seeds = Rng::new(run_seed);
    let mut recorded = regressions(target).into_iter();

    // The check runs on a worker so that an input that hangs (or is quadratic) is reported, not
    // waited for; a worker that does not answer is abandoned (and a new one started).
    let check = Arc::new(check);
    let spawn = || {
        let (to_worker, inputs) = mpsc::channel::<Input<E>>();
        let (to_main, results) = mpsc::channel::<Result<(), String>>();
        let check = Arc::clone(&check);
        std::thread::spawn(move || {
            for input in inputs {
                let r = catch_unwind(AssertUnwindSafe(|| check(&input)))
                    .unwrap_or_else(|p| Err(format!("panicked: {}", panic_message(p))));
                if to_main.send(r).is_err() {
                    break;
                }
            }
        });
        (to_worker, results)
    };
    let (mut to_worker, mut results) = spawn();

    let start = Instant::now();
    let (mut count, mut bytes, mut failures) = (0u64, 0u64, 0usize);
    let mut first = None;
    loop {
        let seed = replay.or_else(|| recorded.next()).unwrap_or_else(|| seeds.next_u64());
        let input = gen(&mut Rng::new(seed));
        bytes += input.data.len() as u64;
        let t = Instant::now();
        to_worker.send(input).expect("the worker lives until it is abandoned");
        let why = match results.recv_timeout(limit) {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some(why),
            Err(_) => {
                (to_worker, results) = spawn();
                Some(format!("no answer within {limit:?}: too slow (a quadratic parser?)"))
            }
        };
        count += 1;
        if let Some(why) = why {
            // Inputs are a function of their seed: make it again to show it.
            let input = gen(&mut Rng::new(seed));
            let report = failure(package, target, seed, &input, &why, t.elapsed());
            failures += 1;
            if !keep_going {
                first = Some(report);
                break;
            }
            eprintln!("{report}\n");
        }
        if replay.is_some() || plan.done(count, start.elapsed()) || failures >= 20 {
            break;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "fuzz {target}: {count} inputs ({:.1} MB) in {secs:.2} s, {:.0} inputs/s, run seed {run_seed:#018x}",
        bytes as f64 / 1e6,
        count as f64 / secs.max(1e-9)
    );
    if let Some(report) = first {
        panic!("{report}");
    }
    assert_eq!(failures, 0, "fuzz target `{target}`: {failures} failures (reported above)");
}

/// The report of one failure: target, property, seed and replay command, the input; the whole
/// input is also saved to a file.
fn failure<E: Debug>(package: &str, target: &str, seed: u64, input: &Input<E>, why: &str, took: Duration) -> String {
    let file = std::env::temp_dir().join(format!("launch-fuzz-{target}-{seed:016x}.bin"));
    let saved = match std::fs::write(&file, &input.data) {
        Ok(()) => format!("the whole input: {}", file.display()),
        Err(e) => format!("could not save the input to {}: {e}", file.display()),
    };
    let mut expected = format!("{:?}", input.expect);
    if expected.len() > 2048 {
        let cut = (0..=2048).rev().find(|&i| expected.is_char_boundary(i)).unwrap_or(0);
        expected = format!("{} … ({} characters in all)", &expected[..cut], expected.len());
    }
    // libtest names each test's thread after the test (`fuzz::ptx::ptx`): replay just that one.
    let test = std::thread::current().name().filter(|n| *n != "main").unwrap_or("fuzz::").to_string();
    format!(
        "fuzz target `{target}` failed: {why}\n  seed: LAUNCH_FUZZ_SEED={seed:#018x} (replay: LAUNCH_FUZZ_SEED={seed:#018x} \
         cargo test -p {package} --lib {test})\n  input ({} bytes, checked in {:.3} s): {}\n  \
         expected: {}\n  {saved}",
        input.data.len(),
        took.as_secs_f64(),
        escape(&input.data),
        expected,
    )
}

/// The text of every file under the `dirs` of `root` (recursively) whose name ends with one of
/// `exts`, sorted by path; the corpus the mutating generators start from.
pub fn corpus(root: &Path, dirs: &[&str], exts: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if exts.iter().any(|x| p.to_string_lossy().ends_with(x)) {
                files.push(p);
            }
        }
    }
    files.sort();
    let texts: Vec<String> = files.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    assert!(!texts.is_empty(), "no corpus files {exts:?} under {dirs:?} of {}", root.display());
    texts
}

/// 1-based line and column (in characters) of byte `offset`, from a table of line starts; for
/// checks that must stay linear on large inputs.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Lines<'a> {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Lines { text, starts }
    }

    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }

    /// Byte offset of 1-based (line, char column), if the line has that column.
    pub fn offset_of(&self, line: usize, col: usize) -> Option<usize> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let rest = &self.text[start..];
        let rest = &rest[..rest.find('\n').unwrap_or(rest.len())];
        if col == 0 {
            return None;
        }
        match rest.char_indices().nth(col - 1) {
            Some((i, _)) => Some(start + i),
            None if rest.chars().count() == col - 1 => Some(start + rest.len()),
            None => None,
        }
    }

    /// The 1-based line's text, without its newline.
    pub fn line(&self, line: usize) -> Option<&'a str> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let rest = &self.text[start..];
        Some(&rest[..rest.find('\n').unwrap_or(rest.len())])
    }
}

/// `Err(message)` unless `cond`.
pub fn ensure(cond: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(message())
    }
}

#[test]
fn the_harness_mutates_within_bounds_and_replays_from_a_seed() {
    let input = b"ptxas info    : Used 32 registers\n    0 bytes stack frame\n";
    for seed in 0..2000 {
        let a = mutate(&mut Rng::new(seed), input, &[b"Used"]);
        assert_eq!(a, mutate(&mut Rng::new(seed), input, &[b"Used"]), "seed {seed} is not reproducible");
        assert!(a.len() <= MAX_INPUT);
    }
    let l = Lines::new("ab\ncé\n");
    assert_eq!((l.line_of(0), l.line_of(3), l.line_of(6), l.line_of(7)), (1, 2, 2, 3));
    assert_eq!((l.offset_of(2, 2), l.offset_of(2, 3), l.offset_of(2, 4)), (Some(4), Some(6), None));
    assert_eq!(escape(b"a\n\xff"), "b\"a\\n\\xff\"");
}

#[test]
fn a_failure_names_the_target_the_seed_and_the_test_that_replays_it() {
    let failed = catch_unwind(|| {
        run("some-package", "always_fails", |rng| Input::new(rng.bytes(4), ()), |_| Err("the property".to_string()))
    });
    let report = panic_message(failed.expect_err("a broken property fails the test"));
    for part in [
        "fuzz target `always_fails` failed: the property",
        "LAUNCH_FUZZ_SEED=0x",
        "cargo test -p some-package --lib a_failure_names_the_target_the_seed_and_the_test_that_replays_it)",
        "input (4 bytes",
    ] {
        assert!(report.contains(part), "{part:?} is not in the report:\n{report}");
    }
    // The input was saved for the reader of a real failure; this one is not read.
    if let Some((_, file)) = report.split_once("the whole input: ") {
        let _ = std::fs::remove_file(file.trim());
    }
}

#[test]
fn the_default_run_is_the_same_inputs_on_every_run() {
    // What `cargo test` runs is a function of the target's name alone: two runs see one sequence.
    let seen = |target: &str| {
        let mut seeds = Rng::new(Plan::from_env(target).run_seed);
        (0..5).map(|_| seeds.next_u64()).collect::<Vec<_>>()
    };
    if env("LAUNCH_FUZZ_SECONDS").is_none() {
        assert_eq!(seen("ptxas_log"), seen("ptxas_log"));
        assert_ne!(seen("ptxas_log"), seen("ptx"));
        let plan = Plan::from_env("ptxas_log");
        assert!(!plan.done(plan.inputs.unwrap() - 1, Duration::MAX) && plan.done(plan.inputs.unwrap(), Duration::ZERO));
    }
}

#[test]
fn recorded_regressions_are_read_per_target() {
    let text = "# a comment\nptx 0x10 # after its fix\nptxas_log 7\n\nptx\t42\n";
    assert_eq!(parse_regressions(text, "ptx"), [16, 42]);
    assert_eq!(parse_regressions(text, "ptxas_log"), [7]);
    assert!(parse_regressions(text, "config").is_empty());
    // The committed file parses, whatever it holds.
    let _ = regressions("ptx");
}

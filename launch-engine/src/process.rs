//! The one place that runs external tools (ptxas, python -m pip, cargo's children).
//!
//! Arguments are passed as separate `OsString`s, never through a shell. stdout and stderr are
//! drained on two threads while this one waits, so a chatty tool cannot deadlock on a full pipe.
//! Every run has a time limit ([`DEFAULT_TIMEOUT`] unless the caller sets one): a tool that never
//! returns is killed, reaped, and reported as [`Error::ToolTimedOut`], so a hanging tool cannot
//! hang the build. Four failures stay distinct: the program does not exist, it exists but could
//! not be started, it ran and failed, and it ran out of time.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::Error;

pub use crate::timeouts::{DEFAULT_TIMEOUT, PROBE_TIMEOUT};

/// How often an exited child is looked for once its pipes are closed (or when its output is not
/// captured): first after 1 ms, doubling up to this, so a quick tool gains no visible latency and
/// a long one (pip) costs a few wake-ups a second.
const POLL: Duration = Duration::from_millis(50);

/// How long to wait for pipe activity before checking whether the child exited while something
/// else (a grandchild) still holds its pipes.
const SLICE: Duration = Duration::from_millis(100);

/// A command to run, displayed in backticks in every message.
#[derive(Clone, Debug)]
pub struct Tool {
    program: PathBuf,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    inherit_output: bool,
    timeout: Duration,
}

/// What a successful run printed.
#[derive(Debug)]
pub struct Output {
    /// Everything written to stdout (empty when inherited).
    pub stdout: String,
    /// Everything written to stderr (empty when inherited).
    pub stderr: String,
}

impl Tool {
    /// A command running `program`.
    pub fn new(program: impl AsRef<Path>) -> Tool {
        Tool {
            program: program.as_ref().to_path_buf(),
            args: Vec::new(),
            envs: Vec::new(),
            inherit_output: false,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Kills the tool and fails with [`Error::ToolTimedOut`] if it runs longer than `timeout`
    /// (default `DEFAULT_TIMEOUT`, 30 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Tool {
        self.timeout = timeout;
        self
    }

    /// The time limit of a run.
    pub fn time_limit(&self) -> Duration {
        self.timeout
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Tool {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Tool
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Sets an environment variable of the child (nvcc's steps run with the variables nvcc sets).
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Tool {
        self.envs.push((name.as_ref().to_os_string(), value.as_ref().to_os_string()));
        self
    }

    /// Lets the child write to our stderr (for progress bars) instead of capturing; its stdout
    /// goes to our stderr too, so that our stdout holds only the command's own output (a
    /// `--format json` document must not start with pip's progress).
    pub fn inherit_output(mut self) -> Tool {
        self.inherit_output = true;
        self
    }

    /// Runs the tool to completion; a non-zero exit is [`Error::ToolFailed`].
    pub fn run(&self) -> Result<Output, Error> {
        let (status, out) = self.run_unchecked()?;
        if status.success() {
            Ok(out)
        } else {
            Err(Error::ToolFailed { command: self.to_string(), status: describe(status), stderr: out.stderr })
        }
    }

    /// Runs the tool and returns its status and output whatever the status (ptxas reports errors on
    /// stderr that the caller parses). Only running out of time is an error besides not starting.
    pub fn run_unchecked(&self) -> Result<(ExitStatus, Output), Error> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).envs(self.envs.iter().map(|(k, v)| (k, v))).stdin(Stdio::null());
        if self.inherit_output {
            cmd.stdout(Stdio::from(std::io::stderr()));
        } else {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        let mut child = cmd.spawn().map_err(|source| self.spawn_error(source))?;
        // A limit too far ahead to represent is no limit.
        let deadline = Instant::now().checked_add(self.timeout);
        let (tx, rx) = mpsc::channel::<()>();
        let stdout = child.stdout.take().map(|p| drain(p, tx.clone()));
        let stderr = child.stderr.take().map(|p| drain(p, tx.clone()));
        drop(tx);
        let mut open = usize::from(stdout.is_some()) + usize::from(stderr.is_some());
        let mut nap = Duration::from_millis(1);
        let status = loop {
            let wait = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => SLICE,
            };
            // Sleep on the pipes while they are open (woken when one closes), else poll briefly.
            if open > 0 {
                if rx.recv_timeout(wait.min(SLICE)).is_ok() {
                    open -= 1;
                }
            } else {
                std::thread::sleep(wait.min(nap));
                nap = (nap * 2).min(POLL);
            }
            if let Some(status) = child.try_wait().map_err(|source| self.spawn_error(source))? {
                // A grandchild may hold the pipes open after the tool exited: their end is
                // bounded by the same deadline.
                while open > 0 {
                    let left = deadline.map_or(SLICE, |d| d.saturating_duration_since(Instant::now()));
                    match rx.recv_timeout(left) {
                        Ok(()) => open -= 1,
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                        Err(mpsc::RecvTimeoutError::Timeout) if deadline.is_some() => {
                            return Err(self.timed_out());
                        }
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                    }
                }
                break status;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                kill(&mut child);
                // The reader threads are left behind: a grandchild (a shell's `sleep`) may keep
                // the pipes open after the tool itself died.
                return Err(self.timed_out());
            }
        };
        Ok((status, Output { stdout: collect(stdout), stderr: collect(stderr) }))
    }

    fn timed_out(&self) -> Error {
        let tool = self.program.file_name().unwrap_or(self.program.as_os_str()).to_string_lossy().into_owned();
        Error::ToolTimedOut { tool, command: self.to_string(), file: None, arch: None, timeout: self.timeout }
    }

    fn spawn_error(&self, source: io::Error) -> Error {
        if source.kind() == io::ErrorKind::NotFound {
            Error::ToolNotFound { tool: self.program.display().to_string() }
        } else {
            Error::ToolStart { command: self.to_string(), source }
        }
    }
}

/// Reads a pipe to its end on its own thread, saying on `done` when it closed.
fn drain(mut pipe: impl Read + Send + 'static, done: mpsc::Sender<()>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        let _ = done.send(());
        buf
    })
}

/// What a drained pipe held (its thread has finished: the pipe closed).
fn collect(reader: Option<JoinHandle<Vec<u8>>>) -> String {
    let bytes = reader.and_then(|r| r.join().ok()).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Kills a child that ran out of time and reaps it, so no zombie is left.
fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// An argument as messages show it: in double quotes (with escapes) when it is empty or holds
/// whitespace or quotes, else as it is. Every command line this crate prints goes through it.
pub fn quote(arg: &str) -> Cow<'_, str> {
    if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        Cow::Owned(format!("{arg:?}"))
    } else {
        Cow::Borrowed(arg)
    }
}

fn describe(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exit status: {code}"),
        None => format!("{status} (killed by a signal)"),
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}", self.program.display())?;
        for a in &self.args {
            write!(f, " {}", quote(&a.to_string_lossy()))?;
        }
        write!(f, "`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_program_is_not_found() {
        let err = Tool::new("/nonexistent/launch-no-such-tool").run().unwrap_err();
        assert!(matches!(err, Error::ToolNotFound { .. }), "{err:?}");
    }

    #[test]
    fn a_directory_cannot_be_started() {
        let err = Tool::new(std::env::temp_dir()).run().unwrap_err();
        assert!(matches!(err, Error::ToolStart { .. }), "{err:?}");
    }

    #[test]
    fn non_zero_exit_is_failed_with_stderr() {
        let err = Tool::new("sh").args(["-c", "echo oops >&2; exit 3"]).run().unwrap_err();
        match err {
            Error::ToolFailed { status, stderr, .. } => {
                assert_eq!(status, "exit status: 3");
                assert_eq!(stderr.trim(), "oops");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_tool_that_never_returns_is_killed_at_its_time_limit() {
        let started = Instant::now();
        let err = Tool::new("sh").args(["-c", "sleep 100"]).timeout(Duration::from_secs(1)).run().unwrap_err();
        let took = started.elapsed();
        match &err {
            Error::ToolTimedOut { tool, command, timeout, .. } => {
                assert_eq!(tool, "sh");
                assert_eq!(command, "`sh -c \"sleep 100\"`");
                assert_eq!(*timeout, Duration::from_secs(1));
            }
            other => panic!("{other:?}"),
        }
        assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(3), "took {took:?}");
        let message = err.to_string();
        // A bare tool run names no compile limit (the compiler adds file, arch and the variable).
        assert!(
            message.contains("within 1 s and was killed") && !message.contains("LAUNCH_COMPILE_TIMEOUT"),
            "{message}"
        );
    }

    #[test]
    fn the_killed_tool_is_reaped() {
        // `exec` makes the shell's pid the sleep's: after the timeout that process must be gone,
        // not left running nor as a zombie (which /proc still lists).
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!("echo $$ > '{}'; exec sleep 100", pid_file.display());
        let err = Tool::new("sh").args(["-c", &script]).timeout(Duration::from_millis(500)).run();
        assert!(matches!(err, Err(Error::ToolTimedOut { .. })), "{err:?}");
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let proc_dir = Path::new("/proc").join(pid.trim());
        if Path::new("/proc/self").exists() {
            assert!(!proc_dir.exists(), "the killed tool (pid {}) is still there", pid.trim());
        }
    }

    #[test]
    fn a_quick_tool_is_not_slowed_by_the_wait() {
        let started = Instant::now();
        for _ in 0..10 {
            let out = Tool::new("sh").args(["-c", "echo out; echo err >&2"]).run().unwrap();
            assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("out\n", "err\n"));
        }
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn a_chatty_tool_does_not_deadlock_on_a_full_pipe() {
        // 1 MiB on each pipe, far more than a pipe buffer holds.
        let out = Tool::new("sh")
            .args(["-c", "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2"])
            .timeout(Duration::from_secs(20))
            .run()
            .unwrap();
        assert_eq!((out.stdout.len(), out.stderr.len()), (1 << 20, 1 << 20));
    }

    #[test]
    fn a_tool_that_exits_while_a_grandchild_holds_its_pipes_is_bounded() {
        let started = Instant::now();
        let err = Tool::new("sh").args(["-c", "sleep 100 & exit 0"]).timeout(Duration::from_secs(1)).run();
        assert!(matches!(err, Err(Error::ToolTimedOut { .. })), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn quote_marks_arguments_a_shell_would_split() {
        assert_eq!(quote("-v"), "-v");
        assert_eq!(quote(""), "\"\"");
        assert_eq!(quote("--include-path=/a b/inc"), "\"--include-path=/a b/inc\"");
        assert_eq!(quote("tab\there"), "\"tab\\there\"");
        assert_eq!(quote("it's"), "\"it's\"");
    }

    #[test]
    fn display_quotes_arguments_with_spaces() {
        let t = Tool::new("ptxas").arg("-v").arg("dir with space/k.ptx");
        assert_eq!(t.to_string(), "`ptxas -v \"dir with space/k.ptx\"`");
    }
}

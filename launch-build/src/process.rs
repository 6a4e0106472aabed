//! The one place that runs external tools (ptxas, python -m pip, cargo's children).
//!
//! Arguments are passed as separate `OsString`s, never through a shell. stdout and stderr are read
//! to the end concurrently (`wait_with_output`), so a chatty tool cannot deadlock on a full pipe.
//! Three failures stay distinct: the program does not exist, it exists but could not be started,
//! and it ran and failed.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::error::Error;

/// A command to run, displayed in backticks in every message.
#[derive(Clone, Debug)]
pub struct Tool {
    program: PathBuf,
    args: Vec<OsString>,
    inherit_output: bool,
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
        Tool { program: program.as_ref().to_path_buf(), args: Vec::new(), inherit_output: false }
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

    /// Lets the child write to our stdout/stderr (for progress bars) instead of capturing.
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
    /// stderr that the caller parses).
    pub fn run_unchecked(&self) -> Result<(ExitStatus, Output), Error> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).stdin(Stdio::null());
        if !self.inherit_output {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        let child = cmd.spawn().map_err(|source| self.spawn_error(source))?;
        // wait_with_output drains both pipes on separate threads: no deadlock on a full pipe.
        let out = child.wait_with_output().map_err(|source| self.spawn_error(source))?;
        Ok((
            out.status,
            Output {
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            },
        ))
    }

    fn spawn_error(&self, source: io::Error) -> Error {
        if source.kind() == io::ErrorKind::NotFound {
            Error::ToolNotFound { tool: self.program.display().to_string() }
        } else {
            Error::ToolStart { command: self.to_string(), source }
        }
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
            let a = a.to_string_lossy();
            if a.contains(' ') || a.is_empty() {
                write!(f, " {a:?}")?;
            } else {
                write!(f, " {a}")?;
            }
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
    fn display_quotes_arguments_with_spaces() {
        let t = Tool::new("ptxas").arg("-v").arg("dir with space/k.ptx");
        assert_eq!(t.to_string(), "`ptxas -v \"dir with space/k.ptx\"`");
    }
}

//! The one way `cargo launch` writes to stdout (clippy refuses `println!`, `print!` and
//! `std::io::stdout` everywhere else: see the workspace's `clippy.toml`).
//!
//! A reader that goes away early (`cargo launch cache | head -1`) closes the pipe; the next write
//! fails with `EPIPE`. [`Stdout`] takes that as the end of the output, not as an error: it and
//! every later writer discard what is left, quietly, and the command finishes its work and exits
//! with its own code (a `check` that found errors still exits 1, a `cache clear` still clears).
//! Any other failure to write (a full disk, `> /dev/full`) is an error as before.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a write has met a closed stdout: from then on nothing is written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Stdout, locked for this writer's life; see the module's notes.
pub(crate) struct Stdout(io::StdoutLock<'static>);

/// Stdout for one command's output.
#[allow(clippy::disallowed_methods)] // the one place that takes stdout
pub(crate) fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// `result` of a write or flush: a closed pipe ends the output (sets `closed`), quietly.
fn end_at_closed_pipe<T>(result: io::Result<T>, done: T, closed: &AtomicBool) -> io::Result<T> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            closed.store(true, Ordering::Relaxed);
            Ok(done)
        }
        r => r,
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if CLOSED.load(Ordering::Relaxed) {
            return Ok(buf.len());
        }
        let written = self.0.write(buf);
        end_at_closed_pipe(written, buf.len(), &CLOSED)
    }

    fn flush(&mut self) -> io::Result<()> {
        if CLOSED.load(Ordering::Relaxed) {
            return Ok(());
        }
        let flushed = self.0.flush();
        end_at_closed_pipe(flushed, (), &CLOSED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_closed_pipe_ends_the_output_quietly() {
        let closed = AtomicBool::new(false);
        assert_eq!(end_at_closed_pipe(Ok(3), 5, &closed).unwrap(), 3);
        let full = end_at_closed_pipe(Err::<usize, _>(io::Error::other("disk full")), 5, &closed);
        assert_eq!(full.unwrap_err().to_string(), "disk full");
        assert!(!closed.load(Ordering::Relaxed), "only a closed pipe ends the output");
        let pipe = Err::<usize, _>(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(end_at_closed_pipe(pipe, 5, &closed).unwrap(), 5, "all of it taken");
        assert!(closed.load(Ordering::Relaxed));
    }
}

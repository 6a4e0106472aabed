//! A tool's answer to a question that depends on its bytes alone (the release `nvcc --version`
//! prints, a host compiler's `--version` line), memoised by the file's (path, size, modification
//! time) as [`super::tool_digest`] memoises digests: in this process, and across builds in
//! `<cache root>/tool-answers.tsv` (a line per answer: `size TAB mtime-ns TAB question TAB answer
//! TAB path`), written whole and atomically. A build script that reruns with nothing to compile
//! then starts no tool to ask it what it is (issue 32, class 10). A tool replaced in place changes
//! its size or time and is asked again; a missing, damaged or unreadable memo file is no memo.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::tool_digest::{stamp_of, Stamp};
use crate::out;

/// The memo file's name, in the cache root.
pub const MEMO_FILE: &str = "tool-answers.tsv";

/// The largest memo file read; a larger one is no memo.
const MAX_MEMO: u64 = 1 << 20;

/// At most this many answers are remembered in the file; past it, the file starts again.
const MAX_ANSWERS: usize = 256;

/// What an answer is valid for: the file (links followed) as it was, and the question.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Asked {
    stamp: Stamp,
    question: String,
}

type Memo = HashMap<Asked, String>;

fn process_memo() -> &'static Mutex<Memo> {
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    MEMO.get_or_init(Mutex::default)
}

/// `ask()`'s answer about the tool at `path`, from the memo when the file is unchanged since it
/// was asked, else asked now and remembered (with `memo_dir`, the cache root, in its
/// [`MEMO_FILE`]). `question` names what `ask` asks (`--version`). `None` (the tool did not
/// answer) is never remembered; nor is an answer with a tab or a line break in it.
pub fn tool_answer(
    path: &Path,
    question: &str,
    memo_dir: Option<&Path>,
    ask: impl FnOnce() -> Option<String>,
) -> Option<String> {
    let Some(asked) = asked(path, question) else { return ask() };
    let lock = || process_memo().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(a) = lock().get(&asked) {
        return Some(a.clone());
    }
    let file = memo_dir.map(|d| d.join(MEMO_FILE));
    let mut memo = file.as_deref().map(read_memo).unwrap_or_default();
    if let Some(a) = memo.get(&asked) {
        lock().insert(asked, a.clone());
        return Some(a.clone());
    }
    let answer = ask()?;
    let plain = |s: &str| !s.contains(['\t', '\n', '\r']);
    // A tool replaced while it answered: the answer is right for no stamp.
    if !plain(&answer) || !plain(question) || self::asked(path, question).as_ref() != Some(&asked) {
        return Some(answer);
    }
    lock().insert(asked.clone(), answer.clone());
    if let Some(file) = file {
        if memo.len() >= MAX_ANSWERS {
            memo.clear();
        }
        memo.insert(asked, answer.clone());
        // Best effort: without the file the next build asks again, nothing worse.
        let _ = fs::create_dir_all(file.parent().unwrap_or(Path::new("."))).and_then(|()| write_memo(&file, &memo));
    }
    Some(answer)
}

fn asked(path: &Path, question: &str) -> Option<Asked> {
    Some(Asked { stamp: stamp_of(path).ok()?, question: question.to_string() })
}

fn read_memo(file: &Path) -> Memo {
    let Some(bytes) = super::read_entry_limited(file, MAX_MEMO) else { return Memo::new() };
    String::from_utf8_lossy(&bytes).lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<(Asked, String)> {
    let mut parts = line.splitn(5, '\t');
    let (size, mtime, question, answer, path) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let stamp = Stamp { path: PathBuf::from(path), size: size.parse().ok()?, mtime_ns: mtime.parse().ok()? };
    let asked = Asked { stamp, question: question.to_string() };
    Some((asked, answer.to_string()))
}

fn write_memo(file: &Path, memo: &Memo) -> std::io::Result<()> {
    let mut lines: Vec<String> = memo
        .iter()
        .filter_map(|(a, answer)| {
            let s = &a.stamp;
            let path = s.path.to_str().filter(|p| !p.contains(['\n', '\r']))?;
            Some(format!("{}\t{}\t{}\t{answer}\t{path}\n", s.size, s.mtime_ns, a.question))
        })
        .collect();
    lines.sort();
    out::write_atomically(file, lines.concat().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asked once per file state: a second build (a fresh process: the file memo) does not ask,
    /// a changed tool is asked again, a tool that does not answer is not remembered.
    #[test]
    fn a_tool_is_asked_once_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let (tool, memo) = (dir.path().join("nvcc"), dir.path().join("memo"));
        fs::write(&tool, b"one").unwrap();
        let asked = std::cell::Cell::new(0);
        let ask = |answer: &str| {
            asked.set(asked.get() + 1);
            Some(answer.to_string())
        };
        assert_eq!(tool_answer(&tool, "--version", Some(&memo), || ask("13.0.88")).as_deref(), Some("13.0.88"));
        process_memo().lock().unwrap().clear();
        assert_eq!(tool_answer(&tool, "--version", Some(&memo), || ask("other")).as_deref(), Some("13.0.88"));
        assert_eq!(asked.get(), 1, "the memo file answered");
        assert_eq!(tool_answer(&tool, "-v", Some(&memo), || ask("x")).as_deref(), Some("x"), "another question");
        fs::write(&tool, b"two, longer").unwrap();
        assert_eq!(tool_answer(&tool, "--version", Some(&memo), || ask("13.5.37")).as_deref(), Some("13.5.37"));
        assert_eq!(asked.get(), 3);
        let silent = dir.path().join("silent");
        fs::write(&silent, b"s").unwrap();
        assert_eq!(tool_answer(&silent, "--version", Some(&memo), || None), None);
        assert_eq!(tool_answer(&silent, "--version", Some(&memo), || Some("late".into())).as_deref(), Some("late"));
    }
}

//! A host file's nvcc compile run step by step, so that each arch's finished work is kept when
//! the compile is stopped (issue 32, class 11: candle-layer-norm's one file takes nvcc 14 to 23
//! minutes for two arches; a limit or a killed build used to lose all of it).
//!
//! `nvcc -dryrun` prints the commands of a compile without running them: the host preprocessor
//! and cudafe++, then for each arch the device preprocessor, cicc and ptxas, then fatbinary and
//! the host compiler. Run here in that order, with the variables nvcc sets for them, they write
//! the files nvcc would and the same object (a test holds the bytes to nvcc's own). Each arch's
//! files (PTX, cubin, cicc's stubs) and messages are handed to a [`Kept`] store as soon as its
//! ptxas is done, and an arch the store has is not compiled again: a rerun starts at the arches
//! that had not finished. The arches run side by side on the job slots the build lends, as nvcc's
//! `--threads` does. Every step has the per-run time limit, so a compile making progress is never
//! stopped for its length. A dry run whose commands do not have this shape is not used: the file
//! is compiled by one nvcc run as before.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use launch::Arch;

use crate::cache;
use crate::error::Error;
use crate::process::Tool;

/// The commands of one compile, from its dry run.
#[derive(Debug)]
pub struct Plan {
    /// The variables nvcc sets for its steps (`PATH`, `CICC_PATH`, `NVVMIR_LIBRARY_DIR`, ...).
    env: Vec<(String, String)>,
    /// What nvcc printed itself (its own warnings), which a real run prints too.
    notes: String,
    /// Host preprocessing and cudafe++: everything before the first arch's steps.
    before: Vec<Step>,
    /// Each arch's steps, in the compile's arch order.
    arches: Vec<Vec<Step>>,
    /// fatbinary and the host compile.
    after: Vec<Step>,
}

/// One command of a dry run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    program: PathBuf,
    args: Vec<String>,
}

/// One arch's finished work: its files in the keep folder (the folder written as [`KEEP`] in
/// text files) and what its steps printed, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchWork {
    pub files: Vec<(String, Vec<u8>)>,
    pub log: String,
}

/// Where finished arches are kept between compiles of the same file, flags and arch list.
pub trait Kept: Sync {
    /// The work of `arch` a stopped compile finished, if any.
    fn load(&self, arch: Arch) -> Option<ArchWork>;
    /// Keeps `work` of `arch` (best effort: a failure only costs the rerun its compile).
    fn store(&self, arch: Arch, work: &ArchWork);
    /// Drops what it keeps of `arch`: the whole compile finished.
    fn forget(&self, arch: Arch);
}

/// A [`Kept`] that keeps nothing.
pub struct Nowhere;

impl Kept for Nowhere {
    fn load(&self, _: Arch) -> Option<ArchWork> {
        None
    }
    fn store(&self, _: Arch, _: &ArchWork) {}
    fn forget(&self, _: Arch) {}
}

/// The keep folder as written in kept text files and logs (its name holds the process id).
pub const KEEP: &str = "@LAUNCH_NVCC_KEEP@";

/// What running a plan gave.
#[derive(Debug)]
pub struct Ran {
    /// Whether every step succeeded.
    pub ok: bool,
    /// Everything the steps printed, in nvcc's order (arch by arch), as nvcc would have.
    pub text: String,
    /// The arches whose work came from the [`Kept`] store.
    pub kept: Vec<Arch>,
}

/// What one arch's part of a run gave.
struct ArchRun {
    /// Whether its steps succeeded.
    ok: bool,
    /// What they printed.
    log: String,
    /// Whether it came from the [`Kept`] store instead.
    restored: bool,
}

/// The plan of the dry run `dry_run` (nvcc's stderr with `-dryrun`) of a compile of `arches`, or
/// `None` when its commands are not host steps, then one group per arch in order, then the rest,
/// each arch's group ending in its one ptxas run (so nothing here guesses), or a program is not
/// found on the dry run's `PATH`.
pub fn plan(dry_run: &str, arches: &[Arch]) -> Option<Plan> {
    if arches.len() < 2 {
        return None;
    }
    let mut env: Vec<(String, String)> = Vec::new();
    let mut notes = String::new();
    let mut steps = Vec::new();
    for line in dry_run.lines() {
        let Some(command) = line.strip_prefix("#$ ") else {
            notes.push_str(line);
            notes.push('\n');
            continue;
        };
        if let Some((name, value)) = assignment(command) {
            env.retain(|(n, _)| *n != name);
            env.push((name, value));
            continue;
        }
        let words: Vec<String> = words(command)?.iter().map(|w| expand(w, &env)).collect();
        let (program, args) = words.split_first()?;
        steps.push(Step { program: PathBuf::from(program), args: args.to_vec() });
    }
    let path = env.iter().find(|(n, _)| n == "PATH").map(|(_, v)| v.clone());
    for step in &mut steps {
        if step.program.components().count() == 1 {
            step.program = which::which_in(&step.program, path.as_deref(), ".").ok()?;
        }
    }
    let (before, groups, after) = group(steps, arches)?;
    Some(Plan { env, notes, before, arches: groups, after })
}

/// `NAME=value` (nvcc's settings), the value without the quotes around it.
fn assignment(command: &str) -> Option<(String, String)> {
    let (name, value) = command.split_once('=')?;
    let ok = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return None;
    }
    let value = value.trim();
    let unquoted = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).filter(|v| !v.contains('"'));
    Some((name.to_string(), unquoted.unwrap_or(value).to_string()))
}

/// A dry-run command's words: split at spaces outside double quotes, the quotes taken out (a
/// backslash inside them keeps the next character). `None` for an unterminated quote.
fn words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut in_word, mut quoted) = (false, false);
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => (quoted, in_word) = (!quoted, true),
            '\\' if quoted => word.push(chars.next()?),
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                }
                in_word = false;
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quoted {
        return None;
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// `word` with each `$NAME` nvcc set replaced by its value (`"$CICC_PATH/cicc"`).
fn expand(word: &str, env: &[(String, String)]) -> String {
    let mut out = word.to_string();
    // Longest names first, so `$TOP` never eats the start of a longer name.
    let mut names: Vec<&(String, String)> = env.iter().collect();
    names.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    for (name, value) in names {
        out = out.replace(&format!("${name}"), value);
    }
    out
}

/// The steps cut into before, per arch and after. A step is an arch's when the file it writes
/// (`-o`) is that arch's (`<stem>.compute_XX.<ext>`).
#[allow(clippy::type_complexity)]
fn group(steps: Vec<Step>, arches: &[Arch]) -> Option<(Vec<Step>, Vec<Vec<Step>>, Vec<Step>)> {
    let (mut before, mut groups, mut after) = (Vec::new(), Vec::<Vec<Step>>::new(), Vec::new());
    for step in steps {
        match arch_of(&step, arches) {
            // Arches come in order, each once, and none after the steps that follow them.
            Some(i) if after.is_empty() && (i + 1 == groups.len() || i == groups.len()) => {
                if i == groups.len() {
                    groups.push(Vec::new());
                }
                groups[i].push(step);
            }
            Some(_) => return None,
            None if groups.is_empty() => before.push(step),
            None => after.push(step),
        }
    }
    let ptxas_last = |g: &Vec<Step>| {
        let is_ptxas = |s: &Step| s.program.file_name().is_some_and(|n| n == "ptxas");
        g.iter().filter(|s| is_ptxas(s)).count() == 1 && g.last().is_some_and(is_ptxas)
    };
    let shaped = groups.len() == arches.len() && groups.iter().all(ptxas_last) && !before.is_empty();
    (shaped && !after.is_empty()).then_some((before, groups, after))
}

/// The arch (index into `arches`) whose file `step` writes.
fn arch_of(step: &Step, arches: &[Arch]) -> Option<usize> {
    let output = step.args.iter().position(|a| a == "-o").and_then(|i| step.args.get(i + 1))?;
    let name = Path::new(output).file_name()?.to_str()?;
    arches.iter().position(|a| name.contains(&format!(".{}.", a.virtual_name())))
}

impl Plan {
    /// How many commands it runs at most, for the debug note.
    pub fn len(&self) -> usize {
        self.before.len() + self.arches.iter().map(Vec::len).sum::<usize>() + self.after.len()
    }

    /// Runs the plan: the steps before, then the arches (at most `threads` side by side; an arch
    /// `kept` has is restored into `keep` instead, an arch that finishes is handed to `kept` at
    /// once), then the steps after, and when all succeeded the kept work is dropped. A step that fails ends the run (`ok` false); one that runs
    /// out of `limit` or cannot start is the error, after every other arch has finished and been
    /// kept.
    pub fn run(
        &self,
        arches: &[Arch],
        keep: &Path,
        limit: Duration,
        threads: usize,
        kept: &dyn Kept,
    ) -> Result<Ran, Error> {
        let mut ran = Ran { ok: true, text: self.notes.clone(), kept: Vec::new() };
        if !self.run_steps(&self.before, limit, &mut ran.text)? {
            ran.ok = false;
            return Ok(ran);
        }
        // The files of the steps before (cudafe++ names its output after the last arch): not an arch's.
        let earlier: BTreeSet<String> = names(keep);
        let results: Vec<Mutex<Option<Result<ArchRun, Error>>>> = arches.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..threads.clamp(1, arches.len()) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(arch) = arches.get(i) else { break };
                    let result = self.run_arch(i, *arch, keep, &earlier, limit, kept);
                    *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                });
            }
        });
        for (arch, result) in arches.iter().zip(results) {
            let result = result.into_inner().unwrap_or_else(|e| e.into_inner());
            let ArchRun { ok, log, restored } = result.expect("every arch ran")?;
            ran.text.push_str(&log);
            if restored {
                ran.kept.push(*arch);
            }
            if !ok {
                ran.ok = false;
                return Ok(ran);
            }
        }
        ran.ok = self.run_steps(&self.after, limit, &mut ran.text)?;
        if ran.ok {
            arches.iter().for_each(|a| kept.forget(*a));
        }
        Ok(ran)
    }

    /// Arch `i`'s steps, or its kept work.
    fn run_arch(
        &self,
        i: usize,
        arch: Arch,
        keep: &Path,
        earlier: &BTreeSet<String>,
        limit: Duration,
        kept: &dyn Kept,
    ) -> Result<ArchRun, Error> {
        let folder = keep.display().to_string();
        if let Some(work) = kept.load(arch) {
            if restore(&work, keep, &folder).is_ok() {
                return Ok(ArchRun { ok: true, log: work.log.replace(KEEP, &folder), restored: true });
            }
        }
        let mut log = String::new();
        if !self.run_steps(&self.arches[i], limit, &mut log)? {
            return Ok(ArchRun { ok: false, log, restored: false });
        }
        let infix = format!(".{}.", arch.virtual_name());
        let mine = names(keep).into_iter().filter(|n| n.contains(&infix) && !earlier.contains(n));
        // The preprocessed source is cicc's input only, and the largest file by far.
        let files: Option<Vec<(String, Vec<u8>)>> = mine
            .filter(|n| !n.ends_with(".ii"))
            .map(|n| {
                let bytes = std::fs::read(keep.join(&n)).ok()?;
                Some((n, replace_bytes(bytes, &folder, KEEP)))
            })
            .collect();
        if let Some(files) = files {
            kept.store(arch, &ArchWork { files, log: log.replace(&folder, KEEP) });
        }
        Ok(ArchRun { ok: true, log, restored: false })
    }

    /// Runs `steps` one after the other with nvcc's variables, appending what each printed to
    /// `text`; false at the first that fails.
    fn run_steps(&self, steps: &[Step], limit: Duration, text: &mut String) -> Result<bool, Error> {
        for step in steps {
            let mut tool = Tool::new(&step.program).args(&step.args).timeout(limit);
            for (name, value) in &self.env {
                tool = tool.env(name, value);
            }
            let (status, out) = tool.run_unchecked()?;
            text.push_str(&out.stdout);
            text.push_str(&out.stderr);
            if !status.success() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The names of the files in `dir`.
fn names(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return BTreeSet::new() };
    entries.filter_map(Result::ok).filter_map(|e| e.file_name().into_string().ok()).collect()
}

/// Writes `work`'s files into `keep` (text files with [`KEEP`] back to `folder`).
fn restore(work: &ArchWork, keep: &Path, folder: &str) -> std::io::Result<()> {
    for (name, bytes) in &work.files {
        if name.contains('/') || name.starts_with('.') {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidData));
        }
        std::fs::write(keep.join(name), replace_bytes(bytes.clone(), KEEP, folder))?;
    }
    Ok(())
}

/// `bytes` with `from` replaced by `to` where it is UTF-8 text; binary files (cubins) as they are.
fn replace_bytes(bytes: Vec<u8>, from: &str, to: &str) -> Vec<u8> {
    match String::from_utf8(bytes) {
        Ok(text) => text.replace(from, to).into_bytes(),
        Err(e) => e.into_bytes(),
    }
}

/// `files` as one byte string: per file, its name and then its bytes, each as a cache entry's
/// section is written ([`cache::put_section`]).
pub fn pack(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, bytes) in files {
        cache::put_section(&mut out, name.as_bytes());
        cache::put_section(&mut out, bytes);
    }
    out
}

/// [`pack`]'s files back; `None` when the bytes are not what it writes.
pub fn unpack(mut bytes: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut files = Vec::new();
    while !bytes.is_empty() {
        let name = cache::take_section(&mut bytes)?;
        let data = cache::take_section(&mut bytes)?;
        files.push((String::from_utf8(name.to_vec()).ok()?, data.to_vec()));
    }
    Some(files)
}

#[cfg(test)]
#[path = "steps_tests.rs"]
mod tests;

//! `console` blocks marked to run: `<!-- run: fixture=NAME -->` (optionally `exit=N`, default 0)
//! on the line just before the fence. Each `$ cargo launch ARGS` line runs with the real binary in
//! a fresh copy of `fixtures/crates/NAME` (`template/` for NAME=template), and the lines under it
//! up to the next `$` line are compared with what it printed.
//!
//! What is compared, after normalisation (docs/src/design/docs.md says the same for writers):
//! * the output is stdout, then stderr without cargo's own progress lines (`Compiling`,
//!   `Finished`, `Blocking`...: indented status words), trailing spaces and blank lines trimmed;
//! * paths: the crate copy's temporary folder reads `/path/to/NAME`, the tests' shared target
//!   folder `/path/to/NAME/target` (where a user's own build goes) and this checkout
//!   `/path/to/cargo-launch`; the copy's package name loses the `-PID-N` suffix the harness gives it;
//! * durations (a number with `ms`, `s`, `µs`, `us`, `min` or `h`) read `[TIME]` on both sides, so
//!   a page keeps the real time of the run it shows;
//! * in the page, `[..]` in a line matches any text and a line `...` any number of lines.
//!
//! `LAUNCH_BLESS_DOCS=1` writes the real output (paths normalised, times as measured) into the
//! blocks that differ instead of failing.

use std::path::{Path, PathBuf};

/// A run marker: which crate, and the exit code every command must give.
#[derive(Debug, PartialEq)]
pub struct Marker {
    pub fixture: String,
    pub exit: i32,
}

/// The marker on `line` (`<!-- run: fixture=NAME [exit=N] -->`); `None` when it is no marker.
pub fn marker(line: &str) -> Option<Result<Marker, String>> {
    let inner = line.trim().strip_prefix("<!--")?.strip_suffix("-->")?.trim().strip_prefix("run:")?;
    let mut fixture = None;
    let mut exit = 0;
    for word in inner.split_whitespace() {
        match word.split_once('=') {
            Some(("fixture", v)) => fixture = Some(v.to_string()),
            Some(("exit", v)) => match v.parse() {
                Ok(n) => exit = n,
                Err(_) => return Some(Err(format!("`{word}`: exit= takes a number"))),
            },
            _ => return Some(Err(format!("`{word}`: a run marker takes fixture=NAME and exit=N"))),
        }
    }
    Some(fixture.map(|fixture| Marker { fixture, exit }).ok_or_else(|| "a run marker needs fixture=NAME".into()))
}

/// One command of a block and the output the page shows for it.
#[derive(Debug, PartialEq)]
pub struct Step {
    pub args: Vec<String>,
    pub shown: String,
}

/// The steps of a run block: each `$ cargo launch ARGS` line and the lines under it.
pub fn steps(text: &str) -> Result<Vec<Step>, String> {
    let mut steps: Vec<Step> = Vec::new();
    for line in text.lines() {
        if let Some(command) = line.strip_prefix("$ ") {
            if command.contains(['"', '\'', '$', '|', '&', ';', '>', '<', '`', '*']) {
                return Err(format!("`{command}`: run blocks hold plain words, no shell syntax"));
            }
            let words: Vec<&str> = command.split_whitespace().collect();
            let ["cargo", "launch", args @ ..] = words.as_slice() else {
                return Err(format!("`{command}`: only `cargo launch ...` commands run"));
            };
            steps.push(Step { args: args.iter().map(|a| a.to_string()).collect(), shown: String::new() });
        } else if let Some(step) = steps.last_mut() {
            step.shown.push_str(line);
            step.shown.push('\n');
        } else if !line.trim().is_empty() {
            return Err(format!("`{line}`: output before the first `$ cargo launch` line"));
        }
    }
    if steps.is_empty() {
        return Err("a run block with no `$ cargo launch` line".into());
    }
    Ok(steps)
}

/// Cargo's status words, which it prints right-aligned (so indented) on stderr.
const CARGO_STATUS: &[&str] = &[
    "Compiling",
    "Finished",
    "Blocking",
    "Building",
    "Checking",
    "Running",
    "Fresh",
    "Dirty",
    "Locking",
    "Adding",
    "Updating",
    "Downloading",
    "Downloaded",
    "Packaging",
    "Documenting",
];

/// What a command printed, as a page shows it: stdout, then stderr without cargo's progress.
pub fn printed(stdout: &str, stderr: &str) -> String {
    let status =
        |l: &&str| l.starts_with(' ') && l.split_whitespace().next().is_some_and(|w| CARGO_STATUS.contains(&w));
    let mut out = stdout.to_string();
    for l in stderr.lines().filter(|l| !status(l)) {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// The paths a run prints that differ from machine to machine, and what a page shows instead.
pub struct Paths {
    pub replace: Vec<(String, String)>,
    /// The `-PID-` of the harness's package names (followed by the copy's number).
    pub suffix: String,
}

impl Paths {
    pub fn new(copy: &Path, name: &str, root: &Path) -> Paths {
        let mut replace = Vec::new();
        for dir in [copy.to_path_buf(), copy.canonicalize().unwrap_or(copy.to_path_buf())] {
            replace.push((dir.display().to_string(), format!("/path/to/{name}")));
        }
        replace.push((root.join("target/fixtures").display().to_string(), format!("/path/to/{name}/target")));
        replace.push((root.display().to_string(), "/path/to/cargo-launch".into()));
        Paths { replace, suffix: format!("-{}-", std::process::id()) }
    }

    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (from, to) in &self.replace {
            out = out.replace(from.as_str(), to);
        }
        // `name-PID-N` → `name`.
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(&self.suffix) {
            let after = &rest[at + self.suffix.len()..];
            let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            result.push_str(&rest[..at]);
            if digits == 0 {
                result.push_str(&self.suffix);
            }
            rest = &after[digits..];
        }
        result.push_str(rest);
        result
    }
}

/// Durations as `[TIME]`: a number (`12`, `0.35`) with an optional space and a unit of time.
pub fn times(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let starts =
            b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '.' || b[i - 1] == '_'));
        if starts {
            let mut j = i;
            while j < b.len()
                && (b[j].is_ascii_digit() || (b[j] == '.' && j + 1 < b.len() && b[j + 1].is_ascii_digit()))
            {
                j += 1;
            }
            let k = if j < b.len() && b[j] == ' ' { j + 1 } else { j };
            let unit = ["ms", "µs", "us", "min", "s", "h"].iter().find(|u| {
                let u: Vec<char> = u.chars().collect();
                b[k..].starts_with(&u) && b.get(k + u.len()).is_none_or(|c| !c.is_alphanumeric())
            });
            if let Some(u) = unit {
                out.push_str("[TIME]");
                i = k + u.chars().count();
                continue;
            }
            out.extend(&b[i..j]);
            i = j;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// `text`'s lines, trailing spaces and trailing blank lines removed, durations as `[TIME]`.
fn lines(text: &str) -> Vec<String> {
    let mut v: Vec<String> = times(text).lines().map(|l| l.trim_end().to_string()).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// Whether `actual` is one line the page's `shown` line stands for (`[..]`: any text).
fn line_matches(shown: &str, actual: &str) -> bool {
    let parts: Vec<&str> = shown.split("[..]").collect();
    if parts.len() == 1 {
        return shown == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || !actual[first.len()..].ends_with(last) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the output `actual` is what the page shows (`shown`), both normalised for durations.
pub fn matches(shown: &str, actual: &str) -> bool {
    fn go(s: &[String], a: &[String]) -> bool {
        match s.split_first() {
            None => a.is_empty(),
            Some((first, rest)) if first == "..." => (0..=a.len()).any(|skip| go(rest, &a[skip..])),
            Some((first, rest)) => a.split_first().is_some_and(|(x, more)| line_matches(first, x) && go(rest, more)),
        }
    }
    go(&lines(shown), &lines(actual))
}

/// A copy of the crate `name` (a fixture, or the template) in a fresh temporary folder: path
/// dependencies point at this checkout and the package is renamed `NAME-PID-N` (see
/// `support::fixture`, which does the same for fixtures: one OUT_DIR per copy in the shared target
/// folder).
pub fn copy(root: &Path, name: &str) -> Result<tempfile::TempDir, String> {
    if name != "template" {
        if !root.join("fixtures/crates").join(name).join("Cargo.toml").is_file() {
            return Err(format!("fixture={name}: no fixtures/crates/{name}/Cargo.toml"));
        }
        return Ok(crate::support::fixture(name));
    }
    let dir = tempfile::Builder::new().prefix("launch-template-").tempdir().map_err(|e| e.to_string())?;
    copy_tree(&root.join("template"), dir.path());
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| e.to_string())?;
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let text = text.replace("path = \"../", &format!("path = \"{}/", root.display())).replacen(
        "name = \"launch-template\"",
        &format!("name = \"launch-template-{}-{n}\"", std::process::id()),
        1,
    );
    std::fs::write(&manifest, text).map_err(|e| e.to_string())?;
    Ok(dir)
}

/// The crate's files without its build output.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let name = e.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        if e.path().is_dir() {
            copy_tree(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).expect("copy file");
        }
    }
}

/// A run block's result: `Ok` when every command printed what the page shows; else the reason,
/// and the block's text as the real run printed it (for `LAUNCH_BLESS_DOCS=1`).
pub fn run(root: &Path, marker: &Marker, text: &str) -> Result<(), (String, String)> {
    let steps = steps(text).map_err(|e| (e, text.to_string()))?;
    let dir = copy(root, &marker.fixture).map_err(|e| (e, text.to_string()))?;
    let paths = Paths::new(dir.path(), &marker.fixture, root);
    let mut real = String::new();
    let mut failures = Vec::new();
    for step in &steps {
        let mut cmd = crate::support::cargo_launch();
        cmd.arg("launch").args(&step.args).current_dir(dir.path());
        let (code, stdout, stderr) = crate::support::run(&mut cmd);
        let out = paths.apply(&printed(&stdout, &stderr));
        let command = format!("$ cargo launch {}", step.args.join(" "));
        real.push_str(&format!("{command}\n{}\n", out.trim_end()));
        if code != marker.exit {
            failures.push(format!("`{command}` exited {code}, not {}:\n{out}", marker.exit));
        } else if !matches(&step.shown, &out) {
            failures.push(format!("`{command}` printed\n{out}\nbut the page shows\n{}", step.shown));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err((failures.join("\n"), real))
    }
}

/// The folder of the crate copy a run block uses, for messages.
pub fn describe(marker: &Marker) -> PathBuf {
    if marker.fixture == "template" {
        PathBuf::from("template")
    } else {
        Path::new("fixtures/crates").join(&marker.fixture)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_and_steps() {
        assert_eq!(marker("<!-- run: fixture=ci -->"), Some(Ok(Marker { fixture: "ci".into(), exit: 0 })));
        assert_eq!(
            marker("<!-- run: fixture=bad_config exit=2 -->"),
            Some(Ok(Marker { fixture: "bad_config".into(), exit: 2 }))
        );
        assert!(marker("<!-- run: exit=x -->").unwrap().is_err());
        assert!(marker("<!-- run: -->").unwrap().is_err());
        assert_eq!(marker("<!-- a comment -->"), None);
        let s = steps("$ cargo launch report --arch sm_90\nline 1\n\n$ cargo launch check\nok\n").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].args.join(" "), s[0].shown.as_str()), ("report --arch sm_90".into(), "line 1\n\n"));
        assert!(steps("$ cargo build\n").unwrap_err().contains("only `cargo launch"));
        assert!(steps("$ cargo launch report | head\n").unwrap_err().contains("no shell syntax"));
        assert!(steps("out\n$ cargo launch report\n").unwrap_err().contains("before the first"));
    }

    #[test]
    fn normalisation_of_times_and_paths() {
        assert_eq!(
            times("built in 1.25 s, 30ms each; sm_90 0.5s x12s 3 sms"),
            "built in [TIME], [TIME] each; sm_90 [TIME] x12s 3 sms"
        );
        let copy = Path::new("/tmp/launch-ci-abc");
        let paths = Paths::new(copy, "ci", Path::new("/work/repo"));
        let pid = std::process::id();
        let text = format!("/tmp/launch-ci-abc/kernels/a.cu\n/work/repo/target/fixtures/debug\n/work/repo/launch\nfixture-ci-{pid}-3 v0.1.0\n");
        assert_eq!(
            paths.apply(&text),
            "/path/to/ci/kernels/a.cu\n/path/to/ci/target/debug\n/path/to/cargo-launch/launch\nfixture-ci v0.1.0\n"
        );
        assert_eq!(printed("out\n", "   Compiling x v0.1.0\nwarning: w\n    Finished `dev`\n"), "out\nwarning: w\n");
    }

    #[test]
    fn a_console_output_that_differs_is_found() {
        let actual = "sm_90: 256 threads\n  occupancy  12.5 %\n  took 1.5 s\nend\n";
        assert!(matches("sm_90: 256 threads\n  occupancy  12.5 %\n  took 0.9 s\nend\n", actual));
        assert!(matches("sm_90: [..] threads\n...\nend\n", actual));
        assert!(matches("sm_90: 256 threads\n...\n", actual));
        assert!(!matches("sm_90: 256 threads\n  occupancy  25.0 %\n  took 1.5 s\nend\n", actual));
        assert!(!matches("sm_90: 256 threads\n", actual), "a shorter page hides output");
        assert!(!matches("sm_90: [..] blocks\n...\n", actual));
    }
}

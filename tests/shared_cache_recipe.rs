//! The documentation's GitHub Actions recipe for the shared kernel cache, run as written: its
//! workflow is read out of the document (the ```yaml block of the section [`SECTION`] that sets
//! `LAUNCH_CACHE_REMOTE`), parsed as a workflow, and its job's `run:` steps are run, with the
//! environment the workflow sets, against a real S3-compatible server (rclone's `serve s3`, as in
//! `tests/remote_cache.rs`).
//!
//! What stands in for the runner, and nothing else: the workflow's `${{ secrets.* }}` are the test
//! server's credentials (empty for a pull request from a fork, which gets no secrets);
//! `AWS_ENDPOINT_URL` points the recipe's `s3://` URL at the test server (its bucket is a folder
//! there); `actions/checkout` is a fresh copy of `fixtures/crates/remote_cache` at a path of its
//! own, `actions/cache` of the toolchain folder is a link to the installed pinned toolchain in an
//! otherwise empty `LAUNCH_CACHE_DIR` (no kernel entries), and `cargo install` of cargo-launch is
//! the binary under test put first on `PATH` (as in `tests/ci_recipe.rs`). The jobs share the
//! fixtures' target folder so that OpenDAL compiles once per test run, not once per job; the
//! kernel cache is never in the target folder.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use launch_schema::stats::BuildStats;
use serde::Deserialize;

use crate::remote_cache::{rclone, Kind, Server, KEY_ID, SECRET};
use crate::support::{fixture, root, run, toolchain_root, SCRUBBED};

/// The document holding the recipe, from the repository root.
const DOCUMENT: &str = "docs/src/guide/shared-cache.md";
/// The title of the section holding it (any heading level).
const SECTION: &str = "GitHub Actions";

/// The recipe's bucket on the test server: the recipe's URL names it, and `AWS_ENDPOINT_URL`
/// sends its requests to the test server.
const BUCKET: &str = "team-kernels";

/// A GitHub Actions workflow, as far as the recipe uses one: an unknown key (a typo such as
/// `step:`) fails to parse.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Workflow {
    name: Option<String>,
    on: serde_yaml_ng::Value,
    #[serde(default)]
    env: BTreeMap<String, String>,
    jobs: BTreeMap<String, Job>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Job {
    #[serde(rename = "runs-on")]
    runs_on: String,
    #[serde(default)]
    env: BTreeMap<String, String>,
    steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    name: Option<String>,
    uses: Option<String>,
    run: Option<String>,
    #[serde(default)]
    with: BTreeMap<String, serde_yaml_ng::Value>,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

/// The ```yaml block of the section titled [`SECTION`] in [`DOCUMENT`] that sets
/// `LAUNCH_CACHE_REMOTE`.
fn recipe_yaml() -> String {
    let text = fs::read_to_string(root().join(DOCUMENT)).unwrap_or_else(|e| panic!("{DOCUMENT}: {e}"));
    let heading = |l: &str| l.starts_with('#').then(|| l.chars().take_while(|c| *c == '#').count());
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| heading(l).is_some() && l.trim_start_matches('#').trim() == SECTION)
        .unwrap_or_else(|| panic!("{DOCUMENT} has no section titled `{SECTION}`"));
    let level = heading(lines[start]).unwrap();
    let mut section = Vec::new();
    let mut in_code = false;
    for l in &lines[start + 1..] {
        in_code ^= l.trim_start().starts_with("```");
        if !in_code && heading(l).is_some_and(|n| n <= level) && !l.starts_with("```") {
            break;
        }
        section.push(*l);
    }
    let section = section.join("\n");
    section
        .split("```yaml")
        .skip(1)
        .filter_map(|s| s.split("```").next())
        .find(|y| y.contains("LAUNCH_CACHE_REMOTE"))
        .unwrap_or_else(|| panic!("no ```yaml block setting LAUNCH_CACHE_REMOTE under `{SECTION}` in {DOCUMENT}"))
        .to_string()
}

/// What a run of the workflow is triggered by, and the secrets it gets.
struct Event {
    name: &'static str,
    secrets: BTreeMap<String, &'static str>,
}

impl Event {
    /// A push (the main branch) or a pull request from a branch of the repository: the secrets.
    fn with_secrets(name: &'static str, recipe: &Workflow) -> Event {
        let mut secrets = BTreeMap::new();
        for (var, value) in recipe.jobs.values().flat_map(|j| &j.env).chain(&recipe.env) {
            let Some(secret) = value.trim().strip_prefix("${{").and_then(|v| v.trim().strip_prefix("secrets.")) else {
                continue;
            };
            let secret = secret.trim_end_matches("}}").trim();
            let given = match var.as_str() {
                "AWS_ACCESS_KEY_ID" => KEY_ID,
                "AWS_SECRET_ACCESS_KEY" => SECRET,
                other => panic!("the recipe reads secret `{secret}` into {other}: which credential is it?"),
            };
            secrets.insert(secret.to_string(), given);
        }
        Event { name, secrets }
    }

    /// A pull request from a fork: GitHub gives it no secrets (they read as empty strings).
    fn fork_pull_request() -> Event {
        Event { name: "pull_request", secrets: BTreeMap::new() }
    }

    /// A workflow value: literal text, or one `${{ expression }}` of the forms the recipe uses
    /// (`secrets.NAME`, `github.event_name`, '…' literals, `==`, `&&`, `||`). Anything else fails,
    /// so a recipe that needs more is noticed here.
    fn value(&self, text: &str) -> String {
        let Some(expr) = text.trim().strip_prefix("${{").and_then(|t| t.strip_suffix("}}")) else {
            assert!(!text.contains("${{"), "an expression inside other text: {text}");
            return text.to_string();
        };
        // GitHub's `a && b || c`: `||` binds loosest; each side is truthy unless empty.
        let or = expr.split("||").map(|alternative| {
            let mut value = String::new();
            for operand in alternative.split("&&") {
                value = self.comparison(operand.trim());
                if value.is_empty() {
                    break;
                }
            }
            value
        });
        or.clone().find(|v| !v.is_empty()).unwrap_or_else(|| or.last().unwrap_or_default())
    }

    fn comparison(&self, text: &str) -> String {
        match text.split_once("==") {
            Some((a, b)) => {
                if self.operand(a.trim()) == self.operand(b.trim()) {
                    "true".into()
                } else {
                    String::new()
                }
            }
            None => self.operand(text),
        }
    }

    fn operand(&self, text: &str) -> String {
        if let Some(s) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
            return s.to_string();
        }
        if text == "github.event_name" {
            return self.name.to_string();
        }
        if let Some(name) = text.strip_prefix("secrets.") {
            return self.secrets.get(name).copied().unwrap_or_default().to_string();
        }
        panic!("the recipe uses `{text}`, which this test does not evaluate")
    }
}

/// One run of the recipe's job: a fresh checkout and an empty local cache.
struct Runner {
    checkout: tempfile::TempDir,
    cache: tempfile::TempDir,
}

impl Runner {
    fn new() -> Runner {
        let cache = tempfile::tempdir().unwrap();
        // `actions/cache` restored the toolchain folder; the kernel cache beside it is empty.
        let pinned = toolchain_root();
        let link = cache.path().join("toolchain").join(pinned.file_name().unwrap());
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&pinned, &link).unwrap();
        Runner { checkout: fixture("remote_cache"), cache }
    }

    /// Runs the `run:` steps of `job` for `event` against `server`; returns the statistics of its
    /// kernel build and the remote's warnings.
    fn run_job(&self, recipe: &Workflow, job: &Job, event: &Event, server: &Server) -> (BuildStats, Vec<String>) {
        let bin_dir = crate::support::binary().parent().unwrap().to_path_buf();
        let path = launch_engine::tooling::Env::cli().get(launch_engine::tooling::var::PATH).unwrap_or_default();
        let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(&path))).unwrap();
        let mut warnings = Vec::new();
        let mut built = false;
        for step in &job.steps {
            if let Some(uses) = &step.uses {
                check_action(uses, step);
                continue;
            }
            let command = step.run.as_deref().expect("a step either uses an action or runs a command").trim();
            let words: Vec<&str> = command.split(" #").next().unwrap().split_whitespace().collect();
            assert!(!command.contains(['\n', '"', '\'', '$', '|', '&', ';']), "plain words: {command}");
            assert_eq!(words[0], "cargo", "{command}");
            if words[1] == "install" {
                check_install(&words, command);
                continue;
            }
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args(&words[1..]).current_dir(self.checkout.path());
            for v in SCRUBBED.iter().chain(&["AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION"]) {
                cmd.env_remove(v);
            }
            cmd.env("PATH", &path)
                .env("CARGO_TARGET_DIR", crate::support::fixtures_target())
                .env("CARGO_TERM_COLOR", "never")
                .env("LAUNCH_CACHE_DIR", self.cache.path())
                .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", server.port))
                // No instance-metadata lookups from a test (a fork's job has no credentials).
                .env("AWS_EC2_METADATA_DISABLED", "true");
            for (k, v) in recipe.env.iter().chain(&job.env).chain(&step.env) {
                cmd.env(k, event.value(v));
            }
            let (code, stdout, stderr) = run(&mut cmd);
            assert_eq!(code, 0, "`{command}` failed ({}):\n{stdout}\n{stderr}", event.name);
            warnings.extend(
                stderr
                    .lines()
                    .filter(|l| l.starts_with("warning:") && l.contains("remote kernel cache"))
                    .map(String::from),
            );
            built |= words[1] == "build";
        }
        assert!(built, "the recipe's job runs no `cargo build`");
        (self.stats(), warnings)
    }

    /// The kernel build's `build-stats.json` (the fixture copy's package name is its own).
    fn stats(&self) -> BuildStats {
        let text = fs::read_to_string(self.checkout.path().join("Cargo.toml")).unwrap();
        let name = text.lines().find_map(|l| l.strip_prefix("name = ")).unwrap().trim_matches('"').to_string();
        let build = root().join("target/fixtures/debug/build");
        let newest = fs::read_dir(&build)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().strip_prefix(&name).is_some_and(|r| r.starts_with('-')))
            .map(|e| e.path().join("out/launch/build-stats.json"))
            .filter(|p| p.is_file())
            .max_by_key(|p| fs::metadata(p).unwrap().modified().unwrap())
            .unwrap_or_else(|| panic!("no build-stats.json of {name} under {}", build.display()));
        BuildStats::from_json(&fs::read_to_string(newest).unwrap()).unwrap()
    }
}

/// The recipe's actions are the ones this test stands in for.
fn check_action(uses: &str, step: &Step) {
    let action = uses.split('@').next().unwrap();
    match action {
        "actions/checkout" | "actions/setup-python" => {}
        "actions/cache" => {
            // Only the toolchain: a cached kernel folder would be restored stale, never updated
            // under a fixed key; the remote is what shares kernels.
            let path = step.with.get("path").and_then(|p| p.as_str()).unwrap_or_default();
            assert!(path.trim_end_matches('/').ends_with("cargo-launch/toolchain"), "actions/cache of {path}");
        }
        other => panic!("the recipe uses {other}, which this test does not stand in for"),
    }
}

/// `cargo install` installs this repository's cargo-launch from a path, never a network source.
fn check_install(words: &[&str], command: &str) {
    assert!(!words.iter().any(|a| ["--git", "--registry", "--index"].contains(a)), "{command}");
    let at = words.iter().position(|a| *a == "--path").unwrap_or_else(|| panic!("no --path: {command}"));
    assert_eq!(Path::new(words[at + 1]).file_name().unwrap(), "cargo-launch", "{command}");
}

/// Every object under the recipe's URL on the server, with its bytes.
fn objects(server: &Server, url_path: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![server.data.path().join(BUCKET).join(url_path)];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                out.insert(e.path(), fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn the_github_actions_recipe_for_the_shared_cache_runs_as_written() {
    let yaml = recipe_yaml();
    let recipe: Workflow =
        serde_yaml_ng::from_str(&yaml).unwrap_or_else(|e| panic!("the recipe is not a workflow ({e}):\n{yaml}"));
    assert!(recipe.name.as_deref().is_none_or(|n| !n.is_empty()));
    for trigger in ["push", "pull_request"] {
        assert!(recipe.on.get(trigger).is_some(), "the recipe runs on {trigger}: `on` is {:?}", recipe.on);
    }
    let (job_name, job) = recipe.jobs.iter().next().expect("the recipe has a job");
    assert_eq!(recipe.jobs.len(), 1, "one job");
    assert!(!job.runs_on.is_empty() && job.steps.iter().all(|s| s.name.as_deref() != Some("")));
    let all_env: BTreeMap<&str, &str> =
        recipe.env.iter().chain(&job.env).map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let url = *all_env.get("LAUNCH_CACHE_REMOTE").unwrap_or_else(|| panic!("{job_name}: no LAUNCH_CACHE_REMOTE"));
    let mode =
        *all_env.get("LAUNCH_CACHE_REMOTE_MODE").unwrap_or_else(|| panic!("{job_name}: no LAUNCH_CACHE_REMOTE_MODE"));
    let url_path = url.strip_prefix(&format!("s3://{BUCKET}/")).unwrap_or_else(|| panic!("{url}: s3://{BUCKET}/…"));

    let Some(rclone) = rclone() else { return };
    let server = Server::start(&rclone, Kind::S3);
    fs::create_dir_all(server.data.path().join(BUCKET)).unwrap();
    let push = Event::with_secrets("push", &recipe);
    assert_eq!(push.value(mode), "rw", "a push writes");

    // The main branch, first: an empty server is filled.
    let (first, warnings) = Runner::new().run_job(&recipe, job, &push, &server);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!((first.jobs, first.compiled, first.remote_hits), (4, 4, 0));
    let remote = first.remote.as_ref().expect("the build used the remote");
    assert_eq!((remote.read_only, remote.entries_written, remote.failed), (false, 4, false), "{remote:?}");
    assert!(remote.url.starts_with(url), "{} is the recipe's {url}", remote.url);
    let filled = objects(&server, Path::new(url_path));
    assert_eq!(filled.len(), 4, "{:?}", filled.keys());

    // Another checkout, an empty local cache: nothing compiles.
    let (second, warnings) = Runner::new().run_job(&recipe, job, &push, &server);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!((second.compiled, second.cached, second.remote_hits), (0, 4, 4));
    assert_eq!(second.remote.as_ref().unwrap().entries_written, 0);

    // A pull request that changes a kernel: it reads (the unchanged file's jobs come from the
    // server), compiles its change, and writes nothing.
    let pull = Event::with_secrets("pull_request", &recipe);
    assert_eq!(pull.value(mode), "ro", "a pull request reads");
    let pr = Runner::new();
    let kernel = pr.checkout.path().join("kernels/scale.cu");
    let text = fs::read_to_string(&kernel).unwrap();
    fs::write(&kernel, text.replace("p[i] *= s;", "p[i] = p[i] * s + 1.0f;")).unwrap();
    let (changed, warnings) = pr.run_job(&recipe, job, &pull, &server);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!((changed.compiled, changed.remote_hits), (2, 2));
    let remote = changed.remote.as_ref().unwrap();
    assert!(remote.read_only && remote.entries_written == 0 && !remote.failed, "{remote:?}");
    assert!(objects(&server, Path::new(url_path)) == filled, "a pull request's build changed the server");

    // A pull request from a fork: no secrets, so the server refuses it. The build compiles
    // locally with one warning, and writes nothing.
    let fork = Event::fork_pull_request();
    let (forked, warnings) = Runner::new().run_job(&recipe, job, &fork, &server);
    let remote = forked.remote.as_ref().unwrap();
    assert!(remote.read_only && remote.failed && remote.entries_written == 0, "{remote:?}");
    assert_eq!(forked.compiled, 4);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(objects(&server, Path::new(url_path)) == filled, "a fork's build changed the server");
}

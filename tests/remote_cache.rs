//! The remote kernel cache (issue 21 items 2, 3, 6) against real servers: rclone's `serve s3` (an
//! S3-compatible server) and `serve webdav`, installed pinned by `tools/test-servers/install.sh`,
//! each started as its own process on a free loopback port, serving a folder the test reads and
//! damages directly. The builds are real `cargo build`s of `fixtures/crates/remote_cache` (two
//! files × two arches: four jobs), whose launch-build has the `remote` feature on; every build
//! has its own checkout (another path) and its own local cache, as builders of a fleet do.
//!
//! The tuner's remote tests (tests/tune_remote.rs) start their servers with this file's [`Server`].
//!
//! Without the server (another platform, not installed) each test skips, saying why;
//! `LAUNCH_TEST_REQUIRE_SERVERS=1` (set by `.ci/run`) makes that a failure.
#![cfg(unix)]

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use launch_schema::stats::BuildStats;
use serde_json::Value;

use crate::support::{fixture, root, run, toolchain_root, SCRUBBED};

pub(crate) const KEY_ID: &str = "launch-test-key";
pub(crate) const SECRET: &str = "launch-test-secret";

/// The pinned rclone, or `None` (with the reason printed) when the test must skip.
pub(crate) fn rclone() -> Option<PathBuf> {
    let dir = launch_engine::tooling::Env::cli()
        .get(launch_engine::tooling::var::LAUNCH_TEST_SERVERS)
        .map_or_else(|| root().join("target/test-servers"), PathBuf::from);
    let bin = dir.join("rclone-1.75.2/rclone");
    if bin.is_file() {
        return Some(bin);
    }
    let why = format!("{} is not installed: run tools/test-servers/install.sh", bin.display());
    let required = launch_engine::tooling::Env::cli()
        .get(launch_engine::tooling::var::LAUNCH_TEST_REQUIRE_SERVERS)
        .is_some_and(|v| v == "1");
    assert!(!required, "LAUNCH_TEST_REQUIRE_SERVERS=1: {why}");
    eprintln!("skipped: {why}");
    None
}

/// A server process on a loopback port, serving `data`; killed when dropped.
pub(crate) struct Server {
    child: Option<Child>,
    pub(crate) port: u16,
    pub(crate) data: tempfile::TempDir,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    S3,
    Webdav,
}

impl Server {
    pub(crate) fn start(rclone: &Path, kind: Kind) -> Server {
        let data = tempfile::tempdir().unwrap();
        if kind == Kind::S3 {
            // A bucket is a top-level folder.
            fs::create_dir(data.path().join("fleet")).unwrap();
        }
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        let mut cmd = Command::new(rclone);
        cmd.arg("--config").arg(data.path().join("no-rclone.conf"));
        match kind {
            Kind::S3 => cmd.args(["serve", "s3", "--addr", &addr, "--auth-key", &format!("{KEY_ID},{SECRET}")]),
            Kind::Webdav => cmd.args(["serve", "webdav", "--addr", &addr, "--user", "builder", "--pass", SECRET]),
        };
        cmd.arg(data.path()).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let child = cmd.spawn().expect("start rclone");
        let started = Instant::now();
        while TcpStream::connect(&addr).is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "rclone did not listen on {addr}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Server { child: Some(child), port, data }
    }

    /// `LAUNCH_CACHE_REMOTE` for it, under the path `team`.
    pub(crate) fn url(&self, kind: Kind) -> String {
        match kind {
            Kind::S3 => format!("s3://fleet/team?endpoint=http://127.0.0.1:{}", self.port),
            Kind::Webdav => format!("webdav+http://builder:{SECRET}@127.0.0.1:{}/team", self.port),
        }
    }

    /// The folder its entries land in.
    fn entries_dir(&self, kind: Kind) -> PathBuf {
        match kind {
            Kind::S3 => self.data.path().join("fleet/team/kernels"),
            Kind::Webdav => self.data.path().join("team/kernels"),
        }
    }

    /// Every entry file on the server, sorted.
    fn entries(&self, kind: Kind) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let Ok(shards) = fs::read_dir(self.entries_dir(kind)) else { return out };
        for shard in shards.flatten() {
            out.extend(fs::read_dir(shard.path()).unwrap().flatten().map(|e| e.path()));
        }
        out.sort();
        out
    }

    pub(crate) fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A builder: its own checkout of the fixture and its own local cache.
struct Builder {
    checkout: tempfile::TempDir,
    cache: tempfile::TempDir,
}

impl Builder {
    fn new() -> Builder {
        Builder { checkout: fixture("remote_cache"), cache: tempfile::tempdir().unwrap() }
    }

    fn package(&self) -> String {
        let text = fs::read_to_string(self.checkout.path().join("Cargo.toml")).unwrap();
        let line = text.lines().find(|l| l.starts_with("name = ")).unwrap();
        line.trim_start_matches("name = ").trim_matches('"').to_string()
    }

    /// `cargo build` with the remote `url` (when given).
    fn command(&self, url: Option<&str>) -> Command {
        let mut cmd = Command::new(env!("CARGO"));
        for v in SCRUBBED.iter().chain(&[
            "AWS_PROFILE",
            "AWS_SESSION_TOKEN",
            "AWS_ENDPOINT_URL",
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
        ]) {
            cmd.env_remove(v);
        }
        cmd.current_dir(self.checkout.path())
            .args(["build", "--message-format=json-render-diagnostics"])
            .env("CARGO_TARGET_DIR", crate::support::fixtures_target())
            .env("CARGO_TERM_COLOR", "never")
            .env("LAUNCH_CACHE_DIR", self.cache.path())
            .env("LAUNCH_TOOLCHAIN", toolchain_root())
            .env("AWS_ACCESS_KEY_ID", KEY_ID)
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            // No instance-metadata lookups from a test.
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("LAUNCH_CACHE_REMOTE_TIMEOUT", "5");
        if let Some(url) = url {
            cmd.env("LAUNCH_CACHE_REMOTE", url);
        }
        cmd
    }

    fn build(&self, url: Option<&str>) -> Built {
        self.run(self.command(url))
    }

    fn run(&self, mut cmd: Command) -> Built {
        let id = format!("#{}@", self.package());
        let started = Instant::now();
        let (code, stdout, stderr) = run(&mut cmd);
        let took = started.elapsed();
        assert_eq!(code, 0, "cargo build failed:\n{stderr}");
        let mut out_dir = None;
        for line in stdout.lines() {
            let Ok(msg) = serde_json::from_str::<Value>(line) else { continue };
            if msg["package_id"].as_str().is_some_and(|p| p.contains(&id)) && msg["reason"] == "build-script-executed" {
                out_dir = msg["out_dir"].as_str().map(PathBuf::from);
            }
        }
        let out_dir = out_dir.unwrap_or_else(|| panic!("no build-script-executed message:\n{stdout}"));
        let text = fs::read_to_string(out_dir.join("launch/build-stats.json")).unwrap();
        let stats = BuildStats::from_json(&text).unwrap();
        let warnings =
            stderr.lines().filter(|l| l.starts_with("warning:") && l.contains("remote kernel cache")).map(String::from);
        Built { stats, warnings: warnings.collect(), stderr, took, out_dir }
    }
}

struct Built {
    stats: BuildStats,
    /// The remote's warnings.
    warnings: Vec<String>,
    stderr: String,
    took: Duration,
    out_dir: PathBuf,
}

/// A build against an empty server fills it; another builder (another checkout path, an empty
/// local cache) then compiles nothing: every job is a remote hit, checked and embedded.
fn fills_then_serves(kind: Kind) {
    let Some(rclone) = rclone() else { return };
    let server = Server::start(&rclone, kind);
    let url = server.url(kind);

    let first = Builder::new().build(Some(&url));
    assert_eq!((first.stats.jobs, first.stats.compiled, first.stats.remote_hits), (4, 4, 0), "{}", first.stderr);
    assert!(first.warnings.is_empty(), "{:?}", first.warnings);
    let remote = first.stats.remote.as_ref().expect("the remote is in the statistics");
    assert_eq!((remote.entries_written, remote.read_only, remote.failed), (4, false, false));
    assert!(!remote.url.contains(SECRET), "{}", remote.url);
    let on_server = server.entries(kind);
    assert_eq!(on_server.len(), 4, "{on_server:?}");
    let server_bytes: u64 = on_server.iter().map(|p| fs::metadata(p).unwrap().len()).sum();
    assert_eq!(remote.bytes_written, server_bytes);

    let second_builder = Builder::new();
    let second = second_builder.build(Some(&url));
    assert_eq!((second.stats.compiled, second.stats.cached, second.stats.remote_hits), (0, 4, 4), "{}", second.stderr);
    assert_eq!(second.stats.remote_jobs.len(), 4);
    assert_eq!(second.stats.remote.as_ref().unwrap().entries_written, 0, "hits are not written back");
    assert!(second.warnings.is_empty(), "{:?}", second.warnings);

    // `cargo launch report`'s header says where the jobs came from.
    let mut report = second_builder_report(&second_builder, &url);
    let (code, stdout, stderr) = run(&mut report);
    assert_eq!(code, 0, "{stderr}");
    let header =
        format!("kernel jobs: 4 (0 compiled, 0 from the local cache, 4 from the remote cache {}", kind_prefix(kind));
    assert!(stdout.lines().any(|l| l.starts_with(&header)), "no `{header}` in:\n{stdout}");
}

fn kind_prefix(kind: Kind) -> &'static str {
    match kind {
        Kind::S3 => "s3://fleet/team",
        Kind::Webdav => "webdav+http://builder:***@127.0.0.1",
    }
}

/// `cargo launch report` in `builder`'s checkout, with its cache and the remote `url`.
fn second_builder_report(builder: &Builder, url: &str) -> Command {
    let mut cmd = crate::support::cargo_launch();
    cmd.current_dir(builder.checkout.path())
        .env("LAUNCH_CACHE_DIR", builder.cache.path())
        .env("LAUNCH_TOOLCHAIN", toolchain_root())
        .env("LAUNCH_CACHE_REMOTE", url)
        .env("AWS_ACCESS_KEY_ID", KEY_ID)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .args(["launch", "report"]);
    cmd
}

#[test]
fn s3_a_build_fills_an_empty_server_and_another_checkout_compiles_nothing() {
    fills_then_serves(Kind::S3);
}

#[test]
fn webdav_a_build_fills_an_empty_server_and_another_checkout_compiles_nothing() {
    fills_then_serves(Kind::Webdav);
}

/// A damaged entry on the server is detected (a miss, never embedded), compiled again, and the
/// good entry replaces it on the server.
#[test]
fn s3_a_corrupted_entry_on_the_server_is_recompiled_and_replaced() {
    let Some(rclone) = rclone() else { return };
    let kind = Kind::S3;
    let server = Server::start(&rclone, kind);
    let url = server.url(kind);
    Builder::new().build(Some(&url));
    let victim = server.entries(kind)[0].clone();
    let good = fs::read(&victim).unwrap();
    let mut bad = good.clone();
    let middle = bad.len() / 2;
    bad[middle] ^= 0x5a;
    fs::write(&victim, &bad).unwrap();

    let again = Builder::new().build(Some(&url));
    assert_eq!((again.stats.compiled, again.stats.remote_hits, again.stats.corrupt), (1, 3, 1), "{}", again.stderr);
    assert!(
        again.stderr.contains("damaged kernel cache entry") && again.stderr.contains("checksum"),
        "{}",
        again.stderr
    );
    // Replaced by a good entry (not byte for byte the first: ptxas's log holds its compile time).
    let replaced = fs::read(&victim).unwrap();
    assert!(replaced != bad && replaced.len().abs_diff(good.len()) < 16, "the server's entry was not replaced");
    let third = Builder::new().build(Some(&url));
    assert_eq!((third.stats.compiled, third.stats.remote_hits, third.stats.corrupt), (0, 4, 0), "{}", third.stderr);
}

/// Read-only (configured in Cargo.toml's `cache-remote`, mode from the environment): hits are
/// used, nothing is written, even when everything compiles.
#[test]
fn webdav_read_only_writes_nothing() {
    let Some(rclone) = rclone() else { return };
    let kind = Kind::Webdav;
    let server = Server::start(&rclone, kind);
    let builder = Builder::new();
    let manifest = builder.checkout.path().join("Cargo.toml");
    // Cargo.toml names another server: LAUNCH_CACHE_REMOTE replaces it.
    let text = fs::read_to_string(&manifest).unwrap();
    let line = "arch = [\"sm_80\", \"sm_90\"]\ncache-remote = \"webdav+http://127.0.0.1:1/unused\"";
    fs::write(&manifest, text.replace("arch = [\"sm_80\", \"sm_90\"]", line)).unwrap();
    let url = server.url(kind);
    let mut cmd = builder.command(Some(&url));
    cmd.env("LAUNCH_CACHE_REMOTE_MODE", "ro");
    let built = builder.run(cmd);
    assert_eq!(built.stats.compiled, 4);
    let remote = built.stats.remote.as_ref().unwrap();
    assert!(remote.read_only && remote.entries_written == 0 && !remote.failed, "{remote:?}");
    assert!(server.entries(kind).is_empty(), "a read-only build wrote {:?}", server.entries(kind));
    assert!(built.warnings.is_empty(), "{:?}", built.warnings);
}

/// The crate's `cache-remote` is used when `LAUNCH_CACHE_REMOTE` is unset.
#[test]
fn s3_the_remote_can_be_configured_in_cargo_toml() {
    let Some(rclone) = rclone() else { return };
    let kind = Kind::S3;
    let server = Server::start(&rclone, kind);
    let builder = Builder::new();
    let manifest = builder.checkout.path().join("Cargo.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    let line = format!("arch = [\"sm_80\", \"sm_90\"]\ncache-remote = \"{}\"", server.url(kind));
    fs::write(&manifest, text.replace("arch = [\"sm_80\", \"sm_90\"]", &line)).unwrap();
    let built = builder.build(None);
    assert_eq!(built.stats.remote.as_ref().unwrap().entries_written, 4, "{}", built.stderr);
    assert_eq!(server.entries(kind).len(), 4);
}

/// The server killed while the build runs: the build succeeds, compiles what it must, and says
/// so in one warning.
#[test]
fn s3_a_server_killed_mid_build_is_one_warning_and_the_build_succeeds() {
    let Some(rclone) = rclone() else { return };
    let kind = Kind::S3;
    let mut server = Server::start(&rclone, kind);
    let builder = Builder::new();
    // Eight jobs, one at a time: the kill lands between two of them.
    let mut cmd = builder.command(Some(&server.url(kind)));
    cmd.env("LAUNCH_ARCH", "sm_75,sm_80,sm_86,sm_90").arg("-j1");
    let dir = server.entries_dir(kind);
    let build = std::thread::spawn(move || builder.run(cmd));
    let started = Instant::now();
    while fs::read_dir(&dir).map_or(true, |mut d| d.next().is_none()) {
        assert!(started.elapsed() < Duration::from_secs(600), "no entry reached the server");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();
    let built = build.join().unwrap();
    assert_eq!(built.stats.jobs, 8);
    assert_eq!(built.stats.compiled, 8, "{}", built.stderr);
    assert_eq!(built.warnings.len(), 1, "{:#?}\n{}", built.warnings, built.stderr);
    let remote = built.stats.remote.as_ref().unwrap();
    assert!(remote.failed && remote.entries_written < 8, "{remote:?}");
}

/// A server that accepts connections and never answers: the build waits for the timeout once,
/// then goes on without it.
#[test]
fn a_server_that_never_answers_is_bounded_by_the_timeout() {
    if rclone().is_none() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts and holds every connection, answering nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().take(64) {
            held.push(s);
        }
    });
    let builder = Builder::new();
    // Warm the build script's compile so the timing below is the build script's run.
    let warm = builder.build(None);
    // Without its copies of the first cache's entries, the rerun must ask the remote for each job.
    crate::support::forget_copies(&warm.out_dir);
    let cache2 = tempfile::tempdir().unwrap();
    let mut cmd = builder.command(Some(&format!("s3://fleet/team?endpoint=http://127.0.0.1:{port}")));
    cmd.env("LAUNCH_CACHE_DIR", cache2.path()).env("LAUNCH_CACHE_REMOTE_TIMEOUT", "2");
    // Rerun the build script (another cache folder already does).
    let built = builder.run(cmd);
    assert_eq!(built.stats.compiled, 4);
    assert_eq!(built.warnings.len(), 1, "{:#?}", built.warnings);
    assert!(built.warnings[0].contains("within 2s"), "{}", built.warnings[0]);
    assert!(built.took < Duration::from_secs(120), "took {:?}", built.took);
    assert!(built.stats.remote.as_ref().unwrap().failed);
}

/// `cargo launch cache` shows the remote builds would use: its URL without the password, its
/// mode, timeout and where it was configured; a password in Cargo.toml's `cache-remote` is refused
/// at its line.
#[test]
fn cache_shows_the_remote_and_cargo_toml_may_not_hold_a_password() {
    let cache = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = run(crate::support::cargo_launch()
        .env("LAUNCH_CACHE_DIR", cache.path())
        .env("LAUNCH_CACHE_REMOTE", format!("webdav+https://ci:{SECRET}@dav.test:8443/kernels"))
        .env("LAUNCH_CACHE_REMOTE_MODE", "ro")
        .args(["launch", "cache"]));
    assert_eq!(code, 0, "{stderr}");
    let line = stdout.lines().find(|l| l.starts_with("remote")).unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(
        line,
        "remote    webdav+https://ci:***@dav.test:8443/kernels (read-only, timeout 10s, from LAUNCH_CACHE_REMOTE)"
    );
    assert!(!stdout.contains(SECRET), "{stdout}");
    let (code, json, stderr) = run(crate::support::cargo_launch()
        .env("LAUNCH_CACHE_DIR", cache.path())
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .env("LAUNCH_CACHE_REMOTE", "s3://fleet/team?endpoint=http://127.0.0.1:9")
        .env("LAUNCH_CACHE_REMOTE_TIMEOUT", "3")
        .args(["launch", "cache", "--format", "json"]));
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        doc["remote"],
        serde_json::json!({
            "url": "s3://fleet/team?endpoint=http://127.0.0.1:9&region=us-east-1",
            "read_only": false,
            "timeout_s": 3,
            "source": "LAUNCH_CACHE_REMOTE",
        })
    );

    let builder = Builder::new();
    let manifest = builder.checkout.path().join("Cargo.toml");
    let text = fs::read_to_string(&manifest).unwrap();
    let line = "arch = [\"sm_80\", \"sm_90\"]\ncache-remote = \"webdav+http://ci:hunter2@dav.test/kernels\"";
    fs::write(&manifest, text.replace("arch = [\"sm_80\", \"sm_90\"]", line)).unwrap();
    let at = text.lines().position(|l| l.starts_with("arch = ")).unwrap() + 2;
    let (code, _, stderr) = run(&mut builder.command(None));
    assert_ne!(code, 0);
    assert!(
        stderr
            .contains(&format!("Cargo.toml:{at}:16: `package.metadata.launch.cache-remote`: a password in Cargo.toml")),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "the password is not repeated:\n{stderr}");
}

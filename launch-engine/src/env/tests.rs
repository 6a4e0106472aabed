use super::*;

#[test]
fn the_compile_timeout_is_whole_seconds_of_at_least_one() {
    assert_eq!(timeout_from("2").unwrap(), Duration::from_secs(2));
    assert_eq!(timeout_from("1800").unwrap(), DEFAULT_TIMEOUT);
    // Whole seconds exactly as written, like sizes: padding is refused (issue 32, class 7).
    for bad in ["0", "-1", "1.5", "ten", "99999999999999999999999", " 1800 ", "30 ", "\t30"] {
        let message = timeout_from(bad).unwrap_err().to_string();
        assert!(
            message.contains("`LAUNCH_COMPILE_TIMEOUT`") && message.contains(&format!("`{}`", bad.escape_debug())),
            "{message}"
        );
    }
}

/// A bad value of each grammar, and values each accepts.
fn samples(grammar: Grammar) -> (&'static [&'static str], &'static [&'static str]) {
    match grammar {
        Grammar::Switch => (&["maybe", "2", "enable", "y", "-1", "1 1"], &["1", "0", "TRUE", "no", "On", " off "]),
        Grammar::CargoBool => (&["maybe", "1", "yes"], &["true", "false", "TRUE"]),
        Grammar::Seconds => (
            &["abc", "-1", "0", "1.5", "99999999999999999999999", "86401", "1e3", "+5", " 1800 "],
            &["1", "1800", "86400"],
        ),
        Grammar::Folder => (
            &["relative/cache", "./cache", "cache", "", " /tmp/x", "/etc/passwd", "/etc/passwd/below", "/dev/null"],
            &["/tmp/launch-cache", "/nonexistent/yet", "/tmp"],
        ),
        Grammar::Program => (&["/", "/nonexistent/python3", "no-such-program-of-cargo-launch", ""], &["/bin/sh", "sh"]),
        Grammar::Arches => {
            (&["sm_9O", ",", "sm_90,,sm_80", "90", "", " ", ",,", "sm_90;sm_80"], &["sm_90", "sm_80, sm_90"])
        }
        Grammar::Prebuilt => {
            (&["1", "yes", "never", "ignore,require", "", " auto", "auto ", " "], &["auto", "ignore", "Require"])
        }
        Grammar::Size => (
            &["5X", "-1", "G", "many", "1.2.3G", "", "5 G", " 5G", "5G ", "99999999999T"],
            &["0", "500M", "5G", "1.5GiB", "1048576"],
        ),
        Grammar::RemoteUrl => (
            &[
                "bucket/prefix",
                "s3://",
                "ftp://host/x",
                "file://relative",
                "s3://b/p?acl=public",
                "webdav+http:///x",
                "",
                " s3://b/p",
                "s3://b/p?endpoint=http://h:99999",
                "s3://fle et/team",
                "s3://b/p?endpoint=notaurl",
                "s3://b/p?endpoint=ftp://h/x",
                "webdav+http://h:99999/p",
            ],
            &[
                "s3://bucket/prefix",
                "s3://b?endpoint=http://127.0.0.1:9000&region=auto",
                "webdav+https://h/p",
                "file:///tmp/x",
            ],
        ),
        Grammar::RemoteMode => (&["write", "1", "r", "", " ro ", "ro ", "r o"], &["rw", "RO", "read-only"]),
        Grammar::RemoteSeconds => (&["abc", "0", "-1", "1.5", "86401", "+5", " 10 "], &["1", "10", "86400"]),
    }
}

/// Every checked variable × every bad value of its grammar: a configuration error from the
/// environment naming the variable and the value; its good values pass.
#[test]
fn every_checked_variable_refuses_every_bad_value_and_names_itself() {
    let env = Env::cli();
    let mut cases = 0;
    for (name, grammar) in ALL.iter().filter_map(|v| Some((v.name, v.grammar()?))) {
        let (bad, good) = samples(grammar);
        for value in bad {
            let e = env.check_one(name, grammar, std::ffi::OsStr::new(value)).unwrap_err();
            assert_eq!(e.kind(), crate::error::ErrorKind::Config, "{name}={value}: {e}");
            let text = e.to_string();
            assert!(text.starts_with(&format!("environment: `{name}`: ")), "{name}={value}: {text}");
            let shown = launch_remote::redact(value.trim());
            assert!(text.contains(&shown), "{name}={value}: the message shows the value (redacted): {text}");
            cases += 1;
        }
        for value in good {
            env.check_one(name, grammar, std::ffi::OsStr::new(value))
                .unwrap_or_else(|e| panic!("{name}={value} is good: {e}"));
        }
    }
    assert!(cases >= 40, "{cases}");
}

/// Switches turn on and off only by their documented values.
#[test]
fn a_switch_is_on_off_or_refused() {
    for on in SWITCH_ON {
        assert!(switch("X", on).unwrap() && switch("X", &on.to_uppercase()).unwrap());
    }
    for off in SWITCH_OFF.iter().chain(&["", "  "]) {
        assert!(!switch("X", off).unwrap());
    }
    let text = switch("LAUNCH_NO_CACHE", "maybe").unwrap_err().to_string();
    assert_eq!(
        text,
        "environment: `LAUNCH_NO_CACHE`: `maybe` is not a switch: set 1, true, yes, on to turn it on, 0, false, no, \
         off (or leave it unset or empty) to leave it off"
    );
}

/// Each way a time limit is wrong says that way, and never contradicts itself (a huge number
/// was "not a whole number of seconds, at least 1").
#[test]
fn a_bad_compile_timeout_says_what_is_wrong_with_it() {
    let said = |v: &str| timeout_from(v).unwrap_err().to_string();
    assert!(said("0").contains("must be at least 1 second"), "{}", said("0"));
    for huge in ["86401", "99999999999999999999999"] {
        let text = said(huge);
        assert!(text.contains("more than the largest limit, 86400") && !text.contains("not a whole"), "{text}");
    }
    for not_number in ["abc", "-1", "1.5", ""] {
        assert!(said(not_number).contains("is not a whole number of seconds"), "{}", said(not_number));
    }
    assert_eq!(timeout_from("86400").unwrap(), Duration::from_secs(MAX_TIMEOUT_SECS));
}

#[cfg(unix)]
#[test]
fn a_path_is_described_as_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let link = dir.path().join("l");
    std::os::unix::fs::symlink(dir.path().join("gone"), &link).unwrap();
    assert_eq!(path_kind(&file), PathKind::File);
    assert_eq!(path_kind(dir.path()), PathKind::Folder);
    assert_eq!(path_kind(&dir.path().join("none")), PathKind::Missing);
    assert_eq!(path_kind(&link).describe(), format!("is a broken link to `{}`", dir.path().join("gone").display()));
    assert_eq!(path_kind(Path::new("/dev/null")).describe(), "is a device");
}

#[test]
fn the_compile_timeout_is_documented() {
    assert!(var::LAUNCH_COMPILE_TIMEOUT.is_documented() && var::LAUNCH_COMPILE_TIMEOUT.effect.contains("1800"));
}

/// In a build script a read announces exactly the names of the variables whose entry reruns,
/// each once; elsewhere nothing is announced.
#[test]
fn a_read_announces_what_its_entry_says() {
    let env = Env::build_script();
    for v in ALL.iter().chain(ALL) {
        let _ = env.get(v);
    }
    let rerunning: BTreeSet<&str> = ALL.iter().filter(|v| v.reruns).flat_map(|v| v.names()).copied().collect();
    assert_eq!(*env.announced.borrow(), rerunning);
    assert!(rerunning.contains("CUDA_PATH") && rerunning.contains("HOME") && !rerunning.contains("PATH"));
    let cli = Env::cli();
    let _ = cli.get(var::LAUNCH_ARCH);
    assert!(cli.announced.borrow().is_empty());
}

/// What the types cannot say: the variables no build script reads (the run-time ones,
/// `cargo launch`'s own) and those that change no output (the cache's limit, the remote
/// store) do not rerun it; no name is in two entries (a handle twice does not compile, but
/// an alias could repeat one).
#[test]
fn the_reruns_column_is_false_where_no_output_changes() {
    for v in ALL {
        let not_the_build = v.effect.starts_with("at run time") || v.effect.starts_with("tests:");
        let no_output = v.name.starts_with("LAUNCH_CACHE_MAX_SIZE") || v.name.starts_with("LAUNCH_CACHE_REMOTE");
        if not_the_build || no_output {
            assert!(!v.reruns, "{}", v.name);
        }
    }
    for v in [var::LAUNCH_NO_AUTO_SETUP, var::CARGO_NET_OFFLINE, var::LAUNCH_NVDISASM, var::PATH, var::OUT_DIR] {
        assert!(!v.reruns, "{}", v.name);
    }
    let mut names: Vec<&str> = ALL.iter().flat_map(|v| v.names()).copied().collect();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "a name in two entries");
}

/// Every documented variable says what it accepts; the others are not ours to describe.
#[test]
fn every_documented_variable_says_what_it_accepts() {
    for v in ALL {
        match accepted_values(v) {
            Some(accepted) => assert!(v.is_documented() && !accepted.is_empty(), "{}", v.name),
            None => assert!(!v.is_documented(), "{}", v.name),
        }
        assert!(!v.effect.is_empty(), "{}", v.name);
    }
    assert!(accepted_values(var::LAUNCH_NO_CACHE).unwrap().contains("`1`, `true`, `yes`, `on`"));
    assert_eq!(DOCUMENTED.len(), ALL.iter().filter(|v| v.is_documented()).count());
}

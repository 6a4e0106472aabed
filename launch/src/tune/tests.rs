//! The tune cache without a GPU: hits, misses, invalidation on each key part, damaged files,
//! concurrent writers, and what a hit costs.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::store::cache_dir_from;
use super::*;
use launch_remote::{Mode, RemoteConfig, RemoteUrl};

use crate::test_dir::TempDir;

fn key() -> TuneKey {
    TuneKey {
        kernel: 0x0123_4567_89ab_cdef,
        variants: 0xfedc_ba98_7654_3210,
        device: DeviceKey { name: "NVIDIA H200".into(), compute_capability: (9, 0), driver_version: 13000 },
        problem: "n<=2^20".into(),
    }
}

fn winner(variant: &str) -> Winner {
    Winner {
        variant: variant.into(),
        median_ms: 0.012_345_678_9,
        min_ms: 0.0119,
        max_ms: 0.31,
        repetitions: 100,
        measured_at: 1_750_000_000,
    }
}

/// A cache in a fresh folder holding `winner("k_t256")` for `key()`.
fn one_winner() -> (TempDir, TuneCache) {
    let tmp = TempDir::new("tune");
    let cache = TuneCache::new(&tmp.0);
    cache.put(&key(), &winner("k_t256")).unwrap();
    (tmp, cache)
}

fn is_damaged(l: &Result<Winner, Miss>) -> bool {
    matches!(l, Err(Miss::Damaged(_)))
}

#[test]
fn a_put_is_a_hit_and_an_empty_or_absent_cache_a_miss() {
    let tmp = TempDir::new("tune");
    // The folder does not exist yet: a miss, and the put creates it.
    let cache = TuneCache::new(tmp.0.join("a/b"));
    assert_eq!(cache.get(&key()), Err(Miss::NotStored));
    cache.put(&key(), &winner("k_t256")).unwrap();
    assert_eq!(cache.get(&key()), Ok(winner("k_t256")));
    // A second put overwrites (`LAUNCH_TUNE=always`).
    cache.put(&key(), &winner("k_t128_r64")).unwrap();
    assert_eq!(cache.get(&key()), Ok(winner("k_t128_r64")));
    // The file's name is the key's hash (pinned: a change orphans every user's cache).
    assert_eq!(cache.path(&key()), cache.dir().join("a5bb4cc412303c4c.tune"));
    // One file, no temporary left behind.
    let names: Vec<_> = fs::read_dir(cache.dir()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, [cache.path(&key()).file_name().unwrap().to_owned()]);
}

#[test]
fn a_change_in_any_key_part_is_a_miss() {
    let (_tmp, cache) = one_winner();
    type Change = fn(&mut TuneKey);
    let changes: [(&str, Change); 7] = [
        ("kernel hash", |k| k.kernel ^= 1),
        ("variant set", |k| k.variants ^= 1 << 63),
        ("device name", |k| k.device.name = "NVIDIA H100 80GB HBM3".into()),
        ("compute capability (major)", |k| k.device.compute_capability = (10, 0)),
        ("compute capability (minor)", |k| k.device.compute_capability = (9, 1)),
        ("driver version", |k| k.device.driver_version = 12080),
        ("problem key", |k| k.problem = "n<=2^21".into()),
    ];
    for (part, change) in changes {
        let mut other = key();
        change(&mut other);
        assert_ne!(other.hash(), key().hash(), "{part}");
        assert_eq!(cache.get(&other), Err(Miss::NotStored), "{part}");
    }
    assert_eq!(cache.get(&key()), Ok(winner("k_t256")));
}

#[test]
fn a_file_holding_another_key_is_a_miss_not_a_hit() {
    // What a hash collision looks like: the file under our name holds another key.
    let tmp = TempDir::new("tune");
    let cache = TuneCache::new(&tmp.0);
    let other = TuneKey { problem: "n<=2^10".into(), ..key() };
    cache.put(&other, &winner("k_t64")).unwrap();
    fs::rename(cache.path(&other), cache.path(&key())).unwrap();
    assert_eq!(cache.get(&key()), Err(Miss::NotStored));
}

#[test]
fn strings_with_newlines_backslashes_and_unicode_survive() {
    let tmp = TempDir::new("tune");
    let cache = TuneCache::new(&tmp.0);
    let odd = TuneKey {
        problem: "rows=1\ncols=2 \\n \r end\nend\n".into(),
        device: DeviceKey { name: " Gerät  ".into(), compute_capability: (12, 1), driver_version: -1 },
        ..key()
    };
    let w =
        Winner { variant: "void tmpl<8>(int*)\\".into(), median_ms: 1e-300, min_ms: 0.0, max_ms: 1e300, ..winner("") };
    cache.put(&odd, &w).unwrap();
    assert_eq!(cache.get(&odd), Ok(w));
}

#[test]
fn a_winner_that_is_not_a_time_or_a_key_too_long_is_refused_and_nothing_is_written() {
    let tmp = TempDir::new("tune");
    let cache = TuneCache::new(&tmp.0);
    for bad in [f64::NAN, f64::INFINITY, -1.0] {
        let e = cache.put(&key(), &Winner { median_ms: bad, ..winner("k") }).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    }
    let long = TuneKey { problem: "x".repeat(MAX_FILE_BYTES as usize), ..key() };
    let e = cache.put(&long, &winner("k")).unwrap_err();
    assert!(e.to_string().contains("too long"), "{e}");
    assert_eq!(fs::read_dir(&tmp.0).unwrap().count(), 0);
}

/// Puts a damaged `contents` in the key's place, expects Damaged (with the path and `why`), then
/// a put that replaces it.
fn damaged_then_replaced(cache: &TuneCache, contents: &[u8], why: &str) {
    let path = cache.path(&key());
    fs::write(&path, contents).unwrap();
    match cache.get(&key()) {
        Err(Miss::Damaged(reason)) => {
            assert!(reason.starts_with(&path.display().to_string()) && reason.contains(why), "{why}: {reason}")
        }
        other => panic!("{why}: {other:?}"),
    }
    cache.put(&key(), &winner("k_t256")).unwrap();
    assert_eq!(cache.get(&key()), Ok(winner("k_t256")), "{why}");
}

#[test]
fn every_cut_of_a_file_is_damaged_and_the_next_put_replaces_it() {
    let (_tmp, cache) = one_winner();
    let whole = fs::read(cache.path(&key())).unwrap();
    for len in 0..whole.len() - 1 {
        fs::write(cache.path(&key()), &whole[..len]).unwrap();
        assert!(is_damaged(&cache.get(&key())), "cut at {len}: {:?}", String::from_utf8_lossy(&whole[..len]));
    }
    // Only the final newline missing: the file is whole.
    fs::write(cache.path(&key()), &whole[..whole.len() - 1]).unwrap();
    assert_eq!(cache.get(&key()), Ok(winner("k_t256")));
    damaged_then_replaced(&cache, b"", "not a tune cache file");
}

#[test]
fn garbage_other_versions_and_oversized_files_are_damaged_and_replaced() {
    let (_tmp, cache) = one_winner();
    let whole = fs::read_to_string(cache.path(&key())).unwrap();
    damaged_then_replaced(&cache, b"\x7fELF\x02\x01\x01\0\0\0", "not a tune cache file");
    damaged_then_replaced(&cache, b"cargo-launch tune cache v1\n\xff\xfe", "not UTF-8");
    damaged_then_replaced(&cache, b"{\"variant\": \"k\"}\n", "not a tune cache file");
    // Version 1 had no checksum line (format version 2 added it).
    damaged_then_replaced(&cache, whole.replace(" v2\n", " v1\n").as_bytes(), "format version `1`");
    damaged_then_replaced(&cache, whole.replace(" v2\n", " v3\n").as_bytes(), "format version `3`");
    damaged_then_replaced(&cache, whole.replace(" v2\n", " v\n").as_bytes(), "format version ``");
    damaged_then_replaced(&cache, whole.replace("median_ms ", "median_ms x").as_bytes(), "`median_ms`");
    damaged_then_replaced(&cache, whole.replace("0.012345", "-0.012345").as_bytes(), "`median_ms`");
    damaged_then_replaced(&cache, whole.replace("9.0", "9").as_bytes(), "`compute_capability`");
    damaged_then_replaced(&cache, whole.replace("variants ", "variant ").as_bytes(), "where `variants` belongs");
    damaged_then_replaced(&cache, whole.replace("problem n", "problem \\q").as_bytes(), "`problem`");
    damaged_then_replaced(
        &cache,
        whole.replace("repetitions 100", "repetitions 4294967296").as_bytes(),
        "`repetitions`",
    );
    damaged_then_replaced(&cache, format!("{whole}more\n").as_bytes(), "text after `end`");
    let mut huge = whole.clone().into_bytes();
    huge.resize(MAX_FILE_BYTES as usize + 1, b'\n');
    damaged_then_replaced(&cache, &huge, "larger than 16384 bytes");
}

#[test]
fn a_folder_in_the_files_place_is_damaged_and_replaced() {
    let tmp = TempDir::new("tune");
    let cache = TuneCache::new(&tmp.0);
    let path = cache.path(&key());
    fs::create_dir_all(path.join("inside")).unwrap();
    fs::write(path.join("inside/file"), "x").unwrap();
    assert!(matches!(cache.get(&key()), Err(Miss::Damaged(r)) if r.contains("not a regular file (a folder)")));
    cache.put(&key(), &winner("k_t256")).unwrap();
    assert_eq!(cache.get(&key()), Ok(winner("k_t256")));
}

#[cfg(unix)]
#[test]
fn a_fifo_in_the_files_place_is_damaged_without_blocking_and_replaced() {
    let tmp = TempDir::new("tune");
    let cache = TuneCache::new(&tmp.0);
    let path = cache.path(&key());
    match std::process::Command::new("mkfifo").arg(&path).status() {
        Ok(s) if s.success() => {}
        other => {
            eprintln!("skipped: mkfifo is not available ({other:?})");
            return;
        }
    }
    // A read that blocked would hang here (no writer ever opens the FIFO).
    assert!(matches!(cache.get(&key()), Err(Miss::Damaged(r)) if r.contains("a FIFO")));
    cache.put(&key(), &winner("k_t256")).unwrap();
    assert_eq!(cache.get(&key()), Ok(winner("k_t256")));
    // A link to a FIFO is looked through, and refused the same way.
    #[cfg(target_os = "linux")]
    {
        let fifo = tmp.0.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&fifo, &path).unwrap();
        assert!(matches!(cache.get(&key()), Err(Miss::Damaged(r)) if r.contains("a FIFO")));
    }
}

#[test]
fn two_writers_at_once_leave_a_whole_file() {
    let tmp = TempDir::new("tune");
    let cache = TuneCache::new(&tmp.0);
    let (a, b) = (winner("k_t256"), Winner { median_ms: 0.5, ..winner("k_t128_r64_with_a_longer_name") });
    std::thread::scope(|s| {
        for w in [&a, &b] {
            let cache = &cache;
            s.spawn(move || {
                for _ in 0..300 {
                    cache.put(&key(), w).unwrap();
                }
            });
        }
        // A reader meanwhile sees a miss (before the first rename) or one whole winner.
        s.spawn(|| {
            for _ in 0..600 {
                match cache.get(&key()) {
                    Err(Miss::NotStored) => {}
                    Ok(w) => assert!(w == a || w == b, "{w:?}"),
                    Err(other) => panic!("a reader saw {other:?}"),
                }
            }
        });
    });
    assert!(matches!(cache.get(&key()), Ok(w) if w == a || w == b));
    assert_eq!(fs::read_dir(&tmp.0).unwrap().count(), 1, "temporary files left behind");
}

#[test]
fn the_cache_folder_comes_from_launch_tune_cache_dir_then_xdg_then_home() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
    };
    const ALL: &[(&str, &str)] = &[("LAUNCH_TUNE_CACHE_DIR", "/t"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")];
    assert_eq!(cache_dir_from(vars(ALL)), Some(PathBuf::from("/t")));
    assert_eq!(cache_dir_from(vars(&ALL[1..])), Some(Path::new("/x/cargo-launch/tune").into()));
    assert_eq!(cache_dir_from(vars(&ALL[2..])), Some(Path::new("/h/.cache/cargo-launch/tune").into()));
    // A relative XDG_CACHE_HOME is ignored, as the XDG specification asks.
    assert_eq!(
        cache_dir_from(vars(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")])),
        Some(Path::new("/h/.cache/cargo-launch/tune").into())
    );
    assert_eq!(cache_dir_from(vars(&[("HOME", "rel")])), None);
    assert_eq!(cache_dir_from(vars(&[])), None);
    assert!(NoCacheDir.to_string().contains("LAUNCH_TUNE_CACHE_DIR"));
}

#[test]
fn a_cache_hit_costs_microseconds() {
    let (_tmp, cache) = one_winner();
    let k = key();
    let mut ns: Vec<u128> = (0..10_000)
        .map(|_| {
            let start = Instant::now();
            let hit = cache.get(&k);
            let t = start.elapsed().as_nanos();
            assert!(hit.is_ok());
            t
        })
        .collect();
    ns.sort_unstable();
    let (median, p99) = (ns[ns.len() / 2], ns[ns.len() * 99 / 100]);
    eprintln!("tune cache hit: median {median} ns, p99 {p99} ns, min {} ns over {} gets", ns[0], ns.len());
    assert!(median < 1_000_000, "a cache hit took {median} ns (median)");
}

/// A character of the same kind as `c` but not `c`: a value still parses, so only the checksum
/// can tell the edit.
fn other_char(c: char) -> char {
    match c {
        '0'..='8' => char::from(c as u8 + 1),
        '9' => '0',
        'a'..='y' => char::from(c as u8 + 1),
        'z' => 'a',
        'A'..='Z' => 'x',
        _ => 'q',
    }
}

#[test]
fn every_edit_of_every_line_is_damaged_never_a_winner() {
    let (_tmp, cache) = one_winner();
    let path = cache.path(&key());
    let whole = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    assert_eq!(lines.len(), 15, "{whole}");
    let mut cases = 0;
    let mut expect_damaged = |text: String, what: &str| {
        fs::write(&path, &text).unwrap();
        match cache.get(&key()) {
            Err(Miss::Damaged(why)) => assert!(why.starts_with(&path.display().to_string()), "{what}: {why}"),
            other => panic!("{what} read as {other:?}:\n{text}"),
        }
        cases += 1;
    };
    // Each character of each line but `end` changed to another of its kind (a digit of the median,
    // a letter of the variant's name, of the device's, of the checksum...).
    for (i, line) in lines.iter().enumerate().take(lines.len() - 1) {
        for (at, c) in line.char_indices() {
            let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            edited[i].replace_range(at..at + c.len_utf8(), &other_char(c).to_string());
            expect_damaged(edited.join("\n") + "\n", &format!("line {} `{line}` at {at}", i + 1));
        }
    }
    // The variant renamed to another that exists; the stored median and min swapped.
    expect_damaged(whole.replace("variant k_t256", "variant k_t128"), "variant renamed");
    expect_damaged(
        whole.replace("median_ms 0.0123456789", "median_ms 0.0119").replace("min_ms 0.0119", "min_ms 0.0123456789"),
        "times swapped",
    );
    // A line added, removed, repeated or moved; a blank line; a line end that is not one.
    for i in 0..lines.len() {
        let mut removed = lines.clone();
        removed.remove(i);
        expect_damaged(removed.join("\n") + "\n", &format!("line {} removed", i + 1));
        let mut repeated = lines.clone();
        repeated.insert(i, lines[i]);
        expect_damaged(repeated.join("\n") + "\n", &format!("line {} repeated", i + 1));
        let mut blank = lines.clone();
        blank.insert(i, "");
        expect_damaged(blank.join("\n") + "\n", &format!("blank line before line {}", i + 1));
        if i + 1 < lines.len() {
            let mut swapped = lines.clone();
            swapped.swap(i, i + 1);
            expect_damaged(swapped.join("\n") + "\n", &format!("lines {} and {} swapped", i + 1, i + 2));
        }
    }
    expect_damaged(whole.replace("variant k_t256\n", "variant k_t256\nvariant k_t128\n"), "extra line");
    expect_damaged(whole.replace('\n', "\r"), "lone CR line ends");
    expect_damaged(whole.replace("measured_at", "measured_at "), "a space added");
    eprintln!("{cases} damaged files, none read as a winner");
    assert!(cases > 300, "{cases}");
}

#[test]
fn crlf_line_ends_read_as_the_same_winner_and_versions_are_named_without_a_carriage_return() {
    let (_tmp, cache) = one_winner();
    let path = cache.path(&key());
    let whole = fs::read_to_string(&path).unwrap();
    fs::write(&path, whole.replace('\n', "\r\n")).unwrap();
    assert_eq!(cache.get(&key()), Ok(winner("k_t256")));
    // Without the final line end too.
    fs::write(&path, whole.trim_end().replace('\n', "\r\n")).unwrap();
    assert_eq!(cache.get(&key()), Ok(winner("k_t256")));
    fs::write(&path, whole.replace(" v2\n", " v1\n").replace('\n', "\r\n")).unwrap();
    match cache.get(&key()) {
        Err(Miss::Damaged(why)) => assert!(why.ends_with("format version `1`, this build reads version 2"), "{why:?}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_cache_folder_that_is_a_file_is_named_on_get_and_on_put() {
    let tmp = TempDir::new("tune");
    let file = tmp.0.join("tune");
    fs::write(&file, "not a folder").unwrap();
    for (dir, named) in [(file.clone(), "the tune cache folder"), (file.join("below"), "cannot be in it")] {
        let cache = TuneCache::new(&dir);
        match cache.get(&key()) {
            Err(Miss::Damaged(why)) => {
                assert!(why.contains(&format!("{} is a file, not a folder", file.display())), "{why}");
                assert!(why.contains(named) && why.contains("LAUNCH_TUNE_CACHE_DIR"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        let e = cache.put(&key(), &winner("k_t256")).unwrap_err().to_string();
        assert!(e.contains(&format!("{} is a file, not a folder", file.display())) && e.contains(named), "{e}");
        assert!(!e.contains("os error"), "{e}");
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "not a folder");
}

/// A fleet's shared folder: a winner one machine stored is a hit on another (copied into its
/// local folder), read-only machines write nothing there, and a damaged shared file is a miss
/// that the next `put` replaces.
#[test]
fn a_shared_folder_serves_the_fleet_and_read_only_machines_write_nothing() {
    let (local_a, local_b, local_c, shared) =
        (TempDir::new("tune"), TempDir::new("tune"), TempDir::new("tune"), TempDir::new("tune"));
    let tuner_a = TuneCache::new(&local_a.0).with_shared(&shared.0, false);
    tuner_a.put(&key(), &winner("k_t256")).unwrap();
    let other = TuneCache::new(&local_b.0).with_shared(&shared.0, true);
    let config = other.remote().unwrap().config();
    assert_eq!((&config.url, config.mode), (&RemoteUrl::Folder(shared.0.clone()), Mode::ReadOnly));
    assert_eq!(other.get(&key()), Ok(winner("k_t256")));
    assert_eq!(TuneCache::new(&local_b.0).get(&key()), Ok(winner("k_t256")), "copied local");

    // Read-only: its own winner for another problem stays local.
    let mut k2 = key();
    k2.problem = "n>2^20".into();
    other.put(&k2, &winner("k_t1024")).unwrap();
    assert_eq!(TuneCache::new(shared.0.join("tune")).get(&k2), Err(Miss::NotStored));
    assert_eq!(TuneCache::new(&local_b.0).get(&k2), Ok(winner("k_t1024")));

    // A damaged shared file is a miss, and a writer's next put replaces it.
    let shared_file = TuneCache::new(shared.0.join("tune")).path(&key());
    fs::write(&shared_file, "cargo-launch tune cache v2\nforged\n").unwrap();
    let third = TuneCache::new(&local_c.0).with_shared(&shared.0, false);
    assert_eq!(third.get(&key()), Err(Miss::NotStored));
    third.put(&key(), &winner("k_t512")).unwrap();
    assert_eq!(TuneCache::new(shared.0.join("tune")).get(&key()), Ok(winner("k_t512")));
    // A remote entry for another key under this key's name (a forged or colliding file) is a miss.
    let mut other_key = key();
    other_key.device.driver_version += 1;
    let forged = super::store::encode(&other_key, &winner("k_t1024")).unwrap();
    fs::write(&shared_file, forged).unwrap();
    let local_d = TempDir::new("tune");
    let fourth = TuneCache::new(&local_d.0).with_shared(&shared.0, true);
    assert_eq!(fourth.get(&key()), Err(Miss::NotStored));
    assert_eq!(fourth.remote().unwrap().usage().hits, 0);
}

#[test]
fn the_remote_comes_from_the_environment() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
    };
    let folder = |dir: &str, mode| RemoteConfig {
        url: RemoteUrl::Folder(dir.into()),
        mode,
        timeout: launch_remote::DEFAULT_TIMEOUT,
        source: "LAUNCH_TUNE_CACHE_REMOTE".into(),
    };
    assert_eq!(remote_config_from(vars(&[])), Ok(None));
    assert_eq!(
        remote_config_from(vars(&[("LAUNCH_TUNE_CACHE_REMOTE", "/mnt/tune")])),
        Ok(Some(folder("/mnt/tune", Mode::ReadWrite)))
    );
    assert_eq!(
        remote_config_from(vars(&[
            ("LAUNCH_TUNE_CACHE_REMOTE", "file:///mnt/tune"),
            ("LAUNCH_TUNE_CACHE_REMOTE_MODE", "RO")
        ])),
        Ok(Some(folder("/mnt/tune", Mode::ReadOnly)))
    );
    // The kernel cache's URLs; the region as launch-build fills it in.
    let s3 = remote_config_from(vars(&[
        ("LAUNCH_TUNE_CACHE_REMOTE", "s3://fleet/team?endpoint=http://127.0.0.1:9000"),
        ("LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT", "3"),
        ("AWS_DEFAULT_REGION", "eu-west-3"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(s3.url.to_string(), "s3://fleet/team?endpoint=http://127.0.0.1:9000&region=eu-west-3");
    assert_eq!(s3.timeout, std::time::Duration::from_secs(3));
    let dav = remote_config_from(vars(&[("LAUNCH_TUNE_CACHE_REMOTE", "webdav+https://ci:pw@dav.test/tune")]));
    assert_eq!(dav.unwrap().unwrap().url.to_string(), "webdav+https://ci:***@dav.test/tune");
    // What is not right says which variable, and what it takes.
    for (pairs, says) in [
        (
            &[("LAUNCH_TUNE_CACHE_REMOTE", "relative/tune")][..],
            "LAUNCH_TUNE_CACHE_REMOTE: `relative/tune` is not a URL",
        ),
        (&[("LAUNCH_TUNE_CACHE_REMOTE", "ftp://h/p")][..], "has the scheme `ftp`"),
        (
            &[("LAUNCH_TUNE_CACHE_REMOTE", "/t"), ("LAUNCH_TUNE_CACHE_REMOTE_MODE", "w")][..],
            "MODE: `w` is not rw or ro",
        ),
        (&[("LAUNCH_TUNE_CACHE_REMOTE", "/t"), ("LAUNCH_TUNE_CACHE_REMOTE_TIMEOUT", "0")][..], "TIMEOUT: `0` is not"),
    ] {
        let pairs: &'static [(&'static str, &'static str)] = pairs;
        let e = remote_config_from(vars(pairs)).unwrap_err();
        assert!(e.contains(says), "{pairs:?}: {e}");
    }
}

//! Tests of [`super`] (limit.rs).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::*;
use crate::cache::{Cache, Entry, Key, Lookup};

#[test]
fn sizes_take_bytes_and_binary_units_and_zero_means_no_limit() {
    let cases: &[(&str, Option<u64>)] = &[
        ("1000", Some(1000)),
        ("500M", Some(500 << 20)),
        ("5G", Some(5 << 30)),
        ("5g", Some(5 << 30)),
        ("5GB", Some(5 << 30)),
        ("5GiB", Some(5 << 30)),
        ("2T", Some(2 << 40)),
        ("64k", Some(64 << 10)),
        ("1.5G", Some(3 << 29)),
        ("12B", Some(12)),
        ("0", None),
        ("0G", None),
    ];
    for (text, want) in cases {
        assert_eq!(parse_size(text), Ok(*want), "{text}");
    }
    for bad in [
        "",
        " ",
        "5 G",
        " 5G",
        "5G ",
        "5\tG",
        "G",
        "-1",
        "5X",
        "5 GB B",
        "1.2.3G",
        ".",
        "ten",
        "5Gi",
        "99999999999T",
        "iB",
    ] {
        let e = parse_size(bad).unwrap_err();
        assert!(e.contains("500M") && e.contains("no limit"), "{bad}: {e}");
    }
}

#[test]
fn sizes_are_shown_in_binary_units() {
    assert_eq!(format_size(812), "812 B");
    assert_eq!(format_size(30 << 10), "30.0 KiB");
    assert_eq!(format_size(5 << 30), "5.0 GiB");
}

fn key(i: u8) -> Key {
    Key([i; 32])
}

fn entry(size: usize, fill: u8) -> Entry {
    Entry {
        ptx: "ptx".into(),
        cubin: vec![fill; size],
        ptxas_log: String::new(),
        nvrtc_log: String::new(),
        probes: String::new(),
    }
}

fn set_used(cache: &Cache, k: &Key, t: SystemTime) {
    fs::File::options().write(true).open(cache.entry_path(k)).unwrap().set_modified(t).unwrap();
}

fn size_of(cache: &Cache, k: &Key) -> u64 {
    fs::metadata(cache.entry_path(k)).unwrap().len()
}

/// Ten entries used an hour apart, the oldest first; a hit refreshes one of the oldest. Pruning
/// to a limit just under their total removes the least recently used down to 90 % of it.
#[test]
fn the_least_recently_used_entries_go_first_and_a_hit_counts_as_use() {
    let root = tempfile::tempdir().unwrap();
    let cache = Cache::new(root.path().join("kernels"));
    let start = SystemTime::now() - Duration::from_secs(100 * 3600);
    for i in 0..10 {
        cache.store(&key(i), &entry(1000, i)).unwrap();
        set_used(&cache, &key(i), start + Duration::from_secs(3600 * u64::from(i)));
    }
    let one = size_of(&cache, &key(0));
    assert_eq!(usage(cache.dir()), Usage { entries: 10, bytes: 10 * one });
    // Under the limit: nothing goes.
    assert_eq!(prune(cache.dir(), 10 * one).removed, Usage::default());

    assert!(matches!(cache.load(&key(1)), Lookup::Hit(_)));
    // Limit 8 entries: over it, so down to 90 % of it (7.2 entries): three go, 0, 2 and 3.
    let pruned = prune(cache.dir(), 8 * one);
    assert_eq!(pruned.removed, Usage { entries: 3, bytes: 3 * one });
    assert_eq!(pruned.left, Usage { entries: 7, bytes: 7 * one });
    let gone: Vec<u8> = (0..10).filter(|&i| !cache.entry_path(&key(i)).exists()).collect();
    assert_eq!(gone, [0, 2, 3]);
    assert!(matches!(cache.load(&key(0)), Lookup::Miss));
    assert_eq!(usage(cache.dir()), pruned.left);
}

#[test]
fn writers_temporary_files_and_other_files_are_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let cache = Cache::new(root.path().join("kernels"));
    cache.store(&key(1), &entry(100, 1)).unwrap();
    let shard = cache.entry_path(&key(1)).parent().unwrap().to_path_buf();
    let young = shard.join(format!(".{}.abc.tmp", key(2)));
    let old = shard.join(format!(".{}.def.tmp", key(3)));
    fs::write(&young, vec![0; 5000]).unwrap();
    fs::write(&old, vec![0; 5000]).unwrap();
    fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(7200))
        .unwrap();
    let stranger = cache.dir().join("README");
    fs::write(&stranger, "mine").unwrap();
    let pruned = prune(cache.dir(), 1);
    assert_eq!(pruned.removed.entries, 1);
    assert!(young.exists(), "a writer's file in progress");
    assert!(!old.exists(), "a killed build's leftover");
    assert!(stranger.exists() && shard.is_dir());
}

#[test]
fn clear_removes_entries_timings_and_estimate_and_nothing_else() {
    let root = tempfile::tempdir().unwrap();
    let cache = Cache::new(root.path().join("kernels"));
    for i in 0..4 {
        cache.store(&key(i), &entry(100, i)).unwrap();
    }
    let timings = root.path().join("kernel-timings");
    fs::create_dir_all(&timings).unwrap();
    fs::write(timings.join("0123.tsv"), "5\tsm_90\tkernels/a.cu\n").unwrap();
    let toolchain = root.path().join("toolchain/cuda-12.9.86/bin/ptxas");
    fs::create_dir_all(toolchain.parent().unwrap()).unwrap();
    fs::write(&toolchain, "tool").unwrap();
    fs::write(root.path().join(ESTIMATE_FILE), "1\t2\n").unwrap();
    let log = crate::cache::build_log::BuildRecord { time: 1, package: "p".into(), jobs: 1, cached: 0, compiled: 1 };
    crate::cache::build_log::append(root.path(), &log).unwrap();
    let cleared = clear(root.path());
    assert_eq!(cleared.removed.entries, 4);
    assert_eq!(cleared.left, Usage::default());
    assert_eq!(usage(cache.dir()), Usage::default());
    assert!(!timings.join("0123.tsv").exists() && !root.path().join(ESTIMATE_FILE).exists());
    assert!(crate::cache::build_log::read(root.path()).is_empty());
    assert_eq!(fs::read_to_string(&toolchain).unwrap(), "tool");
}

/// The estimate spares the scan while the cache is far below the limit, and scans (and prunes)
/// once it may be over, when it is missing or damaged, or a day old.
#[test]
fn a_build_scans_only_when_the_estimate_says_it_may_be_over() {
    let root = tempfile::tempdir().unwrap();
    let cache = Cache::new(root.path().join("kernels"));
    for i in 0..10 {
        cache.store(&key(i), &entry(1000, i)).unwrap();
    }
    let one = size_of(&cache, &key(0));
    let file = root.path().join(ESTIMATE_FILE);
    // No estimate: a scan, which writes one.
    let first = after_store(cache.dir(), root.path(), one, 100 * one).expect("scanned");
    assert_eq!(first.left.entries, 10);
    assert!(read_estimate(&file).is_some_and(|(b, _)| b == 10 * one));
    // Far below: no scan, the estimate grows by what was stored.
    assert_eq!(after_store(cache.dir(), root.path(), 5 * one, 100 * one), None);
    assert!(read_estimate(&file).is_some_and(|(b, _)| b == 15 * one));
    // The estimate passes the limit: a scan, which prunes and corrects it.
    let over = after_store(cache.dir(), root.path(), 0, 12 * one).map(|p| p.left);
    assert_eq!(over, Some(Usage { entries: 10, bytes: 10 * one }), "15 estimated, 10 real: under 12");
    let over = after_store(cache.dir(), root.path(), 0, 8 * one).expect("scanned");
    assert_eq!(over.left.entries, 7);
    assert!(read_estimate(&file).is_some_and(|(b, _)| b == 7 * one));
    // A day-old estimate, or a damaged one: scanned again.
    let day_old = SystemTime::now() - Duration::from_secs(25 * 3600);
    write_estimate(&file, 0, day_old);
    assert!(after_store(cache.dir(), root.path(), 0, 100 * one).is_some());
    fs::write(&file, "garbage").unwrap();
    assert!(after_store(cache.dir(), root.path(), 0, 100 * one).is_some());
}

/// Eight threads store and load through the real cache, under a limit of a few entries, while
/// two pruners run without pause: no load returns anything but a whole entry or a miss, and no
/// store or prune fails.
#[test]
fn pruning_while_builds_read_and_write_never_gives_a_partial_entry_or_an_error() {
    let root = tempfile::tempdir().unwrap();
    let cache = Arc::new(Cache::new(root.path().join("kernels")));
    let stop = Arc::new(AtomicBool::new(false));
    let (hits, misses, removed) =
        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    // Entries of 40 KB and 60 KB: the limit holds about five.
    let entry_of = |i: u8| entry(if i.is_multiple_of(2) { 40_000 } else { 60_000 }, i);
    let limit = 250_000;
    let pruners: Vec<_> = (0..2)
        .map(|_| {
            let (cache, stop, removed) = (cache.clone(), stop.clone(), removed.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    removed.fetch_add(prune(cache.dir(), limit).removed.entries as usize, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let workers: Vec<_> = (0..8u8)
        .map(|w| {
            let (cache, hits, misses) = (cache.clone(), hits.clone(), misses.clone());
            std::thread::spawn(move || {
                for round in 0..150u32 {
                    let i = ((round * 7 + u32::from(w) * 13) % 32) as u8;
                    match cache.load(&key(i)) {
                        Lookup::Hit(e) => {
                            assert_eq!(e, entry_of(i), "a whole entry of its own key");
                            hits.fetch_add(1, Ordering::Relaxed);
                        }
                        Lookup::Miss => {
                            misses.fetch_add(1, Ordering::Relaxed);
                            cache.store(&key(i), &entry_of(i)).unwrap_or_else(|e| panic!("store failed: {e}"));
                        }
                        Lookup::Corrupt(why) => panic!("a damaged entry under pruning: {why}"),
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for p in pruners {
        p.join().unwrap();
    }
    let (hits, misses, removed) =
        (hits.load(Ordering::Relaxed), misses.load(Ordering::Relaxed), removed.load(Ordering::Relaxed));
    assert!(hits > 0 && misses > 0 && removed > 0, "hits {hits}, misses {misses}, removed {removed}");
    assert!(prune(cache.dir(), limit).left.bytes <= limit);
}

//! Tests of [`super`] (cache.rs).

use std::time::Duration;

use super::*;

fn toolchain() -> ToolchainId {
    ToolchainId {
        nvrtc_version: "12.9.86".into(),
        nvrtc_api: (12, 9),
        ptxas_version: "12.9.86".into(),
        nvrtc: [5; 32],
        ptxas: [6; 32],
    }
}

fn annotation() -> Annotation {
    Annotation { kernel: "k".into(), threads: 128, min_blocks: Some(2), max_regs: None, line: 3, col: 4 }
}

struct Inputs {
    file: String,
    text: String,
    headers: Vec<(String, [u8; 32])>,
    options: Vec<String>,
    ptxas_options: Vec<String>,
    arch: String,
    annotations: Vec<Annotation>,
    toolchain: ToolchainId,
}

impl Inputs {
    fn base() -> Inputs {
        Inputs {
            file: "kernels/a.cu".into(),
            text: "__global__ void k() {}".into(),
            headers: vec![("$CRATE/include/h.cuh".into(), [1; 32])],
            options: vec!["--gpu-architecture=compute_90".into(), "--define-macro=N=4".into()],
            ptxas_options: Vec::new(),
            arch: "sm_90".into(),
            annotations: vec![annotation()],
            toolchain: toolchain(),
        }
    }

    fn key(&self) -> Key {
        key(&KeyInputs {
            file: &self.file,
            text: &self.text,
            headers: &self.headers,
            options: &self.options,
            ptxas_options: &self.ptxas_options,
            arch: &self.arch,
            annotations: &self.annotations,
            toolchain: &self.toolchain,
        })
    }
}

#[test]
fn same_inputs_give_the_same_key() {
    assert_eq!(Inputs::base().key(), Inputs::base().key());
    assert_eq!(Inputs::base().key().to_string().len(), 64);
}

/// What is changed, and how.
type Change = (&'static str, fn(&mut Inputs));

#[test]
fn every_input_changes_the_key() {
    let base = Inputs::base().key();
    let changes: &[Change] = &[
        ("file name", |i| i.file = "kernels/b.cu".into()),
        ("source", |i| i.text.push(' ')),
        ("header content", |i| i.headers[0].1[0] = 2),
        ("header path", |i| i.headers[0].0 = "$CRATE/include/g.cuh".into()),
        ("header added", |i| i.headers.push(("$CRATE/x.cuh".into(), [0; 32]))),
        ("define", |i| i.options[1] = "--define-macro=N=8".into()),
        ("option added", |i| i.options.push("--include-path=$CRATE/inc".into())),
        ("ptxas option added", |i| i.ptxas_options.push("--opt-level=1".into())),
        ("arch", |i| i.arch = "sm_90a".into()),
        ("annotation threads", |i| i.annotations[0].threads = 256),
        ("annotation max_regs", |i| i.annotations[0].max_regs = Some(40)),
        ("annotation removed", |i| i.annotations.clear()),
        ("nvrtc version", |i| i.toolchain.nvrtc_version = "12.9.41".into()),
        ("nvrtc api", |i| i.toolchain.nvrtc_api = (12, 8)),
        ("ptxas version", |i| i.toolchain.ptxas_version = "12.8.93".into()),
        ("ptxas bytes", |i| i.toolchain.ptxas[0] ^= 1),
        ("nvrtc bytes", |i| i.toolchain.nvrtc[31] ^= 1),
    ];
    let mut seen = std::collections::BTreeSet::from([base]);
    for (what, change) in changes {
        let mut i = Inputs::base();
        change(&mut i);
        assert!(seen.insert(i.key()), "changing the {what} must change the key");
    }
}

#[test]
fn fields_do_not_run_into_each_other() {
    let mut a = Inputs::base();
    a.file = "kernels/a.cu".into();
    a.text = "xy".into();
    let mut b = Inputs::base();
    b.file = "kernels/a.cux".into();
    b.text = "y".into();
    assert_ne!(a.key(), b.key());
}

fn entry() -> Entry {
    Entry {
        ptx: ".version 8.8\n".into(),
        cubin: vec![0x7f, b'E', b'L', b'F', 0, 1, 2],
        ptxas_log: "ptxas info    : Used 8 registers\n".into(),
        nvrtc_log: String::new(),
        probes: String::new(),
    }
}

#[test]
fn entries_round_trip_and_reject_every_truncation_and_flip() {
    let key = Inputs::base().key();
    let bytes = encode(&key, &entry());
    assert_eq!(decode(&key, &bytes).unwrap(), entry());
    for len in 0..bytes.len() {
        assert!(decode(&key, &bytes[..len]).is_err(), "truncated to {len} bytes must not load");
    }
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x40;
        assert!(decode(&key, &b).is_err(), "a flipped byte at {i} must not load");
    }
    let other = Key([9; 32]);
    assert!(decode(&other, &bytes).unwrap_err().contains("another key"));
}

#[test]
fn store_then_load_and_a_damaged_entry_is_corrupt_then_replaced() {
    let d = tempfile::tempdir().unwrap();
    let cache = Cache::new(d.path().join("kernels"));
    let key = Inputs::base().key();
    assert!(matches!(cache.load(&key), Lookup::Miss));
    cache.store(&key, &entry()).unwrap();
    match cache.load(&key) {
        Lookup::Hit(e) => assert_eq!(e, entry()),
        other => panic!("{other:?}"),
    }
    let path = cache.entry_path(&key);
    let len = fs::metadata(&path).unwrap().len();
    fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len / 2).unwrap();
    assert!(matches!(cache.load(&key), Lookup::Corrupt(_)));
    cache.store(&key, &entry()).unwrap();
    assert!(matches!(cache.load(&key), Lookup::Hit(_)));
    // Only the entry itself is left: no temporary files.
    let names: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn concurrent_stores_and_loads_never_see_half_an_entry() {
    let d = tempfile::tempdir().unwrap();
    let cache = Cache::new(d.path().to_path_buf());
    let key = Inputs::base().key();
    let mut big = entry();
    big.cubin = (0..400_000u32).map(|i| i as u8).collect();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..20 {
                    cache.store(&key, &big).unwrap();
                }
            });
            s.spawn(|| {
                for _ in 0..50 {
                    match cache.load(&key) {
                        Lookup::Hit(e) => assert_eq!(e, big),
                        Lookup::Miss => {}
                        Lookup::Corrupt(r) => panic!("a reader saw a partial entry: {r}"),
                    }
                }
            });
        }
    });
    assert!(matches!(cache.load(&key), Lookup::Hit(_)));
}

/// A cache with one good entry stored, and that entry's key and path.
fn stored() -> (tempfile::TempDir, Cache, Key, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let cache = Cache::new(d.path().join("kernels"));
    let key = Inputs::base().key();
    cache.store(&key, &entry()).unwrap();
    let path = cache.entry_path(&key);
    (d, cache, key, path)
}

/// `load` says Corrupt with `reason` in its message, `store` replaces what was there with a
/// regular file, and the next `load` hits.
fn corrupt_then_replaced(cache: &Cache, key: &Key, reason: &str) {
    match cache.load(key) {
        Lookup::Corrupt(r) => assert!(r.contains(reason), "expected `{reason}` in: {r}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    cache.store(key, &entry()).unwrap();
    assert!(fs::symlink_metadata(cache.entry_path(key)).unwrap().file_type().is_file());
    assert!(matches!(cache.load(key), Lookup::Hit(_)));
}

#[cfg(unix)]
#[test]
fn a_link_to_dev_zero_is_damaged_never_read() {
    let (_d, cache, key, path) = stored();
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
    // Before the fix this read /dev/zero until memory ran out.
    corrupt_then_replaced(&cache, &key, "a symbolic link");
}

#[cfg(unix)]
#[test]
fn a_link_to_a_good_entry_elsewhere_is_not_followed() {
    let (d, cache, key, path) = stored();
    let outside = d.path().join("outside");
    fs::rename(&path, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    corrupt_then_replaced(&cache, &key, "a symbolic link");
    assert!(outside.is_file(), "the link's target is left alone");
}

#[cfg(unix)]
#[test]
fn a_fifo_is_damaged_and_does_not_block() {
    let (_d, cache, key, path) = stored();
    fs::remove_file(&path).unwrap();
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    // Before the fix this open blocked for ever (no writer): run it where a hang is seen.
    let (tx, rx) = std::sync::mpsc::channel();
    let (c2, k2) = (cache.clone(), key);
    std::thread::spawn(move || {
        let _ = tx.send(matches!(c2.load(&k2), Lookup::Corrupt(ref r) if r.contains("a FIFO")));
    });
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(true), "a FIFO entry blocked or was not damaged");
    corrupt_then_replaced(&cache, &key, "a FIFO");
}

#[test]
fn a_folder_is_damaged_and_replaced() {
    let (_d, cache, key, path) = stored();
    fs::remove_file(&path).unwrap();
    fs::create_dir_all(path.join("inside")).unwrap();
    fs::write(path.join("inside/file"), b"x").unwrap();
    // Before the fix `store` could not rename over the folder: compiled on every build.
    corrupt_then_replaced(&cache, &key, "a folder");
}

/// A cache folder that is a file (`LAUNCH_CACHE_DIR` pointing at one) holds no entry: a miss,
/// never a damaged entry (issue 19 item 7: the build said "1 damaged kernel cache entry compiled
/// again and replaced" next to the right "could not write the kernel cache"); the store fails.
#[test]
fn a_cache_folder_that_is_a_file_is_a_miss_not_damage() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("file"), b"x").unwrap();
    for dir in [d.path().join("file"), d.path().join("file/kernels")] {
        let cache = Cache::new(dir.clone());
        let key = Inputs::base().key();
        assert!(matches!(cache.load(&key), Lookup::Miss), "{}", dir.display());
        assert!(cache.store(&key, &entry()).is_err(), "{}", dir.display());
    }
}

#[test]
fn an_oversized_file_is_damaged_without_being_read() {
    let (_d, cache, key, path) = stored();
    // Sparse: takes no disk space, and must take no memory either.
    fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(MAX_ENTRY + 1).unwrap();
    corrupt_then_replaced(&cache, &key, "larger than any entry");
}

#[test]
fn an_oversized_length_field_is_damaged() {
    let key = Inputs::base().key();
    let mut bytes = encode(&key, &entry());
    // The PTX section's length says u64::MAX; the checksum is recomputed so only the length
    // is wrong.
    bytes.truncate(bytes.len() - 32);
    bytes[44..52].copy_from_slice(&u64::MAX.to_le_bytes());
    let digest: [u8; 32] = Sha256::digest(&bytes).into();
    bytes.extend_from_slice(&digest);
    assert_eq!(decode(&key, &bytes).unwrap_err(), "section overruns the entry");
}

#[test]
fn timings_round_trip_per_crate_and_ignore_junk() {
    let d = tempfile::tempdir().unwrap();
    let mut t = Timings::load(d.path(), Path::new("/crates/a"));
    assert_eq!(t.get("kernels/a.cu", "sm_80"), None);
    t.record("kernels/a.cu", "sm_80", 1200);
    t.record("kernels/dir with\ttab.cu", "sm_90", 7);
    t.save().unwrap();
    let back = Timings::load(d.path(), Path::new("/crates/a"));
    assert_eq!(back.get("kernels/a.cu", "sm_80"), Some(1200));
    assert_eq!(back.get("kernels/dir with\ttab.cu", "sm_90"), Some(7));
    assert_eq!(back.get("kernels/a.cu", "sm_90"), None);
    // Another crate has its own history.
    assert_eq!(Timings::load(d.path(), Path::new("/crates/b")).get("kernels/a.cu", "sm_80"), None);
    // A damaged file is no history, not an error.
    let path = back.path.clone().unwrap();
    fs::write(&path, b"garbage\nx\tsm_80\tk.cu\n12\tsm_80\tk.cu\n\xff").unwrap();
    let junk = Timings::load(d.path(), Path::new("/crates/a"));
    assert_eq!(junk.get("k.cu", "sm_80"), Some(12));
    assert_eq!(junk.times.len(), 1);
}

#[test]
fn placeholders_round_trip() {
    let pairs = [("/tmp/x/target/out/work".to_string(), "${W}"), ("/tmp/x".to_string(), "${R}")];
    let text = "ptxas /tmp/x/target/out/work/k.ptx, line 3; warning\n/tmp/x/include/h.cuh(2): warning";
    let portable = to_placeholders(text, &pairs);
    assert_eq!(portable, "ptxas ${W}/k.ptx, line 3; warning\n${R}/include/h.cuh(2): warning");
    assert_eq!(from_placeholders(&portable, &pairs), text);
}

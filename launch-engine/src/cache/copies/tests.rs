//! Tests of [`super`] (copies.rs): a copy is trusted only as recorded; anything else is no copy
//! and the cache answers, never a wrong entry.

use std::fs;
use std::path::Path;

use super::super::{encode, Cache, Entry, Key, Lookup};
use super::*;

fn entry(tag: &str) -> Entry {
    Entry {
        ptx: format!(".version 8.0 // {tag}"),
        cubin: tag.as_bytes().repeat(100),
        ptxas_log: "ptxas info    : Used 8 registers".into(),
        nvrtc_log: String::new(),
        probes: String::new(),
    }
}

/// A cache in `root/kernels` holding `key` → `entry("cache")`, with the copies of `out`.
fn cache_with_copies(root: &Path, out: &Path, key: &Key) -> Cache {
    let plain = Cache::new(root.join("kernels"));
    plain.store(key, &entry("cache")).unwrap();
    Cache::new(root.join("kernels")).with_copies(Copies::open(folder(out)))
}

fn hit(lookup: Lookup) -> Entry {
    match lookup {
        Lookup::Hit(e) => e,
        other => panic!("not a hit: {other:?}"),
    }
}

/// One build reads the cache and keeps a copy; the next reads the copy alone: the cache's entry
/// is gone and nothing notices.
#[test]
fn a_recorded_copy_is_read_instead_of_the_cache() {
    let (root, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let key = Key([7; 32]);
    let first = cache_with_copies(root.path(), out.path(), &key);
    assert_eq!(hit(first.load(&key)), entry("cache"));
    first.copies().unwrap().save().unwrap();
    fs::remove_dir_all(root.path().join("kernels")).unwrap();

    let second = Cache::new(root.path().join("kernels")).with_copies(Copies::open(folder(out.path())));
    assert_eq!(hit(second.load(&key)), entry("cache"));
    // The emptied cache got the entry back from the copy.
    assert!(second.entry_path(&key).is_file());
    // Still recorded after the second build: it used the copy.
    second.copies().unwrap().save().unwrap();
    let third = Cache::new(root.path().join("kernels")).with_copies(Copies::open(folder(out.path())));
    assert_eq!(hit(third.load(&key)), entry("cache"));
}

/// Every way a copy can differ from its record makes it no copy: the cache's entry is loaded.
/// (The copy holds another entry of the same key, so a copy read by mistake would show.)
#[test]
fn a_copy_not_as_recorded_is_never_read() {
    type Spoil = fn(&Path, &Path);
    let cases: [(&str, Spoil); 9] = [
        ("no record", |dir, _| fs::remove_file(dir.join(RECORD)).unwrap()),
        ("a record of another layout", |dir, _| {
            let text = fs::read_to_string(dir.join(RECORD)).unwrap();
            fs::write(dir.join(RECORD), text.replace(HEADER, "# launch-build entry copies 0")).unwrap();
        }),
        ("a damaged record line", |dir, _| {
            let text = fs::read_to_string(dir.join(RECORD)).unwrap();
            fs::write(dir.join(RECORD), format!("{text}garbage\n")).unwrap();
        }),
        ("the copy removed", |_, copy| fs::remove_file(copy).unwrap()),
        ("the copy longer", |_, copy| {
            let mut bytes = fs::read(copy).unwrap();
            bytes.push(0);
            fs::write(copy, bytes).unwrap();
        }),
        ("the copy rewritten, same length, another time", |_, copy| {
            let bytes = fs::read(copy).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
            fs::write(copy, bytes).unwrap();
        }),
        ("the copy touched", |_, copy| {
            let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
            fs::File::options().write(true).open(copy).unwrap().set_modified(later).unwrap();
        }),
        ("a folder in its place", |_, copy| {
            fs::remove_file(copy).unwrap();
            fs::create_dir(copy).unwrap();
        }),
        ("a symbolic link in its place", |_, copy| {
            let target = copy.with_extension("target");
            fs::rename(copy, &target).unwrap();
            std::os::unix::fs::symlink(&target, copy).unwrap();
        }),
    ];
    let key = Key([3; 32]);
    for (what, spoil) in cases {
        let (root, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let dir = folder(out.path());
        let copies = Copies::open(dir.clone());
        copies.put(&key, &encode(&key, &entry("copy")));
        copies.save().unwrap();
        spoil(&dir, &dir.join(key.to_string()));
        let cache = cache_with_copies(root.path(), out.path(), &key);
        assert_eq!(hit(cache.load(&key)), entry("cache"), "{what}: the copy was read");
    }
}

/// A copy recorded but not an entry of its key (written by something else with the record
/// updated to match) is no copy either: layout, format and key are checked, only the checksum is
/// not (what the copies save).
#[test]
fn a_recorded_copy_of_another_key_or_no_entry_is_never_read() {
    let key = Key([4; 32]);
    for (what, bytes) in [("another key's entry", encode(&Key([5; 32]), &entry("copy"))), ("no entry", vec![1u8; 300])]
    {
        let (root, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let copies = Copies::open(folder(out.path()));
        copies.put(&key, &bytes);
        copies.save().unwrap();
        let cache = cache_with_copies(root.path(), out.path(), &key);
        assert_eq!(hit(cache.load(&key)), entry("cache"), "{what}: the copy was read");
    }
    // What the trust saves: a recorded copy is not checksummed again.
    let (root, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let copies = Copies::open(folder(out.path()));
    let mut bytes = encode(&key, &entry("copy"));
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    copies.put(&key, &bytes);
    copies.save().unwrap();
    assert_eq!(hit(cache_with_copies(root.path(), out.path(), &key).load(&key)), entry("copy"));
}

/// An entry stored (compiled) is copied; saving keeps what this build used and removes the rest,
/// temporary leftovers included; a failed build (no save) leaves the last record.
#[test]
fn saving_keeps_exactly_what_the_build_used() {
    let (root, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dir = folder(out.path());
    let (a, b) = (Key([1; 32]), Key([2; 32]));
    let first = Cache::new(root.path().join("kernels")).with_copies(Copies::open(dir.clone()));
    first.store(&a, &entry("a")).unwrap();
    first.store(&b, &entry("b")).unwrap();
    first.copies().unwrap().save().unwrap();
    fs::write(dir.join(".leftover.tmp"), "x").unwrap();

    // A build that used `a` alone and failed before saving: `b`'s copy stays trusted.
    let failed = Cache::new(root.path().join("kernels")).with_copies(Copies::open(dir.clone()));
    hit(failed.load(&a));
    drop(failed);
    fs::remove_dir_all(root.path().join("kernels")).unwrap();
    let next = Cache::new(root.path().join("kernels")).with_copies(Copies::open(dir.clone()));
    assert_eq!(hit(next.load(&b)), entry("b"));

    let only_a = Cache::new(root.path().join("kernels")).with_copies(Copies::open(dir.clone()));
    hit(only_a.load(&a));
    only_a.copies().unwrap().save().unwrap();
    let mut names: Vec<String> =
        fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, [a.to_string(), RECORD.to_string()]);
}

/// An entry compiled again (the one read was unusable) replaces its copy.
#[test]
fn a_stored_entry_replaces_its_copy() {
    let (root, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let key = Key([9; 32]);
    let cache = cache_with_copies(root.path(), out.path(), &key);
    hit(cache.load(&key));
    cache.store(&key, &entry("again")).unwrap();
    cache.copies().unwrap().save().unwrap();
    fs::remove_dir_all(root.path().join("kernels")).unwrap();
    let next = Cache::new(root.path().join("kernels")).with_copies(Copies::open(folder(out.path())));
    assert_eq!(hit(next.load(&key)), entry("again"));
}

#[test]
fn keys_parse_back_from_their_names_only() {
    let key = Key([0xab; 32]);
    assert_eq!(parse_key(&key.to_string()), Some(key));
    for bad in ["", "ab", &"AB".repeat(32), &"g".repeat(64), &format!("{key}0"), RECORD] {
        assert_eq!(parse_key(bad), None, "{bad:?}");
    }
}

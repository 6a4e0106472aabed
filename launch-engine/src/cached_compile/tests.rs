//! Tests of [`super`] (cached_compile.rs) with an in-memory [`Store`]: the lookups, the damage
//! counting and the stores need nothing of a store but the trait, so a remote one plugs in the
//! same way.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// Entries in a map; `put` fails while `refuse` is set.
#[derive(Default)]
struct Memory {
    entries: Mutex<HashMap<Key, Vec<u8>>>,
    refuse: std::sync::atomic::AtomicBool,
}

/// By reference, so a test can look inside while the cache holds it.
impl Store for &Memory {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>, String> {
        Ok(self.entries.lock().unwrap().get(key).cloned())
    }

    fn put(&self, key: &Key, bytes: &[u8]) -> io::Result<()> {
        if self.refuse.load(Ordering::SeqCst) {
            return Err(io::Error::other("read-only"));
        }
        self.entries.lock().unwrap().insert(*key, bytes.to_vec());
        Ok(())
    }

    fn location(&self) -> String {
        "memory".into()
    }
}

fn keys(n: u8) -> Vec<Key> {
    (0..n).map(|i| Key([i; 32])).collect()
}

/// A job's "output" is its PTX text; `compile` counts how often it ran.
fn output(i: usize) -> String {
    format!("ptx of job {i}")
}

// `compile_and_store` hands the entries function a `&T`, and `T` is `String` here.
#[allow(clippy::ptr_arg)]
fn entry_of(key: &Key, out: &String) -> Vec<(Key, Entry)> {
    vec![(*key, Entry { ptx: out.clone(), cubin: vec![1, 2, 3], ptxas_log: String::new(), nvrtc_log: String::new() })]
}

fn found(cache: &Cache<&Memory>, keys: &[Key]) -> Found<String> {
    look_up(Some(cache), keys, |_, e| Ok(e.ptx), |i| format!("job {i}"), false)
}

/// Compiles `pending` (in job order) through `cache`; returns how many compiles ran.
fn compile(cache: &Cache<&Memory>, keys: &[Key], pending: &[usize]) -> (usize, Option<String>) {
    let runs = AtomicUsize::new(0);
    let order: Vec<usize> = (0..pending.len()).collect();
    let (ran, failure) = compile_and_store(
        Some(cache),
        &Tokens::Serial,
        &order,
        pending,
        keys,
        |i| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(output(i))
        },
        entry_of,
    );
    assert_eq!(ran.all().unwrap(), pending.iter().map(|&i| output(i)).collect::<Vec<_>>());
    (runs.into_inner(), failure)
}

#[test]
fn misses_compile_and_are_stored_then_every_job_hits() {
    let memory = Memory::default();
    let cache = Cache::with_store(&memory);
    let keys = keys(3);
    let cold = found(&cache, &keys);
    assert!(cold.outputs.iter().all(Option::is_none));
    assert_eq!((cold.corrupt, cold.first_damage), (0, None));

    assert_eq!(compile(&cache, &keys, &[0, 1, 2]), (3, None));
    assert_eq!(memory.entries.lock().unwrap().len(), 3);

    let warm = found(&cache, &keys);
    assert_eq!(warm.outputs, (0..3).map(|i| Some(output(i))).collect::<Vec<_>>());
    assert_eq!(warm.corrupt, 0);
}

#[test]
fn a_damaged_entry_in_any_store_fails_the_checksum_is_counted_and_replaced() {
    let memory = Memory::default();
    let cache = Cache::with_store(&memory);
    let keys = keys(3);
    compile(&cache, &keys, &[0, 1, 2]);
    // The store hands back damaged bytes: the checksum in `Cache::load` catches them.
    memory.entries.lock().unwrap().get_mut(&keys[1]).unwrap()[20] ^= 1;
    let damaged = found(&cache, &keys);
    assert_eq!(damaged.corrupt, 1);
    assert!(damaged.outputs[1].is_none() && damaged.outputs[0].is_some() && damaged.outputs[2].is_some());
    let reason = damaged.first_damage.unwrap();
    assert!(reason.starts_with(&format!("memory/{}: checksum mismatch", keys[1])), "{reason}");

    assert_eq!(compile(&cache, &keys, &[1]), (1, None));
    let healed = found(&cache, &keys);
    assert_eq!((healed.corrupt, healed.outputs.iter().flatten().count()), (0, 3));
}

#[test]
fn an_entry_the_build_cannot_use_counts_as_damaged() {
    let memory = Memory::default();
    let cache = Cache::with_store(&memory);
    let keys = keys(2);
    compile(&cache, &keys, &[0, 1]);
    let refused = look_up(
        Some(&cache),
        &keys,
        |i, e| {
            if i == 0 {
                Err(Error::Kernels(vec![crate::error::Diagnostic::error("k.cu", 0, 0, "the log no longer parses")]))
            } else {
                Ok(e.ptx)
            }
        },
        |i| format!("job {i}"),
        false,
    );
    assert_eq!((refused.corrupt, refused.outputs[0].is_none(), refused.outputs[1].is_some()), (1, true, true));
    assert!(refused.first_damage.unwrap().contains("the log no longer parses"));
}

#[test]
fn a_store_that_cannot_be_written_is_one_message_and_the_build_goes_on() {
    let memory = Memory::default();
    let cache = Cache::with_store(&memory);
    memory.refuse.store(true, Ordering::SeqCst);
    let keys = keys(3);
    let (runs, failure) = compile(&cache, &keys, &[0, 1, 2]);
    assert_eq!(runs, 3);
    assert_eq!(failure.as_deref(), Some("could not write the kernel cache at memory: read-only"));
    assert!(found(&cache, &keys).outputs.iter().all(Option::is_none));
}

#[test]
fn without_a_cache_every_job_is_a_miss_and_nothing_is_stored() {
    let keys = keys(2);
    let none: Option<&Cache<&Memory>> = None;
    let f = look_up(none, &keys, |_, e| Ok(e.ptx), |i| format!("job {i}"), false);
    assert_eq!((f.outputs, f.corrupt), (vec![None, None], 0));
    let (ran, failure) = compile_and_store(none, &Tokens::Serial, &[0, 1], &[0, 1], &keys, |i| Ok(output(i)), entry_of);
    assert_eq!((ran.all().unwrap().len(), failure), (2, None));
}

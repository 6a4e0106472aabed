//! Tests of [`super`] (compile/cached.rs) with an in-memory [`Store`]: the lookups, the damage
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
    vec![(
        *key,
        Entry {
            ptx: out.clone(),
            cubin: vec![1, 2, 3],
            ptxas_log: String::new(),
            nvrtc_log: String::new(),
            probes: String::new(),
        },
    )]
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

/// `from` recreated at `to` with every file hard-linked (identical bytes, as two installs of one
/// pinned toolchain are) and every symbolic link as it was.
fn link_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (path, target) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&path).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            link_tree(&path, &target);
        } else {
            std::fs::hard_link(&path, &target).unwrap();
        }
    }
}

/// `t` installed again at `dir` (hard links), with a library's headers beside it in
/// `<dir>-curand/nvidia/curand/include` as `cargo launch setup --with` lays them out.
fn install_at(t: &toolchain::Toolchain, dir: &Path) -> toolchain::Toolchain {
    if !dir.exists() {
        link_tree(&t.root, dir);
        let lib = PathBuf::from(format!("{}-curand", dir.display())).join("nvidia/curand/include");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(lib.join("launch_lib.cuh"), "#define LIB_SCALE 3.0f\n").unwrap();
    }
    let rebase = |p: &Path| dir.join(p.strip_prefix(&t.root).expect("under the toolchain's root"));
    toolchain::Toolchain {
        root: dir.to_path_buf(),
        nvrtc: rebase(&t.nvrtc),
        ptxas: rebase(&t.ptxas),
        include: t.include.as_deref().map(rebase),
        cccl_include: t.cccl_include.as_deref().map(rebase),
        libraries: vec![PathBuf::from(format!("{}-curand", dir.display())).join("nvidia/curand/include")],
        ..t.clone()
    }
}

/// The key `keys_and_sizes` gives the one job of a crate at `root` (a kernel that includes a
/// crate header, a toolchain header and a library header) built with `toolchain`, its work
/// folder under the crate's target folder as cargo's `OUT_DIR` is.
fn key_of(root: &Path, toolchain: toolchain::Toolchain) -> Key {
    std::fs::create_dir_all(root.join("kernels")).unwrap();
    let text = "#include \"common.cuh\"\n#include <cuda_fp16.h>\n#include <launch_lib.cuh>\n\
                extern \"C\" __global__ void k(float* p) { p[0] = SCALE * LIB_SCALE; }\n";
    std::fs::write(root.join("kernels/k.cu"), text).unwrap();
    std::fs::write(root.join("kernels/common.cuh"), "#define SCALE 2.0f\n").unwrap();
    let manifest = "[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\narch = [\"sm_90\"]\n";
    let config = crate::config::Config::parse(&root.join("Cargo.toml"), manifest).expect("config");
    let work = root.join("target/debug/build/k-1/out/launch/work");
    let settings = compile::Settings::default();
    let compiler = Compiler::new(toolchain, &config, work, settings).expect("NVRTC loads");
    let plan = crate::plan::Plan::resolve(config).unwrap();
    let file = plan.file("kernels/k.cu").expect("planned");
    let jobs = [Job { file, text, annotations: &[], headers: &[], arch: "sm_90".parse().unwrap() }];
    let units = units(&jobs);
    let keys = keys_and_sizes(&compiler, None, &jobs, &units, None).expect("keys");
    keys[0].0
}

/// Class 3 of issue 32: where a toolchain lies is never part of a key. The same pinned toolchain
/// (hard links: identical bytes) at every kind of place — outside the crate, inside it, in its
/// target folder, in a cache folder inside it (`LAUNCH_CACHE_DIR=./cache`), a second install
/// there (`./cache2`), behind a symbolic link either way — and the crate itself at two paths:
/// one job, one key. Before the fix every place inside the crate keyed the toolchain's headers
/// and include folders as crate files (`$CRATE/cache/toolchain/...`).
#[cfg(unix)]
#[test]
fn a_toolchain_is_keyed_by_what_it_is_never_by_where_it_lies() {
    let pinned = match toolchain::discover(&Env::cli()) {
        Ok(t) if t.include.is_some() => t,
        other => return eprintln!("skipped: no pinned CUDA toolchain with headers ({:?})", other.err()),
    };
    let base = tempfile::tempdir().unwrap();
    let name = pinned.root.file_name().unwrap().to_owned();
    let mut cases: Vec<(String, Key)> = Vec::new();
    for crate_at in ["a/crate", "somewhere/else/b/crate"] {
        let root = base.path().join(crate_at);
        let outside = base.path().join(crate_at.replace('/', "-")).join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(root.join("cache")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
        let back = base.path().join(format!("{}-link", crate_at.replace('/', "-")));
        std::os::unix::fs::symlink(root.join("cache"), &back).unwrap();
        let places: [(&str, PathBuf); 7] = [
            ("outside the crate", outside.join(&name)),
            ("inside the crate", root.join("toolchain").join(&name)),
            ("in the target folder", root.join("target").join(&name)),
            ("in the cache inside the crate", root.join("cache/toolchain").join(&name)),
            ("a second install in the crate", root.join("cache2/toolchain").join(&name)),
            ("a symlinked folder inside the crate", root.join("linked/symlinked").join(&name)),
            ("through a link outside into the crate", back.join("toolchain").join(&name)),
        ];
        for (place, dir) in places {
            let t = install_at(&pinned, &dir);
            cases.push((format!("crate at {crate_at}, toolchain {place}"), key_of(&root, t)));
        }
    }
    let expected = cases[0].1;
    let differ: Vec<&str> = cases.iter().filter(|(_, k)| *k != expected).map(|(c, _)| c.as_str()).collect();
    assert!(
        differ.is_empty(),
        "{} of {} cases key the job differently from the first:\n{}",
        differ.len(),
        cases.len(),
        differ.join("\n")
    );
}

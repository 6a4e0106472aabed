//! Tests of [`super`] (tool_digest.rs).

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::*;
use crate::cache::{key, KeyInputs, ToolchainId};

fn set_mtime(path: &Path, t: SystemTime) {
    fs::File::options().write(true).open(path).unwrap().set_modified(t).unwrap();
}

fn mtime(path: &Path) -> SystemTime {
    fs::metadata(path).unwrap().modified().unwrap()
}

/// A fake toolchain install in `dir`: an "NVRTC library" and a "ptxas", modified at `t`.
fn install(dir: &Path, t: SystemTime) -> (PathBuf, PathBuf) {
    let nvrtc = dir.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
    let ptxas = dir.join("nvidia/cuda_nvcc/bin/ptxas");
    for (p, bytes) in [(&nvrtc, vec![7u8; 3 << 20]), (&ptxas, b"ptxas bytes".to_vec())] {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
        set_mtime(p, t);
    }
    (nvrtc, ptxas)
}

fn key_with(nvrtc: &Path, ptxas: &Path, memo: &Path) -> crate::cache::Key {
    let toolchain = ToolchainId {
        nvrtc_version: "12.9.86".into(),
        nvrtc_api: (12, 9),
        ptxas_version: "12.9.86".into(),
        nvrtc: tool_digest(nvrtc, Some(memo)),
        ptxas: tool_digest(ptxas, Some(memo)),
    };
    key(&KeyInputs {
        file: "kernels/a.cu",
        text: "__global__ void k() {}",
        headers: &[],
        options: &[],
        ptxas_options: &[],
        arch: "sm_90",
        annotations: &[],
        toolchain: &toolchain,
    })
}

#[test]
fn two_installs_at_other_paths_and_times_give_one_key_and_a_changed_byte_another() {
    let (one, two, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let day = Duration::from_secs(86_400);
    let (n1, p1) = install(one.path(), SystemTime::UNIX_EPOCH + 1000 * day);
    let (n2, p2) = install(&two.path().join("elsewhere"), SystemTime::UNIX_EPOCH + 2000 * day);
    assert_ne!(mtime(&n1), mtime(&n2));
    let k1 = key_with(&n1, &p1, cache.path());
    assert_eq!(k1, key_with(&n2, &p2, cache.path()));

    // One byte of ptxas (same size, time restored): another key.
    let t = mtime(&p2);
    fs::write(&p2, b"ptxas bytez").unwrap();
    set_mtime(&p2, t + Duration::from_secs(1));
    assert_ne!(key_with(&n2, &p2, cache.path()), k1);
    // One byte of NVRTC, in the middle.
    let mut bytes = fs::read(&n1).unwrap();
    bytes[1 << 20] ^= 1;
    fs::write(&n1, bytes).unwrap();
    assert_ne!(key_with(&n1, &p1, cache.path()), k1);
}

#[test]
fn the_digest_is_the_sha256_of_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let tool = dir.path().join("ptxas");
    fs::write(&tool, b"abc").unwrap();
    let expected: [u8; 32] = Sha256::digest(b"abc").into();
    assert_eq!(digest_with(&tool, None, &Mutex::default(), Source::RecordOrBytes), expected);
    assert_eq!(tool_digest(&tool, None), expected);
}

/// The digests a toolchain's files are checked with (issue 32, class 1) are memoised the same
/// way, in a file of their own (a RECORD-taken digest must never stand for a read one): a build
/// reads the files once, and a file changed in size or time is read again.
#[test]
fn the_checked_digests_have_a_memo_of_their_own() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let tool = dir.path().join("libnvrtc.so.12");
    fs::write(&tool, b"first").unwrap();
    let t = mtime(&tool);
    let first: [u8; 32] = Sha256::digest(b"first").into();
    assert_eq!(read_digest(&tool, Some(cache.path())), first);
    assert!(fs::read_to_string(cache.path().join(READ_MEMO_FILE)).unwrap().contains(&tool.display().to_string()));
    assert!(!cache.path().join(MEMO_FILE).exists());
    fs::write(&tool, b"other").unwrap();
    set_mtime(&tool, t);
    assert_eq!(digest_with(&tool, Some(cache.path()), &Mutex::default(), Source::Bytes), first, "memo file");
    set_mtime(&tool, t + Duration::from_secs(5));
    let other: [u8; 32] = Sha256::digest(b"other").into();
    assert_eq!(digest_with(&tool, Some(cache.path()), &Mutex::default(), Source::Bytes), other);
}

/// An unchanged file is not read again: the file's bytes are swapped for others of the same size
/// with the same time, and the memo (in this process, then in the file) still gives the old
/// digest. A change of time or size is hashed again.
#[test]
fn the_memo_saves_the_reading_until_the_size_or_time_changes() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let tool = dir.path().join("ptxas");
    fs::write(&tool, b"first").unwrap();
    let t = mtime(&tool);
    let first: [u8; 32] = Sha256::digest(b"first").into();
    let memory = Mutex::default();
    assert_eq!(digest_with(&tool, Some(cache.path()), &memory, Source::RecordOrBytes), first);
    let text = fs::read_to_string(cache.path().join(MEMO_FILE)).unwrap();
    assert!(text.contains(&tool.display().to_string()), "{text}");

    fs::write(&tool, b"other").unwrap();
    set_mtime(&tool, t);
    assert_eq!(digest_with(&tool, Some(cache.path()), &memory, Source::RecordOrBytes), first, "in-process memo");
    assert_eq!(
        digest_with(&tool, Some(cache.path()), &Mutex::default(), Source::RecordOrBytes),
        first,
        "memo file, a new process"
    );

    // Another time: hashed again, and the file learns it.
    set_mtime(&tool, t + Duration::from_secs(5));
    let other: [u8; 32] = Sha256::digest(b"other").into();
    assert_eq!(digest_with(&tool, Some(cache.path()), &memory, Source::RecordOrBytes), other);
    assert_eq!(digest_with(&tool, Some(cache.path()), &Mutex::default(), Source::RecordOrBytes), other);

    // Another size, same time.
    fs::write(&tool, b"longer").unwrap();
    set_mtime(&tool, t + Duration::from_secs(5));
    assert_eq!(
        digest_with(&tool, Some(cache.path()), &memory, Source::RecordOrBytes),
        Sha256::digest(b"longer").as_slice()
    );
}

#[test]
fn a_damaged_or_unreadable_memo_is_no_memo() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let tool = dir.path().join("nvrtc");
    fs::write(&tool, b"abc").unwrap();
    let expected: [u8; 32] = Sha256::digest(b"abc").into();
    let memo = cache.path().join(MEMO_FILE);
    let meta = fs::metadata(&tool).unwrap();
    let ns = meta.modified().unwrap().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
    let bad = [
        format!("zz{}\t{}\t{ns}\t{}\n", "0".repeat(62), meta.len(), tool.display()),
        format!("{}\tmany\t{ns}\t{}\n", "0".repeat(64), tool.display()),
        "\u{0}\u{1}garbage".to_string(),
    ];
    for text in bad {
        fs::write(&memo, &text).unwrap();
        assert_eq!(
            digest_with(&tool, Some(cache.path()), &Mutex::default(), Source::RecordOrBytes),
            expected,
            "{text:?}"
        );
    }
    // A folder in its place: no memo, and no failure.
    fs::remove_file(&memo).unwrap();
    fs::create_dir(&memo).unwrap();
    assert_eq!(digest_with(&tool, Some(cache.path()), &Mutex::default(), Source::RecordOrBytes), expected);
    // A well-formed line is believed (that is what saves the reading).
    fs::remove_dir(&memo).unwrap();
    fs::write(&memo, format!("{}\t{}\t{ns}\t{}\n", "ab".repeat(32), meta.len(), tool.display())).unwrap();
    assert_eq!(digest_with(&tool, Some(cache.path()), &Mutex::default(), Source::RecordOrBytes), [0xab; 32]);
}

#[test]
fn a_missing_tool_hashes_as_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none");
    let d = digest_with(&missing, Some(dir.path()), &Mutex::default(), Source::RecordOrBytes);
    assert_ne!(d, Sha256::digest(b"").as_slice());
    assert!(!dir.path().join(MEMO_FILE).exists());
}

#[test]
fn base64url_digests_decode() {
    let abc: [u8; 32] = Sha256::digest(b"abc").into();
    assert_eq!(from_base64url("ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"), Some(abc));
    assert_eq!(from_base64url("q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s"), Some([0xab; 32]));
    for bad in
        ["", "q6ur", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=x", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6+"]
    {
        assert_eq!(from_base64url(bad), None, "{bad}");
    }
}

/// A wheel's tool is not read the first time: its RECORD's digest is taken when the size it
/// lists is the file's (here RECORD says 0xab…, which the bytes are not: proof it was not read).
/// A size that differs, or no RECORD line, means hashing the bytes.
#[test]
fn a_wheels_record_gives_the_digest_without_reading_the_tool() {
    let root = tempfile::tempdir().unwrap();
    let (_, ptxas) = install(root.path(), SystemTime::now());
    let info = root.path().join("nvidia_cuda_nvcc_cu12-12.9.86.dist-info");
    fs::create_dir_all(&info).unwrap();
    let size = fs::metadata(&ptxas).unwrap().len();
    let record = |size: u64| {
        format!(
            "nvidia/cuda_nvcc/bin/ptxas.bak,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
             nvidia/cuda_nvcc/bin/ptxas,sha256=q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s,{size}\n\
             nvidia_cuda_nvcc_cu12-12.9.86.dist-info/RECORD,,\n"
        )
    };
    fs::write(info.join("RECORD"), record(size)).unwrap();
    assert_eq!(digest_with(&ptxas, None, &Mutex::default(), Source::RecordOrBytes), [0xab; 32]);
    // What a file is checked with reads its bytes whatever the RECORD says (and the RECORD's
    // entry is there to compare with).
    assert_eq!(digest_with(&ptxas, None, &Mutex::default(), Source::Bytes), Sha256::digest(b"ptxas bytes").as_slice());
    assert_eq!(recorded(&ptxas), Some(([0xab; 32], size)));
    fs::write(info.join("RECORD"), record(size + 1)).unwrap();
    assert_eq!(
        digest_with(&ptxas, None, &Mutex::default(), Source::RecordOrBytes),
        Sha256::digest(b"ptxas bytes").as_slice()
    );
    // NVRTC has no line in the RECORD: hashed.
    let nvrtc = root.path().join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
    assert_eq!(
        digest_with(&nvrtc, None, &Mutex::default(), Source::RecordOrBytes),
        Sha256::digest(vec![7u8; 3 << 20]).as_slice()
    );
}

/// The pinned toolchain, where installed: RECORD's digests are the files' own.
#[test]
fn the_pinned_wheels_records_match_their_files() {
    let Some(root) = crate::toolchain::pinned_dir(&crate::env::Env::cli()) else { return };
    for tool in ["nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "nvidia/cuda_nvcc/bin/ptxas"] {
        let path = root.join(tool);
        let Ok(meta) = fs::metadata(&path) else {
            eprintln!("skipped: no {}", path.display());
            return;
        };
        let recorded = from_record(&path, meta.len()).expect("the wheel's RECORD lists it");
        assert_eq!(recorded, hash_file(&path).unwrap(), "{tool}");
    }
}

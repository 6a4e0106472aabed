//! Every file of a toolchain checked before it is loaded or run (issue 32, class 1): a library
//! cut short is mapped by the loader past its end and kills the process with SIGBUS, nothing
//! printed. So each file is first looked at: there, a file (a folder for headers), not empty,
//! executable where it is run; then, when a pinned wheel's `*.dist-info/RECORD` lists it, its
//! size and SHA-256 against the RECORD's (the digest memoised by path, size and modification time,
//! [`crate::cache::read_digest`]: a build reads the files once); otherwise its ELF headers against
//! its size (a truncated file's segments or section table lie past its end). A damaged file is
//! the toolchain's error, naming the file and `cargo launch setup`.

use std::fs;
use std::io::Read as _;
use std::path::Path;

/// What a toolchain file is to the build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A file the build loads or reads (NVRTC, its builtins, a header).
    Loaded,
    /// A program the build runs (ptxas, nvdisasm, nvcc).
    Program,
    /// A folder of headers (the CUDA headers, CCCL).
    Headers,
}

/// Why the toolchain file at `path` cannot be used (`missing`, `cut short: ...`); `None` when it
/// can. `memo_dir`: the cache root, where verified digests are remembered.
pub fn damage(path: &Path, role: Role, memo_dir: Option<&Path>) -> Option<String> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some("missing".into()),
        Err(e) => return Some(format!("cannot be read: {e}")),
    };
    if role == Role::Headers {
        return (!meta.is_dir()).then(|| "not a folder".to_string());
    }
    if meta.is_dir() {
        return Some("a folder, not a file".into());
    }
    if !meta.is_file() {
        return Some("not a regular file".into());
    }
    let len = meta.len();
    if len == 0 {
        return Some("empty (0 bytes)".into());
    }
    if role == Role::Program && !executable(&meta) {
        return Some("not executable".into());
    }
    if let Some((digest, size)) = crate::cache::recorded(path) {
        if len != size {
            return Some(format!("{len} bytes, where the pinned wheel's RECORD says {size}"));
        }
        return (crate::cache::read_digest(path, memo_dir) != digest)
            .then(|| "its SHA-256 differs from the pinned wheel's RECORD".to_string());
    }
    elf_damage(path, len)
}

#[cfg(unix)]
fn executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &fs::Metadata) -> bool {
    true
}

/// A 64-bit ELF file whose program headers, loaded segments or section table end past its
/// `len` bytes: what the loader would map beyond the end. Other files are not judged here (a
/// toolkit's script, another platform's format): running them says what is wrong.
fn elf_damage(path: &Path, len: u64) -> Option<String> {
    let mut file = fs::File::open(path).ok()?;
    let mut head = Vec::with_capacity(64);
    (&mut file).take(64).read_to_end(&mut head).ok()?;
    if !head.starts_with(b"\x7fELF") {
        return None;
    }
    if head.len() < 64 {
        return Some(format!("cut short: {len} bytes, less than an ELF header"));
    }
    // ELFCLASS64, little-endian: every platform the pinned wheels ship for.
    if head[..4] != *b"\x7fELF" || head[4] != 2 || head[5] != 1 {
        return None;
    }
    let u16_at = |b: &[u8], at: usize| u64::from(u16::from_le_bytes([b[at], b[at + 1]]));
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default());
    let (phoff, phentsize, phnum) = (u64_at(&head, 0x20), u16_at(&head, 0x36), u16_at(&head, 0x38));
    let (shoff, shentsize, shnum) = (u64_at(&head, 0x28), u16_at(&head, 0x3a), u16_at(&head, 0x3c));
    let mut need = phoff.saturating_add(phentsize * phnum).max(shoff.saturating_add(shentsize * shnum));
    if phoff.saturating_add(phentsize * phnum) <= len && phentsize >= 0x28 {
        let mut table = vec![0u8; usize::try_from(phentsize * phnum).ok()?];
        use std::io::Seek as _;
        file.seek(std::io::SeekFrom::Start(phoff)).ok()?;
        file.read_exact(&mut table).ok()?;
        for entry in table.chunks(usize::try_from(phentsize).ok()?) {
            // PT_LOAD: its bytes at p_offset, p_filesz long, are mapped.
            if u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]) == 1 {
                need = need.max(u64_at(entry, 0x08).saturating_add(u64_at(entry, 0x20)));
            }
        }
    }
    (need > len).then(|| format!("cut short: {len} bytes, where its ELF headers need {need}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_judged_before_anything_loads_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = |name: &str| dir.path().join(name);
        // This test's own executable: a whole ELF file, then cut short.
        let me = std::env::current_exe().unwrap();
        let bytes = fs::read(&me).unwrap();
        fs::write(p("whole"), &bytes).unwrap();
        fs::write(p("half"), &bytes[..bytes.len() / 2]).unwrap();
        fs::write(p("less_one"), &bytes[..bytes.len() - 1]).unwrap();
        fs::write(p("head"), &bytes[..40]).unwrap();
        fs::write(p("empty"), b"").unwrap();
        fs::create_dir(p("folder")).unwrap();
        assert_eq!(damage(&p("whole"), Role::Loaded, None), None);
        for cut in ["half", "less_one", "head"] {
            let why = damage(&p(cut), Role::Loaded, None).unwrap_or_default();
            assert!(why.starts_with("cut short"), "{cut}: {why}");
        }
        assert_eq!(damage(&p("empty"), Role::Loaded, None).as_deref(), Some("empty (0 bytes)"));
        assert_eq!(damage(&p("folder"), Role::Loaded, None).as_deref(), Some("a folder, not a file"));
        assert_eq!(damage(&p("nothing"), Role::Program, None).as_deref(), Some("missing"));
        assert_eq!(damage(&p("whole"), Role::Headers, None).as_deref(), Some("not a folder"));
        assert_eq!(damage(&p("folder"), Role::Headers, None), None);
        #[cfg(unix)]
        {
            // Written without an executable bit: a library may be so, a program not.
            assert_eq!(damage(&p("whole"), Role::Program, None).as_deref(), Some("not executable"));
        }
    }
}

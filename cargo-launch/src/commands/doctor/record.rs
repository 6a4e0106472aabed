//! A wheel install checked against pip's `*.dist-info/RECORD`: each file's size and SHA-256
//! (`path,sha256=<urlsafe base64, unpadded>,size`), as pip wrote them when it installed the wheel.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// What checking one install folder found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Checked {
    /// Files checked.
    pub files: usize,
    /// `path: why` for each file that differs or is missing.
    pub damaged: Vec<String>,
}

/// Checks every file the RECORDs in `root` list (its `*.dist-info` folders). Files outside
/// `root` (`../bin/...`) and those without a hash (the RECORD itself) are skipped.
pub(crate) fn verify(root: &Path) -> Checked {
    let mut out = Checked::default();
    let Ok(dir) = std::fs::read_dir(root) else { return out };
    let mut infos: Vec<_> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "dist-info") && p.is_dir())
        .collect();
    infos.sort();
    for info in infos {
        let Ok(text) = std::fs::read_to_string(info.join("RECORD")) else { continue };
        for line in text.lines() {
            let Some((path, hash, size)) = parse_line(line) else { continue };
            out.files += 1;
            if let Some(why) = check(&root.join(path), hash, size) {
                out.damaged.push(format!("{path}: {why}"));
            }
        }
    }
    out
}

/// `(path, sha256 as written, size)` of a RECORD line with a SHA-256; `None` otherwise.
fn parse_line(line: &str) -> Option<(&str, &str, u64)> {
    // Paths with commas are quoted (csv); pip's wheels here have none, and such a line is skipped.
    let mut parts = line.rsplitn(3, ',');
    let size = parts.next()?.trim().parse().ok()?;
    let hash = parts.next()?.strip_prefix("sha256=")?;
    let path = parts.next()?;
    (!path.starts_with("..") && !path.starts_with('"')).then_some((path, hash, size))
}

/// Why the file at `path` is not the one recorded; `None` when it is.
fn check(path: &Path, want: &str, size: u64) -> Option<String> {
    let Ok(mut file) = std::fs::File::open(path) else { return Some("missing".into()) };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len != size {
        return Some(format!("{len} bytes, the wheel's {size}"));
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) => return Some(format!("unreadable: {e}")),
        }
    }
    let got = base64_url(&hasher.finalize());
    (got != want).then(|| "SHA-256 differs from the wheel's".to_string())
}

/// URL-safe base64 without padding (RECORD's encoding of digests).
fn base64_url(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ABC[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_written_as_pip_writes_them() {
        // sha256("") and sha256("abc"), as a RECORD holds them.
        assert_eq!(base64_url(&Sha256::digest(b"")), "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
        assert_eq!(base64_url(&Sha256::digest(b"abc")), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
        assert_eq!(base64_url(b"ab"), "YWI");
    }

    #[test]
    fn a_changed_a_missing_and_a_resized_file_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("w-1.0.dist-info")).unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        for (name, text) in [("a", "abc"), ("b", "xyz"), ("c", "long")] {
            std::fs::write(root.join("pkg").join(name), text).unwrap();
        }
        let record = "pkg/a,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
                      pkg/b,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
                      pkg/c,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
                      pkg/d,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
                      ../../bin/x,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3\n\
                      w-1.0.dist-info/RECORD,,\n";
        std::fs::write(root.join("w-1.0.dist-info/RECORD"), record).unwrap();
        let c = verify(root);
        assert_eq!(c.files, 4);
        assert_eq!(
            c.damaged,
            ["pkg/b: SHA-256 differs from the wheel's", "pkg/c: 4 bytes, the wheel's 3", "pkg/d: missing"]
        );
    }
}

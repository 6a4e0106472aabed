//! The one reader of the files the build takes as input: kernel files (`prepare`, the docs.rs
//! build), the headers they include (`source::dependencies`, the cache key's header digests,
//! kernels found in headers) and Cargo.toml (`Config::load`).
//!
//! It reads only a regular file of at most [`MAX_INPUT_BYTES`] (after following links, as a
//! compiler does), and never blocks: what is at the path is looked at before it is opened, and it
//! is opened with `O_NONBLOCK` and looked at again (the path may have changed in between). A FIFO
//! would otherwise wait for a writer forever, `/dev/zero` never end, a folder or a broken link
//! give the OS's "Is a directory" or "No such file or directory" for a file `ls` shows. Anything
//! else is named: "a FIFO, not a file", "a broken link to `x`", "a link loop", ...
//!
//! The kernel cache's entries are read by `cache::store` with the same classification and open
//! ([`kind_of_special`], [`open_nonblocking`]), without following links.

use std::fs;
use std::io::{self, Read as _};
use std::path::Path;

use crate::error::Error;

/// The largest file the build reads: 64 MiB (the largest real kernel sources are a few MB).
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Why a path is not read.
#[derive(Debug)]
pub enum Refused {
    /// Nothing is there (not even a link).
    Missing(io::Error),
    /// Something other than a regular file within the limit: what it is
    /// (`a FIFO, not a file`, ``a broken link to `x` ``).
    NotAFile(String),
    /// Any other error of the OS (permissions, ...).
    Io(io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Missing(e) | Refused::Io(e) => write!(f, "{e}"),
            Refused::NotAFile(what) => f.write_str(what),
        }
    }
}

impl Refused {
    /// The build's error for the file `shown` (at `path`): [`Error::InputFile`] with `at` and
    /// `fix` for what is not a file, [`Error::Io`] otherwise.
    pub fn into_error(self, shown: &str, path: &Path, at: Option<(String, u32, u32)>, fix: &str) -> Error {
        match self {
            Refused::NotAFile(what) => Error::InputFile { file: shown.to_string(), what, at, fix: fix.to_string() },
            Refused::Missing(source) | Refused::Io(source) => {
                Error::Io { path: path.to_path_buf(), action: "read", source }
            }
        }
    }
}

/// Looks at what is at `path` (following links) without opening it: `Ok` for a regular file of
/// at most [`MAX_INPUT_BYTES`].
pub fn check(path: &Path) -> Result<(), Refused> {
    match fs::metadata(path) {
        Ok(meta) => regular(&meta),
        Err(e) => Err(not_found(path, e)),
    }
}

/// The bytes of the file at `path`, if [`check`] accepts it; never blocks, never reads more than
/// [`MAX_INPUT_BYTES`].
pub fn read(path: &Path) -> Result<Vec<u8>, Refused> {
    check(path)?;
    let mut file = open_nonblocking(path, true).map_err(|e| not_found(path, e))?;
    // Looked at again on what was opened: the path may have been replaced in between.
    let meta = file.metadata().map_err(Refused::Io)?;
    regular(&meta)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // `take` bounds the read even if the file grows while it is read.
    (&mut file).take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(Refused::Io)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// The bytes of the kernel file at `path` (`file` relative to the crate, `kernel_rel` to the
/// kernel folder); [`Error::InputFile`] (saying how to leave it out) when it is not a regular file
/// within the limit.
pub fn read_kernel(file: &str, path: &Path, kernel_rel: &str) -> Result<Vec<u8>, Error> {
    read(path).map_err(|r| {
        let fix = format!(
            "make it a regular file, or leave it out with `exclude = [\"{kernel_rel}\"]` in [package.metadata.launch]"
        );
        r.into_error(file, path, None, &fix)
    })
}

/// Opens for reading without blocking (a FIFO would wait for a writer), following a final
/// symbolic link or not.
pub fn open_nonblocking(path: &Path, follow: bool) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let no_follow = if follow { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(no_follow | libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    let _ = follow;
    options.open(path)
}

/// `Ok` for a regular file of at most [`MAX_INPUT_BYTES`]; else what it is.
fn regular(meta: &fs::Metadata) -> Result<(), Refused> {
    let t = meta.file_type();
    if t.is_file() {
        return if meta.len() > MAX_INPUT_BYTES { Err(too_large(meta.len())) } else { Ok(()) };
    }
    let what = if t.is_dir() { "a folder" } else { kind_of_special(&t) };
    Err(Refused::NotAFile(format!("{what}, not a file")))
}

fn too_large(len: u64) -> Refused {
    Refused::NotAFile(format!("{len} bytes, over the {} MiB limit on a file the build reads", MAX_INPUT_BYTES >> 20))
}

/// Why `path` could not be looked at or opened (`e`): a broken link names its target, a link
/// loop says so; nothing at all is [`Refused::Missing`].
fn not_found(path: &Path, e: io::Error) -> Refused {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Refused::NotAFile("a link loop (a symbolic link that leads back to itself)".into());
    }
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ENXIO) {
        // Opening a socket (or a device with nothing behind it).
        if let Ok(meta) = fs::metadata(path) {
            return regular(&meta).err().unwrap_or(Refused::Io(e));
        }
    }
    if e.kind() != io::ErrorKind::NotFound {
        return Refused::Io(e);
    }
    match fs::read_link(path) {
        Ok(target) => Refused::NotAFile(format!("a broken link to `{}`", target.display())),
        Err(_) => Refused::Missing(e),
    }
}

/// What a file type that is neither a regular file, a folder nor a link is.
#[cfg(unix)]
pub fn kind_of_special(t: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "a special file"
    }
}

/// What a file type that is neither a regular file, a folder nor a link is.
#[cfg(not(unix))]
pub fn kind_of_special(_: &fs::FileType) -> &'static str {
    "a special file"
}

#[cfg(test)]
mod tests;

/// How messages, records and the manifest show a file: relative to the crate root `root`,
/// `/`-separated on every host; a file outside the crate as its whole path.
pub fn shown(path: &Path, root: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string().replace('\\', "/")
}

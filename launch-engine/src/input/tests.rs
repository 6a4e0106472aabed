//! Tests of [`super`] (input.rs): every file kind is refused and named, at every place the build
//! reads a file, without blocking.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use super::*;
use crate::config::Config;
use crate::error::ErrorKind;
use crate::plan::Plan;

/// The kinds of thing that are not a file the build reads, and what each is called.
#[cfg(unix)]
const KINDS: [(&str, &str); 8] = [
    ("fifo", "is a FIFO, not a file"),
    ("folder", "is a folder, not a file"),
    ("folder link", "is a folder, not a file"),
    ("dangling link", "is a broken link to `missing-target`"),
    ("link loop", "is a link loop"),
    ("/dev/zero link", "is a device, not a file"),
    ("socket", "is a socket, not a file"),
    ("oversize", "bytes, over the 64 MiB limit on a file the build reads"),
];

/// Makes `kind` at `path`; the socket's listener must live while it is used.
#[cfg(unix)]
fn make(kind: &str, path: &Path) -> Option<std::os::unix::net::UnixListener> {
    use std::os::unix::fs::symlink;
    match kind {
        "fifo" => {
            let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
        "folder" => fs::create_dir(path).unwrap(),
        "folder link" => {
            let target = path.with_extension("d");
            fs::create_dir(&target).unwrap();
            symlink(&target, path).unwrap();
        }
        "dangling link" => symlink("missing-target", path).unwrap(),
        "link loop" => symlink(path.file_name().unwrap(), path).unwrap(),
        "/dev/zero link" => symlink("/dev/zero", path).unwrap(),
        "socket" => return Some(std::os::unix::net::UnixListener::bind(path).unwrap()),
        "oversize" => fs::File::create(path).unwrap().set_len(MAX_INPUT_BYTES + 1).unwrap(),
        _ => unreachable!("{kind}"),
    }
    None
}

/// `f()` on a thread of its own, failing the test after 20 s instead of hanging it.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(f()));
    rx.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("{what}: hangs"))
}

#[cfg(unix)]
#[test]
fn every_kind_is_refused_and_named_without_blocking() {
    // Before: `fs::read` of a FIFO waited for a writer forever, of `/dev/zero` never ended.
    for (kind, said) in KINDS {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.cu");
        let _socket = make(kind, &p);
        let path = p.clone();
        let result = within(kind, move || read(&path).map(drop));
        let text = match result {
            Err(Refused::NotAFile(what)) => format!("is {what}"),
            other => panic!("{kind}: {other:?}"),
        };
        assert!(text.contains(said), "{kind}: {text}");
        assert!(matches!(check(&p), Err(Refused::NotAFile(_))), "{kind}");
    }
    let d = tempfile::tempdir().unwrap();
    let (file, link) = (d.path().join("a.cu"), d.path().join("b.cu"));
    fs::write(&file, "x").unwrap();
    std::os::unix::fs::symlink(&file, &link).unwrap();
    assert_eq!(read(&file).unwrap(), b"x");
    assert_eq!(read(&link).unwrap(), b"x", "a link to a file is read, as a compiler does");
    assert!(matches!(read(&d.path().join("none")), Err(Refused::Missing(_))));
}

/// The places the build reads a file.
#[cfg(unix)]
const PLACES: [&str; 4] = ["kernel file", "host file", "header", "Cargo.toml"];

/// A crate in a temp folder whose file at `place` is `kind`; what the build says of it, through
/// the function that reads it there.
#[cfg(unix)]
fn build_error(place: &'static str, kind: &'static str) -> Option<crate::error::Error> {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().to_path_buf();
    fs::create_dir(root.join("kernels")).unwrap();
    let meta = if place == "host file" { "host = [\"f.cu\"]\ntoolchain = \"13.0\"\n" } else { "" };
    let manifest = root.join("Cargo.toml");
    let text = format!(
        "[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\narch = [\"sm_90\"]\n{meta}"
    );
    let target: PathBuf = match place {
        "kernel file" | "host file" => root.join("kernels/f.cu"),
        "header" => {
            fs::write(root.join("kernels/a.cu"), "// a kernel\n  #include \"h.cuh\"\n").unwrap();
            root.join("kernels/h.cuh")
        }
        _ => manifest.clone(),
    };
    if place != "Cargo.toml" {
        fs::write(&manifest, text).unwrap();
    }
    let socket = make(kind, &target);
    let result = within(&format!("{kind} as the {place}"), move || {
        let _socket = socket;
        let config = Config::load(&manifest)?;
        if place == "header" {
            let kernels = root.join("kernels");
            return crate::source::dependencies(&kernels.join("a.cu"), std::slice::from_ref(&kernels), &root).map(drop);
        }
        let plan = Plan::resolve(config)?;
        crate::prepare::all(&plan).map(drop)
    });
    drop(d);
    result.err()
}

#[cfg(unix)]
#[test]
fn every_kind_at_every_place_is_a_located_config_error() {
    // Before: a FIFO kernel file or header hung the build; the others gave the OS's words
    // ("No such file or directory" for a broken link) as an I/O error, exit 4.
    let mut cases = 0;
    for place in PLACES {
        for (kind, said) in KINDS {
            let error = build_error(place, kind);
            if kind == "folder" && matches!(place, "kernel file" | "host file") {
                // A folder named `f.cu` in the kernel folder is a folder: its files are kernels.
                assert!(error.is_none(), "{place}: {error:?}");
                continue;
            }
            let e = error.unwrap_or_else(|| panic!("{kind} as the {place}: accepted"));
            let text = e.to_string();
            assert_eq!(e.kind(), ErrorKind::Config, "{kind} as the {place}: {text}");
            assert!(text.contains(said), "{kind} as the {place}: {text}");
            let (file, at) = match place {
                "kernel file" | "host file" => ("`kernels/f.cu` ", "`kernels/f.cu` "),
                "header" => ("`kernels/h.cuh` ", "kernels/a.cu:2:3: "),
                _ => ("Cargo.toml` ", "`/"),
            };
            assert!(text.contains(file) && text.starts_with(at), "{kind} as the {place}: {text}");
            let fix = if place == "header" { "change the `#include \"h.cuh\"`" } else { "make it a regular file" };
            assert!(text.contains(fix), "{kind} as the {place}: {text}");
            let diagnostics = e.diagnostics();
            assert_eq!(diagnostics.len(), 1, "{kind} as the {place}: {diagnostics:?}");
            cases += 1;
        }
    }
    assert_eq!(cases, PLACES.len() * KINDS.len() - 2);
}

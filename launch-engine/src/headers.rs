//! The standard headers nvcc users take for granted, for NVRTC.
//!
//! nvcc compiles device code with the host compiler's C and C++ headers on the include path and
//! `cuda_runtime.h` pre-included; NVRTC 12.x has neither (`cannot open source file "stdint.h"`).
//! NVRTC does declare the device functions itself (math, `printf`, `assert`, `malloc`, `memcpy`,
//! `std::move`, `std::forward`, `std::initializer_list`), so what is missing is the headers' names
//! and the types, macros and templates around those functions. This module's headers (in
//! `headers/`, written for cargo-launch) supply them:
//!
//! - `<stdint.h>`/`<cstdint>`, `<stddef.h>`/`<cstddef>`, `<math.h>`/`<cmath>`, `<float.h>`/`<cfloat>`,
//!   `<limits.h>`/`<climits>`, `<assert.h>`/`<cassert>`, `<stdio.h>`/`<cstdio>`,
//!   `<stdlib.h>`/`<cstdlib>`, `<string.h>`/`<cstring>`, `<limits>`, `<type_traits>`, `<utility>`;
//! - `<cuda.h>`, the driver API header, searched before the toolkit's (which declares host
//!   functions NVRTC refuses): `CUDA_VERSION` and the types device code uses;
//! - `launch_prelude.h`, pre-included into every file like nvcc's implicit include: the integer
//!   types, limits and math macros (`INFINITY`, `M_PI`) that nvcc users use without an include.
//!
//! They are written to a folder under `OUT_DIR` whose name carries their digest, and searched
//! last, after the crate's folders and the toolkit's (so a crate's own `limits.h` wins, as with a
//! C compiler); the digest reaches every cache key through the include option. `std-headers =
//! false` turns all of it off.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::Error;

/// The header pre-included into every kernel file.
pub const PRELUDE: &str = "launch_prelude.h";

/// The folder's name starts with this; the rest is the headers' digest (see [`portable`]).
pub const FOLDER_PREFIX: &str = "launch-std-headers-";

/// Every header, by the name it is included as.
pub const FILES: &[(&str, &str)] = &[
    ("launch_prelude.h", include_str!("headers/launch_prelude.h")),
    ("stdint.h", include_str!("headers/stdint.h")),
    ("cstdint", include_str!("headers/cstdint")),
    ("stddef.h", include_str!("headers/stddef.h")),
    ("cstddef", include_str!("headers/cstddef")),
    ("math.h", include_str!("headers/math.h")),
    ("cmath", include_str!("headers/cmath")),
    ("float.h", include_str!("headers/float.h")),
    ("cfloat", include_str!("headers/cfloat")),
    ("limits.h", include_str!("headers/limits.h")),
    ("climits", include_str!("headers/climits")),
    ("assert.h", include_str!("headers/assert.h")),
    ("cassert", include_str!("headers/cassert")),
    ("stdio.h", include_str!("headers/stdio.h")),
    ("cstdio", include_str!("headers/cstdio")),
    ("stdlib.h", include_str!("headers/stdlib.h")),
    ("cstdlib", include_str!("headers/cstdlib")),
    ("string.h", include_str!("headers/string.h")),
    ("cstring", include_str!("headers/cstring")),
    ("limits", include_str!("headers/limits")),
    ("type_traits", include_str!("headers/type_traits")),
    ("utility", include_str!("headers/utility")),
    ("first/cuda.h", include_str!("headers/first/cuda.h")),
];

/// The subfolder searched before the toolkit's headers: what must replace a toolkit header that
/// NVRTC cannot compile (`cuda.h`).
pub const FIRST: &str = "first";

/// C++ standard headers that CCCL provides for device code as `<cuda/std/NAME>`.
const IN_CCCL: &[&str] = &[
    "algorithm",
    "array",
    "atomic",
    "barrier",
    "bit",
    "bitset",
    "chrono",
    "complex",
    "concepts",
    "expected",
    "functional",
    "initializer_list",
    "iterator",
    "latch",
    "mdspan",
    "memory",
    "numeric",
    "optional",
    "ratio",
    "semaphore",
    "span",
    "tuple",
    "variant",
    "version",
];

/// Headers of host-only APIs: nothing in them can run in a kernel.
const HOST_ONLY: &[&str] = &[
    "iostream",
    "istream",
    "ostream",
    "fstream",
    "sstream",
    "iomanip",
    "ios",
    "streambuf",
    "vector",
    "string",
    "string_view",
    "map",
    "unordered_map",
    "set",
    "unordered_set",
    "list",
    "forward_list",
    "deque",
    "queue",
    "stack",
    "thread",
    "mutex",
    "shared_mutex",
    "condition_variable",
    "future",
    "random",
    "regex",
    "filesystem",
    "exception",
    "stdexcept",
    "system_error",
    "locale",
    "typeinfo",
    "any",
    "unistd.h",
    "pthread.h",
    "time.h",
    "ctime",
    "errno.h",
    "cerrno",
    "signal.h",
    "csignal",
    "wchar.h",
    "cwchar",
    "locale.h",
    "clocale",
];

/// Names of `std::` that exist on the host only (streams, containers that allocate, threads): a
/// kernel file using one seems to need a host side.
const HOST_STD_NAMES: &[&str] = &[
    "cout",
    "cerr",
    "cin",
    "clog",
    "endl",
    "ifstream",
    "ofstream",
    "fstream",
    "stringstream",
    "ostringstream",
    "istringstream",
    "vector",
    "string",
    "map",
    "unordered_map",
    "set",
    "unordered_set",
    "list",
    "deque",
    "queue",
    "thread",
    "mutex",
    "runtime_error",
];

/// What a kernel file shows of a host side, for the note on a host-only header NVRTC cannot open
/// (see [`explain`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostSide {
    /// The file as a `host` pattern: its path relative to the kernel folder.
    pub pattern: String,
    /// Its host code, in the file or a crate header it includes, in any branch, in words with
    /// where it is (``kernel launch syntax `<<<...>>>` at kernels/a.cu:9:5``).
    pub code: Option<String>,
    /// Else a host-only `std::` name it uses (`std::vector`) and the line.
    pub uses: Option<(String, u32)>,
}

/// The first host-only `std::` name (see [`HOST_STD_NAMES`]) in `scanned`'s code and its offset.
pub fn host_std_use(scanned: &crate::source::Scanned) -> Option<(String, usize)> {
    let code = scanned.code.as_str();
    let ident = |c: u8| c == b'_' || c.is_ascii_alphanumeric();
    code.match_indices("std::").find_map(|(at, _)| {
        if at > 0 && ident(code.as_bytes()[at - 1]) {
            return None;
        }
        let rest = &code[at + "std::".len()..];
        let name = &rest[..rest.bytes().position(|c| !ident(c)).unwrap_or(rest.len())];
        HOST_STD_NAMES.contains(&name).then(|| (format!("std::{name}"), at))
    })
}

/// The digest of every header's name and text: 16 hex digits.
pub fn digest() -> String {
    let mut h = Sha256::new();
    for (name, text) in FILES {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    h.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes the headers into `parent/launch-std-headers-<digest>/` (a file already there with the
/// same text is left alone) and returns that folder.
pub fn install(parent: &Path) -> Result<PathBuf, Error> {
    let dir = parent.join(format!("{FOLDER_PREFIX}{}", digest()));
    std::fs::create_dir_all(&dir).map_err(Error::io("create folder", &dir))?;
    let first = dir.join(FIRST);
    std::fs::create_dir_all(&first).map_err(Error::io("create folder", &first))?;
    for (name, text) in FILES {
        // Unchanged headers keep their times; a changed one is written aside and renamed, so a
        // compile never reads half a header.
        crate::out::write_if_changed(&dir.join(name), text.as_bytes())?;
    }
    Ok(dir)
}

/// `…/launch-std-headers-<digest>/rest` → `$STD_HEADERS/<digest>/rest`: where the folder lies
/// (which `OUT_DIR`) stays out of cache keys, what it holds stays in.
pub fn portable(path: &Path) -> Option<String> {
    let components: Vec<_> = path.components().collect();
    let at = components.iter().rposition(|c| c.as_os_str().to_string_lossy().starts_with(FOLDER_PREFIX))?;
    let mut s = "$STD_HEADERS".to_string();
    for (i, c) in components[at..].iter().enumerate() {
        let part = c.as_os_str().to_string_lossy();
        s.push('/');
        s.push_str(if i == 0 { &part[FOLDER_PREFIX.len()..] } else { &part });
    }
    Some(s)
}

/// NVRTC's log with the notes a missing header needs: what is host-only, what CCCL has, what
/// `std-headers = false` turned off. `std_headers` says whether our headers were on the path;
/// `host_side` tells what the file shows of a host side, asked at most once and only for a
/// host-only header (`None`: not known).
pub fn explain(log: &str, std_headers: bool, host_side: impl FnOnce() -> Option<HostSide>) -> String {
    let mut notes: Vec<String> = Vec::new();
    let mut host_side = Some(host_side);
    let mut side: Option<HostSide> = None;
    for line in log.lines() {
        let Some(rest) = line.split_once("cannot open source file \"").map(|(_, r)| r) else { continue };
        let Some(name) = rest.split('"').next() else { continue };
        if HOST_ONLY.contains(&name) {
            if let Some(ask) = host_side.take() {
                side = ask();
            }
        }
        let note = note_for(name, std_headers, side.as_ref());
        if let Some(note) = note {
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    if notes.is_empty() {
        return log.to_string();
    }
    let mut out = log.trim_end().to_string();
    for n in notes {
        out.push_str("\nnote: ");
        out.push_str(&n);
    }
    out.push('\n');
    out
}

fn note_for(name: &str, std_headers: bool, side: Option<&HostSide>) -> Option<String> {
    let ours = FILES.iter().any(|(n, _)| *n == name && *n != PRELUDE);
    if ours && !std_headers {
        return Some(format!(
            "<{name}> is one of the standard headers cargo-launch gives NVRTC, and `std-headers = false` \
             in [package.metadata.launch] turns them off: remove that line, or put your own {name} in an \
             `include` folder"
        ));
    }
    if HOST_ONLY.contains(&name) {
        return Some(host_only_note(name, side));
    }
    if IN_CCCL.contains(&name) {
        return Some(format!(
            "NVRTC has no <{name}>; CCCL has a device version: include <cuda/std/{name}> and use `cuda::std::` \
             (the CCCL headers come with the toolchain `cargo launch setup` installs)"
        ));
    }
    if name.starts_with("cuda/") || name.starts_with("cub/") || name.starts_with("thrust/") || name.starts_with("nv/") {
        return Some(format!(
            "<{name}> is a CCCL header, and this toolchain has no CCCL: run `cargo launch setup` to install \
             the pinned toolchain with it, or use a CUDA toolkit (LAUNCH_TOOLCHAIN)"
        ));
    }
    None
}

/// The note for `<name>`, a host-only header: `host` first for a file with host code, else the
/// ways to keep the file on NVRTC, with `host` too when it uses a host-only name.
fn host_only_note(name: &str, side: Option<&HostSide>) -> String {
    let host = |pattern: &str| {
        format!("compile it with nvcc, host code and all, with `host = [\"{pattern}\"]` in [package.metadata.launch] (and `toolchain = \"13.0\"`)")
    };
    if let Some(HostSide { pattern, code: Some(code), .. }) = side {
        return format!(
            "<{name}> is a host-only header, and this file holds host code ({code}): NVRTC compiles device code only; \
             {}. Or keep it on NVRTC: guard the include with `#ifndef __CUDACC_RTC__`, or leave host code out of the \
             kernel folder (`exclude` in [package.metadata.launch])",
            host(pattern)
        );
    }
    let mut note = format!(
        "<{name}> is a host-only header: NVRTC compiles device code only, and nothing in <{name}> runs \
         in a kernel. Remove the include, guard it with `#ifndef __CUDACC_RTC__`, or leave host code \
         out of the kernel folder (`exclude` in [package.metadata.launch])"
    );
    if let Some(HostSide { pattern, uses: Some((used, line)), .. }) = side {
        note.push_str(&format!(
            "; this file uses `{used}` (line {line}), which exists on the host only: if it needs the host side (a launcher), {}",
            host(pattern)
        ));
    }
    note
}

/// NVRTC's log without the warnings that say one of our macros was defined again by CCCL (under
/// NVRTC `<cuda/std/cmath>` defines `INFINITY` and `NAN` unconditionally; ours came first). They
/// are about our headers, not the user's code, and the later definition is equivalent.
pub fn filter_log(log: &str, dir: &Path) -> String {
    let ours = format!("of {}", dir.display());
    let mut out: Vec<&str> = Vec::new();
    let mut skipping = false;
    let mut dropped = false;
    for line in log.lines() {
        if skipping {
            // A diagnostic is its header line, the source line, the caret line and a blank line.
            if line.trim().is_empty() {
                skipping = false;
            }
            continue;
        }
        if line.contains("warning #47-D: incompatible redefinition of macro") && line.contains(&ours) {
            skipping = true;
            dropped = true;
            continue;
        }
        out.push(line);
    }
    if !dropped {
        return log.to_string();
    }
    let any_warning = out.iter().any(|l| l.contains(": warning"));
    let mut text = String::new();
    let mut prev_blank = true;
    for line in out {
        if !any_warning && line.starts_with("Remark: The warnings can be suppressed") {
            continue;
        }
        let blank = line.trim().is_empty();
        if blank && prev_blank {
            continue;
        }
        text.push_str(line);
        text.push('\n');
        prev_blank = blank;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_header_is_listed_once_and_exists_on_disk() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/headers");
        let mut names: Vec<&str> = FILES.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FILES.len(), "a header is listed twice");
        for sub in [dir.clone(), dir.join(FIRST)] {
            for entry in std::fs::read_dir(&sub).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    continue;
                }
                let name = path.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
                assert!(names.contains(&name.as_str()), "{name} is in src/headers but not in FILES");
            }
        }
    }

    #[test]
    fn install_writes_every_header_into_a_folder_named_by_their_digest() {
        let d = tempfile::tempdir().unwrap();
        let dir = install(d.path()).unwrap();
        assert_eq!(dir.file_name().unwrap().to_string_lossy(), format!("{FOLDER_PREFIX}{}", digest()));
        for (name, text) in FILES {
            assert_eq!(std::fs::read_to_string(dir.join(name)).unwrap(), *text);
        }
        // A second install over a damaged file repairs it.
        std::fs::write(dir.join("stdint.h"), "broken").unwrap();
        install(d.path()).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("stdint.h")).unwrap(), FILES[1].1);
    }

    #[test]
    fn the_portable_form_keeps_the_digest_and_drops_the_location() {
        let a = Path::new("/t/debug/build/x-1/out/launch/work/launch-std-headers-0123abcd/stdint.h");
        let b = Path::new("/elsewhere/release/out/launch-std-headers-0123abcd/stdint.h");
        assert_eq!(portable(a).as_deref(), Some("$STD_HEADERS/0123abcd/stdint.h"));
        assert_eq!(portable(a), portable(b));
        assert_eq!(portable(Path::new("/c/kernels/a.cuh")), None);
    }

    /// [`explain`] for a file whose host side is not known.
    fn explain_plain(log: &str, std_headers: bool) -> String {
        explain(log, std_headers, || None)
    }

    #[test]
    fn a_missing_header_gets_the_note_that_fits_it() {
        let log = |name: &str| {
            format!("kernels/a.cu(3): catastrophic error: cannot open source file \"{name}\"\n  #include <{name}>\n")
        };
        let host = explain_plain(&log("iostream"), true);
        assert!(host.contains("note: <iostream> is a host-only header: NVRTC compiles device code only"), "{host}");
        assert!(host.contains("`exclude`"), "{host}");
        let off = explain_plain(&log("stdint.h"), false);
        assert!(off.contains("`std-headers = false`"), "{off}");
        let cccl = explain_plain(&log("tuple"), true);
        assert!(cccl.contains("<cuda/std/tuple>"), "{cccl}");
        let no_cccl = explain_plain(&log("cub/block/block_reduce.cuh"), true);
        assert!(no_cccl.contains("cargo launch setup"), "{no_cccl}");
        let own = log("my_header.cuh");
        assert_eq!(explain_plain(&own, true), own, "a header of the user's gets no note");
    }

    #[test]
    fn a_host_only_header_note_puts_host_first_for_a_file_with_host_code() {
        let log = "kernels/l.cu(1): catastrophic error: cannot open source file \"unordered_map\"\n";
        let code = "kernel launch syntax `<<<...>>>` at kernels/launch.cuh:4:5".to_string();
        let side = HostSide { pattern: "l.cu".into(), code: Some(code), uses: None };
        let note = explain(log, true, || Some(side.clone()));
        let host = note.find("`host = [\"l.cu\"]`").unwrap_or_else(|| panic!("{note}"));
        assert!(
            note.contains("this file holds host code (kernel launch syntax `<<<...>>>` at kernels/launch.cuh:4:5)"),
            "{note}"
        );
        assert!(host < note.find("`exclude`").unwrap(), "host comes first:\n{note}");
        assert!(note.contains("`toolchain = \"13.0\"`"), "{note}");
    }

    #[test]
    fn a_host_only_header_note_names_host_for_a_file_using_host_names_only() {
        let log = "kernels/v.cu(1): catastrophic error: cannot open source file \"vector\"\n";
        let side = |uses: Option<(String, u32)>| HostSide { pattern: "sub/v.cu".into(), code: None, uses };
        let uses = explain(log, true, || Some(side(Some(("std::vector".into(), 7)))));
        // Today's advice first, then `host`.
        let exclude = uses.find("`exclude`").unwrap_or_else(|| panic!("{uses}"));
        let host = uses.find("`host = [\"sub/v.cu\"]`").unwrap_or_else(|| panic!("{uses}"));
        assert!(exclude < host && uses.contains("this file uses `std::vector` (line 7)"), "{uses}");
        let neither = explain(log, true, || Some(side(None)));
        assert!(neither.contains("Remove the include") && !neither.contains("`host"), "{neither}");
        // Asked once for several host-only headers, and not for other notes.
        let asked = std::cell::Cell::new(0);
        let two = format!("{log}{}", log.replace("vector", "iostream"));
        explain(&two, true, || {
            asked.set(asked.get() + 1);
            None
        });
        assert_eq!(asked.get(), 1);
        explain("x.cu(1): catastrophic error: cannot open source file \"tuple\"\n", true, || panic!("asked"));
    }

    #[test]
    fn host_only_std_names_are_found_as_whole_names() {
        let find = |src: &str| host_std_use(&crate::source::scan(src));
        assert_eq!(find("int a;\nstd::vector<int> v;"), Some(("std::vector".into(), 7)));
        assert_eq!(find("// std::cout\nauto s = \"std::string\"; std::vectorish x; mystd::map m;"), None);
        assert_eq!(find("::std::cout << 1;"), Some(("std::cout".into(), 2)));
    }

    #[test]
    fn only_cccl_redefining_our_macros_is_filtered_out() {
        let dir = Path::new("/o/work/launch-std-headers-00");
        let log = format!(
            "/cccl/cuda/std/detail/libcxx/include/cmath(341): warning #47-D: incompatible redefinition of macro \"INFINITY\" (declared at line 8 of {d}/math.h)\n  #  define INFINITY x\n            ^\n\nRemark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n",
            d = dir.display()
        );
        assert_eq!(filter_log(&log, dir), "");
        let user = "kernels/a.cu(2): warning #47-D: incompatible redefinition of macro \"N\" (declared at line 1)\n  #define N 2\n          ^\n\n";
        assert_eq!(filter_log(user, dir), user);
        let both = format!("{log}{user}");
        let kept = filter_log(&both, dir);
        assert!(kept.contains("macro \"N\"") && !kept.contains("INFINITY"), "{kept}");
    }
}

//! Stage `prepare`: each planned kernel file read, decoded, scanned and with its `@launch`
//! contracts checked and applied, before anything is compiled. The build and the line-info
//! recompiler prepare a file through this one function, so both compile the same text.

use crate::config::Config;
use crate::contract;
use crate::error::{Diagnostic, Error};
use crate::plan::{Plan, PlannedFile};
use crate::source;

/// One kernel file, read, checked and with its annotations applied.
#[derive(Debug)]
pub struct Prepared {
    /// The text as the user wrote it.
    pub original: String,
    /// The text as compiled.
    pub applied: contract::Applied,
    /// Its validated `@launch` annotations.
    pub annotations: Vec<contract::Annotation>,
    /// Its `__global__` definitions, as scanned (for `file:line`).
    pub kernels: Vec<source::KernelDef>,
    /// The headers NVRTC takes from memory, see [`nvrtc_headers`] (none for a `host` file).
    pub headers: Vec<(String, String)>,
}

/// Every file of `plan`, in plan order; every error of every file at once.
///
/// # Errors
/// [`Error::Kernels`] with the located problems of all files; an I/O error reading one.
pub fn all(plan: &Plan) -> Result<Vec<Prepared>, Error> {
    let mut prepared = Vec::new();
    let mut errors = Vec::new();
    for f in &plan.files {
        match file(plan, f) {
            Ok(p) => prepared.push(p),
            Err(Error::Kernels(e)) => errors.extend(e),
            Err(e) => return Err(e),
        }
    }
    // Every header is looked at (a FIFO is an error) before the files' own errors are shown.
    let mut headers = Vec::new();
    for f in &plan.files {
        match nvrtc_headers(plan, f) {
            Ok(h) => headers.push(h),
            // A name clash in a header that several files include is said once.
            Err(Error::Kernels(e)) => errors.extend(e.into_iter().filter(|d| !errors.contains(d)).collect::<Vec<_>>()),
            Err(e) => return Err(e),
        }
    }
    if !errors.is_empty() {
        return Err(Error::Kernels(errors));
    }
    for (p, h) in prepared.iter_mut().zip(headers) {
        p.headers = h;
    }
    Ok(prepared)
}

/// One planned file.
///
/// # Errors
/// [`Error::Kernels`] with its located problems (not text, host code outside a `host` file, in
/// the file or in a crate header it includes, a bad `@launch`, `@launch` in a `host` file);
/// [`Error::InputFile`] when it is not a regular file within the size limit; an I/O error
/// reading it.
pub fn file(plan: &Plan, f: &PlannedFile) -> Result<Prepared, Error> {
    let s = &f.source;
    let bytes = crate::input::read_kernel(&s.file, &s.path, &s.kernel_rel)?;
    let text = source::decode(&s.file, bytes).map_err(|d| Error::Kernels(vec![d]))?;
    let scanned = source::scan(&text);
    if !f.host {
        if let Some(d) = host_code(plan, f, &text, &scanned) {
            return Err(Error::Kernels(vec![d]));
        }
    }
    let kernels = source::kernels(&text, &scanned);
    let (annotations, applied) = contract::prepare(&s.file, &text, &scanned, &kernels).map_err(Error::Kernels)?;
    if f.host && !annotations.is_empty() {
        // nvcc compiles a host file as written, for the library and the report alike.
        let refused: Vec<Diagnostic> = annotations
            .iter()
            .map(|a| {
                Diagnostic::error(
                    &s.file,
                    a.line,
                    a.col,
                    "a `host` file is compiled by nvcc as written, so `@launch` cannot change its code; write `__launch_bounds__` on the kernel instead",
                )
            })
            .collect();
        return Err(Error::Kernels(refused));
    }
    Ok(Prepared { original: text, applied, annotations, kernels, headers: Vec::new() })
}

/// The way out for a kernel file that holds host code, for the messages that find some.
fn host_suggestion(kernel_rel: &str) -> String {
    format!(
        "leave this file out with `exclude = [\"{kernel_rel}\"]` in [package.metadata.launch], or compile it with nvcc, host code and all, with `host = [\"{kernel_rel}\"]` (and `toolchain = \"13.0\"`)"
    )
}

/// The error for host code in `f` (not a `host` file), which NVRTC cannot compile: at the host
/// code if it is in the file, else at the `#include` that brings in a crate header holding some.
fn host_code(plan: &Plan, f: &PlannedFile, text: &str, scanned: &source::Scanned) -> Option<Diagnostic> {
    let s = &f.source;
    if let Some(h) = source::host_code(text, scanned) {
        let message =
            format!("{} is host code, and NVRTC compiles device code only; {}", h.what, host_suggestion(&s.kernel_rel));
        return Some(Diagnostic::error(&s.file, h.line, h.col, message));
    }
    let h = source::host_code_in_headers(text, scanned, &s.path, &plan.config.include_path(), true)?;
    let shown = |p: &std::path::Path| crate::input::shown(p, plan.config.root());
    let header = shown(h.chain.last()?);
    let through = match &h.chain[..h.chain.len() - 1] {
        [] => String::new(),
        outer => format!(" (included through {})", outer.iter().map(|p| shown(p)).collect::<Vec<_>>().join(", ")),
    };
    let message = format!(
        "`#include \"{}\"` brings host code into this file: {} at {header}:{}:{}{through} is host code, and NVRTC compiles device code only, headers included; {}",
        h.name,
        h.code.what,
        h.code.line,
        h.code.col,
        host_suggestion(&s.kernel_rel)
    );
    Some(Diagnostic::error(&s.file, h.line, h.col, message))
}

/// What the note on a host-only header NVRTC cannot open needs to know of `f`, whose text as
/// compiled is `text`: its host code (in any branch, its crate headers' included), else its use
/// of a host-only standard name.
pub fn host_side(config: &Config, f: &PlannedFile, text: &str) -> crate::headers::HostSide {
    let s = &f.source;
    let scanned = source::scan(text);
    let code = match source::host_code_in_any_branch(text, &scanned) {
        Some(h) => Some(format!("{} at {}:{}:{}", h.what, s.file, h.line, h.col)),
        None => source::host_code_in_headers(text, &scanned, &s.path, &config.include_path(), false).map(|h| {
            let header = h.chain.last().map(|p| crate::input::shown(p, config.root())).unwrap_or_default();
            format!("{} at {header}:{}:{}", h.code.what, h.code.line, h.code.col)
        }),
    };
    let uses = crate::headers::host_std_use(&scanned).map(|(name, offset)| (name, scanned.lines.line(offset)));
    crate::headers::HostSide { pattern: s.kernel_rel.clone(), code, uses }
}

/// The crate's headers that `f` includes (transitively) and that NVRTC, which reads headers from
/// disk itself, cannot read as nvcc would (a byte-order mark, lone CR line ends: see
/// [`source::header_encoding`]), as `(include name, text)` for NVRTC to take from memory: the
/// text normalised as a kernel file's is ([`source::normalise_header`]), under each name the
/// `#include` directives write for it. A header in memory has no folder, so the headers it
/// includes go with it (its quoted includes name files beside it); the rest are read from disk as
/// written. None for a `host` file: nvcc reads such headers itself.
///
/// The kernel cache key digests every header's bytes on disk, so it needs nothing more: the text
/// here is a function of those bytes.
///
/// # Errors
/// A header that is not a regular file (see [`source::dependencies`]); an `#include` name that
/// would stand for two headers once one is in memory (NVRTC matches names as written), located
/// at the `#include` that means the one on disk.
pub fn nvrtc_headers(plan: &Plan, f: &PlannedFile) -> Result<Vec<(String, String)>, Error> {
    let root = plan.config.root();
    let include_dirs = plan.config.include_path();
    let included = source::included(&f.source.path, &include_dirs, root)?;
    if f.host {
        return Ok(Vec::new());
    }
    let bytes = |p: &std::path::Path| crate::input::read(p).ok();
    let mut in_memory: std::collections::BTreeSet<&std::path::Path> = (included.iter())
        .filter(|i| bytes(&i.path).is_some_and(|b| source::header_encoding(&b).is_some()))
        .map(|i| i.path.as_path())
        .collect();
    // What an in-memory header includes goes with it, to a fixed point.
    while let Some(more) =
        (included.iter()).find(|i| in_memory.contains(i.from.as_path()) && !in_memory.contains(i.path.as_path()))
    {
        in_memory.insert(&more.path);
    }
    let mut headers: Vec<(String, String, &std::path::Path)> = Vec::new();
    for i in included.iter().filter(|i| in_memory.contains(i.path.as_path())) {
        if !headers.iter().any(|(n, _, _)| *n == i.name) {
            let Some(b) = bytes(&i.path) else { continue };
            headers.push((i.name.clone(), source::normalise_header(&b), &i.path));
        }
    }
    // NVRTC takes a header in memory for every `#include` of its name, wherever written.
    let shown = |p: &std::path::Path| crate::input::shown(p, root);
    for i in &included {
        if let Some((_, _, other)) = headers.iter().find(|(n, _, p)| *n == i.name && *p != i.path) {
            return Err(Error::Kernels(vec![Diagnostic::error(
                shown(&i.from),
                i.line,
                i.col,
                format!(
                    "`#include \"{}\"` finds {} here and {} elsewhere, and NVRTC, which takes the second from memory (it or a header that includes it has a byte-order mark or lone CR line ends), finds headers in memory by the name as written: give them different names, or save the headers as UTF-8 without a byte-order mark, with LF or CRLF line ends",
                    i.name,
                    shown(&i.path),
                    shown(other),
                ),
            )]));
        }
    }
    Ok(headers.into_iter().map(|(n, t, _)| (n, t)).collect())
}

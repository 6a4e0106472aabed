//! Stage `prepare`: each planned kernel file read, decoded, scanned and with its `@launch`
//! contracts checked and applied, before anything is compiled. The build and the line-info
//! recompiler prepare a file through this one function, so both compile the same text.

use crate::contract;
use crate::error::{self, Diagnostic, Error};
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
}

/// Every file of `plan`, in plan order; every error of every file at once.
///
/// # Errors
/// [`Error::Kernels`] with the located problems of all files; an I/O error reading one.
pub fn all(plan: &Plan) -> Result<Vec<Prepared>, Error> {
    let mut prepared = Vec::new();
    let mut errors = Vec::new();
    for f in &plan.files {
        match file(f) {
            Ok(p) => prepared.push(p),
            Err(Error::Kernels(e)) => errors.extend(e),
            Err(e) => return Err(e),
        }
    }
    errors.extend(headers_nvrtc_cannot_read(plan)?);
    if !errors.is_empty() {
        return Err(Error::Kernels(errors));
    }
    Ok(prepared)
}

/// One planned file.
///
/// # Errors
/// [`Error::Kernels`] with its located problems (not text, host code outside a `host` file,
/// a bad `@launch`, `@launch` in a `host` file); [`Error::InputFile`] when it is not a regular
/// file within the size limit; an I/O error reading it.
pub fn file(f: &PlannedFile) -> Result<Prepared, Error> {
    let s = &f.source;
    let bytes = crate::input::read_kernel(&s.file, &s.path, &s.kernel_rel)?;
    let text = source::decode(&s.file, bytes).map_err(|d| Error::Kernels(vec![d]))?;
    let scanned = source::scan(&text);
    if let Some(h) = source::host_code(&text, &scanned).filter(|_| !f.host) {
        return Err(Error::Kernels(vec![error::Diagnostic::error(
            &s.file,
            h.line,
            h.col,
            format!(
                "{} is host code, and NVRTC compiles device code only; leave this file out with `exclude = [\"{}\"]` in [package.metadata.launch], or compile it with nvcc, host code and all, with `host = [\"{}\"]` (and `toolchain = \"13.0\"`)",
                h.what, s.kernel_rel, s.kernel_rel
            ),
        )]));
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
    Ok(Prepared { original: text, applied, annotations, kernels })
}

/// The crate's headers that the kernel files include and that NVRTC, which reads them from disk
/// itself, cannot read as nvcc would (a byte-order mark, lone CR line ends), each located once
/// with how to fix it. (Kernel files are decoded here first, so they may have either.)
///
/// # Errors
/// A header that is not a regular file (see `source::dependencies`).
fn headers_nvrtc_cannot_read(plan: &Plan) -> Result<Vec<Diagnostic>, Error> {
    let config = &plan.config;
    let root = config.root();
    let include_dirs: Vec<std::path::PathBuf> =
        std::iter::once(&config.kernel_dir).chain(&config.include_dirs).map(|d| root.join(d)).collect();
    let mut headers = std::collections::BTreeSet::new();
    for f in &plan.files {
        headers.extend(source::dependencies(&f.source.path, &include_dirs, root)?);
    }
    Ok(headers
        .into_iter()
        .filter_map(|h| {
            let bytes = crate::input::read(&h).ok()?;
            let (line, col, what) = source::header_encoding(&bytes)?;
            let rel = h.strip_prefix(root).unwrap_or(&h).display().to_string().replace('\\', "/");
            Some(Diagnostic::error(&rel, line, col, what))
        })
        .collect())
}

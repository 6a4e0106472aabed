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

//! NVRTC, loaded at run time from the toolchain's own library (`libloading`, absolute path), so
//! the build needs no CUDA library on the loader path and never picks up a second NVRTC.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::Path;
use std::ptr;

use crate::error::Error;

type Program = *mut std::ffi::c_void;
type NvrtcResult = c_int;

/// A loaded NVRTC. Distinct programs may be compiled from several threads at once.
pub struct Nvrtc {
    // Keeps the library mapped while the function pointers below are in use.
    _lib: libloading::Library,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult,
    num_supported_archs: unsafe extern "C" fn(*mut c_int) -> NvrtcResult,
    supported_archs: unsafe extern "C" fn(*mut c_int) -> NvrtcResult,
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> NvrtcResult,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvrtcResult,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    log: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    destroy: unsafe extern "C" fn(*mut Program) -> NvrtcResult,
    error_string: unsafe extern "C" fn(NvrtcResult) -> *const c_char,
}

/// A compile that NVRTC rejected; `log` holds its messages (`file(line): error: ...`).
#[derive(Debug)]
pub struct CompileFailure {
    /// NVRTC's program log.
    pub log: String,
}

impl Nvrtc {
    /// Loads NVRTC from `path`.
    pub fn load(path: &Path) -> Result<Nvrtc, Error> {
        let fail = |reason: String| Error::NvrtcLoad { path: path.to_path_buf(), reason };
        // SAFETY: loading NVRTC runs its initialisers, which have no preconditions.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| fail(e.to_string()))?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the declared type matches the prototype in nvrtc.h (CUDA 12.x/13.x).
                *unsafe { lib.get($name) }.map_err(|e| fail(format!("{}: {e}", String::from_utf8_lossy($name))))?
            };
        }
        Ok(Nvrtc {
            version: sym!(b"nvrtcVersion"),
            num_supported_archs: sym!(b"nvrtcGetNumSupportedArchs"),
            supported_archs: sym!(b"nvrtcGetSupportedArchs"),
            create: sym!(b"nvrtcCreateProgram"),
            compile: sym!(b"nvrtcCompileProgram"),
            log_size: sym!(b"nvrtcGetProgramLogSize"),
            log: sym!(b"nvrtcGetProgramLog"),
            ptx_size: sym!(b"nvrtcGetPTXSize"),
            ptx: sym!(b"nvrtcGetPTX"),
            destroy: sym!(b"nvrtcDestroyProgram"),
            error_string: sym!(b"nvrtcGetErrorString"),
            _lib: lib,
        })
    }

    /// `(major, minor)`, e.g. `(12, 9)`.
    pub fn version(&self) -> (i32, i32) {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out-pointers.
        unsafe { (self.version)(&mut major, &mut minor) };
        (major, minor)
    }

    /// Compute capabilities NVRTC lists as supported (`[50, 52, ..., 121]`); `a`/`f` variants are
    /// accepted but not listed.
    pub fn supported_archs(&self) -> Vec<i32> {
        let mut n: c_int = 0;
        // SAFETY: valid out-pointer; the array is sized from the count NVRTC returns.
        unsafe {
            if (self.num_supported_archs)(&mut n) != 0 || n <= 0 {
                return Vec::new();
            }
            let mut v = vec![0; n as usize];
            if (self.supported_archs)(v.as_mut_ptr()) != 0 {
                return Vec::new();
            }
            v
        }
    }

    fn check(&self, rc: NvrtcResult, what: &str) -> Result<(), String> {
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string.
        let msg = unsafe { CStr::from_ptr((self.error_string)(rc)) }.to_string_lossy().into_owned();
        Err(format!("{what}: {msg}"))
    }

    /// Compiles `source` (named `name` in messages) to PTX. On failure the log holds NVRTC's messages.
    pub fn compile_ptx(
        &self,
        source: &str,
        name: &str,
        options: &[String],
    ) -> Result<(String, String), CompileFailure> {
        let fail = |log: String| CompileFailure { log };
        let src = CString::new(source).map_err(|_| fail(format!("{name}: the source contains a NUL byte")))?;
        let cname = CString::new(name).map_err(|_| fail(format!("{name}: the name contains a NUL byte")))?;
        let opts: Vec<CString> = options
            .iter()
            .map(|o| CString::new(o.as_str()))
            .collect::<Result<_, _>>()
            .map_err(|_| fail("an option contains a NUL byte".into()))?;
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();

        let mut prog: Program = ptr::null_mut();
        // SAFETY: all pointers are valid NUL-terminated strings that outlive the calls; the program
        // is destroyed below on every path.
        unsafe {
            self.check(
                (self.create)(&mut prog, src.as_ptr(), cname.as_ptr(), 0, ptr::null(), ptr::null()),
                "nvrtcCreateProgram",
            )
            .map_err(fail)?;
            let rc = (self.compile)(prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr());
            let log = self.read(prog, self.log_size, self.log);
            let result = if rc != 0 {
                let log = log.unwrap_or_default();
                let detail = self.check(rc, "nvrtcCompileProgram").err().unwrap_or_default();
                Err(fail(if log.trim().is_empty() { detail } else { log }))
            } else {
                match self.read(prog, self.ptx_size, self.ptx) {
                    Ok(ptx) => Ok((ptx, log.unwrap_or_default())),
                    Err(e) => Err(fail(e)),
                }
            };
            (self.destroy)(&mut prog);
            result
        }
    }

    /// Reads a size-then-buffer string (log, PTX) of a program.
    ///
    /// # Safety
    /// `prog` must be a live program.
    unsafe fn read(
        &self,
        prog: Program,
        size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
        get: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    ) -> Result<String, String> {
        let mut n = 0usize;
        // SAFETY: live program (caller), valid out-pointer, buffer of the size NVRTC reported.
        unsafe {
            self.check(size(prog, &mut n), "size query")?;
            let mut buf = vec![0u8; n.max(1)];
            self.check(get(prog, buf.as_mut_ptr().cast()), "read")?;
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            buf.truncate(end);
            Ok(String::from_utf8_lossy(&buf).into_owned())
        }
    }
}

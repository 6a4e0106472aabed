//! NVRTC, loaded at run time from the toolchain's own library (`libloading`, absolute path), so
//! the build needs no CUDA library on the loader path and never picks up a second NVRTC.
//!
//! NVRTC opens its builtins library (`libnvrtc-builtins.so.13.0`) by name when it compiles; the
//! CUDA 13 wheel's NVRTC does not find it beside itself ("failed to open
//! libnvrtc-builtins.so.13.0"), so the one beside the NVRTC loaded is loaded first, by path: the
//! loader then answers NVRTC's request with it.
//!
//! NVRTC runs in this process, so it cannot be killed like ptxas: [`Nvrtc::compile_ptx_within`]
//! runs the compile on its own thread and stops waiting at the time limit. The thread is then
//! abandoned (it holds its own reference to the library, which stays loaded); the build script
//! exits with the error soon after, which ends it.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::Path;
use std::ptr;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use crate::error::Error;

type Program = *mut std::ffi::c_void;
type NvrtcResult = c_int;

/// NVRTC's front end recurses deeply on heavy templates: its thread gets more than the default
/// 2 MiB of stack (address space only; pages are used as touched).
const COMPILE_STACK: usize = 64 << 20;

/// A loaded NVRTC. Distinct programs may be compiled from several threads at once.
pub struct Nvrtc {
    api: Arc<Api>,
}

/// The library and its entry points, shared with compile threads that may outlive a wait.
struct Api {
    // Keeps the library mapped while the function pointers below are in use.
    _lib: libloading::Library,
    // The builtins NVRTC opens by name, loaded first from NVRTC's folder; kept loaded with it.
    _builtins: Option<libloading::Library>,
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
    add_name_expression: unsafe extern "C" fn(Program, *const c_char) -> NvrtcResult,
    lowered_name: unsafe extern "C" fn(Program, *const c_char, *mut *const c_char) -> NvrtcResult,
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
        let builtins = match builtins_beside(path) {
            // SAFETY: as for NVRTC below; the builtins library has no initialiser preconditions.
            Some(b) => {
                Some(unsafe { libloading::Library::new(&b) }.map_err(|e| fail(format!("{}: {e}", b.display())))?)
            }
            None => None,
        };
        // SAFETY: loading NVRTC runs its initialisers, which have no preconditions.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| fail(e.to_string()))?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the declared type matches the prototype in nvrtc.h (CUDA 12.x/13.x).
                *unsafe { lib.get($name) }.map_err(|e| fail(format!("{}: {e}", String::from_utf8_lossy($name))))?
            };
        }
        Ok(Nvrtc {
            api: Arc::new(Api {
                version: sym!(b"nvrtcVersion"),
                num_supported_archs: sym!(b"nvrtcGetNumSupportedArchs"),
                supported_archs: sym!(b"nvrtcGetSupportedArchs"),
                create: sym!(b"nvrtcCreateProgram"),
                compile: sym!(b"nvrtcCompileProgram"),
                add_name_expression: sym!(b"nvrtcAddNameExpression"),
                lowered_name: sym!(b"nvrtcGetLoweredName"),
                log_size: sym!(b"nvrtcGetProgramLogSize"),
                log: sym!(b"nvrtcGetProgramLog"),
                ptx_size: sym!(b"nvrtcGetPTXSize"),
                ptx: sym!(b"nvrtcGetPTX"),
                destroy: sym!(b"nvrtcDestroyProgram"),
                error_string: sym!(b"nvrtcGetErrorString"),
                _lib: lib,
                _builtins: builtins,
            }),
        })
    }

    /// `(major, minor)`, e.g. `(12, 9)`.
    pub fn version(&self) -> (i32, i32) {
        self.api.version()
    }

    /// Compute capabilities NVRTC lists as supported (`[50, 52, ..., 121]`); `a`/`f` variants are
    /// accepted but not listed.
    pub fn supported_archs(&self) -> Vec<i32> {
        self.api.supported_archs()
    }

    /// Compiles `source` (named `name` in messages) to PTX. `headers` are `(include name, text)`:
    /// an `#include` of that name takes the text instead of reading a file. On failure the log
    /// holds NVRTC's messages.
    pub fn compile_ptx(
        &self,
        source: &str,
        name: &str,
        headers: &[(String, String)],
        options: &[String],
    ) -> Result<(String, String), CompileFailure> {
        self.api.compile(source, name, headers, options, &[]).map(|c| (c.ptx, c.log))
    }

    /// [`Nvrtc::compile_ptx`] bounded by `timeout`: `None` when NVRTC had not finished by then
    /// (the compile is left running on its thread; see the module documentation).
    pub fn compile_ptx_within(
        &self,
        source: &str,
        name: &str,
        headers: &[(String, String)],
        options: &[String],
        timeout: Duration,
    ) -> Option<Result<(String, String), CompileFailure>> {
        let api = Arc::clone(&self.api);
        let (source, name, headers, options) =
            (source.to_string(), name.to_string(), headers.to_vec(), options.to_vec());
        within(timeout, move || api.compile(&source, &name, &headers, &options, &[]).map(|c| (c.ptx, c.log)))
    }

    /// The lowered (mangled) name of each of `expressions` (`&probe<decltype(k)>`) in `source`,
    /// compiled with `options` (pass `-fdevice-syntax-only`: the front end alone answers), bounded
    /// by `timeout` like [`Nvrtc::compile_ptx_within`]. `None` in the list for an expression NVRTC
    /// gave no name.
    pub fn lowered_names_within(
        &self,
        source: &str,
        name: &str,
        headers: &[(String, String)],
        options: &[String],
        expressions: &[String],
        timeout: Duration,
    ) -> Option<Result<Vec<Option<String>>, CompileFailure>> {
        let api = Arc::clone(&self.api);
        let (source, name, headers, options, expressions) =
            (source.to_string(), name.to_string(), headers.to_vec(), options.to_vec(), expressions.to_vec());
        within(timeout, move || api.compile(&source, &name, &headers, &options, &expressions).map(|c| c.lowered))
    }
}

/// What one program's compile gave.
struct Compiled {
    ptx: String,
    log: String,
    /// The lowered name of each name expression, in order.
    lowered: Vec<Option<String>>,
}

/// `libnvrtc-builtins.so.<major>.<minor>` in `nvrtc`'s folder (the newest, when several), not the
/// `.alt.` variant NVRTC uses for other purposes.
fn builtins_beside(nvrtc: &Path) -> Option<std::path::PathBuf> {
    let dir = std::fs::canonicalize(nvrtc).ok()?.parent()?.to_path_buf();
    let mut found: Vec<(Vec<u32>, std::path::PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.strip_prefix("libnvrtc-builtins.so.")?;
            let parts: Vec<u32> = version.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
            Some((parts, e.path()))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}

/// Runs `f` on a new thread and waits at most `timeout` for its result; `None` when it is not
/// done by then (the thread is left to finish on its own). If no thread can be started, `f`
/// runs here, unbounded.
pub fn within<T: Send + 'static, F: FnOnce() -> T + Send + 'static>(timeout: Duration, f: F) -> Option<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    // Shared so that `f` is still here to run if the thread cannot be started.
    let slot = Arc::new(Mutex::new(Some(f)));
    let theirs = Arc::clone(&slot);
    let spawned = std::thread::Builder::new().name("nvrtc".into()).stack_size(COMPILE_STACK).spawn(move || {
        let f = theirs.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(f) = f {
            let _ = tx.send(f());
        }
    });
    match spawned {
        Ok(handle) => match rx.recv_timeout(timeout) {
            Ok(v) => Some(v),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            // `f` panicked: carry its panic over to this thread.
            Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
                Err(payload) => std::panic::resume_unwind(payload),
                Ok(()) => unreachable!("the thread sends before it ends"),
            },
        },
        Err(_) => {
            let f = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            f.map(|f| f())
        }
    }
}

impl Api {
    /// `(major, minor)`, e.g. `(12, 9)`.
    fn version(&self) -> (i32, i32) {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out-pointers.
        unsafe { (self.version)(&mut major, &mut minor) };
        (major, minor)
    }

    /// Compute capabilities NVRTC lists as supported (`[50, 52, ..., 121]`); `a`/`f` variants are
    /// accepted but not listed.
    fn supported_archs(&self) -> Vec<i32> {
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

    /// Compiles `source` (named `name` in messages) to PTX, with `headers` in memory, and lowers
    /// `expressions`. On failure the log holds NVRTC's messages.
    fn compile(
        &self,
        source: &str,
        name: &str,
        headers: &[(String, String)],
        options: &[String],
        expressions: &[String],
    ) -> Result<Compiled, CompileFailure> {
        let fail = |log: String| CompileFailure { log };
        let src = CString::new(source).map_err(|_| fail(format!("{name}: the source contains a NUL byte")))?;
        let cname = CString::new(name).map_err(|_| fail(format!("{name}: the name contains a NUL byte")))?;
        let (include_names, texts): (Vec<CString>, Vec<CString>) = headers
            .iter()
            .map(|(n, t)| Ok((CString::new(n.as_str())?, CString::new(t.as_str())?)))
            .collect::<Result<Vec<_>, std::ffi::NulError>>()
            .map_err(|_| fail(format!("{name}: an included header contains a NUL byte")))?
            .into_iter()
            .unzip();
        let name_ptrs: Vec<*const c_char> = include_names.iter().map(|n| n.as_ptr()).collect();
        let text_ptrs: Vec<*const c_char> = texts.iter().map(|t| t.as_ptr()).collect();
        let (names_at, texts_at, count) = if headers.is_empty() {
            (ptr::null(), ptr::null(), 0)
        } else {
            (name_ptrs.as_ptr(), text_ptrs.as_ptr(), name_ptrs.len() as c_int)
        };
        let opts: Vec<CString> = options
            .iter()
            .map(|o| CString::new(o.as_str()))
            .collect::<Result<_, _>>()
            .map_err(|_| fail("an option contains a NUL byte".into()))?;
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let exprs: Vec<CString> = expressions
            .iter()
            .map(|e| CString::new(e.as_str()))
            .collect::<Result<_, _>>()
            .map_err(|_| fail("a name expression contains a NUL byte".into()))?;

        let mut prog: Program = ptr::null_mut();
        // SAFETY: all pointers are valid NUL-terminated strings that outlive the calls; the program
        // is destroyed below on every path.
        unsafe {
            self.check(
                (self.create)(&mut prog, src.as_ptr(), cname.as_ptr(), count, texts_at, names_at),
                "nvrtcCreateProgram",
            )
            .map_err(fail)?;
            for e in &exprs {
                if let Err(m) = self.check((self.add_name_expression)(prog, e.as_ptr()), "nvrtcAddNameExpression") {
                    (self.destroy)(&mut prog);
                    return Err(fail(m));
                }
            }
            let rc = (self.compile)(prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr());
            let log = self.read(prog, self.log_size, self.log);
            let result = if rc != 0 {
                let log = log.unwrap_or_default();
                let detail = self.check(rc, "nvrtcCompileProgram").err().unwrap_or_default();
                Err(fail(if log.trim().is_empty() { detail } else { log }))
            } else {
                // The lowered names point into the program: copied before it is destroyed.
                let lowered = exprs
                    .iter()
                    .map(|e| {
                        let mut out: *const c_char = ptr::null();
                        let rc = (self.lowered_name)(prog, e.as_ptr(), &mut out);
                        (rc == 0 && !out.is_null()).then(|| CStr::from_ptr(out).to_string_lossy().into_owned())
                    })
                    .collect();
                match self.read(prog, self.ptx_size, self.ptx) {
                    Ok(ptx) => Ok(Compiled { ptx, log: log.unwrap_or_default(), lowered }),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_builtins_beside_nvrtc_are_found_and_the_alt_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "libnvrtc.so.13",
            "libnvrtc-builtins.alt.so.13.0",
            "libnvrtc-builtins.so.12.9",
            "libnvrtc-builtins.so.13.0",
        ] {
            std::fs::write(dir.path().join(f), b"").unwrap();
        }
        let nvrtc = dir.path().join("libnvrtc.so.13");
        let want = std::fs::canonicalize(dir.path()).unwrap().join("libnvrtc-builtins.so.13.0");
        assert_eq!(builtins_beside(&nvrtc), Some(want));
        std::fs::remove_file(dir.path().join("libnvrtc-builtins.so.13.0")).unwrap();
        std::fs::remove_file(dir.path().join("libnvrtc-builtins.so.12.9")).unwrap();
        assert_eq!(builtins_beside(&nvrtc), None);
    }

    #[test]
    fn within_returns_what_finishes_in_time() {
        assert_eq!(within(Duration::from_secs(10), || 6 * 7), Some(42));
    }

    #[test]
    fn within_stops_waiting_at_the_limit() {
        let started = Instant::now();
        let r = within(Duration::from_millis(300), || std::thread::sleep(Duration::from_secs(30)));
        assert_eq!(r, None);
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn within_gives_a_deep_compile_a_large_stack() {
        fn depth(n: u32) -> u32 {
            let pad = std::hint::black_box([0u8; 1024]);
            if n == 0 {
                u32::from(pad[0])
            } else {
                depth(n - 1) + u32::from(pad[1])
            }
        }
        // 16 MiB of frames: more than a default 2 MiB thread stack holds.
        assert_eq!(within(Duration::from_secs(30), || depth(16 * 1024)), Some(0));
    }
}

//! NVIDIA's disassembler: where it is and what it prints for a cubin.
//!
//! Looked for, the first that marks spill code wins (see [`MARKS_SPILLS_FROM`]):
//! `LAUNCH_NVDISASM` (an explicit file, never passed over for another); beside the toolchain's
//! ptxas and in its root's `nvidia/cu13/bin` (where the `nvidia-cuda-nvdisasm` wheel installs) and
//! `bin` (a toolkit); in the cache's other toolchain folders, newest first; then `PATH` (through
//! `which`). A CUDA 13 nvdisasm reads 12.9's cubins too; NVIDIA's nvdisasm wheels start at 13.2.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::env::{var, Env};
use crate::error::Error;
use crate::process::Tool;
use crate::toolchain::{self, Toolchain};

/// The variable that names nvdisasm explicitly.
pub const VARIABLE: &str = var::LAUNCH_NVDISASM.name;

/// No nvdisasm anywhere: every place looked at, with what was found there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotFound {
    /// `(place, outcome)`, in search order.
    pub searched: Vec<(String, String)>,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no nvdisasm that marks spill code found (NVIDIA's nvidia-cuda-nvdisasm wheel, {}.{}.{} or newer; set {VARIABLE} to its file); looked at:",
            MARKS_SPILLS_FROM.0,
            MARKS_SPILLS_FROM.1,
            MARKS_SPILLS_FROM.2
        )?;
        for (place, outcome) in &self.searched {
            write!(f, "\n  {place}: {outcome}")?;
        }
        Ok(())
    }
}

impl std::error::Error for NotFound {}

/// The oldest nvdisasm measured to mark spill code (`(*"SpillRefill"*)`); 13.4.49 and older
/// (13.2.51, the 13.0 pin's, included) print the same `STL`/`LDL` unmarked, which cannot be told
/// from a kernel's own local arrays.
pub const MARKS_SPILLS_FROM: (u32, u32, u32) = (13, 4, 92);

/// A usable nvdisasm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The executable.
    pub path: PathBuf,
    /// Its version (`13.5.37`).
    pub version: String,
}

/// Finds an nvdisasm that marks spill code, for `toolchain` (see the module documentation for
/// the order); older ones found on the way are passed over and listed in the error.
pub fn locate(env: &Env, toolchain: &Toolchain, timeout: Duration) -> Result<Located, NotFound> {
    let mut searched = Vec::new();
    let memo = toolchain::cache_dir(env);
    let check = |path: PathBuf, searched: &mut Vec<(String, String)>, place: String| -> Option<Located> {
        // Never run a damaged file (a truncated one can die of a signal, saying nothing).
        if let Some(why) = toolchain::damage(&path, toolchain::Role::Program, memo.as_deref()) {
            let fix = "run `cargo launch setup`, which installs it again";
            searched.push((place, format!("{} is damaged ({why}); {fix}", path.display())));
            return None;
        }
        match version(&path, timeout) {
            Ok(v) if marks_spills(&v) => Some(Located { path, version: v }),
            Ok(v) => {
                let (a, b, c) = MARKS_SPILLS_FROM;
                searched.push((
                    place,
                    format!(
                        "{} is nvdisasm {v}, which does not mark spill code ({a}.{b}.{c} and newer do)",
                        path.display()
                    ),
                ));
                None
            }
            Err(e) => {
                searched.push((place, format!("{} does not run: {e}", path.display())));
                None
            }
        }
    };
    if let Some(p) = env.get(var::LAUNCH_NVDISASM) {
        // An explicit choice is never passed over for another.
        let p = PathBuf::from(p);
        if !p.is_file() {
            searched.push((VARIABLE.to_string(), format!("{} is not a file", p.display())));
            return Err(NotFound { searched });
        }
        return check(p, &mut searched, VARIABLE.into()).ok_or(NotFound { searched });
    }
    let mut candidates: Vec<(String, PathBuf)> = Vec::new();
    candidates.push(("beside ptxas".into(), toolchain.ptxas.with_file_name(exe("nvdisasm"))));
    for sub in ["nvidia/cu13/bin", "bin"] {
        candidates.push(("the toolchain".into(), toolchain.root.join(sub).join(exe("nvdisasm"))));
    }
    if let Some(cache) = toolchain::cache_dir(env) {
        for dir in installed_toolchains(&cache.join("toolchain")) {
            candidates.push(("a toolchain in the cache".into(), dir.join("nvidia/cu13/bin").join(exe("nvdisasm"))));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (place, path) in candidates {
        if !seen.insert(path.clone()) {
            continue;
        }
        if !path.is_file() {
            searched.push((place, format!("no {}", path.display())));
            continue;
        }
        if let Some(found) = check(path, &mut searched, place) {
            return Ok(found);
        }
    }
    match toolchain::on_path("nvdisasm", env) {
        Some(p) if seen.insert(p.clone()) => check(p, &mut searched, "PATH".into()).ok_or(NotFound { searched }),
        Some(_) => Err(NotFound { searched }),
        None => {
            searched.push(("PATH".into(), "no `nvdisasm` on PATH".into()));
            Err(NotFound { searched })
        }
    }
}

/// Whether nvdisasm `version` (`13.5.37`) is at least [`MARKS_SPILLS_FROM`].
pub fn marks_spills(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    let mut next = || parts.next().flatten().unwrap_or(0);
    (next(), next(), next()) >= MARKS_SPILLS_FROM
}

/// `cuda-<version>` folders under `dir`, newest version first.
fn installed_toolchains(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.strip_prefix("cuda-")?;
            let parts: Option<Vec<u32>> = version.split('.').map(|p| p.parse().ok()).collect();
            Some((parts?, e.path()))
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0));
    found.into_iter().map(|(_, p)| p).collect()
}

fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

/// nvdisasm's version line (`13.2.51`, from `V13.2.51`), or its first line when it has none.
pub fn version(nvdisasm: &Path, timeout: Duration) -> Result<String, Error> {
    let out = Tool::new(nvdisasm).arg("--version").timeout(timeout).run()?;
    let text = out.stdout;
    Ok(text
        .split_whitespace()
        .find_map(|w| w.strip_prefix('V').filter(|v| v.starts_with(|c: char| c.is_ascii_digit())))
        .map(str::to_string)
        .unwrap_or_else(|| text.lines().next().unwrap_or_default().to_string()))
}

/// `nvdisasm -gi -c` of `cubin` (written to `work_dir` for the run): the code sections, each
/// instruction after the `//## File "...", line N` comment of the source line it comes from
/// (with one more per frame, `inlined at …`, for code inlined from a function).
/// Spill stores and loads carry nvdisasm's `(*"SpillRefill"*)` mark. Its warnings (it disassembles
/// older cubins in its "old format") are not errors.
pub fn disassemble(nvdisasm: &Path, cubin: &[u8], work_dir: &Path, timeout: Duration) -> Result<String, Error> {
    with_cubin(cubin, work_dir, |path| {
        Ok(Tool::new(nvdisasm).args(["-gi", "-c"]).arg(path).timeout(timeout).run()?.stdout)
    })
}

/// `nvdisasm -lrm count -c` of `cubin`: after every instruction, the live general, predicate and
/// uniform registers (`// |   3   |   1    |        |`). `Ok(Err(why))` where nvdisasm cannot:
/// it follows no data flow through a cubin of another format generation (a CUDA 13 nvdisasm and
/// a CUDA 12 cubin), and says so (its last error line).
pub fn life_ranges(
    nvdisasm: &Path,
    cubin: &[u8],
    work_dir: &Path,
    timeout: Duration,
) -> Result<Result<String, String>, Error> {
    with_cubin(cubin, work_dir, |path| {
        let (status, out) =
            Tool::new(nvdisasm).args(["-lrm", "count", "-c"]).arg(path).timeout(timeout).run_unchecked()?;
        // In its old format nvdisasm may also succeed and print no counts (an sm_80 cubin of
        // CUDA 12.9): the warning says so.
        if status.success() && !out.stderr.contains("Old format") {
            return Ok(Ok(out.stdout));
        }
        // `nvdisasm error   : Cannot print life ranges as flow analysis is disabled`, after the
        // warning that it reads the cubin in its "Old format".
        let said = |word: &str| {
            out.stderr.lines().rev().find(|l| l.contains(word)).map(|l| {
                let text = l.split_once(':').map_or(l, |(_, t)| t);
                text.split_whitespace().collect::<Vec<_>>().join(" ")
            })
        };
        let why = said("error").or_else(|| said("Old format")).unwrap_or_else(|| format!("it failed ({status})"));
        let old = if out.stderr.contains("Old format") { ", as it reads this cubin in its old format" } else { "" };
        Ok(Err(format!("nvdisasm follows no data flow through this cubin{old}: \"{why}\"")))
    })
}

/// Runs `f` on `cubin` written into `work_dir` (removed afterwards).
fn with_cubin<T>(cubin: &[u8], work_dir: &Path, f: impl FnOnce(&Path) -> Result<T, Error>) -> Result<T, Error> {
    std::fs::create_dir_all(work_dir).map_err(Error::io("create folder", work_dir))?;
    let path = work_dir.join(format!("nvdisasm-{}.cubin", std::process::id()));
    std::fs::write(&path, cubin).map_err(Error::io("write", &path))?;
    let out = f(&path);
    let _ = std::fs::remove_file(&path);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_versions_that_mark_spill_code_qualify() {
        assert!(marks_spills("13.5.37"));
        assert!(marks_spills("13.4.92"));
        assert!(marks_spills("14.0"));
        assert!(!marks_spills("13.4.49"));
        assert!(!marks_spills("13.2.51"));
        assert!(!marks_spills("12.9.86"));
        assert!(!marks_spills("nvdisasm: NVIDIA (R) CUDA disassembler"));
    }

    #[test]
    fn cache_toolchains_are_newest_first_and_other_folders_ignored() {
        let d = tempfile::tempdir().unwrap();
        for name in ["cuda-12.9.86", "cuda-13.0.88", "cuda-13.10.1", "requirements-12.9.86.txt", "cuda-x"] {
            std::fs::create_dir_all(d.path().join(name)).unwrap();
        }
        let names: Vec<String> = installed_toolchains(d.path())
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["cuda-13.10.1", "cuda-13.0.88", "cuda-12.9.86"]);
    }
}

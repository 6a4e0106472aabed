//! What `--spills` and `--pressure` share: each kernel file × arch compiled again with line info
//! (`launch_engine::tooling::lineinfo`, the build's options plus `-lineinfo`; the build itself
//! never pays for it), read by nvdisasm ([`disassembly`]), and the result cached per pass in the
//! package's `OUT_DIR/launch/<pass>/`, keyed by a hash of everything the compile reads (source,
//! headers' contents, options, contracts, toolchain) and the nvdisasm file, so a second run
//! compiles nothing. Files are done one at a time: the passes are on request, and light on CPU.

pub(crate) mod disassembly;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::anyhow;
use launch::Arch;
use launch_engine::tooling::lineinfo::{nvdisasm, Compiled, Recompiler};
use launch_engine::tooling::Env;
use serde::de::DeserializeOwned;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::records::{PackageKernels, Row};

/// One file × arch of a line-info pass: what compiles and disassembles it, and where its
/// results are cached.
pub(crate) struct Job<'a> {
    /// The package whose file it is.
    pub package: &'a str,
    pub recompiler: &'a Recompiler,
    pub tool: &'a nvdisasm::Located,
    /// `OUT_DIR/launch/<pass>`.
    pub dir: &'a Path,
    /// The package root.
    pub root: &'a Path,
    pub file: &'a str,
    pub arch: Arch,
    /// The symbols of the rows of this file × arch.
    pub kernels: &'a [String],
}

impl Job<'_> {
    /// What `compute` gives for this job, from the pass's cache entry of kind `format` (a name
    /// bumped when what is cached changes shape or meaning) or computed now and cached. `pass`
    /// names the work on stderr (`pressure: compiling kernels/a.cu for sm_90 …`).
    ///
    /// # Errors
    /// `compute`'s, or a cache entry that cannot be written (see [`cached_in`]).
    pub fn cached<T: Serialize + DeserializeOwned>(
        &self,
        format: &str,
        pass: &str,
        compute: impl FnOnce() -> Result<T, Error>,
    ) -> Result<T, Error> {
        let compile_key =
            self.recompiler.key(self.file, self.arch).map_err(|e| Error::Failure(anyhow::Error::new(e)))?;
        cached_in(self.dir, &cache_key(format, &compile_key, self.tool), pass, || {
            eprintln!(
                "{pass}: compiling {} for {} with line info and disassembling it (cached afterwards)",
                self.file, self.arch
            );
            compute()
        })
    }

    /// The file compiled for the arch with line info, as the build compiles it.
    pub fn compile(&self) -> Result<Compiled, Error> {
        (self.recompiler.compile(self.file, self.arch, true)).map_err(|e| self.failed(e, "compiling"))
    }

    /// As [`Job::compile`], with every entry's contract directives removed.
    pub fn compile_unbounded(&self) -> Result<Compiled, Error> {
        (self.recompiler.compile_unbounded(self.file, self.arch))
            .map_err(|e| self.failed(e, "compiling without its contracts"))
    }

    /// `nvdisasm -gi -c` of `cubin`.
    pub fn disassemble(&self, cubin: &[u8]) -> Result<String, Error> {
        let (work, timeout) = (self.recompiler.work_dir(), self.recompiler.timeout());
        nvdisasm::disassemble(&self.tool.path, cubin, &work, timeout).map_err(|e| self.failed(e, "disassembling"))
    }

    /// `nvdisasm -lrm count -c` of `cubin`; `Ok(Err(why))` where nvdisasm follows no data flow.
    pub fn life_ranges(&self, cubin: &[u8]) -> Result<Result<String, String>, Error> {
        let (work, timeout) = (self.recompiler.work_dir(), self.recompiler.timeout());
        nvdisasm::life_ranges(&self.tool.path, cubin, &work, timeout).map_err(|e| self.failed(e, "disassembling"))
    }

    fn failed(&self, e: launch_engine::error::Error, what: &str) -> Error {
        Error::Failure(anyhow::Error::new(e).context(format!("{what} {} for {} with line info", self.file, self.arch)))
    }
}

/// Runs `each` on every file × arch of `rows` (per package, in a stable order; one recompiler
/// and nvdisasm per package, results under `OUT_DIR/launch/<pass>`), and keys what it finds per
/// function by package, symbol and arch.
///
/// # Errors
/// No nvdisasm (exit 3, with every place looked at), or `each`'s.
pub(crate) fn per_file<'a, T>(
    packages: &[PackageKernels],
    rows: impl IntoIterator<Item = &'a Row>,
    pass: &str,
    mut each: impl FnMut(Job<'_>) -> Result<BTreeMap<String, T>, Error>,
) -> Result<HashMap<(String, String, Arch), T>, Error> {
    let env = Env::cli();
    let mut wanted: BTreeMap<&str, BTreeMap<(String, Arch), Vec<String>>> = BTreeMap::new();
    for r in rows {
        let kernels = wanted.entry(r.id.package.as_str()).or_default().entry((r.id.file.clone(), r.arch()));
        kernels.or_default().push(r.id.name.clone());
    }
    let mut found = HashMap::new();
    for p in packages {
        let Some(jobs) = wanted.get(p.package.as_str()) else { continue };
        let dir = p.launch_dir.join(pass);
        let recompiler = Recompiler::new(&env, &p.config, &dir.join("work"))
            .map_err(|e| Error::Failure(anyhow::Error::new(e).context("preparing the line-info compile")))?;
        let tool = nvdisasm::locate(&env, recompiler.toolchain(), recompiler.timeout())
            .map_err(|e| Error::NoToolchain(e.into()))?;
        for ((file, arch), kernels) in jobs {
            let root = p.config.root();
            let job = Job {
                package: &p.package,
                recompiler: &recompiler,
                tool: &tool,
                dir: &dir,
                root,
                file,
                arch: *arch,
                kernels,
            };
            for (symbol, value) in each(job)? {
                found.insert((p.package.clone(), symbol, *arch), value);
            }
        }
    }
    Ok(found)
}

/// What `compute` gives, from the cache entry `dir/<key>.json` or computed now and stored there;
/// `pass` names the entry in an error. A damaged or unreadable entry is a miss: it is computed
/// again and replaced.
///
/// # Errors
/// `compute`'s, or an entry that cannot be written.
pub(crate) fn cached_in<T: Serialize + DeserializeOwned>(
    dir: &Path,
    key: &str,
    pass: &str,
    compute: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    let entry = dir.join(format!("{key}.json"));
    if let Some(hit) = std::fs::read(&entry).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
        return Ok(hit);
    }
    let value = compute()?;
    let bytes = serde_json::to_vec(&value).map_err(|e| Error::Failure(anyhow!(e)))?;
    launch_engine::tooling::write_if_changed(&entry, &bytes).map_err(|e| {
        Error::Failure(anyhow::Error::new(e).context(format!("writing the {pass} cache entry {}", entry.display())))
    })?;
    Ok(value)
}

/// A cache entry's name: the line-info compile's key (or another key of what was disassembled), the nvdisasm (path, version, size,
/// modified time: another or a reinstalled nvdisasm misses) and the entry's `format`.
pub(crate) fn cache_key(format: &str, compile_key: &str, tool: &nvdisasm::Located) -> String {
    let mut h = Sha256::new();
    for part in [format, compile_key, &tool.path.display().to_string(), &tool.version] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    if let Ok(m) = std::fs::metadata(&tool.path) {
        h.update(m.len().to_le_bytes());
        let mtime = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        h.update(mtime.map_or(0, |d| d.as_nanos()).to_le_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

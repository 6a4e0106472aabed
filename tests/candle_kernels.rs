//! The real-world test of issue 10: the CUDA sources of the published `candle-kernels` 0.11.1,
//! fetched through cargo and copied unmodified into a crate of ours with only
//!
//! ```toml
//! arch = ["sm_80", "sm_90"]
//! kernels = "src"
//! exclude = ["moe", "mmq_gguf", "mmvq_gguf.cu"]
//! flags = ["--expt-relaxed-constexpr", "-std=c++17"]
//! ```
//!
//! build through the real binary (`cargo launch report --format json`), and every record agrees
//! with NVIDIA's `cuobjdump --dump-resource-usage` of the cubins embedded in the crate (registers,
//! stack frame, static shared memory), in both directions (no kernel missing from the report),
//! and no kernel is at line 0.
//!
//! Cost: the package and cuobjdump (a 0.3 MB wheel, hash-pinned, installed with pip into the
//! cargo-launch cache folder, like `cargo launch setup`) are downloaded once per machine. The
//! kernels compile through the ordinary kernel cache (the per-user one), so only the first run on
//! a machine compiles them: about 2 × 40 s of NVRTC for `quantized.cu` plus a few seconds per other
//! file and arch; a later run reuses every entry (the crate's package name is fixed, so its
//! `OUT_DIR` is reused too) and takes seconds. Both arches are built, as configured.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use launch_engine::tooling::Env;
use launch_engine::tooling::Tool;
use launch_schema::manifest::Manifest;
use launch_schema::report::Document;
use serde_json::Value;

use crate::support::{cargo_launch, root, run, toolchain_root, SCRUBBED};

/// The package and version under test.
const CANDLE: &str = "candle-kernels";
const CANDLE_VERSION: &str = "0.11.1";

/// NVIDIA's cuobjdump wheel, sha256 of the x86_64 and aarch64 Linux files. PyPI has no
/// `-cu12` cuobjdump wheel; this release of the CUDA 13 one reads cubins of every arch that ptxas
/// 12.9 writes for (sm_75 and up).
const CUOBJDUMP_VERSION: &str = "13.5.37";
const CUOBJDUMP_REQUIREMENTS: &str = "\
nvidia-cuda-cuobjdump==13.5.37 \\
    --hash=sha256:38780fee50863252a0b8926357faa91615ca1c8346490563f33a06100cd73f58 \\
    --hash=sha256:f48e3148535365161a268547b285fd01d92c80e4b457275375933825b5fc26b2
";

/// The `src/` folder of candle-kernels 0.11.1 in cargo's registry folder: `cargo metadata` on a
/// manifest that depends on it downloads it (nothing is built).
fn candle_sources() -> PathBuf {
    let src = registry_package("candle_kernels", CANDLE, CANDLE_VERSION).join("src");
    assert!(src.join("quantized.cu").is_file(), "no quantized.cu in {}", src.display());
    src
}

/// The folder of package `name` `version` in cargo's registry folder, fetched by `cargo
/// metadata` on `fixtures/<fetch>/fetch/Cargo.toml` (which depends on it; nothing is built).
pub fn registry_package(fetch: &str, name: &str, version: &str) -> PathBuf {
    try_registry_package(fetch, name, version).unwrap_or_else(|why| panic!("{why}"))
}

/// [`registry_package`], or why cargo could not fetch it (no network, no registry).
pub fn try_registry_package(fetch: &str, name: &str, version: &str) -> Result<PathBuf, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let from = root().join("fixtures").join(fetch).join("fetch");
    fs::create_dir_all(dir.path().join("src")).expect("create src");
    fs::copy(from.join("Cargo.toml"), dir.path().join("Cargo.toml")).expect("copy the fetch manifest");
    fs::copy(from.join("src/lib.rs"), dir.path().join("src/lib.rs")).expect("copy lib.rs");
    let mut cmd = Command::new(env!("CARGO"));
    for v in SCRUBBED.iter() {
        cmd.env_remove(v);
    }
    cmd.args(["metadata", "--format-version", "1", "--manifest-path"]).arg(dir.path().join("Cargo.toml"));
    let (code, stdout, stderr) = run(&mut cmd);
    if code != 0 {
        return Err(format!("cargo metadata could not fetch {name} {version}:\n{stderr}"));
    }
    let meta: Value = serde_json::from_str(&stdout).expect("cargo metadata prints JSON");
    let package = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == name && p["version"] == version)
        .ok_or_else(|| format!("{name} {version} is not among the packages cargo resolved"))?;
    let manifest = PathBuf::from(package["manifest_path"].as_str().expect("manifest_path"));
    Ok(manifest.parent().expect("the manifest is in a folder").to_path_buf())
}

/// Copies a folder, files only (the registry's copy is read-only; the copies need not be).
fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create dir");
    for e in fs::read_dir(from).expect("read dir") {
        let e = e.expect("dir entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            fs::write(&target, fs::read(e.path()).expect("read source file")).expect("write copy");
        }
    }
}

/// A crate named `package` whose kernel folder `kernels` is a copy of `sources`, with the one-line
/// build.rs, `metadata` as its whole `[package.metadata.launch]`, and a library at `lib.rs` (the
/// kernel folder may hold Rust files of its own project, which are not ours to compile).
pub fn crate_with(package: &str, sources: &Path, kernels: &str, metadata: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(&format!("launch-{package}-")).tempdir().expect("temp dir");
    copy_dir(sources, &dir.path().join(kernels));
    let root = root().display().to_string();
    let manifest = format!(
        "[package]\nname = \"{package}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         [lib]\npath = \"lib.rs\"\n\n[package.metadata.launch]\n{metadata}\n\n\
         [dependencies]\nlaunch = {{ path = \"{root}/launch\", features = [\"cudarc\"] }}\n\n\
         [build-dependencies]\nlaunch-build = {{ path = \"{root}/launch-build\" }}\n\n[workspace]\n"
    );
    fs::write(dir.path().join("Cargo.toml"), manifest).expect("write Cargo.toml");
    // The workspace's versions of launch's dependencies (cudarc, half, float8): nothing resolved anew.
    fs::copy(crate::support::root().join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("copy Cargo.lock");
    fs::write(dir.path().join("build.rs"), "fn main() {\n    launch_build::build()\n}\n").expect("write build.rs");
    fs::write(dir.path().join("lib.rs"), "#![allow(missing_docs)]\n\nlaunch::include_kernels!();\n").expect("lib.rs");
    dir
}

/// `cargo launch report --format json` on the crate: the parsed document.
pub fn report_json(dir: &Path) -> Document {
    let (code, stdout, stderr) = run(cargo_launch()
        .args(["launch", "report", "--format", "json", "--manifest-path"])
        .arg(dir.join("Cargo.toml")));
    assert_eq!(code, 0, "cargo launch report failed:\n{stderr}");
    Document::from_json(&stdout).unwrap_or_else(|e| panic!("report JSON: {e}\n{stdout}"))
}

/// `OUT_DIR/launch` of `package` in the fixtures' target folder: the one written last (a fixed
/// package name keeps one build-script output folder across runs).
pub fn launch_dir(package: &str) -> PathBuf {
    let build = root().join("target/fixtures/debug/build");
    crate::support::newest_launch_dir(&build, package, "manifest.json")
        .unwrap_or_else(|| panic!("no {package}-*/out/launch/manifest.json under {}", build.display()))
}

/// `launch_dir/manifest.json`, read through the schema (its version checked).
pub fn read_manifest(launch_dir: &Path) -> Manifest {
    let path = launch_dir.join("manifest.json");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Manifest::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// NVIDIA's cuobjdump, installed once into `<cargo-launch cache>/tools/cuobjdump-<version>` with
/// pip (hashes pinned), into a temporary folder renamed into place once it runs; a lock keeps two
/// test processes from installing at once.
pub fn cuobjdump() -> PathBuf {
    let env = Env::cli();
    let tools = launch_engine::tooling::toolchain::cache_dir(&env).expect("HOME is set").join("tools");
    let dir = tools.join(format!("cuobjdump-{CUOBJDUMP_VERSION}"));
    let bin = dir.join("nvidia/cu13/bin/cuobjdump");
    let complete = dir.join(".complete");
    if complete.is_file() && bin.is_file() {
        return bin;
    }
    fs::create_dir_all(&tools).expect("create the tools folder");
    let lock = fs::File::create(tools.join(".cuobjdump.lock")).expect("create the lock file");
    lock.lock().expect("lock");
    if complete.is_file() && bin.is_file() {
        return bin;
    }
    let tmp = tools.join(format!(".cuobjdump.partial-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let req = tools.join(format!("cuobjdump-{CUOBJDUMP_VERSION}.txt"));
    fs::write(&req, CUOBJDUMP_REQUIREMENTS).expect("write the requirements");
    Tool::new(launch_engine::tooling::toolchain::python(&env))
        .args(["-m", "pip", "install", "--no-deps", "--require-hashes", "--only-binary=:all:", "--no-compile"])
        .args(["--disable-pip-version-check", "--no-warn-script-location", "--quiet", "--target"])
        .arg(&tmp)
        .arg("-r")
        .arg(&req)
        .timeout(Duration::from_secs(20 * 60))
        .run()
        .unwrap_or_else(|e| panic!("installing cuobjdump: {e}"));
    let version = Tool::new(tmp.join("nvidia/cu13/bin/cuobjdump")).arg("--version").run().expect("cuobjdump runs");
    assert!(version.stdout.contains(&format!("V{CUOBJDUMP_VERSION}")), "{}", version.stdout);
    fs::write(tmp.join(".complete"), CUOBJDUMP_VERSION).expect("mark complete");
    let _ = fs::remove_dir_all(&dir);
    fs::rename(&tmp, &dir).expect("move the install into place");
    bin
}

/// One function's resources as cuobjdump prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// `REG`.
    pub registers: u64,
    /// `STACK`: the function's own stack frame, bytes.
    pub stack: u64,
    /// `SHARED`: static shared memory, bytes (less the reserved part, see [`reserved_shared`]).
    pub shared: u64,
}

/// `cuobjdump --dump-resource-usage` of one cubin: function (symbol) → usage.
///
/// ```text
///  Function heavy:
///   REG:168 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:364 TEXTURE:0 SURFACE:0 SAMPLER:0
/// ```
pub fn cubin_usage(cuobjdump: &Path, cubin: &Path) -> BTreeMap<String, Usage> {
    let out = Tool::new(cuobjdump)
        .arg("--dump-resource-usage")
        .arg(cubin)
        .run()
        .unwrap_or_else(|e| panic!("cuobjdump on {}: {e}", cubin.display()));
    let mut usage = BTreeMap::new();
    let mut function: Option<String> = None;
    for line in out.stdout.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("Function ").and_then(|l| l.strip_suffix(':')) {
            function = Some(name.to_string());
            continue;
        }
        let Some(name) = function.take() else { continue };
        let field = |key: &str| -> u64 {
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(key).and_then(|v| v.strip_prefix(':')))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no {key} for {name} in `{line}` ({})", cubin.display()))
        };
        usage.insert(name.clone(), Usage { registers: field("REG"), stack: field("STACK"), shared: field("SHARED") });
    }
    usage
}

/// Bytes of shared memory a cubin adds to the shared section of each kernel that has one beyond what it
/// declares: sm_90 cubins carry the block's reserved shared memory (a `.nv.shared.reserved.0`
/// section; CUDA reserves 1 KiB per block on sm_80 and later), so cuobjdump's `SHARED` is ptxas's
/// `smem` plus 1024 there; sm_80 cubins do not, and it is 0.
fn reserved_shared(cuobjdump: &Path, cubin: &Path) -> u64 {
    let out = Tool::new(cuobjdump)
        .arg("--dump-elf")
        .arg(cubin)
        .run()
        .unwrap_or_else(|e| panic!("cuobjdump --dump-elf on {}: {e}", cubin.display()));
    if out.stdout.contains(".nv.shared.reserved.") {
        1024
    } else {
        0
    }
}

/// Checks every record of `report` against cuobjdump's reading of the cubins listed in
/// `launch_dir/manifest.json`, both ways, and that no record is at line 0. Returns the number of
/// records checked.
pub fn check_against_cuobjdump(report: &Document, launch_dir: &Path) -> usize {
    let tool = cuobjdump();
    let manifest = read_manifest(launch_dir);
    // (file, arch, symbol) → usage, from every embedded cubin.
    let mut dumped: BTreeMap<(String, String, String), Usage> = BTreeMap::new();
    for m in &manifest.modules {
        let file = m.file.as_str();
        for c in &m.cubins {
            let arch = c.arch.to_string();
            let cubin = launch_dir.join(&c.path);
            let reserved = reserved_shared(&tool, &cubin);
            for (name, mut usage) in cubin_usage(&tool, &cubin) {
                // Only a kernel with shared memory of its own has the reserved part added (measured
                // on candle's sm_90 cubins: 1024 → 2048, 5120 → 6144, and 0 stays 0).
                if usage.shared > 0 {
                    usage.shared = usage.shared.checked_sub(reserved).unwrap_or_else(|| {
                        panic!(
                            "`{name}` in {}: SHARED {} is below the reserved {reserved}",
                            cubin.display(),
                            usage.shared
                        )
                    });
                }
                dumped.insert((file.to_string(), arch.clone(), name), usage);
            }
        }
    }
    let records = &report.records;
    assert!(!records.is_empty(), "the report has no record");
    let mut differences = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in records {
        let (file, arch, name) = (r.kernel.file.as_str(), r.arch.to_string(), r.kernel.name.as_str());
        let line = r.kernel.line;
        if line == 0 {
            differences.push(format!("{file}:0: kernel `{name}` ({arch}) is at line 0"));
        }
        let key = (file.to_string(), arch.clone(), name.to_string());
        let Some(d) = dumped.get(&key) else {
            differences.push(format!("{file}:{line}: `{name}` ({arch}) is in the report but in no cubin"));
            continue;
        };
        seen.insert(key);
        let p = &r.ptxas.resources;
        let ours = Usage { registers: p.registers.into(), stack: p.stack_frame.into(), shared: p.shared_static.into() };
        if ours != *d {
            differences.push(format!("{file}:{line}: `{name}` ({arch}): report {ours:?}, cuobjdump {d:?}"));
        }
    }
    for key in dumped.keys().filter(|k| !seen.contains(*k)) {
        differences.push(format!("{}: `{}` ({}) is in the cubin but not in the report", key.0, key.2, key.1));
    }
    assert!(
        differences.is_empty(),
        "{} of {} records disagree with cuobjdump:\n{}",
        differences.len(),
        records.len(),
        differences.iter().take(50).cloned().collect::<Vec<_>>().join("\n")
    );
    records.len()
}

/// The comparison itself, on a crate of ours (the GPU fixture's kernels: registers from 8 to 168,
/// a spilling kernel with a stack frame, static shared memory up to 48 KiB), through the same code
/// path as the candle test.
#[test]
fn the_cuobjdump_comparison_holds_on_our_gpu_kernels() {
    toolchain_root();
    let dir = crate_with(
        "cuobjdump-gpu-kernels",
        &root().join("fixtures/crates/gpu/kernels"),
        "kernels",
        "arch = [\"sm_80\", \"sm_90\"]",
    );
    let report = report_json(dir.path());
    let checked = check_against_cuobjdump(&report, &launch_dir("cuobjdump-gpu-kernels"));
    assert!(checked >= 20, "{checked} records");
}

/// candle-kernels 0.11.1's device files build unmodified with the documented config, and every
/// number the report prints is cuobjdump's.
#[test]
fn candle_kernels_build_unmodified_and_match_cuobjdump() {
    toolchain_root();
    let started = Instant::now();
    let src = candle_sources();
    let package = "candle-kernels-unmodified";
    let dir = crate_with(
        package,
        &src,
        "src",
        "arch = [\"sm_80\", \"sm_90\"]\n\
         kernels = \"src\"\n\
         exclude = [\"moe\", \"mmq_gguf\", \"mmvq_gguf.cu\"]\n\
         flags = [\"--expt-relaxed-constexpr\", \"-std=c++17\"]",
    );
    let fetched = started.elapsed();
    let report = report_json(dir.path());
    let built = started.elapsed() - fetched;
    let launch = launch_dir(package);
    let checked = check_against_cuobjdump(&report, &launch);

    // Every device file of the folder compiled (the excluded ones left out), for both arches.
    let manifest = read_manifest(&launch);
    let mut modules: Vec<&str> = manifest.modules.iter().map(|m| m.file.as_str()).collect();
    modules.sort();
    let expected: Vec<String> =
        ["affine", "binary", "cast", "conv", "fill", "indexing", "quantized", "reduce", "sort", "ternary", "unary"]
            .iter()
            .map(|f| format!("src/{f}.cu"))
            .collect();
    assert_eq!(modules, expected);

    // Issue 33: every kernel's parameters recovered from the compiler (its mangled name, or the
    // probe for the `extern "C"` ones, all of candle's macro-generated kernels) and equal to its
    // PTX `.param` list on both arches (the build fails otherwise).
    let untyped: Vec<(&str, Option<&str>)> = manifest
        .kernels
        .iter()
        .filter(|k| k.params.is_none())
        .map(|k| (k.name.as_str(), k.params_unknown.as_deref()))
        .collect();
    assert!(untyped.is_empty(), "kernels without a recovered signature: {untyped:?}");
    let params: usize = manifest.kernels.iter().map(|k| k.params.as_ref().map_or(0, Vec::len)).sum();
    // Every one launches typed: its generated static is a `launch::Typed`, which `report`'s
    // `cargo check` of the crate compiled, with `launch`'s cudarc types.
    let kernels_rs = fs::read_to_string(launch.join("kernels.rs")).expect("kernels.rs");
    let (typed, untyped) = crate::support::typed_statics(&kernels_rs);
    assert_eq!((typed, untyped.as_slice()), (manifest.kernels.len(), &[][..]), "kernels launched untyped");
    eprintln!(
        "candle-kernels {CANDLE_VERSION}: {} files, {checked} kernel × arch records equal to cuobjdump's; \
         {} kernels with recovered parameters ({params} parameters), {typed} typed statics; fetch {fetched:.1?}, \
         build + report {built:.1?}, total {:.1?}",
        modules.len(),
        manifest.kernels.len(),
        started.elapsed()
    );
}

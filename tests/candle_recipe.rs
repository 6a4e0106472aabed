//! Issue 34: the book's candle recipe (docs/src/guide/candle.md) on the published candle-kernels
//! 0.11.1. `tools/candle/adapt.py` rewrites the package's build.rs and Cargo.toml (its `.cu` files
//! and Rust code stay as published); a program of ours (`fixtures/crates/candle_recipe/consumer`) builds against
//! the adapted crate through `[patch.crates-io]`, once as published and once with `--cubins`.
//! Pinned: every module's `ptx()` is the fallback PTX launch-build embedded for it, every
//! `cubins()` entry the cubin embedded for its arch (both listed arches), and the static library
//! of the `host` files defines every launcher `ffi.rs` declares (the program links some; `nm`
//! checks all). And `report`/`check` on the adapted crate speak of candle-core's own launches: the
//! metadata sets the block size candle-core launches each kernel with (1024 for cudarc's
//! `for_num_elems`, the fixed sizes of src/quantized/cuda.rs), and every PTX kernel launches at it.
//!
//! Needs the 13.0 toolchain, a host C++ compiler and python3 (skipped, saying why, without them),
//! and the package (skipped when cargo cannot fetch it). The kernels compile through the ordinary
//! kernel cache, so only a machine's first run compiles them (the host files take nvcc minutes);
//! the adapted copies live at fixed paths under the fixtures' target folder, so a rerun's build
//! scripts keep their outputs.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::candle_kernels::{read_manifest, try_registry_package};
use crate::host_files::toolchain_13_and_cxx;
use crate::support::{cargo_in, cargo_launch, fixtures_target, newest_launch_dir, root, run};

/// `tools/candle/adapt.py` on the package into `out` (`--cubins` adds `Module::cubins()`).
fn adapt(package: &Path, out: &Path, cubins: bool) {
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("tools/candle/adapt.py")).arg(package).arg(out);
    cmd.arg("--launch-build").arg(root().join("launch-build")).arg("--own-workspace");
    if cubins {
        cmd.arg("--cubins");
    }
    let (code, _, stderr) = run(&mut cmd);
    assert_eq!(code, 0, "adapt.py failed:\n{stderr}");
}

/// The consumer built against the adapted crate at `adapted` and run: its output lines.
fn consumer_output(adapted: &Path, work: &Path, cubins: bool) -> String {
    let dir = work.join(if cubins { "consumer-cubins" } else { "consumer" });
    fs::create_dir_all(dir.join("src")).expect("consumer folder");
    let from = root().join("fixtures/crates/candle_recipe/consumer");
    let manifest = fs::read_to_string(from.join("Cargo.toml")).expect("consumer Cargo.toml");
    let patch = format!("\n[patch.crates-io]\ncandle-kernels = {{ path = {:?} }}\n", adapted.display().to_string());
    fs::write(dir.join("Cargo.toml"), manifest + &patch).expect("write Cargo.toml");
    fs::copy(from.join("src/main.rs"), dir.join("src/main.rs")).expect("copy main.rs");
    let mut cmd = cargo_in(&dir);
    cmd.args(["run", "--quiet"]);
    if cubins {
        cmd.args(["--features", "cubins"]);
    }
    let (code, stdout, stderr) = run(&mut cmd);
    assert_eq!(code, 0, "the consumer did not build or run against {}:\n{stderr}", adapted.display());
    stdout
}

/// FNV-1a 64 of `bytes`, as the consumer prints it.
fn fnv(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    format!("{h:016x}")
}

/// What the consumer must print for the build whose outputs are in `launch_dir`: per module (in
/// candle's `ALL_IDS` order, which is its files' order) its PTX line, then with `cubins` a line per
/// embedded cubin.
fn expected(launch_dir: &Path, cubins: bool) -> Vec<String> {
    let m = read_manifest(launch_dir);
    let host: Vec<&str> = m.host.iter().map(|h| h.file.as_str()).collect();
    let mut lines = Vec::new();
    let modules = m.modules.iter().filter(|module| !host.contains(&module.file.as_str()));
    for (i, module) in modules.enumerate() {
        let ptx = fs::read(launch_dir.join(&module.ptx)).expect("embedded PTX");
        lines.push(format!("ptx {i} {} {}", ptx.len(), fnv(&ptx)));
        if cubins {
            for c in &module.cubins {
                let cubin = fs::read(launch_dir.join(&c.path)).expect("embedded cubin");
                lines.push(format!("cubin {i} {} {} {}", c.arch, cubin.len(), fnv(&cubin)));
            }
        }
    }
    lines
}

/// Every function `ffi.rs` declares outside candle's `cutile` feature.
fn ffi_names(package: &Path) -> Vec<String> {
    let text = fs::read_to_string(package.join("src/ffi.rs")).expect("ffi.rs");
    let mut names = Vec::new();
    let mut cutile = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("#[cfg(feature = \"cutile\")]") {
            cutile = true;
        } else if let Some(rest) = line.strip_prefix("pub fn ") {
            let name = rest.split('(').next().unwrap_or_default().to_string();
            if !std::mem::take(&mut cutile) {
                names.push(name);
            }
        }
    }
    names
}

/// The global symbols `library` defines (`nm --defined-only -g`).
fn defined_symbols(library: &Path) -> Vec<String> {
    let (code, stdout, stderr) = run(Command::new("nm").args(["--defined-only", "-g"]).arg(library));
    assert_eq!(code, 0, "nm {}: {stderr}", library.display());
    stdout.lines().filter_map(|l| l.split_whitespace().nth(2)).map(str::to_string).collect()
}

/// `report` at the block sizes candle-core launches with: each PTX kernel's threads come from the
/// metadata's tables (first match wins: `dequantize_block_q4_K_*` is 32, not the `q?_K` 64), and none
/// fails to launch at them; `check` passes.
fn report_at_candle_launches(adapted: &Path) {
    let (code, stdout, stderr) =
        run(cargo_launch().current_dir(adapted).args(["launch", "report", "--format", "json"]));
    assert_eq!(code, 0, "report failed:\n{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("report JSON");
    let records = report["records"].as_array().expect("records");
    let host = |f: &str| ["src/mmq_gguf/", "src/moe/", "src/mmvq_gguf.cu"].iter().any(|h| f.starts_with(h));
    let ptx: Vec<&serde_json::Value> = records.iter().filter(|r| !host(r["file"].as_str().unwrap_or(""))).collect();
    assert!(ptx.len() > 1000, "{} PTX kernel records", ptx.len());
    let threads = |name: &str| {
        let r = ptx.iter().find(|r| r["name"] == name && r["arch"] == "sm_90").unwrap_or_else(|| panic!("no {name}"));
        r["occupancy"]["threads"].as_u64().expect("threads")
    };
    let expected = [
        ("affine_f32", 1024),
        ("conv2d_f32", 1024),
        ("fast_sum_f32", 1024),
        ("fast_sum_small_f32", 256),
        ("quantize_q8_1", 256),
        ("dequantize_block_q5_0_f32", 256),
        ("dequantize_block_q6_K_f16", 64),
        ("dequantize_block_q4_K_f32", 32),
        ("dequantize_block_q8_0_f16", 32),
        ("get_rows_q4_K", 32),
        ("get_rows_q6_K", 64),
        ("get_rows_bf16", 256),
        ("dequantize_mul_mat_vec_q4_k", 32),
        ("mul_mat_vec_q4_0_q8_1_cuda1", 128),
        ("mul_mat_vec_q4_0_q8_1_cuda8", 64),
        ("mul_mat_q4_K", 128),
    ];
    for (name, want) in expected {
        assert_eq!(threads(name), want, "{name}");
    }
    // The crate's default (256) reaches no PTX kernel: only those the tables set to 256 have it.
    let set_to_256 = |n: &str| {
        n.starts_with("fast_sum_small_")
            || n == "quantize_q8_1"
            || n.starts_with("dequantize_block_q5_")
            || (n.starts_with("get_rows_") && !n.ends_with("_K"))
    };
    let at_default: Vec<&str> = ptx
        .iter()
        .filter(|r| r["occupancy"]["threads_from"] == "host" && r["occupancy"]["threads"] == 256)
        .filter_map(|r| r["name"].as_str())
        .filter(|n| !set_to_256(n))
        .collect();
    assert!(at_default.is_empty(), "PTX kernels at the default block size: {at_default:?}");
    let failing: Vec<String> = ptx
        .iter()
        .filter(|r| !r["occupancy"]["launch_error"].is_null())
        .map(|r| format!("{} {}", r["name"], r["arch"]))
        .collect();
    assert!(failing.is_empty(), "kernels that cannot launch at candle-core's block size: {failing:?}");
    let (code, _, stderr) = run(cargo_launch().current_dir(adapted).args(["launch", "check"]));
    assert_eq!(code, 0, "check failed:\n{stderr}");
}

/// Whether the recipe can run here: the 13.0 toolchain, a host C++ compiler and python3 (each
/// missing one is a skip, with the reason printed).
fn can_adapt() -> bool {
    if toolchain_13_and_cxx().is_none() {
        return false;
    }
    if run(Command::new("python3").arg("--version")).0 != 0 {
        eprintln!("skipped: no python3 on PATH (tools/candle/adapt.py)");
        return false;
    }
    true
}

#[test]
fn the_recipe_builds_candle_kernels_with_its_api_and_every_launcher() {
    if !can_adapt() {
        return;
    }
    let package = match try_registry_package("candle_kernels", "candle-kernels", "0.11.1") {
        Ok(p) => p,
        Err(why) => {
            eprintln!("skipped: candle-kernels 0.11.1 cannot be fetched: {why}");
            return;
        }
    };
    let work: PathBuf = fixtures_target().join("candle-recipe");
    let build = fixtures_target().join("debug/build");
    let mut launchers = BTreeMap::new();
    for cubins in [false, true] {
        let adapted = work.join(if cubins { "candle-kernels-cubins" } else { "candle-kernels" });
        adapt(&package, &adapted, cubins);
        // Only build.rs and Cargo.toml changed; the sources are the package's.
        for f in ["src/lib.rs", "src/ffi.rs", "src/affine.cu", "src/mmq_gguf/mmq_instance_q4_0.cu"] {
            let same = fs::read(package.join(f)).ok() == fs::read(adapted.join(f)).ok();
            assert!(same || (cubins && f == "src/lib.rs"), "{f} changed");
        }
        let output = consumer_output(&adapted, &work, cubins);
        let launch_dir = newest_launch_dir(&build, "candle-kernels", "manifest.json").expect("candle-kernels' outputs");
        let lines: Vec<String> = output.lines().map(str::to_string).collect();
        let embedded: Vec<String> = lines.iter().filter(|l| !l.starts_with("launcher ")).cloned().collect();
        assert_eq!(embedded, expected(&launch_dir, cubins), "{output}");
        assert_eq!(embedded.iter().filter(|l| l.starts_with("ptx ")).count(), 11, "{output}");
        if cubins {
            for arch in ["sm_80", "sm_90"] {
                assert_eq!(embedded.iter().filter(|l| l.contains(&format!(" {arch} "))).count(), 11, "{output}");
            }
        }
        for l in lines.iter().filter(|l| l.starts_with("launcher ")) {
            assert!(l.ends_with(" true"), "{l}");
            launchers.insert(l.clone(), ());
        }
        // Every launcher ffi.rs declares is in the host files' library, not only those linked.
        let out_dir = launch_dir.parent().expect("OUT_DIR");
        let library = out_dir.join("liblaunch_host_candle_kernels.a");
        let defined = defined_symbols(&library);
        let names = ffi_names(&package);
        assert!(names.len() > 40, "{names:?}");
        let missing: Vec<&String> = names.iter().filter(|n| !defined.contains(n)).collect();
        assert!(missing.is_empty(), "launchers of ffi.rs the library lacks: {missing:?}");
    }
    assert_eq!(launchers.len(), 15, "{launchers:?}");
    report_at_candle_launches(&work.join("candle-kernels"));
}

/// The `[package.metadata.launch]` line `key = [...]` of an adapted Cargo.toml, as its strings.
fn listed(toml: &str, key: &str) -> Option<Vec<String>> {
    let line = toml.lines().find(|l| l.starts_with(&format!("{key} = [")))?;
    let inner = line.split_once('[')?.1.trim_end_matches(']');
    Some(inner.split(',').map(|s| s.trim().trim_matches('"').to_string()).filter(|s| !s.is_empty()).collect())
}

/// Another release than the one the book shows gets its own table: adapt.py reads `host`,
/// `exclude` and `flags` from the package's build.rs, so 0.10.2 (cudaforge, three MoE host files,
/// no GGUF matmul files) is not given 0.11.1's files, and 0.9.1 (bindgen_cuda, PTX only, its
/// src/ptx.rs rewritten on every build) gets no `host` and a src/ptx.rs that includes the recipe's
/// consts. 0.9.1 is built: its lib.rs, unchanged, compiles against launch-build's OUT_DIR/ptx.rs.
#[test]
fn the_recipe_adapts_earlier_releases_from_their_own_build_scripts() {
    if !can_adapt() {
        return;
    }
    let work: PathBuf = fixtures_target().join("candle-releases");
    for (version, host, flags) in
        [("0.10.2", &["moe/moe_gguf.cu", "moe/moe_wmma.cu", "moe/moe_wmma_gguf.cu"][..], 3), ("0.9.1", &[][..], 0)]
    {
        let package = match try_registry_package("candle_releases", "candle-kernels", version) {
            Ok(p) => p,
            Err(why) => {
                eprintln!("skipped: candle-kernels {version} cannot be fetched: {why}");
                return;
            }
        };
        let adapted = work.join(format!("candle-kernels-{version}"));
        adapt(&package, &adapted, false);
        let toml = fs::read_to_string(adapted.join("Cargo.toml")).expect("adapted Cargo.toml");
        assert!(
            !toml.contains("[build-dependencies.cudaforge]") && !toml.contains("[build-dependencies.bindgen_cuda]"),
            "{toml}"
        );
        assert_eq!(listed(&toml, "host").unwrap_or_default(), host, "{toml}");
        assert_eq!(listed(&toml, "exclude"), None, "{toml}");
        assert_eq!(listed(&toml, "flags").map(|f| f.len()), Some(flags), "{toml}");
        for f in ["src/lib.rs", "src/affine.cu", "src/reduce.cu"] {
            assert_eq!(fs::read(package.join(f)).ok(), fs::read(adapted.join(f)).ok(), "{version}: {f} changed");
        }
        let ptx_rs = fs::read_to_string(adapted.join("src/ptx.rs")).unwrap_or_default();
        assert_eq!(
            ptx_rs.contains("include!(concat!(env!(\"OUT_DIR\"), \"/ptx.rs\"))"),
            version == "0.9.1",
            "{ptx_rs}"
        );
    }
    // The build's own OUT_DIR (cargo says it), not the newest candle-kernels folder: the test above
    // builds 0.11.1 in the same target folder at the same time.
    let mut cmd = cargo_in(&work.join("candle-kernels-0.9.1"));
    let (code, stdout, stderr) = run(cmd.args(["build", "--quiet", "--message-format=json"]));
    assert_eq!(code, 0, "the adapted 0.9.1 did not build:\n{stderr}");
    let out_dir = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| {
            m["reason"] == "build-script-executed"
                && m["package_id"].as_str().is_some_and(|p| p.contains("candle-kernels"))
        })
        .find_map(|m| m["out_dir"].as_str().map(PathBuf::from))
        .expect("cargo names candle-kernels' OUT_DIR");
    let manifest = read_manifest(&out_dir.join("launch"));
    let kernels = manifest.kernels.len();
    assert_eq!(manifest.modules.len(), 11, "{:?}", manifest.modules.iter().map(|m| &m.file).collect::<Vec<_>>());
    assert!(kernels > 600, "{kernels} kernels");
    let consts = fs::read_to_string(out_dir.join("ptx.rs")).expect("OUT_DIR/ptx.rs");
    // Each module's PTX and its cubins, as the 0.11 recipe writes them.
    assert_eq!(consts.matches(": &str = include_str!").count(), 11, "{consts}");
    assert_eq!(consts.matches("_CUBINS: &[(&str, &[u8])]").count(), 11, "{consts}");
}

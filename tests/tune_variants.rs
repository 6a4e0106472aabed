//! `[package.metadata.launch.tune.<kernel>]` on `fixtures/crates/tune_grid`: the build embeds each
//! variant (the kernel's PTX with the contract written in and the entry renamed, assembled by
//! ptxas) with the numbers `cargo launch explore`'s assembler gives for the same contract, the
//! generated `KERNEL.variants()` lists them, a rebuild assembles nothing, and `check` checks them
//! and notes the ones refused on an arch.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use launch::{Arch, Contract, ContractSource};
use launch_engine::tooling::{toolchain, variants, Env};
use launch_schema::check::Document as CheckDocument;
use launch_schema::manifest::Manifest;
use launch_schema::stats::BuildStats;
use serde_json::Value;

use crate::support::{cargo_build, cargo_launch, fixture, run, toolchain_root};

/// What one `cargo build` of the fixture left: its `OUT_DIR` and its program.
struct Built {
    out_dir: PathBuf,
    program: PathBuf,
}

impl Built {
    fn read(&self, file: &str) -> String {
        let path = self.out_dir.join("launch").join(file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn stats(&self) -> BuildStats {
        BuildStats::from_json(&self.read("build-stats.json")).expect("build-stats.json")
    }
}

fn build(dir: &Path, cache: &Path) -> Built {
    let mut cmd = cargo_build(dir, cache, &toolchain_root());
    let (code, stdout, stderr) = run(cmd.arg("--message-format=json-render-diagnostics"));
    assert_eq!(code, 0, "cargo build failed:\n{stderr}");
    let (mut out_dir, mut program) = (None, None);
    for msg in stdout.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
        if !msg["package_id"].as_str().is_some_and(|p| p.contains("fixture-tune-grid")) {
            continue;
        }
        match msg["reason"].as_str() {
            Some("build-script-executed") => out_dir = msg["out_dir"].as_str().map(PathBuf::from),
            Some("compiler-artifact") => {
                program = msg["executable"].as_str().map(PathBuf::from).or(program);
            }
            _ => {}
        }
    }
    Built {
        out_dir: out_dir.unwrap_or_else(|| panic!("no build-script-executed message:\n{stdout}")),
        program: program.unwrap_or_else(|| panic!("no executable:\n{stdout}")),
    }
}

fn arch(a: &str) -> Arch {
    a.parse().expect("known arch")
}

#[test]
fn variants_are_embedded_with_explores_numbers_listed_cached_and_checked() {
    let dir = fixture("tune_grid");
    let cache = tempfile::tempdir().unwrap();
    let cold = build(dir.path(), cache.path());
    let manifest = Manifest::from_json(&cold.read("manifest.json")).expect("the manifest");

    // hungry: @launch(256), grid min_blocks × max_regs; its variants keep the exact block size.
    let hungry = manifest.kernels.iter().find(|k| k.name == "hungry").expect("hungry");
    let names: Vec<&str> = hungry.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["hungry__t256_b2_r32", "hungry__t256_b2_r64"]);
    let at = |min_blocks, max_regs| Contract {
        source: ContractSource::Annotation,
        threads: Some(256),
        min_blocks: Some(min_blocks),
        max_regs: Some(max_regs),
        exact: true,
    };
    assert_eq!(hungry.variants.iter().map(|v| v.contract).collect::<Vec<_>>(), [at(2, 32), at(2, 64)]);
    for v in &hungry.variants {
        assert!(v.refused.is_empty(), "{v:?}");
        assert_eq!(v.arches.iter().map(|a| a.arch).collect::<Vec<_>>(), [arch("sm_75"), arch("sm_90")]);
    }
    // The cap of 32 spills, as the grid meant.
    assert!(hungry.variants[0].arches.iter().all(|a| a.resources.spill_stores > 0), "{:?}", hungry.variants[0]);

    // The numbers are what explore's assembler gives for the same contract on the kernel's PTX
    // (the embedded fallback, sm_75).
    let tc = toolchain::discover(&Env::cli()).expect("the toolchain");
    let module = manifest.modules.iter().find(|m| m.file == "kernels/hungry.cu").expect("hungry's module");
    assert_eq!(module.ptx_arch, arch("sm_75"));
    let ptx = cold.read(&module.ptx);
    let kernel = variants::PtxKernel { file: "kernels/hungry.cu", arch: arch("sm_75"), ptx: &ptx, entry: "hungry" };
    let work = tempfile::tempdir().unwrap();
    // No kernel cache: ptxas's own runs, compared with what the build embedded.
    let options = variants::Options { jobs: 1, cache: None, ..variants::Options::new(work.path().to_path_buf()) };
    let contracts: Vec<Option<Contract>> = hungry.variants.iter().map(|v| Some(v.contract)).collect();
    let explored = variants::assemble_variants(&tc, &kernel, &contracts, &options).expect("hungry is in the PTX");
    for (v, e) in hungry.variants.iter().zip(explored.variants) {
        let e = e.unwrap_or_else(|e| panic!("{}: {e}", v.name));
        assert_eq!(v.arches[0].resources, e.resources, "{}", v.name);
    }

    // tile: cannot launch on sm_75 (shared memory) at any size: refused there, embedded on sm_90.
    let tile = manifest.kernels.iter().find(|k| k.name == "tile").expect("tile");
    assert_eq!(tile.variants.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["tile__t128", "tile__t256"]);
    for v in &tile.variants {
        assert_eq!((v.contract.source, v.contract.exact), (ContractSource::LaunchBounds, false));
        assert_eq!(v.arches.iter().map(|a| a.arch).collect::<Vec<_>>(), [arch("sm_90")]);
        assert_eq!(v.refused.len(), 1, "{v:?}");
        assert_eq!(v.refused[0].arch, arch("sm_75"));
        assert!(v.refused[0].reason.contains("bytes of shared memory per block"), "{}", v.refused[0].reason);
        let m = v.module.as_ref().expect("embedded on sm_90");
        assert_eq!((m.ptx_arch, m.cubins.len()), (arch("sm_90"), 1));
    }
    let stats = cold.stats();
    assert_eq!((stats.variant_jobs, stats.variants_compiled), (8, 8), "2 × 2 arches + 2 × 2 arches");

    // The generated code: each kernel's variants, their contracts and where they exist.
    let (code, stdout, stderr) = run(&mut std::process::Command::new(&cold.program));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "hungry hungry__t256_b2_r32 @launch(256, 2, 32) exact=true cubins=sm_75,sm_90 ptx=sm_75 arches=sm_75,sm_90",
            "hungry hungry__t256_b2_r64 @launch(256, 2, 64) exact=true cubins=sm_75,sm_90 ptx=sm_75 arches=sm_75,sm_90",
            "tile tile__t128 __launch_bounds__(128) exact=false cubins=sm_90 ptx=sm_90 arches=sm_90",
            "tile tile__t256 __launch_bounds__(256) exact=false cubins=sm_90 ptx=sm_90 arches=sm_90",
        ]
    );

    // A rebuild (the build script reruns for a touched kernel) runs neither NVRTC nor ptxas.
    let file = std::fs::File::options().write(true).open(dir.path().join("kernels/hungry.cu")).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(5)).unwrap();
    let warm = build(dir.path(), cache.path());
    let stats = warm.stats();
    assert_eq!((stats.compiled, stats.variant_jobs, stats.variants_compiled), (0, 8, 0), "{stats:?}");
    assert_eq!(warm.read("manifest.json"), cold.read("manifest.json"));

    // check: the variants like kernels, the refused ones as notes (tile itself fails on sm_75).
    let (_, stdout, stderr) = run(cargo_launch()
        .args(["launch", "check", "--format", "json", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml")));
    let doc = CheckDocument::from_json(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}\n{stderr}"));
    let about = |kernel: &str| doc.findings.iter().filter(|f| f.kernel.as_deref() == Some(kernel)).collect::<Vec<_>>();
    for v in ["tile__t128", "tile__t256"] {
        let notes = about(v);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let n = notes[0];
        assert_eq!((n.severity.name(), n.kind.id(), n.arch), ("note", "launch", Some(arch("sm_75"))));
        assert!(n.message.starts_with(&format!("tune variant {v} (__launch_bounds__(")), "{}", n.message);
        assert!(n.message.contains("of tile is not embedded for sm_75: cannot launch at"), "{}", n.message);
    }
    let spills: Vec<_> =
        about("hungry__t256_b2_r32").into_iter().map(|f| (f.kind.id(), f.arch.map(|a| a.to_string()))).collect();
    assert!(spills.contains(&("spills", Some("sm_90".into()))), "{spills:?}");
    // The errors are tile's own (it cannot launch on sm_75), none a variant's.
    assert!(
        doc.findings
            .iter()
            .filter(|f| f.severity.name() == "error")
            .all(|f| f.kernel.as_deref() == Some("tile") && f.arch == Some(arch("sm_75"))),
        "{stdout}"
    );
}

use std::path::{Path, PathBuf};

use launch::{Arch, ContractSource};

use super::*;
use crate::compile::{Compiler, Job, Settings};
use crate::config::Config;
use crate::env::Env;
use crate::toolchain::Origin;

/// The toolchain (`cargo launch setup`); `None`, saying the test is skipped, without one.
fn toolchain_or_skip() -> Option<Toolchain> {
    crate::toolchain::discover(&Env::cli()).map_err(|e| eprintln!("skipped: no CUDA toolchain ({e})")).ok()
}

fn sm90() -> Arch {
    "sm_90".parse().expect("known arch")
}

#[test]
fn an_entry_that_is_not_there_fails_before_any_ptxas_runs() {
    // A ptxas that does not exist: reaching it would be a different error.
    let toolchain = Toolchain {
        root: PathBuf::from("/nonexistent"),
        origin: Origin::Override,
        nvrtc: PathBuf::from("/nonexistent/libnvrtc.so"),
        ptxas: PathBuf::from("/nonexistent/ptxas"),
        include: None,
        cccl_include: None,
        libraries: Vec::new(),
        nvrtc_version: "0".into(),
        ptxas_version: "0".into(),
    };
    let kernel = PtxKernel { file: "kernels/k.cu", arch: sm90(), ptx: ".entry k()\n{\n}\n", entry: "nope" };
    let dir = tempfile::tempdir().unwrap();
    let options = Options { cache: None, ..Options::new(dir.path().to_path_buf()) };
    let r = assemble_variants(&toolchain, &kernel, &[None], &options);
    assert_eq!(r.unwrap_err(), PtxEditError::NoEntry { entry: "nope".into(), entries: vec!["k".into()] });
    // A missing ptxas is a variant's error, not a panic; the variants not started by then say why.
    let kernel = PtxKernel { entry: "k", ..kernel };
    let r = assemble_variants(&toolchain, &kernel, &[None, None], &options).unwrap().variants;
    assert_eq!(r.len(), 2);
    assert!(r.iter().any(|v| matches!(v, Err(Error::ToolNotFound { .. }))), "{r:?}");
    assert!(r.iter().all(|v| matches!(v, Err(Error::ToolNotFound { .. } | Error::Compile { .. }))), "{r:?}");
}

/// A hand-written kernel: ptxas alone assembles it, no NVRTC run.
const SMALL_PTX: &str = "\
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mul.lo.s32 	%r2, %r1, 3;
	st.global.u32 	[%rd2], %r2;
	ret;
}
";

/// The second run of the same variants runs no ptxas: every variant comes from the kernel cache
/// with the numbers, lines, warnings and cubin ptxas gave. A damaged entry is a miss (ptxas runs
/// again and replaces it); without a cache every variant is a miss.
#[test]
fn a_second_run_takes_every_variant_from_the_cache_and_a_damaged_entry_is_a_miss() {
    let Some(toolchain) = toolchain_or_skip() else { return };
    let kernel = PtxKernel { file: "kernels/k.cu", arch: sm90(), ptx: SMALL_PTX, entry: "k" };
    let bounds = |threads: u32, max_regs: Option<u32>| {
        Some(launch::Contract {
            source: ContractSource::LaunchBounds,
            threads: Some(threads),
            min_blocks: None,
            max_regs,
            exact: false,
        })
    };
    let contracts = [None, bounds(256, None), bounds(128, Some(32))];
    let work = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let options = Options {
        jobs: 2,
        cache: Some(KernelCache::at(store.path().join("kernels"))),
        ..Options::new(work.path().join("variants"))
    };
    let run = |options: &Options| assemble_variants(&toolchain, &kernel, &contracts, options).unwrap();
    // What a caller sees of a variant: everything but how long ptxas took.
    let seen = |a: &Assembled| -> Vec<_> {
        a.variants
            .iter()
            .map(|v| {
                let v = v.as_ref().unwrap_or_else(|e| panic!("{e}"));
                (v.contract, v.resources, v.lines.clone(), v.warnings.clone(), v.cubin.clone())
            })
            .collect()
    };
    let cold = run(&options);
    assert_eq!((cold.cache.hits, cold.cache.misses, cold.cache.damaged), (0, 3, 0), "{:?}", cold.cache);
    assert_eq!(cold.cache.dir.as_deref(), Some(store.path().join("kernels").as_path()));
    assert!(cold.cache.store_failure.is_none(), "{:?}", cold.cache);
    let warm = run(&options);
    assert_eq!((warm.cache.hits, warm.cache.misses), (3, 0), "{:?}", warm.cache);
    assert!(warm.variants.iter().all(|v| v.as_ref().is_ok_and(|v| v.ptxas_time.is_zero())));
    assert_eq!(seen(&warm), seen(&cold));
    // The PTX-edited variants differ: three entries, not one.
    let entries: Vec<PathBuf> = walk(&store.path().join("kernels"));
    assert_eq!(entries.len(), 3, "{entries:?}");

    // Cut every entry short: each is a miss, assembled again, and replaced.
    for e in &entries {
        let len = std::fs::metadata(e).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(e).unwrap().set_len(len / 2).unwrap();
    }
    let repaired = run(&options);
    assert_eq!((repaired.cache.hits, repaired.cache.misses, repaired.cache.damaged), (0, 3, 3));
    assert!(repaired.cache.first_damage.as_deref().is_some_and(|d| d.contains("cut short")), "{:?}", repaired.cache);
    assert_eq!(seen(&repaired), seen(&cold));
    let again = run(&options);
    assert_eq!((again.cache.hits, again.cache.damaged), (3, 0));

    // Another ptxas option is another key.
    let flagged = Options { ptxas_flags: vec!["-O2".into()], ..options.clone() };
    assert_eq!(run(&flagged).cache.misses, 3);
    let off = Options { cache: None, ..options };
    let uncached = run(&off);
    assert_eq!((uncached.cache.dir.as_deref(), uncached.cache.hits, uncached.cache.misses), (None, 0, 3));
    assert_eq!(seen(&uncached), seen(&cold));
}

/// Every file under `dir`, sorted.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The template's five builds of `poly_eval`: each bounded variant is assembled from the PTX of
/// the UNBOUNDED `poly_eval` with the variant's contract written in, and must give exactly the
/// registers, spills and stack of the bounded kernel NVRTC compiled from source. Needs the
/// toolchain (`cargo launch setup`); skipped with a message without one.
#[test]
fn ptx_edited_variants_match_the_source_compiled_builds() {
    let Some(toolchain) = toolchain_or_skip() else { return };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../template");
    let config = Config::load(&root.join("Cargo.toml")).expect("template config");
    let work = tempfile::tempdir().unwrap();
    let compiler =
        Compiler::new(toolchain.clone(), &config, work.path().join("work"), Settings::default()).expect("NVRTC loads");
    let plan = crate::plan::Plan::resolve(config.clone()).unwrap();
    let file = plan.file("kernels/poly.cu").expect("template/kernels/poly.cu");
    let source = &file.source;
    let text = std::fs::read_to_string(&source.path).unwrap();
    // poly.cu has no `@launch` annotation: its text is compiled as it is.
    let job = Job { file, text: &text, annotations: &[], headers: &[], arch: sm90() };
    let (reference, timing) = compiler.run_timed(&job).expect("poly.cu compiles");
    eprintln!(
        "reference: NVRTC {} ms, ptxas {} ms for the 5 entries ({} {})",
        timing.nvrtc.as_millis(),
        timing.ptxas.as_millis(),
        toolchain.ptxas_version,
        sm90()
    );

    let bounded = ["poly_eval_lb256", "poly_eval_lb1024", "poly_eval_lb256x4", "poly_eval_lb1024x2"];
    let directives = ptx::entries(&reference.ptx);
    // The contract each bounded kernel has in NVRTC's PTX; `None` (no bounds) as a control.
    let mut names = vec!["poly_eval"];
    let mut contracts = vec![None];
    for name in bounded {
        let d = directives.iter().find(|d| d.name == name).expect("bounded entry in the PTX");
        names.push(name);
        contracts.push(Some(d.contract(ContractSource::LaunchBounds).expect("has launch bounds")));
    }
    let kernel = PtxKernel { file: &source.file, arch: sm90(), ptx: &reference.ptx, entry: "poly_eval" };
    // No cache: each variant is ptxas's own run, timed.
    let options = Options { jobs: 2, cache: None, ..Options::new(work.path().join("variants")) };
    let started = Instant::now();
    let variants =
        assemble_variants(&toolchain, &kernel, &contracts, &options).expect("poly_eval is in the PTX").variants;
    eprintln!("variants: {} ptxas runs, 2 at a time, {} ms wall", contracts.len(), started.elapsed().as_millis());

    let same_body = |name: &str| {
        // NVRTC may emit a different body under bounds: say so next to the numbers.
        // Compared with the entry's name and the block labels (`$L__BB<entry>_<n>`, numbered by
        // entry) made neutral.
        let body = |entry: &str| {
            let alone = ptx::keep_entry(&reference.ptx, entry).unwrap();
            let start = alone.find(&format!(".entry {entry}(")).unwrap();
            let open = start + alone[start..].find("\n{").unwrap();
            let close = alone.rfind("\n}").unwrap();
            let mut body = alone[open..close].replace(entry, "ENTRY");
            for i in 0..10 {
                body = body.replace(&format!("$L__BB{i}_"), "$L__BB_");
            }
            body
        };
        body(name) == body("poly_eval")
    };
    let mut mismatches = Vec::new();
    for ((name, contract), variant) in names.iter().zip(&contracts).zip(variants) {
        let variant = variant.unwrap_or_else(|e| panic!("{name}: {e}"));
        let source = reference.report.entry(name).expect("entry reported").resources;
        let numbers = |r: &launch::Resources| (r.registers, r.spill_stores, r.spill_loads, r.stack_frame);
        let label = contract.map_or("none".to_string(), |c| c.to_string());
        eprintln!(
            "{name:<20} {label:<32} edited {:?} source {:?} (regs, spill st, spill ld, stack); ptxas {} ms; NVRTC body {}",
            numbers(&variant.resources),
            numbers(&source),
            variant.ptxas_time.as_millis(),
            if same_body(name) { "identical to poly_eval's (labels aside)" } else { "DIFFERS from poly_eval's" }
        );
        if numbers(&variant.resources) != numbers(&source) {
            mismatches.push(format!(
                "{name}: edited {:?} != source {:?}",
                numbers(&variant.resources),
                numbers(&source)
            ));
        }
    }
    // The template's documented numbers, for the pinned ptxas (other versions may differ).
    if toolchain.ptxas_version == "12.9.86" {
        let expected = [
            ("poly_eval", (167, 0, 0, 0)),
            ("poly_eval_lb256", (200, 0, 0, 0)),
            ("poly_eval_lb1024", (64, 3168, 3208, 1384)),
            ("poly_eval_lb256x4", (64, 3168, 3208, 1384)),
            ("poly_eval_lb1024x2", (32, 4452, 4628, 1912)),
        ];
        for (name, want) in expected {
            let r = reference.report.entry(name).expect("entry reported").resources;
            assert_eq!((r.registers, r.spill_stores, r.spill_loads, r.stack_frame), want, "{name} from source");
        }
    }
    assert!(
        mismatches.is_empty(),
        "PTX-edited variants differ from the source-compiled builds:\n{}",
        mismatches.join("\n")
    );
}

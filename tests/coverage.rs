use launch_schema::coverage::{Document, Outcome};

use crate::support::{cargo_launch, exact, fixture, run, toolchain_root};

const GPUS: &str = "A100,H100,L4,RTX 4090,B200,RTX 5090,Jetson AGX Orin,T4,sm_86";

fn coverage(dir: &std::path::Path, extra: &[&str]) -> (i32, String, String) {
    toolchain_root();
    run(cargo_launch().args(["launch", "coverage", "--manifest-path"]).arg(dir.join("Cargo.toml")).args(extra))
}

/// `(outcome, image, error)` of `kernel` on `gpu`.
fn on(doc: &Document, gpu: &str, kernel: &str) -> (Outcome, Option<String>, Option<u32>) {
    let g = doc.gpus.iter().find(|g| g.name == gpu).unwrap_or_else(|| panic!("no {gpu}"));
    let l = g.loads.iter().find(|l| l.kernels.iter().any(|k| k.ends_with(kernel))).expect(kernel);
    (l.outcome, l.image.map(|a| a.to_string()), l.error)
}

#[test]
fn every_outcome_on_a_gpu_list_native_jit_refused_by_the_driver_and_nothing() {
    let dir = fixture("coverage");
    let (code, json, stderr) = coverage(dir.path(), &["--gpu", GPUS, "--driver", "12.4", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = exact(&json, Document::from_json);
    assert_eq!((doc.schema, doc.driver.as_deref()), (1, Some("12.4")));
    let native = |a: &str| (Outcome::Native, Some(a.to_string()), None);
    // sm_80's cubin runs on every 8.x (same major, not-newer minor); 9.0 has its own.
    for gpu in ["A100", "L4", "RTX 4090", "Jetson AGX Orin", "sm_86"] {
        assert_eq!(on(&doc, gpu, "scale.cu::scale"), native("sm_80"), "{gpu}");
        // Only the sm_90 build has it: nothing on 8.x, whatever the arch list.
        assert_eq!(on(&doc, gpu, "::hopper_only"), (Outcome::NoImage, None, Some(209)), "{gpu}");
    }
    assert_eq!(on(&doc, "H100", "::scale"), native("sm_90"));
    assert_eq!(on(&doc, "H100", "::hopper_only"), native("sm_90"));
    // ampere.cu is built for sm_80 only: the H100 JIT-compiles its PTX, which a 12.4 driver refuses.
    assert_eq!(on(&doc, "H100", "::ampere"), (Outcome::JitRefused, Some("sm_80".into()), Some(222)));
    // Newer majors: the lowest PTX that has the kernel; ISA 8.8 needs 12.9.
    for gpu in ["B200", "RTX 5090"] {
        assert_eq!(on(&doc, gpu, "::scale"), (Outcome::JitRefused, Some("sm_80".into()), Some(222)), "{gpu}");
        assert_eq!(on(&doc, gpu, "::hopper_only"), (Outcome::JitRefused, Some("sm_90".into()), Some(222)), "{gpu}");
    }
    let b200 = &doc.gpus.iter().find(|g| g.name == "B200").unwrap().loads[0];
    assert_eq!(b200.fix.as_deref(), Some("update the driver to CUDA 12.9 or newer (Linux 575.51.03+)"));
    // Older than every arch: nothing, and the fix adds its arch.
    let t4 = doc.gpus.iter().find(|g| g.name == "T4").unwrap();
    assert_eq!(t4.loads[0].outcome, Outcome::NoImage);
    assert_eq!(t4.loads[0].fix.as_deref(), Some("add \"sm_75\" to `arch` in [package.metadata.launch]"));
    // Sizes per arch from the build's files, and the smallest list for these GPUs.
    let arches: Vec<String> = doc.sizes.iter().map(|s| s.arch.to_string()).collect();
    assert_eq!(arches, ["sm_80", "sm_90"]);
    assert!(doc.sizes.iter().all(|s| s.cubin_bytes > 1000 && s.ptx_bytes > 100), "{:?}", doc.sizes);
    let s = doc.suggestion.as_ref().unwrap();
    let list: Vec<String> = s.arch.iter().map(ToString::to_string).collect();
    assert_eq!(list, ["sm_75", "sm_80", "sm_90", "sm_100", "sm_120"]);
    assert!(s.estimated && s.bytes > s.current_bytes, "{s:?}");
    assert!(doc.jit_cost.as_deref().unwrap().contains("tools/gpu/RESULTS.md"));

    // A driver new enough: the same PTX JITs.
    let (code, json, stderr) = coverage(dir.path(), &["--gpu", "B200,H100", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = exact(&json, Document::from_json);
    assert_eq!(on(&doc, "B200", "::scale"), (Outcome::Jit, Some("sm_80".into()), None));
    assert_eq!(on(&doc, "H100", "::ampere"), (Outcome::Jit, Some("sm_80".into()), None));

    // The text: one line per GPU whose kernels agree, one per outcome where they differ.
    let (code, text, stderr) = coverage(dir.path(), &["--gpu", "A100,T4,sm_90", "--driver", "12.4"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains("GPUs, with a CUDA 12.4 driver:\n"), "{text}");
    assert!(text.contains("\n  A100               8.0   differs by kernel:\n"), "{text}");
    assert!(
        text.contains(
            "cubin sm_80: kernels/ampere.cu::ampere, kernels/hopper.cu::everywhere, kernels/scale.cu::scale\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "PTX compute_80 (ISA 8.8) refused by this driver: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222); fix: update \
             the driver to CUDA 12.9 or newer (Linux 575.51.03+): kernels/ampere.cu::ampere\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("smallest arch list that runs these GPUs natively: arch = [\"sm_75\", \"sm_80\", \"sm_90\"]"),
        "{text}"
    );
}

#[test]
fn an_unknown_gpu_is_a_usage_error_naming_the_near_ones() {
    let dir = fixture("coverage");
    let (code, _, stderr) = coverage(dir.path(), &["--gpu", "RTX 40"]);
    assert_eq!(code, 2, "{stderr}");
    // Refused when the command line is read (issue 32 class 7), in clap's words for the flag.
    assert!(stderr.contains("'--gpu <GPU>': `RTX 40` is not a GPU launch knows (did you mean `RTX 4090`"), "{stderr}");
}

#[test]
fn tune_variants_are_kernels_of_their_own_and_one_refused_on_a_listed_arch_is_not_fixed_by_listing_it() {
    // tune_grid: sm_75 + sm_90; `tile`'s variants are refused on sm_75 (shared memory).
    let dir = fixture("tune_grid");
    let (code, json, stderr) = coverage(dir.path(), &["--gpu", "T4,H100", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = exact(&json, Document::from_json);
    assert_eq!(on(&doc, "T4", "hungry.cu::hungry"), (Outcome::Native, Some("sm_75".into()), None));
    assert_eq!(on(&doc, "T4", "tile[tile__t128]"), (Outcome::NoImage, None, Some(209)));
    let t4 = doc.gpus.iter().find(|g| g.name == "T4").unwrap();
    let refused = t4.loads.iter().find(|l| l.outcome == Outcome::NoImage).unwrap();
    assert_eq!(refused.kernels.len(), 2, "{refused:?}");
    assert!(refused.fix.as_deref().unwrap().starts_with("none from `arch`: the kernel is only in the sm_90 build(s)"));
    let h100 = doc.gpus.iter().find(|g| g.name == "H100").unwrap();
    assert_eq!(h100.loads.len(), 1);
    assert_eq!((h100.loads[0].outcome, h100.loads[0].kernels.len()), (Outcome::Native, 6));
}

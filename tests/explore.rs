//! `cargo launch explore` on the template: the kernel's PTX from the build, each contract written
//! into it and assembled by ptxas, analysed per arch. A PTX-edited variant has the numbers of the
//! same contract compiled from source (the template's bounded builds). Every ptxas run goes
//! through the build's kernel cache: a second run assembles nothing and prints the same bytes.

use launch::ContractSource;
use launch_schema::explore::Document;

use crate::support::{cargo_launch, root, run, toolchain_root};

fn explore(args: &[&str]) -> (i32, String, String) {
    explore_in(None, args)
}

/// [`explore`], with its own kernel cache (`LAUNCH_CACHE_DIR`, the pinned toolchain named) when
/// `cache` is given.
fn explore_in(cache: Option<&std::path::Path>, args: &[&str]) -> (i32, String, String) {
    let toolchain = toolchain_root();
    let mut cmd = cargo_launch();
    if let Some(cache) = cache {
        cmd.env("LAUNCH_CACHE_DIR", cache).env("LAUNCH_TOOLCHAIN", toolchain);
    }
    run(cmd.args(["launch", "explore"]).args(args).arg("--manifest-path").arg(root().join("template/Cargo.toml")))
}

/// explore's stderr line on the kernel cache: (variants, from the cache, assembled by ptxas).
fn cache_counts(stderr: &str) -> (usize, usize, usize) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("explore: "))
        .unwrap_or_else(|| panic!("no `explore:` line on stderr:\n{stderr}"));
    let number_before = |what: &str| -> usize {
        let head = &line[..line.find(what).unwrap_or_else(|| panic!("no `{what}` in {line}"))];
        head.trim_end().rsplit([' ', ':']).next().unwrap().parse().unwrap_or_else(|e| panic!("{line}: {e}"))
    };
    (number_before("variants of"), number_before("from the kernel cache"), number_before("assembled by ptxas"))
}

/// The second run takes every variant from the kernel cache (no ptxas run) and prints exactly
/// what the first printed, JSON or text; a damaged entry is assembled again and replaced.
#[test]
fn a_second_run_takes_every_variant_from_the_kernel_cache_and_prints_the_same_bytes() {
    let cache = tempfile::tempdir().unwrap();
    let args = ["poly_eval", "--arch", "sm_90,sm_100", "--format", "json"];
    let (code, cold, stderr) = explore_in(Some(cache.path()), &args);
    assert_eq!(code, 0, "{stderr}");
    let doc = Document::from_json(&cold).expect("the explore document");
    // Every variant but the current build (its numbers are the embedded ones) runs ptxas.
    let assembled: usize = doc.arches.iter().map(|a| a.variants.len() - 1).sum();
    assert!(assembled >= 2 * 8, "the cliffs of two arches: {assembled}");
    assert_eq!(cache_counts(&stderr), (assembled, 0, assembled), "{stderr}");
    assert!(stderr.contains(&cache.path().join("kernels").display().to_string()), "{stderr}");

    let (code, warm, stderr) = explore_in(Some(cache.path()), &args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(cache_counts(&stderr), (assembled, assembled, 0), "no ptxas run: {stderr}");
    assert_eq!(warm, cold, "the JSON of a cached run is byte for byte the cold run's");

    // Every entry cut short (the build's too: its script does not run again): each variant is
    // assembled again, its entry replaced, and the table is the same as from the repaired cache.
    let mut entries = vec![cache.path().join("kernels")];
    while let Some(path) = entries.pop() {
        if path.is_dir() {
            entries.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            std::fs::write(&path, b"LAUNCHKC").unwrap();
        }
    }
    let text_args = ["poly_eval", "--arch", "sm_90,sm_100"];
    let (code, repaired, stderr) = explore_in(Some(cache.path()), &text_args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(cache_counts(&stderr), (assembled, 0, assembled), "{stderr}");
    assert!(stderr.contains(&format!("; {assembled} damaged cache entries assembled again and replaced")), "{stderr}");
    let (code, text, stderr) = explore_in(Some(cache.path()), &text_args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(cache_counts(&stderr), (assembled, assembled, 0), "{stderr}");
    assert_eq!(text, repaired, "the table of a cached run is byte for byte the uncached run's");
    assert!(text.contains("cliff from the current build: ≤ 128 registers (-39) fit 2 blocks/SM (25.0%)"), "{text}");
}

#[test]
fn the_cliffs_of_poly_eval_give_the_source_compiled_numbers_and_a_frontier() {
    let (code, stdout, stderr) = explore(&["poly_eval", "--arch", "sm_90", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let doc = Document::from_json(&stdout).expect("the explore document");
    assert_eq!(doc.kernel.display_name, "poly_eval");
    let a = &doc.arches[0];
    assert_eq!(a.arch.to_string(), "sm_90");
    let n = a.next_block.expect("registers limit the unbounded build");
    assert_eq!((n.registers, n.active_blocks, n.percent), (128, 2, 25.0));
    // The current build first (its embedded numbers), then a variant per cliff.
    assert_eq!((a.variants[0].origin.as_str(), a.variants[0].resources.unwrap().registers), ("current", 167));
    let at = |blocks: u32, regs: u32| {
        a.variants
            .iter()
            .find(|v| v.contract.is_some_and(|c| c.min_blocks == Some(blocks) && c.max_regs == Some(regs)))
            .unwrap_or_else(|| panic!("no cliff variant ({blocks}, {regs}) in {:?}", a.variants))
    };
    // __launch_bounds__(256, 4) compiled from source (poly_eval_lb256x4): 64 registers, 3168/3208
    // bytes of spills, 1384 bytes of stack. Written into the unbounded kernel's PTX: the same.
    let v = at(4, 64);
    let r = v.resources.unwrap();
    assert_eq!((r.registers, r.spill_stores, r.spill_loads, r.stack_frame), (64, 3168, 3208, 1384));
    assert_eq!((v.active_blocks, v.percent), (4, 50.0));
    let r = at(8, 32).resources.unwrap();
    assert_eq!((r.registers, r.spill_stores, r.spill_loads, r.stack_frame), (32, 4452, 4628, 1912));
    assert!(a.variants.iter().all(|v| v.contract.is_none_or(|c| c.source == ContractSource::LaunchBounds)));
    // Every cliff trades spills for occupancy: all on the frontier here.
    assert!(a.variants.iter().all(|v| v.frontier), "{:?}", a.variants);

    let (code, text, _) = explore(&["poly_eval", "--arch", "sm_90", "--max-regs", "cliffs"]);
    assert_eq!(code, 0);
    assert!(text.contains("cliff from the current build: ≤ 128 registers (-39) fit 2 blocks/SM (25.0%)"), "{text}");
    assert!(text.contains("__launch_bounds__(256, 2) __maxnreg__(128)"), "{text}");
}

#[test]
fn an_unknown_kernel_or_a_bad_register_count_is_a_usage_error() {
    let (code, _, stderr) = explore(&["poly", "--arch", "sm_90"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no kernel named `poly`; the kernels: poly_eval, poly_eval_lb256"), "{stderr}");
    let (code, _, stderr) = explore(&["poly_eval", "--max-regs", "300"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "'--max-regs <N|cliffs>': max_regs = 300 is outside 16..=255, the range .maxnreg accepts; or `cliffs`"
        ),
        "{stderr}"
    );
}

#[test]
fn plot_draws_a_panel_per_arch_with_every_variant() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("explore.svg");
    std::fs::write(&path, "old").unwrap();
    let (code, text, stderr) = explore(&["poly_eval", "--arch", "sm_90,sm_100", "--plot", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("explore.svg"), "the note goes to stderr: {stderr}");
    assert!(text.contains("cliff from the current build: ≤ 128 registers (-39) fit 2 blocks/SM (25.0%)"), "{text}");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg""#), "{}", &svg[..svg.len().min(200)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    for tag in ["g", "text", "title"] {
        assert_eq!(svg.matches(&format!("<{tag}")).count(), svg.matches(&format!("</{tag}>")).count(), "<{tag}>");
    }
    let panels: Vec<&str> = svg.split(r#"<g class="panel">"#).skip(1).collect();
    assert_eq!(panels.len(), 2, "one panel per arch");
    // Every row of the arch's table is a variant of its panel; the cliff and the current build marked.
    let rows = |arch: &str| {
        let table = text.split(&format!("poly_eval on {arch} ")).nth(1).unwrap().split("\n\n").next().unwrap();
        let row = |l: &&str| l.starts_with('*') || (l.starts_with("   ") && !l.trim_start().starts_with("contract"));
        table.lines().filter(row).count()
    };
    for (panel, arch) in panels.iter().zip(["sm_90", "sm_100"]) {
        assert!(panel.contains(&format!("poly_eval on {arch}")), "{arch}");
        assert_eq!(panel.matches(r#"<g class="variant">"#).count(), rows(arch), "{arch}: a point per variant");
        assert_eq!(panel.matches(r#"class="current""#).count(), 1, "{arch}");
        assert_eq!(panel.matches(r#"class="cliff""#).count(), 1, "{arch}");
        assert!(panel.contains("(256, 4) __maxnreg__(64), 256 threads: 64 registers, spills 3168/3208 B"), "{arch}");
        for label in ["registers per thread", "spill bytes (st + ld)", "occupancy", "register cap per thread"] {
            assert!(panel.contains(label), "{arch}: {label}");
        }
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "no temporary file left: {left:?}");

    // A path that cannot be written fails before the build, with the path in the message: a
    // usage error, exit 2, like a baseline path that is not a file (it was exit 4).
    for bad in [dir.path().join("no/such/dir/x.svg"), dir.path().to_path_buf()] {
        let (code, stdout, stderr) = explore(&["poly_eval", "--plot", bad.to_str().unwrap()]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(&format!("writing the plot to {}", bad.display())), "{stderr}");
        assert!(stdout.is_empty() && !stderr.contains("Compiling") && !stderr.contains("panicked"), "{stderr}");
    }
}

//! Tests that cross documents and the analysis.

use launch_analysis::{analyze, HostLaunch};

const HOST: HostLaunch = HostLaunch { threads: 256, dynamic_smem: 0 };

/// The recorded manifest of the template (its own build output, ptxas 12.9.86), analysed without
/// a compiler: every record of the seed article's table.
#[test]
fn the_recorded_template_manifest_gives_the_articles_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/manifests/template.json");
    let text = std::fs::read_to_string(path).unwrap();
    let m = crate::manifest::Manifest::from_json(&text).unwrap();
    let mut rows = Vec::new();
    for k in &m.kernels {
        for a in &k.arches {
            let (arch, r) = (a.arch, a.resources);
            let rep = analyze(arch, &r, k.contract, HOST).unwrap();
            rows.push(format!("{} {arch} {} {:.1}% {}", k.name, r.registers, rep.occupancy.percent, rep.largest_block));
        }
    }
    assert_eq!(
        rows,
        [
            "poly_eval sm_90 167 12.5% 384",
            "poly_eval sm_100 167 12.5% 384",
            "poly_eval_lb256 sm_90 200 12.5% 256",
            "poly_eval_lb256 sm_100 200 12.5% 256",
            "poly_eval_lb1024 sm_90 64 50.0% 1024",
            "poly_eval_lb1024 sm_100 64 50.0% 1024",
            "poly_eval_lb256x4 sm_90 64 50.0% 256",
            "poly_eval_lb256x4 sm_100 64 50.0% 256",
            "poly_eval_lb1024x2 sm_90 32 100.0% 1024",
            "poly_eval_lb1024x2 sm_100 32 100.0% 1024",
        ]
    );
}

use launch::occupancy::Limiters;
use launch::{Contract, ContractSource, Resources};
use launch_analysis::{NextBlock, ThreadsFrom};
use launch_schema::manifest::Toolchain;
use launch_schema::report::KernelId;

use super::*;
use crate::output::svg::tests::well_formed;

/// A variant of `threads` with `min_blocks`/`max_regs` (`None` for both: no contract) that used
/// `regs` registers and spilled `spills` bytes; `regs` 0: refused by ptxas.
fn variant(origin: &str, threads: u32, bounds: Option<(Option<u32>, Option<u32>)>, regs: u32, spills: u32) -> Variant {
    let contract = bounds.map(|(min_blocks, max_regs)| Contract {
        source: ContractSource::LaunchBounds,
        threads: Some(threads),
        min_blocks,
        max_regs,
        exact: false,
    });
    let resources = (regs > 0).then(|| Resources {
        registers: regs,
        spill_stores: spills / 2,
        spill_loads: spills - spills / 2,
        ..Resources::default()
    });
    Variant {
        origin: origin.into(),
        contract,
        resources,
        live_peak: None,
        error: resources.is_none().then(|| "ptxas error : too few registers".into()),
        threads,
        threads_from: if contract.is_some() { ThreadsFrom::Contract } else { ThreadsFrom::Host },
        active_blocks: 1,
        percent: if regs == 0 { 0.0 } else { (f64::from(65536 / (regs.max(32) * threads)) * 12.5).min(100.0) },
        limiters: Limiters::default(),
        launch_error: None,
        max_threads_per_block: 256,
        frontier: regs != 200,
    }
}

/// Two arches; 256 threads: the current build (no contract), its cliffs, an uncapped bound and a
/// refused variant; 512 threads: two caps.
fn doc() -> Document {
    let arch = |name: &str| ArchVariants {
        arch: name.parse().unwrap(),
        next_block: Some(NextBlock { registers: 128, active_blocks: 2, percent: 25.0 }),
        live_unavailable: None,
        variants: vec![
            variant("current", 256, None, 167, 0),
            variant("cliff", 256, Some((Some(2), Some(128))), 128, 432),
            variant("cliff", 256, Some((Some(4), Some(64))), 64, 6376),
            variant("cliff", 256, Some((Some(8), Some(32))), 32, 9080),
            variant("grid", 256, Some((None, None)), 200, 0),
            variant("grid", 256, Some((Some(2), None)), 128, 432),
            variant("grid", 256, Some((None, Some(16))), 0, 0),
            variant("grid", 512, Some((None, Some(64))), 64, 6376),
            variant("grid", 512, Some((None, Some(128))), 128, 432),
        ],
    };
    Document {
        schema: launch_schema::explore::VERSION,
        toolchain: Toolchain { nvrtc: "12.9.86".into(), ptxas: "12.9.86".into() },
        kernel: KernelId {
            package: "t".into(),
            name: "poly_eval".into(),
            display_name: "poly_eval".into(),
            qualified: "kernels/p.cu::poly_eval".into(),
            file: "kernels/p.cu".into(),
            line: 1,
        },
        nvdisasm: None,
        arches: vec![arch("sm_90"), arch("sm_100")],
    }
}

/// The `<g class="panel">` groups of `svg`, in order.
fn panels(svg: &str) -> Vec<&str> {
    svg.split(r#"<g class="panel">"#).skip(1).collect()
}

#[test]
fn the_plot_is_well_formed_with_a_panel_per_arch_and_a_group_per_variant() {
    let d = doc();
    let svg = svg(&d);
    assert_eq!(well_formed(&svg), Ok(()));
    assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg""#));
    assert!(!svg.contains("href") && !svg.contains("<script"), "self-contained");
    let p = panels(&svg);
    assert_eq!(p.len(), 2, "one panel per arch");
    for (panel, a) in p.iter().zip(&d.arches) {
        assert!(panel.contains(&format!("poly_eval on {}", a.arch)), "{panel}");
        assert_eq!(panel.matches(r#"<g class="variant">"#).count(), a.variants.len(), "a group per variant");
        // Registers, occupancy and spills for each variant ptxas assembled; a cross for the refused one.
        let assembled = a.variants.iter().filter(|v| v.resources.is_some()).count();
        for class in ["registers", "occupancy", "spills"] {
            assert_eq!(panel.matches(&format!(r#"class="{class}""#)).count(), assembled, "{class}");
        }
        assert!(panel.contains("refused by ptxas: ptxas error : too few registers"), "{panel}");
        assert_eq!(panel.matches(r#"class="current""#).count(), 1, "the current build ringed");
        assert_eq!(panel.matches(r#"class="cliff""#).count(), 1, "the cliff drawn");
        assert!(panel.contains("cliff from the current build: ≤ 128 registers (-39) fit 2 blocks/SM (25.0%)"));
        for label in ["registers per thread", "occupancy", "spill bytes (st + ld)", "register cap per thread"] {
            assert!(panel.contains(label), "axis label {label}");
        }
        // The uncapped variants' slots, labelled on the x axis.
        for slot in ["current", "no cap", "min_blocks 2"] {
            assert!(panel.contains(&format!(r#"text-anchor="middle">{slot}</text>"#)), "slot {slot}");
        }
    }
    // A series per block size, named in the legend.
    for legend in ["256 threads per block", "512 threads per block", "current build", "cliff: one more block fits"] {
        assert_eq!(svg.matches(&format!(">{legend}</text>")).count(), 1, "{legend}");
    }
    assert!(p[0].contains(r##"stroke="#ff7f0e""##), "the second block size has the second colour");
}

#[test]
fn marks_are_filled_on_the_frontier_and_hollow_off_it() {
    let svg = svg(&doc());
    let panel = panels(&svg)[0];
    let groups: Vec<&str> = panel.split(r#"<g class="variant">"#).skip(1).collect();
    // The fifth variant (200 registers, no spills, 12.5 %) is off the frontier.
    assert!(groups[4].contains("__launch_bounds__(256), 256 threads: 200 registers"), "{}", groups[4]);
    assert!(groups[4].contains(r#"class="registers" "#) && groups[4].contains(r#"fill="white""#));
    assert!(groups[0].contains("on the frontier") && !groups[0].contains(r#"fill="white""#), "{}", groups[0]);
}

#[test]
fn capped_variants_stand_at_their_cap_and_the_others_right_of_the_axis() {
    let d = doc();
    let x = XAxis::new(&d);
    assert_eq!(x.slots, ["current", "no cap", "min_blocks 2"]);
    let v = &d.arches[0].variants;
    let (at32, at64, at128) = (x.of(&v[3]), x.of(&v[2]), x.of(&v[1]));
    assert!(at32 < at64 && at64 < at128, "the caps in order");
    assert!((at64 - at32 - (at128 - at64) / 2.0).abs() < 0.01, "a linear axis");
    let (current, no_cap, min_blocks) = (x.of(&v[0]), x.of(&v[4]), x.of(&v[5]));
    assert!(x.cap(255) < current && current < no_cap && no_cap < min_blocks && min_blocks < WIDTH - RIGHT);
}

#[test]
fn no_cliff_no_spills_and_a_single_variant_still_draw() {
    let mut d = doc();
    d.arches.truncate(1);
    d.arches[0].next_block = None;
    d.arches[0].variants.truncate(1);
    let svg = svg(&d);
    assert_eq!(well_formed(&svg), Ok(()));
    assert!(svg.contains("no register cap fits one more block than the current build"));
    assert!(!svg.contains(r#"class="cliff""#) && !svg.contains("NaN") && !svg.contains("inf"));
    assert_eq!(spill_scale(&d).0, 1.0, "an axis even without spills");
}

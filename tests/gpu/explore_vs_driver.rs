//! Issue 13's evidence (d): for every build-time variant of the template's `poly_eval`, the
//! registers and stack that `cargo launch explore` computed without a GPU (the PTX edited, ptxas
//! run) equal what the driver reports for the loaded variant (`NUM_REGS`, `LOCAL_SIZE_BYTES`).
//!
//! The explore document is made on the build machine (tools/gpu/build.sh) and named by
//! `LAUNCH_EXPLORE_JSON`; without it the test says why it skips (`LAUNCH_TEST_REQUIRE_GPU=1`
//! makes that a failure, as for a missing GPU). Spill stores and loads have no driver attribute:
//! what the driver sees of them is the local memory, `LOCAL_SIZE_BYTES`, which is the stack frame.

use launch_schema::explore::Document;

use crate::{device, require_gpu, say};

#[test]
fn explores_registers_and_stack_equal_the_drivers_for_every_variant() {
    let test = "explores_registers_and_stack_equal_the_drivers_for_every_variant";
    let Some(dev) = device(test) else { return };
    #[allow(clippy::disallowed_methods)] // a test input, not build configuration
    let Some(path) = std::env::var_os("LAUNCH_EXPLORE_JSON") else {
        assert!(!require_gpu(), "{test}: LAUNCH_TEST_REQUIRE_GPU=1, but LAUNCH_EXPLORE_JSON is not set");
        say(&format!("gpu::{test}: skipped: LAUNCH_EXPLORE_JSON names no explore document"));
        return;
    };
    let doc = Document::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (major, minor) = dev.info().limits.compute_capability();
    let arch = format!("sm_{major}{minor}");
    let on_arch =
        doc.arches.iter().find(|a| a.arch.to_string() == arch).expect("the explore document has the GPU's arch");
    let variants = launch_template::POLY_EVAL.variants();
    assert!(!variants.is_empty(), "the template's poly_eval has a tune grid");
    say(&format!("explore ({}) against the driver on {arch}:", doc.toolchain.ptxas));
    say("variant                 contract                                explore regs/stack  driver NUM_REGS/LOCAL  image");
    let mut differences = Vec::new();
    for v in variants {
        let c = v.contract.expect("a variant has a contract");
        let record = on_arch
            .variants
            .iter()
            .find(|r| {
                r.contract
                    .is_some_and(|rc| (rc.threads, rc.min_blocks, rc.max_regs) == (c.threads, c.min_blocks, c.max_regs))
            })
            .unwrap_or_else(|| panic!("{}: no explore record for {c}", v.name));
        let r = record.resources.expect("explore assembled it");
        let k = dev.load(v).unwrap();
        let d = k.function_info();
        say(&format!(
            "{:<23} {:<39} {:>8}/{:<9} {:>8}/{:<12} {}",
            v.name,
            c.to_string(),
            r.registers,
            r.stack_frame,
            d.registers,
            d.local_bytes,
            k.image()
        ));
        if (d.registers, d.local_bytes) != (r.registers, r.stack_frame) {
            differences.push(format!("{}: explore {r:?}, driver {d:?}", v.name));
        }
    }
    say(&format!("{} variants, {} differences", variants.len(), differences.len()));
    assert!(differences.is_empty(), "{differences:#?}");
}

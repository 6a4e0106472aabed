//! `launch::occupancy` against the driver of a real NVIDIA H200.
//!
//! `fixtures/h200/occupancy-sm90.json` is what `tools/h200/measure.py` recorded on the GPU (see
//! `tools/h200/README.md` for the command, the device and how to repeat it): for each kernel of
//! `tools/h200/kernels.cu`, its ptxas numbers (registers, barriers, static shared memory), its PTX
//! launch bounds, the driver's function attributes and the driver's answers to
//! `cuOccupancyMaxActiveBlocksPerMultiprocessor` (every block size 1..=1024, several dynamic
//! shared-memory sizes), `cuOccupancyMaxPotentialBlockSize` and
//! `cuOccupancyAvailableDynamicSMemPerBlock`, in the default configuration, under seven carveouts
//! and after the dynamic shared-memory opt-in.
//!
//! Both tests recompute every answer from the recorded ptxas numbers alone, with
//! `DeviceLimits::lookup(9, 0)`, and require zero disagreements:
//! `occupancy_matches_h200_driver` for the attributes, the maximum block size and the blocks per
//! SM; `launch_configuration_matches_h200_driver` for the suggested block size and the available
//! dynamic shared memory.

use std::collections::BTreeMap;
use std::fmt::Debug;

use launch::occupancy::{
    available_dynamic_smem_per_block, max_potential_block_size, max_threads_per_block, occupancy, Carveout,
    DeviceLimits, FunctionAttrs,
};
use serde::Deserialize;

const FIXTURE: &str = "fixtures/h200/occupancy-sm90.json";

/// Fewest kernels the recording must hold (the issue asks for at least 20).
const MIN_KERNELS: usize = 24;

#[derive(Deserialize)]
struct Record {
    recorded: Recorded,
    device: Device,
    max_block_size: u32,
    subset_block_sizes: Vec<u32>,
    kernels: Vec<Kernel>,
}

#[derive(Deserialize)]
struct Recorded {
    date_utc: String,
    nvidia_smi: String,
}

#[derive(Deserialize)]
struct Device {
    name: String,
    driver_api_version: u32,
    attributes: BTreeMap<String, i64>,
}

#[derive(Deserialize)]
struct Kernel {
    name: String,
    ptxas: Ptxas,
    ptx: Ptx,
    attributes: BTreeMap<String, i64>,
    default: Section,
    carveout: Vec<CarveoutSection>,
    optin: OptInSection,
}

/// The numbers of ptxas's `-v` report.
#[derive(Deserialize)]
struct Ptxas {
    registers: u32,
    barriers: u32,
    smem: u32,
    stack_frame: u32,
}

/// The performance-tuning directives of the kernel's PTX entry.
#[derive(Deserialize)]
struct Ptx {
    maxntid: Option<Vec<u32>>,
    reqntid: Option<Vec<u32>>,
}

/// The driver's answers in one configuration.
#[derive(Deserialize)]
struct Section {
    /// Blocks per SM over the section's block sizes, per dynamic shared-memory size (a negative
    /// value is a failed call: minus the CUresult).
    occupancy: Vec<Sweep>,
    /// `[dynamic_smem, CUresult, min_grid_size, block_size]`.
    potential: Vec<[i64; 4]>,
    /// `[num_blocks, block_size, CUresult, bytes]`.
    available: Vec<[i64; 4]>,
}

#[derive(Deserialize)]
struct Sweep {
    dynamic_smem: u32,
    blocks: Vec<i64>,
}

#[derive(Deserialize)]
struct CarveoutSection {
    percent: i32,
    set_err: i64,
    attribute_after: i64,
    #[serde(flatten)]
    section: Section,
}

#[derive(Deserialize)]
struct OptInSection {
    max_dynamic_smem: u32,
    set_err: i64,
    attribute_after: i64,
    #[serde(flatten)]
    section: Section,
}

/// Which driver answers a test compares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Device and function attributes, `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK` and
    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor`.
    Occupancy,
    /// `cuOccupancyMaxPotentialBlockSize` and `cuOccupancyAvailableDynamicSMemPerBlock`.
    LaunchConfiguration,
}

/// Compared points and disagreements per kind, and every disagreement.
#[derive(Default)]
struct Tally {
    points: BTreeMap<&'static str, usize>,
    disagreeing: BTreeMap<&'static str, usize>,
    disagreements: Vec<String>,
}

impl Tally {
    fn check<T: PartialEq + Debug>(&mut self, kind: &'static str, what: impl FnOnce() -> String, driver: T, ours: T) {
        *self.points.entry(kind).or_default() += 1;
        if driver != ours {
            *self.disagreeing.entry(kind).or_default() += 1;
            self.disagreements.push(format!("{kind}: {}: driver {driver:?}, calculator {ours:?}", what()));
        }
    }

    fn total(&self) -> usize {
        self.points.values().sum()
    }

    /// Prints what was compared; panics with the disagreements, if any.
    fn finish(&self, test: &str, record: &Record) {
        let counts: Vec<String> = self.points.iter().map(|(kind, n)| format!("{kind}: {n}")).collect();
        eprintln!(
            "{test}: {} ({}, driver API {}; recorded {}), {} kernels: {} points compared ({}); {} disagreements",
            record.device.name,
            record.recorded.nvidia_smi,
            record.device.driver_api_version,
            record.recorded.date_utc,
            record.kernels.len(),
            self.total(),
            counts.join("; "),
            self.disagreements.len()
        );
        if !self.disagreements.is_empty() {
            let per_kind: Vec<String> = self.disagreeing.iter().map(|(kind, n)| format!("{kind}: {n}")).collect();
            let first: Vec<&str> = self.disagreements.iter().take(60).map(String::as_str).collect();
            panic!(
                "{} of {} points disagree with the H200 driver ({}); first {}:\n  {}",
                self.disagreements.len(),
                self.total(),
                per_kind.join("; "),
                first.len(),
                first.join("\n  ")
            );
        }
    }
}

/// The attributes, the maximum block size and the blocks per SM: every kernel at every block size
/// 1..=1024 (0 B and five other dynamic shared-memory sizes), and at 35 block sizes under seven
/// carveouts and after the opt-in.
#[test]
fn occupancy_matches_h200_driver() {
    let record = load();
    let tally = compare(&record, Part::Occupancy);
    let every_block_size = tally.points.get(FULL_SWEEP).copied().unwrap_or(0);
    assert!(every_block_size >= MIN_KERNELS * 1024, "only {every_block_size} full-sweep points compared");
    tally.finish("H200 driver, occupancy", &record);
}

/// `cuOccupancyMaxPotentialBlockSize` (no callback, no block-size limit) and
/// `cuOccupancyAvailableDynamicSMemPerBlock` in the same configurations.
#[test]
fn launch_configuration_matches_h200_driver() {
    let record = load();
    let tally = compare(&record, Part::LaunchConfiguration);
    assert!(tally.total() >= MIN_KERNELS * 9, "only {} points compared", tally.total());
    tally.finish("H200 driver, launch configuration", &record);
}

const FULL_SWEEP: &str = "blocks per SM (every block size)";

fn load() -> Record {
    // The recording stays with the other fixtures, next to the tool that made it (tools/h200/).
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(FIXTURE);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let record: Record = serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()));
    assert!(record.kernels.len() >= MIN_KERNELS, "only {} kernels recorded", record.kernels.len());
    record
}

fn compare(record: &Record, part: Part) -> Tally {
    let dev = DeviceLimits::lookup(9, 0).expect("9.0 is in the table");
    assert_eq!(record.max_block_size, dev.max_threads_per_block, "the full sweep covers every block size");
    let full: Vec<u32> = (1..=record.max_block_size).collect();
    let num_sms = u32::try_from(record.device.attributes["MULTIPROCESSOR_COUNT"]).expect("SM count fits u32");
    let mut tally = Tally::default();
    if part == Part::Occupancy {
        check_device(&mut tally, dev, &record.device);
    }
    for k in &record.kernels {
        let cmp = Comparison { dev, num_sms, kernel: k, part };
        cmp.kernel(&mut tally, &full, &record.subset_block_sizes);
    }
    tally
}

/// The device attributes the calculator reads against the 9.0 row.
fn check_device(tally: &mut Tally, dev: &DeviceLimits, device: &Device) {
    let expected: [(&str, u32); 12] = [
        ("COMPUTE_CAPABILITY_MAJOR", dev.major),
        ("COMPUTE_CAPABILITY_MINOR", dev.minor),
        ("MAX_THREADS_PER_BLOCK", dev.max_threads_per_block),
        ("MAX_THREADS_PER_MULTIPROCESSOR", dev.max_threads_per_sm),
        ("MAX_BLOCKS_PER_MULTIPROCESSOR", dev.max_blocks_per_sm),
        ("WARP_SIZE", dev.warp_size),
        ("MAX_REGISTERS_PER_BLOCK", dev.regs_per_block),
        ("MAX_REGISTERS_PER_MULTIPROCESSOR", dev.regs_per_sm),
        ("MAX_SHARED_MEMORY_PER_BLOCK", dev.smem_per_block),
        ("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", dev.smem_per_sm),
        ("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", dev.smem_per_block_optin),
        ("RESERVED_SHARED_MEMORY_PER_BLOCK", dev.reserved_smem_per_block),
    ];
    for (name, ours) in expected {
        let driver = *device.attributes.get(name).unwrap_or_else(|| panic!("no device attribute {name}"));
        tally.check("device attribute", || name.to_string(), driver, i64::from(ours));
    }
}

/// One kernel's recorded answers against the calculator.
struct Comparison<'a> {
    dev: &'a DeviceLimits,
    num_sms: u32,
    kernel: &'a Kernel,
    part: Part,
}

impl Comparison<'_> {
    fn kernel(&self, tally: &mut Tally, full: &[u32], subset: &[u32]) {
        let (dev, k, name) = (self.dev, self.kernel, self.kernel.name.as_str());
        let attr = |a: &str| *k.attributes.get(a).unwrap_or_else(|| panic!("{name}: no function attribute {a}"));
        let bounds = k.ptx.reqntid.as_ref().or(k.ptx.maxntid.as_ref()).map(|d| d.iter().product::<u32>());
        let func = FunctionAttrs {
            max_threads_per_block: bounds,
            ..FunctionAttrs::new(k.ptxas.registers, k.ptxas.smem, k.ptxas.barriers)
        };
        let optin = &k.optin;
        let optin_func = FunctionAttrs { max_dynamic_shared: Some(optin.max_dynamic_smem), ..func };

        if self.part == Part::Occupancy {
            // What the driver read from the cubin is what ptxas reported.
            let ptxas = [
                ("NUM_REGS", k.ptxas.registers),
                ("SHARED_SIZE_BYTES", k.ptxas.smem),
                ("LOCAL_SIZE_BYTES", k.ptxas.stack_frame),
            ];
            for (a, value) in ptxas {
                tally.check("ptxas vs function attribute", || format!("{name} {a}"), attr(a), i64::from(value));
            }
            let defaults = [
                ("MAX_DYNAMIC_SHARED_SIZE_BYTES", i64::from(func.max_dynamic_shared_on(dev))),
                ("PREFERRED_SHARED_MEMORY_CARVEOUT", i64::from(Carveout::Default.raw())),
            ];
            for (a, value) in defaults {
                tally.check("function attribute default", || format!("{name} {a}"), attr(a), value);
            }
            tally.check(
                "max threads per block",
                || format!("{name} ({} registers, launch bounds {bounds:?})", k.ptxas.registers),
                attr("MAX_THREADS_PER_BLOCK"),
                i64::from(max_threads_per_block(dev, k.ptxas.registers, bounds)),
            );
            for c in &k.carveout {
                let what = || format!("{name} carveout {}", c.percent);
                tally.check("setting accepted", what, c.set_err, 0);
                tally.check("setting read back", what, c.attribute_after, i64::from(c.percent));
            }
            let what = || format!("{name} opt-in {}", optin.max_dynamic_smem);
            tally.check("setting accepted", what, optin.set_err, 0);
            tally.check("setting read back", what, optin.attribute_after, i64::from(optin.max_dynamic_smem));
        }

        self.section(tally, "default", &func, Carveout::Default, full, &k.default, FULL_SWEEP);
        for c in &k.carveout {
            let label = format!("carveout {}", c.percent);
            let carveout = Carveout::from_raw(c.percent);
            self.section(tally, &label, &func, carveout, subset, &c.section, "blocks per SM (carveouts)");
        }
        let label = format!("opt-in {}", optin.max_dynamic_smem);
        self.section(tally, &label, &optin_func, Carveout::Default, subset, &optin.section, "blocks per SM (opt-in)");
    }

    #[allow(clippy::too_many_arguments)]
    fn section(
        &self,
        tally: &mut Tally,
        label: &str,
        func: &FunctionAttrs,
        carveout: Carveout,
        block_sizes: &[u32],
        s: &Section,
        kind: &'static str,
    ) {
        let (dev, name) = (self.dev, self.kernel.name.as_str());
        match self.part {
            Part::Occupancy => {
                for sweep in &s.occupancy {
                    assert_eq!(sweep.blocks.len(), block_sizes.len(), "{name} {label}: not one answer per block size");
                    let dynamic = sweep.dynamic_smem;
                    for (&block, &driver) in block_sizes.iter().zip(&sweep.blocks) {
                        let driver = if driver < 0 { Err(-driver) } else { Ok(driver) };
                        let calc = ours(occupancy(dev, func, block, dynamic, carveout).map(|o| o.active_blocks));
                        let what = || format!("{name} {label}, {block} threads, {dynamic} B dynamic");
                        tally.check(kind, what, driver, calc);
                    }
                }
            }
            Part::LaunchConfiguration => {
                for &[dynamic, err, grid, block] in &s.potential {
                    let driver = if err != 0 { Err(err) } else { Ok((grid, block)) };
                    let dynamic = u32::try_from(dynamic).expect("dynamic size fits u32");
                    let potential = |carveout| {
                        max_potential_block_size(dev, func, dynamic, self.num_sms, carveout)
                            .map(|(g, b)| (i64::from(g), i64::from(b)))
                            .map_err(|_| 1)
                    };
                    // Measured on the H200 (tools/h200/README.md): cuOccupancyMaxPotentialBlockSize
                    // honours a preferred carveout of 0 % but answers for every other percentage
                    // as with the default carveout, although cuOccupancyMaxActiveBlocksPerMultiprocessor
                    // in the same state honours it. The calculator follows the header (the carveout
                    // is an input); here it is asked what the driver's search effectively uses.
                    let as_driver = if carveout == Carveout::Percent(0) { carveout } else { Carveout::Default };
                    let calc = potential(as_driver);
                    let what = || format!("{name} {label} (searched as {as_driver:?}), {dynamic} B dynamic");
                    tally.check("max potential block size", what, driver, calc);
                }
                for &[blocks, block, err, bytes] in &s.available {
                    let (blocks, block) = (u32::try_from(blocks).unwrap(), u32::try_from(block).unwrap());
                    let driver = if err != 0 { Err(err) } else { Ok(bytes) };
                    let calc = ours(available_dynamic_smem_per_block(dev, func, blocks, block, carveout));
                    let what = || format!("{name} {label}, {blocks} blocks of {block} threads");
                    tally.check("available dynamic smem", what, driver, calc);
                }
            }
        }
    }
}

/// A calculator answer in the driver's shape: any calculator error stands for
/// `CUDA_ERROR_INVALID_VALUE` (1), the only failure these queries returned.
fn ours<T: Into<i64>, E>(result: Result<T, E>) -> Result<i64, i64> {
    result.map(Into::into).map_err(|_| 1)
}

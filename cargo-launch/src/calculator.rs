//! NVIDIA's Occupancy Calculator for a hypothetical kernel: the inputs of `cargo launch
//! occupancy` checked against the arch, evaluated at one point or swept over one input. Every
//! number comes from `launch::occupancy` (the port of `cuda_occupancy.h`); this module only
//! chooses the inputs. The answers are the occupancy JSON's types (`launch_schema::occupancy`).

use launch::occupancy::{self, Carveout, DeviceLimits, FunctionAttrs, Occupancy, UNLIMITED};
use launch_analysis::LaunchFailure;
use launch_schema::occupancy::{self as occupancy_doc, BlockLimits, Detail, Point, Sweep, Variable};
use launch_schema::report::Explained;

use crate::cli::OccupancyArgs;
use crate::error::Error;
use crate::words::group;

/// The varied input of `p` in a sweep over `sweep`.
pub fn x(sweep: Variable, p: &Point) -> u32 {
    match sweep {
        Variable::Threads => p.threads,
        Variable::Registers => p.registers,
        Variable::Smem => p.static_smem + p.dynamic_smem,
    }
}

/// Step of the shared-memory sweep, as in the old spreadsheet's graph.
const SMEM_STEP: usize = 512;

/// The most static shared memory ptxas accepts per block (48 KB); more must be dynamic.
const MAX_STATIC_SMEM: u32 = 48 * 1024;

/// The validated inputs on one architecture.
pub struct Calculator<'a> {
    /// The inputs as given.
    pub args: &'a OccupancyArgs,
    /// The arch's limits.
    pub dev: &'static DeviceLimits,
}

impl<'a> Calculator<'a> {
    /// Checks what clap cannot: the limits that depend on the arch. Errors exit with code 2.
    pub fn new(a: &'a OccupancyArgs) -> Result<Calculator<'a>, Error> {
        let usage = |msg: String| Error::Usage(anyhow::anyhow!(msg));
        let dev = DeviceLimits::for_arch(a.arch).ok_or_else(|| usage(format!("no occupancy data for {}", a.arch)))?;
        let (arch, optin) = (a.arch, group(dev.smem_per_block_optin));
        if a.threads > dev.max_threads_per_block {
            let max = dev.max_threads_per_block;
            return Err(usage(format!("--threads {}: {arch} allows at most {max} threads per block", a.threads)));
        }
        if a.static_smem > MAX_STATIC_SMEM {
            let what =
                "static shared memory is at most 49152 bytes (48K) per block; more must be dynamic (--dynamic-smem)";
            return Err(usage(format!("--static-smem {}: {what}", a.static_smem)));
        }
        let total = u64::from(a.static_smem) + u64::from(a.dynamic_smem);
        if total > u64::from(dev.smem_per_block_optin) {
            let sum = format!("{} + {} = {}", group(a.static_smem), group(a.dynamic_smem), group(total as u32));
            let why = format!("{sum} bytes of shared memory per block exceeds {arch}'s opt-in limit of {optin} bytes");
            return Err(usage(format!("--dynamic-smem {}: {why}", a.dynamic_smem)));
        }
        Ok(Calculator { args: a, dev })
    }

    /// The kernel as the driver sees it. Dynamic shared memory above the 48 KB default counts as
    /// opted in (`cudaFuncSetAttribute`), as `registers_for_blocks` models it: a what-if question
    /// about 100 KB per block means a kernel that asked for it.
    fn func(&self, registers: u32, static_smem: u32, dynamic: u32) -> FunctionAttrs {
        FunctionAttrs::new(registers, static_smem, self.args.barriers).opted_in(self.dev, dynamic)
    }

    /// Threads, registers, static and dynamic shared memory → the point and the full result.
    fn evaluate(&self, threads: u32, registers: u32, st: u32, dy: u32) -> Result<(Point, Occupancy), Error> {
        let occ = occupancy::occupancy(self.dev, &self.func(registers, st, dy), threads, dy, self.args.carveout)
            .map_err(|e| Error::Failure(anyhow::anyhow!("occupancy on {}: {e}", self.args.arch)))?;
        let point = Point {
            threads,
            registers,
            static_smem: st,
            dynamic_smem: dy,
            active_blocks: occ.active_blocks,
            active_warps: occ.active_warps,
            max_warps: occ.max_warps,
            percent: occ.percent_rounded(),
            limiters: occ.limiters,
        };
        Ok((point, occ))
    }

    /// The given configuration.
    pub fn point(&self) -> Result<(Point, Occupancy), Error> {
        let a = self.args;
        self.evaluate(a.threads, a.registers, a.static_smem, a.dynamic_smem)
    }

    /// One graph's data: block sizes 32..=1024 by 32, every register count 0..=255, or shared
    /// memory per block 0..=opt-in limit by 512 bytes; the given value is added where it is not
    /// on that grid, so it can always be marked.
    pub fn series(&self, sweep: Variable) -> Result<Sweep, Error> {
        let (a, optin) = (self.args, self.dev.smem_per_block_optin);
        let (mut xs, given): (Vec<u32>, u32) = match sweep {
            Variable::Threads => ((32..=self.dev.max_threads_per_block).step_by(32).collect(), a.threads),
            Variable::Registers => ((0..=255).collect(), a.registers),
            Variable::Smem => ((0..=optin).step_by(SMEM_STEP).chain([optin]).collect(), a.static_smem + a.dynamic_smem),
        };
        xs.push(given);
        xs.sort_unstable();
        xs.dedup();
        let mut points = Vec::with_capacity(xs.len());
        for &x in &xs {
            let (point, _) = match sweep {
                Variable::Threads => self.evaluate(x, a.registers, a.static_smem, a.dynamic_smem)?,
                Variable::Registers => self.evaluate(a.threads, x, a.static_smem, a.dynamic_smem)?,
                // The swept amount keeps the given static part (as far as it reaches) and makes
                // the rest dynamic; the calculator only sees their sum.
                Variable::Smem => {
                    self.evaluate(a.threads, a.registers, a.static_smem.min(x), x - a.static_smem.min(x))?
                }
            };
            points.push(point);
        }
        let current = xs.iter().position(|&x| x == given).expect("the given value was added");
        Ok(Sweep { schema: occupancy_doc::VERSION, sweep, points, current })
    }

    /// "256 threads, 167 registers, 0 B static + 0 B dynamic shared memory, 1 barrier, carveout default".
    pub fn inputs(&self) -> String {
        let a = self.args;
        let smem = format!("{} B static + {} B dynamic shared memory", group(a.static_smem), group(a.dynamic_smem));
        let barriers = format!("{} barrier{}", a.barriers, plural(a.barriers));
        format!(
            "{} threads, {} registers, {smem}, {barriers}, carveout {}",
            a.threads,
            a.registers,
            carveout(a.carveout)
        )
    }

    /// "sm_90 (GH100, compute capability 9.0)".
    pub fn arch_text(&self) -> String {
        format!("{} ({}, compute capability {}.{})", self.args.arch, self.dev.chip, self.dev.major, self.dev.minor)
    }

    /// The whole answer for the given configuration (`--format json` without `--sweep`).
    pub fn detail(&self) -> Result<(Detail, Occupancy), Error> {
        let (a, dev) = (self.args, self.dev);
        let (point, occ) = self.point()?;
        let func = self.func(a.registers, a.static_smem, a.dynamic_smem);
        let max_threads = occupancy::max_threads_per_block(dev, a.registers, None);
        // With one SM the "minimum grid" is the blocks per SM; only the block size is used.
        let suggested = match occupancy::max_potential_block_size(dev, &func, a.dynamic_smem, 1, a.carveout) {
            Ok((_, block)) if block > 0 => Some(self.evaluate(block, a.registers, a.static_smem, a.dynamic_smem)?.0),
            _ => None,
        };
        let more = occ.active_blocks + 1;
        let registers = occupancy::registers_for_blocks(dev, &func, a.threads, more, a.dynamic_smem, a.carveout);
        let launch_error = (occ.active_blocks == 0).then(|| {
            Explained::new(LaunchFailure::diagnose(
                dev,
                &launch::Resources {
                    registers: a.registers,
                    shared_static: a.static_smem,
                    barriers: a.barriers,
                    ..Default::default()
                },
                a.dynamic_smem,
                a.threads,
                max_threads,
                &occ,
            ))
        });
        let limited = |v: u32| (v != UNLIMITED).then_some(v);
        let block_limits = BlockLimits {
            warps: occ.block_limit_warps,
            registers: limited(occ.block_limit_regs),
            shared_memory: limited(occ.block_limit_smem),
            blocks: occ.block_limit_blocks,
            barriers: occ.block_limit_barriers,
        };
        let detail = Detail {
            schema: occupancy_doc::VERSION,
            active_threads: occ.active_blocks * a.threads,
            point,
            arch: a.arch,
            carveout: match a.carveout {
                Carveout::Default => None,
                Carveout::Percent(p) => Some(p as u32),
            },
            block_limits,
            allocated_registers_per_block: occ.allocated_regs_per_block,
            allocated_smem_per_block: occ.allocated_smem_per_block,
            max_threads_per_block: max_threads,
            suggested,
            registers_for_one_more_block: registers,
            launch_error,
        };
        Ok((detail, occ))
    }
}

/// `default` or `50 %`.
pub fn carveout(c: Carveout) -> String {
    match c {
        Carveout::Default => "default".to_string(),
        Carveout::Percent(p) => format!("{p} %"),
    }
}

/// `s` unless `n` is 1.
pub fn plural(n: u32) -> &'static str {
    ["s", ""][usize::from(n == 1)]
}

#[cfg(test)]
pub(crate) mod tests {
    use launch::occupancy::{Limiter, Limiters};

    use super::*;

    /// The calculator's inputs on `arch` with the command's defaults (256 threads, 32 registers,
    /// no shared memory, 1 barrier, the default carveout).
    pub(crate) fn args(arch: &str) -> OccupancyArgs {
        OccupancyArgs {
            arch: arch.parse().unwrap(),
            threads: 256,
            registers: 32,
            static_smem: 0,
            dynamic_smem: 0,
            barriers: 1,
            carveout: Carveout::Default,
            sweep: None,
            format: crate::cli::Format::Text,
            plot: None,
        }
    }

    fn usage_error(a: &OccupancyArgs) -> String {
        match Calculator::new(a) {
            Err(e @ Error::Usage(_)) => {
                assert_eq!(e.exit_code(), crate::error::USAGE);
                e.to_string()
            }
            Err(e) => panic!("not a usage error: {e:?}"),
            Ok(_) => panic!("accepted: {a:?}"),
        }
    }

    #[test]
    fn limits_that_depend_on_the_arch_are_usage_errors() {
        let a = OccupancyArgs { threads: 1024, ..args("sm_90") };
        assert!(Calculator::new(&a).is_ok(), "1024 threads is the most, and allowed");

        // 48K of static shared memory is the most; a byte more must be dynamic.
        let a = OccupancyArgs { static_smem: 48 * 1024, ..args("sm_90") };
        assert!(Calculator::new(&a).is_ok());
        let a = OccupancyArgs { static_smem: 48 * 1024 + 1, ..args("sm_90") };
        let e = usage_error(&a);
        assert!(e.starts_with("--static-smem 49153: ") && e.contains("--dynamic-smem"), "{e}");

        // Static + dynamic up to the opt-in limit (227K on sm_90, 99K on sm_86), not beyond.
        let a = OccupancyArgs { static_smem: 1000, dynamic_smem: 232_448 - 1000, ..args("sm_90") };
        assert!(Calculator::new(&a).is_ok());
        let a = OccupancyArgs { static_smem: 1000, dynamic_smem: 100_377, ..args("sm_86") };
        let e = usage_error(&a);
        assert_eq!(
            e,
            "--dynamic-smem 100377: 1,000 + 100,377 = 101,377 bytes of shared memory per block exceeds sm_86's \
             opt-in limit of 101,376 bytes"
        );
    }

    #[test]
    fn the_given_point_is_the_occupancy_models() {
        let a = OccupancyArgs { registers: 167, ..args("sm_90") };
        let calc = Calculator::new(&a).unwrap();
        let (p, occ) = calc.point().unwrap();
        assert_eq!((p.threads, p.registers, p.active_blocks, p.active_warps, p.max_warps), (256, 167, 1, 8, 64));
        assert_eq!((p.percent, p.limiters), (12.5, [Limiter::Registers].into_iter().collect()));
        assert_eq!(occ.active_blocks, p.active_blocks);
        assert_eq!(calc.arch_text(), "sm_90 (GH100, compute capability 9.0)");
        assert_eq!(
            calc.inputs(),
            "256 threads, 167 registers, 0 B static + 0 B dynamic shared memory, 1 barrier, carveout default"
        );
    }

    #[test]
    fn sweeps_cover_their_grid_in_order_with_the_given_value_marked() {
        let a = args("sm_90");
        let calc = Calculator::new(&a).unwrap();
        for (variable, len, current, first, last) in [
            (Variable::Threads, 32, 7, 32, 1024),
            (Variable::Registers, 256, 32, 0, 255),
            // 0..=232448 by 512 is 455 points (232448 itself is on the grid), 0 given.
            (Variable::Smem, 455, 0, 0, 232_448),
        ] {
            let s = calc.series(variable).unwrap();
            let xs: Vec<u32> = s.points.iter().map(|p| x(variable, p)).collect();
            assert_eq!((s.sweep, xs.len(), s.current), (variable, len, current), "{variable:?}");
            assert_eq!((xs[0], xs[len - 1]), (first, last), "{variable:?}");
            assert!(xs.windows(2).all(|w| w[0] < w[1]), "{variable:?}: ascending, each once");
            assert_eq!(s.points[s.current], calc.point().unwrap().0, "{variable:?}: the marked point is the given one");
        }
    }

    #[test]
    fn a_value_off_the_grid_is_inserted_and_the_swept_memory_keeps_the_static_part() {
        let a = OccupancyArgs { threads: 100, static_smem: 1000, dynamic_smem: 77, ..args("sm_86") };
        let calc = Calculator::new(&a).unwrap();
        let s = calc.series(Variable::Threads).unwrap();
        assert_eq!((s.points.len(), s.current, s.points[3].threads), (33, 3, 100));

        let s = calc.series(Variable::Smem).unwrap();
        let given = &s.points[s.current];
        assert_eq!((given.static_smem, given.dynamic_smem), (1000, 77));
        // Below the static part the sweep is all static; above it the rest is dynamic.
        assert_eq!((s.points[1].static_smem, s.points[1].dynamic_smem), (512, 0));
        let last = s.points.last().unwrap();
        assert_eq!((last.static_smem, last.dynamic_smem), (1000, 101_376 - 1000));
        // sm_86's opt-in limit (99K) is on the 512-byte grid: the grid plus the given 1077.
        assert_eq!(s.points.len(), 101_376 / 512 + 1 + 1);
    }

    #[test]
    fn the_detail_has_the_launch_questions_and_the_limits() {
        let a = OccupancyArgs { registers: 167, ..args("sm_90") };
        let (d, _) = Calculator::new(&a).unwrap().detail().unwrap();
        assert_eq!((d.max_threads_per_block, d.registers_for_one_more_block), (384, Some(128)));
        assert_eq!(d.suggested.map(|s| s.threads), Some(384));
        assert_eq!((d.active_threads, d.launch_error, d.carveout), (256, None, None));
        // The reserved KB per block limits blocks even without shared memory on CC >= 8 (228 KB
        // per SM); barriers limit from 9.0 on.
        assert_eq!((d.block_limits.shared_memory, d.block_limits.barriers), (Some(228), Some(64)));

        let a = OccupancyArgs { registers: 167, threads: 512, carveout: Carveout::Percent(50), ..args("sm_90") };
        let (d, _) = Calculator::new(&a).unwrap().detail().unwrap();
        assert_eq!((d.point.active_blocks, d.carveout), (0, Some(50)));
        let why = d.launch_error.expect("0 blocks: the launch fails, and the detail says why");
        assert!(matches!(why.value, LaunchFailure::Registers { needed: 86_016, .. }), "{why:?}");
        assert!(why.message.contains("86,016 registers per block"), "{why:?}");

        // Below 9.0 barriers set no limit; before 8.0 nothing is reserved, so no shared memory
        // sets none either.
        let (d, _) = Calculator::new(&args("sm_86")).unwrap().detail().unwrap();
        assert_eq!(d.block_limits.barriers, None);
        let (d, _) = Calculator::new(&args("sm_75")).unwrap().detail().unwrap();
        assert_eq!((d.block_limits.shared_memory, d.block_limits.barriers), (None, None));
    }

    #[test]
    fn words_for_the_inputs() {
        assert_eq!((carveout(Carveout::Default), carveout(Carveout::Percent(25))), ("default".into(), "25 %".into()));
        assert_eq!((plural(0), plural(1), plural(2)), ("s", "", "s"));
        let p = Point {
            threads: 64,
            registers: 40,
            static_smem: 1024,
            dynamic_smem: 512,
            active_blocks: 1,
            active_warps: 2,
            max_warps: 64,
            percent: 3.1,
            limiters: Limiters::default(),
        };
        assert_eq!([Variable::Threads, Variable::Registers, Variable::Smem].map(|v| x(v, &p)), [64, 40, 1536]);
    }
}

//! `cargo launch occupancy`: NVIDIA's Occupancy Calculator as a command, for what-if questions
//! with no kernel at hand. Every number comes from `launch::occupancy` (the port of
//! `cuda_occupancy.h`); this module only chooses the inputs, sweeps them and prints.

use std::io::{self, Write};

use anyhow::Context;
use clap::ValueEnum;
use launch::occupancy::{self, Carveout, DeviceLimits, FunctionAttrs, Occupancy, UNLIMITED};
use launch::Arch;
use serde::Serialize;

use crate::cli::{Format, OccupancyArgs, Sweep};
use crate::{exit, plot, Exit};
use launch::analysis::{group, LaunchFailure};

/// Step of the shared-memory sweep, as in the old spreadsheet's graph.
const SMEM_STEP: usize = 512;

/// The most static shared memory ptxas accepts per block (48 KB); more must be dynamic.
const MAX_STATIC_SMEM: u32 = 48 * 1024;

/// One evaluated configuration, the fields of `{"points": [...]}`: the inputs (threads, registers,
/// static and dynamic shared memory in bytes), resident blocks and warps per SM (0 blocks: the
/// launch fails), the SM's warp slots, the occupancy in percent to one decimal (as the report),
/// and every limit that binds, ties included, in the report's words.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub threads: u32,
    pub registers: u32,
    pub static_smem: u32,
    pub dynamic_smem: u32,
    pub active_blocks: u32,
    pub active_warps: u32,
    pub max_warps: u32,
    pub percent: f64,
    pub limiters: Vec<&'static str>,
}

/// One of the calculator's three graphs: the points in ascending order of the varied input, and
/// the index of the given configuration among them.
#[derive(Debug, Clone)]
pub struct Series {
    pub sweep: Sweep,
    pub points: Vec<Point>,
    pub current: usize,
}

impl Series {
    /// The varied input of `p`.
    pub fn x(&self, p: &Point) -> u32 {
        match self.sweep {
            Sweep::Threads => p.threads,
            Sweep::Registers => p.registers,
            Sweep::Smem => p.static_smem + p.dynamic_smem,
        }
    }
}

/// `{"sweep", "current", "points"}`.
#[derive(Serialize)]
struct SweepJson<'a> {
    sweep: String,
    current: usize,
    points: &'a [Point],
}

/// A single configuration in JSON: the point's fields, then the rest of the calculator's answer.
/// Block limits that do not apply (no registers, no shared memory, barriers below 9.0) are null;
/// `suggested` is the point at the block size `cuOccupancyMaxPotentialBlockSize` picks.
#[derive(Serialize)]
struct Detail {
    #[serde(flatten)]
    point: Point,
    arch: Arch,
    carveout: Option<u32>,
    active_threads: u32,
    block_limits: BlockLimits,
    allocated_registers_per_block: u32,
    allocated_smem_per_block: u32,
    max_threads_per_block: u32,
    suggested: Option<Point>,
    /// The most registers per thread with which one more block (`active_blocks + 1`) fits.
    registers_for_one_more_block: Option<u32>,
    launch_error: Option<String>,
}

#[derive(Serialize)]
struct BlockLimits {
    warps: u32,
    registers: Option<u32>,
    shared_memory: Option<u32>,
    blocks: u32,
    barriers: Option<u32>,
}

/// The validated inputs on one architecture.
pub struct Calculator<'a> {
    args: &'a OccupancyArgs,
    dev: &'static DeviceLimits,
}

impl<'a> Calculator<'a> {
    /// Checks what clap cannot: the limits that depend on the arch. Errors exit with code 2.
    pub fn new(a: &'a OccupancyArgs) -> Result<Calculator<'a>, Exit> {
        let usage = |msg: String| Exit::new(exit::USAGE, anyhow::anyhow!(msg));
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
        let f = FunctionAttrs::new(registers, static_smem, self.args.barriers);
        f.with_max_dynamic_shared(f.max_dynamic_shared_on(self.dev).max(dynamic))
    }

    /// Threads, registers, static and dynamic shared memory → the point and the full result.
    fn evaluate(&self, threads: u32, registers: u32, st: u32, dy: u32) -> Result<(Point, Occupancy), Exit> {
        let occ = occupancy::occupancy(self.dev, &self.func(registers, st, dy), threads, dy, self.args.carveout)
            .map_err(|e| Exit::new(exit::FAILURE, anyhow::anyhow!("occupancy on {}: {e}", self.args.arch)))?;
        let point = Point {
            threads,
            registers,
            static_smem: st,
            dynamic_smem: dy,
            active_blocks: occ.active_blocks,
            active_warps: occ.active_warps,
            max_warps: occ.max_warps,
            percent: (occ.percent() * 10.0).round() / 10.0,
            limiters: occ.limiters.iter().map(|l| l.name()).collect(),
        };
        Ok((point, occ))
    }

    /// The given configuration.
    pub fn point(&self) -> Result<(Point, Occupancy), Exit> {
        let a = self.args;
        self.evaluate(a.threads, a.registers, a.static_smem, a.dynamic_smem)
    }

    /// One graph's data: block sizes 32..=1024 by 32, every register count 0..=255, or shared
    /// memory per block 0..=opt-in limit by 512 bytes; the given value is added where it is not
    /// on that grid, so it can always be marked.
    pub fn series(&self, sweep: Sweep) -> Result<Series, Exit> {
        let (a, optin) = (self.args, self.dev.smem_per_block_optin);
        let (mut xs, given): (Vec<u32>, u32) = match sweep {
            Sweep::Threads => ((32..=self.dev.max_threads_per_block).step_by(32).collect(), a.threads),
            Sweep::Registers => ((0..=255).collect(), a.registers),
            Sweep::Smem => ((0..=optin).step_by(SMEM_STEP).chain([optin]).collect(), a.static_smem + a.dynamic_smem),
        };
        xs.push(given);
        xs.sort_unstable();
        xs.dedup();
        let mut points = Vec::with_capacity(xs.len());
        for &x in &xs {
            let (point, _) = match sweep {
                Sweep::Threads => self.evaluate(x, a.registers, a.static_smem, a.dynamic_smem)?,
                Sweep::Registers => self.evaluate(a.threads, x, a.static_smem, a.dynamic_smem)?,
                // The swept amount keeps the given static part (as far as it reaches) and makes
                // the rest dynamic; the calculator only sees their sum.
                Sweep::Smem => self.evaluate(a.threads, a.registers, a.static_smem.min(x), x - a.static_smem.min(x))?,
            };
            points.push(point);
        }
        let current = xs.iter().position(|&x| x == given).expect("the given value was added");
        Ok(Series { sweep, points, current })
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

    fn detail(&self) -> Result<(Detail, Occupancy), Exit> {
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
        let registers = occupancy::registers_for_blocks_with(dev, &func, a.threads, more, a.dynamic_smem, a.carveout);
        let launch_error = (occ.active_blocks == 0).then(|| {
            LaunchFailure::diagnose(
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
            )
            .to_string()
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

fn carveout(c: Carveout) -> String {
    match c {
        Carveout::Default => "default".to_string(),
        Carveout::Percent(p) => format!("{p} %"),
    }
}

fn plural(n: u32) -> &'static str {
    ["s", ""][usize::from(n == 1)]
}

/// Runs `cargo launch occupancy`.
pub fn run(args: &OccupancyArgs) -> Result<(), Exit> {
    let calc = Calculator::new(args)?;
    if let Some(path) = &args.plot {
        let series = [calc.series(Sweep::Threads)?, calc.series(Sweep::Registers)?, calc.series(Sweep::Smem)?];
        let (point, _) = calc.point()?;
        let title = plot::title(&calc.arch_text(), &calc.inputs(), &point);
        let svg = plot::svg(&title, &plot::panels(&series), point.max_warps);
        // The folder must exist: a typo in it is an error, not a new folder tree.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
            return Err(anyhow::anyhow!(
                "writing the plot to {}: the folder {} does not exist",
                path.display(),
                dir.display()
            )
            .into());
        }
        // Written aside and renamed into place: a reader never sees half a picture, a failure
        // leaves any previous file, and a FIFO, link or device at `path` is refused.
        launch_build::out::write_if_changed(path, svg.as_bytes())
            .with_context(|| format!("writing the plot to {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    let mut out = io::stdout().lock();
    let written = match (args.sweep, args.format) {
        (Some(sweep), format) => {
            let s = calc.series(sweep)?;
            match format {
                Format::Text => sweep_text(&mut out, &calc, &s),
                Format::Json => json(
                    &mut out,
                    &SweepJson {
                        sweep: sweep.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string()),
                        current: s.current,
                        points: &s.points,
                    },
                ),
            }
        }
        (None, Format::Text) => calc.detail().map(|(d, occ)| point_text(&mut out, &calc, &d, &occ))?,
        (None, Format::Json) => json(&mut out, &calc.detail()?.0),
    };
    written.context("writing the output")?;
    Ok(())
}

fn json(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(io::Error::from)?;
    writeln!(out)
}

fn sweep_text(out: &mut impl Write, calc: &Calculator, s: &Series) -> io::Result<()> {
    let what = match s.sweep {
        Sweep::Threads => "threads per block",
        Sweep::Registers => "registers per thread",
        Sweep::Smem => "shared memory per block (static + dynamic, bytes)",
    };
    writeln!(out, "{}: occupancy against {what}\ngiven: {}\n", calc.arch_text(), calc.inputs())?;
    writeln!(out, "threads  registers  smem/block  blocks/SM  warps/SM  occupancy  limited by")?;
    for (i, p) in s.points.iter().enumerate() {
        let mark = if i == s.current { "  <- current" } else { "" };
        let limiters = if p.limiters.is_empty() { "-".to_string() } else { p.limiters.join(", ") };
        let (t, r, smem, b, w, pct) =
            (p.threads, p.registers, p.static_smem + p.dynamic_smem, p.active_blocks, p.active_warps, p.percent);
        writeln!(out, "{t:>7}  {r:>9}  {smem:>10}  {b:>9}  {w:>8}  {pct:>8.1} %  {limiters}{mark}")?;
    }
    Ok(())
}

/// The spreadsheet's panels, one `name  value  explanation` line per number: occupancy, the limit
/// of each resource, the allocation per block, the launch questions, the physical limits.
fn point_text(out: &mut impl Write, calc: &Calculator, d: &Detail, occ: &Occupancy) -> io::Result<()> {
    let (a, dev, p, wpb) = (calc.args, calc.dev, &d.point, occ.warps_per_block);
    let dash = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
    let (regs, smem) = (group(occ.allocated_regs_per_block), group(occ.allocated_smem_per_block));
    let (max_warps, sm_regs, sm_smem) = (p.max_warps, group(dev.regs_per_sm), group(dev.smem_per_sm));
    let regs_why = match d.block_limits.registers {
        None => "no registers, no limit".to_string(),
        Some(_) => format!("{sm_regs} registers per SM / {regs} per block"),
    };
    let smem_why = match d.block_limits.shared_memory {
        None => "no shared memory, no limit".to_string(),
        Some(_) => format!("{smem} B per block, carveout {}", carveout(a.carveout)),
    };
    let bars_why = match (occ.block_limit_barriers, dev.barriers_per_sm()) {
        (Some(_), Some(per_sm)) => format!("{per_sm} barriers per SM / {} per block", a.barriers),
        (_, None) => "not limited below compute capability 9.0".to_string(),
        (_, Some(_)) => "no barriers, no limit".to_string(),
    };
    // Registers are allocated per warp; the block's allocation is that times its warps.
    let per_warp = group(occ.allocated_regs_per_block.checked_div(wpb).unwrap_or(0));
    let (r, g, sg) = (a.registers, dev.reg_granularity, dev.smem_granularity);
    let [st, dy, rsv] = [a.static_smem, a.dynamic_smem, dev.reserved_smem_per_block].map(group);
    let (suggested, suggested_why) = match &d.suggested {
        Some(s) => (format!("{} threads", s.threads), {
            let (b, pct) = (s.active_blocks, s.percent);
            format!("{b} block{}/SM, {pct:.1} % (cuOccupancyMaxPotentialBlockSize)", plural(b))
        }),
        None => ("-".to_string(), "no block size launches".to_string()),
    };
    let (more, more_why) = match d.registers_for_one_more_block {
        Some(r) => (format!("≤ {r}"), "registers per thread".to_string()),
        None => ("-".to_string(), "no register count fits".to_string()),
    };
    let more_name = format!("registers for {} block{}/SM", p.active_blocks + 1, plural(p.active_blocks + 1));
    let limiters = if p.limiters.is_empty() { "none".to_string() } else { p.limiters.join(", ") };
    let (threads, sm_threads) = (group(d.active_threads), group(dev.max_threads_per_sm));
    let (block_regs, block_smem, optin) =
        (group(dev.regs_per_block), group(dev.smem_per_block), group(dev.smem_per_block_optin));
    let lines: Vec<(&str, String, String)> = vec![
        ("#Occupancy per SM", String::new(), String::new()),
        ("active blocks", p.active_blocks.to_string(), String::new()),
        ("active warps", p.active_warps.to_string(), format!("of {max_warps}")),
        ("active threads", threads, format!("of {sm_threads}")),
        ("occupancy", format!("{:.1} %", p.percent), String::new()),
        ("limited by", limiters, String::new()),
        ("#Blocks per SM limited by", String::new(), String::new()),
        ("warps", occ.block_limit_warps.to_string(), format!("{max_warps} warps per SM / {wpb} per block")),
        ("registers", dash(d.block_limits.registers), regs_why),
        ("shared memory", dash(d.block_limits.shared_memory), smem_why),
        ("blocks per SM", occ.block_limit_blocks.to_string(), "the architecture's maximum".to_string()),
        ("barriers", dash(occ.block_limit_barriers), bars_why),
        ("#Allocation per block", String::new(), String::new()),
        ("warps", wpb.to_string(), String::new()),
        ("registers", regs, format!("{per_warp} per warp ({r} × 32 rounded up to {g}) × {wpb} warps")),
        (
            "shared memory",
            format!("{smem} B"),
            format!("{st} B static + {dy} B dynamic + {rsv} B reserved, in units of {sg} B"),
        ),
        ("#Launch", String::new(), String::new()),
        (
            "largest launchable block",
            format!("{} threads", d.max_threads_per_block),
            "(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)".into(),
        ),
        ("suggested block size", suggested, suggested_why),
        (&more_name, more, more_why),
        ("#Physical limits of", String::new(), format!("compute capability {}.{}", dev.major, dev.minor)),
        (
            "per SM",
            format!("{max_warps} warps"),
            format!(
                "{sm_threads} threads, {} blocks, {sm_regs} registers, {sm_smem} B shared memory",
                dev.max_blocks_per_sm
            ),
        ),
        (
            "per block",
            format!("{} threads", dev.max_threads_per_block),
            format!("{block_regs} registers, {block_smem} B shared memory ({optin} B opt-in)"),
        ),
        (
            "per thread",
            "255 registers".to_string(),
            format!("allocated per warp in units of {g}; shared memory in units of {sg} B"),
        ),
    ];
    writeln!(out, "{}: {}", calc.arch_text(), calc.inputs())?;
    for (name, value, why) in &lines {
        match name.strip_prefix('#') {
            Some(title) => writeln!(out, "\n{}", format!("{title} {why}").trim_end())?,
            None => writeln!(out, "{}", format!("  {name:<30}{value:<14}{why}").trim_end())?,
        }
        if let ("limited by", Some(e)) = (*name, &d.launch_error) {
            writeln!(out, "  cannot launch: {e}")?;
        }
    }
    Ok(())
}

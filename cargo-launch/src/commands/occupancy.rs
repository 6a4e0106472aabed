//! `cargo launch occupancy`: NVIDIA's Occupancy Calculator as a command, for what-if questions
//! with no kernel at hand. The numbers come from [`Calculator`]; this module prints them as text,
//! JSON (`launch_schema::occupancy`) or an SVG plot.

use std::io::{self, Write};

use anyhow::Context;
use launch::occupancy::Occupancy;
use launch_schema::occupancy::{Detail, Sweep, Variable};
use serde::Serialize;

use crate::calculator::{carveout, plural, Calculator};
use crate::cli::{Format, OccupancyArgs};
use crate::error::Error;
use crate::output::{occupancy_plot, svg};
use crate::words::group;

/// Runs `cargo launch occupancy`.
pub(crate) fn run(args: &OccupancyArgs) -> Result<(), Error> {
    // A plot that cannot be written fails before anything is computed.
    if let Some(path) = &args.plot {
        svg::check_destination(path)?;
    }
    let calc = Calculator::new(args)?;
    if let Some(path) = &args.plot {
        let series = [calc.series(Variable::Threads)?, calc.series(Variable::Registers)?, calc.series(Variable::Smem)?];
        let (point, _) = calc.point()?;
        let title = occupancy_plot::title(&calc.arch_text(), &calc.inputs(), &point);
        let svg = occupancy_plot::svg(&title, &occupancy_plot::panels(&series), point.max_warps);
        svg::write_file(path, &svg)?;
    }
    let mut out = crate::stdout::stdout();
    let written = match (args.sweep, args.format) {
        (Some(sweep), format) => {
            let s = calc.series(sweep.into())?;
            match format {
                Format::Text => sweep_text(&mut out, &calc, &s),
                Format::Json => json(&mut out, &s),
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

fn sweep_text(out: &mut impl Write, calc: &Calculator, s: &Sweep) -> io::Result<()> {
    let what = match s.sweep {
        Variable::Threads => "threads per block",
        Variable::Registers => "registers per thread",
        Variable::Smem => "shared memory per block (static + dynamic, bytes)",
    };
    writeln!(out, "{}: occupancy against {what}\ngiven: {}\n", calc.arch_text(), calc.inputs())?;
    writeln!(out, "threads  registers  smem/block  blocks/SM  warps/SM  occupancy  limited by")?;
    for (i, p) in s.points.iter().enumerate() {
        let mark = if i == s.current { "  <- current" } else { "" };
        let limiters = if p.limiters.is_empty() { "-".to_string() } else { p.limiters.to_string() };
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
    // Limiters's words: the names joined by ", ", or "none".
    let limiters = p.limiters.to_string();
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
            writeln!(out, "  cannot launch: {}", e.message)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use launch::occupancy::Carveout;

    use super::*;
    use crate::calculator::tests::args;

    #[test]
    fn a_sweep_is_one_row_per_point_with_the_given_one_marked() {
        let a = OccupancyArgs { registers: 167, ..args("sm_90") };
        let calc = Calculator::new(&a).unwrap();
        let mut out = Vec::new();
        sweep_text(&mut out, &calc, &calc.series(Variable::Threads).unwrap()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("sm_90 (GH100, compute capability 9.0): occupancy against threads per block\n"));
        let rows: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).collect();
        assert_eq!(rows.len(), 32, "{text}");
        let marked: Vec<&&str> = rows.iter().filter(|l| l.ends_with("<- current")).collect();
        assert_eq!(marked.len(), 1, "{text}");
        assert!(marked[0].contains("12.5 %  registers"), "{}", marked[0]);
    }

    #[test]
    fn the_panels_say_why_a_launch_fails_right_after_what_limits_it() {
        let a = OccupancyArgs { registers: 167, threads: 512, carveout: Carveout::Percent(50), ..args("sm_90") };
        let calc = Calculator::new(&a).unwrap();
        let (d, occ) = calc.detail().unwrap();
        let mut out = Vec::new();
        point_text(&mut out, &calc, &d, &occ).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let at = lines.iter().position(|l| l.trim_start().starts_with("limited by")).expect(&text);
        assert!(lines[at + 1].starts_with("  cannot launch: 167 registers × 512 threads"), "{text}");
        assert!(text.contains("carveout 50 %"), "{text}");
        for title in ["Occupancy per SM", "Blocks per SM limited by", "Allocation per block", "Launch"] {
            assert!(lines.contains(&title), "{title}: {text}");
        }
    }
}

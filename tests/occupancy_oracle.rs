//! `launch::occupancy` against NVIDIA's own calculator: compiles `oracle/occupancy_oracle.c`
//! with the toolchain's `cuda_occupancy.h` (CUDA 12.9), runs it over its grid (~250 000 points:
//! 20 compute capabilities × registers 0…257 × static/dynamic shared memory × barriers × block
//! sizes × carveouts × limit configurations × partitioned caching, plus max threads per block,
//! the potential block size, available dynamic shared memory and registers-for-N-blocks), and
//! recomputes every line with the Rust port. Any difference fails, showing the first rows.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use launch::occupancy::{
    available_dynamic_smem_per_block, max_potential_block_size, max_threads_per_block, occupancy, registers_for_blocks,
    Carveout, DeviceLimits, FunctionAttrs, OccupancyError, PartitionedGc, ShmemLimitConfig,
};

const ORACLE_SOURCE: &str = include_str!("oracle/occupancy_oracle.c");

/// SM count the oracle gives the potential block size (an H200's).
const NUM_SMS: u32 = 132;

/// Fewest rows a complete oracle run prints; guards against a truncated grid.
const MIN_ROWS: usize = 200_000;

#[test]
fn occupancy_matches_cuda_occupancy_h() {
    let include = crate::support::toolchain_root().join("nvidia/cuda_runtime/include");
    assert!(include.join("cuda_occupancy.h").is_file(), "{} has no cuda_occupancy.h", include.display());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("occupancy-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let output = run_oracle(&dir, &include);
    let _ = std::fs::remove_dir_all(&dir);

    let mut rows = 0usize;
    let mut declared = None;
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut mismatches = Vec::new();
    let mut potentials = HashMap::new();
    for line in output.lines() {
        let (input, want) = line.split_once(" | ").unwrap_or_else(|| panic!("malformed oracle line: {line}"));
        let kind = input.split(' ').next().unwrap_or_default();
        if kind == "end" {
            declared = input.split(' ').nth(1).and_then(|n| n.parse::<usize>().ok());
            continue;
        }
        let got = evaluate(input, &mut potentials);
        rows += 1;
        *counts.entry(kind).or_default() += 1;
        if got != want {
            mismatches.push(format!("  {input}\n    header: {want}\n    rust:   {got}"));
        }
    }
    let mut summary: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    summary.sort();
    eprintln!("occupancy oracle: {rows} rows compared ({}), {} mismatches", summary.join(", "), mismatches.len());
    assert_eq!(declared, Some(rows), "the oracle's output is incomplete");
    assert!(rows >= MIN_ROWS, "only {rows} oracle rows");
    if !mismatches.is_empty() {
        let first: Vec<&String> = mismatches.iter().take(20).collect();
        panic!(
            "{} of {rows} rows differ from cuda_occupancy.h; first {}:\n{}",
            mismatches.len(),
            first.len(),
            first.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
        );
    }
}

/// Compiles and runs the oracle in `dir`; returns its standard output.
fn run_oracle(dir: &Path, include: &Path) -> String {
    let source = dir.join("occupancy_oracle.c");
    std::fs::write(&source, ORACLE_SOURCE).unwrap();
    let exe: PathBuf = dir.join("occupancy_oracle");
    let mut failures = Vec::new();
    let mut built = false;
    for compiler in ["cc", "gcc"] {
        let result = Command::new(compiler)
            .args(["-std=c99", "-O2", "-o"])
            .arg(&exe)
            .arg("-I")
            .arg(include)
            .arg(&source)
            .output();
        match result {
            Ok(out) if out.status.success() => {
                built = true;
                break;
            }
            Ok(out) => failures.push(format!("{compiler}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr))),
            Err(e) => failures.push(format!("{compiler}: {e}")),
        }
    }
    assert!(built, "cannot compile the occupancy oracle:\n{}", failures.join("\n"));
    let out = Command::new(&exe).output().expect("run the occupancy oracle");
    assert!(out.status.success(), "occupancy oracle failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("oracle output is ASCII")
}

/// The Rust port's answer for the `<outputs>` part of one oracle line.
fn evaluate(input: &str, potentials: &mut HashMap<String, String>) -> String {
    let t: Vec<&str> = input.split(' ').collect();
    match t[0] {
        "hdr" => "12 1".to_string(),
        "dev" => device_line(device(t[1])),
        "occ" => {
            // occ CC FUNC(7) dyn carveout block
            let dev = device(t[1]);
            let func = function(&t[2..9]);
            let dynamic = num(t[9]);
            let carveout = Carveout::from_raw(int(t[10]));
            let block = num(t[11]);
            let occ = match occupancy(dev, &func, block, dynamic, carveout) {
                Ok(o) => {
                    let bars = o.block_limit_barriers.map_or_else(|| "-".to_string(), |b| b.to_string());
                    let gc = match o.partitioned_gc {
                        PartitionedGc::Off => 0,
                        PartitionedGc::On => 1,
                        PartitionedGc::OnStrict => 2,
                    };
                    format!(
                        "ok {} {} 0x{:02x} {} {} {} {} {} {} {} {}",
                        o.active_blocks,
                        o.active_warps,
                        o.limiters.bits(),
                        o.block_limit_regs,
                        o.block_limit_smem,
                        o.block_limit_warps,
                        o.block_limit_blocks,
                        bars,
                        o.allocated_regs_per_block,
                        o.allocated_smem_per_block,
                        gc
                    )
                }
                Err(e) => error(&e),
            };
            // The potential block size does not depend on the block size: compute it once.
            let key = t[..11].join(" ");
            let pot = potentials.entry(key).or_insert_with(|| potential(dev, &func, dynamic, carveout)).clone();
            format!("{occ} ; {pot}")
        }
        "pot" => {
            // pot CC FUNC(7) dyn carveout
            let dev = device(t[1]);
            let func = function(&t[2..9]);
            potential(dev, &func, num(t[9]), Carveout::from_raw(int(t[10])))
        }
        "mtpb" => {
            let dev = device(t[1]);
            max_threads_per_block(dev, num(t[2]), opt(t[3])).to_string()
        }
        "avail" => {
            // avail CC FUNC(7) numBlocks block carveout
            let dev = device(t[1]);
            let func = function(&t[2..9]);
            let carveout = Carveout::from_raw(int(t[11]));
            match available_dynamic_smem_per_block(dev, &func, num(t[9]), num(t[10]), carveout) {
                Ok(bytes) => format!("ok {bytes}"),
                Err(e) => error(&e),
            }
        }
        "rfb" => {
            // rfb CC block blocks static dyn
            let dev = device(t[1]);
            registers_for_blocks(dev, num(t[2]), num(t[3]), num(t[4]), num(t[5]))
                .map_or_else(|| "-".to_string(), |r| r.to_string())
        }
        other => panic!("unknown oracle line kind `{other}`"),
    }
}

/// "MTPB ; POT" as the oracle prints it.
fn potential(dev: &DeviceLimits, func: &FunctionAttrs, dynamic: u32, carveout: Carveout) -> String {
    let mtpb = max_threads_per_block(dev, func.registers, func.max_threads_per_block);
    let pot = match max_potential_block_size(dev, func, dynamic, NUM_SMS, carveout) {
        Ok((grid, block)) => format!("ok {grid} {block}"),
        Err(e) => error(&e),
    };
    format!("{mtpb} ; {pot}")
}

fn device_line(d: &DeviceLimits) -> String {
    let mut s = format!(
        "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} ",
        d.max_threads_per_block,
        d.max_threads_per_sm,
        d.regs_per_block,
        d.regs_per_sm,
        d.warp_size,
        d.smem_per_block,
        d.smem_per_sm,
        d.smem_per_block_optin,
        d.reserved_smem_per_block,
        d.max_blocks_per_sm,
        d.smem_granularity,
        d.reg_granularity,
        d.sub_partitions,
        d.max_regs_per_thread,
        d.barriers_per_block_slot,
        u8::from(d.partitioned_gc)
    );
    if d.carveout_kb.is_empty() {
        s.push('-');
    } else {
        for (i, kb) in d.carveout_kb.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(s, "{sep}{}", kb * 1024).unwrap();
        }
    }
    s
}

/// FUNC = regs static barriers maxdyn(def) shmemcfg gc maxntid(-)
fn function(t: &[&str]) -> FunctionAttrs {
    FunctionAttrs {
        registers: num(t[0]),
        shared_static: num(t[1]),
        barriers: num(t[2]),
        max_dynamic_shared: if t[3] == "def" { None } else { Some(num(t[3])) },
        shmem_limit: match t[4] {
            "0" => ShmemLimitConfig::Default,
            "1" => ShmemLimitConfig::OptIn,
            other => panic!("shmem limit config {other}"),
        },
        partitioned_gc: match t[5] {
            "0" => PartitionedGc::Off,
            "1" => PartitionedGc::On,
            "2" => PartitionedGc::OnStrict,
            other => panic!("partitioned GC config {other}"),
        },
        max_threads_per_block: opt(t[6]),
    }
}

fn device(cc: &str) -> &'static DeviceLimits {
    let (major, minor) = cc.split_once('.').expect("CC as major.minor");
    DeviceLimits::for_compute_capability(num(major), num(minor))
        .unwrap_or_else(|| panic!("compute capability {cc} is not in the Rust table"))
}

fn error(e: &OccupancyError) -> String {
    format!("err {}", e.code())
}

fn num(s: &str) -> u32 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s}"))
}

fn int(s: &str) -> i32 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s}"))
}

fn opt(s: &str) -> Option<u32> {
    (s != "-").then(|| num(s))
}

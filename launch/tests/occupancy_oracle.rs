//! `launch::occupancy` against NVIDIA's own calculator: compiles `oracle/occupancy_oracle.c`
//! with the toolchain's `cuda_occupancy.h` (CUDA 12.9; see header.rs for where it is found), runs it over its grid (~250 000 points:
//! 20 compute capabilities × registers 0…257 × static/dynamic shared memory × barriers × block
//! sizes × carveouts × limit configurations × partitioned caching, plus max threads per block,
//! the potential block size, available dynamic shared memory and registers-for-N-blocks), and
//! recomputes every line with the Rust port. Any difference fails, showing the first rows.
//!
//! A second test compares millions of occupancy points as binary records (the oracle's points
//! mode): every register count 0..=255 × every block size 1..=1024 on sm_90 for four settings of
//! static shared memory, barriers, dynamic shared memory and carveout; the same on every
//! architecture with eight settings striped over the register counts; and random points drawn
//! afresh on every run (the seed is printed; `LAUNCH_ORACLE_SEED` repeats a run).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use launch::occupancy::{
    available_dynamic_smem_per_block, max_potential_block_size, max_threads_per_block, occupancy, registers_for_blocks,
    Carveout, DeviceLimits, FunctionAttrs, OccupancyError, PartitionedGc, ShmemLimitConfig, UNLIMITED,
};

const ORACLE_SOURCE: &str = include_str!("oracle/occupancy_oracle.c");

/// SM count the oracle gives the potential block size (an H200's).
const NUM_SMS: u32 = 132;

/// Fewest rows a complete oracle run prints; guards against a truncated grid.
const MIN_ROWS: usize = 200_000;

#[test]
fn occupancy_matches_cuda_occupancy_h() {
    let Some(include) = crate::header::include_dir("occupancy_oracle::occupancy_matches_cuda_occupancy_h") else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("occupancy-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = compile_oracle(&dir, &include);
    let out = Command::new(&exe).output().expect("run the occupancy oracle");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "occupancy oracle failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    let output = String::from_utf8(out.stdout).expect("oracle output is ASCII");

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

/// Compiles the oracle in `dir`; returns the executable.
fn compile_oracle(dir: &Path, include: &Path) -> PathBuf {
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
    exe
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
            // The oracle's kernel: one barrier, the default carveout, opted in to `dyn` bytes.
            let dynamic = num(t[5]);
            let func = FunctionAttrs::new(0, num(t[4]), 1).opted_in(dev, dynamic);
            registers_for_blocks(dev, &func, num(t[2]), num(t[3]), dynamic, Carveout::Default)
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
    DeviceLimits::lookup(num(major), num(minor))
        .ok()
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

/// Random points per run, on top of the exhaustive parts.
const RANDOM_POINTS: u32 = 250_000;

/// Fields of one points-mode record (see the oracle's "Points mode" comment).
const FIELDS: usize = 22;

/// Points of the exhaustive parts: sm_90 × 4 settings and every arch × 1, each 256 × 1024.
const EXHAUSTIVE_POINTS: usize = (4 + 20) * 256 * 1024;

#[test]
fn occupancy_matches_cuda_occupancy_h_on_millions_of_points() {
    let started = Instant::now();
    let Some(include) =
        crate::header::include_dir("occupancy_oracle::occupancy_matches_cuda_occupancy_h_on_millions_of_points")
    else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("occupancy-points-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = compile_oracle(&dir, &include);
    #[allow(clippy::disallowed_methods)] // a test switch, not build configuration
    let seed = std::env::var_os("LAUNCH_ORACLE_SEED")
        .map(|s| s.to_string_lossy().trim().parse::<u64>().expect("LAUNCH_ORACLE_SEED is a number"))
        .unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64));
    eprintln!("occupancy points: random seed {seed} (LAUNCH_ORACLE_SEED={seed} repeats this run)");
    // The records stream through a pipe and are checked as they come: the oracle computes the
    // next ones while the (debug-built) port checks these, and nothing is held in memory.
    let mut child = Command::new(&exe)
        .args(["points", &seed.to_string(), &RANDOM_POINTS.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the occupancy oracle");
    let mut stdout = child.stdout.take().expect("piped stdout");

    // Points per part; sm_90's settings (noted at the start of each row, block size 1, to keep
    // the per-point work small) and the architectures of the every-arch part.
    let mut per_part = [0usize; 3];
    let mut sm90_settings: Vec<(i32, i32, i32, i32)> = Vec::new();
    let mut arches = 0u128;
    // Device rows by 10 × major + minor, looked up once.
    let mut devices: [Option<&'static DeviceLimits>; 128] = [None; 128];
    for d in DeviceLimits::all() {
        devices[(d.major * 10 + d.minor) as usize] = Some(d);
    }
    let (mut compared, mut mismatched, mut declared) = (0usize, 0usize, None);
    let mut first = Vec::new();
    // Whole batches of records per read: the per-record work in this debug build is then only
    // the decoding, the port and the comparison.
    let mut batch = vec![0u8; FIELDS * 4 * 8192];
    'stream: loop {
        let filled = fill(&mut stdout, &mut batch);
        for bytes in batch[..filled].chunks_exact(FIELDS * 4) {
            let b: &[u8; FIELDS * 4] = bytes.try_into().expect("chunks_exact gives whole records");
            let rec: [i32; FIELDS] =
                std::array::from_fn(|i| i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]));
            if rec[0] == -1 {
                declared = Some(rec[1] as usize);
                break 'stream;
            }
            let dev = devices
                .get(rec[1] as usize)
                .copied()
                .flatten()
                .unwrap_or_else(|| panic!("compute capability {} is not in the Rust table", rec[1]));
            let got = point(dev, &rec);
            compared += 1;
            per_part[rec[0] as usize] += 1;
            if rec[10] == 1 && rec[0] == 0 && !sm90_settings.contains(&(rec[3], rec[4], rec[8], rec[9])) {
                sm90_settings.push((rec[3], rec[4], rec[8], rec[9]));
            }
            if rec[0] == 1 {
                arches |= 1 << rec[1];
            }
            if got[..] != rec[11..] {
                mismatched += 1;
                if first.len() < 20 {
                    first.push(format!("  inputs {:?}\n    header: {:?}\n    rust:   {got:?}", &rec[..11], &rec[11..]));
                }
            }
        }
        if filled < batch.len() {
            break;
        }
    }
    let status = child.wait().expect("wait for the occupancy oracle");
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "occupancy points: {compared} points compared (sm_90 exhaustive {}, every arch exhaustive {}, random {}), \
         {mismatched} mismatches, {:.1} s",
        per_part[0],
        per_part[1],
        per_part[2],
        started.elapsed().as_secs_f64()
    );
    assert!(status.success(), "occupancy oracle failed: {status}");
    assert_eq!(declared, Some(compared), "the oracle's output is incomplete");
    assert_eq!(per_part[0] + per_part[1], EXHAUSTIVE_POINTS, "exhaustive parts incomplete");
    assert_eq!(per_part[2], RANDOM_POINTS as usize);
    assert_eq!(sm90_settings.len(), 4, "sm_90 settings: {sm90_settings:?}");
    assert_eq!(arches.count_ones() as usize, DeviceLimits::all().len(), "every arch in the exhaustive part");
    assert!(compared >= 1_000_000);
    assert!(
        mismatched == 0,
        "{mismatched} of {compared} points differ from cuda_occupancy.h (seed {seed}); first:\n{}",
        first.join("\n")
    );
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> usize {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => panic!("reading the oracle's output: {e}"),
        }
    }
    filled
}

/// The port's answer to one record's inputs, in the record's output fields.
fn point(dev: &DeviceLimits, rec: &[i32; FIELDS]) -> [i32; FIELDS - 11] {
    let func = FunctionAttrs {
        registers: rec[2] as u32,
        shared_static: rec[3] as u32,
        barriers: rec[4] as u32,
        max_dynamic_shared: (rec[5] >= 0).then_some(rec[5] as u32),
        shmem_limit: if rec[6] == 0 { ShmemLimitConfig::Default } else { ShmemLimitConfig::OptIn },
        partitioned_gc: match rec[7] {
            0 => PartitionedGc::Off,
            1 => PartitionedGc::On,
            _ => PartitionedGc::OnStrict,
        },
        max_threads_per_block: None,
    };
    let mut out = [0i32; FIELDS - 11];
    match occupancy(dev, &func, rec[10] as u32, rec[8] as u32, Carveout::from_raw(rec[9])) {
        Ok(o) => {
            let gc = match o.partitioned_gc {
                PartitionedGc::Off => 0,
                PartitionedGc::On => 1,
                PartitionedGc::OnStrict => 2,
            };
            // The header's INT_MAX for "does not limit" is the port's UNLIMITED / None.
            let bars = o.block_limit_barriers.unwrap_or(UNLIMITED);
            out = [
                0,
                o.active_blocks as i32,
                i32::from(o.limiters.bits()),
                o.block_limit_regs as i32,
                o.block_limit_smem as i32,
                o.block_limit_warps as i32,
                o.block_limit_blocks as i32,
                bars as i32,
                o.allocated_regs_per_block as i32,
                o.allocated_smem_per_block as i32,
                gc,
            ];
        }
        Err(e) => out[0] = e.code(),
    }
    out
}

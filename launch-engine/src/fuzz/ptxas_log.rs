//! `crate::ptxas_log::parse`: the recorded logs of fixtures/ptxas/ mutated, logs built
//! from the grammar with known numbers, random bytes.

use fuzz_harness::{ensure, mutate, random_bytes, run, text, Input, Rng};

use super::PACKAGE;
use crate::ptxas_log::{self, PtxasLog};

/// One generated entry: name, arch, registers, barriers, stack frame, spill stores, spill loads,
/// static shared memory.
type Expected = (String, String, u64, u64, u64, u64, u64, u64);

const EXTRA: &[&[u8]] = &[
    b"ptxas info    : ",
    b"ptxas         .     ",
    b"Used ",
    b" registers",
    b" bytes stack frame",
    b" bytes spill stores",
    b" bytes smem",
    b"cmem[",
    b"Compiling entry function '",
    b"Function properties for ",
    b"ptxas warning : ",
    b"ptxas error   : ",
    b", line ",
    b"Compile time = ",
];

/// A log from the grammar of `shared/reference/ptxas-output.md`, in ptxas's or NVRTC's form.
/// With `bad`, one number is out of range (the parse must fail or not report that number).
fn generate(rng: &mut Rng, bad: bool) -> (String, Vec<Expected>) {
    let nvrtc = rng.one_in(2);
    let eol = if rng.one_in(8) { "\r\n" } else { "\n" };
    let mut s = String::new();
    let mut expected = Vec::new();
    let n = |rng: &mut Rng| if rng.one_in(6) { rng.range(0, u32::MAX as u64) } else { rng.range(0, 255) };
    if rng.one_in(2) {
        s += &format!("ptxas info    : {} bytes gmem, {} bytes cmem[3]{eol}", n(rng), n(rng));
    }
    let bad_at = if bad { Some(rng.below(6)) } else { None };
    let entries = rng.range(1, 6) as usize;
    let bad_entry = rng.below(entries);
    for e in 0..entries {
        let name = if rng.one_in(2) {
            format!("_Z{}k{e}Pf", 2 + e.to_string().len())
        } else {
            format!("k{e}_{}", rng.ident())
        };
        let arch = rng.pick(launch::KNOWN_ARCHES).to_string();
        let mut v: Vec<String> = (0..6).map(|_| n(rng).to_string()).collect();
        if let (Some(i), true) = (bad_at, e == bad_entry) {
            v[i] = rng
                .pick(&["4294967296", "99999999999999999999", "18446744073709551617", "-1", "4294967327"])
                .to_string();
        }
        if rng.one_in(4) {
            s += &format!("nvrtc remark: something about {name}{eol}");
        }
        s += &format!("ptxas info    : Compiling entry function '{name}' for '{arch}'{eol}");
        s += &format!("ptxas info    : Function properties for {name}{eol}");
        let lead = if nvrtc { "ptxas         .     " } else { "    " };
        s += &format!("{lead}{} bytes stack frame, {} bytes spill stores, {} bytes spill loads{eol}", v[2], v[3], v[4]);
        s += &format!("ptxas info    : Used {} registers, used {} barriers", v[0], v[1]);
        if rng.one_in(2) {
            s += &format!(", {} bytes cumulative stack size", n(rng));
        }
        s += &format!(", {} bytes smem", v[5]);
        if rng.one_in(2) {
            s += &format!(", {} bytes cmem[0]", n(rng));
        }
        s += eol;
        if rng.one_in(2) {
            s += &format!("ptxas info    : Compile time = {}.{:03} ms{eol}", rng.range(0, 99), rng.range(0, 999));
        }
        let num = |i: usize| v[i].parse::<u64>().unwrap_or(u64::MAX);
        expected.push((name, arch, num(0), num(1), num(2), num(3), num(4), num(5)));
    }
    if rng.one_in(3) {
        s += &format!("ptxas t.ptx, line {}; warning : .minnctapersm is ignored{eol}", n(rng));
    }
    (s, if bad { Vec::new() } else { expected })
}

/// Properties of any parse: every line the result holds is a line of the log, every number it
/// reports is printed in the line it came from, an error names a real line.
fn consistent(log: &str, parsed: &Result<PtxasLog, ptxas_log::ParseError>) -> Result<(), String> {
    let lines: Vec<&str> = log.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let is_line = |l: &str| lines.contains(&l);
    let p = match parsed {
        Err(e) => {
            return ensure(e.line_no >= 1 && lines.get(e.line_no - 1) == Some(&e.line.as_str()), || {
                format!("the error names line {} as {:?}, which is not that line of the log", e.line_no, e.line)
            })
        }
        Ok(p) => p,
    };
    if let Some(g) = p.gmem {
        ensure(printed(&lines, g, " bytes gmem"), || format!("gmem {g} is not in the log"))?;
    }
    for e in &p.entries {
        let r = &e.resources;
        for l in &e.lines {
            ensure(is_line(l), || format!("entry {}: {l:?} is not a line of the log", e.name))?;
        }
        match e.used_line() {
            Some(used) => {
                ensure(printed(&[used], r.registers, " register"), || {
                    format!("entry {}: {} registers, but its line says {used:?}", e.name, r.registers)
                })?;
                if r.shared_static != 0 {
                    ensure(printed(&[used], r.shared_static, " bytes smem"), || {
                        format!("entry {}: {} bytes smem, but its line says {used:?}", e.name, r.shared_static)
                    })?;
                }
                if e.barriers_reported() {
                    ensure(printed(&[used], r.barriers, " barrier"), || {
                        format!("entry {}: {} barriers, but its line says {used:?}", e.name, r.barriers)
                    })?;
                }
            }
            None => {
                ensure(r.registers == 0, || format!("entry {}: {} registers without a Used line", e.name, r.registers))?
            }
        }
        stack_line(&e.name, &e.lines, r.stack_frame, r.spill_stores, r.spill_loads)?;
    }
    for f in &p.functions {
        for l in &f.lines {
            ensure(is_line(l), || format!("function {}: {l:?} is not a line of the log", f.name))?;
        }
        stack_line(&f.name, &f.lines, f.stack_frame, f.spill_stores, f.spill_loads)?;
    }
    for d in &p.diagnostics {
        ensure(is_line(&d.raw), || format!("diagnostic {:?} is not a line of the log", d.raw))?;
        if let Some(n) = d.line {
            // The number as ptxas wrote it, compared by value (`line 03` is line 3).
            let said = d.raw.split("line ").skip(1).filter_map(|t| {
                let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
                digits.parse::<u64>().ok()
            });
            let mut said = said;
            ensure(said.any(|v| v == u64::from(n)), || format!("diagnostic at line {n}, but it says {:?}", d.raw))?;
        }
    }
    Ok(())
}

/// Whether some line prints `value` (leading zeros allowed) right before `suffix`.
fn printed<S: AsRef<str>>(lines: &[S], value: impl Into<u128>, suffix: &str) -> bool {
    let value = value.into();
    lines.iter().any(|l| {
        let l = l.as_ref();
        l.match_indices(suffix).any(|(at, _)| {
            let before = &l[..at];
            let digits = &before[before.trim_end_matches(|c: char| c.is_ascii_digit()).len()..];
            digits.parse::<u128>().ok() == Some(value)
        })
    })
}

/// The stack/spill numbers of a block are printed in its lines (a field the log does not print
/// in its known shape reads as 0).
fn stack_line(name: &str, lines: &[String], stack: u32, stores: u32, loads: u32) -> Result<(), String> {
    for (what, v) in [(" bytes stack frame", stack), (" bytes spill stores", stores), (" bytes spill loads", loads)] {
        ensure(v == 0 || printed(lines, v, what), || format!("{name}: {v}{what}, but its lines say {lines:?}"))?;
    }
    Ok(())
}

#[test]
fn ptxas_log() {
    let corpus = super::corpus(&["fixtures/ptxas"], &[".log"]);
    run(
        PACKAGE,
        "ptxas_log",
        move |rng| match rng.below(10) {
            0..=3 => {
                let base = rng.pick_ref(&corpus).clone();
                Input::new(text(&mutate(rng, base.as_bytes(), EXTRA)), None)
            }
            4..=6 => {
                let (log, expected) = generate(rng, false);
                Input::new(log, Some(expected))
            }
            7 | 8 => {
                let (log, _) = generate(rng, true);
                Input::new(log, None)
            }
            _ => Input::new(text(&random_bytes(rng)), None),
        },
        |input| {
            let log = input.str();
            let parsed = ptxas_log::parse(log);
            consistent(log, &parsed)?;
            if let Some(expected) = &input.expect {
                let p = parsed.map_err(|e| format!("a well-formed log fails: {e}"))?;
                let got: Vec<Expected> = p
                    .entries
                    .iter()
                    .map(|e| {
                        let r = &e.resources;
                        let n = |v: u32| v as u64;
                        (
                            e.name.clone(),
                            e.arch.clone(),
                            n(r.registers),
                            n(r.barriers),
                            n(r.stack_frame),
                            n(r.spill_stores),
                            n(r.spill_loads),
                            n(r.shared_static),
                        )
                    })
                    .collect();
                ensure(&got == expected, || format!("parsed {got:?}"))?;
            }
            Ok(())
        },
    );
}

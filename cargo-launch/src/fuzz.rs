//! Property and fuzz target for cargo-launch's parser (the harness, its variables and the long-run
//! command: the `fuzz-harness` crate); a unit test, so it reaches the parser through `crate::`.
//!
//! The baseline of `cargo launch check` (`crate::baseline::{render, parse}`): a rendered
//! baseline parses back to the same records, whatever its kernel keys hold (spaces, `<>`, `::`,
//! `/`, `%`, `#`, tabs, non-ASCII); a version-2 file, whose display names may hold spaces, reads
//! as its records; one with a record missing, duplicated or cut short is refused (never read as
//! fewer or other records); whatever parses as the current version renders back to itself.

use std::path::Path;

use fuzz_harness::{ensure, mutate, random_bytes, run, text, Input, Rng};

use crate::baseline::{self, Baseline, Entry};

/// What a demangled display name can look like: spaces, `<>`, `::`, `()`, `*`, non-ASCII.
fn display_name(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => rng.ident(),
        1 => format!("void {}<{}>(int*)", rng.ident(), rng.range(0, 512)),
        2 => format!("void {}::{}(float const*, unsigned long)", rng.ident(), rng.ident()),
        3 => format!("{}<{}>", rng.ident(), rng.range(0, 512)),
        4 => format!("kernels/{}.cu::{}", rng.ident(), rng.ident()),
        _ => format!("{}_{}", rng.ident(), rng.pick(&["π", "ñ", "核", "é"])),
    }
}

/// A record key as `--bless` writes it (file and symbol), or any display name.
fn kernel_key(rng: &mut Rng) -> String {
    if rng.one_in(4) {
        return display_name(rng);
    }
    let mut file = String::from("kernels/");
    for _ in 0..rng.range(1, 3) {
        let part = match rng.below(7) {
            0 => format!("{} {}", rng.ident(), rng.ident()),
            1 => format!("{}%{}", rng.ident(), rng.range(0, 100)),
            2 => format!("#{}", rng.ident()),
            3 => format!("{}\t{}", rng.ident(), rng.ident()),
            4 => format!("{}\u{a0}ü", rng.ident()),
            _ => rng.ident(),
        };
        file.push_str(&part);
        file.push('/');
    }
    file.push_str(&format!("{}.cu", rng.ident()));
    let symbol = match rng.below(3) {
        0 => rng.ident(),
        1 => format!("_Z{}{}Pf", rng.range(1, 9), rng.ident()),
        _ => format!("_Z4tmplILi{}EEvPi", rng.range(0, 512)),
    };
    baseline::key(&file, &symbol)
}

/// A record as the current version writes it: every field of the table, an optional one (`cmem`)
/// sometimes not printed.
fn entry(rng: &mut Rng) -> Entry {
    let mut r = launch::Resources::ZERO;
    for f in launch::Resources::FIELDS {
        let optional = (f.get)(&launch::Resources::ZERO).is_none();
        let v = if optional && rng.one_in(2) { None } else { Some(rng.number() as u32) };
        (f.set)(&mut r, v);
    }
    // Occupancy is written with one decimal, a percentage.
    Entry::of(&r, rng.range(0, 1000) as f64 / 10.0, None)
}

/// A record as version 2 wrote it (and read back): its five numbers, the spills as their sum.
fn legacy_entry(rng: &mut Rng) -> Entry {
    let mut e = entry(rng);
    for (i, f) in launch::Resources::FIELDS.iter().enumerate() {
        if !baseline::LEGACY_FIELDS.iter().any(|(_, name)| *name == Some(f.name)) {
            e.resources[i] = None;
        }
    }
    e.spill_bytes = Some(rng.number() as u32);
    e
}

fn generate(rng: &mut Rng, key: fn(&mut Rng) -> String, entry: fn(&mut Rng) -> Entry) -> Baseline {
    let mut b = Baseline::new();
    for _ in 0..rng.range(1, 12) {
        let arch = rng.pick(launch::KNOWN_ARCHES).to_string();
        b.insert((key(rng), arch), entry(rng));
    }
    b
}

/// A baseline as version 2 wrote it: display names as they are, spaces and all.
fn render_v2(b: &Baseline) -> String {
    let current = baseline::render(b);
    let mut s = format!("# cargo-launch baseline v2 records={}\n", b.len());
    s.push_str(current.lines().nth(1).unwrap_or_default());
    s.push('\n');
    for ((kernel, arch), e) in b {
        let n = |name: &str| e.get(name).unwrap_or_default();
        s.push_str(&format!(
            "{kernel} {arch} registers={} spill_bytes={} stack={} shared={} occupancy={:.1}\n",
            n("registers"),
            e.spill_bytes.unwrap_or_default(),
            n("stack_frame"),
            n("shared_static"),
            e.occupancy
        ));
    }
    s
}

/// What a damaged rendering must give.
#[derive(Debug)]
enum Expect {
    /// These records exactly.
    Same(Baseline),
    /// An error, or exactly these records (a cut that happens to leave the text whole).
    RefusedOr(Baseline),
    /// An error.
    Refused,
    /// Anything, as long as it round-trips.
    Any,
}

const EXTRA: &[&[u8]] = &[
    b" registers=",
    b" occupancy=",
    b"=",
    b"NaN",
    b"inf",
    b"-5",
    b"1e3",
    b"# ",
    b"sm_90 ",
    b"%",
    b"%2",
    b"%20",
    b"%ff",
    b"::",
    b" v2 ",
];

/// Every record is one line whose key is one word (the generator's own invariant).
fn ensure_one_word(b: &Baseline, records: &[usize], lines: &[&str]) {
    assert_eq!(records.len(), b.len(), "{lines:?}");
    for &i in records {
        let words = 3 + launch::Resources::FIELDS.len();
        assert_eq!(lines[i].split_whitespace().count(), words, "a key split into several words: {:?}", lines[i]);
    }
}

#[test]
fn baseline() {
    let path = Path::new("launch-baseline.txt");
    run(
        env!("CARGO_PKG_NAME"),
        "baseline",
        |rng| {
            if rng.one_in(10) {
                let b = generate(rng, display_name, legacy_entry);
                return Input::new(render_v2(&b), Expect::Same(b));
            }
            let b = generate(rng, kernel_key, entry);
            let text_ = baseline::render(&b);
            let lines: Vec<&str> = text_.split_inclusive('\n').collect();
            // Record lines are the ones not starting with `#` (an encoded key never does).
            let records: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].starts_with('#')).collect();
            ensure_one_word(&b, &records, &lines);
            match rng.below(10) {
                0..=2 => Input::new(text_.clone(), Expect::Same(b)),
                3 => {
                    let drop = rng.pick(&records);
                    let s: String = lines.iter().enumerate().filter(|&(i, _)| i != drop).map(|(_, l)| *l).collect();
                    Input::new(s, Expect::Refused)
                }
                4 => {
                    let dup = rng.pick(&records);
                    let mut v = lines.clone();
                    v.insert(dup, lines[dup]);
                    Input::new(v.concat(), Expect::Refused)
                }
                5 => {
                    // Cut anywhere before the last newline.
                    let at = rng.below(text_.len() - 1);
                    let cut = (0..=at).rev().find(|&i| text_.is_char_boundary(i)).unwrap_or(0);
                    Input::new(text_[..cut].to_string(), Expect::RefusedOr(b))
                }
                6 => Input::new(rng.pick(&["", "\n", "   \n\n"]), Expect::Refused),
                7 | 8 => Input::new(text(&mutate(rng, text_.as_bytes(), EXTRA)), Expect::Any),
                _ => Input::new(text(&random_bytes(rng)), Expect::Any),
            }
        },
        move |input| {
            let t = input.str();
            let parsed = baseline::parse(path, t);
            // What an older version's file held is never written back (`--bless` writes what was
            // built), so only the current version's records must render back to themselves.
            let current = parsed.as_ref().is_ok_and(|p| p.version == baseline::VERSION);
            let parsed = parsed.map(|p| p.records);
            for (k, e) in parsed.iter().flatten() {
                ensure(e.occupancy.is_finite() && (0.0..=100.0).contains(&e.occupancy), || {
                    format!("{k:?}: occupancy {} accepted; a regression against it can never be seen", e.occupancy)
                })?;
            }
            if let (Ok(b), true) = (&parsed, current) {
                // What was read renders and reads back to itself (at the printed precision).
                let again = baseline::parse(path, &baseline::render(b))
                    .map(|p| p.records)
                    .map_err(|e| format!("a rendering is refused: {e:#}"))?;
                let tenths = |b: &Baseline| -> Vec<_> {
                    b.iter()
                        .map(|(k, e)| {
                            (
                                k.clone(),
                                e.resources,
                                e.spill_bytes,
                                // As the file prints it: a hand-written 61.05 is stored as 61.0.
                                format!("{:.1}", e.occupancy),
                            )
                        })
                        .collect()
                };
                ensure(tenths(&again) == tenths(b), || format!("read {b:?}, rendered and read again {again:?}"))?;
            }
            match (&input.expect, &parsed) {
                (Expect::Same(want), Ok(b)) | (Expect::RefusedOr(want), Ok(b)) => {
                    ensure(b == want, || format!("read {} records instead of {}: {b:?}", b.len(), want.len()))
                }
                (Expect::Same(_), Err(e)) => Err(format!("a rendered baseline is refused: {e:#}")),
                (Expect::Refused, Ok(b)) => Err(format!("a damaged baseline is read as {} records: {b:?}", b.len())),
                (Expect::Refused | Expect::RefusedOr(_), Err(e)) => {
                    ensure(e.to_string().contains("launch-baseline.txt"), || format!("the error names no file: {e:#}"))
                }
                (Expect::Any, _) => Ok(()),
            }
        },
    );
}

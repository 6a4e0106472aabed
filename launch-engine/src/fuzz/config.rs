//! The configuration reader (`crate::Config::parse` on Cargo.toml text) and the arch
//! parsers (`launch::Arch`'s `FromStr` and `Display`, `crate::config::parse_arch_list`).

use std::path::PathBuf;

use fuzz_harness::{ensure, mutate, random_bytes, run, text, Input, Lines, Rng};
use launch::{Arch, Variant, KNOWN_ARCHES};

use super::PACKAGE;
use crate::config::{self, Config};
use crate::error::Error;

/// A crate folder with `kernels/` and `inc/`, for the folder checks of the config; one per test
/// process, left in the temporary folder's care.
fn crate_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let d = DIR.get_or_init(|| {
        let d = tempfile::Builder::new().prefix("launch-fuzz-config-").tempdir().expect("temp dir");
        std::fs::create_dir(d.path().join("kernels")).expect("kernels/");
        std::fs::create_dir(d.path().join("inc")).expect("inc/");
        d
    });
    d.path().to_path_buf()
}

/// What a generated config must give.
#[derive(Debug)]
enum Expect {
    Any,
    /// Valid: the arches (sorted, deduplicated), the host block size, the spill budget, the one
    /// kernel table's (name, threads).
    Valid {
        arches: Vec<String>,
        threads: u32,
        spill: Option<u32>,
        kernel: Option<(String, u32)>,
    },
    /// One bad value: the error names this key and its line.
    Bad {
        key: String,
        line: usize,
    },
}

const EXTRA: &[&[u8]] = &[
    b"[package.metadata.launch]\n",
    b"arch = [\"sm_90\"]\n",
    b"threads = ",
    b"kernel.k.threads = ",
    b"\"sm_9O\"",
    b"[[",
    b"]]",
    b"= {",
    b"\"\"\"",
];

/// Bad values for a key, in TOML: types, ranges, overflow.
fn bad_value(rng: &mut Rng, key: &str) -> &'static str {
    match key {
        "arch" => rng.pick(&["\"sm_90\"", "[\"sm_90\", 90]", "[\"sm_91\"]", "[]", "[\"compute_90\"]", "{ a = 1 }"]),
        "kernels" => rng.pick(&["5", "\"nope\"", "\"/abs\"", "\"\"", "[\"kernels\"]"]),
        "include" => rng.pick(&["\"inc\"", "[5]", "[\"nope\"]", "[\"/abs\"]"]),
        "defines" => rng.pick(&["{ \"1N\" = 1 }", "{ N = [1] }", "5", "{ N = { a = 1 } }"]),
        "kernel" => rng.pick(&["5", "\"k\"", "{ k = 5 }", "{ k = { threads = 0 } }", "{ k = { unknown = 1 } }"]),
        "max-spill-bytes" => rng.pick(&["-1", "4294967296", "\"x\"", "1.5", "99999999999999999999"]),
        _ => rng.pick(&["\"x\"", "128.5", "2048", "0", "-1", "true", "[1]", "99999999999999999999", "4294967552"]),
    }
}

fn generate(rng: &mut Rng) -> (String, Expect) {
    let mut s = String::from("[package]\nname = \"fuzzed\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n");
    if rng.one_in(3) {
        s += "[dependencies]\nlaunch = { path = \"../launch\" }\n\n";
    }
    s += "[package.metadata.launch]\n";
    // Valid lists hold arches the default toolchain targets (an untargetable one is an error).
    let targetable: Vec<&str> = KNOWN_ARCHES
        .iter()
        .copied()
        .filter(|a| a.parse().is_ok_and(|a| crate::toolchain::pin::DEFAULT.can_target(a)))
        .collect();
    let arches: Vec<&str> = (0..rng.range(1, 4)).map(|_| rng.pick(&targetable)).collect();
    let threads = rng.range(1, 1024) as u32;
    let spill = rng.one_in(2).then(|| rng.range(0, u32::MAX as u64) as u32);
    let keys = ["arch", "kernels", "include", "defines", "threads", "max-spill-bytes", "kernel"];
    let bad = rng.one_in(2).then(|| rng.pick(&keys));
    let mut bad_line = 0;
    let mut kernel = None;
    for key in keys {
        if bad == Some(key) {
            bad_line = Lines::new(&s).count();
            s += &format!("{key} = {}\n", bad_value(rng, key));
            continue;
        }
        match key {
            "arch" => {
                let list: Vec<String> = arches.iter().map(|a| format!("\"{a}\"")).collect();
                s += &format!("arch = [{}]\n", list.join(if rng.one_in(2) { ", " } else { ",\n  " }));
            }
            "kernels" if rng.one_in(2) => s += "kernels = \"kernels\"\n",
            "include" if rng.one_in(2) => s += "include = [\"inc\"]\n",
            "defines" if rng.one_in(2) => s += "defines = { N = 128, FAST = true, NAME = \"x\" }\n",
            "threads" => s += &format!("threads = {threads}\n"),
            "max-spill-bytes" => {
                if let Some(b) = spill {
                    s += &format!("max-spill-bytes = {b}\n");
                }
            }
            "kernel" if rng.one_in(2) => {
                let t = rng.range(1, 1024) as u32;
                let name = rng.ident();
                s += &format!("kernel.{name}.threads = {t}\n");
                kernel = Some((name, t));
            }
            _ => {}
        }
    }
    if rng.one_in(2) {
        s += "\n[workspace]\n";
    }
    let expect = match bad {
        Some(key) => Expect::Bad { key: key.to_string(), line: bad_line },
        None => {
            let mut parsed: Vec<Arch> = arches.iter().map(|a| a.parse().expect("known")).collect();
            parsed.sort();
            parsed.dedup();
            Expect::Valid { arches: parsed.iter().map(Arch::to_string).collect(), threads, spill, kernel }
        }
    };
    (s, expect)
}

/// Words of Rust's type system that a user of the config never wrote.
const RUST_WORDS: &[&str] = &["i64", "u32", "u64", "usize", "Spanned", "expected a sequence", "expected a map"];

#[test]
fn config() {
    let corpus = super::corpus(&["fixtures/crates", "template"], &["Cargo.toml"]);
    let path = crate_dir().join("Cargo.toml");
    run(
        PACKAGE,
        "config",
        move |rng| match rng.below(10) {
            0..=2 => {
                let base = rng.pick_ref(&corpus).clone();
                Input::new(text(&mutate(rng, base.as_bytes(), EXTRA)), Expect::Any)
            }
            3..=8 => {
                let (s, expect) = generate(rng);
                if rng.one_in(4) {
                    Input::new(text(&mutate(rng, s.as_bytes(), EXTRA)), Expect::Any)
                } else {
                    Input::new(s, expect)
                }
            }
            _ => Input::new(text(&random_bytes(rng)), Expect::Any),
        },
        move |input| {
            let src = input.str();
            let lines = Lines::new(src);
            let result = Config::parse(&path, src);
            match &result {
                Ok(c) => {
                    ensure(!c.arches.is_empty() && c.arches.windows(2).all(|w| w[0] < w[1]), || {
                        format!("arches {:?} are not sorted, unique and non-empty", c.arches)
                    })?;
                    ensure((1..=1024).contains(&c.host_threads), || format!("host threads {}", c.host_threads))?;
                }
                Err(Error::Config { location, key, message }) => {
                    let location = &location.to_string();
                    // Errors outside our table (`package.name` of the wrong type, broken TOML) name their
                    // own key; every error names one.
                    ensure(!key.is_empty(), || "an error without a key".to_string())?;
                    // A location names a real line and column of the text.
                    let at = location.strip_prefix(&path.display().to_string()).unwrap_or(location);
                    if let Some(lc) = at.strip_prefix(':') {
                        let mut p = lc.split(':').map(str::parse::<usize>);
                        let (Some(Ok(l)), Some(Ok(c))) = (p.next(), p.next()) else {
                            return Err(format!("location {location:?} is not path:LINE:COL"));
                        };
                        ensure(lines.offset_of(l, c).is_some(), || format!("{location} is outside the text"))?;
                    }
                    ensure(!message.is_empty(), || format!("`{key}`: an empty message"))?;
                }
                Err(e) => return Err(format!("not a config error: {e}")),
            }
            match (&input.expect, result) {
                (Expect::Any, _) => Ok(()),
                (Expect::Valid { arches, threads, spill, kernel }, Ok(c)) => {
                    let got: Vec<String> = c.arches.iter().map(Arch::to_string).collect();
                    let k = kernel.as_ref().map(|(n, t)| (n.clone(), c.kernel.get(n).and_then(|k| k.threads), *t));
                    ensure(
                        &got == arches
                            && c.host_threads == *threads
                            && c.max_spill_bytes == *spill
                            && k.is_none_or(|(_, got, want)| got == Some(want)),
                        || format!("read {c:?}"),
                    )
                }
                (Expect::Valid { .. }, Err(e)) => Err(format!("a valid config refused: {e}")),
                (Expect::Bad { key, .. }, Ok(c)) => Err(format!("a bad `{key}` accepted: {c:?}")),
                (Expect::Bad { key: bad, line }, Err(e)) => {
                    let Error::Config { location, key, message } = &e else { unreachable!("checked above") };
                    let location = location.to_string();
                    let on_line = location.ends_with(&format!(":{line}")) || location.contains(&format!(":{line}:"));
                    let want = format!("package.metadata.launch.{bad}");
                    // A list element or a nested key is named below the key: `include[0]`, `kernel.k.threads`.
                    let names_key =
                        *key == want || key.starts_with(&format!("{want}.")) || key.starts_with(&format!("{want}["));
                    ensure(names_key && on_line, || format!("a bad `{bad}` on line {line} is reported as {e}"))?;
                    ensure(!RUST_WORDS.iter().any(|w| message.contains(w)), || {
                        format!("the error speaks Rust, not config: {e}")
                    })
                }
            }
        },
    );
}

/// An arch name, a near miss of one, or junk.
fn arch_text(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => rng.pick(KNOWN_ARCHES).to_string(),
        1 => {
            let base = rng.pick(KNOWN_ARCHES).to_string();
            text(&mutate(rng, base.as_bytes(), &[b"sm_", b"compute_", b"a", b"f", b"O", b"SM"]))
        }
        2 => format!("sm_{}{}", rng.number(), rng.pick(&["", "a", "f", "b"])),
        3 => format!("{}{}", rng.pick(&["", " ", "SM_", "sm", "compute_"]), rng.range(0, 200)),
        4 => {
            let s: String =
                (0..rng.range(1, 4)).map(|_| rng.pick(KNOWN_ARCHES).to_string()).collect::<Vec<_>>().join(",");
            text(&mutate(rng, s.as_bytes(), &[b",", b" ", b"sm_"]))
        }
        _ => {
            let mut b = random_bytes(rng);
            b.truncate(rng.below(24));
            text(&b)
        }
    }
}

#[test]
fn arch() {
    run(
        PACKAGE,
        "arch",
        |rng| {
            let a = Arch {
                major: if rng.one_in(4) { rng.number() as u32 } else { rng.range(0, 13) as u32 },
                // Compute capability minors are one digit (the names could not tell sm_1_10 from sm_11_0).
                minor: rng.range(0, 9) as u32,
                variant: rng.pick(&[Variant::Base, Variant::Specific, Variant::Family]),
            };
            let list = (0..rng.range(1, 5))
                .map(|_| format!("{}{}{}", rng.pick(&["", " ", "\t"]), rng.pick(KNOWN_ARCHES), rng.pick(&["", " "])))
                .collect::<Vec<_>>();
            Input::new(arch_text(rng), (a, list))
        },
        |input| {
            let s = input.str();
            match s.parse::<Arch>() {
                Ok(a) => ensure(KNOWN_ARCHES.contains(&s) && a.to_string() == s, || format!("`{s}` parsed as {a}"))?,
                Err(e) => {
                    ensure(!KNOWN_ARCHES.contains(&s), || format!("known `{s}` refused"))?;
                    // An empty name has nothing to quote; the message says it is empty instead.
                    // Odd input is shown escaped and cut short, so only plain names are looked for verbatim.
                    let plain = s.len() <= 40 && s.chars().all(|c| c.is_ascii_graphic() || c == ' ');
                    let named = if s.trim().is_empty() {
                        e.to_string().contains("empty")
                    } else {
                        !plain || e.to_string().contains(&format!("`{s}`"))
                    };
                    ensure(e.input == s && named, || format!("the error {e} names another input"))?;
                    if let Some(sug) = e.suggestion {
                        ensure(sug.parse::<Arch>().is_ok(), || format!("suggests `{sug}`, which does not parse"))?;
                    }
                }
            }
            // Display → FromStr for any Arch value: the name parses back to it exactly when it is known.
            let (a, list) = &input.expect;
            let name = a.to_string();
            match name.parse::<Arch>() {
                Ok(b) => ensure(b == *a, || format!("{a:?} → `{name}` → {b:?}"))?,
                Err(_) => ensure(!KNOWN_ARCHES.contains(&name.as_str()), || format!("`{name}` does not parse"))?,
            }
            // Lists: valid names with spaces are sorted and deduplicated; any bad entry is named.
            let joined = list.join(",");
            let mut want: Vec<Arch> = list.iter().map(|n| n.trim().parse().expect("known")).collect();
            want.sort();
            want.dedup();
            ensure(config::parse_arch_list(&joined) == Ok(want.clone()), || format!("`{joined}` read wrong"))?;
            match config::parse_arch_list(s) {
                Ok(v) => ensure(
                    !v.is_empty()
                        && v.windows(2).all(|w| w[0] < w[1])
                        && s.split(',').all(|p| p.trim().parse::<Arch>().is_ok()),
                    || format!("`{s}` read as {v:?}"),
                ),
                Err(e) => {
                    let bad = s.split(',').map(str::trim).find(|p| p.parse::<Arch>().is_err());
                    let plain = |b: &str| b.len() <= 40 && b.chars().all(|c| c.is_ascii_graphic() || c == ' ');
                    let named = |b: &str| {
                        if b.is_empty() {
                            e.contains("empty")
                        } else {
                            !plain(b) || e.contains(&format!("`{b}`"))
                        }
                    };
                    ensure(bad.is_some_and(named), || format!("`{s}`: the error {e:?} names no bad entry"))
                }
            }
        },
    );
}

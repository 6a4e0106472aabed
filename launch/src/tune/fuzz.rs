//! The tune cache's reader (`store::decode`, and `TuneCache::get` on planted files): it never
//! panics; it accepts only what `store::encode` wrote (up to CRLF line ends and the final
//! newline); a whole file reads back as what was written; a mutated file is never read as a
//! different winner or key.

use std::path::PathBuf;

use fuzz_harness::{ensure, mutate, random_bytes, run, Input, Rng};

use super::store::{decode, encode};
use super::{DeviceKey, Miss, TuneCache, TuneKey, Winner};

const PACKAGE: &str = env!("CARGO_PKG_NAME");

fn string(rng: &mut Rng) -> String {
    const PIECES: &[&str] =
        &["n", "<=2^20", " ", "\n", "\r", "\\", "\\n", "end", "é", "\u{1F600}", "NVIDIA H200", "k_t256"];
    (0..rng.below(6)).map(|_| rng.pick(PIECES)).collect()
}

fn ms(rng: &mut Rng) -> f64 {
    match rng.below(4) {
        0 => 0.0,
        1 => rng.range(0, 1_000_000) as f64 / 1e4,
        _ => Some(f64::from_bits(rng.next_u64()).abs()).filter(|v| v.is_finite()).unwrap_or(1.5),
    }
}

fn entry(rng: &mut Rng) -> (TuneKey, Winner) {
    let key = TuneKey {
        kernel: rng.next_u64(),
        variants: rng.next_u64(),
        device: DeviceKey {
            name: string(rng),
            compute_capability: (rng.range(0, 13) as u32, rng.range(0, 9) as u32),
            driver_version: rng.next_u64() as i32,
        },
        problem: string(rng),
    };
    let winner = Winner {
        variant: string(rng),
        median_ms: ms(rng),
        min_ms: ms(rng),
        max_ms: ms(rng),
        repetitions: rng.next_u64() as u32,
        measured_at: rng.next_u64(),
    };
    (key, winner)
}

#[derive(Debug)]
enum Damage {
    None,
    Crlf,
    Mutated,
    Random,
}

#[derive(Debug)]
struct Case {
    key: TuneKey,
    winner: Winner,
    damage: Damage,
}

/// A folder for planted files; one per test process, under the temporary folder.
fn folder() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("launch-fuzz-tune-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

#[test]
fn tune_cache_file() {
    let dir = folder();
    let cache = TuneCache::new(&dir);
    run(
        PACKAGE,
        "tune_cache_file",
        |rng| {
            let (key, winner) = entry(rng);
            let text = encode(&key, &winner).expect("a finite, non-negative winner with a short key");
            let (bytes, damage) = match rng.below(8) {
                0 => (text.into_bytes(), Damage::None),
                1 => (text.replace('\n', "\r\n").into_bytes(), Damage::Crlf),
                7 => (random_bytes(rng), Damage::Random),
                _ => (
                    mutate(rng, text.as_bytes(), &[b"\r\n", b"checksum ", b"end\n", b"median_ms 1\n"]),
                    Damage::Mutated,
                ),
            };
            Input::new(bytes, Case { key, winner, damage })
        },
        move |input| {
            let Case { key, winner, damage } = &input.expect;
            let Ok(text) = std::str::from_utf8(&input.data) else {
                return Ok(());
            };
            let decoded = decode(text);
            match (damage, &decoded) {
                (Damage::None | Damage::Crlf, Ok(got)) => {
                    ensure(got == &(key.clone(), winner.clone()), || format!("read back as {got:?}"))?
                }
                (Damage::None | Damage::Crlf, Err(why)) => return Err(format!("a whole file refused: {why}")),
                (_, Ok((k, w))) => {
                    // Only an edit of line ends may leave a file readable, and then as what was written.
                    let lf: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
                    let lf = lf.join("\n");
                    let lf = if lf.ends_with('\n') { lf } else { lf + "\n" };
                    let written = encode(k, w).map_err(|e| e.to_string())?;
                    ensure(lf == written, || format!("accepted text `encode` does not write, as {k:?} {w:?}"))?;
                    ensure((k, w) == (key, winner), || format!("a mutated file read as another entry: {k:?} {w:?}"))?
                }
                (_, Err(why)) => ensure(!why.is_empty(), || "an error without a reason".into())?,
            }
            // Planted as the key's file (now and then: a file write per input is slow): a hit
            // exactly when it decodes to this key.
            if key.kernel % 8 == 0 {
                let path = cache.path(key);
                std::fs::write(&path, &input.data).map_err(|e| e.to_string())?;
                let got = cache.get(key);
                let _ = std::fs::remove_file(&path);
                match (got, &decoded) {
                    (Ok(w), Ok((k, d))) => ensure(k == key && &w == d, || "get and decode disagree".into())?,
                    (Ok(w), Err(_)) => return Err(format!("a damaged file read as {w:?}")),
                    (Err(Miss::NotStored), Ok((k, _))) => {
                        ensure(k != key, || "a whole file of this key is a miss".into())?
                    }
                    (Err(Miss::Damaged(_)), Ok(_)) => return Err("a whole file is damaged".into()),
                    _ => {}
                }
            }
            Ok(())
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! The cache entry codec (`crate::cache::{encode, decode}`) and the lookup of a planted
//! entry file (`Cache::load`): entries round-trip; any single damaged byte, any cut, any
//! appended byte is detected; a section length that lies (with a recomputed checksum) is refused,
//! never read out of bounds or allocated; random bytes are never an entry.

use fuzz_harness::{ensure, random_bytes, run, Input, Rng};

use super::PACKAGE;
use crate::cache::{self, Cache, Entry, Key, Lookup};

fn random_text(rng: &mut Rng) -> String {
    let pieces = ["ptxas info    : Used 32 registers\n", "é€\u{1F600}", "\0", "\r\n", ".entry k(\n", "$CRATE/kernels"];
    let mut s = String::new();
    let max = if rng.one_in(16) { 2000 } else { 12 };
    for _ in 0..rng.below(max) {
        s.push_str(rng.pick(&pieces));
    }
    s
}

fn random_entry(rng: &mut Rng) -> Entry {
    let cubin_len = if rng.one_in(16) { rng.below(60_000) } else { rng.below(64) };
    Entry {
        ptx: random_text(rng),
        cubin: rng.bytes(cubin_len),
        ptxas_log: random_text(rng),
        nvrtc_log: random_text(rng),
        probes: random_text(rng),
    }
}

/// How the encoded entry is damaged before decoding.
#[derive(Debug)]
enum Damage {
    None,
    /// One byte changed (xor with a non-zero value).
    Byte(usize, u8),
    /// Cut to this length.
    Cut(usize),
    /// Bytes appended.
    Append(usize),
    /// Decoded with another key.
    OtherKey,
    /// A section length replaced and the checksum recomputed: a well-checksummed lie.
    Length(usize, u64),
    /// Random bytes instead of an entry.
    Random,
}

#[derive(Debug)]
struct Case {
    /// The key it is decoded with.
    key: [u8; 32],
    entry: Entry,
    damage: Damage,
}

/// Offsets of the four length fields of an encoded entry.
fn length_fields(e: &Entry) -> [usize; 4] {
    let mut at = 8 + 4 + 32;
    let mut out = [0; 4];
    for (i, len) in [e.ptx.len(), e.cubin.len(), e.ptxas_log.len(), e.nvrtc_log.len()].into_iter().enumerate() {
        out[i] = at;
        at += 8 + len;
    }
    out
}

fn rechecksum(bytes: &mut [u8]) {
    let n = bytes.len() - 32;
    let digest = sha256(&bytes[..n]);
    bytes[n..].copy_from_slice(&digest);
}

/// SHA-256 (FIPS 180-4), so the test can forge a well-checksummed entry without a dependency.
fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
        0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
        0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
        0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] =
        [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes(block[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            (hh, g, f, e, d, c, b, a) = (g, f, e, d.wrapping_add(t1), c, b, a, t1.wrapping_add(t2));
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 32];
    for (i, x) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[test]
fn cache_entry() {
    let dir = tempfile::Builder::new().prefix("launch-fuzz-cache-").tempdir().expect("temp dir");
    let store = Cache::new(dir.path().to_path_buf());
    run(
        PACKAGE,
        "cache_entry",
        |rng| {
            let mut key = [0u8; 32];
            key.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
            let entry = random_entry(rng);
            let len = cache::encode(&Key(key), &entry).len();
            let damage = match rng.below(8) {
                0 => Damage::None,
                1 | 2 => Damage::Byte(rng.below(len), rng.range(1, 255) as u8),
                3 => Damage::Cut(rng.below(len)),
                4 => Damage::Append(rng.range(1, 64) as usize),
                5 => Damage::OtherKey,
                6 => {
                    let lie = match rng.below(4) {
                        0 => u64::MAX,
                        1 => rng.range(len as u64, u32::MAX as u64 * 4),
                        2 => rng.next_u64(),
                        _ => rng.range(0, len as u64),
                    };
                    Damage::Length(rng.below(4), lie)
                }
                _ => Damage::Random,
            };
            let key = Key(key);
            let mut bytes = cache::encode(&key, &entry);
            let mut decode_key = key;
            match damage {
                Damage::None => {}
                Damage::Byte(i, x) => bytes[i] ^= x,
                Damage::Cut(n) => bytes.truncate(n),
                Damage::Append(n) => bytes.extend(std::iter::repeat_n(0u8, n)),
                Damage::OtherKey => decode_key.0[0] ^= 1,
                Damage::Length(field, lie) => {
                    let at = length_fields(&entry)[field];
                    bytes[at..at + 8].copy_from_slice(&lie.to_le_bytes());
                    rechecksum(&mut bytes);
                }
                Damage::Random => bytes = random_bytes(rng),
            }
            Input::new(bytes, Case { key: decode_key.0, entry, damage })
        },
        move |input| {
            let Case { key, entry, damage } = &input.expect;
            let (decode_key, bytes) = (Key(*key), &input.data);
            let decoded = cache::decode(&decode_key, bytes);
            match (damage, &decoded) {
                (Damage::None, Ok(e)) => ensure(e == entry, || format!("decoded as {e:?}"))?,
                (Damage::None, Err(why)) => return Err(format!("a whole entry refused: {why}")),
                (Damage::Length(..), Ok(e)) => {
                    // A checksummed entry decodes only when it is exactly the encoding of what it says.
                    ensure(&cache::encode(&decode_key, e) == bytes, || format!("a lying length decoded as {e:?}"))?
                }
                (_, Ok(e)) => return Err(format!("damaged entry ({damage:?}) decoded as {e:?}")),
                (_, Err(why)) => ensure(!why.is_empty(), || "an error without a reason".into())?,
            }
            // The same bytes planted as the entry's file: a hit exactly when they decode.
            if matches!(damage, Damage::None | Damage::Byte(..) | Damage::Cut(..)) && key[1] % 8 == 0 {
                let key = decode_key;
                let path = store.entry_path(&key);
                std::fs::create_dir_all(path.parent().expect("entries live in a folder")).map_err(|e| e.to_string())?;
                std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
                match (store.load(&key), &decoded) {
                    (Lookup::Hit(e), Ok(d)) => ensure(&e == d, || "load and decode disagree".into())?,
                    (Lookup::Hit(e), Err(_)) => return Err(format!("a damaged file loaded as {e:?}")),
                    (Lookup::Miss, _) => return Err("a planted entry is a miss".into()),
                    (_, Ok(_)) => return Err("a whole entry file is not a hit".into()),
                    _ => {}
                }
                let _ = std::fs::remove_file(&path);
            }
            Ok(())
        },
    );
}

#[test]
fn the_forged_checksum_is_the_one_entries_carry() {
    let e = Entry {
        ptx: ".entry k(".into(),
        cubin: vec![0x7f, b'E', b'L', b'F'],
        ptxas_log: "é".into(),
        nvrtc_log: String::new(),
        probes: String::new(),
    };
    let good = cache::encode(&Key([7; 32]), &e);
    let mut forged = good.clone();
    rechecksum(&mut forged);
    assert_eq!(forged, good);
}

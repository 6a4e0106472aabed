//! Truncated logs and random garbage never make the parser panic.

use super::*;

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "ptxas",
    "ptxas ",
    "ptxas info    : ",
    "ptxas warning : ",
    "ptxas error   : ",
    "ptxas fatal   : ",
    "ptxas         .     ",
    "    ",
    " ",
    "\t",
    "info",
    "warning",
    "error",
    "fatal",
    ":",
    " : ",
    ", line ",
    "; ",
    "'",
    "Used ",
    "used ",
    " registers",
    " barriers",
    " bytes",
    " bytes stack frame",
    " bytes spill stores",
    " bytes spill loads",
    " bytes cumulative stack size",
    " bytes smem",
    " bytes cmem[",
    "]",
    "cmem[0]",
    " bytes gmem",
    "Compile time",
    " = ",
    " ms",
    "Function properties for ",
    "Compiling entry function ",
    "' for '",
    ",",
    ", ",
    ".",
    "0",
    "1",
    "42",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "-5",
    "1e9",
    "é",
    "\u{1F600}",
    "\r",
    "\u{0}",
    "sm_90",
    "k",
    "_Z4walkii",
    "t.ptx",
    "NaN",
    "inf",
];

fn garbage_line(rng: &mut Rng) -> String {
    (0..rng.below(12)).map(|_| PIECES[rng.below(PIECES.len())]).collect()
}

#[test]
fn never_panics_on_truncations() {
    for (_, text) in all_logs() {
        // Every prefix, cut anywhere (on a char boundary), and every line-suffix.
        for (i, _) in text.char_indices() {
            let _ = parse(&text[..i]);
        }
        let lines: Vec<&str> = text.lines().collect();
        for k in 0..=lines.len() {
            let _ = parse(&lines[k..].join("\n"));
        }
    }
}

#[test]
fn never_panics_on_garbage() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        let text: Vec<String> = (0..1 + rng.below(8)).map(|_| garbage_line(&mut rng)).collect();
        let _ = parse(&text.join("\n"));
    }
    for (_, text) in all_logs() {
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..200 {
            let mut mutated: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(mutated.len() + 1);
                match rng.below(3) {
                    0 => mutated.insert(at, garbage_line(&mut rng)),
                    1 if at < mutated.len() => mutated[at].push_str(&garbage_line(&mut rng)),
                    _ if at < mutated.len() => {
                        let l = &mutated[at];
                        let cut =
                            l.char_indices().map(|(i, _)| i).nth(rng.below(l.chars().count() + 1)).unwrap_or(l.len());
                        mutated[at] = format!("{}{}", &l[..cut], garbage_line(&mut rng));
                    }
                    _ => mutated.push(garbage_line(&mut rng)),
                }
            }
            let _ = parse(&mutated.join("\n"));
        }
    }
}

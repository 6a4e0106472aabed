//! Reading `nvdisasm -gi -c`: per function, the spill stores and loads under each source line
//! (`line_info::disassembly::walk`, which `--pressure` shares).
//!
//! nvdisasm writes each code section as `.section .text.<symbol>,...`, a `//## File "<path>",
//! line <N>` comment before the instructions of each source line (with `-gi`, one per inline
//! frame: see `walk`; the spill code counts under the innermost, the line it comes from), and
//! marks spill code with `(*"SpillRefill"*)`. Only marked `STL`/`LDL` count: a kernel's own local arrays are
//! also `STL`/`LDL`, unmarked. One pass over the text, a map lookup per counted instruction.

use std::collections::BTreeMap;
use std::path::Path;

use launch_schema::report::{SpillCount, SpillLine};

use crate::line_info::disassembly::walk;

/// The mark nvdisasm gives spill and refill instructions.
const MARK: &str = "(*\"SpillRefill\"*)";

/// One function's spill code by source line, before sorting.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionSpills {
    /// `(file, line)` → counts.
    pub lines: BTreeMap<(String, u32), SpillCount>,
    /// Marked instructions before any line comment of their section.
    pub unattributed: SpillCount,
}

impl FunctionSpills {
    /// The lines, most instructions first, then most bytes, then file and line.
    pub fn sorted(&self) -> Vec<SpillLine> {
        let mut v: Vec<SpillLine> = self
            .lines
            .iter()
            .map(|((file, line), c)| SpillLine { file: file.clone(), line: *line, count: *c })
            .collect();
        v.sort_by(|a, b| {
            let bytes = |c: &SpillCount| c.store_bytes + c.load_bytes;
            b.count
                .instructions()
                .cmp(&a.count.instructions())
                .then(bytes(&b.count).cmp(&bytes(&a.count)))
                .then(a.file.cmp(&b.file))
                .then(a.line.cmp(&b.line))
        });
        v
    }

    /// Every counted instruction.
    pub fn total(&self) -> SpillCount {
        let mut t = self.unattributed;
        for c in self.lines.values() {
            t.add(c);
        }
        t
    }
}

/// Every function of `sass` that has spill code, by symbol. File names under `root` become
/// relative to it (`kernels/poly.cuh`).
pub fn parse(sass: &str, root: &Path) -> BTreeMap<String, FunctionSpills> {
    let mut out: BTreeMap<String, FunctionSpills> = BTreeMap::new();
    walk(sass, root, |symbol, at, t| {
        let Some((op, bytes)) = t.contains(MARK).then(|| spill_op(t)).flatten() else { return };
        let f = out.entry(symbol.to_string()).or_default();
        let c = match at {
            Some(at) => f.lines.entry(at.place.clone()).or_default(),
            None => &mut f.unattributed,
        };
        if op == Op::Store {
            c.stores += 1;
            c.store_bytes += bytes;
        } else {
            c.loads += 1;
            c.load_bytes += bytes;
        }
    });
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Store,
    Load,
}

/// `/*0070*/ @!P0 STL.64 [R1+0x27c], R2 (*"SpillRefill"*) ;` → `(Store, 8)`: the opcode after
/// the address and an optional predicate, and the bytes its width suffix says (4 without one).
fn spill_op(t: &str) -> Option<(Op, u32)> {
    let after_addr = t.strip_prefix("/*")?.split_once("*/")?.1;
    let mut words = after_addr.split_whitespace();
    let mut op = words.next()?;
    if op.starts_with('@') {
        op = words.next()?;
    }
    let (base, suffix) = op.split_once('.').unwrap_or((op, ""));
    let kind = match base {
        "STL" => Op::Store,
        "LDL" => Op::Load,
        _ => return None,
    };
    let bytes = suffix
        .split('.')
        .find_map(|s| match s {
            "U8" | "S8" => Some(1),
            "U16" | "S16" => Some(2),
            "64" => Some(8),
            "128" => Some(16),
            _ => None,
        })
        .unwrap_or(4);
    Some((kind, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    // `.sectioninfo` follows each `.section` in CUDA 13's sm_80 cubins.
    const SASS: &str = r#"
	.section	.text.k,"ax",@progbits
	.sectioninfo	@"SHI_REGISTERS=32"
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   STL [R1+0x10], R9 (*"SpillRefill"*) ;
	//## File "/crate/kernels/a.cuh", line 21
        /*0070*/                   STL [R1+0x27c], R2                   (*"SpillRefill"*);
        /*0080*/              @!P0 STL.64 [R1+0x20], R2                 (*"SpillRefill"*);
        /*0090*/                   STL [R3], R4 ;
	//## File "kernels/a.cu", line 7, inlined at "kernels/a.cu", line 9
        /*00a0*/                   LDL.LU.128 R4, [R1+0x40]             (*"SpillRefill"*);
        /*00b0*/                   LDL R5, [R6] ;
	//## File "/crate/kernels/a.cuh", line 21
        /*00c0*/                   LDL.LU R8, [R1+0x50]                 (*"SpillRefill"*);
	.section	.text.clean,"ax",@progbits
	//## File "/crate/kernels/a.cuh", line 3
        /*0000*/                   STL [R1], R4 ;
"#;

    #[test]
    fn marked_local_accesses_count_under_their_line_and_array_accesses_do_not() {
        let got = parse(SASS, Path::new("/crate"));
        assert_eq!(got.keys().collect::<Vec<_>>(), ["k"], "a function without marked code is absent");
        let k = &got["k"];
        assert_eq!(k.unattributed, SpillCount { stores: 1, loads: 0, store_bytes: 4, load_bytes: 0 });
        let lines = k.sorted();
        assert_eq!(lines.len(), 2);
        assert_eq!((lines[0].file.as_str(), lines[0].line), ("kernels/a.cuh", 21));
        assert_eq!(lines[0].count, SpillCount { stores: 2, loads: 1, store_bytes: 12, load_bytes: 4 });
        assert_eq!((lines[1].file.as_str(), lines[1].line), ("kernels/a.cu", 7));
        assert_eq!(lines[1].count, SpillCount { stores: 0, loads: 1, store_bytes: 0, load_bytes: 16 });
        assert_eq!(k.total(), SpillCount { stores: 3, loads: 2, store_bytes: 16, load_bytes: 20 });
    }

    #[test]
    fn odd_lines_are_skipped_not_fatal() {
        let odd = "\t.section\n//## File \"x\", line\n//## File \"x, line 3\n/*0010*/ (*\"SpillRefill\"*)\n\
                   \t.section .text.k\n/*0010*/ @P0 (*\"SpillRefill\"*)\n/* STL (*\"SpillRefill\"*)";
        assert!(parse(odd, Path::new("/")).is_empty());
    }
}

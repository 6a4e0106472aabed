//! Reading nvdisasm twice over one cubin compiled with line info, and joining the two on the
//! instruction's offset: `nvdisasm -lrm count -c` prints after every instruction the number of
//! live registers (`// |  GPR  |  PRED  |  UGPR  |` columns, blank for none), and `nvdisasm -gi -c`
//! the `//## File "<path>", line <N>` comments before each source line's instructions; nvdisasm
//! ignores line info when it prints life ranges, so neither run alone says which line holds the
//! registers.

use std::collections::BTreeMap;
use std::path::Path;

use launch_schema::report::{LiveCount, PressureLine, SourceLine};

use crate::line_info::disassembly::{section_directive, section_symbol, walk, At};

/// The live registers after one instruction.
type Live = LiveCount;

/// `section symbol → (offset → live counts)` from `nvdisasm -lrm count -c`.
pub fn live(text: &str) -> BTreeMap<String, BTreeMap<u32, Live>> {
    let mut out: BTreeMap<String, BTreeMap<u32, Live>> = BTreeMap::new();
    let mut symbol: Option<String> = None;
    for l in text.lines() {
        let t = l.trim_start();
        if let Some(rest) = section_directive(t) {
            symbol = section_symbol(rest);
        } else if let (Some(sym), Some(offset)) = (&symbol, offset(t)) {
            let Some((_, columns)) = t.split_once("// |") else { continue };
            let mut cells = columns.split('|').map(|c| c.trim().parse::<u32>().unwrap_or(0));
            let live = Live {
                gpr: cells.next().unwrap_or(0),
                pred: cells.next().unwrap_or(0),
                ugpr: cells.next().unwrap_or(0),
            };
            out.entry(sym.clone()).or_default().insert(offset, live);
        }
    }
    out
}

/// `section symbol → (offset → where)` from `nvdisasm -gi -c`: each instruction under its line and
/// inline frames (`line_info::disassembly::walk`). File names under `root` become relative to it.
pub fn lines(text: &str, root: &Path) -> BTreeMap<String, BTreeMap<u32, At>> {
    let mut out: BTreeMap<String, BTreeMap<u32, At>> = BTreeMap::new();
    walk(text, root, |symbol, at, t| {
        if let (Some(at), Some(offset)) = (at, offset(t)) {
            out.entry(symbol.to_string()).or_default().insert(offset, at.clone());
        }
    });
    out
}

/// One function's pressure: the peak after any instruction, and per source line (and inline
/// stack) the most live registers after one of its instructions (most first, then file and line).
pub struct Joined {
    pub peak: Live,
    pub lines: Vec<PressureLine>,
    /// Instructions with a count but no source line.
    pub unattributed: u32,
}

/// The most of each kind over `counts`.
pub fn peak<'a>(counts: impl IntoIterator<Item = &'a Live>) -> Live {
    counts.into_iter().fold(Live::default(), most)
}

fn most(a: Live, b: &Live) -> Live {
    Live { gpr: a.gpr.max(b.gpr), pred: a.pred.max(b.pred), ugpr: a.ugpr.max(b.ugpr) }
}

/// Joins one function's live counts with its lines.
pub fn join(live: &BTreeMap<u32, Live>, lines: Option<&BTreeMap<u32, At>>) -> Joined {
    let mut peak = Live::default();
    let mut by_line: BTreeMap<&At, (Live, u32)> = BTreeMap::new();
    let mut unattributed = 0;
    for (offset, l) in live {
        peak = most(peak, l);
        match lines.and_then(|m| m.get(offset)) {
            Some(at) => {
                let (m, n) = by_line.entry(at).or_default();
                *m = most(*m, l);
                *n += 1;
            }
            None => unattributed += 1,
        }
    }
    let mut lines: Vec<PressureLine> = by_line
        .into_iter()
        .map(|(at, (live, instructions))| PressureLine {
            file: at.place.0.clone(),
            line: at.place.1,
            inlined_at: at
                .inlined_at
                .iter()
                .map(|(file, line)| SourceLine { file: file.clone(), line: *line })
                .collect(),
            text: None,
            live,
            instructions,
        })
        .collect();
    lines.sort_by(|a, b| {
        (b.live.gpr.cmp(&a.live.gpr))
            .then_with(|| a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
            .then_with(|| a.inlined_at.cmp(&b.inlined_at))
    });
    Joined { peak, lines, unattributed }
}

/// `/*0040*/ IMAD …` → `0x40`.
fn offset(t: &str) -> Option<u32> {
    let hex = t.strip_prefix("/*")?.split_once("*/")?.0;
    u32::from_str_radix(hex.trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIVE: &str = r#"
	.section	.text.k,"ax",@progbits
	.sectioninfo	@"SHI_REGISTERS=8"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                  // |   1   |        |        |
        /*0010*/                   S2R R0, SR_TID.X ;                      // |   2   |        |        |
        /*0020*/                   S2UR UR4, SR_CTAID.X ;                  // |   2   |        |   1    |
        /*0030*/                   IMAD R7, R7, UR4, R0 ;                  // |   3   |   1    |   1    |
        /*0040*/                   EXIT ;                                  // |       |        |        |
"#;
    const LINES: &str = r#"
	.section	.text.k,"ax",@progbits
        /*0000*/                   LDC R1, c[0x0][0x28] ;
	//## File "/crate/kernels/k.cu", line 4
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   S2UR UR4, SR_CTAID.X ;
	//## File "/crate/kernels/k.cuh", line 9 inlined at "/crate/kernels/k.cuh", line 12
	//## File "/crate/kernels/k.cuh", line 12 inlined at "/crate/kernels/k.cu", line 5
	//## File "/crate/kernels/k.cu", line 5
        /*0030*/                   IMAD R7, R7, UR4, R0 ;
        /*0040*/                   EXIT ;
"#;

    /// The two runs join on the offset: each line's most live registers with its inline frames
    /// (`-gi`: one comment per frame, innermost first), the peak over the function, the instructions before any line comment counted apart; blank columns are 0; a
    /// `.sectioninfo` line (CUDA 13's sm_80 cubins) is no section of its own.
    #[test]
    fn live_counts_join_their_source_lines_on_the_offset() {
        let live = live(LIVE);
        let lines = lines(LINES, Path::new("/crate"));
        let j = join(&live["k"], lines.get("k"));
        assert_eq!((j.peak.gpr, j.peak.pred, j.peak.ugpr), (3, 1, 1));
        let got: Vec<(&str, u32, u32, u32)> =
            j.lines.iter().map(|l| (l.file.as_str(), l.line, l.live.gpr, l.instructions)).collect();
        assert_eq!(got, [("kernels/k.cuh", 9, 3, 2), ("kernels/k.cu", 4, 2, 2)]);
        // The inline frames, innermost caller first; the kernel's own line has none.
        let frames: Vec<(&str, u32)> = j.lines[0].inlined_at.iter().map(|f| (f.file.as_str(), f.line)).collect();
        assert_eq!(frames, [("kernels/k.cuh", 12), ("kernels/k.cu", 5)]);
        assert!(j.lines[1].inlined_at.is_empty());
        assert_eq!(j.unattributed, 1);
    }
}

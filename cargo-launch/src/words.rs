//! Small text helpers shared by the commands and renderers: kernel names, grouped numbers, and
//! the phrases more than one output says.

use launch::Contract;
use launch_analysis::NextBlock;

// The arithmetic's sentences live in the runtime crate, so the checked launch (`launch::cuda`)
// says exactly what `cargo launch check` says; numbers are grouped the same way everywhere.
pub use launch_analysis::group;

/// `1234567` → `1,234,567` (a count; the same grouping as [`group`]).
pub fn thousands(n: usize) -> String {
    group(n as u64)
}

/// At most `width` characters: `s`, its end cut at a `…` when longer (a source line's text after
/// its numbers).
pub fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A contract as its source spells it, `none` without one.
pub fn contract(c: Option<Contract>) -> String {
    c.map_or_else(|| "none".to_string(), |c| c.to_string())
}

/// Where one more block fits, for a kernel with `registers` per thread: `≤ 128 registers (-39)
/// fit 2 blocks/SM (25.0%)`. The report's `next block:` line, explore's cliff and its plot's
/// annotation all say it so.
pub fn next_block(n: &NextBlock, registers: u32) -> String {
    format!(
        "≤ {} registers (-{}) fit {} block{}/SM ({:.1}%)",
        n.registers,
        registers.saturating_sub(n.registers),
        n.active_blocks,
        if n.active_blocks == 1 { "" } else { "s" },
        n.percent
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A count is grouped as launch groups numbers (tested there), up to `u32::MAX`.
    #[test]
    fn counts_are_grouped_like_numbers() {
        assert_eq!(thousands(8693), group(8693u32));
        assert_eq!(thousands(u32::MAX as usize), "4,294,967,295");
    }

    #[test]
    fn the_next_block_phrase() {
        let n = NextBlock { registers: 128, active_blocks: 2, percent: 25.0 };
        assert_eq!(next_block(&n, 167), "≤ 128 registers (-39) fit 2 blocks/SM (25.0%)");
        let n = NextBlock { registers: 128, active_blocks: 1, percent: 6.3 };
        assert_eq!(next_block(&n, 130), "≤ 128 registers (-2) fit 1 block/SM (6.3%)");
    }
}

//! One rule per launch quantity, with one wording, for every place that takes it: `@launch`,
//! `[package.metadata.launch]` and its per-kernel tables, tune grids, `cargo launch explore` and
//! `cargo launch occupancy` flags.
//!
//! Two of them count threads: a contract's thread count ([`Quantity::Threads`]: what `@launch`,
//! a tune grid and `explore --threads` write into the PTX as `.maxntid`) is whole warps, 32 to
//! 1024 (seeds/004); a block size ([`Quantity::BlockSize`]: the launch of a kernel without a
//! contract, the calculator's hypothetical kernel) is any count a GPU accepts, 1 to 1024.

/// The most threads a block may have on any GPU.
pub const MAX_THREADS: u32 = 1024;
/// The most CTAs any GPU keeps resident on one SM (32 on sm_50 to sm_100; sm_75/sm_86 hold 16,
/// sm_120 24). ptxas 12.9 ignores a larger `.minnctapersm` with "out of range" on every arch, and
/// above 2^32 - 1 it fails: a bigger min_blocks can never be met, so it is refused where it is
/// written. (Arches holding fewer are reported by `cargo launch check`.)
pub const MAX_MIN_BLOCKS: u32 = 32;
/// The register caps `.maxnreg` accepts.
pub const MAX_REGS: std::ops::RangeInclusive<u32> = 16..=255;
/// The most shared memory any GPU gives one block (sm_90's opt-in, 227 KB).
pub const MAX_DYNAMIC_SMEM: u32 = 232_448;

/// A quantity of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantity {
    /// A contract's threads per CTA: a multiple of 32 from 32 to 1024.
    Threads,
    /// A block size to launch or evaluate: 1 to 1024 threads.
    BlockSize,
    /// `min_blocks` (`.minnctapersm`): 1 to 32.
    MinBlocks,
    /// `max_regs` (`.maxnreg`): 16 to 255 registers per thread.
    MaxRegs,
    /// Dynamic shared memory per block: 0 to [`MAX_DYNAMIC_SMEM`] bytes.
    DynamicSmem,
}

/// Every quantity, for tests that enumerate them.
pub const QUANTITIES: [Quantity; 5] =
    [Quantity::Threads, Quantity::BlockSize, Quantity::MinBlocks, Quantity::MaxRegs, Quantity::DynamicSmem];

/// A value outside its quantity's range; its `Display` is the one wording every entry point shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutOfRange {
    /// The quantity.
    pub quantity: Quantity,
    /// The value as written (digits too many for an integer stay as written).
    pub value: String,
    problem: Problem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Problem {
    Low,
    NotWarps,
    High,
    NotInteger,
}

impl Quantity {
    /// `n` if it is in range.
    ///
    /// # Errors
    /// [`OutOfRange`], which says the rule.
    pub fn check(self, n: i64) -> Result<u32, OutOfRange> {
        let (low, high) = self.bounds();
        let fail = |problem| Err(OutOfRange { quantity: self, value: n.to_string(), problem });
        if n < i64::from(low) {
            fail(Problem::Low)
        } else if n > i64::from(high) {
            fail(Problem::High)
        } else if self == Quantity::Threads && n % 32 != 0 {
            fail(Problem::NotWarps)
        } else {
            Ok(n as u32)
        }
    }

    /// The value of `text` (an integer as written: `256`, `+256`, digits too many for an `i64`),
    /// if it is in range.
    ///
    /// # Errors
    /// [`OutOfRange`]: not an integer, or out of range.
    pub fn parse(self, text: &str) -> Result<u32, OutOfRange> {
        let t = text.trim();
        match t.parse::<i64>() {
            Ok(n) => self.check(n),
            Err(_) => {
                let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
                let problem = if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    Problem::NotInteger
                } else if t.starts_with('-') {
                    Problem::Low
                } else {
                    Problem::High
                };
                Err(OutOfRange { quantity: self, value: t.to_string(), problem })
            }
        }
    }

    /// The smallest and largest values.
    pub const fn bounds(self) -> (u32, u32) {
        match self {
            Quantity::Threads => (32, MAX_THREADS),
            Quantity::BlockSize => (1, MAX_THREADS),
            Quantity::MinBlocks => (1, MAX_MIN_BLOCKS),
            Quantity::MaxRegs => (*MAX_REGS.start(), *MAX_REGS.end()),
            Quantity::DynamicSmem => (0, MAX_DYNAMIC_SMEM),
        }
    }

    /// The rule, as every message ends.
    pub const fn rule(self) -> &'static str {
        match self {
            Quantity::Threads => "(threads: a multiple of 32 from 32 to 1024)",
            Quantity::BlockSize => "expected an integer from 1 to 1024 (the largest block any GPU allows)",
            Quantity::MinBlocks => "(min_blocks: 1 to 32)",
            Quantity::MaxRegs => "16..=255, the range .maxnreg accepts",
            Quantity::DynamicSmem => {
                "expected 0 to 232448 bytes (227 KB, the most shared memory any GPU gives a block)"
            }
        }
    }
}

impl std::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (v, rule) = (&self.value, self.quantity.rule());
        if self.problem == Problem::NotInteger {
            return match self.quantity {
                Quantity::Threads => write!(f, "threads = {v} is not an integer {rule}"),
                Quantity::MinBlocks => write!(f, "min_blocks = {v} is not an integer {rule}"),
                Quantity::MaxRegs => write!(f, "max_regs = {v} is not an integer in {rule}"),
                Quantity::BlockSize | Quantity::DynamicSmem => write!(f, "`{v}` is not an integer; {rule}"),
            };
        }
        match (self.quantity, self.problem) {
            (Quantity::Threads, Problem::High) => {
                write!(f, "threads = {v} is over 1024: no CTA can have more threads {rule}")
            }
            (Quantity::Threads, _) => write!(
                f,
                "threads = {v} is not a positive multiple of 32: the CTA would not be a whole number of warps {rule}"
            ),
            (Quantity::MinBlocks, Problem::High) => {
                write!(f, "min_blocks = {v} is over {MAX_MIN_BLOCKS}: no GPU keeps more CTAs resident on one SM {rule}")
            }
            (Quantity::MinBlocks, _) => write!(f, "min_blocks = {v}: it must be positive {rule}"),
            (Quantity::MaxRegs, _) => write!(f, "max_regs = {v} is outside {rule}"),
            (Quantity::BlockSize, _) => write!(f, "{v} is not a block size; {rule}"),
            (Quantity::DynamicSmem, _) => write!(f, "{v} is not a dynamic shared memory size; {rule}"),
        }
    }
}

impl std::error::Error for OutOfRange {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_quantity_takes_its_bounds_and_refuses_one_past_them_and_non_integers() {
        for q in QUANTITIES {
            let (low, high) = q.bounds();
            assert_eq!(q.check(i64::from(low)), Ok(low), "{q:?}");
            assert_eq!(q.check(i64::from(high)), Ok(high), "{q:?}");
            for bad in [i64::from(low) - 1, i64::from(high) + 1, i64::MIN] {
                assert!(q.check(bad).is_err(), "{q:?} {bad}");
            }
            for bad in ["x", "", "1.5", "99999999999999999999", "-99999999999999999999"] {
                let e = q.parse(bad).unwrap_err();
                assert!(e.to_string().contains(q.rule()), "{e}");
            }
        }
        assert_eq!(
            Quantity::Threads.check(100).unwrap_err().to_string(),
            "threads = 100 is not a positive multiple of 32: the CTA would not be a whole number of warps (threads: a \
             multiple of 32 from 32 to 1024)"
        );
        assert_eq!(Quantity::BlockSize.parse("+100"), Ok(100));
    }
}

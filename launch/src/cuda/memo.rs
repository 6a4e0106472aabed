//! The last approved launch of a loaded kernel, so that repeating a launch costs a comparison
//! instead of the whole check (about 100 ns, 3 % of a launch enqueue, on an H200's host).
//!
//! The verdict on a block depends only on the block shape, the dynamic shared memory and the
//! function's current `MAX_DYNAMIC_SHARED_SIZE_BYTES` (the device, the contract, the registers
//! and the carveout of a loaded function never change): those five numbers are the key, so
//! raising the limit makes the remembered verdict miss by itself, and [`CheckMemo::clear`] drops
//! it as well. The grid is not in the key: it is three comparisons, done on every hit.
//!
//! Lock-free: a sequence lock over relaxed atomics. A reader that overlaps a writer sees the
//! sequence change and takes the full check; a writer that finds another one writing leaves the
//! memo as it is. Nothing here is `unsafe`.

use std::sync::atomic::{fence, AtomicU64, Ordering};

use cudarc::driver::LaunchConfig;

use super::check::{grid_fits, Approval, DeviceInfo, LaunchError};
use crate::occupancy::{Limiters, Occupancy, PartitionedGc};

/// Block x, y, z, dynamic shared memory, the function's dynamic limit at check time.
const KEY_WORDS: usize = 5;
/// [`encode`]'s words.
const APPROVAL_WORDS: usize = 14;
const WORDS: usize = KEY_WORDS + APPROVAL_WORDS;
/// The words are stored in pairs: half as many loads on a hit.
const PAIRS: usize = WORDS.div_ceil(2);

// The flags word (the first approval word).
const FILLED: u32 = 1 << 31;
const HAS_RAISE: u32 = 1 << 0;
const HAS_BARRIER_LIMIT: u32 = 1 << 1;
const GC_SHIFT: u32 = 2;
const LIMITERS_SHIFT: u32 = 8;

/// What a verdict depends on besides the loaded function's constants.
pub(super) fn key(cfg: &LaunchConfig, max_dynamic: u32) -> [u32; KEY_WORDS] {
    let (x, y, z) = cfg.block_dim;
    [x, y, z, cfg.shared_mem_bytes, max_dynamic]
}

/// The remembered approval of one loaded kernel, and how many launches its check refused.
#[derive(Debug, Default)]
pub(super) struct CheckMemo {
    /// Even: stable; odd: a writer is storing.
    seq: AtomicU64,
    pairs: [AtomicU64; PAIRS],
    refusals: AtomicU64,
}

impl CheckMemo {
    /// The check with the memo in front: a repeated block shape, dynamic size and limit with a grid
    /// in range returns the remembered approval; anything else runs `full` (the whole check, with
    /// the function's dynamic limit at `max_dynamic`) and remembers what it approves.
    #[inline]
    pub(super) fn check(
        &self,
        dev: &DeviceInfo,
        cfg: &LaunchConfig,
        max_dynamic: u32,
        full: impl FnOnce() -> Result<Approval, LaunchError>,
    ) -> Result<Approval, LaunchError> {
        let key = key(cfg, max_dynamic);
        if let Some(approval) = self.get(&key) {
            if grid_fits(dev, cfg.grid_dim) {
                return Ok(approval);
            }
        }
        self.miss(key, full)
    }

    #[cold]
    #[inline(never)]
    fn miss(
        &self,
        key: [u32; KEY_WORDS],
        full: impl FnOnce() -> Result<Approval, LaunchError>,
    ) -> Result<Approval, LaunchError> {
        let verdict = full();
        match &verdict {
            Ok(approval) => self.put(&key, approval),
            Err(_) => {
                self.refusals.fetch_add(1, Ordering::Relaxed);
            }
        }
        verdict
    }

    /// How many checks have refused a launch (the tuner tells a refusal from a failure by it).
    pub(super) fn refusals(&self) -> u64 {
        self.refusals.load(Ordering::Relaxed)
    }

    /// The remembered approval for `key`, if it is the last one approved.
    #[inline]
    pub(super) fn get(&self, key: &[u32; KEY_WORDS]) -> Option<Approval> {
        let w = self.snapshot()?;
        // Word by word: a slice comparison is a call to `bcmp`.
        if (0..KEY_WORDS).any(|i| w[i] != key[i]) {
            return None;
        }
        decode(&w)
    }

    /// The last configuration approved and its approval: `(block, dynamic shared memory)`.
    pub(super) fn last(&self) -> Option<((u32, u32, u32), u32, Approval)> {
        let w = self.snapshot()?;
        Some(((w[0], w[1], w[2]), w[3], decode(&w)?))
    }

    /// The words of one whole write; `None` while a writer is storing.
    #[inline]
    fn snapshot(&self) -> Option<[u32; WORDS]> {
        let before = self.seq.load(Ordering::Acquire);
        if before & 1 != 0 {
            return None;
        }
        let mut p = [0u64; PAIRS];
        for (out, pair) in p.iter_mut().zip(&self.pairs) {
            *out = pair.load(Ordering::Relaxed);
        }
        // The loads above happen before the second read of the sequence.
        fence(Ordering::Acquire);
        if self.seq.load(Ordering::Relaxed) != before {
            return None;
        }
        let mut w = [0u32; WORDS];
        for (i, out) in w.iter_mut().enumerate() {
            *out = (p[i / 2] >> (32 * (i % 2))) as u32;
        }
        Some(w)
    }

    /// Remembers `approval` for `key`; skipped while another thread writes (the memo is a cache).
    pub(super) fn put(&self, key: &[u32; KEY_WORDS], approval: &Approval) {
        let mut w = [0u32; WORDS];
        w[..KEY_WORDS].copy_from_slice(key);
        w[KEY_WORDS..].copy_from_slice(&encode(approval));
        let _ = self.write(&w);
    }

    /// Forgets the remembered approval (after a change of the function's attributes). Waits for a
    /// writer in progress, so that nothing written before the change survives it.
    pub(super) fn clear(&self) {
        let empty = [0u32; WORDS];
        let mut spins = 0u32;
        while !self.write(&empty) {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// One seqlock write; `false` when another writer holds it.
    fn write(&self, w: &[u32; WORDS]) -> bool {
        let seq = self.seq.load(Ordering::Relaxed);
        if seq & 1 != 0
            || self.seq.compare_exchange(seq, seq.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed).is_err()
        {
            return false;
        }
        // The odd sequence is visible before any word changes.
        fence(Ordering::Release);
        for (i, pair) in self.pairs.iter().enumerate() {
            let low = u64::from(w[2 * i]);
            let high = w.get(2 * i + 1).map_or(0, |&v| u64::from(v));
            pair.store(low | high << 32, Ordering::Relaxed);
        }
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
        true
    }
}

/// An approval as words. Destructured field by field (no `..`), so a field added to
/// [`Approval`] or [`Occupancy`] fails to compile here instead of being forgotten.
fn encode(a: &Approval) -> [u32; APPROVAL_WORDS] {
    let Approval { threads, raise_max_dynamic_shared, occupancy } = *a;
    let Occupancy {
        active_blocks,
        active_warps,
        max_warps,
        limiters,
        block_limit_regs,
        block_limit_smem,
        block_limit_warps,
        block_limit_blocks,
        block_limit_barriers,
        allocated_regs_per_block,
        allocated_smem_per_block,
        warps_per_block,
        partitioned_gc,
    } = occupancy;
    let gc = match partitioned_gc {
        PartitionedGc::Off => 0,
        PartitionedGc::On => 1,
        PartitionedGc::OnStrict => 2,
    };
    let flags = FILLED
        | if raise_max_dynamic_shared.is_some() { HAS_RAISE } else { 0 }
        | if block_limit_barriers.is_some() { HAS_BARRIER_LIMIT } else { 0 }
        | gc << GC_SHIFT
        | u32::from(limiters.bits()) << LIMITERS_SHIFT;
    [
        flags,
        threads,
        raise_max_dynamic_shared.unwrap_or(0),
        active_blocks,
        active_warps,
        max_warps,
        block_limit_regs,
        block_limit_smem,
        block_limit_warps,
        block_limit_blocks,
        block_limit_barriers.unwrap_or(0),
        allocated_regs_per_block,
        allocated_smem_per_block,
        warps_per_block,
    ]
}

/// [`encode`] reversed, from a snapshot of all words; `None` for an empty memo.
fn decode(all: &[u32; WORDS]) -> Option<Approval> {
    let w = &all[KEY_WORDS..];
    let flags = w[0];
    if flags & FILLED == 0 {
        return None;
    }
    let partitioned_gc = match (flags >> GC_SHIFT) & 3 {
        0 => PartitionedGc::Off,
        1 => PartitionedGc::On,
        _ => PartitionedGc::OnStrict,
    };
    Some(Approval {
        threads: w[1],
        raise_max_dynamic_shared: (flags & HAS_RAISE != 0).then_some(w[2]),
        occupancy: Occupancy {
            active_blocks: w[3],
            active_warps: w[4],
            max_warps: w[5],
            limiters: Limiters::from_bits((flags >> LIMITERS_SHIFT) as u8),
            block_limit_regs: w[6],
            block_limit_smem: w[7],
            block_limit_warps: w[8],
            block_limit_blocks: w[9],
            block_limit_barriers: (flags & HAS_BARRIER_LIMIT != 0).then_some(w[10]),
            allocated_regs_per_block: w[11],
            allocated_smem_per_block: w[12],
            warps_per_block: w[13],
            partitioned_gc,
        },
    })
}

#[cfg(test)]
mod tests;

//! The launch check: what the driver would refuse, decided before calling it. Pure arithmetic on
//! the device's limits and the loaded function's attributes, so it is tested without a GPU.

use std::fmt;

use cudarc::driver::LaunchConfig;

use crate::failure::{group, LaunchFailure};
use crate::occupancy::{self, Carveout, DeviceLimits, FunctionAttrs, Occupancy};
use crate::{Arch, Contract, Resources, Variant};

/// One device, as the check and the helpers need it: the occupancy inputs read from the driver,
/// its SM count and its block and grid limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: usize,
    /// `cuDeviceGetName`.
    pub name: String,
    /// `cuDriverGetVersion` (13000 = CUDA 13.0).
    pub driver_version: i32,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// The calculator's inputs: the table row of this compute capability with every value the
    /// driver reports (threads, blocks, registers, shared memory, reserved bytes) taken from it.
    pub limits: DeviceLimits,
    /// `MAX_BLOCK_DIM_X/Y/Z`.
    pub max_block_dim: [u32; 3],
    /// `MAX_GRID_DIM_X/Y/Z`.
    pub max_grid_dim: [u32; 3],
}

impl DeviceInfo {
    /// `sm_90` for compute capability 9.0 (the base arch: a device has no `a`/`f` suffix).
    pub fn arch(&self) -> Arch {
        Arch::new(self.limits.major, self.limits.minor, Variant::Base)
    }

    /// The information of a device that matches the occupancy table row `limits`, with `sms` SMs
    /// and the usual block (1024 × 1024 × 64) and grid (2³¹−1 × 65535 × 65535) limits. For tests
    /// and for reasoning about a GPU that is not present.
    pub fn from_limits(limits: DeviceLimits, sms: u32) -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: format!("compute capability {}.{}", limits.major, limits.minor),
            driver_version: 0,
            sms,
            limits,
            max_block_dim: [1024, 1024, 64],
            max_grid_dim: [i32::MAX as u32, 65535, 65535],
        }
    }
}

/// A loaded function as the driver describes it (`cuFuncGetAttribute`, read once at load time),
/// with the barrier count from the embedded report (no driver attribute reports it) and the
/// current dynamic shared-memory limit and carveout: what the check and the cross-check work from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    /// `CU_FUNC_ATTRIBUTE_NUM_REGS`.
    pub registers: u32,
    /// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`: static shared memory.
    pub shared_static: u32,
    /// `CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`: local memory (stack frame) per thread.
    pub local_bytes: u32,
    /// CTA barriers (ptxas `used N barriers`; no driver attribute reports it).
    pub barriers: u32,
    /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`: the largest block the driver launches.
    pub max_threads_per_block: u32,
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`, as currently set.
    pub max_dynamic_shared: u32,
    /// `CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`, as currently set.
    pub carveout: Carveout,
    /// `CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES`: user constant memory.
    pub const_bytes: u32,
    /// `CU_FUNC_ATTRIBUTE_PTX_VERSION` (90 = compute_90).
    pub ptx_version: u32,
    /// `CU_FUNC_ATTRIBUTE_BINARY_VERSION` (90 = sm_90).
    pub binary_version: u32,
}

impl FunctionInfo {
    /// The calculator's view of the function with its dynamic shared-memory limit at `max_dynamic`.
    pub fn attrs(&self, max_dynamic: u32) -> FunctionAttrs {
        FunctionAttrs::new(self.registers, self.shared_static, self.barriers)
            .with_max_dynamic_shared(max_dynamic)
            .with_launch_bounds(self.max_threads_per_block.max(1))
    }

    /// The ptxas-style resources, for messages.
    pub fn resources(&self) -> Resources {
        Resources {
            registers: self.registers,
            barriers: self.barriers,
            stack_frame: self.local_bytes,
            shared_static: self.shared_static,
            ..Resources::default()
        }
    }
}

/// A launch the check approved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Approval {
    /// Threads per block.
    pub threads: u32,
    /// Set when the launch needs more dynamic shared memory than the function's current
    /// `MAX_DYNAMIC_SHARED_SIZE_BYTES`: the value to raise it to (within the opt-in limit).
    pub raise_max_dynamic_shared: Option<u32>,
    /// Resident blocks per SM of this launch on this device (after the raise).
    pub occupancy: Occupancy,
}

/// Which rule a launch broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Problem {
    /// A block dimension is 0 or above the device's per-dimension maximum, or the block has more
    /// threads than the device allows.
    BlockShape,
    /// `@launch(threads)` (or `.reqntid`) means exactly that many threads per block.
    ContractExact,
    /// `__launch_bounds__(threads)` means at most that many threads per block.
    ContractBound,
    /// The registers of the block exceed what a block may use on this device.
    Registers,
    /// The block exceeds the function's `MAX_THREADS_PER_BLOCK` for another reason.
    ThreadLimit,
    /// Static + dynamic + reserved shared memory exceeds the opt-in limit.
    SharedMemory,
    /// A grid dimension is 0 or above the device's maximum.
    Grid,
    /// The occupancy calculator found no block fits (or rejected the input).
    Occupancy,
}

impl Problem {
    /// Whether the driver itself refuses such a launch. Every problem but [`Problem::ContractExact`]
    /// below the contract's thread count is one the driver refuses; an `@launch` kernel launched
    /// with fewer threads runs, but breaks the code's assumption of exactly `threads` threads.
    pub fn driver_refuses(&self) -> bool {
        !matches!(self, Problem::ContractExact)
    }
}

/// A launch the check refused: which kernel, on which arch, which rule, and the arithmetic.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaunchError {
    /// The kernel's symbol.
    pub kernel: String,
    /// The device's arch (`sm_90`).
    pub arch: Arch,
    /// For a JIT-compiled kernel, the arch of the PTX the driver compiled; `None` for a cubin.
    pub jit_from: Option<Arch>,
    /// The rule.
    pub problem: Problem,
    /// The arithmetic, as `cargo launch check` prints it.
    pub message: String,
    /// For a block the resources refuse: the numbers, as `cargo launch check` computes them.
    pub failure: Option<LaunchFailure>,
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.jit_from {
            None => write!(f, "`{}` on {}: {}", self.kernel, self.arch, self.message),
            Some(ptx) => write!(f, "`{}` on {} (JIT from {ptx} PTX): {}", self.kernel, self.arch, self.message),
        }
    }
}

impl std::error::Error for LaunchError {}

fn dims(d: (u32, u32, u32)) -> String {
    format!("({}, {}, {})", d.0, d.1, d.2)
}

/// Checks launching `kernel` with `cfg` on `dev`. `jit_from`, for messages: the arch of the PTX
/// the driver JIT-compiled the kernel from, `None` for a cubin.
///
/// In order: block shape against the device (no zero dimension, per-dimension maxima, total
/// threads); the contract (`@launch` / `.reqntid`: exactly `threads`; `__launch_bounds__`: at
/// most); the function's `MAX_THREADS_PER_BLOCK` (the register-limited maximum); dynamic shared
/// memory against the opt-in limit (static + dynamic may reach `sharedMemPerBlockOptin`; the
/// function's current dynamic limit is raised when needed); the calculator's resident blocks
/// (0 means the driver refuses); the grid against the device's limits.
pub fn check_launch(
    kernel: &str,
    jit_from: Option<Arch>,
    dev: &DeviceInfo,
    contract: Option<&Contract>,
    func: &FunctionInfo,
    cfg: &LaunchConfig,
) -> Result<Approval, LaunchError> {
    let fail = |(problem, message): Broken| LaunchError {
        kernel: kernel.into(),
        arch: dev.arch(),
        jit_from,
        problem,
        message,
        failure: None,
    };
    // The resources refuse the block: the rule follows from the arithmetic.
    let refused = |failure: LaunchFailure| {
        let problem = match failure {
            LaunchFailure::Registers { .. } => Problem::Registers,
            LaunchFailure::ThreadLimit { .. } => Problem::ThreadLimit,
            LaunchFailure::SharedMemory { .. } => Problem::SharedMemory,
            LaunchFailure::NoBlockFits { .. } => Problem::Occupancy,
        };
        LaunchError { failure: Some(failure), ..fail((problem, failure.to_string())) }
    };
    let lim = &dev.limits;
    let threads = block_threads(dev, cfg.block_dim).map_err(fail)?;
    if let Some(c) = contract {
        check_contract(c, threads, cfg.block_dim).map_err(fail)?;
    }
    let dynamic = cfg.shared_mem_bytes;
    let r = func.resources();
    let max_dynamic_allowed = lim.smem_per_block_optin.saturating_sub(func.shared_static);
    // The launch raises the function's current dynamic limit when it needs more (see `opted_in`).
    let attrs = func.attrs(func.max_dynamic_shared).opted_in(lim, dynamic);
    let occ = occupancy::occupancy(lim, &attrs, threads, dynamic, func.carveout)
        .map_err(|e| fail((Problem::Occupancy, e.to_string())))?;
    if threads > func.max_threads_per_block || dynamic > max_dynamic_allowed || occ.active_blocks == 0 {
        return Err(refused(LaunchFailure::diagnose(lim, &r, dynamic, threads, func.max_threads_per_block, &occ)));
    }
    check_grid(dev, cfg.grid_dim).map_err(fail)?;
    Ok(Approval {
        threads,
        raise_max_dynamic_shared: (dynamic > func.max_dynamic_shared).then_some(dynamic),
        occupancy: occ,
    })
}

/// A rule a launch broke and the arithmetic, before the kernel and arch are added.
type Broken = (Problem, String);

/// The block's threads, when its shape fits the device: no zero dimension, each within the
/// device's per-dimension maximum, the total within its per-block maximum.
fn block_threads(dev: &DeviceInfo, block: (u32, u32, u32)) -> Result<u32, Broken> {
    let (bx, by, bz) = block;
    if bx == 0 || by == 0 || bz == 0 {
        return Err((Problem::BlockShape, format!("block {} has a zero dimension", dims(block))));
    }
    for (axis, (v, max)) in ["x", "y", "z"].iter().zip([bx, by, bz].into_iter().zip(dev.max_block_dim)) {
        if v > max {
            return Err((
                Problem::BlockShape,
                format!("block {}: dimension {axis} = {} exceeds the device's {}", dims(block), group(v), group(max)),
            ));
        }
    }
    let total = u64::from(bx) * u64::from(by) * u64::from(bz);
    let max = dev.limits.max_threads_per_block;
    if total > u64::from(max) {
        return Err((
            Problem::BlockShape,
            format!("block {} has {total} threads, the device allows {} per block", dims(block), group(max)),
        ));
    }
    Ok(total as u32)
}

/// The contract's thread count: exactly that many (`@launch`, `.reqntid`) or at most
/// (`__launch_bounds__`).
fn check_contract(c: &Contract, threads: u32, block: (u32, u32, u32)) -> Result<(), Broken> {
    let Some(t) = c.threads else { return Ok(()) };
    if c.exact && threads != t {
        return Err((
            Problem::ContractExact,
            format!("{c} means exactly {t} threads per block; this launch has {threads} (block {})", dims(block)),
        ));
    }
    if !c.exact && threads > t {
        return Err((
            Problem::ContractBound,
            format!("{c} allows at most {t} threads per block; this launch has {threads} (block {})", dims(block)),
        ));
    }
    Ok(())
}

/// Every grid dimension `1 ..=` the device's maximum (with the arithmetic when not).
fn check_grid(dev: &DeviceInfo, grid: (u32, u32, u32)) -> Result<(), Broken> {
    for (axis, (v, max)) in ["x", "y", "z"].iter().zip([grid.0, grid.1, grid.2].into_iter().zip(dev.max_grid_dim)) {
        if v == 0 || v > max {
            return Err((
                Problem::Grid,
                format!("grid {}: dimension {axis} = {} must be 1 ..= {}", dims(grid), group(v), group(max)),
            ));
        }
    }
    Ok(())
}

/// Whether every grid dimension is `1 ..=` the device's maximum: the grid rule of
/// [`check_launch`], for the memo's hits (the grid is not part of what it remembers).
#[inline]
pub(super) fn grid_fits(dev: &DeviceInfo, (x, y, z): (u32, u32, u32)) -> bool {
    let [mx, my, mz] = dev.max_grid_dim;
    (1..=mx).contains(&x) && (1..=my).contains(&y) && (1..=mz).contains(&z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ContractSource;

    fn h200() -> DeviceInfo {
        DeviceInfo::from_limits(*DeviceLimits::lookup(9, 0).unwrap(), 132)
    }

    fn func(registers: u32, shared_static: u32, maxntid: Option<u32>) -> FunctionInfo {
        let dev = h200();
        FunctionInfo {
            registers,
            shared_static,
            local_bytes: 0,
            barriers: 1,
            max_threads_per_block: occupancy::max_threads_per_block(&dev.limits, registers, maxntid),
            max_dynamic_shared: dev.limits.smem_per_block - shared_static,
            carveout: Carveout::Default,
            const_bytes: 0,
            ptx_version: 90,
            binary_version: 90,
        }
    }

    fn cfg(grid: u32, block: u32, smem: u32) -> LaunchConfig {
        LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: smem }
    }

    #[test]
    fn the_articles_512_thread_launch_is_refused_with_its_arithmetic() {
        let e = check_launch("poly_eval", None, &h200(), None, &func(167, 0, None), &cfg(1, 512, 0)).unwrap_err();
        assert_eq!(e.problem, Problem::Registers);
        assert!(matches!(e.failure, Some(LaunchFailure::Registers { needed: 86016, .. })), "{e:?}");
        assert_eq!(
            e.to_string(),
            "`poly_eval` on sm_90: 167 registers × 512 threads needs 86,016 registers per block (5,376 per warp × 16 \
             warps), the SM allows 65,536; the largest block that launches is 384"
        );
        // A JIT-compiled kernel's message names the PTX it came from, as when the arch was text.
        let jit = Some(Arch::new(8, 0, Variant::Base));
        let e = check_launch("poly_eval", jit, &h200(), None, &func(167, 0, None), &cfg(1, 512, 0)).unwrap_err();
        assert_eq!((e.arch, e.jit_from), (Arch::new(9, 0, Variant::Base), jit));
        assert!(e.to_string().starts_with("`poly_eval` on sm_90 (JIT from sm_80 PTX): 167 registers × 512"), "{e}");
        let ok = check_launch("poly_eval", None, &h200(), None, &func(167, 0, None), &cfg(1, 384, 0)).unwrap();
        assert_eq!((ok.threads, ok.occupancy.active_blocks, ok.raise_max_dynamic_shared), (384, 1, None));
    }

    #[test]
    fn contracts_are_exact_or_upper_bounds() {
        let exact = Contract {
            source: ContractSource::Annotation,
            threads: Some(128),
            min_blocks: None,
            max_regs: None,
            exact: true,
        };
        let f = func(20, 0, Some(128));
        let e = check_launch("k", None, &h200(), Some(&exact), &f, &cfg(1, 64, 0)).unwrap_err();
        assert_eq!(e.problem, Problem::ContractExact);
        assert!(!e.problem.driver_refuses());
        assert_eq!(
            e.message,
            "@launch(128) means exactly 128 threads per block; this launch has 64 (block (64, 1, 1))"
        );
        assert!(check_launch("k", None, &h200(), Some(&exact), &f, &cfg(1, 128, 0)).is_ok());
        let bound = Contract { source: ContractSource::LaunchBounds, exact: false, threads: Some(256), ..exact };
        let f = func(200, 0, Some(256));
        assert!(check_launch("k", None, &h200(), Some(&bound), &f, &cfg(1, 200, 0)).is_ok());
        let e = check_launch("k", None, &h200(), Some(&bound), &f, &cfg(1, 288, 0)).unwrap_err();
        assert_eq!(e.problem, Problem::ContractBound);
        assert_eq!(
            e.message,
            "__launch_bounds__(256) allows at most 256 threads per block; this launch has 288 (block (288, 1, 1))"
        );
    }

    #[test]
    fn dynamic_shared_memory_is_raised_up_to_the_opt_in_limit() {
        let f = func(12, 4096, None);
        let ok = check_launch("s4k", None, &h200(), None, &f, &cfg(1, 32, 45056)).unwrap();
        assert_eq!(ok.raise_max_dynamic_shared, None);
        let ok = check_launch("s4k", None, &h200(), None, &f, &cfg(1, 32, 228352)).unwrap();
        assert_eq!((ok.raise_max_dynamic_shared, ok.occupancy.active_blocks), (Some(228352), 1));
        let e = check_launch("s4k", None, &h200(), None, &f, &cfg(1, 32, 228353)).unwrap_err();
        assert_eq!(e.problem, Problem::SharedMemory);
        assert_eq!(
            e.message,
            "4,096 static + 228,353 dynamic + 1,024 reserved bytes of shared memory per block (233,600 allocated in \
             units of 128); an SM gives one block at most 233,472"
        );
    }

    /// Issue 19, item 3: the checked launch agrees with `launch_engine::quantity` (the build's
    /// and the CLI's rule for each launch quantity): a block size or a
    /// dynamic shared memory size out of the quantity's range is refused on the device too (the
    /// device's own limits are within those ranges), and the ranges' ends are not a shape error.
    #[test]
    fn the_checked_launch_refuses_what_the_quantity_rules_refuse() {
        use launch_engine::quantity::{Quantity, MAX_DYNAMIC_SMEM};
        let (dev, f) = (h200(), func(12, 0, None));
        let launch = |block: u32, smem: u32| check_launch("k", None, &dev, None, &f, &cfg(1, block, smem));
        for block in [0, 1025, 2000, u32::MAX] {
            assert!(Quantity::BlockSize.check(i64::from(block)).is_err());
            assert_eq!(launch(block, 0).unwrap_err().problem, Problem::BlockShape, "{block}");
        }
        for block in [1, 1024] {
            assert!(Quantity::BlockSize.check(i64::from(block)).is_ok());
            assert!(launch(block, 0).is_ok(), "{block}");
        }
        assert!(Quantity::DynamicSmem.check(i64::from(MAX_DYNAMIC_SMEM) + 1).is_err());
        assert!(launch(32, MAX_DYNAMIC_SMEM + 1).is_err());
        assert!(launch(32, MAX_DYNAMIC_SMEM).is_ok(), "sm_90 gives a block the most any GPU does");
    }

    #[test]
    fn block_and_grid_shapes_are_checked() {
        let f = func(12, 0, None);
        let dev = h200();
        let shape = |b: (u32, u32, u32), g: (u32, u32, u32)| {
            check_launch("k", None, &dev, None, &f, &LaunchConfig { grid_dim: g, block_dim: b, shared_mem_bytes: 0 })
                .map_err(|e| (e.problem, e.message))
        };
        assert_eq!(shape((0, 1, 1), (1, 1, 1)).unwrap_err().0, Problem::BlockShape);
        assert_eq!(
            shape((1, 1, 65), (1, 1, 1)).unwrap_err().1,
            "block (1, 1, 65): dimension z = 65 exceeds the device's 64"
        );
        assert_eq!(
            shape((33, 32, 1), (1, 1, 1)).unwrap_err().1,
            "block (33, 32, 1) has 1056 threads, the device allows 1,024 per block"
        );
        assert!(shape((32, 32, 1), (1, 65535, 65535)).is_ok());
        assert_eq!(
            shape((32, 1, 1), (1, 65536, 1)).unwrap_err().1,
            "grid (1, 65536, 1): dimension y = 65,536 must be 1 ..= 65,535"
        );
        assert_eq!(shape((32, 1, 1), (0, 1, 1)).unwrap_err().0, Problem::Grid);
    }
}

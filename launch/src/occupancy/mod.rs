//! Occupancy: an exact port of NVIDIA's occupancy calculator, `cuda_occupancy.h` as shipped with
//! CUDA 12.9 (`__CUDA_OCC_MAJOR__ 12`, `__CUDA_OCC_MINOR__ 1`), plus the driver behaviour around it
//! (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`, `cuOccupancyMaxPotentialBlockSize`,
//! `cuOccupancyAvailableDynamicSMemPerBlock`).
//!
//! The per-architecture inputs live in [`DeviceLimits`], one static row per compute capability
//! 5.0 … 12.1 ([`DeviceLimits::for_arch`]). [`occupancy`] is `cudaOccMaxActiveBlocksPerMultiprocessor`
//! implemented literally: the same limits, evaluated in the same order, with the same integer
//! truncations, including the header's quirks:
//!
//! * the register limit's "hardware check" (warps rounded up to the sub-partition count) and the
//!   GP100 rule (on 6.0 a kernel must also fit a 4-sub-partition GP10x);
//! * the shared-memory pool growing to the next carveout step when one block does not fit the
//!   preference, and the 1 KB per block the driver reserves on CC >= 8;
//! * the limiting factors: every limit equal to the minimum is reported (ties included), and the
//!   barrier bit, computed afterwards on CC >= 9, never clears the others.
//!
//! On a real H200 this model reproduced every number the driver returned (see the tests).
//!
//! Arithmetic is exact wherever the header's own `int` arithmetic does not overflow, which covers
//! every input the toolchain can produce. Inputs the header would read as negative `int`s (a block
//! size or register count above `i32::MAX`) are rejected as the header rejects them; beyond that
//! (shared memory above 2 GiB, blocks of millions of threads) the port computes in 64 bits where C
//! would wrap, and reports allocations saturated at `u32::MAX`.

mod limits;

use std::fmt;

/// The value the header reports for a limit that does not apply (`INT_MAX`): the register limit of
/// a kernel that uses no registers, the shared-memory limit of a block that uses none (only
/// possible below CC 8.0, where no memory is reserved per block).
pub const UNLIMITED: u32 = i32::MAX as u32;

const INT_MAX: i64 = i32::MAX as i64;

/// The most registers per thread ptxas assigns (`-maxrregcount` and `__maxnreg__` accept no more),
/// on every arch: the header accepts 256 from CC 7.0 ([`DeviceLimits::max_regs_per_thread`]), but
/// no compiled kernel reaches it.
pub const PTXAS_MAX_REGISTERS: u32 = 255;

/// Hardware limits of one compute capability: the device properties the calculator reads
/// (`cudaOccDeviceProp`) and the per-arch constants the header hard-codes.
///
/// The static rows ([`DeviceLimits::lookup`]) cite their sources. A custom value
/// may be built for a device that is not in the table; the calculator then reads every constant
/// from the fields, and keys only the behaviour changes between generations on `major` (carveout
/// on >= 7, reserved memory on >= 8, barriers on >= 9) and the GP100 rule on exactly 6.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct DeviceLimits {
    /// Compute capability major version.
    pub major: u32,
    /// Compute capability minor version.
    pub minor: u32,
    /// Chip family name, as Nsight Compute calls it (`GH100`).
    pub chip: &'static str,
    /// Device maximum threads per block (`maxThreadsPerBlock`; 1024 everywhere). A larger block
    /// gets 0 blocks per SM.
    pub max_threads_per_block: u32,
    /// Maximum resident threads per SM (`maxThreadsPerMultiprocessor` = warps × 32).
    pub max_threads_per_sm: u32,
    /// Maximum resident blocks per SM (the header's `cudaOccMaxBlocksPerMultiprocessor`).
    pub max_blocks_per_sm: u32,
    /// Registers one block may use (`regsPerBlock`).
    pub regs_per_block: u32,
    /// Registers in one SM (`regsPerMultiprocessor`).
    pub regs_per_sm: u32,
    /// Threads per warp (`warpSize`).
    pub warp_size: u32,
    /// Shared memory per block without opt-in (`sharedMemPerBlock`; 48 KB everywhere).
    pub smem_per_block: u32,
    /// Shared memory per SM at the largest carveout (`sharedMemPerMultiprocessor`).
    pub smem_per_sm: u32,
    /// Shared memory per block after `cudaFuncSetAttribute` opt-in (`sharedMemPerBlockOptin`).
    pub smem_per_block_optin: u32,
    /// Shared memory the driver reserves per block (`reservedSharedMemPerBlock`; 1 KB on CC >= 8).
    pub reserved_smem_per_block: u32,
    /// Shared-memory allocation unit in bytes (256, or 128 from CC 8.0).
    pub smem_granularity: u32,
    /// Register allocation unit per warp (256 everywhere).
    pub reg_granularity: u32,
    /// SM sub-partitions, to which warps' registers are allocated (4; 2 on GP100).
    pub sub_partitions: u32,
    /// Registers per thread the header accepts (255 below CC 7.0, 256 from 7.0; ptxas never
    /// assigns more than 255).
    pub max_regs_per_thread: u32,
    /// CTA barriers available per resident-block slot: the SM has
    /// `barriers_per_block_slot × max_blocks_per_sm` barriers (only enforced on CC >= 9).
    pub barriers_per_block_slot: u32,
    /// Shared-memory carveout sizes in KB, ascending (`cudaOccAlignUpShmemSizeVoltaPlus`); empty
    /// below CC 7.0, where shared memory is fixed.
    pub carveout_kb: &'static [u32],
    /// Whether partitioned global caching exists (5.2, 5.3, 6.1, 6.2).
    pub partitioned_gc: bool,
}

impl DeviceLimits {
    /// Every row of the table, in ascending compute capability: 5.0, 5.2, 5.3, 6.0, 6.1, 6.2,
    /// 7.0, 7.2, 7.5, 8.0, 8.6, 8.7, 8.9, 9.0, 10.0, 10.1, 10.3, 11.0, 12.0, 12.1.
    pub fn all() -> &'static [DeviceLimits] {
        limits::TABLE
    }

    /// The row of an architecture; `a`/`f` variants use their base compute capability. `None`
    /// only if the compute capability is not in the table.
    pub fn for_arch(arch: crate::Arch) -> Option<&'static DeviceLimits> {
        let (major, minor) = arch.compute_capability();
        Self::lookup(major, minor).ok()
    }

    /// The row of a compute capability; [`OccupancyError::UnknownDevice`] if it is not in the table.
    pub fn lookup(major: u32, minor: u32) -> Result<&'static DeviceLimits, OccupancyError> {
        limits::TABLE
            .iter()
            .find(|d| d.major == major && d.minor == minor)
            .ok_or(OccupancyError::UnknownDevice { major, minor })
    }

    /// `(major, minor)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        (self.major, self.minor)
    }

    /// Resident warps per SM (`max_threads_per_sm / warp_size`): the 100 % of occupancy.
    pub(crate) fn max_warps_per_sm(&self) -> u32 {
        self.max_threads_per_sm.checked_div(self.warp_size).unwrap_or(0)
    }

    /// The most registers per thread a compiled kernel can use here: the header's limit, at most
    /// [`PTXAS_MAX_REGISTERS`].
    pub fn max_registers_assigned(&self) -> u32 {
        self.max_regs_per_thread.min(PTXAS_MAX_REGISTERS)
    }

    /// CTA barriers per SM, shared by the resident blocks; `None` below CC 9.0, where the
    /// calculator does not limit blocks by barriers.
    pub fn barriers_per_sm(&self) -> Option<u32> {
        (self.major >= 9).then(|| self.barriers_per_block_slot.saturating_mul(self.max_blocks_per_sm))
    }
}

/// Partitioned global caching (`cudaOccPartitionedGCConfig`): caching of global loads in L1
/// (`-dlcm=ca`) on 5.2, 5.3, 6.1 and 6.2, which confines a block to half an SM. Ignored on every
/// other architecture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum PartitionedGc {
    /// `PARTITIONED_GC_OFF` (the default).
    #[default]
    Off,
    /// `PARTITIONED_GC_ON`: on, unless no block would fit half an SM's registers.
    On,
    /// `PARTITIONED_GC_ON_STRICT`: on, even if that leaves 0 blocks.
    OnStrict,
}

/// Which per-block shared-memory limit applies (`cudaOccFuncShmemConfig`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ShmemLimitConfig {
    /// `FUNC_SHMEM_LIMIT_DEFAULT`: always the 48 KB limit, and `max_dynamic_shared` is not checked.
    Default,
    /// `FUNC_SHMEM_LIMIT_OPTIN` (what the driver uses): the opt-in limit once the function's
    /// maximum usage exceeds 48 KB, and dynamic shared memory above `max_dynamic_shared` fails.
    #[default]
    OptIn,
}

/// What the calculator needs to know about a kernel (`cudaOccFuncAttributes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct FunctionAttrs {
    /// Registers per thread (ptxas `Used N registers`).
    pub registers: u32,
    /// Static shared memory in bytes (ptxas `N bytes smem`, without the reserved 1 KB).
    pub shared_static: u32,
    /// CTA barriers (ptxas `used N barriers`); 0 disables the barrier limit. Only CC >= 9 checks it.
    pub barriers: u32,
    /// The `cudaFuncAttributeMaxDynamicSharedMemorySize` value; `None` = the driver default,
    /// `smem_per_block − shared_static` (49152 − static).
    pub max_dynamic_shared: Option<u32>,
    /// Launch bounds (`.maxntid` / `.reqntid` product). Only used by the block-size search and
    /// [`max_threads_per_block`]; [`occupancy`] evaluates any block size, so a caller must flag a
    /// block above the bounds itself.
    pub max_threads_per_block: Option<u32>,
    /// Partitioned global caching preference.
    pub partitioned_gc: PartitionedGc,
    /// Per-block shared-memory limit configuration.
    pub shmem_limit: ShmemLimitConfig,
}

impl FunctionAttrs {
    /// A kernel with these ptxas numbers and the driver's defaults: default dynamic shared-memory
    /// limit, no launch bounds, partitioned caching off, opt-in limit configuration.
    pub fn new(registers: u32, shared_static: u32, barriers: u32) -> Self {
        FunctionAttrs {
            registers,
            shared_static,
            barriers,
            max_dynamic_shared: None,
            max_threads_per_block: None,
            partitioned_gc: PartitionedGc::Off,
            shmem_limit: ShmemLimitConfig::OptIn,
        }
    }

    /// With `cudaFuncAttributeMaxDynamicSharedMemorySize` set to `bytes` (the opt-in).
    pub(crate) fn with_max_dynamic_shared(self, bytes: u32) -> Self {
        FunctionAttrs { max_dynamic_shared: Some(bytes), ..self }
    }

    /// With launch bounds of `threads` per block.
    #[cfg(any(test, feature = "cudarc"))]
    pub(crate) fn with_launch_bounds(self, threads: u32) -> Self {
        FunctionAttrs { max_threads_per_block: Some(threads), ..self }
    }

    /// The effective `maxDynamicSharedSizeBytes` on `dev`.
    pub fn max_dynamic_shared_on(&self, dev: &DeviceLimits) -> u32 {
        self.max_dynamic_shared.unwrap_or_else(|| dev.smem_per_block.saturating_sub(self.shared_static))
    }

    /// As launched with `dynamic` bytes of dynamic shared memory: the limit is raised to `dynamic`
    /// where that is more (the opt-in, `cudaFuncSetAttribute(MaxDynamicSharedMemorySize)`), so a
    /// launch that asks for more than the default is modelled as a kernel that opted in. Past the
    /// arch's opt-in limit the calculator is asked with the request itself (and says 0 blocks).
    pub fn opted_in(self, dev: &DeviceLimits, dynamic: u32) -> Self {
        self.with_max_dynamic_shared(self.max_dynamic_shared_on(dev).max(dynamic))
    }
}

impl Default for FunctionAttrs {
    fn default() -> Self {
        FunctionAttrs::new(0, 0, 0)
    }
}

/// Shared memory / L1 carveout preference (`cudaFuncAttributePreferredSharedMemoryCarveout`,
/// the header's `carveoutConfig`). Only CC >= 7.0 has a carveout; below, it is ignored.
///
/// The legacy cache configurations map to percentages on every architecture in the table:
/// `cudaFuncCachePreferL1` = `Percent(0)`, `PreferShared` = `Percent(100)`, `PreferEqual` =
/// `Percent(50)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Carveout {
    /// No preference (`-1`): the largest carveout.
    #[default]
    Default,
    /// Percentage of the largest carveout, rounded up to the next supported size. Valid values are
    /// −1 (same as `Default`) through 100; others are invalid input on CC >= 7.0.
    Percent(i32),
}

impl Carveout {
    /// The header's integer encoding (`-1` = default).
    pub fn raw(self) -> i32 {
        match self {
            Carveout::Default => -1,
            Carveout::Percent(p) => p,
        }
    }

    /// From the header's integer encoding (`-1` = default).
    pub fn from_raw(value: i32) -> Carveout {
        if value == -1 {
            Carveout::Default
        } else {
            Carveout::Percent(value)
        }
    }
}

/// One resource that limits blocks per SM (`cudaOccLimitingFactor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Limiter {
    /// Warp slots (`OCC_LIMIT_WARPS`), including blocks above the device's maximum block size.
    Warps,
    /// Registers (`OCC_LIMIT_REGISTERS`).
    Registers,
    /// Shared memory (`OCC_LIMIT_SHARED_MEMORY`).
    SharedMemory,
    /// The maximum of resident blocks per SM (`OCC_LIMIT_BLOCKS`).
    Blocks,
    /// CTA barriers (`OCC_LIMIT_BARRIERS`, CC >= 9).
    Barriers,
}

impl Limiter {
    /// Every limiter, in bit order.
    pub(crate) const ALL: [Limiter; 5] =
        [Limiter::Warps, Limiter::Registers, Limiter::SharedMemory, Limiter::Blocks, Limiter::Barriers];

    /// The header's bit for this limiter.
    pub(crate) fn bit(self) -> u8 {
        match self {
            Limiter::Warps => 0x01,
            Limiter::Registers => 0x02,
            Limiter::SharedMemory => 0x04,
            Limiter::Blocks => 0x08,
            Limiter::Barriers => 0x10,
        }
    }

    /// Words for a report: "warps", "registers", "shared memory", "blocks per SM", "barriers".
    pub fn name(&self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
            Limiter::Blocks => "blocks per SM",
            Limiter::Barriers => "barriers",
        }
    }
}

impl fmt::Display for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The limiting factors of one occupancy result, a bit set with the header's bits
/// (`limitingFactors`). Ties included: every limit equal to the minimum is set, and the barrier
/// bit is added afterwards without clearing the others (so `{blocks, barriers}` can be reported
/// although only barriers bind).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Limiters(u8);

impl Limiters {
    /// No limiter.
    pub(crate) const NONE: Limiters = Limiters(0);

    /// From the header's bits (unknown bits are dropped).
    #[cfg(any(test, feature = "cudarc"))]
    pub(crate) fn from_bits(bits: u8) -> Limiters {
        Limiters(bits & 0x1f)
    }

    /// The header's bits (`cudaOccLimitingFactor`'s encoding).
    pub fn bits(self) -> u8 {
        self.0
    }

    /// Whether `limiter` is set.
    pub fn contains(self, limiter: Limiter) -> bool {
        self.0 & limiter.bit() != 0
    }

    /// Whether no limiter is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The set limiters, in bit order (warps, registers, shared memory, blocks, barriers).
    pub fn iter(self) -> impl Iterator<Item = Limiter> {
        Limiter::ALL.into_iter().filter(move |l| self.contains(*l))
    }

    fn insert(&mut self, limiter: Limiter) {
        self.0 |= limiter.bit();
    }
}

impl fmt::Display for Limiters {
    /// The names joined by ", " ("registers, barriers"), or "none".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        for (i, l) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(l.name())?;
        }
        Ok(())
    }
}

impl FromIterator<Limiter> for Limiters {
    fn from_iter<I: IntoIterator<Item = Limiter>>(iter: I) -> Self {
        let mut set = Limiters::NONE;
        for l in iter {
            set.insert(l);
        }
        set
    }
}

/// Serialised as a list of snake_case names (`["registers", "barriers"]`).
#[cfg(feature = "serde")]
impl serde::Serialize for Limiters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Limiters {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Vec::<Limiter>::deserialize(d)?.into_iter().collect())
    }
}

/// Written as a list of limiter names.
#[cfg(feature = "json-schema")]
impl schemars::JsonSchema for Limiters {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Limiters".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let item = generator.subschema_for::<Limiter>();
        schemars::json_schema!({ "type": "array", "items": item, "uniqueItems": true })
    }
}

/// Result of [`occupancy`] (`cudaOccResult`, plus the derived warp counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Occupancy {
    /// Resident blocks per SM (`activeBlocksPerMultiprocessor`); 0 means the launch fails.
    pub active_blocks: u32,
    /// Resident warps per SM: `active_blocks × ceil(block / warp size)`.
    pub active_warps: u32,
    /// The SM's warp slots (`max_threads_per_sm / warp_size`).
    pub max_warps: u32,
    /// What limits `active_blocks`, ties included.
    pub limiters: Limiters,
    /// Blocks the registers allow ([`UNLIMITED`] for a kernel with 0 registers).
    pub block_limit_regs: u32,
    /// Blocks the shared memory allows ([`UNLIMITED`] when a block uses none).
    pub block_limit_smem: u32,
    /// Blocks the warp slots allow (0 above the device's maximum block size).
    pub block_limit_warps: u32,
    /// The architecture's maximum of resident blocks.
    pub block_limit_blocks: u32,
    /// Blocks the CTA barriers allow; `None` when not limited (below CC 9.0, or no barrier).
    pub block_limit_barriers: Option<u32>,
    /// Registers allocated per block (per-warp allocation rounded to 256, times warps).
    pub allocated_regs_per_block: u32,
    /// Shared memory allocated per block, the reserved 1 KB included, rounded to the granularity.
    pub allocated_smem_per_block: u32,
    /// Warps per block.
    pub warps_per_block: u32,
    /// Whether partitioned global caching ends up on (`partitionedGCConfig` of the result).
    pub partitioned_gc: PartitionedGc,
}

impl Occupancy {
    /// Theoretical occupancy in percent: active warps / warp slots × 100.
    pub fn percent(&self) -> f64 {
        if self.max_warps == 0 {
            return 0.0;
        }
        f64::from(self.active_warps) * 100.0 / f64::from(self.max_warps)
    }

    /// [`percent`](Occupancy::percent) to one decimal, as the report and the calculator's JSON give it.
    pub fn percent_rounded(&self) -> f64 {
        (self.percent() * 10.0).round() / 10.0
    }
}

/// Why the calculator gave no result (`cudaOccError`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OccupancyError {
    /// `CUDA_OCC_ERROR_INVALID_INPUT`: what is wrong.
    InvalidInput(&'static str),
    /// `CUDA_OCC_ERROR_UNKNOWN_DEVICE`: a compute capability outside the table.
    UnknownDevice {
        /// Compute capability major version.
        major: u32,
        /// Compute capability minor version.
        minor: u32,
    },
}

impl OccupancyError {
    /// The header's error code: 1 for invalid input, 2 for an unknown device.
    pub fn code(&self) -> i32 {
        match self {
            OccupancyError::InvalidInput(_) => 1,
            OccupancyError::UnknownDevice { .. } => 2,
        }
    }
}

impl fmt::Display for OccupancyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OccupancyError::InvalidInput(why) => write!(f, "invalid occupancy input: {why}"),
            OccupancyError::UnknownDevice { major, minor } => write!(
                f,
                "compute capability {major}.{minor} is not in the occupancy table (known: {})",
                limits::TABLE.iter().map(|d| format!("{}.{}", d.major, d.minor)).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

impl std::error::Error for OccupancyError {}

// ---------------------------------------------------------------------------------------------
// The calculator. Names and order follow cuda_occupancy.h; `i64` stands for the header's `int`,
// `u64` for its `size_t`.
// ---------------------------------------------------------------------------------------------

/// A `u32` read as the C `int` it is stored in (values above `i32::MAX` become negative).
fn c_int(v: u32) -> i64 {
    i64::from(v as i32)
}

/// `__occDivideRoundUp` (y > 0).
fn div_round_up(x: i64, y: i64) -> i64 {
    (x + (y - 1)) / y
}

/// `__occRoundUp` (y > 0).
fn round_up(x: i64, y: i64) -> i64 {
    y * div_round_up(x, y)
}

fn to_u32(v: i64) -> u32 {
    v.clamp(0, i64::from(u32::MAX)) as u32
}

fn invalid(why: &'static str) -> OccupancyError {
    OccupancyError::InvalidInput(why)
}

/// The normalised `cudaOccFuncAttributes`.
#[derive(Clone, Copy)]
struct Attrs {
    max_threads_per_block: i64,
    num_regs: i64,
    shared_size: u64,
    gc: PartitionedGc,
    shmem_limit: ShmemLimitConfig,
    max_dynamic_shared: u64,
    barriers: i64,
}

impl Attrs {
    fn new(dev: &DeviceLimits, func: &FunctionAttrs, max_threads_per_block: i64) -> Attrs {
        Attrs {
            max_threads_per_block,
            num_regs: c_int(func.registers),
            shared_size: u64::from(func.shared_static),
            gc: func.partitioned_gc,
            shmem_limit: func.shmem_limit,
            max_dynamic_shared: u64::from(func.max_dynamic_shared_on(dev)),
            barriers: c_int(func.barriers),
        }
    }
}

/// `cudaOccDevicePropCheck` (l.1190–1210), plus the divisors the header takes from its switches.
fn device_check(dev: &DeviceLimits) -> Result<(), OccupancyError> {
    if c_int(dev.max_threads_per_block) <= 0
        || c_int(dev.max_threads_per_sm) <= 0
        || c_int(dev.regs_per_block) <= 0
        || c_int(dev.regs_per_sm) <= 0
        || c_int(dev.warp_size) <= 0
        || dev.smem_per_block == 0
        || dev.smem_per_sm == 0
    {
        return Err(invalid("device limits must be positive"));
    }
    if c_int(dev.smem_granularity) <= 0
        || c_int(dev.reg_granularity) <= 0
        || c_int(dev.sub_partitions) <= 0
        || c_int(dev.max_blocks_per_sm) < 0
        || c_int(dev.barriers_per_block_slot) < 0
    {
        return Err(invalid("device granularities and sub-partitions must be positive"));
    }
    Ok(())
}

/// `cudaOccFuncAttributesCheck` (l.1212–1224).
fn attrs_check(attrs: &Attrs) -> Result<(), OccupancyError> {
    if attrs.max_threads_per_block <= 0 {
        return Err(invalid("the function's maximum threads per block must be positive"));
    }
    if attrs.num_regs < 0 {
        return Err(invalid("register count out of range"));
    }
    Ok(())
}

/// `cudaOccInputCheck` (l.1235–1258).
fn input_check(dev: &DeviceLimits, attrs: &Attrs) -> Result<(), OccupancyError> {
    device_check(dev)?;
    attrs_check(attrs)
}

/// `cudaOccAlignUpShmemSizeVoltaPlus`: the smallest carveout step >= `size`.
fn align_up_carveout(dev: &DeviceLimits, size: u64) -> Result<u64, OccupancyError> {
    dev.carveout_kb
        .iter()
        .map(|kb| u64::from(*kb) * 1024)
        .find(|step| *step >= size)
        .ok_or(invalid("shared memory exceeds the largest carveout"))
}

/// `cudaOccSMemPerMultiprocessor`: the shared memory the carveout preference gives an SM.
fn smem_preference(dev: &DeviceLimits, carveout: Carveout) -> Result<u64, OccupancyError> {
    if dev.major >= 7 {
        // cudaOccSMemPreferenceVoltaPlus (l.1010–1051).
        let pref = carveout.raw();
        if !(-1..=100).contains(&pref) {
            return Err(invalid("carveout must be -1 (default) or 0..=100 percent"));
        }
        let size = if pref == -1 { u64::from(dev.smem_per_sm) } else { pref as u64 * u64::from(dev.smem_per_sm) / 100 };
        align_up_carveout(dev, size)
    } else {
        // cudaOccSMemPreference (l.1056–1107): Maxwell and Pascal have fixed shared memory.
        Ok(u64::from(dev.smem_per_sm))
    }
}

/// `cudaOccSMemPerBlock` (l.1125–1167): the per-block limit, reserved memory included on CC >= 8.
fn smem_per_block_limit(dev: &DeviceLimits, config: ShmemLimitConfig, smem_per_cta: u64) -> u64 {
    let per_block = u64::from(dev.smem_per_block);
    let mut limit = if dev.major <= 6 {
        per_block
    } else {
        match config {
            ShmemLimitConfig::Default => per_block,
            ShmemLimitConfig::OptIn if smem_per_cta > per_block => u64::from(dev.smem_per_block_optin),
            ShmemLimitConfig::OptIn => per_block,
        }
    };
    if dev.major >= 8 {
        limit += u64::from(dev.reserved_smem_per_block);
    }
    limit
}

/// `cudaOccMaxBlocksPerSMWarpsLimit` (l.1284–1330).
fn warps_limit(dev: &DeviceLimits, gc: PartitionedGc, block_size: i64) -> i64 {
    if block_size > c_int(dev.max_threads_per_block) {
        return 0;
    }
    let warp_size = c_int(dev.warp_size);
    let max_warps_per_sm = c_int(dev.max_threads_per_sm) / warp_size;
    let warps_per_cta = div_round_up(block_size, warp_size);
    if gc != PartitionedGc::Off {
        // A block may use only half an SM's warp slots.
        ((max_warps_per_sm / 2) / warps_per_cta) * 2
    } else {
        max_warps_per_sm / warps_per_cta
    }
}

/// `cudaOccMaxBlocksPerSMRegsLimit` (l.1437–1555) with `sub_partitions` sub-partitions.
/// Returns `(limit, allocatedRegistersPerBlock)` and may turn `gc` off.
fn regs_limit(
    dev: &DeviceLimits,
    sub_partitions: i64,
    gc: &mut PartitionedGc,
    attrs: &Attrs,
    block_size: i64,
) -> (i64, i64) {
    let granularity = c_int(dev.reg_granularity);
    let warp_size = c_int(dev.warp_size);
    let regs_per_block = c_int(dev.regs_per_block);

    let warps_per_cta = div_round_up(block_size, warp_size);
    let regs_per_warp = round_up(attrs.num_regs * warp_size, granularity);
    let regs_per_cta = regs_per_warp.saturating_mul(warps_per_cta);
    // "For historical reasons, the verification logic assumes register allocations are made to
    // all partitions simultaneously": warps rounded up to the sub-partition count.
    let regs_assumed_per_cta = regs_per_warp.saturating_mul(round_up(warps_per_cta, sub_partitions));

    let limit = if regs_per_block < regs_assumed_per_cta     // hardware check
        || regs_per_block < regs_per_cta                      // software check
        || attrs.num_regs > c_int(dev.max_regs_per_thread)
    {
        0
    } else if regs_per_warp > 0 {
        let warps_per_sub_partition = (c_int(dev.regs_per_sm) / sub_partitions) / regs_per_warp;
        let mut max_blocks = 0;
        if *gc != PartitionedGc::Off {
            // A block may use only half an SM's sub-partitions.
            let warps_per_sm_partition = warps_per_sub_partition * (sub_partitions / 2);
            max_blocks = (warps_per_sm_partition / warps_per_cta) * 2;
        }
        if max_blocks == 0 && *gc != PartitionedGc::OnStrict {
            *gc = PartitionedGc::Off;
            max_blocks = (warps_per_sub_partition * sub_partitions) / warps_per_cta;
        }
        max_blocks
    } else {
        INT_MAX
    };
    (limit, regs_per_cta)
}

/// `cudaOccMaxBlocksPerSMSmemLimit` (l.1334–1435). Returns `(limit, allocatedSharedMemPerBlock)`.
fn smem_limit(
    dev: &DeviceLimits,
    attrs: &Attrs,
    carveout: Carveout,
    dynamic_smem: u64,
) -> Result<(i64, u64), OccupancyError> {
    let granularity = c_int(dev.smem_granularity) as u64;
    let preference = smem_preference(dev, carveout)?;

    let static_smem = attrs.shared_size + u64::from(dev.reserved_smem_per_block);
    let total_per_cta = static_smem + dynamic_smem;
    let allocated_per_cta = total_per_cta.div_ceil(granularity) * granularity;
    let max_usage_per_cta = static_smem + attrs.max_dynamic_shared;

    let dynamic_exceeded = attrs.shmem_limit != ShmemLimitConfig::Default && dynamic_smem > attrs.max_dynamic_shared;
    let limit_per_cta = smem_per_block_limit(dev, attrs.shmem_limit, max_usage_per_cta);
    let total_exceeded = allocated_per_cta > limit_per_cta;

    let limit = if dynamic_exceeded || total_exceeded {
        0
    } else {
        // The preference stands as long as one block fits in it; otherwise, from Volta on, the
        // carveout grows to the next step that fits one block.
        let smem_per_sm = if preference >= allocated_per_cta {
            preference
        } else if dev.major >= 7 {
            align_up_carveout(dev, allocated_per_cta)?
        } else {
            u64::from(dev.smem_per_sm)
        };
        // A block without shared memory (possible below CC 8.0) is not limited by it.
        smem_per_sm.checked_div(allocated_per_cta).map_or(INT_MAX, |blocks| blocks.min(INT_MAX as u64) as i64)
    };
    Ok((limit, allocated_per_cta))
}

/// `cudaOccMaxBlocksPerSMBlockBarrierLimit` (l.1559–1613).
fn barrier_limit(dev: &DeviceLimits, cta_limit_blocks: i64, barriers: i64) -> i64 {
    let available = cta_limit_blocks * c_int(dev.barriers_per_block_slot);
    if barriers != 0 {
        available / barriers
    } else {
        INT_MAX
    }
}

/// `cudaOccMaxActiveBlocksPerMultiprocessor` (l.1618–1775).
fn max_active_blocks(
    dev: &DeviceLimits,
    attrs: &Attrs,
    carveout: Carveout,
    block_size: u32,
    dynamic_smem: u32,
) -> Result<Occupancy, OccupancyError> {
    let block_size = c_int(block_size);
    if block_size <= 0 {
        return Err(invalid("block size must be positive"));
    }
    input_check(dev, attrs)?;

    // Partitioned global caching only where the chip has it.
    let mut gc = if dev.partitioned_gc { attrs.gc } else { PartitionedGc::Off };

    let (mut cta_limit_regs, allocated_regs) = regs_limit(dev, c_int(dev.sub_partitions), &mut gc, attrs, block_size);

    // GP100 has 2 sub-partitions, GP10x 4: a kernel that cannot run on GP10x is not allowed on
    // any Pascal part, so 6.0 re-checks the register limit as a 6.1.
    if dev.major == 6 && dev.minor == 0 && cta_limit_regs != 0 {
        let mut gc_gp10x = gc;
        let (limit_gp10x, _) = regs_limit(dev, 4, &mut gc_gp10x, attrs, block_size);
        if limit_gp10x == 0 {
            cta_limit_regs = 0;
        }
    }

    let cta_limit_warps = warps_limit(dev, gc, block_size);
    let cta_limit_blocks = c_int(dev.max_blocks_per_sm);
    let (cta_limit_smem, allocated_smem) = smem_limit(dev, attrs, carveout, u64::from(dynamic_smem))?;

    let mut cta_limit = cta_limit_regs.min(cta_limit_smem.min(cta_limit_warps.min(cta_limit_blocks)));

    let mut limiters = Limiters::NONE;
    if cta_limit == cta_limit_warps {
        limiters.insert(Limiter::Warps);
    }
    if cta_limit == cta_limit_regs {
        limiters.insert(Limiter::Registers);
    }
    if cta_limit == cta_limit_smem {
        limiters.insert(Limiter::SharedMemory);
    }
    if cta_limit == cta_limit_blocks {
        limiters.insert(Limiter::Blocks);
    }

    // From Hopper on, CTA barriers limit blocks too; the bits above are kept.
    let cta_limit_bars = if dev.major >= 9 && attrs.barriers > 0 {
        let bars = barrier_limit(dev, cta_limit_blocks, attrs.barriers);
        cta_limit = bars.min(cta_limit);
        if cta_limit == bars {
            limiters.insert(Limiter::Barriers);
        }
        Some(to_u32(bars))
    } else {
        None
    };

    let warps_per_block = div_round_up(block_size, c_int(dev.warp_size));
    let active_blocks = to_u32(cta_limit);
    Ok(Occupancy {
        active_blocks,
        active_warps: to_u32(i64::from(active_blocks) * warps_per_block),
        max_warps: dev.max_warps_per_sm(),
        limiters,
        block_limit_regs: to_u32(cta_limit_regs),
        block_limit_smem: to_u32(cta_limit_smem),
        block_limit_warps: to_u32(cta_limit_warps),
        block_limit_blocks: to_u32(cta_limit_blocks),
        block_limit_barriers: cta_limit_bars,
        allocated_regs_per_block: to_u32(allocated_regs),
        allocated_smem_per_block: allocated_smem.min(u64::from(u32::MAX)) as u32,
        warps_per_block: to_u32(warps_per_block),
        partitioned_gc: gc,
    })
}

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/// Resident blocks per SM of `func` launched with `block_size` threads and `dynamic_smem` bytes
/// of dynamic shared memory (`cudaOccMaxActiveBlocksPerMultiprocessor`, which the driver's
/// `cuOccupancyMaxActiveBlocksPerMultiprocessor` matches).
///
/// A block above the device's 1024 threads gets 0 blocks (warp limit); a block above the
/// function's launch bounds is **not** rejected here (neither does the driver's query), so check
/// [`max_threads_per_block`] separately. Errors: a block size of 0 (or above `i32::MAX`), a
/// launch-bounds value of 0, a carveout outside −1…100 on CC >= 7.0, or device limits that are
/// not positive.
pub fn occupancy(
    dev: &DeviceLimits,
    func: &FunctionAttrs,
    block_size: u32,
    dynamic_smem: u32,
    carveout: Carveout,
) -> Result<Occupancy, OccupancyError> {
    let max_threads = c_int(func.max_threads_per_block.unwrap_or(dev.max_threads_per_block));
    let attrs = Attrs::new(dev, func, max_threads);
    max_active_blocks(dev, &attrs, carveout, block_size, dynamic_smem)
}

/// The largest block a kernel with `registers` registers per thread can be launched with on `dev`
/// (what the driver reports as `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`), further capped by the
/// launch bounds `maxntid` (`.maxntid`/`.reqntid` product) when given.
///
/// Registers are allocated per warp in units of 256, and the warp count is rounded down to the
/// sub-partition count (the header's hardware check): 104 registers on 9.0 → 3328 per warp →
/// 19 warps → 16 → 512 threads. A register count above what the architecture accepts gives 0.
///
/// On 6.0 this uses GP100's 2 sub-partitions as occupancy.md §6.1 prescribes, whereas
/// [`occupancy`] also applies the header's GP100 rule (fit a 4-sub-partition GP10x), so there a
/// block between the two limits passes this check but gets 0 blocks per SM.
pub fn max_threads_per_block(dev: &DeviceLimits, registers: u32, maxntid: Option<u32>) -> u32 {
    let mut threads = dev.max_threads_per_block;
    if registers > dev.max_regs_per_thread {
        return 0;
    }
    if registers > 0 {
        let (warp, gran, sub) =
            (u64::from(dev.warp_size), u64::from(dev.reg_granularity), u64::from(dev.sub_partitions));
        if warp == 0 || gran == 0 || sub == 0 {
            return 0;
        }
        let regs_per_warp = (u64::from(registers) * warp).div_ceil(gran) * gran;
        let mut warps = u64::from(dev.regs_per_block) / regs_per_warp;
        warps -= warps % sub;
        threads = threads.min((warp * warps).min(u64::from(u32::MAX)) as u32);
    }
    if let Some(bound) = maxntid {
        threads = threads.min(bound);
    }
    threads
}

/// The block size with the highest occupancy and the grid that fills `num_sms` SMs with it,
/// `(min_grid_size, block_size)`, as `cuOccupancyMaxPotentialBlockSize` /
/// `cudaOccMaxPotentialOccupancyBlockSize` compute it.
///
/// The search runs from the function's limit ([`max_threads_per_block`] with its launch bounds)
/// down in steps of 32 (the first candidate may be the unaligned limit itself), keeps a candidate
/// only if it has strictly more resident threads (ties keep the larger block), and stops early at
/// full occupancy. Errors as [`occupancy`], plus `num_sms` of 0 and a function that cannot be
/// launched with any block size.
pub fn max_potential_block_size(
    dev: &DeviceLimits,
    func: &FunctionAttrs,
    dynamic_smem: u32,
    num_sms: u32,
    carveout: Carveout,
) -> Result<(u32, u32), OccupancyError> {
    max_potential_block_size_with(dev, func, |_| dynamic_smem, num_sms, carveout)
}

/// [`max_potential_block_size`] with dynamic shared memory that depends on the block size
/// (`blockSizeToDynamicSMemSize`).
pub fn max_potential_block_size_with<F: FnMut(u32) -> u32>(
    dev: &DeviceLimits,
    func: &FunctionAttrs,
    mut block_to_dynamic_smem: F,
    num_sms: u32,
    carveout: Carveout,
) -> Result<(u32, u32), OccupancyError> {
    let func_max_threads = c_int(max_threads_per_block(dev, func.registers, func.max_threads_per_block));
    let attrs = Attrs::new(dev, func, func_max_threads);
    if c_int(num_sms) <= 0 {
        return Err(invalid("the number of SMs must be positive"));
    }
    device_check(dev)?;
    if func_max_threads <= 0 {
        return Err(invalid("the function cannot be launched with any block size"));
    }
    attrs_check(&attrs)?;

    let occupancy_limit = c_int(dev.max_threads_per_sm);
    let granularity = c_int(dev.warp_size);
    let block_size_limit = c_int(dev.max_threads_per_block).min(attrs.max_threads_per_block);
    let block_size_limit_aligned = round_up(block_size_limit, granularity);

    let (mut max_block_size, mut num_blocks, mut max_occupancy) = (0i64, 0i64, 0i64);
    let mut aligned = block_size_limit_aligned;
    while aligned > 0 {
        let block = block_size_limit.min(aligned);
        let dynamic_smem = block_to_dynamic_smem(block as u32);
        let result = max_active_blocks(dev, &attrs, carveout, block as u32, dynamic_smem)?;
        let blocks = i64::from(result.active_blocks);
        let threads = block * blocks;
        if threads > max_occupancy {
            max_block_size = block;
            num_blocks = blocks;
            max_occupancy = threads;
        }
        if occupancy_limit == max_occupancy {
            break;
        }
        aligned -= granularity;
    }
    Ok((to_u32(num_blocks * c_int(num_sms)), to_u32(max_block_size)))
}

/// Dynamic shared memory each of `num_blocks` blocks of `block_size` threads can use while all of
/// them stay resident on one SM (`cuOccupancyAvailableDynamicSMemPerBlock`,
/// `cudaOccAvailableDynamicSMemPerBlock`, l.1779–1862).
///
/// Invalid input if fewer than `num_blocks` blocks fit even without dynamic memory. With one
/// block the per-block limit applies; with more, the carveout preference is shared:
/// `min(floor(pool / num_blocks, granularity), per-block limit) − static`, capped at the
/// function's maximum dynamic size.
///
/// **Quirk, kept as the driver has it:** the 1 KB reserved per block on CC >= 8 is never
/// subtracted, so the answer can be up to 1 KB per block too large (H200, 32 threads, 4 KB
/// static, 7 blocks → 29184 bytes, with which only 6 blocks fit).
pub fn available_dynamic_smem_per_block(
    dev: &DeviceLimits,
    func: &FunctionAttrs,
    num_blocks: u32,
    block_size: u32,
    carveout: Carveout,
) -> Result<u32, OccupancyError> {
    let num_blocks = c_int(num_blocks);
    if num_blocks <= 0 {
        return Err(invalid("the number of blocks must be positive"));
    }
    let result = occupancy(dev, func, block_size, 0, carveout)?;
    if i64::from(result.active_blocks) < num_blocks {
        return Err(invalid("fewer blocks than requested fit on an SM"));
    }
    let attrs = Attrs::new(dev, func, 1);
    let granularity = c_int(dev.smem_granularity) as u64;
    let limit_per_block = smem_per_block_limit(dev, attrs.shmem_limit, u64::from(dev.smem_per_sm));
    // Already validated by the occupancy call above.
    let preference = smem_preference(dev, carveout)?;
    let smem_per_sm = if num_blocks == 1 {
        limit_per_block
    } else if preference == 0 {
        align_up_carveout(dev, 1)?
    } else {
        preference
    };
    let mut available = smem_per_sm / num_blocks as u64;
    available = (available / granularity) * granularity;
    if available > limit_per_block {
        available = limit_per_block;
    }
    // size_t arithmetic: a static size above the share wraps around, and the cap below applies.
    available = available.wrapping_sub(attrs.shared_size);
    if available > attrs.max_dynamic_shared {
        available = attrs.max_dynamic_shared;
    }
    Ok(available as u32)
}

/// The largest register count (at most 255, ptxas's maximum) with which `blocks` blocks of
/// `block_size` threads stay resident on one SM of `dev`, for a kernel described by `func` (its
/// `registers` field is ignored) launched with `dynamic_smem` bytes of dynamic shared memory;
/// `None` if no register count achieves it (or the input is invalid).
pub fn registers_for_blocks(
    dev: &DeviceLimits,
    func: &FunctionAttrs,
    block_size: u32,
    blocks: u32,
    dynamic_smem: u32,
    carveout: Carveout,
) -> Option<u32> {
    for registers in (0..=PTXAS_MAX_REGISTERS).rev() {
        let attrs = FunctionAttrs { registers, ..*func };
        match occupancy(dev, &attrs, block_size, dynamic_smem, carveout) {
            Ok(r) if r.active_blocks >= blocks => return Some(registers),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests;

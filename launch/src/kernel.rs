//! The types the generated `kernels.rs` instantiates: one [`Kernel`] static per `__global__`
//! function, pointing at the [`Module`] (one `.cu` file) that holds its cubins and PTX.

/// Where a kernel's launch contract came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ContractSource {
    /// A `// @launch(threads[, min_blocks[, max_regs]])` annotation above the kernel.
    Annotation,
    /// CUDA's own `__launch_bounds__` / `__maxnreg__`, read back from the PTX.
    LaunchBounds,
}

/// A kernel's launch contract, as recorded in its PTX (`.maxntid`/`.reqntid`, `.minnctapersm`,
/// `.maxnreg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Contract {
    /// Where it was declared.
    pub source: ContractSource,
    /// Threads per CTA (`.maxntid` product; for `@launch`, exactly this many). `None` when only
    /// `max_regs` is given.
    pub threads: Option<u32>,
    /// `.minnctapersm`: CTAs per SM the assembler should make room for (advisory).
    pub min_blocks: Option<u32>,
    /// `.maxnreg`: hard cap on registers per thread.
    pub max_regs: Option<u32>,
    /// Whether the block size is exact (`@launch`, `.reqntid`) rather than an upper bound.
    pub exact: bool,
}

impl Contract {
    /// Warps per CTA, when the thread count is known.
    pub fn warps(&self) -> Option<u32> {
        self.threads.map(|t| t.div_ceil(32))
    }
}

/// What ptxas reported for one kernel on one architecture (`ptxas -v`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Resources {
    /// `Used N registers`: registers per thread.
    pub registers: u32,
    /// `used N barriers`: highest named barrier ID + 1 (16 when the ID is in a register).
    pub barriers: u32,
    /// `N bytes stack frame`.
    pub stack_frame: u32,
    /// `N bytes spill stores`.
    pub spill_stores: u32,
    /// `N bytes spill loads`.
    pub spill_loads: u32,
    /// `N bytes cumulative stack size` (0 when not printed).
    pub cumulative_stack: u32,
    /// `N bytes smem`: static shared memory, without the 1 KB the driver reserves per block.
    pub shared_static: u32,
    /// `N bytes cmem[0]` where printed (ptxas prints it only below sm_90). `cmem` in JSON.
    #[cfg_attr(feature = "serde", serde(rename = "cmem"))]
    pub cmem0: Option<u32>,
}

/// One compiled architecture of a module.
#[derive(Debug)]
pub struct Cubin {
    /// `sm_90`, `sm_100a`, ...
    pub arch: &'static str,
    /// The cubin (ELF) image.
    pub bytes: &'static [u8],
}

/// One kernel source file, compiled.
#[derive(Debug)]
pub struct Module {
    /// Path of the `.cu` file relative to the crate root, `/`-separated.
    pub file: &'static str,
    /// One cubin per configured architecture.
    pub cubins: &'static [Cubin],
    /// Architecture of the fallback PTX (the lowest configured one).
    pub ptx_arch: &'static str,
    /// PTX for the lowest configured architecture, for the driver to JIT on newer GPUs.
    pub ptx: &'static str,
}

/// Resources of one kernel on one architecture.
#[derive(Debug)]
pub struct ArchResources {
    /// The architecture.
    pub arch: &'static str,
    /// What ptxas reported.
    pub resources: Resources,
}

/// A `__global__` function, compiled for every configured architecture.
#[derive(Debug)]
pub struct Kernel {
    /// The symbol name (mangled for kernels that are not `extern "C"`).
    pub name: &'static str,
    /// 1-based line of the definition in [`Module::file`] (0 when unknown).
    pub line: u32,
    /// The module holding its code.
    pub module: &'static Module,
    /// Its launch contract; `None` for an unbounded kernel.
    pub contract: Option<Contract>,
    /// Block size the host uses for kernels without a contract (`threads` metadata key).
    pub host_threads: u32,
    /// Per-arch resources, in the order of [`Module::cubins`].
    pub resources: &'static [ArchResources],
}

impl Kernel {
    /// The cubin for exactly this arch name, if built.
    pub fn cubin(&self, arch: &str) -> Option<&'static Cubin> {
        self.module.cubins.iter().find(|c| c.arch == arch)
    }

    /// Resources on this arch name, if built.
    pub fn resources_on(&self, arch: &str) -> Option<&Resources> {
        self.resources.iter().find(|r| r.arch == arch).map(|r| &r.resources)
    }

    /// The block size this kernel is meant to be launched with: the contract's threads, else the
    /// host's default.
    pub fn block_size(&self) -> u32 {
        self.contract.and_then(|c| c.threads).unwrap_or(self.host_threads)
    }
}

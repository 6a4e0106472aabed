//! A loaded module and a loaded kernel: checked launches and the helpers around them.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::sys::CUfunction_attribute_enum as F;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, LaunchArgs, LaunchConfig};

use super::check::{check_launch, Approval, DeviceInfo, FunctionInfo};
use super::error::{guarded, guarded_lazy, Error};
use super::image::Image;
use super::memo::CheckMemo;
use crate::occupancy::{self, Carveout, Occupancy};
use crate::{Arch, Contract, Kernel, Module, Resources};

/// A module loaded on a device.
pub struct LoadedModule {
    ctx: Arc<CudaContext>,
    info: Arc<DeviceInfo>,
    source: &'static Module,
    module: Arc<CudaModule>,
    image: Image,
    load_time: Duration,
}

impl fmt::Debug for LoadedModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedModule")
            .field("file", &self.source.file)
            .field("image", &self.image)
            .field("load_time", &self.load_time)
            .finish_non_exhaustive()
    }
}

impl LoadedModule {
    pub(super) fn new(
        ctx: Arc<CudaContext>,
        info: Arc<DeviceInfo>,
        source: &'static Module,
        module: Arc<CudaModule>,
        image: Image,
        load_time: Duration,
    ) -> LoadedModule {
        LoadedModule { ctx, info, source, module, image, load_time }
    }

    /// The image it was loaded from.
    pub fn image(&self) -> Image {
        self.image
    }

    /// How long `cuModuleLoadData` took (for PTX: the driver's JIT compilation).
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// The cudarc module.
    pub fn cuda_module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// One of its kernels, with its attributes read from the driver, and its parameter list
    /// compared with the one the build recorded (where the driver can say: CUDA 12.4 and later).
    ///
    /// # Errors
    /// [`Error::WrongModule`] when `kernel` belongs to another module; [`Error::Signature`] when
    /// the loaded function's parameters are not the recorded ones; a driver failure.
    pub fn kernel(&self, kernel: &'static Kernel) -> Result<LoadedKernel, Error> {
        if !std::ptr::eq(kernel.module, self.source) {
            return Err(Error::WrongModule {
                kernel: kernel.name,
                expected: kernel.module.file,
                found: self.source.file,
            });
        }
        if !kernel.exists_on(self.image.arch()) {
            return Err(Error::NotInImage {
                kernel: kernel.name,
                file: self.source.file,
                image: self.image,
                exists_on: kernel.resources.iter().map(|r| r.arch).collect(),
            });
        }
        let func = guarded(&format!("looking up `{}` in {}", kernel.name, self.source.file), || {
            self.module.load_function(kernel.name)
        })?;
        super::param_check::check(kernel, &func, self.image, self.info.driver_version)?;
        let get = |a: F| guarded(&format!("reading {a:?} of `{}`", kernel.name), || func.get_attribute(a));
        let attr = |a: F| get(a).map(|v| v.max(0) as u32);
        // Barriers are not a driver attribute; the PTX names them, so every build of it has the
        // same count: take the report of the image's arch (for JIT, the PTX's own arch).
        let barriers = kernel.resources_on(self.image.arch()).map(|r| r.barriers).unwrap_or(0);
        let driver = FunctionInfo {
            registers: attr(F::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            shared_static: attr(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            local_bytes: attr(F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            barriers,
            max_threads_per_block: attr(F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_dynamic_shared: attr(F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
            carveout: Carveout::from_raw(get(F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)?),
            const_bytes: attr(F::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)?,
            ptx_version: attr(F::CU_FUNC_ATTRIBUTE_PTX_VERSION)?,
            binary_version: attr(F::CU_FUNC_ATTRIBUTE_BINARY_VERSION)?,
        };
        let embedded = match self.image {
            Image::Cubin { arch } => kernel.resources_on(arch).copied(),
            Image::Ptx { .. } => None,
        };
        Ok(LoadedKernel {
            kernel,
            func,
            ctx: self.ctx.clone(),
            info: self.info.clone(),
            image: self.image,
            embedded,
            max_dynamic: AtomicU32::new(driver.max_dynamic_shared),
            driver,
            memo: CheckMemo::default(),
        })
    }
}

/// One disagreement between the embedded report and the driver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The driver attribute (`NUM_REGS`, ...).
    pub attribute: &'static str,
    /// What the build recorded (or our calculator derives from it).
    pub embedded: u32,
    /// What the driver reports.
    pub driver: u32,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: embedded {}, driver {}", self.attribute, self.embedded, self.driver)
    }
}

/// A kernel loaded on a device: launches are checked against its contract and this device's
/// limits before the driver sees them.
pub struct LoadedKernel {
    kernel: &'static Kernel,
    func: CudaFunction,
    ctx: Arc<CudaContext>,
    info: Arc<DeviceInfo>,
    image: Image,
    embedded: Option<Resources>,
    /// As read at load time; the dynamic shared-memory limit changes, so it is `max_dynamic`.
    driver: FunctionInfo,
    max_dynamic: AtomicU32,
    /// The last approved launch (see memo.rs): a repeated launch is not checked again.
    memo: CheckMemo,
}

impl fmt::Debug for LoadedKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedKernel")
            .field("name", &self.kernel.name)
            .field("arch", &self.arch_text())
            .field("image", &self.image)
            .field("driver", &self.driver)
            .finish_non_exhaustive()
    }
}

impl LoadedKernel {
    /// The embedded kernel.
    pub fn kernel(&self) -> &'static Kernel {
        self.kernel
    }

    /// The image its module came from.
    pub fn image(&self) -> Image {
        self.image
    }

    /// The device's arch (`sm_90`), which errors name; [`LoadedKernel::image`] says whether it
    /// runs a cubin or PTX the driver JIT-compiled, and for which arch.
    fn arch(&self) -> Arch {
        self.info.arch()
    }

    /// The arch of the PTX the driver JIT-compiled the kernel from; `None` for a cubin.
    fn jit_from(&self) -> Option<Arch> {
        self.image.is_jit().then(|| self.image.arch())
    }

    /// `sm_90`, or `sm_90 (JIT from sm_80 PTX)`: the arch as errors name it.
    fn arch_text(&self) -> String {
        match self.jit_from() {
            None => self.arch().to_string(),
            Some(ptx) => format!("{} (JIT from {ptx} PTX)", self.arch()),
        }
    }

    /// The device.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }

    /// The cudarc function (launching it directly skips the check).
    pub fn function(&self) -> &CudaFunction {
        &self.func
    }

    /// What ptxas reported for the loaded cubin; `None` for a JIT-compiled PTX.
    pub fn embedded(&self) -> Option<&Resources> {
        self.embedded.as_ref()
    }

    /// The driver's attributes of the function, read at load time, with the current dynamic
    /// shared-memory limit and the barrier count of the build: what the check works from.
    pub fn function_info(&self) -> FunctionInfo {
        self.function_info_at(self.max_dynamic.load(Ordering::Relaxed))
    }

    fn function_info_at(&self, max_dynamic_shared: u32) -> FunctionInfo {
        FunctionInfo { max_dynamic_shared, ..self.driver }
    }

    /// The contract of the code loaded: its image's arch's (CUDA's own bounds may differ per
    /// arch, as CUB's do).
    pub fn contract(&self) -> Option<Contract> {
        self.kernel.contract_on(self.image.arch())
    }

    /// Checks `cfg` without launching or changing anything.
    ///
    /// The last approved block shape and dynamic shared-memory size are remembered (with the
    /// function's dynamic limit they were checked at): checking them again costs a comparison and
    /// the grid's bounds, a few nanoseconds, and returns the same [`Approval`].
    ///
    /// # Errors
    /// The [`super::LaunchError`] naming the kernel, the arch and the arithmetic.
    #[inline]
    pub fn check(&self, cfg: &LaunchConfig) -> Result<Approval, Error> {
        let max_dynamic = self.max_dynamic.load(Ordering::Relaxed);
        Ok(self.memo.check(&self.info, cfg, max_dynamic, || {
            let contract = self.contract();
            check_launch(
                self.kernel.name,
                self.jit_from(),
                &self.info,
                contract.as_ref(),
                &self.function_info_at(max_dynamic),
                cfg,
            )
        })?)
    }

    /// The last launch configuration the check approved, as `(block, dynamic shared memory)`,
    /// and its approval; `None` before any approval and after a change of the function's limit.
    pub(crate) fn last_approved(&self) -> Option<((u32, u32, u32), u32, Approval)> {
        self.memo.last()
    }

    /// How many launches the check has refused (a refusal is counted, so that a caller whose
    /// error type hides ours can still tell it from a driver failure).
    pub fn refusals(&self) -> u64 {
        self.memo.refusals()
    }

    /// Checks `cfg` and prepares the function for it: raises
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` when the launch needs more dynamic shared
    /// memory than currently allowed (within the opt-in limit).
    ///
    /// # Errors
    /// As [`LoadedKernel::check`], or the driver refusing the attribute.
    pub fn prepare(&self, cfg: &LaunchConfig) -> Result<Approval, Error> {
        let approval = self.check(cfg)?;
        if let Some(bytes) = approval.raise_max_dynamic_shared {
            self.set_max_dynamic_shared(bytes)?;
        }
        Ok(approval)
    }

    /// Sets `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` (the opt-in) to `bytes`.
    ///
    /// # Errors
    /// The driver refusing the value (above `sharedMemPerBlockOptin − static`).
    pub fn set_max_dynamic_shared(&self, bytes: u32) -> Result<(), Error> {
        guarded(
            &format!("raising the dynamic shared-memory limit of `{}` to {bytes} bytes", self.kernel.name),
            || {
                self.ctx.bind_to_thread()?;
                self.func.set_attribute(F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)
            },
        )?;
        self.max_dynamic.store(bytes, Ordering::Relaxed);
        // The key holds the limit, so the old verdict misses anyway; dropping it says so.
        self.memo.clear();
        Ok(())
    }

    /// A launch builder for this kernel on `stream`; push the arguments, then [`LoadedKernel::launch`].
    pub fn builder<'a>(&'a self, stream: &'a CudaStream) -> LaunchArgs<'a> {
        stream.launch_builder(&self.func)
    }

    /// Checks `cfg`, prepares the function ([`LoadedKernel::prepare`]) and launches.
    ///
    /// # Safety
    /// As [`LaunchArgs::launch`]: the arguments pushed on `args` must match the kernel's
    /// parameters, and it must not access memory out of bounds. `args` must come from
    /// [`LoadedKernel::builder`] of this kernel.
    ///
    /// # Errors
    /// A launch the check refuses (nothing reaches the driver), or the driver's error.
    pub unsafe fn launch(&self, args: &mut LaunchArgs<'_>, cfg: LaunchConfig) -> Result<Approval, Error> {
        let approval = self.prepare(&cfg)?;
        // The message is formatted only on failure: a launch costs about 3 µs, a `format!` 50 ns.
        let what = || format!("launching `{}` on {}", self.kernel.name, self.arch_text());
        // SAFETY: the caller's contract.
        guarded_lazy(what, || unsafe { args.launch(cfg) })?;
        Ok(approval)
    }

    /// Resident blocks per SM at `block_size` threads and `dynamic_smem` bytes, by our calculator
    /// with this device's limits and the function's current attributes: what
    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor` answers (like it, it does not reject a block
    /// above the kernel's limit; [`LoadedKernel::check`] does).
    ///
    /// # Errors
    /// Invalid input (a block size of 0).
    pub fn occupancy(&self, block_size: u32, dynamic_smem: u32) -> Result<Occupancy, Error> {
        let f = self.function_info();
        occupancy::occupancy(&self.info.limits, &f.attrs(f.max_dynamic_shared), block_size, dynamic_smem, f.carveout)
            .map_err(|e| {
                Error::Launch(super::LaunchError {
                    kernel: self.kernel.name.into(),
                    arch: self.arch(),
                    jit_from: self.jit_from(),
                    problem: super::Problem::Occupancy,
                    message: e.to_string(),
                    failure: None,
                })
            })
    }

    /// The grid of one full wave: resident blocks per SM of this launch × the device's SMs (the
    /// seed's `@persistent` sizing).
    ///
    /// # Errors
    /// A block size or shared-memory size that cannot launch (the check's error).
    pub fn full_wave_grid(&self, block_size: u32, dynamic_smem: u32) -> Result<u32, Error> {
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (block_size, 1, 1), shared_mem_bytes: dynamic_smem };
        let a = self.check(&cfg)?;
        Ok(a.occupancy.active_blocks * self.info.sms)
    }

    /// Compares the embedded report with the driver: `NUM_REGS` = registers, `LOCAL_SIZE_BYTES` =
    /// stack frame, `SHARED_SIZE_BYTES` = static shared memory, `BINARY_VERSION` = the cubin's
    /// arch, and `MAX_THREADS_PER_BLOCK` = our [`occupancy::max_threads_per_block`] from the
    /// registers and the contract. For a JIT-compiled PTX nothing was reported for this arch, so
    /// only `MAX_THREADS_PER_BLOCK` is compared (from the driver's register count). Empty when
    /// everything agrees.
    pub fn cross_check(&self) -> Vec<Difference> {
        let d = &self.driver;
        let maxntid = self.contract().and_then(|c| c.threads);
        let mut out = Vec::new();
        let mut cmp = |attribute, embedded: u32, driver: u32| {
            if embedded != driver {
                out.push(Difference { attribute, embedded, driver });
            }
        };
        match (&self.embedded, self.image) {
            (Some(r), Image::Cubin { arch }) => {
                cmp("NUM_REGS", r.registers, d.registers);
                cmp("LOCAL_SIZE_BYTES", r.stack_frame, d.local_bytes);
                cmp("SHARED_SIZE_BYTES", r.shared_static, d.shared_static);
                let expected = occupancy::max_threads_per_block(&self.info.limits, r.registers, maxntid);
                cmp("MAX_THREADS_PER_BLOCK", expected, d.max_threads_per_block);
                cmp("BINARY_VERSION", arch.sm(), d.binary_version);
            }
            _ => {
                let expected = occupancy::max_threads_per_block(&self.info.limits, d.registers, maxntid);
                cmp("MAX_THREADS_PER_BLOCK", expected, d.max_threads_per_block);
            }
        }
        out
    }
}

//! Opening a device: the driver's presence, the context, the device's limits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cudarc::driver::sys::CUdevice_attribute_enum as A;
use cudarc::driver::{sys, CudaContext, DriverError};
use cudarc::nvrtc::Ptx;

use super::check::DeviceInfo;
use super::error::{guarded, Error};
use super::image::{ptx_text, select_image, select_image_for, Image, Prefer};
use super::kernel::{LoadedKernel, LoadedModule};
use crate::occupancy::DeviceLimits;
use crate::{Kernel, Module};

/// Whether a CUDA driver library can be loaded on this machine. Nothing in cudarc is touched
/// when it cannot (cudarc panics on a missing library).
pub fn driver_present() -> bool {
    // SAFETY: only dlopen()s the candidate names and closes them again.
    unsafe { sys::is_culib_present() }
}

/// The driver library names cudarc tries, in order.
pub(crate) fn driver_library_names() -> Vec<String> {
    ["cuda", "nvcuda"].iter().flat_map(|l| cudarc::get_lib_name_candidates(l)).collect()
}

/// One GPU, opened through cudarc, with its limits read from the driver.
pub struct Device {
    ctx: Arc<CudaContext>,
    info: Arc<DeviceInfo>,
    /// Loaded modules by (module address, image): a kernel gated to newer arches may need another
    /// image of its module than its neighbours.
    modules: Mutex<HashMap<(usize, Image), Arc<LoadedModule>>>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device").field("info", &self.info).finish_non_exhaustive()
    }
}

impl Device {
    /// Opens device `ordinal` (its primary context).
    ///
    /// # Errors
    /// [`Error::NoDriver`] when no driver library loads, [`Error::Driver`] when the driver finds
    /// no such device (or fails otherwise); never a panic.
    pub fn new(ordinal: usize) -> Result<Device, Error> {
        if !driver_present() {
            return Err(Error::NoDriver { tried: driver_library_names() });
        }
        let ctx = guarded(&format!("opening CUDA device {ordinal}"), || CudaContext::new(ordinal))?;
        Device::from_context(ctx)
    }

    /// Wraps a context the caller opened.
    ///
    /// # Errors
    /// A failing driver query.
    pub fn from_context(ctx: Arc<CudaContext>) -> Result<Device, Error> {
        let info = guarded("reading the device's attributes", || read_info(&ctx))?;
        Ok(Device { ctx, info: Arc::new(info), modules: Mutex::new(HashMap::new()) })
    }

    /// The cudarc context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Name, compute capability, driver version, SMs and limits.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Where the occupancy table's row for this compute capability differs from what the driver
    /// reports (`(field, table, driver)`); empty on a device the table describes exactly.
    pub fn table_differences(&self) -> Vec<(&'static str, u32, u32)> {
        let d = &self.info.limits;
        let Some(t) = DeviceLimits::lookup(d.major, d.minor).ok() else {
            return vec![("compute capability in the table", 0, 1)];
        };
        [
            ("max_threads_per_block", t.max_threads_per_block, d.max_threads_per_block),
            ("max_threads_per_sm", t.max_threads_per_sm, d.max_threads_per_sm),
            ("max_blocks_per_sm", t.max_blocks_per_sm, d.max_blocks_per_sm),
            ("regs_per_block", t.regs_per_block, d.regs_per_block),
            ("regs_per_sm", t.regs_per_sm, d.regs_per_sm),
            ("warp_size", t.warp_size, d.warp_size),
            ("smem_per_block", t.smem_per_block, d.smem_per_block),
            ("smem_per_sm", t.smem_per_sm, d.smem_per_sm),
            ("smem_per_block_optin", t.smem_per_block_optin, d.smem_per_block_optin),
            ("reserved_smem_per_block", t.reserved_smem_per_block, d.reserved_smem_per_block),
        ]
        .into_iter()
        .filter(|(_, a, b)| a != b)
        .collect()
    }

    /// Loads `kernel`: its module's cubin that runs on this device (same major, same or older
    /// minor; [`crate::compat::best_cubin`]), else its
    /// PTX through the driver's JIT; for a kernel that only some arches' builds have (`#if
    /// __CUDA_ARCH__ >= 900`), an image that has it. Modules are loaded once per device and image
    /// and shared by their kernels.
    ///
    /// # Errors
    /// No image for this device, a PTX the driver cannot take (the error names the embedded
    /// arches and the PTX ISA version), or a driver failure.
    pub fn load(&self, kernel: &'static Kernel) -> Result<LoadedKernel, Error> {
        let image = select_image_for(kernel, self.info.limits.compute_capability(), Prefer::Auto)?;
        let key = (kernel.module as *const Module as usize, image);
        let cached = self.modules.lock().unwrap_or_else(|p| p.into_inner()).get(&key).cloned();
        let module = match cached {
            Some(m) => m,
            None => {
                let m = Arc::new(self.load_image(kernel.module, image)?);
                self.modules.lock().unwrap_or_else(|p| p.into_inner()).entry(key).or_insert(m).clone()
            }
        };
        module.kernel(kernel)
    }

    /// Loads the kernel of `kernels` (usually the generated `KERNELS`) that `name` names: its
    /// plain name when unique in the crate, else `path/file.cu::name` (see [`crate::find`]).
    ///
    /// # Errors
    /// [`Error::Find`] when no kernel or several have that name; otherwise as [`Device::load`].
    pub fn load_named(&self, kernels: &[&'static Kernel], name: &str) -> Result<LoadedKernel, Error> {
        self.load(crate::find(kernels, name).map_err(Error::Find)?)
    }

    /// Loads a module from the image `prefer` selects, every time anew (no cache), and records
    /// how long the driver took ([`LoadedModule::load_time`]): use it to compare a cubin load
    /// with a PTX JIT.
    ///
    /// # Errors
    /// As [`Device::load`].
    pub fn load_module(&self, module: &'static Module, prefer: Prefer) -> Result<LoadedModule, Error> {
        let image = select_image(module, self.info.limits.compute_capability(), prefer)?;
        self.load_image(module, image)
    }

    fn load_image(&self, module: &'static Module, image: Image) -> Result<LoadedModule, Error> {
        let what = format!("loading {} ({image})", module.file);
        let start = Instant::now();
        let loaded = match image {
            Image::Cubin { arch } => {
                let bytes = module.cubins.iter().find(|c| c.arch == arch).map(|c| c.bytes).unwrap_or_default();
                guarded(&what, || self.ctx.load_module(Ptx::from_binary(bytes.to_vec())))?
            }
            Image::Ptx { arch, isa } => {
                // cudarc hands PTX text to cuModuleLoadData through a C string.
                let text = ptx_text(module, image).unwrap_or_default().replace('\0', "");
                guarded(&what, || self.ctx.load_module(Ptx::from_src(text))).map_err(|e| match e {
                    Error::Driver { error, .. } => Error::PtxRejected {
                        file: module.file,
                        device_arch: self.info.arch(),
                        ptx_arch: arch,
                        isa,
                        driver_version: self.info.driver_version,
                        cubins: module.cubins.iter().map(|c| c.arch).collect(),
                        error,
                    },
                    other => other,
                })?
            }
        };
        let load_time = start.elapsed();
        Ok(LoadedModule::new(self.ctx.clone(), self.info.clone(), module, loaded, image, load_time))
    }
}

fn read_info(ctx: &Arc<CudaContext>) -> Result<DeviceInfo, DriverError> {
    let attr = |a: A| ctx.attribute(a).map(|v| v.max(0) as u32);
    let (major, minor) = ctx.compute_capability()?;
    let (major, minor) = (major.max(0) as u32, minor.max(0) as u32);
    let mut driver_version = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut driver_version) }.result()?;
    // The table's row for the per-arch constants (granularities, carveouts); for a compute
    // capability it does not list, the nearest older row.
    let row = DeviceLimits::lookup(major, minor).ok().copied().unwrap_or_else(|| {
        *DeviceLimits::all()
            .iter()
            .rev()
            .find(|d| (d.major, d.minor) <= (major, minor))
            .unwrap_or(&DeviceLimits::all()[0])
    });
    let limits = DeviceLimits {
        major,
        minor,
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        max_blocks_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
        regs_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
        regs_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
        warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        smem_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
        smem_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
        smem_per_block_optin: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
        reserved_smem_per_block: attr(A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)?,
        ..row
    };
    Ok(DeviceInfo {
        ordinal: ctx.ordinal(),
        name: ctx.name()?,
        driver_version,
        sms: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        limits,
        max_block_dim: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
        ],
        max_grid_dim: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
        ],
    })
}

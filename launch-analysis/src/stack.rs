//! A kernel whose stack cannot be sized statically: it reaches a recursion (direct or mutual)
//! through a function with a stack frame, so each level takes another frame and the depth is known
//! only at run time. The driver then sizes the stack from `cudaLimitStackSize` (1,024 bytes per
//! thread by default) and a recursion deeper than that fits is an illegal-address error (700).
//!
//! What ptxas and the driver say differs by toolchain (measured on an H200, driver 580, for the
//! kernels of `fixtures/crates/recursive_stack`): ptxas 13.5 warns "Stack size for entry function …
//! cannot be statically determined", still prints the entry's own frame (160 bytes), and the driver
//! reports `LOCAL_SIZE_BYTES` 0 for that cubin; ptxas 12.9 and 13.0 say nothing and the driver
//! reports their printed frame. The build records what the driver reports and this, for every
//! toolchain.

use std::fmt;

/// Why a kernel's stack is not static, on one arch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct DynamicStack {
    /// The functions of the recursion the kernel reaches, in call order (demangled: `fib(int)`;
    /// `[even(int), odd(int)]` for a mutual one). Empty when only ptxas said so.
    pub through: Vec<String>,
    /// The stack frame ptxas printed for the kernel. The record's `stack_frame` is what the driver
    /// reports instead: 0 where ptxas warned that the size cannot be determined (ptxas 13.5), this
    /// frame otherwise.
    pub ptxas_frame: u32,
    /// Whether ptxas itself warned that the stack size cannot be statically determined.
    pub ptxas_warned: bool,
}

impl fmt::Display for DynamicStack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("its stack size cannot be statically determined")?;
        match self.through.as_slice() {
            [] => f.write_str(" (ptxas says so)")?,
            [one] => write!(f, ": it recurses through `{one}`")?,
            many => write!(
                f,
                ": it recurses through {}",
                many.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" → ")
            )?,
        }
        if self.ptxas_warned && self.ptxas_frame > 0 {
            write!(
                f,
                "; ptxas printed a {}-byte frame but the driver reports no local memory for it (recorded: 0)",
                self.ptxas_frame
            )?;
        }
        f.write_str(
            ". The driver sizes its stack from cudaLimitStackSize (1,024 bytes per thread by default); a deeper \
             recursion fails with an illegal address (error 700): bound the depth, or raise the limit \
             (cuCtxSetLimit(CU_LIMIT_STACK_SIZE)) before launching",
        )
    }
}

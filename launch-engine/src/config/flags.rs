//! `flags` and `ptxas-flags` of `[package.metadata.launch]`: NVRTC's options and the common nvcc
//! spellings of the same thing, mapped to one canonical NVRTC (or ptxas) spelling each.
//!
//! What is accepted, and why some options are refused:
//!
//! * NVRTC options that shape the code or its diagnostics (`--std=c++17`, `--use_fast_math`,
//!   `--generate-line-info`, `--device-debug`, `--ftz=`, `--fmad=`, `-D`, `-U`, `--diag-suppress=`,
//!   ...), in their NVRTC and nvcc spellings (`-std=c++17`, `-use_fast_math`, `-lineinfo`, `-G`).
//! * `-I dir`, `-Idir`, `--include-path=dir`: an include folder, relative to Cargo.toml (treated
//!   like an entry of `include`, so its headers trigger rebuilds and enter the cache key).
//! * `-Xptxas X`, `--ptxas-options=X` (comma-separated, as nvcc splits them): `X` goes to ptxas,
//!   which launch-build runs itself (NVRTC only passes them on when it makes a cubin, and here it
//!   makes PTX).
//! * `--expt-relaxed-constexpr` becomes `--device-as-default-execution-space` (`-default-device`):
//!   NVRTC has no such flag because it allows no host functions at all ("host functions are not
//!   allowed in JIT mode"); what nvcc users get from the flag, calling `constexpr` helpers
//!   without `__device__` from kernels, NVRTC gives by compiling unannotated functions as device
//!   functions. A function explicitly marked `__host__` still cannot be called.
//! * nvcc's own options for `host` files (compiled by nvcc, see `host`), `Mapped::Nvcc`, as nvcc
//!   spells them, with their value. Those that concern the host side only are left out of device
//!   (NVRTC) files, where they would have no effect: `-O0` to `-O3` and `--optimize` (nvcc's `-O`
//!   is the *host* compiler's level; device code is optimised by default, `-G` turns that off, and
//!   ptxas's level is `-Xptxas -O<n>`), `-g` (host debug information; device debug information is
//!   `-G`), `-m64`, `--default-stream`, `-Xcompiler`, `--verbose`, `--threads`, `--no-exceptions`,
//!   `--allow-unsupported-compiler`, `-Wno-deprecated-gpu-targets`, `--compress-mode` (the
//!   fatbinary's), `--static-global-template-stub` (template kernels' host stubs), and
//!   `--expt-extended-lambda` (NVRTC 12.9 and 13.0 have no such option and refuse `__device__`-annotated lambdas whatever
//!   the flags; plain lambdas in device code need no flag). Those that would change device code
//!   and that NVRTC lacks (`-Xcudafe`, `--ftemplate-depth`, `--ftemplate-backtrace-limit`,
//!   `--keep-device-functions`) are for `host` files only: the plan refuses them where a device
//!   file would get them (`plan`).
//! * Accepted and dropped: `--resource-usage` (ptxas always reports here).
//! * Refused, with the reason: options that would change what launch-build controls (the target
//!   arch, the output kind, file or folder, dependency files, relocatable code in NVRTC files,
//!   which would need a device link: `-rdc=true` is for `host` files), register and block limits (the launch contracts own them), the host compiler
//!   (`-ccbin`: launch-build passes the one `cc` chooses, so CXX sets it), nvcc's linking steps
//!   (cargo links), `-include` (a pre-included header would not be tracked for rebuilds), and
//!   anything NVRTC and nvcc's list here lack.

use crate::suggest::edit_distance;

/// Where one accepted flag goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mapped {
    /// An NVRTC option in its canonical spelling (`--std=c++17`).
    Nvrtc(String),
    /// An include folder, as written (relative to Cargo.toml).
    Include(String),
    /// A ptxas option in its canonical spelling (`--opt-level=3`).
    Ptxas(String),
    /// An nvcc option for `host` files, with its value, as nvcc takes it (`["-Xcompiler", "-fPIC"]`).
    Nvcc {
        /// The option and its value.
        option: Vec<String>,
        /// Why a device (NVRTC) file may not take it (it changes device code and NVRTC lacks it);
        /// `None`: it has no effect on device code, and device files leave it out.
        device_refusal: Option<String>,
    },
}

/// A flag that cannot be used: the index of the list element at fault and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Index of the element in the list.
    pub index: usize,
    /// What is wrong and what to do instead.
    pub message: String,
}

/// What an option takes after `=` (or as the next element).
#[derive(Clone, Copy, Debug)]
enum Takes {
    Nothing,
    Bool,
    Choice(&'static [&'static str]),
    /// An integer in the range.
    Int(i64, i64),
    /// Diagnostic numbers: positive integers separated by commas (`177,550`).
    Numbers,
    Anything,
}

/// What becomes of an option.
#[derive(Clone, Copy, Debug)]
enum Act {
    /// Passed on in this spelling (`=value` appended when it takes one).
    As(&'static str),
    /// Accepted and left out: the reason is in the module documentation.
    Drop,
    /// For `host` files, in this nvcc spelling; device files leave it out (no effect there).
    Nvcc(&'static str),
    /// For `host` files, in this nvcc spelling; refused for device files, for this reason.
    NvccOnly(&'static str, &'static str),
    /// `-O3`, `--optimize=3`: nvcc's `-O3` for `host` files.
    Optimize,
    /// Refused, for this reason.
    Refuse(&'static str),
    Define,
    Undefine,
    Include,
    Xptxas,
    /// `-rdc=false` is the default; `-rdc=true` needs a device link.
    Rdc,
    /// `-m64` is the only machine there is (nvcc's `-m64` for `host` files).
    Machine,
}

struct Spec {
    names: &'static [&'static str],
    takes: Takes,
    act: Act,
}

const fn spec(names: &'static [&'static str], takes: Takes, act: Act) -> Spec {
    Spec { names, takes, act }
}

const BOOL: Takes = Takes::Bool;
const NONE: Takes = Takes::Nothing;
const ANY: Takes = Takes::Anything;
const LOAD_CACHE: Takes = Takes::Choice(&["ca", "cg", "cs", "cv", "lu"]);
const STORE_CACHE: Takes = Takes::Choice(&["cg", "cs", "wb", "wt"]);

const ARCH: &str = "launch-build sets the target architecture of every compile from `arch` (and a file's own `arch`)";
const OUTPUT: &str =
    "launch-build chooses what is produced: PTX for each arch from NVRTC, then a cubin from ptxas, both embedded in the crate";
const LINK: &str = "relocatable device code needs a device link step, and NVRTC files are each compiled to one complete module (`host` files take `-rdc=true`: nvcc compiles them and launch-build runs nvcc's device link over them)";
const NVCC_LINKS: &str = "launch-build links nothing with nvcc: cargo links the `host` files' library, and launch-build runs nvcc's device link itself where `host` files take `-rdc=true`";
const DEVICE_C: &str = "write `-rdc=true`: launch-build passes nvcc's `-c` itself";
const DEVICE_LINK: &str = "launch-build runs nvcc's device link itself when `host` files take `-rdc=true`";
const LINKER: &str = "it is an option of nvcc's linking steps, and nvcc links nothing here: cargo links the `host` files' library (pass linker options with `cargo:rustc-link-arg` from build.rs)";
const CCBIN: &str =
    "launch-build gives nvcc the host C++ compiler that cargo's `cc` chooses; set CXX to the one you want";
const DEPS: &str = "launch-build tracks every header a kernel file includes itself (for rebuilds and the cache) and writes no dependency files";
const CUDART: &str = "`host` files are linked with the toolchain's static CUDA runtime (`libcudart_static.a`)";
const NO_NVRTC: &str = "NVRTC has no such option";
const LIMITS: &str = "register and block limits belong to each kernel's launch contract: write `// @launch(threads, min_blocks, max_regs)` above the kernel (or use `__launch_bounds__`)";
const BITS: &str = "GPU code is 64-bit only (`-m64`, the default)";
const PRE_INCLUDE: &str = "a pre-included header is not tracked for rebuilds or in the kernel cache; write `#include` at the top of the file instead";

/// NVRTC's options and the nvcc spellings launch-build maps, in NVRTC's canonical spelling.
const NVRTC: &[Spec] = &[
    spec(&["--std", "-std"], Takes::Choice(&["c++03", "c++11", "c++14", "c++17", "c++20"]), Act::As("--std")),
    spec(
        &["--device-as-default-execution-space", "-default-device", "--expt-relaxed-constexpr", "-expt-relaxed-constexpr"],
        NONE,
        Act::As("--device-as-default-execution-space"),
    ),
    spec(&["--use_fast_math", "-use_fast_math"], NONE, Act::As("--use_fast_math")),
    spec(&["--generate-line-info", "-lineinfo"], NONE, Act::As("--generate-line-info")),
    spec(&["--extra-device-vectorization", "-extra-device-vectorization"], NONE, Act::As("--extra-device-vectorization")),
    spec(&["--device-debug", "-G"], NONE, Act::As("--device-debug")),
    spec(&["--dopt", "-dopt"], Takes::Choice(&["on"]), Act::As("--dopt")),
    spec(&["--define-macro", "-D"], ANY, Act::Define),
    spec(&["--undefine-macro", "-U"], ANY, Act::Undefine),
    spec(&["--include-path", "-I"], ANY, Act::Include),
    spec(&["--ptxas-options", "-Xptxas"], ANY, Act::Xptxas),
    spec(&["--ftz", "-ftz"], BOOL, Act::As("--ftz")),
    spec(&["--prec-div", "-prec-div"], BOOL, Act::As("--prec-div")),
    spec(&["--prec-sqrt", "-prec-sqrt"], BOOL, Act::As("--prec-sqrt")),
    spec(&["--fmad", "-fmad"], BOOL, Act::As("--fmad")),
    spec(&["--modify-stack-limit", "-modify-stack-limit"], BOOL, Act::As("--modify-stack-limit")),
    spec(&["--device-stack-protector", "-device-stack-protector"], BOOL, Act::As("--device-stack-protector")),
    spec(&["--builtin-move-forward", "-builtin-move-forward"], BOOL, Act::As("--builtin-move-forward")),
    spec(&["--builtin-initializer-list", "-builtin-initializer-list"], BOOL, Act::As("--builtin-initializer-list")),
    spec(&["--brief-diagnostics", "-brief-diag"], BOOL, Act::As("--brief-diagnostics")),
    spec(&["--restrict", "-restrict"], NONE, Act::As("--restrict")),
    spec(&["--device-w", "-dw"], NONE, Act::As("--device-w")),
    spec(&["--disable-warnings", "-w"], NONE, Act::As("--disable-warnings")),
    spec(&["--device-int128", "-device-int128"], NONE, Act::As("--device-int128")),
    spec(&["--display-error-number", "-err-no"], NONE, Act::As("--display-error-number")),
    spec(&["--no-display-error-number", "-no-err-no"], NONE, Act::As("--no-display-error-number")),
    spec(&["--diag-error", "-diag-error"], Takes::Numbers, Act::As("--diag-error")),
    spec(&["--diag-suppress", "-diag-suppress"], Takes::Numbers, Act::As("--diag-suppress")),
    spec(&["--diag-warn", "-diag-warn"], Takes::Numbers, Act::As("--diag-warn")),
    spec(&["--jump-table-density", "-jtd"], Takes::Int(0, 101), Act::As("--jump-table-density")),
    spec(&["--split-compile", "-split-compile"], Takes::Int(0, 256), Act::As("--split-compile")),
    spec(&["--Ofast-compile", "-Ofc"], Takes::Choice(&["0", "min", "mid", "max"]), Act::As("--Ofast-compile")),
    spec(&["--optimization-info", "-opt-info"], Takes::Choice(&["inline"]), Act::As("--optimization-info")),
    spec(&["--no-source-include", "-no-source-include"], NONE, Act::As("--no-source-include")),
    spec(&["--minimal", "-minimal"], NONE, Act::As("--minimal")),
    spec(&["--relocatable-device-code", "-rdc"], BOOL, Act::Rdc),
    // nvcc's own options, for `host` files; device files leave them out (see the module
    // documentation).
    spec(&["-O0", "-O1", "-O2", "-O3"], NONE, Act::Optimize),
    spec(&["--optimize", "-O"], Takes::Int(0, 3), Act::Optimize),
    spec(&["--debug", "-g"], NONE, Act::Nvcc("-g")),
    spec(&["-m64", "--m64"], NONE, Act::Nvcc("-m64")),
    spec(&["-m32"], NONE, Act::Refuse(BITS)),
    spec(&["--machine", "-m"], ANY, Act::Machine),
    spec(
        &["--expt-extended-lambda", "-expt-extended-lambda", "--extended-lambda", "-extended-lambda"],
        NONE,
        Act::Nvcc("--expt-extended-lambda"),
    ),
    spec(&["-Wno-deprecated-gpu-targets", "--Wno-deprecated-gpu-targets"], NONE, Act::Nvcc("-Wno-deprecated-gpu-targets")),
    spec(&["--default-stream", "-default-stream"], Takes::Choice(&["legacy", "null", "per-thread"]), Act::Nvcc("--default-stream")),
    spec(&["--compiler-options", "-Xcompiler"], ANY, Act::Nvcc("-Xcompiler")),
    spec(&["--verbose", "-v"], NONE, Act::Nvcc("--verbose")),
    spec(&["--threads", "-t"], Takes::Int(0, 256), Act::Nvcc("--threads")),
    spec(&["--no-exceptions", "-noeh"], NONE, Act::Nvcc("--no-exceptions")),
    spec(&["--allow-unsupported-compiler", "-allow-unsupported-compiler"], NONE, Act::Nvcc("--allow-unsupported-compiler")),
    // The fatbinary's compression and how template kernels' host stubs are linked (nvcc ≥ 12.8;
    // bitsandbytes passes `--compress-mode=size` for CUDA 13): neither changes what is produced
    // nor where, and a device file (no fatbinary, no host stub) has nothing they apply to.
    spec(&["--compress-mode", "-compress-mode"], Takes::Choice(&["default", "size", "speed", "balance", "none"]), Act::Nvcc("--compress-mode")),
    spec(&["--static-global-template-stub", "-static-global-template-stub"], BOOL, Act::Nvcc("--static-global-template-stub")),
    // nvcc's options that change device code and that NVRTC lacks: `host` files only.
    spec(
        &["--cudafe-options", "-Xcudafe"],
        ANY,
        Act::NvccOnly("-Xcudafe", "NVRTC has no separate front-end step (its diagnostics options are `--diag-suppress=N`, `--diag-warn=N` and `--diag-error=N`)"),
    ),
    spec(&["--ftemplate-depth", "-ftemplate-depth"], Takes::Int(1, 1 << 20), Act::NvccOnly("--ftemplate-depth", NO_NVRTC)),
    spec(&["--ftemplate-backtrace-limit", "-ftemplate-backtrace-limit"], Takes::Int(0, 1 << 20), Act::NvccOnly("--ftemplate-backtrace-limit", NO_NVRTC)),
    spec(&["--keep-device-functions", "-keep-device-functions"], NONE, Act::NvccOnly("--keep-device-functions", NO_NVRTC)),
    spec(&["--resource-usage", "-res-usage"], NONE, Act::Drop),
    // What launch-build controls.
    spec(&["--gpu-architecture", "-arch"], ANY, Act::Refuse(ARCH)),
    spec(&["--gpu-code", "-code"], ANY, Act::Refuse(ARCH)),
    spec(&["--generate-code", "-gencode"], ANY, Act::Refuse(ARCH)),
    spec(&["--output-file", "-o"], ANY, Act::Refuse(OUTPUT)),
    spec(&["--output-directory", "-odir"], ANY, Act::Refuse(OUTPUT)),
    spec(&["--compile", "-c"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--ptx", "-ptx"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--cubin", "-cubin"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--fatbin", "-fatbin"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--preprocess", "-E"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--optix-ir", "-optix-ir"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--fdevice-syntax-only", "-fdevice-syntax-only"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--dlink-time-opt", "-dlto"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--gen-opt-lto", "-gen-opt-lto"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--keep", "-keep"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--keep-dir", "-keep-dir"], ANY, Act::Refuse(OUTPUT)),
    spec(&["--save-temps", "-save-temps"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--objdir-as-tempdir", "-objtemp"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--time", "-time"], ANY, Act::Refuse(OUTPUT)),
    spec(&["--fdevice-time-trace", "-fdevice-time-trace"], ANY, Act::Refuse(OUTPUT)),
    spec(&["--cuda", "-cuda"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--ltoir", "-ltoir"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--lto", "-lto"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--link", "-link"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--run", "-run"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--dryrun", "-dryrun"], NONE, Act::Refuse(OUTPUT)),
    spec(&["--generate-dependencies", "-M"], NONE, Act::Refuse(DEPS)),
    spec(&["--generate-nonsystem-dependencies", "-MM"], NONE, Act::Refuse(DEPS)),
    spec(&["--generate-dependencies-with-compile", "-MD"], NONE, Act::Refuse(DEPS)),
    spec(&["--generate-nonsystem-dependencies-with-compile", "-MMD"], NONE, Act::Refuse(DEPS)),
    spec(&["--dependency-output", "-MF"], ANY, Act::Refuse(DEPS)),
    spec(&["--generate-dependency-targets", "-MP"], NONE, Act::Refuse(DEPS)),
    spec(&["--dependency-target-name", "-MT"], ANY, Act::Refuse(DEPS)),
    spec(&["--device-c", "-dc"], NONE, Act::Refuse(DEVICE_C)),
    spec(&["--device-link", "-dlink"], NONE, Act::Refuse(DEVICE_LINK)),
    spec(&["--extensible-whole-program", "-ewp"], NONE, Act::Refuse(NVCC_LINKS)),
    spec(&["--lib", "-lib"], NONE, Act::Refuse(NVCC_LINKS)),
    spec(&["--maxrregcount", "-maxrregcount"], ANY, Act::Refuse(LIMITS)),
    spec(&["--pre-include", "-include"], ANY, Act::Refuse(PRE_INCLUDE)),
    spec(&["--compiler-bindir", "-ccbin"], ANY, Act::Refuse(CCBIN)),
    spec(&["--linker-options", "-Xlinker"], ANY, Act::Refuse(LINKER)),
    spec(&["--archive-options", "-Xarchive"], ANY, Act::Refuse(LINKER)),
    spec(&["--nvlink-options", "-Xnvlink"], ANY, Act::Refuse(NVCC_LINKS)),
    spec(&["--library", "-l"], ANY, Act::Refuse(LINKER)),
    spec(&["--library-path", "-L"], ANY, Act::Refuse(LINKER)),
    spec(&["--shared", "-shared"], NONE, Act::Refuse(LINKER)),
    spec(&["--cudart", "-cudart"], ANY, Act::Refuse(CUDART)),
    spec(&["--cudadevrt", "-cudadevrt"], ANY, Act::Refuse(NVCC_LINKS)),
    spec(&["--x", "-x"], ANY, Act::Refuse("launch-build compiles kernel files as CUDA (`-x cu`)")),
    spec(
        &["--forward-unknown-to-host-compiler", "-forward-unknown-to-host-compiler", "--forward-unknown-opts", "-forward-unknown-opts"],
        NONE,
        Act::Refuse("launch-build reads every option of `flags` itself; pass host compiler options with `-Xcompiler`"),
    ),
];

const PTXAS_ARCH: &str = "launch-build runs ptxas for each arch in `arch` (and a file's own `arch`)";
const PTXAS_OUTPUT: &str = "launch-build chooses ptxas's input and output files";
const PTXAS_LINK: &str = "it makes a relocatable object that needs a device link step, and launch-build links nothing: each cubin is loaded as it is";

/// ptxas's options (12.9), in ptxas's canonical spelling.
const PTXAS: &[Spec] = &[
    spec(&["-O0", "-O1", "-O2", "-O3"], NONE, Act::As("-O")),
    spec(&["--opt-level", "-O"], Takes::Int(0, 3), Act::As("--opt-level")),
    spec(&["--Ofast-compile", "-Ofc"], Takes::Choice(&["0", "min", "mid", "max"]), Act::As("--Ofast-compile")),
    spec(&["--allow-expensive-optimizations", "-allow-expensive-optimizations"], BOOL, Act::As("--allow-expensive-optimizations")),
    // The cache operators ptxas 12.9 accepts for each (tried one by one).
    spec(&["--def-load-cache", "-dlcm"], LOAD_CACHE, Act::As("--def-load-cache")),
    spec(&["--def-store-cache", "-dscm"], STORE_CACHE, Act::As("--def-store-cache")),
    spec(&["--force-load-cache", "-flcm"], LOAD_CACHE, Act::As("--force-load-cache")),
    spec(&["--force-store-cache", "-fscm"], STORE_CACHE, Act::As("--force-store-cache")),
    spec(&["--device-debug", "-g"], NONE, Act::As("--device-debug")),
    spec(&["--generate-line-info", "-lineinfo"], NONE, Act::As("--generate-line-info")),
    spec(&["--disable-optimizer-constants", "-disable-optimizer-consts"], NONE, Act::As("--disable-optimizer-constants")),
    spec(&["--dont-merge-basicblocks", "-no-bb-merge"], NONE, Act::As("--dont-merge-basicblocks")),
    spec(&["--fmad", "-fmad"], BOOL, Act::As("--fmad")),
    spec(&["--device-stack-protector", "-device-stack-protector"], BOOL, Act::As("--device-stack-protector")),
    spec(&["--optimize-float-atomics", "-opt-fp-atomics"], NONE, Act::As("--optimize-float-atomics")),
    spec(&["--preserve-relocs", "-preserve-relocs"], NONE, Act::As("--preserve-relocs")),
    spec(&["--register-usage-level", "-regUsageLevel"], Takes::Int(0, 10), Act::As("--register-usage-level")),
    spec(&["--return-at-end", "-ret-end"], NONE, Act::As("--return-at-end")),
    spec(&["--sp-bounds-check", "-sp-bounds-check"], NONE, Act::As("--sp-bounds-check")),
    spec(&["--split-compile", "-split-compile"], Takes::Int(0, 256), Act::As("--split-compile")),
    spec(
        &["--suppress-async-bulk-multicast-advisory-warning", "-suppress-async-bulk-multicast-advisory-warning"],
        NONE,
        Act::As("--suppress-async-bulk-multicast-advisory-warning"),
    ),
    spec(&["--suppress-debug-info", "-suppress-debug-info"], NONE, Act::As("--suppress-debug-info")),
    spec(&["--suppress-double-demote-warning", "-suppress-double-demote-warning"], NONE, Act::As("--suppress-double-demote-warning")),
    spec(&["--suppress-stack-size-warning", "-suppress-stack-size-warning"], NONE, Act::As("--suppress-stack-size-warning")),
    spec(&["--warn-on-double-precision-use", "-warn-double-usage"], NONE, Act::As("--warn-on-double-precision-use")),
    spec(&["--warn-on-local-memory-usage", "-warn-lmem-usage"], NONE, Act::As("--warn-on-local-memory-usage")),
    spec(&["--warn-on-spills", "-warn-spills"], NONE, Act::As("--warn-on-spills")),
    spec(&["--warning-as-error", "-Werror"], NONE, Act::As("--warning-as-error")),
    spec(&["--disable-warnings", "-w"], NONE, Act::As("--disable-warnings")),
    spec(&["--make-errors-visible-at-exit", "-make-errors-visible-at-exit"], NONE, Act::As("--make-errors-visible-at-exit")),
    spec(&["--g-tensor-memory-access-check", "-g-tmem-access-check"], NONE, Act::As("--g-tensor-memory-access-check")),
    // launch-build always passes `-v`: its report is what the resources are read from.
    spec(&["--verbose", "-v"], NONE, Act::Drop),
    spec(&["--gpu-name", "-arch"], ANY, Act::Refuse(PTXAS_ARCH)),
    spec(&["--output-file", "-o"], ANY, Act::Refuse(PTXAS_OUTPUT)),
    spec(&["--input-as-string", "-ias"], ANY, Act::Refuse(PTXAS_OUTPUT)),
    spec(&["--options-file", "-optf"], ANY, Act::Refuse("an options file is not tracked for rebuilds or in the kernel cache; list the options in `ptxas-flags`")),
    spec(&["--compile-only", "-c"], NONE, Act::Refuse(PTXAS_LINK)),
    spec(&["--extensible-whole-program", "-ewp"], NONE, Act::Refuse(PTXAS_LINK)),
    spec(&["--compile-as-tools-patch", "-astoolspatch"], NONE, Act::Refuse(PTXAS_LINK)),
    spec(&["--maxrregcount", "-maxrregcount"], ANY, Act::Refuse(LIMITS)),
    spec(&["--device-function-maxrregcount", "-func-maxrregcount"], ANY, Act::Refuse(LIMITS)),
    spec(&["--maxntid", "-maxntid"], ANY, Act::Refuse(LIMITS)),
    spec(&["--minnctapersm", "-minnctapersm"], ANY, Act::Refuse(LIMITS)),
    spec(&["--override-directive-values", "-override-directive-values"], NONE, Act::Refuse(LIMITS)),
    spec(&["--entry", "-e"], ANY, Act::Refuse("it would leave kernels out of the cubin, while every kernel of the file is listed and launchable; leave files out with `exclude`")),
    spec(&["--machine", "-m"], ANY, Act::Machine),
];

#[cfg(test)]
/// Maps `flags` (one option per element; an option's value may be the next element) to NVRTC
/// options, include folders and ptxas options, in order, without repeats.
pub fn map_nvrtc(list: &[&str]) -> Result<Vec<Mapped>, Refused> {
    Ok(map_nvrtc_located(list)?.into_iter().map(|(_, m)| m).collect())
}

/// [`map_nvrtc`], each result with the index of the element it came from.
pub fn map_nvrtc_located(list: &[&str]) -> Result<Vec<(usize, Mapped)>, Refused> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let index = i;
        let (spec, name, value, next) = parse_one(list, i, NVRTC, "an NVRTC or nvcc", "flags")?;
        i = next;
        let refuse = |message: String| Refused { index, message };
        let nvcc = |option: Vec<String>, why: Option<&str>| {
            (index, Mapped::Nvcc { option, device_refusal: why.map(str::to_string) })
        };
        match spec.act {
            Act::As(canonical) => out.push((index, Mapped::Nvrtc(with_value(canonical, value)))),
            Act::Drop => {}
            Act::Nvcc(canonical) => out.push(nvcc(nvcc_option(canonical, value), None)),
            Act::NvccOnly(canonical, why) => out.push(nvcc(nvcc_option(canonical, value), Some(why))),
            // `-O3` and `--optimize=3` are one option: nvcc's `-O3`.
            Act::Optimize => out.push(nvcc(vec![format!("-O{}", value.or(name.get(2..)).unwrap_or_default())], None)),
            Act::Refuse(why) => return Err(refuse(format!("`{}` is not allowed: {why}", list[index].trim()))),
            Act::Define => {
                let v = value.unwrap_or_default();
                let (macro_name, body) = v.split_once('=').map_or((v, None), |(n, b)| (n, Some(b)));
                if !is_identifier(macro_name) {
                    return Err(refuse(format!(
                        "`{}`: `{macro_name}` is not a macro name; write `-DNAME` or `-DNAME=VALUE` (NAME: letters, digits and `_`, not starting with a digit)",
                        list[index].trim()
                    )));
                }
                if body.is_some_and(|b| b.contains(['\n', '\r', '\0'])) {
                    return Err(refuse(format!(
                        "`{name}`: the value has a line break or NUL; a macro value must be one line"
                    )));
                }
                out.push((index, Mapped::Nvrtc(format!("--define-macro={v}"))));
            }
            Act::Undefine => {
                let v = value.unwrap_or_default();
                if !is_identifier(v) {
                    return Err(refuse(format!("`{}`: `{v}` is not a macro name; write `-UNAME`", list[index].trim())));
                }
                out.push((index, Mapped::Nvrtc(format!("--undefine-macro={v}"))));
            }
            Act::Include => {
                // Relative to Cargo.toml or absolute, as `include` (whose checks it gets).
                let v = value.unwrap_or_default();
                out.push((index, Mapped::Include(v.to_string())));
            }
            Act::Xptxas => {
                let pieces: Vec<&str> = value.unwrap_or_default().split(',').map(str::trim).collect();
                let mapped = map_ptxas(&pieces).map_err(|r| {
                    refuse(format!("`{}` passes `{}` to ptxas: {}", list[index].trim(), pieces[r.index], r.message))
                })?;
                out.extend(mapped.into_iter().map(|o| (index, Mapped::Ptxas(o))));
            }
            Act::Rdc => {
                // For `host` files nvcc compiles relocatable device code and the link stage runs its
                // device link (`link::device`); NVRTC files are each one complete module.
                if value == Some("true") {
                    out.push(nvcc(vec!["-rdc=true".into()], Some(LINK)));
                } else {
                    out.push((index, Mapped::Nvrtc("--relocatable-device-code=false".into())));
                }
            }
            Act::Machine => {
                machine(value, &refuse)?;
                out.push(nvcc(vec!["-m64".into()], None));
            }
        }
    }
    Ok(dedup(out))
}

/// Maps `ptxas-flags` (and what `-Xptxas` passes on) to ptxas options, in order.
pub fn map_ptxas(list: &[&str]) -> Result<Vec<String>, Refused> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let index = i;
        let (spec, name, value, next) = parse_one(list, i, PTXAS, "a ptxas", "ptxas-flags")?;
        i = next;
        let refuse = |message: String| Refused { index, message };
        match spec.act {
            // `-O3` → `--opt-level=3`: one spelling, so `-O3` and `--opt-level=3` are one option.
            Act::As("-O") => out.push(format!("--opt-level={}", name.get(2..).unwrap_or_default())),
            Act::As(canonical) => out.push(with_value(canonical, value)),
            Act::Drop => {}
            Act::Refuse(why) => return Err(refuse(format!("`{}` is not allowed: {why}", list[index].trim()))),
            Act::Machine => machine(value, &refuse)?,
            Act::Define
            | Act::Undefine
            | Act::Include
            | Act::Xptxas
            | Act::Rdc
            | Act::Nvcc(_)
            | Act::NvccOnly(..)
            | Act::Optimize => {}
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|o| seen.insert(o.clone()));
    Ok(out)
}

/// `-m64` is accepted (it is the only choice); anything else is refused.
fn machine(value: Option<&str>, refuse: &dyn Fn(String) -> Refused) -> Result<(), Refused> {
    match value {
        Some("64") => Ok(()),
        v => Err(refuse(format!(
            "`{}` is not allowed: GPU code is 64-bit only (`-m64`, the default)",
            v.map_or("-m".to_string(), |v| format!("-m {v}"))
        ))),
    }
}

/// An nvcc option and its value as two arguments (`["--default-stream", "per-thread"]`).
fn nvcc_option(canonical: &str, value: Option<&str>) -> Vec<String> {
    std::iter::once(canonical).chain(value).map(str::to_string).collect()
}

fn with_value(canonical: &str, value: Option<&str>) -> String {
    match value {
        Some(v) => format!("{canonical}={v}"),
        None => canonical.to_string(),
    }
}

/// Reads the option at `list[i]`: its spec, its name as written, its value (inline after `=` or a
/// space, glued as in `-DX`, or the next element) and the index of the element after it.
fn parse_one<'a>(
    list: &[&'a str],
    i: usize,
    table: &'static [Spec],
    tool: &str,
    key: &str,
) -> Result<(&'static Spec, &'a str, Option<&'a str>, usize), Refused> {
    let t = list[i].trim();
    let refuse = |message: String| Refused { index: i, message };
    if t.is_empty() {
        return Err(refuse("an empty flag; remove it".into()));
    }
    if !t.starts_with('-') {
        return Err(refuse(format!(
            "`{t}` is not an option (options start with `-`); an option's value may follow it as the next element, as in [\"-D\", \"N=1\"]"
        )));
    }
    let find = |name: &str| table.iter().find(|s| s.names.contains(&name));
    // The whole element first (`-O3`, `-lineinfo`), then `name value` / `name=value`, then the
    // glued short forms (`-DN=1`, `-Iinclude`, `-UN`).
    let (spec, name, inline) = if let Some(s) = find(t) {
        (s, t, None)
    } else if let Some((s, n, v)) = [t.split_once(char::is_whitespace).map(|(n, v)| (n, v.trim())), t.split_once('=')]
        .into_iter()
        .flatten()
        .find_map(|(n, v)| find(n).map(|s| (s, n, v)))
    {
        (s, n, Some(v))
    } else if let Some(s) = ["-D", "-I", "-U"].iter().find(|p| t.starts_with(**p)).and_then(|p| find(p)) {
        (s, &t[..2], Some(&t[2..]))
    } else {
        let hint = closest(t, table).map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default();
        return Err(refuse(format!(
            "`{t}` is not {tool} option launch-build knows{hint}; see `{key}` in the configuration reference (docs/src/reference/config.md) for what is accepted"
        )));
    };
    let (value, next) = match (spec.takes, inline) {
        (Takes::Nothing, None) => (None, i + 1),
        (Takes::Nothing, Some(_)) => return Err(refuse(format!("`{name}` takes no value; write just `{name}`"))),
        (_, Some(v)) => (Some(v), i + 1),
        (_, None) => match list.get(i + 1) {
            Some(v) => (Some(v.trim()), i + 2),
            None if matches!(spec.act, Act::Refuse(_)) => (None, i + 1),
            None => {
                return Err(refuse(format!(
                    "`{name}` needs a value ({}): write `{name}=VALUE` or put the value in the next element",
                    expected(spec.takes)
                )))
            }
        },
    };
    if let (Some(v), false) = (value, matches!(spec.act, Act::Refuse(_) | Act::Machine)) {
        let ok = match spec.takes {
            Takes::Bool => v == "true" || v == "false",
            Takes::Choice(c) => c.contains(&v),
            Takes::Int(lo, hi) => v.parse::<i64>().is_ok_and(|n| (lo..=hi).contains(&n)),
            Takes::Numbers => v.split(',').all(|n| n.trim().parse::<u32>().is_ok_and(|n| n > 0)),
            Takes::Anything => !v.is_empty(),
            Takes::Nothing => true,
        };
        if !ok {
            return Err(refuse(format!("`{name}`: `{v}` is not {}", expected(spec.takes))));
        }
    }
    Ok((spec, name, value, next))
}

/// What an option's value must be, in words.
fn expected(takes: Takes) -> String {
    match takes {
        Takes::Bool => "`true` or `false`".into(),
        Takes::Choice(c) => {
            let c: Vec<String> = c.iter().map(|c| format!("`{c}`")).collect();
            format!("one of {}", c.join(", "))
        }
        Takes::Int(lo, hi) => format!("an integer from {lo} to {hi}"),
        Takes::Numbers => "diagnostic numbers separated by commas, such as `177,550`".into(),
        Takes::Anything | Takes::Nothing => "a non-empty value".into(),
    }
}

/// The known spelling closest to an unknown option (`--use-fast-math` → `--use_fast_math`).
fn closest(t: &str, table: &[Spec]) -> Option<&'static str> {
    let name = t.split(['=', ' ']).next().unwrap_or(t);
    let norm = |s: &str| s.trim_start_matches('-').to_ascii_lowercase().replace('_', "-");
    let wanted = norm(name);
    table
        .iter()
        .filter(|s| !matches!(s.act, Act::Refuse(_)))
        .flat_map(|s| s.names.iter())
        .map(|n| (edit_distance(&wanted, &norm(n)), *n))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, n)| n)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Repeats removed, first kept (`-default-device` and `--expt-relaxed-constexpr` are one option).
fn dedup(list: Vec<(usize, Mapped)>) -> Vec<(usize, Mapped)> {
    let mut seen = std::collections::BTreeSet::new();
    list.into_iter().filter(|(_, m)| seen.insert(format!("{m:?}"))).collect()
}

/// NVRTC options in order, a later value of a single-valued option replacing an earlier one
/// (`--std=c++14` then a file's `--std=c++17`: c++17, at the later place), exact repeats removed.
/// Defines, undefines, include folders and diagnostic lists accumulate.
pub fn merge_nvrtc(options: impl IntoIterator<Item = String>) -> Vec<String> {
    const ACCUMULATE: &[&str] =
        &["--define-macro", "--undefine-macro", "--include-path", "--diag-error", "--diag-suppress", "--diag-warn"];
    let mut out: Vec<String> = Vec::new();
    for o in options {
        let name = o.split_once('=').map_or(o.as_str(), |(n, _)| n);
        if o.contains('=') && !ACCUMULATE.contains(&name) {
            out.retain(|p| p.split_once('=').is_none_or(|(n, _)| n != name));
        } else if out.contains(&o) {
            continue;
        }
        out.push(o);
    }
    out
}

/// nvcc options of `host` files ([`Mapped::Nvcc`]) in order, as nvcc's arguments: a later value of
/// a single-valued option replacing an earlier one (`-O2` then a file's `-O3`: `-O3`, at the later
/// place; nvcc would warn about the pair), exact repeats removed; `-Xcompiler` and `-Xcudafe`
/// accumulate.
pub fn merge_nvcc(options: impl IntoIterator<Item = Vec<String>>) -> Vec<String> {
    const ACCUMULATE: &[&str] = &["-Xcompiler", "-Xcudafe"];
    // The `-O` levels are one option with the level glued on.
    let name = |o: &[String]| {
        o.first().map(|n| if n.starts_with("-O") { "-O" } else { n.as_str() }).unwrap_or_default().to_string()
    };
    let mut out: Vec<Vec<String>> = Vec::new();
    for o in options {
        let single = name(&o) == "-O" || (o.len() > 1 && !ACCUMULATE.contains(&name(&o).as_str()));
        if single {
            out.retain(|p| name(p) != name(&o));
        } else if out.contains(&o) {
            continue;
        }
        out.push(o);
    }
    out.concat()
}

#[cfg(test)]
mod tests;

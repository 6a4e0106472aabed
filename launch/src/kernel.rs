//! The types the generated `kernels.rs` instantiates: one [`Kernel`] static per `__global__`
//! function, pointing at the [`Module`] (one `.cu` file) that holds its cubins and PTX.

use std::borrow::Cow;

use crate::Arch;

/// Where a kernel's launch contract came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
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
    /// The PTX directives the contract is (`.maxntid 256, 1, 1, .minnctapersm 2, .maxnreg 64`;
    /// `.reqntid` for an exact `__launch_bounds__`-style contract read from PTX).
    pub fn directives(&self) -> String {
        let mut d = Vec::new();
        if let Some(t) = self.threads {
            let name = if self.exact && self.source == ContractSource::LaunchBounds { ".reqntid" } else { ".maxntid" };
            d.push(format!("{name} {t}, 1, 1"));
        }
        if let Some(b) = self.min_blocks {
            d.push(format!(".minnctapersm {b}"));
        }
        if let Some(r) = self.max_regs {
            d.push(format!(".maxnreg {r}"));
        }
        d.join(", ")
    }
}

/// As the source spells it: `@launch(1024, 2)`, `__launch_bounds__(256, 4) __maxnreg__(32)`. An
/// exact block size read from PTX (`.reqntid`) has no source spelling here: it is written as its
/// [`directives`](Contract::directives), `.reqntid 128, 1, 1, .maxnreg 32`.
impl std::fmt::Display for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let numbers = |ns: &[Option<u32>]| ns.iter().flatten().map(|n| n.to_string()).collect::<Vec<_>>().join(", ");
        match self.source {
            ContractSource::Annotation => {
                write!(f, "@launch({})", numbers(&[self.threads, self.min_blocks, self.max_regs]))
            }
            ContractSource::LaunchBounds if self.exact => f.write_str(&self.directives()),
            ContractSource::LaunchBounds => {
                let bounds =
                    self.threads.map(|t| format!("__launch_bounds__({})", numbers(&[Some(t), self.min_blocks])));
                let maxnreg = self.max_regs.map(|r| format!("__maxnreg__({r})"));
                f.write_str(&[bounds, maxnreg].into_iter().flatten().collect::<Vec<_>>().join(" "))
            }
        }
    }
}

/// One field of [`Resources`], described once ([`Resources::FIELDS`]): what the documents call it,
/// how a sentence and the report's table show it, whether more of it is worse, and its value.
/// What shows, writes, reads or compares the resources walks the table (the report's columns, the
/// diff's deltas, the baseline's entries, the regression predicate), so a field added to the
/// struct (one line in `resources!` below) reaches each of them.
#[derive(Clone, Copy, Debug)]
pub struct ResourceField {
    /// The field's name in the JSON documents and the baseline (`registers`, `spill_stores`,
    /// `cmem`).
    pub name: &'static str,
    /// The Rust field (`cmem0`).
    pub field: &'static str,
    /// How a sentence names it (`spill stores`).
    pub label: &'static str,
    /// Its unit in a sentence: `bytes`, or empty for a count (registers, barriers).
    pub unit: &'static str,
    /// Its column in `cargo launch report`'s table, `None` for none.
    pub column: Option<Column>,
    /// Whether more of it is a regression (`check --baseline`, `diff --fail-on regression`).
    pub more_is_worse: bool,
    /// Its value; `None` where ptxas did not print it.
    pub get: fn(&Resources) -> Option<u32>,
    /// Sets its value (`None`: not printed, 0 for a field that is always printed).
    pub set: fn(&mut Resources, Option<u32>),
}

/// A column of `cargo launch report`'s table that shows a field of [`Resources`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// Its place among the resource columns, left to right.
    pub at: u8,
    /// Its header (`regs`). Fields with the same header share one column, their sum (`spill`:
    /// stores + loads).
    pub header: &'static str,
}

/// A field's column (for the table below).
const fn column(at: u8, header: &'static str) -> Option<Column> {
    Some(Column { at, header })
}

/// A field's value as an optional number: a `u32` is always there, an `Option<u32>` may not be.
trait FieldValue: Sized {
    /// The value of a kernel that uses none of it.
    const ZERO: Self;
    fn value(&self) -> Option<u32>;
    fn from_value(v: Option<u32>) -> Self;
}

impl FieldValue for u32 {
    const ZERO: u32 = 0;
    fn value(&self) -> Option<u32> {
        Some(*self)
    }
    fn from_value(v: Option<u32>) -> u32 {
        v.unwrap_or(0)
    }
}

impl FieldValue for Option<u32> {
    const ZERO: Option<u32> = None;
    fn value(&self) -> Option<u32> {
        *self
    }
    fn from_value(v: Option<u32>) -> Option<u32> {
        v
    }
}

/// The struct and its field table from one list, so that neither can lack a field of the other.
/// Each field: `name: type => "json name", "label", "unit", column, more_is_worse;`.
macro_rules! resources {
    (
        $(#[$meta:meta])*
        pub struct Resources {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty
               => $name:literal, $label:literal, $unit:literal, $column:expr, $worse:literal; )*
        }
    ) => {
        $(#[$meta])*
        pub struct Resources {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl Resources {
            /// Every field, in the order of the struct.
            pub const FIELDS: &'static [ResourceField] = &[
                $( ResourceField {
                    name: $name,
                    field: stringify!($field),
                    label: $label,
                    unit: $unit,
                    column: $column,
                    more_is_worse: $worse,
                    get: |r| FieldValue::value(&r.$field),
                    set: |r, v| r.$field = FieldValue::from_value(v),
                }, )*
            ];

            /// A kernel that uses nothing (what `Default` gives, as a constant).
            pub const ZERO: Resources = Resources { $( $field: <$ty as FieldValue>::ZERO, )* };

            /// The struct as a Rust expression (`::launch::Resources { registers: 32, ... }`): what
            /// the generated `kernels.rs` embeds.
            pub fn rust_literal(&self) -> String {
                let mut s = String::from("::launch::Resources {");
                $( s.push_str(&format!(" {}: {:?},", stringify!($field), self.$field)); )*
                s.push_str(" }");
                s
            }
        }
    };
}

resources! {
    /// What ptxas reported for one kernel on one architecture (`ptxas -v`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    #[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
    pub struct Resources {
        /// `Used N registers`: registers per thread.
        registers: u32 => "registers", "registers", "", column(0, "regs"), true;
        /// `used N barriers`: highest named barrier ID + 1 (16 when the ID is in a register).
        barriers: u32 => "barriers", "barriers", "", None, false;
        /// `N bytes stack frame`.
        stack_frame: u32 => "stack_frame", "stack", "bytes", column(2, "stack"), true;
        /// `N bytes spill stores`.
        spill_stores: u32 => "spill_stores", "spill stores", "bytes", column(1, "spill"), true;
        /// `N bytes spill loads`.
        spill_loads: u32 => "spill_loads", "spill loads", "bytes", column(1, "spill"), true;
        /// `N bytes cumulative stack size` (0 when not printed).
        cumulative_stack: u32 => "cumulative_stack", "cumulative stack", "bytes", None, false;
        /// `N bytes smem`: static shared memory, without the 1 KB the driver reserves per block.
        shared_static: u32 => "shared_static", "static shared memory", "bytes", None, true;
        /// `N bytes cmem[0]` where printed (ptxas prints it only below sm_90). `cmem` in JSON.
        #[cfg_attr(feature = "serde", serde(rename = "cmem"))]
        cmem0: Option<u32> => "cmem", "cmem[0]", "bytes", None, false;
    }
}

impl Resources {
    /// Spill stores + spill loads, in bytes: what a spill budget (`max-spill-bytes`) limits.
    /// Saturating, so a damaged manifest's numbers cannot overflow.
    pub fn spill_bytes(&self) -> u32 {
        self.spill_stores.saturating_add(self.spill_loads)
    }
}

/// One compiled architecture of a module.
#[derive(Debug)]
pub struct Cubin {
    /// `sm_90`, `sm_100a`, ...
    pub arch: Arch,
    /// The cubin (ELF) image.
    pub bytes: &'static [u8],
}

/// PTX embedded for one architecture.
#[derive(Debug)]
pub struct PtxText {
    /// The architecture it was generated for (`sm_90` means `compute_90`).
    pub arch: Arch,
    /// The PTX.
    pub text: &'static str,
}

/// One kernel source file, compiled.
#[derive(Debug)]
pub struct Module {
    /// Path of the `.cu` file relative to the crate root, `/`-separated.
    pub file: &'static str,
    /// One cubin per architecture the file is compiled for.
    pub cubins: &'static [Cubin],
    /// Architecture of the fallback PTX (the lowest the file is compiled for); `None` for a
    /// module without PTX.
    pub ptx_arch: Option<Arch>,
    /// PTX for that architecture, for the driver to JIT on newer GPUs.
    pub ptx: &'static str,
    /// PTX of higher architectures, embedded only for kernels that [`Module::ptx`] lacks (defined
    /// under `#if __CUDA_ARCH__ >= 900`): for each, the lowest architecture whose PTX has it.
    pub extra_ptx: &'static [PtxText],
}

impl Module {
    /// The PTX texts, lowest architecture first: the fallback (when [`Module::ptx_arch`] is
    /// set), then [`Module::extra_ptx`].
    #[cfg(feature = "cudarc")]
    pub(crate) fn ptx_texts(&self) -> impl Iterator<Item = (Arch, &'static str)> + '_ {
        self.ptx_arch.map(|a| (a, self.ptx)).into_iter().chain(self.extra_ptx.iter().map(|p| (p.arch, p.text)))
    }
}

/// Resources of one kernel on one architecture.
#[derive(Debug)]
pub struct ArchResources {
    /// The architecture.
    pub arch: Arch,
    /// What ptxas reported.
    pub resources: Resources,
    /// The contract the kernel is compiled with on this arch: [`Kernel::contract`] unless CUDA's
    /// own `__launch_bounds__` depend on `__CUDA_ARCH__` (CUB's kernels take their block size from
    /// a policy per arch).
    pub contract: Option<Contract>,
}

/// A `__global__` function, compiled for every configured architecture.
#[derive(Debug)]
pub struct Kernel {
    /// The symbol name (mangled for kernels that are not `extern "C"`).
    pub name: &'static str,
    /// The demangled name (`void tmpl<8>(int*)`); the symbol itself for `extern "C"` kernels.
    pub demangled: &'static str,
    /// 1-based line of the definition in [`Module::file`], or of the macro invocation that
    /// generated it (1 when neither was found).
    pub line: u32,
    /// The module holding its code.
    pub module: &'static Module,
    /// Its launch contract; `None` for an unbounded kernel. The lowest arch's: see
    /// [`Kernel::contract_on`] for another arch's.
    pub contract: Option<Contract>,
    /// Block size the host uses for kernels without a contract (`threads` metadata key).
    pub host_threads: u32,
    /// Per-arch resources, lowest first: exactly the architectures whose build has the kernel.
    pub resources: &'static [ArchResources],
    /// The same code under other contracts (`[package.metadata.launch.tune.<kernel>]`): each its
    /// own entry, derived from this kernel's PTX with the directives set and the entry renamed.
    /// Empty when the kernel has no tune grid. See [`Kernel::variants`].
    pub variants: &'static [Kernel],
    /// Its parameters as the compiler sees them, each held to the PTX's `.param` list on every
    /// arch; `None` where the build could not recover them (a `host` file's kernel without a
    /// symbol table entry, a probe that did not compile). A variant has its kernel's.
    pub params: Option<&'static [Param]>,
}

/// One parameter of a kernel: the C++ type the compiler names (from the kernel's mangled symbol,
/// or for an `extern "C"` kernel the lowered name of a `decltype` probe), with its size and
/// alignment from the PTX.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Param {
    /// The C++ type as the compiler writes it: `float const*`, `unsigned long`, `Params`.
    pub ty: Cow<'static, str>,
    /// What a launch from Rust passes for it.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub kind: ParamKind,
    /// Bytes, from the PTX.
    pub size: u32,
    /// Alignment in bytes, from the PTX.
    pub align: u32,
}

/// What a launch passes for a [`Param`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "snake_case"))]
pub enum ParamKind {
    /// A device pointer to `pointee` (the C++ type), which the kernel may write (`mutable`) or
    /// only reads (`const`).
    Pointer {
        /// The pointed-to type as the compiler writes it.
        pointee: Cow<'static, str>,
        /// Whether the kernel may write through it.
        mutable: bool,
    },
    /// A value whose Rust type is fixed by its C++ type: `i32` for `int`, `u64` for `unsigned
    /// long` (`size_t`), `f16` for `__half`, `f32x4` for `float4`.
    Value {
        /// The Rust type's name.
        rust: Cow<'static, str>,
    },
    /// Another type by value (a struct, an enum): only its size and alignment are known.
    Opaque,
}

impl Kernel {
    /// The cubin for exactly this arch, if built and holding this kernel.
    pub fn cubin(&self, arch: Arch) -> Option<&'static Cubin> {
        self.module.cubins.iter().find(|c| c.arch == arch).filter(|_| self.exists_on(arch))
    }

    /// Whether the build for this arch has the kernel (an `#if __CUDA_ARCH__` can leave it out).
    /// A kernel without recorded resources (a docs.rs build) is taken to exist everywhere.
    pub(crate) fn exists_on(&self, arch: Arch) -> bool {
        self.resources.is_empty() || self.resources.iter().any(|r| r.arch == arch)
    }

    /// Whether `name` names this kernel whatever other kernels there are: its symbol, its
    /// demangled name, or either qualified by its file (`kernels/fill.cu::fill_f16`) or by the
    /// file's trailing path components (`fill.cu::fill_f16`). Its bare function name names it
    /// only where no other kernel has it: [`find`] knows that form too.
    pub fn is_named(&self, name: &str) -> bool {
        name::matches(name, self.names()).is_some_and(name::Match::is_exact)
    }

    /// The names it carries, for the [name matcher](name).
    pub fn names(&self) -> name::Names<'static> {
        name::Names { symbol: self.name, demangled: self.demangled, file: self.module.file }
    }

    /// The contract it is compiled with on `arch` ([`ArchResources::contract`]), or
    /// [`Kernel::contract`] on an arch it is not built for (its PTX, JIT-compiled, is the lowest's).
    pub fn contract_on(&self, arch: Arch) -> Option<Contract> {
        self.resources.iter().find(|r| r.arch == arch).map_or(self.contract, |r| r.contract)
    }

    /// Resources on this arch, if built.
    pub fn resources_on(&self, arch: Arch) -> Option<&Resources> {
        self.resources.iter().find(|r| r.arch == arch).map(|r| &r.resources)
    }

    /// The variants of this kernel's tune grid, each a [`Kernel`] with its own contract, entry
    /// name, module and per-arch resources (only the arches where it can launch at its own block
    /// size). The plain kernel is not among them; a kernel without a grid has none.
    pub fn variants(&self) -> &'static [Kernel] {
        self.variants
    }

    /// The block size this kernel is meant to be launched with: the contract's threads, else the
    /// host's default.
    pub fn block_size(&self) -> u32 {
        self.contract.and_then(|c| c.threads).unwrap_or(self.host_threads)
    }
}

/// Why [`find`] found no single kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FindError {
    /// No kernel has that name.
    NotFound {
        /// The name asked for.
        name: String,
    },
    /// Several files have a kernel of that name.
    Ambiguous {
        /// The name asked for.
        name: String,
        /// Their qualified names (`kernels/a.cu::fill`).
        candidates: Vec<String>,
    },
}

impl std::fmt::Display for FindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FindError::NotFound { name } => write!(f, "no kernel named `{name}`"),
            FindError::Ambiguous { name, candidates } => write!(
                f,
                "`{name}` names {} kernels: {}; name one as `path/file.cu::name`",
                candidates.len(),
                candidates.join(", ")
            ),
        }
    }
}

impl std::error::Error for FindError {}

/// The kernel of `kernels` (usually the generated `KERNELS`) that `name` names, as every place
/// that takes a kernel name reads it ([`name`]): its symbol, its demangled name, its bare
/// function name when no other kernel has it, any of them after its file
/// (`path/file.cu::name`).
///
/// # Errors
/// No kernel of that name, or several (their qualified names).
pub fn find(kernels: &[&'static Kernel], name: &str) -> Result<&'static Kernel, FindError> {
    let names: Vec<name::Names<'static>> = kernels.iter().map(|k| k.names()).collect();
    name::resolve(name, &names).map(|i| kernels[i])
}

pub mod name;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    const SM_80: Arch = Arch::new(8, 0, Variant::Base);
    const SM_90: Arch = Arch::new(9, 0, Variant::Base);

    static A: Module = Module { file: "kernels/a.cu", cubins: &[], ptx_arch: Some(SM_80), ptx: "", extra_ptx: &[] };
    static B: Module = Module { file: "kernels/sub/b.cu", cubins: &[], ptx_arch: Some(SM_80), ptx: "", extra_ptx: &[] };
    const fn kernel(name: &'static str, demangled: &'static str, module: &'static Module) -> Kernel {
        Kernel {
            name,
            demangled,
            line: 1,
            module,
            contract: None,
            host_threads: 256,
            resources: &[],
            variants: &[],
            params: None,
        }
    }
    static FILL_A: Kernel = kernel("fill", "fill", &A);
    static FILL_B: Kernel = kernel("fill", "fill", &B);
    static TMPL: Kernel = kernel("_Z4tmplILi8EEvPi", "void tmpl<8>(int*)", &B);
    static ALL: &[&Kernel] = &[&FILL_A, &FILL_B, &TMPL];

    #[test]
    fn a_contract_is_written_as_its_source_spells_it_and_as_ptx_directives() {
        let c =
            |source, threads, min_blocks, max_regs, exact| Contract { source, threads, min_blocks, max_regs, exact };
        let at = c(ContractSource::Annotation, Some(1024), Some(2), None, true);
        assert_eq!(
            (at.to_string(), at.directives()),
            ("@launch(1024, 2)".into(), ".maxntid 1024, 1, 1, .minnctapersm 2".into())
        );
        let lb = c(ContractSource::LaunchBounds, Some(256), Some(4), Some(32), false);
        assert_eq!(lb.to_string(), "__launch_bounds__(256, 4) __maxnreg__(32)");
        assert_eq!(lb.directives(), ".maxntid 256, 1, 1, .minnctapersm 4, .maxnreg 32");
        let regs = c(ContractSource::LaunchBounds, None, None, Some(64), false);
        assert_eq!((regs.to_string(), regs.directives()), ("__maxnreg__(64)".into(), ".maxnreg 64".into()));
        // An exact block size from PTX is written as PTX, never half PTX and half source.
        let req = c(ContractSource::LaunchBounds, Some(128), None, None, true);
        assert_eq!((req.to_string(), req.directives()), (".reqntid 128, 1, 1".into(), ".reqntid 128, 1, 1".into()));
        let req = c(ContractSource::LaunchBounds, Some(128), Some(2), Some(32), true);
        assert_eq!(req.to_string(), ".reqntid 128, 1, 1, .minnctapersm 2, .maxnreg 32");
        assert_eq!(req.to_string(), req.directives());
    }

    #[test]
    fn a_kernel_is_found_by_plain_name_when_unique_else_by_file() {
        assert!(std::ptr::eq(find(ALL, "_Z4tmplILi8EEvPi").unwrap(), &TMPL));
        assert!(std::ptr::eq(find(ALL, "void tmpl<8>(int*)").unwrap(), &TMPL));
        assert!(std::ptr::eq(find(ALL, "kernels/a.cu::fill").unwrap(), &FILL_A));
        assert!(std::ptr::eq(find(ALL, "sub/b.cu::fill").unwrap(), &FILL_B));
        assert!(std::ptr::eq(find(ALL, "b.cu::fill").unwrap(), &FILL_B));
        assert_eq!(
            find(ALL, "fill").unwrap_err().to_string(),
            "`fill` names 2 kernels: kernels/a.cu::fill, kernels/sub/b.cu::fill; name one as `path/file.cu::name`"
        );
        // A path must end at a `/`: `a.cu` is not `kernels/ba.cu`.
        assert_eq!(find(ALL, "s/a.cu::fill").unwrap_err(), FindError::NotFound { name: "s/a.cu::fill".into() });
        assert_eq!(find(ALL, "nope").unwrap_err(), FindError::NotFound { name: "nope".into() });
        assert_eq!(FILL_B.names().qualified(), "kernels/sub/b.cu::fill");
        assert!(std::ptr::eq(find(ALL, "kernels/sub/b.cu::void tmpl<8>(int*)").unwrap(), &TMPL));
    }

    const SAMPLE: Resources = Resources {
        registers: 167,
        barriers: 1,
        stack_frame: 1912,
        spill_stores: 4452,
        spill_loads: 4628,
        cumulative_stack: 1912,
        shared_static: 2048,
        cmem0: Some(360),
    };

    /// The field table is the struct's: every field once, in order, each reading its own value,
    /// and the documents' names are serde's.
    #[test]
    fn the_field_table_is_the_structs() {
        let values: Vec<Option<u32>> = Resources::FIELDS.iter().map(|f| (f.get)(&SAMPLE)).collect();
        assert_eq!(values, [Some(167), Some(1), Some(1912), Some(4452), Some(4628), Some(1912), Some(2048), Some(360)]);
        assert_eq!((Resources::FIELDS[7].get)(&Resources::default()), None);
        assert_eq!(Resources::ZERO, Resources::default());
        // `set` writes what `get` reads, field by field.
        let mut r = Resources::ZERO;
        for f in Resources::FIELDS {
            (f.set)(&mut r, (f.get)(&SAMPLE));
        }
        assert_eq!(r, SAMPLE);
        let json = serde_json::to_value(SAMPLE).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let mut names: Vec<&str> = Resources::FIELDS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(names, keys);
    }

    /// The literal `kernels.rs` embeds names every field with its value.
    #[test]
    fn the_rust_literal_spells_every_field() {
        assert_eq!(
            SAMPLE.rust_literal(),
            "::launch::Resources { registers: 167, barriers: 1, stack_frame: 1912, spill_stores: 4452, \
             spill_loads: 4628, cumulative_stack: 1912, shared_static: 2048, cmem0: Some(360), }"
        );
    }

    // The kernels of fixtures/crates/cpp_names: a unique C++ kernel and two overloads.
    static NAMES: Module =
        Module { file: "kernels/names.cu", cubins: &[], ptx_arch: Some(SM_90), ptx: "", extra_ptx: &[] };
    static PACK: Kernel = kernel(
        "_Z16pack_8bit_kernelPKhPhm",
        "pack_8bit_kernel(unsigned char const*, unsigned char*, unsigned long)",
        &NAMES,
    );
    static SCALE_F: Kernel = kernel("_Z5scalePf", "scale(float*)", &NAMES);
    static SCALE_D: Kernel = kernel("_Z5scalePd", "scale(double*)", &NAMES);
    static CPP: &[&Kernel] = &[&PACK, &SCALE_F, &SCALE_D];

    /// Issue 32, class 8: `find` reads a name as every other place does (`name`), on a crate with
    /// overloads: each form × what it names. Before, the bare name of a unique kernel and of
    /// overloads were "no kernel named".
    #[test]
    fn find_takes_every_form_of_a_kernel_name() {
        let ambiguous = "`scale` names 2 kernels: kernels/names.cu::scale(float*), kernels/names.cu::scale(double*); \
                         name one as `path/file.cu::name`";
        let cases: [(&str, Result<&Kernel, String>); 8] = [
            ("_Z5scalePf", Ok(&SCALE_F)),
            ("scale(double*)", Ok(&SCALE_D)),
            ("pack_8bit_kernel", Ok(&PACK)),
            ("scale", Err(ambiguous.to_string())),
            ("names.cu::scale(float*)", Ok(&SCALE_F)),
            ("kernels/names.cu::pack_8bit_kernel", Ok(&PACK)),
            ("kernels/names.cu::_Z5scalePd", Ok(&SCALE_D)),
            ("scal", Err("no kernel named `scal`".to_string())),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter_map(|(name, want)| {
                let got = find(CPP, name).map_err(|e| e.to_string());
                let same = match (&got, want) {
                    (Ok(g), Ok(w)) => std::ptr::eq(*g, *w),
                    (Err(g), Err(w)) => g == w,
                    _ => false,
                };
                (!same).then(|| format!("{name}: {:?}", got.map(|k| k.demangled)))
            })
            .collect();
        assert!(wrong.is_empty(), "{} of {} names read wrongly:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
    }
}

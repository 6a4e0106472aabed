//! A kernel's parameter list, exactly as the compiler sees it (issue 33): the types come from the
//! compiler's own names, never from the source text — a C++ kernel's mangled symbol encodes them,
//! and an `extern "C"` kernel's come from the lowered name of a probe (`&__launch_probe<decltype(k)>`
//! for `template <class F> __global__ void __launch_probe() {}`, compiled front end only), whose
//! mangling is the kernel's whole function type, typedefs and macros resolved. Each type is then
//! held to the PTX's `.param` list (count, size, alignment), which also gives a struct's size and
//! alignment.

use std::collections::HashMap;
use std::fmt;

/// The probe template added to a file's source for the name expressions.
pub(crate) const PROBE: &str = "\ntemplate <class F> __global__ void __launch_probe() {}\n";

/// The name expression whose lowered name is `kernel`'s function type.
pub(crate) fn probe_expression(kernel: &str) -> String {
    format!("&__launch_probe<decltype({kernel})>")
}

/// One `.param` of a PTX entry: its size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PtxParam {
    pub size: u32,
    pub align: u32,
}

/// The `.param` list of every entry in `ptx`, by name, in one pass over the text (a module of
/// hundreds of kernels is tens of megabytes); an entry whose list does not read is left out.
pub(crate) fn ptx_params_of_all(ptx: &str) -> HashMap<&str, Vec<PtxParam>> {
    let mut out = HashMap::new();
    let mut lines = ptx.lines();
    while let Some(line) = lines.next() {
        // Cheap before the word-by-word reading: few lines are entries, and an entry's line
        // starts with a directive.
        if crate::ptx::first_byte(line) != Some(b'.') || !line.contains(".entry") {
            continue;
        }
        let Some(name) = crate::ptx::entry_name(line.trim()) else { continue };
        let mut params = Some(Vec::new());
        let mut t = line.trim();
        loop {
            if let Some(rest) = t.find(".param").map(|at| &t[at + ".param".len()..]) {
                params = params.and_then(|mut p| {
                    param(rest).map(|x| {
                        p.push(x);
                        p
                    })
                });
            }
            if t.starts_with(')') || t.ends_with(')') || t.starts_with('{') {
                break;
            }
            match lines.next() {
                Some(next) => t = next.trim(),
                None => break,
            }
        }
        if let Some(p) = params {
            out.insert(name, p);
        }
    }
    out
}

/// The `.param` list of `entry` in `ptx`, in order; `None` when the entry is not there.
pub(crate) fn ptx_params(ptx: &str, entry: &str) -> Option<Vec<PtxParam>> {
    ptx_params_of_all(ptx).remove(entry)
}

/// ` .align 8 .b8 k_param_9[24],` → 24 bytes at 8; ` .u32 k_param_2,` → 4 at 4;
/// ` .u64 .ptr .global .align 16 k_param_0` → 8 at 8 (the `.align` is the pointee's).
fn param(decl: &str) -> Option<PtxParam> {
    let words: Vec<&str> = decl.split_whitespace().collect();
    let mut align = None;
    let mut width = None;
    let mut count = 1u32;
    // After `.ptr`, `.align N` is the pointee's alignment, not the parameter's.
    let mut pointer_attributes = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i].trim_end_matches([',', ')']);
        match w {
            ".ptr" => pointer_attributes = true,
            ".align" => {
                let n = words.get(i + 1)?.trim_end_matches(',').parse().ok();
                if !pointer_attributes {
                    align = n;
                }
                i += 1;
            }
            _ if w.starts_with('.') => {
                if let Some(bits) = scalar_bits(w) {
                    width = Some(bits / 8);
                }
            }
            name => {
                if let Some((_, n)) = name.split_once('[') {
                    count = n.trim_end_matches(']').parse().ok()?;
                }
            }
        }
        i += 1;
    }
    let width = width?;
    Some(PtxParam { size: width * count, align: align.unwrap_or(width) })
}

/// `.u64` → 64; `.pred` and the state spaces (`.ptr`, `.global`) → `None`.
fn scalar_bits(t: &str) -> Option<u32> {
    let rest = t.strip_prefix('.')?;
    let bits = rest.strip_prefix(['u', 's', 'b', 'f'])?;
    matches!(bits, "8" | "16" | "32" | "64").then(|| bits.parse().ok())?
}

/// `void ns::k<4>(float const*, Params, unsigned long)` → its parameter types, as the demangler
/// writes them. `None` when the text has no parameter list.
pub(crate) fn demangled_params(demangled: &str) -> Option<Vec<String>> {
    // The parameter list is the last top-level `(...)`.
    let close = demangled.rfind(')')?;
    let open = matching_open(demangled, close)?;
    Some(split_top_level(&demangled[open + 1..close]))
}

/// The probe's demangled lowered name, `void __launch_probe<void (float const*, int)>()` → the
/// kernel's parameter types.
pub(crate) fn probe_params(demangled_probe: &str) -> Option<Vec<String>> {
    let start = demangled_probe.find("__launch_probe<")? + "__launch_probe<".len();
    let end = demangled_probe.rfind(">()")?;
    demangled_params(demangled_probe.get(start..end)?)
}

fn matching_open(text: &str, close: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in text[..=close].char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `a, b<c, d>, e (*)(f, g)` → `[a, b<c, d>, e (*)(f, g)]`; `void` or nothing → `[]`.
fn split_top_level(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in list.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(list[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = list[start..].trim();
    if !last.is_empty() && last != "void" {
        out.push(last.to_string());
    }
    out
}

/// What a parameter is, for a launch from Rust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A pointer: the kernel reads (`const`) or may write what it points to.
    Pointer { pointee: String, mutable: bool },
    /// A value whose Rust type is known: `i32`, `f32`, `half::f16`-shaped `__half`, `float4`, ...
    Value(&'static str),
    /// Anything else (a struct or enum by value): its size and alignment are the PTX's.
    Opaque,
}

/// The C++ types launched by value whose layout is fixed: the name the demangler writes, the Rust
/// type a launch takes, size and alignment.
const VALUES: &[(&str, &str, u32, u32)] = &[
    ("bool", "bool", 1, 1),
    ("char", "i8", 1, 1),
    ("signed char", "i8", 1, 1),
    ("unsigned char", "u8", 1, 1),
    ("short", "i16", 2, 2),
    ("unsigned short", "u16", 2, 2),
    ("int", "i32", 4, 4),
    ("unsigned int", "u32", 4, 4),
    ("long", "i64", 8, 8),
    ("unsigned long", "u64", 8, 8),
    ("long long", "i64", 8, 8),
    ("unsigned long long", "u64", 8, 8),
    ("float", "f32", 4, 4),
    ("double", "f64", 8, 8),
    ("__half", "f16", 2, 2),
    ("__nv_bfloat16", "bf16", 2, 2),
    ("__half2", "f16x2", 4, 4),
    ("__nv_bfloat162", "bf16x2", 4, 4),
    ("__nv_fp8_e4m3", "f8e4m3", 1, 1),
    ("__nv_fp8_e5m2", "f8e5m2", 1, 1),
    ("char2", "i8x2", 2, 2),
    ("uchar2", "u8x2", 2, 2),
    ("char4", "i8x4", 4, 4),
    ("uchar4", "u8x4", 4, 4),
    ("short2", "i16x2", 4, 4),
    ("ushort2", "u16x2", 4, 4),
    ("short4", "i16x4", 8, 8),
    ("ushort4", "u16x4", 8, 8),
    ("int2", "i32x2", 8, 8),
    ("uint2", "u32x2", 8, 8),
    ("int3", "i32x3", 12, 4),
    ("uint3", "u32x3", 12, 4),
    ("int4", "i32x4", 16, 16),
    ("uint4", "u32x4", 16, 16),
    ("float2", "f32x2", 8, 8),
    ("float3", "f32x3", 12, 4),
    ("float4", "f32x4", 16, 16),
    ("long2", "i64x2", 16, 16),
    ("ulong2", "u64x2", 16, 16),
    ("longlong2", "i64x2", 16, 16),
    ("ulonglong2", "u64x2", 16, 16),
    ("double2", "f64x2", 16, 16),
];

/// The Rust type of the C++ value type `cpp` (`int` → `i32`, `float4` → `f32x4`); `None` for a
/// type whose layout is not fixed by its name (a struct, `void`).
pub(crate) fn rust_value(cpp: &str) -> Option<&'static str> {
    VALUES.iter().find(|(c, ..)| *c == cpp.trim()).map(|(_, rust, ..)| *rust)
}

/// The kind of a parameter type as the demangler writes it (`float const*`, `unsigned long`).
pub(crate) fn kind(ty: &str) -> Kind {
    let ty = ty.trim();
    if let Some(pointee) = ty.strip_suffix('*').map(str::trim_end) {
        let (pointee, mutable) = match pointee.strip_suffix(" const") {
            Some(p) => (p.trim_end(), false),
            None => match pointee.strip_prefix("const ") {
                Some(p) => (p.trim_start(), false),
                None => (pointee, true),
            },
        };
        return Kind::Pointer { pointee: pointee.to_string(), mutable };
    }
    match VALUES.iter().find(|(c, ..)| *c == ty) {
        Some((_, rust, ..)) => Kind::Value(rust),
        None => Kind::Opaque,
    }
}

/// The size and alignment a parameter of kind `k` (C++ type `ty`) has; `None` for an opaque one.
fn layout(ty: &str, k: &Kind) -> Option<(u32, u32)> {
    match k {
        Kind::Pointer { .. } => Some((8, 8)),
        Kind::Value(_) => VALUES.iter().find(|(c, ..)| *c == ty.trim()).map(|(_, _, s, a)| (*s, *a)),
        Kind::Opaque => None,
    }
}

/// One parameter, recovered and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Param {
    /// The C++ type as the compiler names it (`float const*`).
    pub ty: String,
    pub kind: Kind,
    /// Bytes, from the PTX.
    pub size: u32,
    /// Alignment, from the PTX.
    pub align: u32,
}

/// Why a recovered parameter list disagrees with the PTX.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mismatch {
    /// The PTX has another number of parameters.
    Count { types: usize, ptx: usize },
    /// A parameter's size or alignment is not the PTX's.
    Layout { index: usize, ty: String, expected: (u32, u32), ptx: (u32, u32) },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Count { types, ptx } => {
                write!(f, "the compiler's type names {types} parameters, the PTX declares {ptx}")
            }
            Mismatch::Layout { index, ty, expected, ptx } => write!(
                f,
                "parameter {index} (`{ty}`) is {} bytes aligned to {}, the PTX declares {} bytes aligned to {}",
                expected.0, expected.1, ptx.0, ptx.1
            ),
        }
    }
}

/// The parameters `types` (the compiler's names) held to the PTX's `.param` list.
pub(crate) fn check(types: &[String], ptx: &[PtxParam]) -> Result<Vec<Param>, Mismatch> {
    if types.len() != ptx.len() {
        return Err(Mismatch::Count { types: types.len(), ptx: ptx.len() });
    }
    let mut out = Vec::with_capacity(types.len());
    for (index, (ty, p)) in types.iter().zip(ptx).enumerate() {
        let k = kind(ty);
        if let Some(expected) = layout(ty, &k) {
            if (p.size, p.align) != expected {
                return Err(Mismatch::Layout { index, ty: ty.clone(), expected, ptx: (p.size, p.align) });
            }
        }
        out.push(Param { ty: ty.clone(), kind: k, size: p.size, align: p.align });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

//! The typed half of the generated statics: each kernel's parameter list as `launch::Param`
//! data, and, where every parameter has a Rust type, its `launch::Signature` (see
//! `launch::signature` for the mapping the launch side checks).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use launch::signature::MAX_PARAMS;
use launch_schema::manifest::{KernelEntry, Manifest, Param, ParamKind};

/// The primitive Rust types a value parameter can have; the others are `launch::types`'.
const PRIMITIVES: [&str; 11] = ["bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"];

/// The Rust path of a value type the build names (`i32`, `f32x4`).
fn value_path(rust: &str) -> String {
    if PRIMITIVES.contains(&rust) {
        rust.to_string()
    } else {
        format!("::launch::types::{rust}")
    }
}

/// The Rust type of C++ type `cpp` where it is a value type: the fixed ones, or a struct the
/// crate names in `[package.metadata.launch.types]`.
fn named(cpp: &str, types: &BTreeMap<String, String>) -> Option<String> {
    match crate::signature::rust_value(cpp) {
        Some(rust) => Some(value_path(rust)),
        None => types.get(cpp.trim()).cloned(),
    }
}

/// The `launch::Signature` type of one parameter: `*const f32`, `i32`, `crate::Params`;
/// `None` where it has none (the kernel stays untyped).
fn signature_type(p: &Param, types: &BTreeMap<String, String>) -> Option<String> {
    match &p.kind {
        ParamKind::Pointer { pointee, mutable } => {
            let qualifier = if *mutable { "*mut" } else { "*const" };
            let target = if pointee.trim() == "void" {
                Some("::launch::types::Void".to_string())
            } else {
                named(pointee, types)
            };
            target.map(|t| format!("{qualifier} {t}"))
        }
        ParamKind::Value { rust } => Some(value_path(rust)),
        // A struct by value: the crate's Rust type for it, else its bytes (size and alignment).
        ParamKind::Opaque => types.get(p.ty.trim()).cloned().or_else(|| opaque(p)),
    }
}

/// `launch::types::Opaque<AlignA, N>` for an unnamed struct of `N` bytes aligned to `A` (a power
/// of two up to 256, as `launch::types` has them).
fn opaque(p: &Param) -> Option<String> {
    (p.align.is_power_of_two() && p.align <= 256 && p.size.is_multiple_of(p.align))
        .then(|| format!("::launch::types::Opaque<::launch::types::Align{}, {}>", p.align, p.size))
}

/// The Rust types of all of `k`'s parameters, or why it is launched untyped.
pub(super) fn signature(k: &KernelEntry, types: &BTreeMap<String, String>) -> Result<Vec<String>, String> {
    let Some(params) = &k.params else {
        // A documentation build (docs.rs) compiles nothing: its statics are typed all the same,
        // so code that launches them builds there (`launch::signature::Uncompiled`).
        if k.params_unknown.as_deref() == Some(crate::assemble::UNCOMPILED) {
            return Ok(Vec::new());
        }
        return Err(k.params_unknown.clone().unwrap_or_else(|| "its parameters were not recovered".into()));
    };
    if params.len() > MAX_PARAMS {
        return Err(format!("{} parameters; a typed launch takes at most {MAX_PARAMS}", params.len()));
    }
    params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            signature_type(p, types).ok_or_else(|| {
                format!(
                    "parameter {i} (`{}`) has no Rust type: name one for `{}` in [package.metadata.launch.types]",
                    p.ty,
                    match &p.kind {
                        ParamKind::Pointer { pointee, .. } => pointee,
                        _ => &p.ty,
                    }
                )
            })
        })
        .collect()
}

/// `Some(&[::launch::Param { .. }, ..])`, or `None`.
pub(super) fn params_expr(params: Option<&[Param]>) -> String {
    let Some(params) = params else { return "None".into() };
    let mut s = String::from("Some(&[");
    for p in params {
        let kind = match &p.kind {
            ParamKind::Pointer { pointee, mutable } => format!(
                "::launch::ParamKind::Pointer {{ pointee: ::std::borrow::Cow::Borrowed({pointee:?}), mutable: {mutable} }}"
            ),
            ParamKind::Value { rust } => {
                format!("::launch::ParamKind::Value {{ rust: ::std::borrow::Cow::Borrowed({rust:?}) }}")
            }
            ParamKind::Opaque => "::launch::ParamKind::Opaque".into(),
        };
        let _ = write!(
            s,
            "::launch::Param {{ ty: ::std::borrow::Cow::Borrowed({:?}), kind: {kind}, size: {}, align: {} }}, ",
            p.ty, p.size, p.align
        );
    }
    s.push_str("])");
    s
}

/// `k`'s `Typed` static, its signature type and impl; returns the name of the `Kernel` static
/// the generator writes next (the `Typed` one has the kernel's Rust name).
pub(super) fn emit_typed(s: &mut String, inner: &str, k: &KernelEntry, types: &[String]) -> String {
    let name = &k.rust_name;
    let _ = writeln!(
        s,
        "{inner}// SAFETY: `{name}` is the kernel's signature, recovered from the compiler and held to its PTX.\n\
         {inner}pub static {name}: ::launch::Typed<{name}> = unsafe {{ ::launch::Typed::new(&{name}{KERNEL_SUFFIX}) }};"
    );
    emit_signature(s, inner, name, k, types);
    let _ = writeln!(s, "{inner}/// [`{name}`](static@{name})'s kernel.\n{inner}#[doc(hidden)]");
    format!("{name}{KERNEL_SUFFIX}")
}

/// What a typed kernel's plain `::launch::Kernel` static is named after its `Typed` one.
pub(super) const KERNEL_SUFFIX: &str = "__KERNEL";

/// The signature type and its `launch::Signature` impl for the kernel whose static is `name`.
fn emit_signature(s: &mut String, indent: &str, name: &str, k: &KernelEntry, types: &[String]) {
    let cpp: Vec<&str> = k.params.iter().flatten().map(|p| p.ty.as_ref()).collect();
    let _ = writeln!(
        s,
        "{indent}/// The parameters of [`{name}`](static@{name}): `({})` in C++, `({})` as Rust types.\n\
         {indent}#[allow(non_camel_case_types)]\n{indent}pub enum {name} {{}}",
        cpp.join(", "),
        types.join(", ")
    );
    let tuple: String = types.iter().map(|t| format!("{t}, ")).collect();
    let params = match k.params {
        Some(_) => format!("({})", tuple.trim_end()),
        None => "::launch::signature::Uncompiled".into(),
    };
    let _ = writeln!(
        s,
        "{indent}impl ::launch::Signature for {name} {{\n{indent}    type Params = {params};\n{indent}    const KERNEL: &'static str = {:?};\n{indent}}}",
        k.name
    );
}

/// One compile-time assertion per value type the typed statics pass by value: its size and
/// alignment are the PTX's, so a `[package.metadata.launch.types]` struct of another layout (or
/// a vector type of the wrong one) does not compile. `sigs` are [`signature`]'s, per kernel: an
/// untyped kernel's parameters are passed as bytes, and nothing is asserted of them.
pub(super) fn layout_assertions(m: &Manifest, sigs: &[Result<Vec<String>, String>]) -> String {
    let mut seen: BTreeSet<(String, u32, u32, String)> = BTreeSet::new();
    for (k, sig) in m.kernels.iter().zip(sigs) {
        if sig.is_err() {
            continue;
        }
        for p in k.params.iter().flatten() {
            let rust = match &p.kind {
                // A primitive's layout is Rust's own: nothing to assert.
                ParamKind::Value { rust } if PRIMITIVES.contains(&rust.as_ref()) => continue,
                ParamKind::Value { rust } => value_path(rust),
                ParamKind::Opaque => match m.types.get(p.ty.trim()) {
                    Some(t) => t.clone(),
                    None => continue,
                },
                ParamKind::Pointer { .. } => continue,
            };
            seen.insert((rust, p.size, p.align, p.ty.to_string()));
        }
    }
    let mut s = String::new();
    for (rust, size, align, cpp) in seen {
        let message = format!(
            "`{rust}` is passed for the C++ `{cpp}`, which the PTX declares as {size} bytes aligned to {align}: give it \
             that layout (#[repr(C)], the same fields in the same order)"
        );
        let _ = writeln!(
            s,
            "const _: () = assert!(\n    ::core::mem::size_of::<{rust}>() == {size} && ::core::mem::align_of::<{rust}>() == {align},\n    {message:?}\n);"
        );
    }
    s
}

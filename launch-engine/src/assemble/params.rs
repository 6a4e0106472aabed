//! A kernel's parameters from its file's outputs (see [`crate::signature`]): the types from its
//! mangled symbol, or from the lowered name of its probe (the lowest arch that probed it) or of its
//! host stub (a `host` file), held to the PTX's `.param` list of every arch that has the kernel.

use std::collections::HashMap;

use launch::Arch;
use launch_schema::manifest::{Param, ParamKind};

use crate::compile::FileOutputs;
use crate::elf::KernelParam;
use crate::names::demangle;
use crate::signature::{self, Kind, PtxParam};

/// Every arch's `.param` lists of a file's PTX and parameter tables of its cubin, read once
/// (lowest arch first).
pub(super) struct PtxLists<'a> {
    ptx: Vec<(Arch, HashMap<&'a str, Vec<PtxParam>>)>,
    cubins: Vec<(Arch, HashMap<&'a str, Vec<KernelParam>>)>,
}

impl<'a> PtxLists<'a> {
    pub(super) fn of(f: &'a FileOutputs) -> PtxLists<'a> {
        PtxLists {
            ptx: f.outputs.iter().map(|(arch, out)| (*arch, signature::ptx_params_of_all(&out.ptx))).collect(),
            cubins: f.outputs.iter().map(|(arch, out)| (*arch, crate::elf::kernel_params(&out.cubin))).collect(),
        }
    }
}

/// What the outputs say about `name`'s parameters.
pub(super) enum Recovered {
    /// Recovered, and every arch's PTX agrees.
    Params(Vec<Param>),
    /// Not recoverable: why.
    Unknown(String),
    /// Recovered, but an arch's PTX disagrees (a build error): how.
    Mismatch(String),
}

pub(super) fn recover(f: &FileOutputs, lists: &PtxLists<'_>, name: &str) -> Recovered {
    let in_ptx: Vec<_> = f
        .outputs
        .iter()
        .zip(&lists.ptx)
        .filter_map(|((arch, out), (_, by_name))| by_name.get(name).map(|p| (*arch, out, p)))
        .collect();
    if in_ptx.is_empty() {
        return Recovered::Unknown("the kernel is in no PTX of its file".into());
    }
    let types = if name.starts_with("_Z") {
        signature::demangled_params(&demangle(name)).ok_or("its mangled name does not demangle to a parameter list")
    } else {
        // NVRTC's probe (`__launch_probe<void (…)>`), or for a `host` file nvcc's host stub
        // (`__device_stub__k(…)`), whose own parameter list is the kernel's; from the lowest
        // arch whose job probed the kernel.
        let probe = in_ptx.iter().find_map(|(_, out, _)| out.probes.iter().find(|(k, _)| k == name));
        match probe {
            Some((_, Some(lowered))) => {
                let d = demangle(lowered);
                if d.contains("__launch_probe<") {
                    signature::probe_params(&d)
                } else {
                    signature::demangled_params(&d)
                }
                .ok_or("its signature probe's name does not demangle to a function type")
            }
            Some((_, None)) if f.file.host => Err("its host object holds no stub for it"),
            Some((_, None)) => Err("its signature probe did not compile (a kernel in a namespace?)"),
            None if in_ptx.len() < f.outputs.len() => {
                Err("no signature probe ran for it: the file's lowest arch leaves it out, under an arch guard that is \
                 not in the file itself (in a header)")
            }
            None => Err("no signature probe ran for it"),
        }
    };
    let types = match types {
        Ok(t) => t,
        Err(why) => return Recovered::Unknown(why.into()),
    };
    let mut first: Option<Vec<signature::Param>> = None;
    for (arch, _, ptx) in &in_ptx {
        match signature::check(&types, ptx) {
            Ok(p) => match &first {
                None => first = Some(p),
                Some(f) if *f != p => {
                    return Recovered::Mismatch(format!("its parameters on {arch} differ from the lowest arch's"))
                }
                Some(_) => {}
            },
            Err(m) => return Recovered::Mismatch(format!("{m} (PTX for {arch})")),
        }
    }
    let params: Vec<Param> = first.unwrap_or_default().into_iter().map(to_document).collect();
    // The assembler's own table in each cubin (what the driver answers `cuFuncGetParamInfo`
    // from): the same offsets and sizes.
    for (arch, tables) in &lists.cubins {
        if let Some(table) = tables.get(name) {
            if let Some(how) = cubin_differs(&params, table) {
                return Recovered::Mismatch(format!("{how} (the cubin for {arch})"));
            }
        }
    }
    Recovered::Params(params)
}

/// How a cubin's parameter table differs from `params`, if it does.
fn cubin_differs(params: &[Param], table: &[KernelParam]) -> Option<String> {
    if table.len() != params.len() {
        return Some(format!(
            "the assembler's table has {} parameters, the compiler's type names {}",
            table.len(),
            params.len()
        ));
    }
    let laid_out: Vec<(u32, u32)> = table.iter().map(|t| (t.offset as u32, t.size as u32)).collect();
    if table.iter().enumerate().all(|(i, t)| t.ordinal == i) && launch::signature::same_layout(params, &laid_out) {
        return None;
    }
    // Named against C's layout from an aligned start, the first place it differs.
    for (i, ((offset, size), t)) in launch::signature::offsets(params).zip(table).enumerate() {
        if (t.ordinal, t.offset, t.size) != (i, offset as usize, size as usize) {
            return Some(format!(
                "parameter {i} (`{}`) is {} bytes at offset {} in the assembler's table, {size} bytes at offset {offset} by \
                 its type",
                params[i].ty, t.size, t.offset
            ));
        }
    }
    None
}

fn to_document(p: signature::Param) -> Param {
    let kind = match p.kind {
        Kind::Pointer { pointee, mutable } => ParamKind::Pointer { pointee: pointee.into(), mutable },
        Kind::Value(rust) => ParamKind::Value { rust: (*rust).into() },
        Kind::Opaque => ParamKind::Opaque,
    };
    Param { ty: p.ty.into(), kind, size: p.size, align: p.align }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(ty: &str, size: u32, align: u32) -> Param {
        Param { ty: ty.to_string().into(), kind: ParamKind::Opaque, size, align }
    }

    fn t(ordinal: usize, offset: usize, size: usize) -> KernelParam {
        KernelParam { ordinal, offset, size }
    }

    /// The assembler's table agrees when it has the C offsets and sizes of the recovered types
    /// (a struct's tail padding counted, as ptxas writes it); another count, offset or size is
    /// named with both sides.
    #[test]
    fn the_cubins_table_is_held_to_the_recovered_types() {
        let params = [p("double*", 8, 8), p("char", 1, 1), p("Pad", 16, 8), p("int", 4, 4)];
        assert_eq!(cubin_differs(&params, &[t(0, 0, 8), t(1, 8, 1), t(2, 16, 16), t(3, 32, 4)]), None);
        let short = cubin_differs(&params, &[t(0, 0, 8)]).unwrap();
        assert_eq!(short, "the assembler's table has 1 parameters, the compiler's type names 4");
        // Shifted as a whole by an unaligned start of the parameters: the same layout.
        let ps = [p("CUtensorMap", 128, 64), p("int", 4, 4)];
        assert_eq!(cubin_differs(&ps, &[t(0, 32, 128), t(1, 160, 4)]), None);
        let moved = cubin_differs(&params, &[t(0, 0, 8), t(1, 8, 1), t(2, 12, 16), t(3, 32, 4)]).unwrap();
        assert_eq!(
            moved,
            "parameter 2 (`Pad`) is 16 bytes at offset 12 in the assembler's table, 16 bytes at offset 16 by its type"
        );
    }
}

//! nvcc's device link of the `host` files compiled with `-rdc=true` (separable compilation, as
//! bitsandbytes builds): one `nvcc -dlink` over their objects, for every arch they have. Its
//! object goes into the crate's library beside theirs; without it a program calling their
//! launchers would not link (a file's kernels may call device functions another file defines).
//!
//! The link decides what the program's kernels are, so its results replace the compile's: each
//! such file's cubin becomes the linked cubin of its arch (the one the driver loads: a relocatable
//! cubin cannot be loaded alone), and a kernel's numbers become nvlink's where its `-v` lines give
//! them (a kernel calling another file's function gets that function's registers, stack and shared
//! memory only here: the compile's ptxas saw a call). A kernel the link leaves out (nvlink keeps
//! only kernels that host code references) is in no linked cubin, so it has no record there.

use std::collections::BTreeMap;
use std::path::Path;

use launch::Arch;

use crate::cargo_directives;
use crate::compile::host::nvcc::kept;
use crate::compile::{sanitize, work_file, Compiled};
use crate::error::Error;
use crate::process::Tool;

/// The nvcc option that makes a `host` file's device code relocatable.
pub const RDC: &str = "-rdc=true";

/// The name the device link's object has among the library's objects.
pub const OBJECT: &str = "device-link";

/// One kernel's numbers as nvlink prints them (`used 44 registers, used 1 barriers, 264 stack,
/// 2048 bytes smem, 540 bytes cmem[0], 0 bytes lmem`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Linked {
    /// `used N registers`.
    pub registers: u32,
    /// `used N barriers`.
    pub barriers: u32,
    /// `N stack`: the kernel's stack with its callees'.
    pub stack: u32,
    /// `N bytes smem`.
    pub smem: u32,
    /// `N bytes cmem[0]`.
    pub cmem0: Option<u32>,
    /// The two lines, verbatim.
    pub lines: Vec<String>,
}

/// Runs the device link when some `host` file was compiled with `-rdc=true`; nothing otherwise.
///
/// # Errors
/// nvcc failing or not writing a linked cubin for an arch.
pub fn run(compiled: &mut Compiled) -> Result<(), Error> {
    if compiled.host_tools.is_none() {
        return Ok(());
    }
    let rdc: Vec<usize> = (0..compiled.files.len())
        .filter(|&i| {
            let f = compiled.files[i].file;
            f.host && f.settings.nvcc_flags.iter().any(|o| o == RDC)
        })
        .collect();
    if rdc.is_empty() {
        return Ok(());
    }
    let mut arches: Vec<Arch> = rdc.iter().flat_map(|&i| compiled.files[i].outputs.iter().map(|(a, _)| *a)).collect();
    arches.sort();
    arches.dedup();
    let names: Vec<&str> = rdc.iter().map(|&i| compiled.files[i].file.source.file.as_str()).collect();
    let keep = compiled.compiler.work_dir().join(format!("device-link.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&keep);
    std::fs::create_dir_all(&keep).map_err(Error::io("create folder", &keep))?;
    let result = link(compiled, &names, &arches, &keep);
    let _ = std::fs::remove_dir_all(&keep);
    // `link`'s errors already name every file of the link.
    let (object, cubins, linked) = result?;
    for &i in &rdc {
        for (arch, out) in &mut compiled.files[i].outputs {
            let Some(cubin) = cubins.get(arch) else { continue };
            out.cubin.clone_from(cubin);
            let present = crate::elf::code_names(cubin);
            out.report.entries.retain(|e| present.contains(&e.name));
            for e in &mut out.report.entries {
                if let Some(l) = linked.get(&(*arch, e.name.clone())) {
                    apply(&mut e.resources, l, *arch);
                    e.lines.extend(l.lines.iter().cloned());
                }
            }
        }
    }
    compiled.objects.push(crate::compile::host::HostObject { file: OBJECT.to_string(), object });
    Ok(())
}

/// What one device link gave: its object, the linked cubin per arch, nvlink's numbers by arch and
/// kernel.
type LinkOutput = (Vec<u8>, BTreeMap<Arch, Vec<u8>>, BTreeMap<(Arch, String), Linked>);

/// `nvcc -dlink` over the objects of `files`, for `arches`, with its files kept in `keep`.
fn link(compiled: &Compiled, files: &[&str], arches: &[Arch], keep: &Path) -> Result<LinkOutput, Error> {
    let tools = compiled.host_tools.as_ref().expect("checked by run");
    let what = files.join(", ");
    let mut inputs = Vec::new();
    for (n, name) in files.iter().enumerate() {
        let o = compiled.objects.iter().find(|o| o.file == *name).expect("every host file has its object");
        let path = keep.join(format!("{n}.{}.o", sanitize(name)));
        std::fs::write(&path, &o.object).map_err(Error::io("write", &path))?;
        inputs.push(path);
    }
    let output = keep.join(format!("{OBJECT}.o"));
    let mut tool = Tool::new(&tools.nvcc);
    if let Some(ccbin) = &tools.ccbin {
        tool = tool.arg(format!("-ccbin={}", ccbin.display()));
    }
    tool = tool.arg("-dlink").arg("--keep").arg("--keep-dir").arg(keep).arg("-Xnvlink").arg("-v");
    tool = tool.arg("-Xcompiler").arg("-fPIC");
    for a in arches {
        tool = tool.arg("-gencode").arg(format!("arch={},code={a}", a.virtual_name()));
    }
    let tool = tool.args(&inputs).arg("-o").arg(&output).timeout(compiled.compiler.timeout());
    if compiled.compiler.debug() {
        cargo_directives::launch_build_warning(&tool.to_string());
    }
    let arch_list = arches.iter().map(Arch::to_string).collect::<Vec<_>>().join(", ");
    let (status, out) = tool
        .run_unchecked()
        .map_err(|e| crate::compile::for_job(e, &format!("{} (device link)", tools.nvcc_name), &what, &arch_list))?;
    let text = format!("{}{}", out.stdout, out.stderr);
    if !status.success() {
        let root = format!("{}/", compiled.compiler.root().display());
        let log = text.replace(&root, "").replace(&format!("{}/", keep.display()), "");
        return Err(Error::Compile {
            compiler: format!("{} (device link)", tools.nvcc_name),
            file: what,
            arch: arch_list,
            log,
        });
    }
    let object = std::fs::read(&output).map_err(work_file("read nvcc output", &output, &what))?;
    let mut cubins = BTreeMap::new();
    for a in arches {
        let path = kept(keep, &a.virtual_name(), "cubin", arches.len() == 1, &what)?;
        let bytes = std::fs::read(&path).map_err(work_file("read nvcc output", &path, &what))?;
        cubins.insert(*a, bytes);
    }
    Ok((object, cubins, parse(&text, arches)))
}

/// nvlink's `-v` lines by arch and kernel. A line names its arch as `(target: sm_90)`; a link of
/// one arch names none.
pub fn parse(text: &str, arches: &[Arch]) -> BTreeMap<(Arch, String), Linked> {
    let mut out = BTreeMap::new();
    let mut current: Option<(Arch, String, String)> = None;
    for line in text.lines() {
        let Some(info) = line.strip_prefix("nvlink info").and_then(|l| l.split_once(": ")).map(|(_, t)| t) else {
            continue;
        };
        let (body, target) = match info.rsplit_once(" (target: ") {
            Some((b, t)) => (b, t.strip_suffix(')').and_then(|t| arches.iter().find(|a| a.to_string() == t).copied())),
            None => (info, (arches.len() == 1).then(|| arches[0])),
        };
        if let Some(name) = body.strip_prefix("Function properties for '").and_then(|n| n.strip_suffix("':")) {
            current = target.map(|a| (a, name.to_string(), line.to_string()));
        } else if let (Some(rest), Some((arch, name, first))) = (body.strip_prefix("used "), current.take()) {
            if let Some(mut l) = numbers(rest) {
                l.lines = vec![first, line.to_string()];
                out.insert((arch, name), l);
            }
        }
    }
    out
}

/// The fields of nvlink's `used …` line (after `used `).
fn numbers(rest: &str) -> Option<Linked> {
    let mut l = Linked::default();
    for field in format!("used {rest}").split(", ") {
        let (n, what) = field.strip_prefix("used ").unwrap_or(field).split_once(' ')?;
        let n: u32 = n.parse().ok()?;
        match what {
            "registers" | "register" => l.registers = n,
            "barriers" | "barrier" => l.barriers = n,
            "stack" => l.stack = n,
            "bytes smem" => l.smem = n,
            "bytes cmem[0]" => l.cmem0 = Some(n),
            _ => {}
        }
    }
    Some(l)
}

/// The shared memory nvlink counts in a kernel's `smem` on sm_90 and later beyond what the driver
/// reports as `SHARED_SIZE_BYTES` (and ptxas as `bytes smem`): the cubins' reserved kilobyte. On an
/// H100 (driver 580), nvlink's 2048 bytes were the driver's 1024 for each of three kernels, the
/// `.nv.shared.<kernel>` section 2048 in linked and whole-program cubins alike
/// (`tools/gpu/results-2026-12-05-rdc`); on sm_80 nvlink's number is the section's, 1024.
const RESERVED_SMEM: u32 = 1024;

/// A kernel's numbers after the link, as the driver reports them. cmem[0] stays as ptxas reports
/// it (only below sm_90).
fn apply(r: &mut launch::Resources, l: &Linked, arch: Arch) {
    r.registers = l.registers;
    r.barriers = l.barriers;
    r.stack_frame = l.stack;
    r.shared_static = match arch.sm() >= 90 {
        true => l.smem.saturating_sub(RESERVED_SMEM),
        false => l.smem,
    };
    if r.cmem0.is_some() {
        r.cmem0 = l.cmem0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arch(s: &str) -> Arch {
        s.parse().unwrap()
    }

    /// nvlink 13.0's lines, of a two-arch link and of a one-arch link (no target named).
    /// On sm_90 nvlink's `smem` holds the reserved kilobyte the driver leaves out (measured on an
    /// H100: nvlink 2048, driver 1024); on sm_80 it does not.
    #[test]
    fn shared_memory_is_the_drivers_on_every_arch() {
        let l = Linked { smem: 2048, ..Linked::default() };
        let mut r = launch::Resources::default();
        apply(&mut r, &l, arch("sm_90"));
        assert_eq!(r.shared_static, 1024);
        apply(&mut r, &Linked { smem: 1024, ..Linked::default() }, arch("sm_80"));
        assert_eq!(r.shared_static, 1024);
        apply(&mut r, &Linked::default(), arch("sm_90"));
        assert_eq!(r.shared_static, 0);
    }

    #[test]
    fn nvlink_lines_give_each_kernel_its_linked_numbers() {
        let two = "nvlink info    : 0 bytes gmem (target: sm_80)\n\
nvlink info    : Function properties for '_Z2kaPf': (target: sm_80)\n\
nvlink info    : used 24 registers, used 0 barriers, 0 stack, 0 bytes smem, 360 bytes cmem[0], 0 bytes lmem (target: sm_80)\n\
nvlink info    : Function properties for '_Z2kcPfi': (target: sm_90)\n\
nvlink info    : used 44 registers, used 1 barriers, 264 stack, 2048 bytes smem, 540 bytes cmem[0], 0 bytes lmem (target: sm_90)\n";
        let got = parse(two, &[arch("sm_80"), arch("sm_90")]);
        assert_eq!(got.len(), 2);
        let k = &got[&(arch("sm_90"), "_Z2kcPfi".to_string())];
        assert_eq!((k.registers, k.barriers, k.stack, k.smem, k.cmem0), (44, 1, 264, 2048, Some(540)));
        assert_eq!(got[&(arch("sm_80"), "_Z2kaPf".to_string())].registers, 24);
        let one = "nvlink info    : Function properties for '_Z2kcPfi':\n\
nvlink info    : used 44 registers, used 1 barriers, 264 stack, 2048 bytes smem, 540 bytes cmem[0], 0 bytes lmem\n";
        let got = parse(one, &[arch("sm_90")]);
        assert_eq!(got[&(arch("sm_90"), "_Z2kcPfi".to_string())].stack, 264);
        // A line of an arch the link did not have, or an unreadable number, gives nothing.
        assert!(parse(&two.replace("sm_90", "sm_75"), &[arch("sm_80")]).len() == 1);
        assert!(parse(&one.replace("44 registers", "x registers"), &[arch("sm_90")]).is_empty());
    }
}

//! The sections of a 64-bit little-endian ELF file (what nvcc's host compiler writes on Linux, and
//! every cubin), for the two facts read from them: a host object's symbol names (`compile::host`)
//! and a cubin's parameter table (`.nv.info.<kernel>`, [`kernel_params`]). Bounds-checked: a
//! damaged file gives fewer sections, never a panic.

use std::collections::HashMap;

/// One section.
pub(crate) struct Section<'a> {
    /// Its name (from the section-header string table; empty where that does not read).
    pub name: &'a str,
    /// `sh_type` (2: a symbol table).
    pub kind: u32,
    /// Its bytes.
    pub data: &'a [u8],
    /// `sh_link` (a symbol table's string table).
    pub link: usize,
    /// `sh_entsize`.
    pub entsize: usize,
}

fn u16_at(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at.checked_add(2)?).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
}

fn u32_at(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at.checked_add(4)?).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
}

fn u64_at(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at.checked_add(8)?).and_then(|b| usize::try_from(u64::from_le_bytes(b.try_into().expect("8 bytes"))).ok())
}

/// The NUL-terminated string at `at` in `table`.
pub(crate) fn string_at(table: &[u8], at: usize) -> Option<&str> {
    let tail = table.get(at..)?;
    let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
    std::str::from_utf8(&tail[..end]).ok()
}

/// Every section of `object`, in header order; empty for anything that is not an ELF64 LE file.
pub(crate) fn sections(object: &[u8]) -> Vec<Section<'_>> {
    // ELF magic, 64-bit, little endian.
    if object.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
        return Vec::new();
    }
    let (Some(shoff), Some(shentsize), Some(shnum)) =
        (u64_at(object, 0x28), u16_at(object, 0x3a), u16_at(object, 0x3c))
    else {
        return Vec::new();
    };
    let header = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    let data = |h: usize| {
        let (offset, size) = (u64_at(object, h + 0x18)?, u64_at(object, h + 0x20)?);
        object.get(offset..offset.checked_add(size)?)
    };
    let names = u16_at(object, 0x3e).and_then(header).and_then(data).unwrap_or_default();
    (0..shnum)
        .map_while(header)
        .filter_map(|h| {
            Some(Section {
                name: u32_at(object, h).and_then(|at| string_at(names, at)).unwrap_or_default(),
                kind: u32_at(object, h + 4)? as u32,
                // A section without bytes in the file (`.bss`, SHT_NOBITS) reads as empty.
                data: data(h).unwrap_or_default(),
                link: u32_at(object, h + 0x28)?,
                entsize: u64_at(object, h + 0x38)?,
            })
        })
        .collect()
}

/// One parameter as a cubin's `EIATTR_KPARAM_INFO` records it: its ordinal, offset and size in
/// bytes (what `cuobjdump --dump-elf` prints and the driver answers from).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelParam {
    pub ordinal: usize,
    pub offset: usize,
    pub size: usize,
}

/// `EIATTR_KPARAM_INFO`, the attribute of `.nv.info.<kernel>` that describes one parameter.
const KPARAM_INFO: u8 = 0x17;
/// `EIFMT_SVAL`: an attribute whose header's last two bytes are the size of the payload after it.
const SVAL: u8 = 0x04;

/// Each kernel's parameters in `cubin` (by its symbol, ordinal order), from the
/// `.nv.info.<kernel>` sections. Every record has a 4-byte header (format, attribute, a 16-bit
/// value, which for `EIFMT_SVAL` is the size of the payload that follows); a parameter's payload
/// is its index (u32), ordinal (u16), offset (u16) and a word whose bits 18–31 are its size.
pub(crate) fn kernel_params(cubin: &[u8]) -> HashMap<&str, Vec<KernelParam>> {
    let mut out = HashMap::new();
    for s in sections(cubin) {
        let Some(kernel) = s.name.strip_prefix(".nv.info.") else { continue };
        let mut params = Vec::new();
        let mut at = 0usize;
        while let (Some(&format), Some(&attribute), Some(value)) =
            (s.data.get(at), s.data.get(at + 1), u16_at(s.data, at + 2))
        {
            let payload = at + 4;
            at = payload + if format == SVAL { value } else { 0 };
            if format == SVAL && attribute == KPARAM_INFO && value >= 12 {
                let (Some(ordinal), Some(offset), Some(word)) =
                    (u16_at(s.data, payload + 4), u16_at(s.data, payload + 6), u32_at(s.data, payload + 8))
                else {
                    break;
                };
                params.push(KernelParam { ordinal, offset, size: (word >> 18) & 0x3fff });
            }
        }
        params.sort_by_key(|p| p.ordinal);
        out.insert(kernel, params);
    }
    out
}

/// The functions `cubin` holds code for (its `.text.<name>` sections): kernels and the device
/// functions they call.
pub(crate) fn code_names(cubin: &[u8]) -> std::collections::BTreeSet<String> {
    sections(cubin).iter().filter_map(|s| s.name.strip_prefix(".text.")).map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 LE file: a null section, then `(name, kind, bytes)` each, then the
    /// section-header string table.
    pub(crate) fn elf(sections: &[(&str, u32, Vec<u8>)]) -> Vec<u8> {
        let mut names = vec![0u8];
        let mut name_at = Vec::new();
        for (n, ..) in sections.iter().chain([&(".shstrtab", 3, Vec::new())]) {
            name_at.push(names.len() as u32);
            names.extend_from_slice(n.as_bytes());
            names.push(0);
        }
        let mut file = vec![0u8; 64];
        file[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let mut places = Vec::new();
        for (_, _, bytes) in sections {
            places.push((file.len(), bytes.len()));
            file.extend_from_slice(bytes);
        }
        places.push((file.len(), names.len()));
        file.extend_from_slice(&names);
        let shoff = file.len();
        file.extend_from_slice(&[0u8; 64]);
        let kinds: Vec<u32> = sections.iter().map(|s| s.1).chain([3]).collect();
        for (i, (offset, size)) in places.iter().enumerate() {
            let mut h = [0u8; 64];
            h[..4].copy_from_slice(&name_at[i].to_le_bytes());
            h[4..8].copy_from_slice(&kinds[i].to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(*offset as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(*size as u64).to_le_bytes());
            file.extend_from_slice(&h);
        }
        file[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        file[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        file[0x3c..0x3e].copy_from_slice(&((sections.len() + 2) as u16).to_le_bytes());
        file[0x3e..0x40].copy_from_slice(&((sections.len() + 1) as u16).to_le_bytes());
        file
    }

    fn kparam(ordinal: u16, offset: u16, size: u32) -> Vec<u8> {
        let mut r = vec![SVAL, KPARAM_INFO, 12, 0];
        r.extend_from_slice(&0u32.to_le_bytes());
        r.extend_from_slice(&ordinal.to_le_bytes());
        r.extend_from_slice(&offset.to_le_bytes());
        // cbank 0x1f (bits 12–16) as ptxas writes it, the size above it.
        r.extend_from_slice(&((size << 18) | 0x1f000).to_le_bytes());
        r
    }

    /// The records as ptxas writes them for `structs(double*, char, Pad, geo::Affine, int)` of
    /// fixtures/crates/typed_gpu (cuobjdump 13.5 printed these), highest ordinal first, between
    /// attributes of other formats: read back in ordinal order; a damaged file reads as nothing.
    #[test]
    fn a_cubins_parameter_table_reads_in_ordinal_order() {
        let mut info = vec![0x04, 0x2f, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8]; // another SVAL
        info.extend([0x03, 0x1b, 0xff, 0x00]); // an HVAL
        for (o, off, size) in [(4, 0x2c, 4), (3, 0x20, 12), (2, 0x10, 16), (1, 8, 1), (0, 0, 8)] {
            info.extend(kparam(o, off, size));
        }
        info.extend([0x01, 0x36, 0x00, 0x00]); // an NVAL
        let file = elf(&[(".text.structs", 1, vec![0; 16]), (".nv.info.structs", 0x70000000, info)]);
        let got = kernel_params(&file);
        let sizes: Vec<(usize, usize, usize)> = got["structs"].iter().map(|p| (p.ordinal, p.offset, p.size)).collect();
        assert_eq!(sizes, [(0, 0, 8), (1, 8, 1), (2, 0x10, 16), (3, 0x20, 12), (4, 0x2c, 4)]);
        assert!(kernel_params(&file[..40]).is_empty());
        assert!(kernel_params(b"not an elf").is_empty());
    }
}

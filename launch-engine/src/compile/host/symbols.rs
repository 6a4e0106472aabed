//! The symbol names of a host object (64-bit little-endian ELF, what nvcc's host compiler writes on
//! Linux), for one fact: nvcc gives every kernel a host stub, compiled as a C++ function with the
//! kernel's parameters and named after the kernel's C++ mangling even for an `extern "C"` kernel,
//! so the stub's mangled name holds the parameter types: `axpy_c(float, const float*, float*,
//! unsigned long)` has `_Z30__device_stub__Z6axpy_cfPKfPfmfPKfPfm` (nvcc 13.0, seen in
//! `fixtures/crates/host_signatures`). Bounds-checked: a damaged object gives fewer names, never
//! a panic.

/// The names in `object`'s symbol tables; empty for anything that is not an ELF64 LE object.
pub(crate) fn names(object: &[u8]) -> Vec<&str> {
    let sections = crate::elf::sections(object);
    let mut out = Vec::new();
    // SHT_SYMTAB; its sh_link is the string table's index.
    for table in sections.iter().filter(|s| s.kind == 2 && s.entsize >= 24) {
        let Some(strings) = sections.get(table.link) else { continue };
        for sym in table.data.chunks_exact(table.entsize) {
            let at = u32::from_le_bytes(sym[..4].try_into().expect("4 bytes")) as usize;
            if let Some(name) = crate::elf::string_at(strings.data, at).filter(|n| !n.is_empty()) {
                out.push(name);
            }
        }
    }
    out
}

/// The stub function of `extern "C"` kernel `kernel` among `names`:
/// `_Z<n>__device_stub__Z<len><kernel><params>…`, not its `.cold` part or its statics.
pub(crate) fn stub_of<'a>(names: &[&'a str], kernel: &str) -> Option<&'a str> {
    let inner = format!("__device_stub__Z{}{kernel}", kernel.len());
    names.iter().copied().find(|n| {
        let Some(rest) = n.strip_prefix("_Z") else { return false };
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        rest.len() < n.len() - 2 && rest.starts_with(&inner) && !n.contains('.')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 LE object: a null section, a symbol table and its string table.
    fn object(symbols: &[&str]) -> Vec<u8> {
        let mut strtab = vec![0u8];
        let mut offsets = Vec::new();
        for s in symbols {
            offsets.push(strtab.len() as u32);
            strtab.extend_from_slice(s.as_bytes());
            strtab.push(0);
        }
        let mut symtab = vec![0u8; 24]; // the null symbol
        for o in offsets {
            let mut sym = [0u8; 24];
            sym[..4].copy_from_slice(&o.to_le_bytes());
            symtab.extend_from_slice(&sym);
        }
        let (symtab_at, strtab_at) = (64usize, 64 + symtab.len());
        let shoff = strtab_at + strtab.len();
        let mut out = vec![0u8; 64];
        out[..6].copy_from_slice(b"\x7fELF\x02\x01");
        out[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        out[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        out.extend_from_slice(&symtab);
        out.extend_from_slice(&strtab);
        let header = |kind: u32, offset: usize, size: usize, link: u32, entsize: u64| {
            let mut h = [0u8; 64];
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(offset as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            h[0x28..0x2c].copy_from_slice(&link.to_le_bytes());
            h[0x38..0x40].copy_from_slice(&entsize.to_le_bytes());
            h
        };
        out.extend_from_slice(&[0u8; 64]);
        out.extend_from_slice(&header(2, symtab_at, symtab.len(), 2, 24));
        out.extend_from_slice(&header(3, strtab_at, strtab.len(), 0, 0));
        out
    }

    #[test]
    fn an_extern_c_kernels_stub_carries_its_parameter_types() {
        // As nvcc 13.0 and gcc wrote them for `axpy_c(float, const float*, float*, unsigned long)`.
        let stub = "_Z30__device_stub__Z6axpy_cfPKfPfmfPKfPfm";
        let o = object(&[
            "main",
            "_Z30__device_stub__Z6axpy_cfPKfPfmfPKfPfm.cold",
            "_ZZ30__device_stub__Z6axpy_cfPKfPfmfPKfPfmE5__tmp",
            stub,
            "_Z18__device_stub__Z1kPiPi",
        ]);
        let names = names(&o);
        assert_eq!(names.len(), 5);
        assert_eq!(stub_of(&names, "axpy_c"), Some(stub));
        assert_eq!(stub_of(&names, "k"), Some("_Z18__device_stub__Z1kPiPi"));
        assert_eq!(stub_of(&names, "axpy"), None);
        assert_eq!(stub_of(&names, "absent"), None);
    }

    #[test]
    fn a_damaged_object_gives_fewer_names_never_a_panic() {
        let good = object(&["_Z30__device_stub__Z6axpy_cfPKfPfmfPKfPfm"]);
        for cut in 0..good.len() {
            let _ = names(&good[..cut]);
        }
        let mut wild = good.clone();
        for i in (0..wild.len()).step_by(7) {
            wild[i] = 0xff;
            let _ = names(&wild);
        }
        assert!(names(b"not an object").is_empty());
    }
}

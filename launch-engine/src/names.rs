//! Kernel names: from a PTX symbol to the name the source uses, the name people read, and the
//! name of the generated Rust static. Shared by compile (notes), contract (matching annotations
//! to symbols) and assemble (the manifest), so none of them imports another for it.

use std::collections::{BTreeSet, HashMap};

use launch_schema::manifest::KernelEntry;

/// `_Z4tmplILi8EEvPi` → `void tmpl<8>(int*)`; unmangled names are returned as they are.
pub fn demangle(name: &str) -> String {
    // Only `_Z` symbols are mangled: `h` alone would demangle as the type `unsigned char`.
    if !name.starts_with("_Z") {
        return name.to_string();
    }
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| name.to_string())
}

/// The identifier a kernel has in its source, from its symbol: `_Z7mangledPf` → `mangled`.
pub fn source_name(symbol: &str) -> String {
    base_name(&demangle(symbol)).to_string()
}

/// The function's own identifier in a demangled signature: `void ns::tmpl<8>(int*)` → `tmpl`.
pub(crate) fn base_name(display: &str) -> &str {
    let before_params = display.split('(').next().unwrap_or(display);
    let before_tmpl = before_params.split('<').next().unwrap_or(before_params);
    let last = before_tmpl.rsplit("::").next().unwrap_or(before_tmpl);
    last.rsplit(' ').next().unwrap_or(last)
}

/// Longest Rust name taken from a signature as it is; a longer one is hashed (see [`rust_name`]).
pub const RUST_NAME_MAX: usize = 64;

/// Hex digits of a hashed name's hash, unless two symbols would share the name.
const HASH_DIGITS: usize = 8;

/// The Rust static's name: `poly_eval` → `POLY_EVAL`, `void tmpl<8>(int*)` → `TMPL_8`.
///
/// Where that would be longer than [`RUST_NAME_MAX`] characters (template-heavy C++: CUB, CUTLASS)
/// and is more than the function's own identifier, it is the identifier shouted, `_`, and the
/// first 8 hex digits of the FNV-1a hash of `symbol` (the mangled name):
/// `void gemm<128, cub::Policy<…>>(float*)` → `GEMM_3F2A91C0`. [`widen_hashes`] lengthens the hash
/// where two symbols would share a name.
pub fn rust_name(symbol: &str, display: &str) -> String {
    bounded(symbol, display, signature_name(display))
}

/// The name from the signature, without the bound: today's rule.
fn signature_name(display: &str) -> String {
    let sig = display.split('(').next().unwrap_or(display);
    // Drop the return type of a demangled template signature.
    let sig = match sig.find('<') {
        Some(lt) => match sig[..lt].rfind(' ') {
            Some(sp) => &sig[sp + 1..],
            None => sig,
        },
        None => sig.rsplit(' ').next().unwrap_or(sig),
    };
    identifier(shout(sig))
}

/// `name` when within the bound or nothing but the function's identifier, else hashed.
fn bounded(symbol: &str, display: &str, name: String) -> String {
    if name.len() <= RUST_NAME_MAX || name == identifier(shout(own_name(display))) {
        name
    } else {
        hashed(symbol, display, HASH_DIGITS)
    }
}

/// `K_` before a name that is empty or starts with a digit.
fn identifier(out: String) -> String {
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("K_{out}")
    } else {
        out
    }
}

/// `GEMM_3F2A91C0`: the function's identifier and `digits` hex digits of the symbol's hash.
fn hashed(symbol: &str, display: &str, digits: usize) -> String {
    let hash = format!("{:016X}", fnv1a(symbol));
    format!("{}_{}", identifier(shout(own_name(display))), &hash[..digits.min(16)])
}

/// 64-bit FNV-1a: small, and the same on every platform and release (the names are API).
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Whether `rust` is a hashed name of `symbol` (a hash of at least 8 digits at its end).
pub(crate) fn is_hashed(symbol: &str, rust: &str) -> bool {
    let hash = format!("{:016X}", fnv1a(symbol));
    rust.rsplit_once('_').is_some_and(|(_, tail)| tail.len() >= HASH_DIGITS && hash.starts_with(tail))
}

/// The function's identifier, brackets and all they hold skipped:
/// `void (anonymous namespace)::gemm<X<1>>(int)` → `gemm`, `void F::operator()(int)` → `operator`.
pub(crate) fn own_name(display: &str) -> &str {
    launch::kernel::name::bare_name(display)
}

/// Where kernels of distinct symbols share a Rust name, the hashed ones among them get longer
/// hashes: 12, then 16 hex digits, then `_2`, `_3`… in symbol order. Short names are left alone
/// (two of them alike are the caller's error to report).
pub fn widen_hashes(kernels: &mut [KernelEntry]) {
    for digits in [12, 16, 0] {
        let mut symbols: HashMap<String, BTreeSet<String>> = HashMap::new();
        for k in kernels.iter() {
            symbols.entry(k.rust_name.clone()).or_default().insert(k.name.clone());
        }
        let mut done = true;
        for k in kernels.iter_mut() {
            let sharing = &symbols[&k.rust_name];
            if sharing.len() < 2 || !is_hashed(&k.name, &k.rust_name) {
                continue;
            }
            done = false;
            k.rust_name = if digits > 0 {
                hashed(&k.name, &k.display_name, digits)
            } else {
                let place = sharing.iter().position(|s| *s == k.name).unwrap_or(0);
                format!("{}_{}", k.rust_name, place + 1)
            };
        }
        if done {
            return;
        }
    }
}

/// [`rust_name`] with the parameter types, for overloads: `k(float const*)` → `K_FLOAT_CONST`
/// (hashed as [`rust_name`] says where that is too long).
pub fn rust_name_with_params(symbol: &str, display: &str) -> String {
    let params = display.find('(').map_or("", |at| &display[at..]);
    let params = shout(params);
    let name = signature_name(display);
    let name = if params.is_empty() { name } else { format!("{name}_{params}") };
    bounded(symbol, display, name)
}

/// Upper-case ASCII letters and digits, every other run of characters one `_`, none at the ends.
fn shout(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use launch_schema::manifest::Origin;

    #[test]
    fn names_are_demangled_for_display_and_rust() {
        assert_eq!(demangle("poly_eval"), "poly_eval");
        assert_eq!(demangle("h"), "h");
        assert_eq!(demangle("_Z4tmplILi8EEvPi"), "void tmpl<8>(int*)");
        assert_eq!(base_name("void tmpl<8>(int*)"), "tmpl");
        assert_eq!(base_name("ns::k(float const*)"), "k");
        assert_eq!(rust_name("poly_eval", "poly_eval"), "POLY_EVAL");
        assert_eq!(rust_name("_Z4tmplILi8EEvPi", "void tmpl<8>(int*)"), "TMPL_8");
        assert_eq!(rust_name("_ZN2ns1kEPKf", "ns::k(float const*)"), "NS_K");
        assert_eq!(rust_name_with_params("_ZN2ns1kEPKf", "ns::k(float const*)"), "NS_K_FLOAT_CONST");
    }

    /// A demangled template signature whose Rust name would be `64 + extra` characters or so.
    fn gemm(n: u32, extra: usize) -> String {
        format!("void gemm<{n}, cub::Policy<{}>>(float*)", "x".repeat(extra))
    }

    #[test]
    fn names_up_to_the_bound_are_kept_and_longer_ones_hashed_stably() {
        // `GEMM_1_CUB_POLICY_` is 18 characters: 46 more reach the bound exactly.
        let at_bound = gemm(1, 46);
        assert_eq!(signature_name(&at_bound).len(), RUST_NAME_MAX);
        assert_eq!(rust_name("sym", &at_bound), format!("GEMM_1_CUB_POLICY_{}", "X".repeat(46)));
        // One more and it is the function's name and the symbol's hash, the same on every run
        // and platform (FNV-1a of `_Z4tmplILi8EEvPi` is 35F89932E72D572E).
        assert_eq!(rust_name("_Z4tmplILi8EEvPi", &gemm(1, 47)), "GEMM_35F89932");
        assert_eq!(fnv1a("_Z4tmplILi8EEvPi"), 0x35F8_9932_E72D_572E);
        // A long name that is nothing but the identifier stays whole (a hash would not shorten it).
        let plain = "a_very_long_extern_c_kernel_name_that_goes_on_and_on_past_the_bound";
        assert_eq!(rust_name(plain, plain), plain.to_ascii_uppercase());
        // With parameters (overloads) the bound applies to the whole name.
        let long_params = format!("k({}*)", "cub::detail::Tile".repeat(5));
        assert_eq!(rust_name("_Z1kPf", &long_params), "K");
        assert_eq!(
            rust_name_with_params("_Z1kPf", &long_params),
            format!("K_{}", &format!("{:016X}", fnv1a("_Z1kPf"))[..8])
        );
    }

    #[test]
    fn the_identifier_of_a_hashed_name_skips_namespaces_templates_and_operators() {
        assert_eq!(own_name("void (anonymous namespace)::gemm<X<1>, 2>(int)"), "gemm");
        assert_eq!(own_name("void ns::F<int>::operator()(int)"), "operator");
        assert_eq!(own_name("void k<main::{lambda(int)#1}>(int)"), "k");
        assert_eq!(own_name("kernels/a.cu::void ns::k<1>(int)"), "k");
        let h = |s: &str| format!("{:016X}", fnv1a(s))[..8].to_string();
        let long = format!("void ns::scan<{}>(int*)", "cub::detail::Policy<int>, ".repeat(4));
        assert_eq!(rust_name("_Zscan", &long), format!("SCAN_{}", h("_Zscan")));
        assert!(is_hashed("_Zscan", &rust_name("_Zscan", &long)));
        assert!(!is_hashed("_Zscan", "SCAN"));
    }

    fn entry(symbol: &str, display: &str) -> KernelEntry {
        KernelEntry {
            name: symbol.into(),
            display_name: display.into(),
            qualified: format!("kernels/a.cu::{display}"),
            rust_name: rust_name(symbol, display),
            rust_path: String::new(),
            rust_flat: false,
            file: "kernels/a.cu".into(),
            line: 1,
            col: 1,
            origin: Origin::Definition,
            contract: None,
            arches: Vec::new(),
            missing: Vec::new(),
            host_threads: None,
            dynamic_smem: None,
            max_spill_bytes: None,
            variants: Vec::new(),
            params: None,
            params_unknown: None,
        }
    }

    #[test]
    fn hashes_that_collide_are_lengthened_and_the_rest_left_alone() {
        // These two symbols' hashes share their first 8 digits (C9D534D6), not their first 12.
        let (a, b) = ("_Z4gemmILi71EEvPf", "_Z4gemmILi48093EEvPf");
        let mut k = vec![entry(a, &gemm(71, 60)), entry(b, &gemm(48093, 60)), entry("fill", "fill")];
        // The same symbol in another file: one kernel's name, not a collision.
        k.push(KernelEntry { file: "kernels/b.cu".into(), ..entry(a, &gemm(71, 60)) });
        assert_eq!(k[0].rust_name, "GEMM_C9D534D6");
        assert_eq!(k[1].rust_name, "GEMM_C9D534D6");
        widen_hashes(&mut k);
        let names: Vec<&str> = k.iter().map(|k| k.rust_name.as_str()).collect();
        assert_eq!(names, ["GEMM_C9D534D6151B", "GEMM_C9D534D6CDFB", "FILL", "GEMM_C9D534D6151B"]);
        // A hashed name that a short one holds already (a kernel named so): the hashed one moves.
        let mut k = vec![entry("GEMM_C9D534D6", "GEMM_C9D534D6"), entry(a, &gemm(71, 60))];
        widen_hashes(&mut k);
        assert_eq!(k[0].rust_name, "GEMM_C9D534D6");
        assert_eq!(k[1].rust_name, "GEMM_C9D534D6151B");
        // Twice the same input, the same names.
        let run = || {
            let mut k = vec![entry(b, &gemm(48093, 60)), entry(a, &gemm(71, 60))];
            widen_hashes(&mut k);
            k.into_iter().map(|k| k.rust_name).collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}

//! Kernel names: from a PTX symbol to the name the source uses, the name people read, and the
//! name of the generated Rust static. Shared by compile (notes), contract (matching annotations
//! to symbols) and assemble (the manifest), so none of them imports another for it.

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

/// The Rust static's name: `poly_eval` → `POLY_EVAL`, `void tmpl<8>(int*)` → `TMPL_8`.
pub fn rust_name(display: &str) -> String {
    let sig = display.split('(').next().unwrap_or(display);
    // Drop the return type of a demangled template signature.
    let sig = match sig.find('<') {
        Some(lt) => match sig[..lt].rfind(' ') {
            Some(sp) => &sig[sp + 1..],
            None => sig,
        },
        None => sig.rsplit(' ').next().unwrap_or(sig),
    };
    let out = shout(sig);
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("K_{out}")
    } else {
        out
    }
}

/// [`rust_name`] with the parameter types, for overloads: `k(float const*)` → `K_FLOAT_CONST`.
pub fn rust_name_with_params(display: &str) -> String {
    let params = display.find('(').map_or("", |at| &display[at..]);
    let params = shout(params);
    if params.is_empty() {
        rust_name(display)
    } else {
        format!("{}_{params}", rust_name(display))
    }
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

    #[test]
    fn names_are_demangled_for_display_and_rust() {
        assert_eq!(demangle("poly_eval"), "poly_eval");
        assert_eq!(demangle("h"), "h");
        assert_eq!(demangle("_Z4tmplILi8EEvPi"), "void tmpl<8>(int*)");
        assert_eq!(base_name("void tmpl<8>(int*)"), "tmpl");
        assert_eq!(base_name("ns::k(float const*)"), "k");
        assert_eq!(rust_name("poly_eval"), "POLY_EVAL");
        assert_eq!(rust_name("void tmpl<8>(int*)"), "TMPL_8");
        assert_eq!(rust_name("ns::k(float const*)"), "NS_K");
    }
}

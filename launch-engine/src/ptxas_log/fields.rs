//! The fields of one report line: the severity and location of a diagnostic, the
//! `Compiling entry`, `Compile time`, gmem and stack/spill lines, and their numbers.

use super::{ConstBank, Severity};

/// Each diagnostic kind as ptxas prints it.
const KINDS: [(&str, Severity); 4] =
    [("info", Severity::Info), ("warning", Severity::Warning), ("error", Severity::Error), ("fatal", Severity::Fatal)];

/// Splits the part of a `ptxas …` line after `ptxas ` into severity, optional location and the
/// text after the colon. `Ok(None)`: not a diagnostic line.
#[allow(clippy::type_complexity)]
pub(super) fn diagnostic_header(s: &str) -> Result<Option<(Severity, Option<(&str, u32)>, &str)>, String> {
    if let Some((severity, text)) = kind_and_text(s) {
        return Ok(Some((severity, None, text)));
    }
    // `<file>, line <n>; <kind> <pad>: <text>`: the first `; ` followed by a kind and a colon.
    for (idx, _) in s.match_indices("; ") {
        let (Some(head), Some(tail)) = (s.get(..idx), s.get(idx + 2..)) else {
            continue;
        };
        let Some((severity, text)) = kind_and_text(tail) else {
            continue;
        };
        let Some((file, n)) = head.rsplit_once(", line ") else {
            continue;
        };
        if n.is_empty() || n.contains(char::is_whitespace) {
            continue;
        }
        let n = number(n, "PTX line number")?;
        return Ok(Some((severity, Some((file, n)), text)));
    }
    Ok(None)
}

/// `<kind><spaces>:<text>` → (severity, text).
fn kind_and_text(s: &str) -> Option<(Severity, &str)> {
    KINDS.iter().find_map(|&(kind, severity)| {
        let text = s.strip_prefix(kind)?.trim_start_matches(' ').strip_prefix(':')?;
        Some((severity, text))
    })
}

#[cfg(test)]
/// The unlocated info text after the colon, for a verbatim `ptxas info    : …` line.
pub(super) fn info_text(line: &str) -> Option<&str> {
    let header = line.strip_prefix("ptxas ")?;
    match kind_and_text(header)? {
        (Severity::Info, text) => Some(text.trim()),
        _ => None,
    }
}

/// `'<name>' for '<arch>'`.
pub(super) fn compiling_entry(rest: &str) -> Option<(&str, &str)> {
    let (name, arch) = rest.trim().rsplit_once("' for '")?;
    let name = name.strip_prefix('\'')?;
    let arch = arch.strip_suffix('\'')?;
    if name.is_empty() || arch.is_empty() {
        return None;
    }
    Some((name, arch))
}

/// ` = <float> ms` (after `Compile time`).
pub(super) fn compile_time(rest: &str) -> Option<f64> {
    let v = rest.trim_start().strip_prefix('=')?.trim().strip_suffix("ms")?.trim_end();
    let well_formed =
        !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.') && v.bytes().any(|b| b.is_ascii_digit());
    if !well_formed {
        return None;
    }
    v.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// `<G> bytes gmem[, <N> bytes cmem[<bank>]]...`. `Ok(None)`: not a gmem line.
pub(super) fn gmem_line(text: &str) -> Result<Option<(u64, Vec<ConstBank>)>, String> {
    let mut fields = text.split(',').map(str::trim);
    let first = fields.next().unwrap_or("");
    let Some(g) = bounded_token(first, "", &[" bytes gmem"]) else {
        return Ok(None);
    };
    let gmem = number64(g, "gmem size")?;
    let mut banks = Vec::new();
    for field in fields {
        let Some((bytes, bank)) = field.split_once(" bytes cmem[") else {
            continue; // unknown field
        };
        let bank = bank.strip_suffix(']').ok_or_else(|| format!("malformed constant bank `{field}`"))?;
        banks.push(ConstBank { bank: number(bank, "constant bank")?, bytes: number64(bytes, "constant bank size")? });
    }
    Ok(Some((gmem, banks)))
}

/// A stack/spill line with its indentation or NVRTC prefix removed:
/// `<S> bytes stack frame, <SS> bytes spill stores, <SL> bytes spill loads`.
/// `Ok(None)`: not a stack line (e.g. a source excerpt in an NVRTC log).
pub(super) fn stack_line(t: &str) -> Result<Option<(u32, u32, u32)>, String> {
    let mut fields = t.split(',').map(str::trim);
    let first = fields.next().unwrap_or("");
    let Some(frame) = bounded_token(first, "", &[" bytes stack frame"]) else {
        return Ok(None);
    };
    let frame = number(frame, "stack frame size")?;
    let (mut stores, mut loads) = (0, 0);
    for field in fields {
        if let Some(n) = bounded_token(field, "", &[" bytes spill stores"]) {
            stores = number(n, "spill stores")?;
        } else if let Some(n) = bounded_token(field, "", &[" bytes spill loads"]) {
            loads = number(n, "spill loads")?;
        }
    }
    Ok(Some((frame, stores, loads)))
}

/// `<prefix><token><suffix>` where the token is one non-empty word: returns the token. The first
/// suffix that matches wins.
pub(super) fn bounded_token<'a>(field: &'a str, prefix: &str, suffixes: &[&str]) -> Option<&'a str> {
    let rest = field.strip_prefix(prefix)?;
    let tok = suffixes.iter().find_map(|s| rest.strip_suffix(s))?;
    if tok.is_empty() || tok.contains(char::is_whitespace) {
        return None;
    }
    Some(tok)
}

pub(super) fn number(tok: &str, what: &str) -> Result<u32, String> {
    if !tok.is_empty() && tok.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = tok.parse() {
            return Ok(n);
        }
    }
    Err(format!("malformed {what} `{tok}`"))
}

fn number64(tok: &str, what: &str) -> Result<u64, String> {
    if !tok.is_empty() && tok.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = tok.parse() {
            return Ok(n);
        }
    }
    Err(format!("malformed {what} `{tok}`"))
}

//! Reading launch bounds back from PTX: `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg` after
//! each `.entry`. The PTX is what ptxas and the driver act on, so it is the contract's ground truth.
//!
//! And writing them: [`with_contract`] sets one entry's directives to a contract's (optionally
//! renaming it) and [`keep_entry`] leaves one entry in a module, so a contract can be tried on
//! NVRTC's PTX by ptxas alone, without compiling the source again.

use launch::{Contract, ContractSource};

/// The performance directives of one `.entry`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryDirectives {
    /// The entry's symbol name.
    pub name: String,
    /// `.maxntid x, y, z`.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid x, y, z`.
    pub reqntid: Option<[u32; 3]>,
    /// `.minnctapersm n`.
    pub minnctapersm: Option<u32>,
    /// `.maxnreg n`.
    pub maxnreg: Option<u32>,
}

impl EntryDirectives {
    /// The contract these directives express, or `None` for an unbounded kernel.
    pub fn contract(&self, source: ContractSource) -> Option<Contract> {
        // Checked: the fields are public and parsed from text, and `4, 4294967295` overflowed
        // (a panic through the public API). No CTA holds more than u32::MAX threads, so an
        // overflowing product saturates: "more threads than any launch can have".
        let product = |d: [u32; 3]| d.iter().try_fold(1u32, |p, &v| p.checked_mul(v.max(1))).unwrap_or(u32::MAX);
        let threads = self.reqntid.or(self.maxntid).map(product);
        if threads.is_none() && self.maxnreg.is_none() {
            return None;
        }
        Some(Contract {
            source,
            threads,
            // ptxas ignores .minnctapersm without .maxntid/.reqntid.
            min_blocks: if threads.is_some() { self.minnctapersm } else { None },
            max_regs: self.maxnreg,
            exact: self.reqntid.is_some(),
        })
    }
}

/// Every `.entry` of a PTX module with its directives, in file order.
pub fn entries(ptx: &str) -> Vec<EntryDirectives> {
    let mut out: Vec<EntryDirectives> = Vec::new();
    let mut current: Option<EntryDirectives> = None;
    for line in ptx.lines() {
        // Only a directive (`.entry`, `.maxntid`, ...) or an entry's `{` matters, and most lines
        // are instructions: they are passed over at their first byte (build scripts run
        // unoptimised, and a module of hundreds of kernels is tens of megabytes).
        if !matches!(first_byte(line), Some(b'.' | b'{')) {
            continue;
        }
        let t = line.trim();
        if let Some(rest) = entry_name(t) {
            if let Some(done) = current.take() {
                out.push(done);
            }
            current = Some(EntryDirectives { name: rest.to_string(), ..Default::default() });
            continue;
        }
        let Some(cur) = current.as_mut() else { continue };
        if t.starts_with('{') {
            out.push(current.take().expect("checked above"));
            continue;
        }
        let (word, args) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        match word {
            ".maxntid" => cur.maxntid = dims(args),
            ".reqntid" => cur.reqntid = dims(args),
            ".minnctapersm" => cur.minnctapersm = args.trim().parse().ok(),
            ".maxnreg" => cur.maxnreg = args.trim().parse().ok(),
            _ => {}
        }
    }
    out.extend(current);
    out
}

/// The first byte of `line` after its blanks.
pub(crate) fn first_byte(line: &str) -> Option<u8> {
    line.bytes().find(|b| !b.is_ascii_whitespace())
}

/// `.visible .entry name(` → `name`.
pub fn entry_name(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    let mut w = words.next()?;
    while matches!(w, ".visible" | ".weak" | ".extern") {
        w = words.next()?;
    }
    if w != ".entry" {
        return None;
    }
    let rest = line[line.find(".entry")? + ".entry".len()..].trim_start();
    let end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// `x[, y[, z]]`; `None` when malformed, or when `x × y × z` does not fit in a `u32` (ptxas
/// refuses such a block; reading it as a bound would be wrong).
fn dims(args: &str) -> Option<[u32; 3]> {
    let mut d = [1u32; 3];
    let mut n = 0;
    for (i, part) in args.split(',').enumerate() {
        if i >= 3 {
            return None;
        }
        d[i] = part.trim().parse().ok()?;
        n += 1;
    }
    d.iter().try_fold(1u32, |p, &v| p.checked_mul(v))?;
    (n > 0).then_some(d)
}

/// The `.version` of a PTX module (`8.8`).
pub fn version(ptx: &str) -> Option<&str> {
    ptx.lines().find_map(|l| l.trim().strip_prefix(".version").map(str::trim))
}

/// Why a PTX text could not be edited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtxEditError {
    /// No `.entry` of that name is defined in the module.
    NoEntry {
        /// The name asked for.
        entry: String,
        /// The entries the module defines, in file order.
        entries: Vec<String>,
    },
    /// An entry's header or body never ends (no `{`, or no matching `}`): not PTX ptxas takes.
    Unterminated {
        /// The entry.
        entry: String,
        /// The 1-based PTX line of its `.entry`.
        line: usize,
    },
    /// The new name is already another entry's.
    NameTaken {
        /// The name.
        name: String,
    },
    /// The new name is not a PTX identifier (`[A-Za-z_$%][A-Za-z0-9_$]*`, or `_`/`$`/`%` then at
    /// least one of those).
    InvalidName {
        /// The name.
        name: String,
    },
}

impl std::fmt::Display for PtxEditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PtxEditError::NoEntry { entry, entries } if entries.is_empty() => {
                write!(f, "the PTX has no entry `{entry}`: it defines no entry at all")
            }
            PtxEditError::NoEntry { entry, entries } => {
                write!(f, "the PTX has no entry `{entry}`; its entries: {}", entries.join(", "))
            }
            PtxEditError::Unterminated { entry, line } => {
                write!(f, "PTX line {line}: entry `{entry}` has no body, or its body never ends")
            }
            PtxEditError::NameTaken { name } => write!(f, "the PTX already has an entry `{name}`"),
            PtxEditError::InvalidName { name } => write!(f, "`{name}` is not a PTX identifier"),
        }
    }
}

impl std::error::Error for PtxEditError {}

/// Where one entry definition lies in a PTX text (byte offsets).
#[derive(Clone, Debug, PartialEq, Eq)]
struct EntrySpan {
    /// The start of the line of its `.entry`.
    start: usize,
    /// Its name.
    name: std::ops::Range<usize>,
    /// From the end of the parameter list (or of the name, without one) to the body's `{`: where
    /// the performance directives are.
    directives: std::ops::Range<usize>,
    /// Just after the body's closing `}`.
    end: usize,
}

/// Every entry definition of `ptx` in file order; declarations (`.entry k(...);`) are skipped. One
/// pass: a body is skipped by brace matching (comments and strings ignored), never rescanned.
fn entry_spans(ptx: &str) -> Result<Vec<EntrySpan>, PtxEditError> {
    let b = ptx.as_bytes();
    let mut spans = Vec::new();
    let mut pos = 0;
    while pos < b.len() {
        let line_end = ptx[pos..].find('\n').map_or(b.len(), |i| pos + i + 1);
        let line = &ptx[pos..line_end];
        let Some(name) = entry_name(line.trim()) else {
            pos = line_end;
            continue;
        };
        // `entry_name` returns a slice of `line`: its offset is the name's.
        let name_start = name.as_ptr() as usize - ptx.as_ptr() as usize;
        let name = name_start..name_start + name.len();
        let unterminated =
            || PtxEditError::Unterminated { entry: ptx[name.clone()].to_string(), line: line_number(ptx, pos) };
        let mut i = name.end;
        let params = skip_blank(b, i);
        if b.get(params) == Some(&b'(') {
            i = matching(b, params, b'(', b')').ok_or_else(unterminated)?;
        }
        let directives_start = i;
        // The body's `{`, or the `;` of a declaration.
        let mut open = None;
        while i < b.len() {
            match b[i] {
                b'{' => {
                    open = Some(i);
                    break;
                }
                b';' => break,
                _ => i = skip_one(b, i),
            }
        }
        let Some(open) = open else {
            if i < b.len() {
                pos = i + 1; // a declaration
                continue;
            }
            return Err(unterminated());
        };
        let end = matching(b, open, b'{', b'}').ok_or_else(unterminated)?;
        spans.push(EntrySpan { start: pos, name, directives: directives_start..open, end });
        pos = end;
    }
    Ok(spans)
}

/// The 1-based line of byte `at`.
fn line_number(text: &str, at: usize) -> usize {
    text.as_bytes()[..at].iter().filter(|&&c| c == b'\n').count() + 1
}

/// The index after the comment starting at `i`, if one does.
fn comment_end(b: &[u8], i: usize) -> Option<usize> {
    let find = |from: usize, what: &[u8]| {
        b[from.min(b.len())..].windows(what.len()).position(|w| w == what).map_or(b.len(), |p| from + p + what.len())
    };
    match (b.get(i), b.get(i + 1)) {
        (Some(b'/'), Some(b'/')) => Some(find(i + 2, b"\n")),
        (Some(b'/'), Some(b'*')) => Some(find(i + 2, b"*/")),
        _ => None,
    }
}

/// The index after a comment or string starting at `i`, else `i + 1`.
fn skip_one(b: &[u8], i: usize) -> usize {
    if let Some(end) = comment_end(b, i) {
        return end;
    }
    if b[i] == b'"' {
        return b[i + 1..].iter().position(|&c| c == b'"').map_or(b.len(), |p| i + 1 + p + 1);
    }
    i + 1
}

/// The index after whitespace and comments from `i`.
fn skip_blank(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
        } else if let Some(end) = comment_end(b, i) {
            i = end;
        } else {
            break;
        }
    }
    i
}

/// The index after the `close` matching the `open` at `at` (comments and strings skipped).
fn matching(b: &[u8], at: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    while i < b.len() {
        if b[i] == open {
            depth += 1;
        } else if b[i] == close {
            depth -= 1;
            if depth == 0 {
                return Some(i + 1);
            }
        }
        i = skip_one(b, i);
    }
    None
}

/// Whether `name` is a PTX identifier.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => chars.all(ok),
        Some('_' | '$' | '%') => {
            let rest = chars.as_str();
            !rest.is_empty() && rest.chars().all(ok)
        }
        _ => false,
    }
}

/// The directives of one entry header region, each as `name args` (comments dropped).
fn header_directives(region: &str) -> Vec<(String, String)> {
    let b = region.as_bytes();
    let mut plain = String::with_capacity(region.len());
    let mut i = 0;
    while i < b.len() {
        // Comments become a space; anything else is kept.
        if let Some(end) = comment_end(b, i) {
            plain.push(' ');
            i = end;
        } else {
            let len = region[i..].chars().next().map_or(1, char::len_utf8);
            plain.push_str(&region[i..i + len]);
            i += len;
        }
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for word in plain.split_whitespace() {
        match out.last_mut() {
            Some((_, args)) if !word.starts_with('.') => {
                if !args.is_empty() {
                    args.push(' ');
                }
                args.push_str(word);
            }
            _ => out.push((word.to_string(), String::new())),
        }
    }
    out
}

/// `ptx` with entry `entry`'s `.maxntid`/`.reqntid`/`.minnctapersm`/`.maxnreg` replaced by
/// `contract`'s (all four removed for `None`), and the entry renamed to `rename` when given
/// (its parameters keep their names: they are scoped to the entry). Everything else is kept byte
/// for byte, other header directives included.
///
/// The directives are those the build writes for the same contract: `.reqntid` for an exact
/// contract read from PTX, else `.maxntid`, with the entry's own `x, y, z` kept when their
/// product is the contract's thread count (else `threads, 1, 1`); `.minnctapersm` only with a
/// thread count (ptxas ignores it without one); `.maxnreg`.
///
/// # Errors
/// No entry `entry`, an entry without an end, a new name that is not an identifier or that
/// another entry has.
pub fn with_contract(
    ptx: &str,
    entry: &str,
    contract: Option<&Contract>,
    rename: Option<&str>,
) -> Result<String, PtxEditError> {
    let spans = entry_spans(ptx)?;
    let span = find_span(ptx, &spans, entry)?;
    if let Some(new) = rename {
        if !is_identifier(new) {
            return Err(PtxEditError::InvalidName { name: new.to_string() });
        }
        if new != entry && spans.iter().any(|s| &ptx[s.name.clone()] == new) {
            return Err(PtxEditError::NameTaken { name: new.to_string() });
        }
    }
    let lines = directive_lines(&header_directives(&ptx[span.directives.clone()]), contract);
    let mut out = String::with_capacity(ptx.len() + 64);
    out.push_str(&ptx[..span.name.start]);
    out.push_str(rename.unwrap_or(entry));
    out.push_str(&ptx[span.name.end..span.directives.start]);
    out.push('\n');
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str(&ptx[span.directives.end..]);
    Ok(out)
}

/// The header directives of an entry with `contract`'s written in place of its own contract
/// directives (all four removed for `None`), one per line; see [`with_contract`].
fn directive_lines(existing: &[(String, String)], contract: Option<&Contract>) -> Vec<String> {
    let old_dims = |kind: &str| existing.iter().find(|(n, _)| n == kind).and_then(|(_, a)| dims(a));
    let mut lines: Vec<String> = existing
        .iter()
        .filter(|(n, _)| !matches!(n.as_str(), ".maxntid" | ".reqntid" | ".minnctapersm" | ".maxnreg"))
        .map(|(n, a)| if a.is_empty() { n.clone() } else { format!("{n} {a}") })
        .collect();
    if let Some(c) = contract {
        if let Some(t) = c.threads {
            let kind = if c.exact && c.source == ContractSource::LaunchBounds { ".reqntid" } else { ".maxntid" };
            let product = |d: &[u32; 3]| d.iter().try_fold(1u32, |p, &v| p.checked_mul(v));
            let [x, y, z] = [old_dims(kind), old_dims(".reqntid"), old_dims(".maxntid")]
                .into_iter()
                .flatten()
                .find(|d| product(d) == Some(t))
                .unwrap_or([t, 1, 1]);
            lines.push(format!("{kind} {x}, {y}, {z}"));
            if let Some(b) = c.min_blocks {
                lines.push(format!(".minnctapersm {b}"));
            }
        }
        if let Some(r) = c.max_regs {
            lines.push(format!(".maxnreg {r}"));
        }
    }
    lines
}

/// `ptx` with the contract directives (`.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`) of
/// every entry removed (its other header directives written one per line, as [`with_contract`]
/// writes them), everything else kept byte for byte: what [`with_contract`] with `None` does to
/// each entry, in one pass over the module (a module of hundreds of entries is tens of
/// megabytes; one edit per entry would copy it once per entry).
///
/// # Errors
/// An entry without an end.
pub fn without_contracts(ptx: &str) -> Result<String, PtxEditError> {
    let mut out = String::with_capacity(ptx.len());
    let mut from = 0;
    for span in entry_spans(ptx)? {
        out.push_str(&ptx[from..span.directives.start]);
        out.push('\n');
        for l in directive_lines(&header_directives(&ptx[span.directives.clone()]), None) {
            out.push_str(&l);
            out.push('\n');
        }
        from = span.directives.end;
    }
    out.push_str(&ptx[from..]);
    Ok(out)
}

/// `ptx` with every entry definition but `entry` removed, so that ptxas compiles that one only.
/// Device functions, globals and declarations stay.
///
/// # Errors
/// No entry `entry`, or an entry without an end.
pub fn keep_entry(ptx: &str, entry: &str) -> Result<String, PtxEditError> {
    let spans = entry_spans(ptx)?;
    find_span(ptx, &spans, entry)?;
    let mut out = String::with_capacity(ptx.len());
    let mut from = 0;
    for s in spans.iter().filter(|s| &ptx[s.name.clone()] != entry) {
        out.push_str(&ptx[from..s.start]);
        from = s.end;
    }
    out.push_str(&ptx[from..]);
    Ok(out)
}

/// The span of entry `entry`, or [`PtxEditError::NoEntry`].
fn find_span<'s>(ptx: &str, spans: &'s [EntrySpan], entry: &str) -> Result<&'s EntrySpan, PtxEditError> {
    spans.iter().find(|s| &ptx[s.name.clone()] == entry).ok_or_else(|| PtxEditError::NoEntry {
        entry: entry.to_string(),
        entries: spans.iter().map(|s| ptx[s.name.clone()].to_string()).collect(),
    })
}

pub(crate) mod calls;

#[cfg(test)]
mod tests;

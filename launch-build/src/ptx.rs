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
    let existing = header_directives(&ptx[span.directives.clone()]);
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

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\
.version 8.8
.target sm_90
.address_size 64

.visible .entry poly_eval_lb256x4(
\t.param .u64 .ptr .align 1 poly_eval_lb256x4_param_0,
\t.param .u32 poly_eval_lb256x4_param_2
)
.maxntid 256, 1, 1
.minnctapersm 4
{
\tret;
}
.visible .entry poly_eval(
\t.param .u32 poly_eval_param_2
)
{
}
.visible .entry capped(
)
.maxnreg 32
{
}
.entry _Z4tmplILi8EEvPi(
)
.reqntid 16, 2, 1
{
}
";

    #[test]
    fn directives_are_read_per_entry() {
        let e = entries(PTX);
        let names: Vec<&str> = e.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["poly_eval_lb256x4", "poly_eval", "capped", "_Z4tmplILi8EEvPi"]);
        assert_eq!(e[0].maxntid, Some([256, 1, 1]));
        assert_eq!(e[0].minnctapersm, Some(4));
        assert_eq!(e[1], EntryDirectives { name: "poly_eval".into(), ..Default::default() });
        assert_eq!(e[2].maxnreg, Some(32));
        assert_eq!(e[3].reqntid, Some([16, 2, 1]));
        assert_eq!(version(PTX), Some("8.8"));
    }

    #[test]
    fn contracts_follow_the_directives() {
        let e = entries(PTX);
        let c = e[0].contract(ContractSource::LaunchBounds).unwrap();
        assert_eq!((c.threads, c.min_blocks, c.max_regs, c.exact), (Some(256), Some(4), None, false));
        assert_eq!(e[1].contract(ContractSource::LaunchBounds), None);
        let c = e[2].contract(ContractSource::LaunchBounds).unwrap();
        assert_eq!((c.threads, c.max_regs), (None, Some(32)));
        let c = e[3].contract(ContractSource::LaunchBounds).unwrap();
        assert_eq!((c.threads, c.exact), (Some(32), true));
    }

    #[test]
    fn overflowing_dimensions_neither_panic_nor_read_as_bounds() {
        // Was "attempt to multiply with overflow" from the public API.
        let e = entries(".visible .entry )\n.maxntid 4,4294967295");
        assert_eq!(e[0].maxntid, None, "a block of 2^34 threads is no bound");
        assert_eq!(e[0].contract(ContractSource::LaunchBounds), None);
        let e = entries(".entry k(\n.reqntid 65536, 65536, 2\n.maxnreg 99999999999\n{");
        assert_eq!((e[0].reqntid, e[0].maxnreg), (None, None));
        // Directives built by hand (the fields are public) saturate instead.
        let d = EntryDirectives { maxntid: Some([4, u32::MAX, 2]), ..Default::default() };
        assert_eq!(d.contract(ContractSource::LaunchBounds).unwrap().threads, Some(u32::MAX));
        assert_eq!(entries(".entry k(\n.maxntid 1024, 1, 1\n{")[0].maxntid, Some([1024, 1, 1]));
    }

    fn bounds(threads: Option<u32>, min_blocks: Option<u32>, max_regs: Option<u32>) -> Contract {
        Contract { source: ContractSource::LaunchBounds, threads, min_blocks, max_regs, exact: false }
    }

    /// The directives `entries` reads back for `name` after an edit.
    fn read_back(ptx: &str, name: &str) -> EntryDirectives {
        entries(ptx).into_iter().find(|e| e.name == name).expect("entry still there")
    }

    #[test]
    fn a_contract_replaces_the_directives_of_one_entry_only() {
        let c = bounds(Some(1024), Some(2), None);
        let out = with_contract(PTX, "poly_eval_lb256x4", Some(&c), None).unwrap();
        let e = read_back(&out, "poly_eval_lb256x4");
        assert_eq!((e.maxntid, e.minnctapersm, e.maxnreg), (Some([1024, 1, 1]), Some(2), None));
        assert!(out.contains("poly_eval_lb256x4_param_2\n)\n.maxntid 1024, 1, 1\n.minnctapersm 2\n{\n\tret;"), "{out}");
        // The others are byte for byte as they were.
        let rest = |p: &str| p[p.find(".visible .entry poly_eval(").unwrap()..].to_string();
        assert_eq!(rest(&out), rest(PTX));
        assert_eq!(entries(&out).len(), 4);
    }

    #[test]
    fn an_entry_without_directives_gains_them_and_none_removes_them() {
        let c = bounds(Some(256), None, Some(64));
        let out = with_contract(PTX, "poly_eval", Some(&c), None).unwrap();
        let e = read_back(&out, "poly_eval");
        assert_eq!((e.maxntid, e.minnctapersm, e.maxnreg), (Some([256, 1, 1]), None, Some(64)));
        assert_eq!(e.contract(ContractSource::LaunchBounds), Some(c));
        let cleared = with_contract(&out, "poly_eval", None, None).unwrap();
        assert_eq!(cleared, PTX, "removing what was added gives the module back");
        let cleared = with_contract(PTX, "poly_eval_lb256x4", None, None).unwrap();
        assert_eq!(
            read_back(&cleared, "poly_eval_lb256x4"),
            EntryDirectives { name: "poly_eval_lb256x4".into(), ..Default::default() }
        );
        // `max_regs` alone; `min_blocks` without threads is not written (ptxas ignores it).
        let out = with_contract(PTX, "capped", Some(&bounds(None, Some(3), Some(40))), None).unwrap();
        let e = read_back(&out, "capped");
        assert_eq!((e.maxntid, e.minnctapersm, e.maxnreg), (None, None, Some(40)));
    }

    #[test]
    fn exact_contracts_write_reqntid_and_keep_the_entrys_own_dimensions() {
        let exact = Contract { exact: true, ..bounds(Some(32), None, None) };
        let out = with_contract(PTX, "_Z4tmplILi8EEvPi", Some(&exact), None).unwrap();
        assert_eq!(read_back(&out, "_Z4tmplILi8EEvPi").reqntid, Some([16, 2, 1]), "same product: 16 × 2 kept");
        let out = with_contract(PTX, "_Z4tmplILi8EEvPi", Some(&Contract { threads: Some(64), ..exact }), None).unwrap();
        assert_eq!(read_back(&out, "_Z4tmplILi8EEvPi").reqntid, Some([64, 1, 1]));
        // An @launch contract is built as `__launch_bounds__`: `.maxntid`, as the build writes it.
        let annotation = Contract { source: ContractSource::Annotation, ..exact };
        let e = read_back(&with_contract(PTX, "poly_eval", Some(&annotation), None).unwrap(), "poly_eval");
        assert_eq!((e.maxntid, e.reqntid), (Some([32, 1, 1]), None));
    }

    #[test]
    fn directives_on_the_header_lines_across_lines_and_with_comments_are_replaced() {
        // On the `)` line, split over lines, a comment, `{` on the last directive's line, and a
        // directive that is not a bound (kept).
        let ptx = ".version 8.8\n.visible .entry k(\n.param .u32 k_p // (x)\n) .maxntid 128,\n  2, 1 /* old */ .explicitcluster\n.minnctapersm 4 .maxnreg 99 {\nret;\n}\n";
        let out = with_contract(ptx, "k", Some(&bounds(Some(512), None, Some(32))), None).unwrap();
        assert_eq!(
            out,
            ".version 8.8\n.visible .entry k(\n.param .u32 k_p // (x)\n)\n.explicitcluster\n.maxntid 512, 1, 1\n.maxnreg 32\n{\nret;\n}\n"
        );
        // No parameter list at all, and a body with nested blocks and braces in comments.
        let ptx = ".entry k .maxntid 64 {\n{ .reg .b32 r; } // }\n}\n.entry j()\n{\n}\n";
        let out = with_contract(ptx, "k", None, None).unwrap();
        assert_eq!(out, ".entry k\n{\n{ .reg .b32 r; } // }\n}\n.entry j()\n{\n}\n");
        assert_eq!(entries(&out).iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["k", "j"]);
    }

    #[test]
    fn renaming_leaves_the_other_entries_alone() {
        let out =
            with_contract(PTX, "poly_eval", Some(&bounds(Some(256), None, None)), Some("poly_eval__t256")).unwrap();
        let names: Vec<String> = entries(&out).into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["poly_eval_lb256x4", "poly_eval__t256", "capped", "_Z4tmplILi8EEvPi"]);
        assert!(
            out.contains(".visible .entry poly_eval__t256(\n\t.param .u32 poly_eval_param_2\n)\n.maxntid 256, 1, 1\n{")
        );
        assert_eq!(with_contract(PTX, "poly_eval", None, Some("poly_eval")).unwrap(), PTX, "its own name is no clash");
        assert_eq!(
            with_contract(PTX, "poly_eval", None, Some("capped")),
            Err(PtxEditError::NameTaken { name: "capped".into() })
        );
        for bad in ["", "1k", "a-b", "%", "k k"] {
            assert_eq!(
                with_contract(PTX, "poly_eval", None, Some(bad)),
                Err(PtxEditError::InvalidName { name: bad.into() }),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn edits_of_an_entry_that_is_not_there_or_never_ends_are_typed_errors() {
        let e = with_contract(PTX, "nope", None, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the PTX has no entry `nope`; its entries: poly_eval_lb256x4, poly_eval, capped, _Z4tmplILi8EEvPi"
        );
        // A declaration is no definition.
        let decl = ".extern .entry k(\n.param .u32 p\n);\n";
        assert!(
            matches!(with_contract(decl, "k", None, None), Err(PtxEditError::NoEntry { entries, .. }) if entries.is_empty())
        );
        for broken in [".version 8.8\n.entry k(\n.param .u32 p\n", ".entry k()\n{\n{\n}\n", ".entry k()\n.maxntid 1\n"]
        {
            assert_eq!(
                with_contract(broken, "k", None, None),
                Err(PtxEditError::Unterminated {
                    entry: "k".into(),
                    line: if broken.starts_with(".version") { 2 } else { 1 }
                }),
                "{broken:?}"
            );
        }
    }

    #[test]
    fn keep_entry_leaves_one_entry_and_everything_else() {
        let ptx = ".version 8.8\n.global .u32 g;\n.func f()\n{\nret;\n}\n.visible .entry a()\n{\n{ ret; }\n}\n.visible .entry b()\n.maxntid 32, 1, 1\n{\nret;\n}\n";
        let out = keep_entry(ptx, "b").unwrap();
        assert_eq!(out, ".version 8.8\n.global .u32 g;\n.func f()\n{\nret;\n}\n\n.visible .entry b()\n.maxntid 32, 1, 1\n{\nret;\n}\n");
        assert_eq!(
            keep_entry(ptx, "a").unwrap(),
            ".version 8.8\n.global .u32 g;\n.func f()\n{\nret;\n}\n.visible .entry a()\n{\n{ ret; }\n}\n\n"
        );
        assert!(matches!(keep_entry(ptx, "f"), Err(PtxEditError::NoEntry { .. })), "a device function is no entry");
    }
}

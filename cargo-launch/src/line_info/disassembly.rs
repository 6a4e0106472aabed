//! Reading `nvdisasm -gi -c`, for both line-info passes: which source line (and inline frames)
//! each instruction of each code section comes from.

use std::collections::BTreeMap;
use std::path::Path;

/// A source line: the file (relative to the package root where it lies under it) and the line.
pub type Place = (String, u32);

/// Where an instruction comes from: its source line and, for code inlined from a function, the
/// lines it was inlined at, the innermost caller first.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct At {
    pub place: Place,
    pub inlined_at: Vec<Place>,
}

/// Walks `nvdisasm -gi -c` text: `each(symbol, at, line)` for every instruction line
/// (`/*0040*/ …`) of a code section, with the source location nvdisasm gave it (`None` before the
/// section's first line comment). Both `--spills` and `--pressure` read the disassembly here.
///
/// With `-gi`, code inlined from a function is preceded by one comment per frame, the innermost
/// first, each but the outermost ending `inlined at "<file>", line <N>`; the next comment is then
/// the caller's own location. A comment without that clause ends the frames: the next one starts
/// a new location. Without `-i` every comment is a location of its own.
pub fn walk(sass: &str, root: &Path, mut each: impl FnMut(&str, Option<&At>, &str)) {
    let mut symbol: Option<String> = None;
    let mut at: Option<At> = None;
    // Whether the last comment said `inlined at`, and no instruction came since: the next comment
    // is its caller.
    let mut caller_next = false;
    // The same few files recur on every line comment: each is made relative once.
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for l in sass.lines() {
        let t = l.trim_start();
        if let Some(rest) = section_directive(t) {
            symbol = section_symbol(rest);
            (at, caller_next) = (None, false);
        } else if let Some(rest) = t.strip_prefix("//## File \"") {
            let Some((file, line)) = line_comment(rest) else {
                (at, caller_next) = (None, false);
                continue;
            };
            let name = names.entry(file.to_string()).or_insert_with(|| relative(file, root)).clone();
            match (&mut at, caller_next) {
                (Some(a), true) => a.inlined_at.push((name, line)),
                _ => at = Some(At { place: (name, line), inlined_at: Vec::new() }),
            }
            caller_next = rest.contains("inlined at \"");
        } else if t.starts_with("/*") {
            caller_next = false;
            if let Some(sym) = &symbol {
                each(sym, at.as_ref(), t);
            }
        }
    }
}

/// The operands of a `.section` directive; `None` for any other line, `.sectioninfo` (which
/// nvdisasm writes after an sm_80 cubin's `.section` of CUDA 13) included.
pub fn section_directive(t: &str) -> Option<&str> {
    t.strip_prefix(".section").filter(|rest| rest.starts_with(char::is_whitespace))
}

/// ` .text.poly_eval,"ax",@progbits` → `poly_eval`; other sections → `None`.
pub fn section_symbol(rest: &str) -> Option<String> {
    let name = rest.trim_start().strip_prefix(".text.")?;
    let end = name.find(|c: char| c == ',' || c.is_whitespace()).unwrap_or(name.len());
    (end > 0).then(|| name[..end].to_string())
}

/// `/abs/poly.cuh", line 21` (after `//## File "`) → `("/abs/poly.cuh", 21)`.
fn line_comment(rest: &str) -> Option<(&str, u32)> {
    let (file, after) = rest.split_once('"')?;
    let after = after.trim_start().strip_prefix(',')?.trim_start().strip_prefix("line")?.trim_start();
    let digits = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
    let line = after[..digits].parse().ok()?;
    (line > 0).then_some((file, line))
}

/// `file` relative to `root` when it lies under it (`/`-separated), else as it is.
fn relative(file: &str, root: &Path) -> String {
    let p = Path::new(file);
    let joined = |rel: &Path| rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
    let canonical = root.canonicalize().ok();
    for base in std::iter::once(root).chain(canonical.as_deref()) {
        if let Ok(rel) = p.strip_prefix(base) {
            return joined(rel);
        }
    }
    file.to_string()
}

//! Which branches of conditional directives NVRTC never compiles (`#ifndef __CUDA_ARCH__`,
//! `#if 0`, ...), as far as that can be told without preprocessing.

use super::scan::is_ident;

/// Macros NVRTC always defines: it compiles device code only, so `__CUDA_ARCH__` is set, and
/// it is the runtime compiler (`__CUDACC_RTC__`) of CUDA C++ (`__CUDACC__`).
const NVRTC_DEFINED: &[&str] = &["__CUDA_ARCH__", "__CUDACC_RTC__", "__CUDACC__"];

/// What a conditional directive's condition is for NVRTC, as far as it can be told without
/// preprocessing: only the forms that test [`NVRTC_DEFINED`] macros (and `#if 0`) are known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cond {
    True,
    False,
    Unknown,
}

/// `name` with no surrounding space, a single identifier.
fn ident(name: &str) -> Option<&str> {
    let name = name.trim();
    (!name.is_empty() && name.bytes().all(is_ident)).then_some(name)
}

/// `defined(X)`, `defined (X)` or `defined X`: the macro tested.
fn defined_operand(expr: &str) -> Option<&str> {
    let rest = expr.trim().strip_prefix("defined")?;
    let rest = rest.trim_start();
    match rest.strip_prefix('(') {
        Some(inner) => ident(inner.trim_end().strip_suffix(')')?),
        // Without parentheses a space must separate `defined` from the name (`definedX` is a
        // different identifier).
        None if rest.len() < expr.trim().len() - "defined".len() => ident(rest),
        None => None,
    }
}

/// The value of `#if EXPR` for NVRTC: `0`, `[!]defined(M)` for the macros NVRTC defines;
/// anything else is unknown.
fn if_condition(expr: &str) -> Cond {
    let expr = expr.trim();
    if expr == "0" {
        return Cond::False;
    }
    let (negated, operand) = match expr.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, expr),
    };
    match defined_operand(operand) {
        Some(m) if NVRTC_DEFINED.contains(&m) => {
            if negated {
                Cond::False
            } else {
                Cond::True
            }
        }
        _ => Cond::Unknown,
    }
}

/// `#ifdef M` (`defined = true`) or `#ifndef M` for NVRTC.
fn ifdef_condition(name: &str, defined: bool) -> Cond {
    match ident(name) {
        Some(m) if NVRTC_DEFINED.contains(&m) => {
            if defined {
                Cond::True
            } else {
                Cond::False
            }
        }
        _ => Cond::Unknown,
    }
}

/// One open `#if` group.
struct Group {
    /// Whether the code around the group is active.
    outer: bool,
    /// A branch so far is known to be taken: every later one is dead.
    taken: bool,
}

/// The byte ranges of `code` (a [`Scanned::code`](super::Scanned::code): comments and literals
/// blanked) that NVRTC never compiles: the branches of conditional directives that are known
/// false for it (see [`Cond`]). Branches whose condition is unknown count as compiled. Sorted,
/// disjoint; each starts and ends at a line start (or the end of the text). One pass over the
/// text.
pub(super) fn nvrtc_inactive(code: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut stack: Vec<Group> = Vec::new();
    let mut active = true;
    // Start of the inactive stretch in progress, if `!active`.
    let mut dead_from = 0;
    let mut at = 0;
    while at < code.len() {
        // One logical line: physical lines joined by a `\` before their newline.
        let mut end = at;
        loop {
            end = code[end..].find('\n').map_or(code.len(), |n| end + n);
            let physical = code[..end].strip_suffix('\r').unwrap_or(&code[..end]);
            if end < code.len() && physical.ends_with('\\') {
                end += 1;
                continue;
            }
            break;
        }
        let line = &code[at..end];
        let next = (end + 1).min(code.len());
        let directive = line.trim_start().strip_prefix('#').map(str::trim_start);
        let Some(directive) =
            directive.filter(|d| d.starts_with("if") || d.starts_with("el") || d.starts_with("endif"))
        else {
            at = next;
            continue;
        };
        // Only conditional directives get here: joining their continuation lines costs their length.
        let directive = directive.replace("\\\r\n", " ").replace("\\\n", " ");
        let keyword_len = directive.bytes().take_while(|&c| is_ident(c)).count();
        let (keyword, rest) = directive.split_at(keyword_len);
        let was_active = active;
        match keyword {
            "if" | "ifdef" | "ifndef" => {
                let cond = match keyword {
                    "if" => if_condition(rest),
                    "ifdef" => ifdef_condition(rest, true),
                    _ => ifdef_condition(rest, false),
                };
                stack.push(Group { outer: active, taken: cond == Cond::True });
                active = active && cond != Cond::False;
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                if let Some(g) = stack.last_mut() {
                    let cond = match keyword {
                        "elif" => if_condition(rest),
                        "elifdef" => ifdef_condition(rest, true),
                        "elifndef" => ifdef_condition(rest, false),
                        _ => Cond::True,
                    };
                    active = g.outer && !g.taken && cond != Cond::False;
                    g.taken |= cond == Cond::True;
                }
            }
            "endif" => {
                if let Some(g) = stack.pop() {
                    active = g.outer;
                }
            }
            _ => {}
        }
        // The directive lines themselves hold no code; a dead stretch runs from the line after
        // the directive that starts it to the line of the one that ends it.
        if was_active && !active {
            dead_from = next;
        } else if !was_active && active && at > dead_from {
            ranges.push(dead_from..at);
        }
        at = next;
    }
    // An unterminated group is dead to the end of the file.
    if !active && code.len() > dead_from {
        ranges.push(dead_from..code.len());
    }
    ranges
}

//! The call graph of a PTX module, for one question: can an entry's stack be sized statically?
//! It cannot when the entry reaches a cycle of calls (recursion, direct or mutual) through a
//! function with a stack frame: each level of the recursion takes another frame, and how many
//! levels run is known only at run time. ptxas 13.5 says so for such an entry ("Stack size for
//! entry function … cannot be statically determined") and the driver then reports no local memory
//! for it; ptxas 12.9 and 13.0 say nothing. This module finds the same entries from the PTX, for
//! every toolchain.
//!
//! Only direct calls are edges: an indirect call (`call %rd, …, prototype`) names no target, and
//! ptxas does not count it as dynamic either (measured on the H200: a kernel whose function
//! pointer reaches frame-less functions has a static stack).

use std::collections::{BTreeMap, BTreeSet};

/// Why an entry's stack is not static: the cycle of calls it reaches, in call order, starting at
/// the first function of the cycle on the entry's path (mangled names, as in the PTX).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recursion {
    /// The functions of the cycle (`[fib]` for direct recursion, `[even, odd]` for mutual).
    pub cycle: Vec<String>,
}

/// For each `.entry` of `ptx` whose stack cannot be sized statically, the cycle that makes it so.
/// `frame` is ptxas's stack frame of a function (`Function properties for …`): a cycle only
/// through frame-less functions costs nothing per level and does not count; a function ptxas did
/// not report counts as having a frame.
pub fn recursive_entries(ptx: &str, frame: impl Fn(&str) -> Option<u32>) -> BTreeMap<String, Recursion> {
    // Most modules call nothing (everything inlined): no need to read them word by word (a
    // module of hundreds of kernels is tens of megabytes, and build scripts run unoptimised).
    // Nor does one that defines no function: an entry is never called, so calls to `.extern`
    // functions alone (vprintf, __assertfail) make no cycle. (candle's GGUF modules: 9 MB each.)
    if !ptx.contains("call") || !defines_a_function(ptx) {
        return BTreeMap::new();
    }
    let graph = Graph::of(ptx);
    let costs = |f: &str| frame(f).is_none_or(|bytes| bytes > 0);
    let mut out = BTreeMap::new();
    for entry in &graph.entries {
        if let Some(cycle) = graph.cycle_from(entry, &costs) {
            out.insert(entry.clone(), Recursion { cycle });
        }
    }
    out
}

/// Whether `ptx` declares or defines a `.func` that is not `.extern` (a declaration too, to err on
/// the side of reading the module).
fn defines_a_function(ptx: &str) -> bool {
    ptx.match_indices(".func").any(|(at, _)| {
        let line = ptx[..at].rfind('\n').map_or(0, |i| i + 1);
        !ptx[line..at].contains(".extern")
    })
}

/// The functions and entries defined in a module, and whom each calls directly.
#[derive(Debug, Default)]
struct Graph {
    entries: Vec<String>,
    calls: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    fn of(ptx: &str) -> Graph {
        let tokens = tokens(ptx);
        let mut g = Graph::default();
        let mut i = 0;
        while i < tokens.len() {
            let kind = tokens[i];
            if kind != ".entry" && kind != ".func" {
                i += 1;
                continue;
            }
            // `.func (.param .b32 r) name (params) … { body }` or a declaration ending in `;`.
            let mut j = i + 1;
            if tokens.get(j) == Some(&"(") {
                j = skip_group(&tokens, j);
            }
            let Some(&name) = tokens.get(j) else { break };
            let mut k = j + 1;
            while k < tokens.len()
                && tokens[k] != "{"
                && tokens[k] != ";"
                && tokens[k] != ".entry"
                && tokens[k] != ".func"
            {
                k += 1;
            }
            if tokens.get(k) != Some(&"{") {
                i = k.max(i + 1);
                continue;
            }
            let end = skip_group(&tokens, k);
            if kind == ".entry" {
                g.entries.push(name.to_string());
            }
            let callees = g.calls.entry(name.to_string()).or_default();
            callees.extend(direct_calls(&tokens[k..end]).into_iter().map(String::from));
            i = end;
        }
        g
    }

    /// The first cycle of costly functions reachable from `entry`, depth first in name order.
    fn cycle_from(&self, entry: &str, costs: &impl Fn(&str) -> bool) -> Option<Vec<String>> {
        let mut path: Vec<&str> = Vec::new();
        let mut done: BTreeSet<&str> = BTreeSet::new();
        self.walk(entry, costs, &mut path, &mut done)
    }

    fn walk<'a>(
        &'a self,
        f: &'a str,
        costs: &impl Fn(&str) -> bool,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| *p == f) {
            let cycle = &path[at..];
            return cycle.iter().any(|c| costs(c)).then(|| cycle.iter().map(|c| c.to_string()).collect());
        }
        if done.contains(f) {
            return None;
        }
        path.push(f);
        for callee in self.calls.get(f).into_iter().flatten() {
            if let Some(found) = self.walk(callee, costs, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(f);
        None
    }
}

/// The targets of the direct `call`s in a body: `call[.uni] [(ret),] target, …`.
fn direct_calls<'a>(body: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (i, t) in body.iter().enumerate() {
        if *t != "call" && !t.starts_with("call.") {
            continue;
        }
        let mut j = i + 1;
        if body.get(j) == Some(&"(") {
            j = skip_group(body, j);
            if body.get(j) == Some(&",") {
                j += 1;
            }
        }
        match body.get(j) {
            Some(target) if is_identifier(target) => out.push(*target),
            _ => {} // `%rd4`: an indirect call, or something this reader does not know.
        }
    }
    out
}

/// A PTX identifier that can name a function (not a register, not punctuation).
fn is_identifier(t: &str) -> bool {
    let mut chars = t.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// The index after the group opened at `open` (`(`…`)` or `{`…`}`, nested); the end of `tokens`
/// when it is not closed.
fn skip_group(tokens: &[&str], open: usize) -> usize {
    let (o, c) = if tokens[open] == "{" { ("{", "}") } else { ("(", ")") };
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        if *t == o {
            depth += 1;
        } else if *t == c {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
    }
    tokens.len()
}

/// PTX as words and punctuation, without comments and string literals.
fn tokens(ptx: &str) -> Vec<&str> {
    let b = ptx.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = ptx[i..].find('\n').map_or(b.len(), |n| i + n);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = ptx[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
            }
            b'"' => {
                i = ptx[i + 1..].find('"').map_or(b.len(), |n| i + 1 + n + 1);
            }
            b'(' | b')' | b'{' | b'}' | b',' | b';' | b'[' | b']' => {
                out.push(&ptx[i..i + 1]);
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                let start = i;
                while i < b.len() && !b"(){},;[]\"".contains(&b[i]) && !b[i].is_ascii_whitespace() {
                    if b[i] == b'/' && matches!(b.get(i + 1), Some(b'/' | b'*')) {
                        break;
                    }
                    i += 1;
                }
                out.push(&ptx[start..i]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;

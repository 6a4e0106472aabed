//! Notes for ptxas's errors: ptxas points into the PTX under `OUT_DIR`, which the user never
//! wrote; each PTX line it complains about gets a note naming the kernel (or device function) and
//! the source line it comes from.

use super::Job;
use crate::{names, source};

/// `log` followed by one note per PTX line that ptxas complains about: which kernel (or device
/// function) that line belongs to, and where it comes from in the source: the `.loc` before it
/// when the PTX has line info, else the kernel's definition. ptxas's own locations point into a
/// generated file under `OUT_DIR` that the user never wrote.
pub fn with_ptx_notes(job: &Job, ptx: &str, log: &str) -> String {
    let notes = ptx_notes(job, ptx, log);
    if notes.is_empty() {
        return log.to_string();
    }
    let mut out = log.trim_end().to_string();
    for n in notes {
        out.push('\n');
        out.push_str(&n);
    }
    out.push('\n');
    out
}

fn ptx_notes(job: &Job, ptx: &str, log: &str) -> Vec<String> {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut notes = Vec::new();
    let mut defs = None;
    for l in log.lines() {
        let Some(n) = located_ptx_line(l) else { continue };
        if n == 0 || n > lines.len() || !seen.insert(n) {
            continue;
        }
        let text = lines[n - 1].trim();
        let mut function = None;
        let mut loc = None;
        let mut inline_asm = false;
        let mut asm_decided = false;
        for prev in lines[..n - 1].iter().rev().map(|l| l.trim()) {
            if !asm_decided && prev.starts_with("// end inline asm") {
                asm_decided = true;
            } else if !asm_decided && prev.starts_with("// begin inline asm") {
                (inline_asm, asm_decided) = (true, true);
            }
            if loc.is_none() && prev.starts_with(".loc") {
                loc = loc_of(prev, ptx);
            }
            if let Some(f) = function_header(prev) {
                function = Some(f);
                break;
            }
        }
        let what = if inline_asm { "an `asm` statement" } else { "the code" };
        let shown = if text.chars().count() > 80 {
            format!("{}…", text.chars().take(80).collect::<String>())
        } else {
            text.to_string()
        };
        let Some((kind, symbol)) = function else {
            notes.push(format!("{}: note: PTX line {n} (`{shown}`) is outside every kernel", job.file.source.file));
            continue;
        };
        let display = names::demangle(symbol);
        let base = names::source_name(symbol);
        let defs = defs.get_or_insert_with(|| {
            let scanned = source::scan(job.text);
            source::kernels(job.text, &scanned)
        });
        let def = (kind == "kernel").then(|| defs.iter().find(|d| d.name == base || d.name == symbol)).flatten();
        let (at, whence) = match (loc, def) {
            (Some(loc), _) => (loc, format!("comes from {what} here, in {kind} `{display}`")),
            (None, Some(d)) => (
                format!("{}:{}:{}", job.file.source.file, d.line, d.col),
                format!("comes from {what} in {kind} `{display}`, defined here"),
            ),
            (None, None) => (job.file.source.file.clone(), format!("comes from {what} in {kind} `{display}`")),
        };
        notes.push(format!("{at}: note: PTX line {n} (`{shown}`) {whence}"));
    }
    notes
}

/// `ptxas /…/work/k.ptx, line 16; error   : …` → `16`.
fn located_ptx_line(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("ptxas ")?;
    let (path, rest) = rest.split_once(", line ")?;
    if !path.ends_with(".ptx") {
        return None;
    }
    rest.split_once(';')?.0.trim().parse().ok()
}

/// `.visible .entry name(` → `("kernel", "name")`; `.func (.param .b32 r) name(` → `("device function", "name")`.
fn function_header(line: &str) -> Option<(&'static str, &str)> {
    let mut rest = line;
    loop {
        let t = rest.trim_start();
        match [".visible", ".weak", ".extern"].iter().find_map(|p| t.strip_prefix(p)) {
            Some(r) if r.starts_with(char::is_whitespace) => rest = r,
            _ => {
                rest = t;
                break;
            }
        }
    }
    let (kind, after) = if let Some(r) = rest.strip_prefix(".entry") {
        ("kernel", r)
    } else if let Some(r) = rest.strip_prefix(".func") {
        ("device function", r)
    } else {
        return None;
    };
    if !after.starts_with(char::is_whitespace) {
        return None;
    }
    let mut after = after.trim_start();
    // A device function's return parameters come before its name.
    if after.starts_with('(') {
        after = after[after.find(')')? + 1..].trim_start();
    }
    let end = after.find(|c: char| c == '(' || c == ';' || c.is_whitespace()).unwrap_or(after.len());
    (end > 0).then(|| (kind, &after[..end]))
}

/// `.loc 1 17 5` → `kernels/a.cu:17:5`, the file named by the module's `.file 1 "…"`.
fn loc_of(line: &str, ptx: &str) -> Option<String> {
    let mut f = line.split_whitespace().skip(1);
    let (file, row, col) = (f.next()?, f.next()?, f.next().unwrap_or("0"));
    let row: u32 = row.trim_end_matches(',').parse().ok()?;
    let col: u32 = col.trim_end_matches(',').parse().unwrap_or(0);
    let name = ptx.lines().find_map(|l| {
        let mut w = l.trim().splitn(3, char::is_whitespace);
        (w.next()? == ".file" && w.next()? == file).then(|| w.next()).flatten()
    })?;
    let name = name.trim().split('"').nth(1)?;
    Some(if col > 0 { format!("{name}:{row}:{col}") } else { format!("{name}:{row}") })
}

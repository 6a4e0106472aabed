//! Markdown as the checks read it: fenced code blocks (with the line just before each, where a
//! `<!-- run: ... -->` marker goes) and link targets outside code. A small reader of the subset
//! the book uses (CommonMark fences and inline or reference links), not a full parser.

/// A fenced code block.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The info string: `rust`, `toml,error`, `console`...
    pub info: String,
    /// The text between the fences, the fence's indentation removed, each line ending in `\n`.
    pub text: String,
    /// The line just before the fence, trimmed (empty at the top of the file).
    pub before: String,
    /// 0-based lines of the body: `body.0..body.1` (for rewriting a block in place).
    pub body: (usize, usize),
    /// The fence's indentation (a block in a list item), put back on a rewritten body.
    pub indent: usize,
}

impl Block {
    /// The first word of the info string: `toml` for `toml,error`.
    pub fn lang(&self) -> &str {
        self.info.split([',', ' ']).next().unwrap_or("")
    }

    /// Whether the info string carries `flag` after the language (`error` in `toml,error`).
    pub fn has(&self, flag: &str) -> bool {
        self.info.split([',', ' ']).skip(1).any(|f| f == flag)
    }
}

/// The fenced code blocks of `md`, in order. An unclosed fence runs to the end, as in CommonMark.
pub fn blocks(md: &str) -> Vec<Block> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((indent, fence, info)) = opening(lines[i]) else {
            i += 1;
            continue;
        };
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !closes(lines[end], &fence) {
            end += 1;
        }
        let text: String = lines[start..end].iter().map(|l| format!("{}\n", strip_indent(l, indent))).collect();
        let before = if i == 0 { String::new() } else { lines[i - 1].trim().to_string() };
        out.push(Block { line: i + 1, info, text, before, body: (start, end), indent });
        i = end + 1;
    }
    out
}

/// `md` with the bodies of some of its blocks replaced (`(block, new text)`, blocks of `md` in
/// order), each line indented as its fence is.
pub fn replace_bodies(md: &str, new: &[(Block, String)]) -> String {
    let mut lines: Vec<String> = md.lines().map(str::to_string).collect();
    for (block, text) in new.iter().rev() {
        let pad = " ".repeat(block.indent);
        let body = text.lines().map(|l| if l.is_empty() { String::new() } else { format!("{pad}{l}") });
        lines.splice(block.body.0..block.body.1, body);
    }
    lines.join("\n") + "\n"
}

/// `(indentation, fence, info string)` when `line` opens a fenced block.
fn opening(line: &str) -> Option<(usize, String, String)> {
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    let ch = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = trimmed.chars().take_while(|c| *c == ch).count();
    if n < 3 {
        return None;
    }
    let info = trimmed[n..].trim();
    // A backtick fence's info string holds no backtick (that is inline code).
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some((indent, trimmed[..n].to_string(), info.to_string()))
}

fn closes(line: &str, fence: &str) -> bool {
    let t = line.trim();
    let ch = fence.chars().next().unwrap_or('`');
    t.len() >= fence.len() && t.chars().all(|c| c == ch)
}

fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(indent)..]
}

/// The link targets of `md` outside code, with their 1-based lines: inline links and images
/// (`[text](target "title")`) and reference definitions (`[name]: target`).
pub fn links(md: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = md.lines().collect();
    let mut in_code = vec![false; lines.len()];
    for b in blocks(md) {
        for flag in in_code.iter_mut().take(b.body.1 + 1).skip(b.line - 1) {
            *flag = true;
        }
    }
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if in_code[i] {
            continue;
        }
        let line = without_code_spans(line);
        if let Some(target) = reference_definition(&line) {
            out.push((i + 1, target));
            continue;
        }
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let after = after.strip_prefix('<').unwrap_or(after);
            let end = after.find([')', ' ', '>']).unwrap_or(after.len());
            if end > 0 {
                out.push((i + 1, after[..end].to_string()));
            }
            rest = &after[end..];
        }
    }
    out
}

/// `line` with its inline code spans (`` `...` ``) blanked, so a `](` inside one is no link.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for (n, part) in line.split('`').enumerate() {
        if n % 2 == 0 {
            out.push_str(part);
        } else {
            out.push_str(&" ".repeat(part.len() + 2));
        }
    }
    out
}

/// The target of a reference definition, `[name]: target`.
fn reference_definition(line: &str) -> Option<String> {
    let t = line.trim_start().strip_prefix('[')?;
    let close = t.find("]:")?;
    if close == 0 || t[..close].contains('[') {
        return None;
    }
    t[close + 2..].split_whitespace().next().map(|s| s.trim_matches(['<', '>']).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_info_strings_and_the_line_before() {
        let md = "# T\n<!-- run: fixture=ci -->\n```console\n$ cargo launch x\nout\n```\n\n- item\n  ```toml,error\n  a = 1\n  ```\n";
        let b = blocks(md);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!((b[0].line, b[0].lang(), b[0].before.as_str()), (3, "console", "<!-- run: fixture=ci -->"));
        assert_eq!(b[0].text, "$ cargo launch x\nout\n");
        assert_eq!((b[0].body.0, b[0].body.1), (3, 5));
        assert_eq!((b[1].lang(), b[1].has("error"), b[1].text.as_str()), ("toml", true, "a = 1\n"));
        // A longer fence holds a shorter one.
        let nested = blocks("````md\n```rust\nx\n```\n````\n");
        assert_eq!(nested.len(), 1);
        assert_eq!(nested[0].text, "```rust\nx\n```\n");
    }

    #[test]
    fn bodies_are_replaced_in_place_with_the_fence_indentation() {
        let md = "a\n```console\nold\n```\n- item\n  ```console\n  old 1\n  old 2\n  ```\nend\n";
        let b = blocks(md);
        let out = replace_bodies(md, &[(b[0].clone(), "new\n\nnew\n".into()), (b[1].clone(), "x\n".into())]);
        assert_eq!(out, "a\n```console\nnew\n\nnew\n```\n- item\n  ```console\n  x\n  ```\nend\n");
    }

    #[test]
    fn links_outside_code_only() {
        let md = "See [a](a.md#x) and ![i](img/p.png \"t\") and `[no](code.md)`.\n```\n[no](block.md)\n```\n[ref]: ../bench/README.md\n";
        let got: Vec<String> = links(md).into_iter().map(|(_, t)| t).collect();
        assert_eq!(got, ["a.md#x", "img/p.png", "../bench/README.md"]);
    }
}

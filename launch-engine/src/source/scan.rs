//! The scan every other reader starts from: comments and string literals blanked out of a
//! source (so no `__global__` or `#if` inside them counts), the comments kept with their lines,
//! and an index of line starts for offset → line:col lookups.

/// A comment, with its 1-based starting line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    /// First line of the comment.
    pub line: u32,
    /// Byte offset in the source.
    pub offset: usize,
    /// The comment text, delimiters included.
    pub text: String,
}

/// A source file with comments and string literals blanked out (newlines kept, so offsets and
/// line numbers stay those of the original).
pub struct Scanned {
    /// Source with comments and literals replaced by spaces.
    pub code: String,
    /// Every comment, in order.
    pub comments: Vec<Comment>,
    /// Where each line starts, for offset → line:col lookups.
    pub lines: LineIndex,
}

/// The byte offset at which each line starts. Built once per file, it turns every offset →
/// line:col lookup into a binary search, so scanning stays linear in the file's size however many
/// comments, kernels and annotations it holds (counting newlines from the start of the file for
/// each comment made a 5 MB file take over 15 minutes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes the lines of `src`.
    pub fn new(src: &str) -> LineIndex {
        let mut starts = vec![0];
        // `match_indices` finds each newline with a vectorised search, even in a debug build.
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// 1-based line of a byte offset (offsets past the end belong to the last line).
    pub fn line(&self, offset: usize) -> u32 {
        // partition_point counts the line starts at or before `offset`: at least 1 (offset 0).
        u32::try_from(self.starts.partition_point(|&s| s <= offset)).unwrap_or(u32::MAX)
    }

    /// Byte offset of the start of the line holding `offset`.
    pub fn line_start(&self, offset: usize) -> usize {
        self.starts[self.starts.partition_point(|&s| s <= offset).saturating_sub(1)]
    }

    /// Byte offset of the start of 1-based `line` (the end of the text's last line start if
    /// there is no such line).
    pub fn start_of_line(&self, line: u32) -> usize {
        let i = (line.max(1) - 1) as usize;
        self.starts.get(i).or(self.starts.last()).copied().unwrap_or(0)
    }

    /// 1-based column (in characters) of a byte offset of `src`, the text this index was built from.
    pub fn col(&self, src: &str, offset: usize) -> u32 {
        let offset = floor_char_boundary(src, offset);
        let start = self.line_start(offset).min(offset);
        u32::try_from(src[start..offset].chars().count()).map_or(u32::MAX, |c| c.saturating_add(1))
    }
}

/// The largest char boundary of `s` at or below `at`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Blanks comments, string and character literals.
pub fn scan(src: &str) -> Scanned {
    let lines = LineIndex::new(src);
    let b = src.as_bytes();
    let mut code = b.to_vec();
    let mut comments = Vec::new();
    let mut i = 0;
    // Spaces over `from..to`, newlines kept (filled a line at a time: a byte loop is slow in
    // the unoptimised builds that run build scripts' tests).
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        let mut at = from;
        for (n, _) in src[from..to].match_indices('\n') {
            code[at..from + n].fill(b' ');
            at = from + n + 1;
        }
        code[at..to].fill(b' ');
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                comments.push(Comment { line: lines.line(i), offset: i, text: src[i..end].to_string() });
                blank(&mut code, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                comments.push(Comment { line: lines.line(i), offset: i, text: src[i..end].to_string() });
                blank(&mut code, i, end);
                i = end;
            }
            q @ (b'"' | b'\'') => {
                let mut j = i + 1;
                while j < b.len() && b[j] != q && b[j] != b'\n' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                // Blank the literal's contents up to its closing quote, or up to the newline or end
                // of file that cut it short.
                let j = j.min(b.len());
                blank(&mut code, i + 1, j);
                i = if j < b.len() && b[j] == q { j + 1 } else { j };
            }
            _ => i += 1,
        }
    }
    // Whole comments and literal contents (each delimited by ASCII characters) were replaced by
    // spaces, so no multi-byte character was cut; the lossy path only guards against a bug here.
    let code = String::from_utf8(code).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Scanned { code, comments, lines }
}

#[cfg(test)]
/// 1-based line of a byte offset. Counts from the start of the text: for one-off lookups; use
/// [`Scanned::lines`] for many.
pub fn line_of(src: &str, offset: usize) -> u32 {
    let n = src.as_bytes()[..offset.min(src.len())].iter().filter(|&&c| c == b'\n').count();
    u32::try_from(n).map_or(u32::MAX, |n| n.saturating_add(1))
}

/// Whether `c` can be part of a C identifier.
pub(super) fn is_ident(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric()
}

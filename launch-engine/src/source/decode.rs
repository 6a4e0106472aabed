//! A kernel file's bytes as text, or a compiler-style error at the first byte NVRTC could not take.
//!
//! The text is the file as a C compiler's first translation phase sees it: a leading UTF-8
//! byte-order mark dropped (nvcc and GCC skip it; NVRTC would read it as a token, "unrecognized
//! token" at line 1) and CRLF and lone CR line ends made LF (GCC and nvcc take all three; a
//! raw line end inside a literal is an error in C either way). Every reader after this one —
//! the scan, `@launch`, `file:line:col` in messages, NVRTC itself — then counts the same lines and
//! columns, and a BOM is not a column. Form feeds and a missing final newline need nothing.

use crate::error::Diagnostic;

/// The UTF-8 byte-order mark, as Windows editors write it at the start of a file.
const BOM: char = '\u{feff}';

/// A kernel source's text, normalised as the module documentation says; for bytes that are not
/// UTF-8, the compiler-style error `file:line:col: error: not valid UTF-8 (byte 0xNN at offset N)`
/// pointing at the first of them.
pub fn decode(file: &str, bytes: Vec<u8>) -> Result<String, Diagnostic> {
    // NVRTC takes the source as a C string: a NUL byte would cut it short.
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        let (line, col) = position(&String::from_utf8_lossy(&bytes[..at]));
        return Err(Diagnostic::error(
            file,
            line,
            col,
            format!("a NUL byte (at offset {at}): kernel sources must be text without NUL bytes"),
        ));
    }
    String::from_utf8(bytes).map(normalise).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // Valid up to `at` by definition; the lossy form only guards against a bug here.
        let (line, col) = position(&String::from_utf8_lossy(&bytes[..at]));
        Diagnostic::error(
            file,
            line,
            col,
            format!("not valid UTF-8 (byte 0x{:02x} at offset {at}): kernel sources must be UTF-8 text", bytes[at]),
        )
    })
}

/// An included header's bytes as NVRTC takes them in memory: normalised as a kernel file is
/// (NVRTC reads a header from disk itself, and refuses a byte-order mark there and takes no lone
/// CR for a line end). Bytes that are not UTF-8 become U+FFFD.
pub fn normalise_header(bytes: &[u8]) -> String {
    normalise(String::from_utf8_lossy(bytes).into_owned())
}

/// `text` without a leading byte-order mark, with LF line ends only.
fn normalise(text: String) -> String {
    let text = match text.strip_prefix(BOM) {
        Some(rest) => rest.to_string(),
        None => text,
    };
    if !text.contains('\r') {
        return text;
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// 1-based line and column just after `before`, the start of a file, counted as in its decoded
/// text. (A CR at its very end counts as a line end: the byte after it, the bad one, is no LF.)
fn position(before: &str) -> (u32, u32) {
    let text = normalise(before.to_string());
    let line = text.bytes().filter(|&c| c == b'\n').count() + 1;
    let col = text[text.rfind('\n').map_or(0, |n| n + 1)..].chars().count() + 1;
    (count(line), count(col))
}

/// A line or column count as a diagnostic holds it.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

//! A kernel file's bytes as text, or a compiler-style error at the first byte NVRTC could not take.

use crate::error::Diagnostic;

/// A kernel source's text; for bytes that are not UTF-8, the compiler-style error
/// `file:line:col: error: not valid UTF-8 (byte 0xNN at offset N)` pointing at the first of them.
pub fn decode(file: &str, bytes: Vec<u8>) -> Result<String, Diagnostic> {
    // NVRTC takes the source as a C string: a NUL byte would cut it short.
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        let before = String::from_utf8_lossy(&bytes[..at]);
        let line = before.bytes().filter(|&c| c == b'\n').count() + 1;
        let col = before[before.rfind('\n').map_or(0, |n| n + 1)..].chars().count() + 1;
        return Err(Diagnostic::error(
            file,
            count(line),
            count(col),
            format!("a NUL byte (at offset {at}): kernel sources must be text without NUL bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // Valid up to `at` by definition; the lossy form only guards against a bug here.
        let good = String::from_utf8_lossy(&bytes[..at]);
        let line = good.bytes().filter(|&c| c == b'\n').count() + 1;
        let col = good[good.rfind('\n').map_or(0, |n| n + 1)..].chars().count() + 1;
        Diagnostic::error(
            file,
            count(line),
            count(col),
            format!("not valid UTF-8 (byte 0x{:02x} at offset {at}): kernel sources must be UTF-8 text", bytes[at]),
        )
    })
}

/// A line or column count as a diagnostic holds it.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

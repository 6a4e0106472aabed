//! What launch-build reads from kernel sources without compiling them: where each `__global__`
//! function is defined (for `file:line` in reports), the comments above it (for `@launch`), and
//! the headers a file includes (for `rerun-if-changed`).
//!
//! The scan ([`scan()`]) comes first: the other readers take its text, with comments and string
//! literals blanked.

/// Comments and literals blanked, line starts indexed.
mod scan;
#[cfg(test)]
pub use scan::line_of;
pub use scan::{scan, LineIndex, Scanned};

/// Bytes to text, or an error located at the first bad byte.
mod decode;
pub use decode::{decode, normalise_header};

/// `__global__` definitions.
mod kernels;
pub use kernels::{in_directive, kernels, KernelDef};

/// Conditional branches NVRTC never compiles.
mod conditionals;

/// Host code that NVRTC cannot compile.
mod host_code;
pub use host_code::{host_code, host_code_in_any_branch};

/// Host code reached through the crate's headers.
mod host_headers;
pub use host_headers::host_code_in_headers;

/// `#include`s, transitively.
mod includes;
mod known;
pub use includes::{dependencies, header_encoding, included};
pub use known::includes;
pub(crate) use known::{digest as header_digest, remember_in as remember_headers_in, save as save_headers};

#[cfg(test)]
pub(crate) mod tests;

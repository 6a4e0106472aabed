//! Small text helpers shared by the commands and renderers: kernel names and grouped numbers.

use launch_build::manifest::KernelEntry;

// The arithmetic's sentences live in the runtime crate, so the checked launch (`launch::cuda`)
// says exactly what `cargo launch check` says; numbers are grouped the same way everywhere.
pub use launch::analysis::group;

/// `1234567` → `1,234,567` (a count; the same grouping as [`group`]).
pub fn thousands(n: usize) -> String {
    group(n as u64)
}

/// `path/file.cu::name` of a kernel (manifests written before the field existed lack it).
pub fn qualified(k: &KernelEntry) -> String {
    if k.qualified.is_empty() {
        format!("{}::{}", k.file, k.name)
    } else {
        k.qualified.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A count is grouped as launch groups numbers (tested there), up to `u32::MAX`.
    #[test]
    fn counts_are_grouped_like_numbers() {
        assert_eq!(thousands(8693), group(8693u32));
        assert_eq!(thousands(u32::MAX as usize), "4,294,967,295");
    }
}

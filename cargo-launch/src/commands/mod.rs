//! The subcommands, one module each: what `lib.rs` dispatches a parsed command line to. A command
//! takes its `cli` arguments, uses the services (`toolchain`, `cargo`, `records`, ...) and renders
//! through `output`; no command uses another.

pub(crate) mod cache;
pub(crate) mod check;
pub(crate) mod coverage;
pub(crate) mod diff;
pub(crate) mod doctor;
pub(crate) mod explore;
pub(crate) mod init;
pub(crate) mod occupancy;
pub(crate) mod prebuild;
pub(crate) mod report;
pub(crate) mod setup;

//! `cargo launch`: see `cargo launch --help`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    cargo_launch::main_impl()
}

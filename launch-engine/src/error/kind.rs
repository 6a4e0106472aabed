//! The kind of an [`Error`]: the few classes a caller tells apart, each variant placed in one.
//!
//! [`Error`] is `#[non_exhaustive]`, so a new variant does not break library users; a caller that
//! must treat every error deliberately (`cargo launch` gives each its exit code) matches the kind
//! instead, which is exhaustive: a new variant gets its kind here, where the compiler asks for it.

use super::{Error, ErrorKind};

impl Error {
    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotBuildScript(_)
            | Error::Config { .. }
            | Error::UnsupportedArch { .. }
            | Error::InputFile { .. } => ErrorKind::Config,
            Error::ToolchainNotFound { .. }
            | Error::HostTools { .. }
            | Error::ToolNotFound { .. }
            | Error::ToolStart { .. }
            | Error::NvrtcLoad { .. } => ErrorKind::Toolchain,
            Error::ToolFailed { .. }
            | Error::ToolTimedOut { .. }
            | Error::Compile { .. }
            | Error::Report { .. }
            | Error::Kernels(_)
            | Error::Failed(_) => ErrorKind::Build,
            Error::Prebuilt { no_toolchain: true, .. } => ErrorKind::Toolchain,
            Error::Prebuilt { no_toolchain: false, .. } => ErrorKind::Build,
            Error::Io { .. } => ErrorKind::Io,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::Location;
    use super::*;

    #[test]
    fn each_variant_has_the_kind_its_documentation_gives() {
        let io = || std::io::Error::other("x");
        let cases = [
            (Error::NotBuildScript("OUT_DIR"), ErrorKind::Config),
            (
                Error::Config { location: Location::Environment, key: "k".into(), message: "m".into() },
                ErrorKind::Config,
            ),
            (
                Error::UnsupportedArch { arch: "sm_20".into(), toolchain: "NVRTC".into(), supported: Vec::new() },
                ErrorKind::Config,
            ),
            (
                Error::InputFile {
                    file: "kernels/f.cu".into(),
                    what: "a FIFO, not a file".into(),
                    at: None,
                    fix: "f".into(),
                },
                ErrorKind::Config,
            ),
            (Error::ToolchainNotFound { toolchain: "12.9", default: true, searched: Vec::new() }, ErrorKind::Toolchain),
            (
                Error::HostTools { location: Location::Environment, key: "k".into(), message: "m".into() },
                ErrorKind::Toolchain,
            ),
            (Error::ToolNotFound { tool: "ptxas".into() }, ErrorKind::Toolchain),
            (Error::ToolStart { command: "`ptxas`".into(), source: io() }, ErrorKind::Toolchain),
            (Error::NvrtcLoad { path: PathBuf::from("libnvrtc.so"), reason: "r".into() }, ErrorKind::Toolchain),
            (Error::ToolFailed { command: "`cc`".into(), status: "1".into(), stderr: String::new() }, ErrorKind::Build),
            (
                Error::ToolTimedOut {
                    tool: "ptxas".into(),
                    command: "`ptxas`".into(),
                    file: None,
                    arch: None,
                    timeout: std::time::Duration::from_secs(1),
                },
                ErrorKind::Build,
            ),
            (
                Error::Compile { compiler: "NVRTC".into(), file: "a.cu".into(), arch: "sm_90".into(), log: "e".into() },
                ErrorKind::Build,
            ),
            (Error::Report { file: "a.cu".into(), arch: "sm_90".into(), reason: "r".into() }, ErrorKind::Build),
            (Error::Kernels(Vec::new()), ErrorKind::Build),
            (Error::Failed(Vec::new()), ErrorKind::Build),
            (Error::Io { path: PathBuf::from("x"), action: "read", source: io() }, ErrorKind::Io),
            (
                Error::Prebuilt {
                    folder: "p".into(),
                    problems: vec!["a.cu changed".into()],
                    instead: "i".into(),
                    no_toolchain: true,
                },
                ErrorKind::Toolchain,
            ),
            (
                Error::Prebuilt { folder: "p".into(), problems: Vec::new(), instead: "i".into(), no_toolchain: false },
                ErrorKind::Build,
            ),
        ];
        for (error, kind) in cases {
            assert_eq!(error.kind(), kind, "{error:?}");
        }
    }
}

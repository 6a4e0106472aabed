//! `OUT_DIR/launch/diagnostics.json`: the located errors of a failed kernel build (a bad
//! `[package.metadata.launch]` key, a bad `@launch`, host code in a kernel file, a compiler
//! error), written by launch-build when the build fails and removed when it succeeds, so that
//! `cargo launch check` and editors can place them without reading the build's text.
//!
//! Files are relative to the crate root where they lie under it, `/`-separated.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The version of this document (its `schema` field).
pub const VERSION: u32 = 1;

/// The document: every located problem of one failed build, in the order the build met them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Diagnostics {
    /// [`VERSION`].
    pub schema: u32,
    /// The package whose build failed.
    pub package: String,
    /// The crate root the files are relative to, absolute: which checkout failed, when several
    /// builds of one package share a target folder.
    #[serde(default)]
    pub root: String,
    /// The `cargo launch` run whose build wrote it (`LAUNCH_RUN_ID`), so the command tells its
    /// own run's failure from an earlier one's; absent for a plain `cargo build`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The problems.
    pub diagnostics: Vec<Diagnostic>,
    /// What kind of failure it was, which decides `cargo launch`'s exit code; absent in a
    /// document written before the field existed (then the failure counts as a build failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ErrorKind>,
}

/// What kind of failure a build's error is: the few classes a caller tells apart (launch-build's
/// `Error::kind`), recorded in the document so that `cargo launch` gives a failed build the exit
/// code of its error's kind wherever the error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ErrorKind {
    /// How the build was set up or called: `[package.metadata.launch]` or a `LAUNCH_*` variable,
    /// an arch the toolchain cannot target, a build that is not a build script.
    Config,
    /// No usable CUDA toolchain: none found, a tool that is missing or cannot start, an NVRTC
    /// library that does not load.
    Toolchain,
    /// The kernels did not build: a compile error, a tool that failed or ran out of time, a
    /// ptxas report not understood, kernels that break a rule.
    Build,
    /// Reading or writing a file failed.
    Io,
}

/// One located problem, as a compiler states it: `file:line:col: error: message`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
pub struct Diagnostic {
    /// The file, relative to the crate root where it is under it (`kernels/a.cu`, `Cargo.toml`).
    pub file: String,
    /// 1-based line; 0 when the problem is about the file as a whole.
    pub line: u32,
    /// 1-based column (in characters); 0 when only the line is known (NVRTC gives no column).
    pub col: u32,
    /// How serious it is.
    pub severity: Severity,
    /// What is wrong, on one line, and the fix where there is one.
    pub message: String,
    /// Lines shown under the message: the source line and a caret under the column.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excerpt: Vec<String>,
    /// The tool that said it and the arches it said it for (`NVRTC 12.9.86, sm_80, sm_90`); absent
    /// when launch-build itself found the problem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// How serious a [`Diagnostic`] is: the analysis's own severities (`error`, `warning`, `note`: for
/// a diagnostic, more about the error before it).
pub use launch_analysis::Severity;

impl Diagnostic {
    /// An error at `file:line:col`.
    pub fn error(file: impl Into<String>, line: u32, col: u32, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: file.into(),
            line,
            col,
            severity: Severity::Error,
            message: message.into(),
            excerpt: Vec::new(),
            tool: None,
        }
    }

    /// `file`, `file:line` or `file:line:col`, as far as it is known.
    pub fn location(&self) -> String {
        match (self.line, self.col) {
            (0, _) => self.file.clone(),
            (line, 0) => format!("{}:{line}", self.file),
            (line, col) => format!("{}:{line}:{col}", self.file),
        }
    }
}

/// `kernels/a.cu:1:12: error: message`, then each excerpt line indented by four spaces.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.location(), self.severity, self.message)?;
        for l in &self.excerpt {
            write!(f, "\n    {l}")?;
        }
        Ok(())
    }
}

impl Diagnostics {
    /// Reads the document, checking its version.
    ///
    /// # Errors
    /// Text that is not this document, or another [`VERSION`] of it.
    pub fn from_json(text: &str) -> Result<Diagnostics, super::ReadError> {
        let d: Diagnostics = super::read(text, "diagnostics", VERSION, "rebuild the crate")?;
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnostic_reads_like_a_compiler_message() {
        let mut d = Diagnostic::error("k.cu", 1, 12, "threads = 48 is not a positive multiple of 32");
        d.excerpt = vec!["@launch(48)".into(), "        ^".into()];
        assert_eq!(
            d.to_string(),
            "k.cu:1:12: error: threads = 48 is not a positive multiple of 32\n    @launch(48)\n            ^"
        );
        assert_eq!(Diagnostic { col: 0, ..d.clone() }.location(), "k.cu:1");
        assert_eq!(Diagnostic { line: 0, ..d.clone() }.location(), "k.cu");
    }

    #[test]
    fn the_document_reads_back_and_refuses_another_version() {
        let doc = Diagnostics {
            root: "/src/p".into(),
            run: None,
            kind: Some(ErrorKind::Config),
            schema: VERSION,
            package: "p".into(),
            diagnostics: vec![Diagnostic {
                tool: Some("NVRTC 12.9.86, sm_90".into()),
                ..Diagnostic::error("a.cu", 2, 0, "x")
            }],
        };
        let text = serde_json::to_string_pretty(&doc).expect("serialises");
        assert!(text.contains("\"severity\": \"error\"") && !text.contains("excerpt"), "{text}");
        assert!(text.contains("\"kind\": \"config\""), "{text}");
        assert_eq!(Diagnostics::from_json(&text).expect("reads"), doc);
        // A document written before `kind` existed reads with none.
        let old = text.replace(",\n  \"kind\": \"config\"", "");
        assert_eq!(Diagnostics::from_json(&old).expect("reads").kind, None, "{old}");
        let other = serde_json::to_string(&Diagnostics { schema: 9, ..doc }).expect("serialises");
        assert_eq!(
            Diagnostics::from_json(&other).unwrap_err().to_string(),
            "diagnostics schema 9 (this tool reads 1); rebuild the crate"
        );
    }
}

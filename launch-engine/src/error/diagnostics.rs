//! The located problems of an [`Error`], as data: for `OUT_DIR/launch/diagnostics.json`, which
//! `cargo launch check` and editors read to place a failed build's errors.
//!
//! Rule errors (config, `@launch`, host code, names) carry their [`Diagnostic`]s. A compiler's
//! errors are read from its log: NVRTC's `file(LINE): error: ...`, ptxas's
//! `ptxas x.ptx, line N; error : ...` placed through the note saying which source line PTX line N
//! comes from (see `compile::with_ptx_notes`). Anything else about a file is placed at the file.

use super::{Diagnostic, Error, Location, Severity};

/// The document's name under `OUT_DIR/launch`.
pub const DIAGNOSTICS_FILE: &str = "diagnostics.json";

impl Error {
    /// Every problem of this error that has a place in a file, in the order the text shows them.
    /// Empty for errors about no file (a missing toolchain, an I/O error).
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        match self {
            Error::Config { location: Location::File { path, at }, key, message }
            | Error::HostTools { location: Location::File { path, at }, key, message } => {
                let (line, col) = at.unwrap_or((0, 0));
                vec![Diagnostic::error(path.display().to_string(), line, col, format!("`{key}`: {message}"))]
            }
            Error::InputFile { file, what, at, fix } => {
                let (place, line, col) = at.clone().unwrap_or_else(|| (file.clone(), 0, 0));
                vec![Diagnostic::error(place, line, col, format!("`{file}` is {what}; {fix}"))]
            }
            Error::Kernels(list) => list.clone(),
            Error::Failed(files) => files.iter().flat_map(|f| &f.errors).flat_map(Error::diagnostics).collect(),
            Error::Compile { compiler, file, arch, log } => {
                let tool = format!("{compiler}, {arch}");
                let mut found = from_log(file, log, &tool);
                if !found.iter().any(|d| d.severity == Severity::Error) {
                    // A log with no error we can place: the file, with the log's first error line.
                    let message = super::first_error(log)
                        .unwrap_or_else(|| format!("{compiler} failed to compile {file} for {arch}"));
                    found.insert(0, Diagnostic { tool: Some(tool.clone()), ..Diagnostic::error(file, 0, 0, message) });
                }
                // A missing CUDA library header's note (as in the text), where its error is.
                let first = found.iter().find(|d| d.severity == Severity::Error).cloned();
                for note in crate::library_headers::notes(compiler, log) {
                    let at = first.clone().unwrap_or_else(|| Diagnostic::error(file, 0, 0, ""));
                    found.push(Diagnostic {
                        severity: Severity::Note,
                        message: note,
                        excerpt: Vec::new(),
                        tool: Some(tool.clone()),
                        ..at
                    });
                }
                found
            }
            Error::Report { file, arch, .. } | Error::ToolTimedOut { file: Some(file), arch: Some(arch), .. } => {
                vec![at_file(self, file, Some(arch))]
            }
            Error::ToolTimedOut { file: Some(file), arch: None, .. } => vec![at_file(self, file, None)],
            _ => Vec::new(),
        }
    }
}

/// The error's first line, placed at `file`.
fn at_file(e: &Error, file: &str, arch: Option<&str>) -> Diagnostic {
    let text = e.to_string();
    let message = text.lines().next().unwrap_or("").to_string();
    Diagnostic { tool: arch.map(str::to_string), ..Diagnostic::error(file, 0, 0, message) }
}

/// The located messages of a compiler log of `file`.
fn from_log(file: &str, log: &str, tool: &str) -> Vec<Diagnostic> {
    let lines: Vec<&str> = log.lines().map(str::trim_end).collect();
    // PTX line → where in the source it comes from, from our notes (`at: note: PTX line N (...)`).
    // A map, not a list: a log with many notes and many ptxas errors stays linear.
    let mut ptx_sources: std::collections::HashMap<usize, (String, u32, u32)> = std::collections::HashMap::new();
    for l in &lines {
        let Some((at, rest)) = l.split_once(": note: PTX line ") else { continue };
        let Some(n) = rest.split(' ').next().and_then(|n| n.parse().ok()) else { continue };
        ptx_sources.entry(n).or_insert_with(|| parse_location(at));
    }
    let mut out: Vec<Diagnostic> = Vec::new();
    for l in &lines {
        let found = if let Some((f, line, severity, message)) = nvrtc_message(l) {
            Some(Diagnostic { severity, ..Diagnostic::error(f, line, 0, message) })
        } else if let Some((ptx_line, severity, message)) = ptxas_message(l) {
            let place = ptx_line.and_then(|n| ptx_sources.get(&n));
            let (f, line, col) = place.map_or((file.to_string(), 0, 0), |(f, line, col)| (f.clone(), *line, *col));
            Some(Diagnostic { severity, ..Diagnostic::error(f, line, col, message) })
        } else {
            // The source line and caret NVRTC prints under a message.
            if let Some(last) = out.last_mut().filter(|_| l.starts_with(' ') && !l.trim().is_empty()) {
                last.excerpt.push(l.to_string());
            }
            None
        };
        out.extend(found.map(|d| Diagnostic { tool: Some(tool.to_string()), ..d }));
    }
    out
}

/// NVRTC's `path(LINE): error: message` (also `catastrophic error`, `warning #177-D`).
fn nvrtc_message(line: &str) -> Option<(String, u32, Severity, String)> {
    let close = line.find("): ")?;
    let open = line[..close].rfind('(')?;
    let number: u32 = line[open + 1..close].parse().ok()?;
    let rest = &line[close + 3..];
    let (kind, message) = rest.split_once(": ")?;
    let severity = if kind.ends_with("error") {
        Severity::Error
    } else if kind.starts_with("warning") {
        Severity::Warning
    } else {
        return None;
    };
    Some((line[..open].to_string(), number, severity, message.trim().to_string()))
}

/// ptxas's `ptxas /…/k.ptx, line 16; error   : message` (the PTX line) or `ptxas fatal   : message`.
fn ptxas_message(line: &str) -> Option<(Option<usize>, Severity, String)> {
    let rest = line.strip_prefix("ptxas ")?;
    let (ptx_line, rest) = match rest.split_once(", line ") {
        Some((_, after)) => {
            let (n, rest) = after.split_once(';')?;
            (n.trim().parse().ok(), rest)
        }
        None => (None, rest),
    };
    let (kind, message) = rest.split_once(':')?;
    let severity = match kind.trim() {
        "error" | "fatal" => Severity::Error,
        "warning" => Severity::Warning,
        _ => return None,
    };
    Some((ptx_line, severity, message.trim().to_string()))
}

/// `kernels/a.cu:17:5` → (`kernels/a.cu`, 17, 5); `kernels/a.cu:17` and `kernels/a.cu` as far as
/// they go (the file may itself hold `:`, so numbers are taken from the right).
fn parse_location(at: &str) -> (String, u32, u32) {
    let number = |s: &str| s.parse::<u32>().ok();
    if let Some((rest, col)) = at.rsplit_once(':').and_then(|(r, c)| number(c).map(|c| (r, c))) {
        if let Some((file, line)) = rest.rsplit_once(':').and_then(|(f, l)| number(l).map(|l| (f, l))) {
            return (file.to_string(), line, col);
        }
        return (rest.to_string(), col, 0);
    }
    (at.to_string(), 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn compile(compiler: &str, log: &str) -> Error {
        Error::Compile { compiler: compiler.into(), file: "kernels/a.cu".into(), arch: "sm_90".into(), log: log.into() }
    }

    #[test]
    fn a_config_error_is_placed_at_its_key_and_the_environment_nowhere() {
        let e = Error::Config {
            location: Location::File { path: PathBuf::from("/c/Cargo.toml"), at: Some((7, 8)) },
            key: "package.metadata.launch.arch".into(),
            message: "bad".into(),
        };
        assert_eq!(e.to_string(), "/c/Cargo.toml:7:8: `package.metadata.launch.arch`: bad");
        let d = e.diagnostics();
        assert_eq!(d, [Diagnostic::error("/c/Cargo.toml", 7, 8, "`package.metadata.launch.arch`: bad")]);
        let env = Error::Config { location: Location::Environment, key: "LAUNCH_ARCH".into(), message: "x".into() };
        assert_eq!(env.to_string(), "environment: `LAUNCH_ARCH`: x");
        assert!(env.diagnostics().is_empty());
    }

    #[test]
    fn nvrtc_errors_and_warnings_are_placed_with_their_excerpt() {
        let log = "kernels/a.cu(2): warning #177-D: variable \"y\" was declared but never referenced\n    int y;\n        ^\n\n\
                   kernels/a.cu(3): error: identifier \"x\" is undefined\n    x = 1;\n    ^\n\n\
                   1 error detected in the compilation of \"kernels/a.cu\".\n";
        let d = compile("NVRTC 12.9.86", log).diagnostics();
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!((d[0].severity, d[0].line, d[0].col), (Severity::Warning, 2, 0));
        assert_eq!(d[1].to_string(), "kernels/a.cu:3: error: identifier \"x\" is undefined\n        x = 1;\n        ^");
        assert_eq!(d[1].tool.as_deref(), Some("NVRTC 12.9.86, sm_90"));
    }

    /// 20,000 ptxas errors, each with its note: each error finds its note in a map, not by
    /// searching the list of notes (quadratic in the log); the bound is generous for slow machines.
    /// A missing library header's error is followed by its note, at the same place.
    #[test]
    fn a_missing_library_header_gets_its_note_as_a_diagnostic() {
        let log = "kernels/rng.cu(2): catastrophic error: cannot open source file \"curand_kernel.h\"\n  #include <curand_kernel.h>\n";
        let d = Error::Compile {
            compiler: "NVRTC 13.0.88".into(),
            file: "kernels/rng.cu".into(),
            arch: "sm_90".into(),
            log: log.into(),
        }
        .diagnostics();
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!((d[1].severity, d[1].file.as_str(), d[1].line), (Severity::Note, "kernels/rng.cu", 2));
        assert!(d[1].message.contains("--toolchain 13.0 --with curand"), "{}", d[1].message);
        assert_eq!(compile("NVRTC 13.0.88", "kernels/a.cu(3): error: x\n").diagnostics().len(), 1);
    }

    #[test]
    fn a_long_ptxas_log_is_placed_in_linear_time() {
        let mut log = String::new();
        for i in 0..20_000 {
            log.push_str(&format!("ptxas /o/work/x.ptx, line {i}; error   : bad {i}\n"));
            log.push_str(&format!("kernels/k.cu:{}:1: note: PTX line {i} (`x;`) comes from the code here\n", i + 1));
        }
        let started = std::time::Instant::now();
        let d = from_log("kernels/k.cu", &log, "ptxas");
        assert_eq!(d.len(), 20_000);
        assert_eq!((d[19_999].line, d[19_999].message.as_str()), (20_000, "bad 19999"));
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn a_ptxas_error_is_placed_where_its_ptx_line_comes_from() {
        let log = "ptxas /o/work/x.ptx, line 11; error   : Not a name of any known instruction: 'bad'\n\
                   kernels/k.cu:8:3: note: PTX line 11 (`bad.op %r1;`) comes from the code here, in device function `helper(int)`\n";
        let d = compile("ptxas 12.9.86", log).diagnostics();
        assert_eq!(
            d,
            [Diagnostic {
                tool: Some("ptxas 12.9.86, sm_90".into()),
                ..Diagnostic::error("kernels/k.cu", 8, 3, "Not a name of any known instruction: 'bad'")
            }]
        );
        // Without a note, and for an error without a PTX line: the file.
        let d = compile("ptxas 12.9.86", "ptxas fatal   : Unresolved extern function 'f'\n").diagnostics();
        assert_eq!(
            (d[0].file.as_str(), d[0].line, d[0].message.as_str()),
            ("kernels/a.cu", 0, "Unresolved extern function 'f'")
        );
        // A log with nothing to place still gives the file one error.
        let d = compile("ptxas 12.9.86", "Segmentation fault\n").diagnostics();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].to_string(), "kernels/a.cu: error: ptxas 12.9.86 failed to compile kernels/a.cu for sm_90");
    }

    #[test]
    fn every_failing_file_contributes_and_rule_errors_pass_through() {
        let failed = Error::Failed(vec![
            super::super::FileFailure {
                file: "kernels/a.cu".into(),
                errors: vec![compile("NVRTC 12.9.86", "kernels/a.cu(3): error: e\n")],
            },
            super::super::FileFailure {
                file: "kernels/b.cu".into(),
                errors: vec![Error::Report { file: "kernels/b.cu".into(), arch: "sm_90".into(), reason: "r".into() }],
            },
        ]);
        let d = failed.diagnostics();
        assert_eq!(d.iter().map(|d| d.location()).collect::<Vec<_>>(), ["kernels/a.cu:3", "kernels/b.cu"]);
        let rules = vec![Diagnostic::error("kernels/c.cu", 1, 4, "bad")];
        assert_eq!(Error::Kernels(rules.clone()).diagnostics(), rules);
        assert_eq!(Error::Kernels(rules).to_string(), "kernels/c.cu:1:4: error: bad");
        assert!(Error::ToolNotFound { tool: "ptxas".into() }.diagnostics().is_empty());
    }
}

//! Parser for the resource report that `ptxas -v` prints on stderr (and that NVRTC copies into its
//! program log when given `--ptxas-options=-v`).
//!
//! The grammar is described in `shared/reference/ptxas-output.md`; recorded logs from several
//! ptxas versions (12.4, 12.6, 12.8, 12.9, 13.0) and NVRTC 12.9 live in `fixtures/ptxas/`.
//!
//! ```text
//! ptxas info    : 4 bytes gmem, 1024 bytes cmem[3]
//! ptxas info    : Compiling entry function 'k_call' for 'sm_52'
//! ptxas info    : Function properties for k_call
//!     128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 32 registers, used 0 barriers, 128 bytes cumulative stack size, 332 bytes cmem[0]
//! ptxas info    : Compile time = 2.131 ms
//! ptxas info    : Function properties for _Z4walkii
//!     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas t.ptx, line 23; warning : .minnctapersm is ignored when neither .maxntid nor .reqntid is specified.
//! ```
//!
//! What the parser tolerates, and what it rejects:
//!
//! * The stack/spill continuation line may be indented (`ptxas`'s own form) or start with
//!   `ptxas         .     ` (NVRTC's form). It belongs to the `Function properties` line before it.
//! * In the `Used` line only the register count is required; `used N barriers` (absent before
//!   ptxas 12.6), the cumulative stack, `smem` and `cmem[0]` are optional, and unknown fields are
//!   ignored. The gmem line, the module's constant banks and `Compile time` (absent before ptxas
//!   12.8) are optional too.
//! * Entries are keyed by (mangled) name, never by position. A `Function properties` block that
//!   belongs to no entry (a non-inlined device function) is a [`FunctionReport`].
//! * Every `warning`, `error` and `fatal` line becomes a [`Diagnostic`], with its
//!   `<file>, line <n>;` location when printed. `info` lines that are not part of the report
//!   (`Overriding maximum register limit …`, `(C7508) …`) are kept as [`Severity::Info`]
//!   diagnostics; they never fail the parse.
//! * Lines that neither start with `ptxas` nor are continuation lines are ignored: NVRTC logs
//!   contain front-end diagnostics, source excerpts and remarks.
//! * A report line whose shape is known but whose number does not parse (or a report line out of
//!   place, such as a `Used` line outside an entry block) is a [`ParseError`] naming the line.
//!
//! Whether the compilation succeeded is decided by ptxas's exit status, not by this log.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Reading the fields of one report line.
mod fields;
#[cfg(test)]
use fields::info_text;
use fields::{bounded_token, compile_time, compiling_entry, diagnostic_header, gmem_line, number, stack_line};

/// Everything one `ptxas -v` run (or one NVRTC program log) reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PtxasLog {
    /// `N bytes gmem` from the module line: global (`__device__`) data of the module. `None` when
    /// the log has no module line (it is absent from some captures and from failed runs).
    pub gmem: Option<u64>,
    /// Module constant banks from the module line (`1024 bytes cmem[3], 8 bytes cmem[4]`), in
    /// printed order. ptxas prints them only below sm_90.
    pub cmem: Vec<ConstBank>,
    /// One report per `Compiling entry function` block, in printed order (which is not source
    /// order: look entries up by name with [`PtxasLog::entry`]).
    pub entries: Vec<EntryReport>,
    /// Device functions (`.func`) that were not inlined: `Function properties` blocks that belong
    /// to no entry, in printed order.
    pub functions: Vec<FunctionReport>,
    /// Every warning, error and fatal line, and every `info` line that is not part of the
    /// resource report, in printed order.
    pub diagnostics: Vec<Diagnostic>,
}

/// One module-level constant bank from the gmem line (`1024 bytes cmem[3]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConstBank {
    /// The bank number (`3` for `__constant__` data, `4` for other module constants).
    pub bank: u32,
    /// Bytes used in that bank.
    pub bytes: u64,
}

/// The report for one kernel (`.entry`) on one architecture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryReport {
    /// The symbol as printed: mangled for kernels that are not `extern "C"`.
    pub name: String,
    /// The target, as printed (`sm_90`, `sm_100a`, ...).
    pub arch: String,
    /// The numbers of the stack/spill line and the `Used` line. Fields that were not printed are
    /// 0 (`None` for `cmem0`); see [`EntryReport::barriers_reported`] for logs of ptxas < 12.6.
    pub resources: launch::Resources,
    /// `Compile time = … ms` following the block, when printed (ptxas ≥ 12.8).
    pub compile_time_ms: Option<f64>,
    /// The block's report lines, verbatim: `Compiling entry …`, `Function properties …`, the
    /// stack/spill line and `Used …` (not the `Compile time` line).
    pub lines: Vec<String>,
}

impl EntryReport {
    #[cfg(test)]
    /// The entry's `Used …` line as printed, if the log had one.
    pub fn used_line(&self) -> Option<&str> {
        self.lines.iter().map(String::as_str).find(|l| info_text(l).is_some_and(|t| t.starts_with("Used ")))
    }

    #[cfg(test)]
    /// Whether the `Used` line printed a barrier count. ptxas before 12.6 never does, in which
    /// case [`launch::Resources::barriers`] is 0 without meaning "no barriers".
    pub fn barriers_reported(&self) -> bool {
        self.used_line().is_some_and(|l| {
            l.split(',').skip(1).any(|f| bounded_token(f.trim(), "used ", &[" barriers", " barrier"]).is_some())
        })
    }
}

/// The report for one non-inlined device function (`.func`): a `Function properties` block with
/// no `Used` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionReport {
    /// The symbol as printed (mangled unless `extern "C"`).
    pub name: String,
    /// `N bytes stack frame` of the function itself.
    pub stack_frame: u32,
    /// `N bytes spill stores`.
    pub spill_stores: u32,
    /// `N bytes spill loads`.
    pub spill_loads: u32,
    /// `Compile time = … ms` following the block: printed for device functions in relocatable
    /// (`-c`) mode only.
    pub compile_time_ms: Option<f64>,
    /// The block's report lines, verbatim: `Function properties …` and the stack/spill line.
    pub lines: Vec<String>,
}

/// How bad a [`Diagnostic`] is, from the word after `ptxas` (or after the location).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// `ptxas info    :` that is not part of the resource report.
    Info,
    /// `ptxas warning :`.
    Warning,
    /// `ptxas error   :` (also a warning promoted by `-Werror`).
    Error,
    /// `ptxas fatal   :`.
    Fatal,
}

/// One diagnostic line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Its severity.
    pub severity: Severity,
    /// The PTX file of a located diagnostic (`ptxas <file>, line <n>; …`).
    pub file: Option<String>,
    /// The PTX line of a located diagnostic.
    pub line: Option<u32>,
    /// The text after the colon, trimmed.
    pub message: String,
    /// The whole line, verbatim.
    pub raw: String,
}

/// A line of the log that has a known shape but could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseError {
    /// 1-based line number in the log.
    pub line_no: usize,
    /// The line, verbatim.
    pub line: String,
    /// What was wrong with it.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ptxas log, line {}: {}: `{}`", self.line_no, self.reason, self.line)
    }
}

impl std::error::Error for ParseError {}

impl PtxasLog {
    /// The first entry with this (mangled) name.
    pub fn entry(&self, name: &str) -> Option<&EntryReport> {
        self.entries.iter().find(|e| e.name == name)
    }

    #[cfg(test)]
    /// The entry with this name compiled for this arch (for logs that concatenate several runs).
    pub fn entry_for(&self, name: &str, arch: &str) -> Option<&EntryReport> {
        self.entries.iter().find(|e| e.name == name && e.arch == arch)
    }

    /// The first non-inlined device function with this name.
    pub fn function(&self, name: &str) -> Option<&FunctionReport> {
        self.functions.iter().find(|f| f.name == name)
    }

    #[cfg(test)]
    /// The `error` and `fatal` diagnostics.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.severity >= Severity::Error)
    }

    /// The `warning` diagnostics.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Warning)
    }
}

/// Parses a `ptxas -v` stderr capture or an NVRTC program log.
///
/// Never panics. Fails only on a report line of known shape that cannot be read (see the
/// module documentation); unknown lines are skipped.
pub fn parse(log: &str) -> Result<PtxasLog, ParseError> {
    let mut p = Parser {
        log: PtxasLog {
            gmem: None,
            cmem: Vec::new(),
            entries: Vec::new(),
            functions: Vec::new(),
            diagnostics: Vec::new(),
        },
        state: Vec::new(),
        current_entry: None,
        pending_stack: None,
        last_block: None,
    };
    for (i, line) in log.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        p.line(line).map_err(|reason| ParseError { line_no: i + 1, line: line.to_string(), reason })?;
    }
    Ok(p.log)
}

/// A report block: an entry or a device function (index into the log's vectors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    Entry(usize),
    Function(usize),
}

/// Which lines an entry block has had so far.
#[derive(Clone, Copy, Debug, Default)]
struct EntryState {
    properties: bool,
    used: bool,
}

struct Parser {
    log: PtxasLog,
    /// Parallel to `log.entries`.
    state: Vec<EntryState>,
    /// The entry whose `Compiling entry` line came last; its `Used` line may follow.
    current_entry: Option<usize>,
    /// The block whose `Function properties` line awaits its stack/spill line.
    pending_stack: Option<Block>,
    /// The block a following `Compile time` line belongs to.
    last_block: Option<Block>,
}

impl Parser {
    fn line(&mut self, line: &str) -> Result<(), String> {
        if let Some(rest) = line.strip_prefix("ptxas") {
            if !rest.starts_with(char::is_whitespace) {
                return Ok(()); // `ptxas: NVIDIA (R) …`, `ptxasfoo`
            }
            // NVRTC's continuation form: `ptxas         .     <stack line>`.
            if let Some(after_dot) = rest.trim_start().strip_prefix('.') {
                if after_dot.starts_with(char::is_whitespace) {
                    return match stack_line(after_dot.trim())? {
                        Some(numbers) => self.stack(line, numbers),
                        None => Ok(()),
                    };
                }
            }
            let Some(header) = rest.strip_prefix(' ') else {
                return Ok(());
            };
            match diagnostic_header(header)? {
                Some((Severity::Info, None, text)) => self.info(line, text.trim()),
                Some((severity, location, text)) => {
                    let (file, line_no) = match location {
                        Some((f, n)) => (Some(f.to_string()), Some(n)),
                        None => (None, None),
                    };
                    self.log.diagnostics.push(Diagnostic {
                        severity,
                        file,
                        line: line_no,
                        message: text.trim().to_string(),
                        raw: line.to_string(),
                    });
                    Ok(())
                }
                None => Ok(()),
            }
        } else if line.starts_with(char::is_whitespace) {
            match stack_line(line.trim())? {
                Some(numbers) => self.stack(line, numbers),
                None => Ok(()),
            }
        } else {
            Ok(())
        }
    }

    /// An unlocated `ptxas info    :` line; `text` is what follows the colon.
    fn info(&mut self, line: &str, text: &str) -> Result<(), String> {
        if let Some(rest) = text.strip_prefix("Compiling entry function ") {
            let (name, arch) =
                compiling_entry(rest).ok_or("expected `Compiling entry function '<name>' for '<arch>'`")?;
            self.log.entries.push(EntryReport {
                name: name.to_string(),
                arch: arch.to_string(),
                resources: launch::Resources::default(),
                compile_time_ms: None,
                lines: vec![line.to_string()],
            });
            self.state.push(EntryState::default());
            let idx = self.log.entries.len() - 1;
            self.current_entry = Some(idx);
            self.pending_stack = None;
            self.last_block = Some(Block::Entry(idx));
            return Ok(());
        }
        if let Some(name) = text.strip_prefix("Function properties for ") {
            let name = name.trim();
            if name.is_empty() {
                return Err("`Function properties for` without a name".into());
            }
            let own_entry = self.current_entry.filter(|&i| {
                self.log.entries.get(i).is_some_and(|e| e.name == name)
                    && self.state.get(i).is_some_and(|s| !s.properties)
            });
            let block = match own_entry {
                Some(i) => {
                    if let (Some(e), Some(s)) = (self.log.entries.get_mut(i), self.state.get_mut(i)) {
                        e.lines.push(line.to_string());
                        s.properties = true;
                    }
                    Block::Entry(i)
                }
                None => {
                    self.log.functions.push(FunctionReport {
                        name: name.to_string(),
                        stack_frame: 0,
                        spill_stores: 0,
                        spill_loads: 0,
                        compile_time_ms: None,
                        lines: vec![line.to_string()],
                    });
                    Block::Function(self.log.functions.len() - 1)
                }
            };
            self.pending_stack = Some(block);
            self.last_block = Some(block);
            return Ok(());
        }
        if text == "Used" || text.starts_with("Used ") {
            return self.used(line, text);
        }
        if let Some(rest) = text.strip_prefix("Compile time") {
            let ms = compile_time(rest).ok_or("expected `Compile time = <float> ms`")?;
            match self.last_block.take() {
                Some(Block::Entry(i)) => {
                    if let Some(e) = self.log.entries.get_mut(i) {
                        e.compile_time_ms = Some(ms);
                    }
                }
                Some(Block::Function(i)) => {
                    if let Some(f) = self.log.functions.get_mut(i) {
                        f.compile_time_ms = Some(ms);
                    }
                }
                None => {}
            }
            return Ok(());
        }
        if let Some(gmem) = gmem_line(text)? {
            if self.log.gmem.is_none() {
                self.log.gmem = Some(gmem.0);
                self.log.cmem = gmem.1;
            }
            return Ok(());
        }
        // Any other info line: keep it, never fail on it.
        self.log.diagnostics.push(Diagnostic {
            severity: Severity::Info,
            file: None,
            line: None,
            message: text.to_string(),
            raw: line.to_string(),
        });
        Ok(())
    }

    /// A stack/spill line (either form): belongs to the preceding `Function properties` line.
    fn stack(&mut self, line: &str, (frame, stores, loads): (u32, u32, u32)) -> Result<(), String> {
        match self.pending_stack.take() {
            Some(Block::Entry(i)) => {
                if let Some(e) = self.log.entries.get_mut(i) {
                    e.resources.stack_frame = frame;
                    e.resources.spill_stores = stores;
                    e.resources.spill_loads = loads;
                    e.lines.push(line.to_string());
                }
                Ok(())
            }
            Some(Block::Function(i)) => {
                if let Some(f) = self.log.functions.get_mut(i) {
                    f.stack_frame = frame;
                    f.spill_stores = stores;
                    f.spill_loads = loads;
                    f.lines.push(line.to_string());
                }
                Ok(())
            }
            None => Err("stack/spill line without a preceding `Function properties` line".into()),
        }
    }

    /// `Used <R> registers[, used <B> barriers][, <C> bytes cumulative stack size][, <M> bytes
    /// smem][, <K> bytes cmem[0]][, unknown…]`.
    fn used(&mut self, line: &str, text: &str) -> Result<(), String> {
        let Some(i) = self.current_entry else {
            return Err("`Used` line outside an entry block".into());
        };
        let (Some(entry), Some(state)) = (self.log.entries.get_mut(i), self.state.get_mut(i)) else {
            return Err("`Used` line outside an entry block".into());
        };
        if state.used {
            return Err(format!("second `Used` line for entry '{}'", entry.name));
        }
        let mut fields = text.split(',').map(str::trim);
        let first = fields.next().unwrap_or("");
        let regs =
            bounded_token(first, "Used ", &[" registers", " register"]).ok_or("expected `Used <N> registers`")?;
        let mut r = launch::Resources {
            registers: number(regs, "register count")?,
            // The stack/spill line comes first; keep what it set.
            stack_frame: entry.resources.stack_frame,
            spill_stores: entry.resources.spill_stores,
            spill_loads: entry.resources.spill_loads,
            ..launch::Resources::default()
        };
        for field in fields {
            if let Some(n) = bounded_token(field, "used ", &[" barriers", " barrier"]) {
                r.barriers = number(n, "barrier count")?;
            } else if let Some(n) = bounded_token(field, "", &[" bytes cumulative stack size"]) {
                r.cumulative_stack = number(n, "cumulative stack size")?;
            } else if let Some(n) = bounded_token(field, "", &[" bytes smem"]) {
                r.shared_static = number(n, "smem size")?;
            } else if let Some(n) = bounded_token(field, "", &[" bytes cmem[0]"]) {
                r.cmem0 = Some(number(n, "cmem[0] size")?);
            }
            // Anything else (another bank, a field of a newer ptxas): ignored.
        }
        entry.resources = r;
        entry.lines.push(line.to_string());
        state.used = true;
        self.pending_stack = None;
        self.last_block = Some(Block::Entry(i));
        Ok(())
    }
}

#[cfg(test)]
mod tests;

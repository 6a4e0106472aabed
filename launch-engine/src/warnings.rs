//! The build's warnings, in one collection: what the manifest keeps and what the build script
//! prints are two views of it, never lists kept apart and separated again.
//!
//! - the build's own warnings about the crate (patterns that match nothing, kernels in no PTX,
//!   ...): first in the manifest, always printed;
//! - per file, in file order: the build's warnings about that file (not compiled for any arch)
//!   and the compilers' warnings of each arch (NVRTC's log, ptxas's warnings). The manifest lists
//!   a compiler warning once per arch (`kernels/a.cu (sm_80): ...`), so `cargo launch report`
//!   shows the warnings of cached jobs too; the build prints only those of the jobs compiled in
//!   this run (a cached job printed its warnings when it compiled), once per file for all the
//!   arches with the same text (`kernels/a.cu (sm_80, sm_90): ...`).

use launch::Arch;

/// One file's warning.
#[derive(Clone, Debug)]
enum FileWarning {
    /// The build's own, already worded.
    Build(String),
    /// What the compilers said for one arch.
    Compiler {
        file: String,
        arch: Arch,
        /// NVRTC's log (or nvcc's), verbatim.
        log: String,
        /// ptxas's warnings, trimmed.
        ptxas: Vec<String>,
        /// Compiled in this run (not from the cache).
        fresh: bool,
    },
}

/// Every warning of one build.
#[derive(Clone, Debug, Default)]
pub struct Warnings {
    general: Vec<String>,
    files: Vec<FileWarning>,
}

impl Warnings {
    /// A warning about the crate.
    pub fn crate_warning(&mut self, text: String) {
        self.general.push(text);
    }

    /// A warning of the build about one file.
    pub fn file_warning(&mut self, text: String) {
        self.files.push(FileWarning::Build(text));
    }

    /// The compilers' warnings for `file` on `arch`: NVRTC's `log` and ptxas's warning lines;
    /// `fresh` when the job compiled in this run.
    pub fn compiler(&mut self, file: &str, arch: Arch, log: &str, ptxas: Vec<String>, fresh: bool) {
        let log = log.to_string();
        self.files.push(FileWarning::Compiler { file: file.to_string(), arch, log, ptxas, fresh });
    }

    /// The manifest's list: the crate's warnings, then each file's, a compiler warning once per
    /// arch, each text once.
    pub fn for_manifest(&self) -> Vec<String> {
        let mut per_file = Vec::new();
        for w in &self.files {
            match w {
                FileWarning::Build(text) => per_file.push(text.clone()),
                FileWarning::Compiler { file, arch, log, ptxas, .. } => {
                    per_file.extend(ptxas.iter().map(|d| format!("{file} ({arch}): {d}")));
                    per_file.extend(
                        log.lines()
                            .filter(|l| !l.trim().is_empty())
                            .map(|l| format!("{file} ({arch}): {}", l.trim_end())),
                    );
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        per_file.retain(|w| seen.insert(w.clone()));
        self.general.iter().cloned().chain(per_file).collect()
    }

    /// What the build script prints, each text once: the crate's warnings, the build's about
    /// files, then the compilers' of the jobs compiled in this run, grouped per file.
    pub fn to_print(&self) -> Vec<String> {
        let mut out = self.to_print_cached();
        let mut files: Vec<&str> = Vec::new();
        for w in &self.files {
            if let FileWarning::Compiler { file, .. } = w {
                if !files.contains(&file.as_str()) {
                    files.push(file);
                }
            }
        }
        for file in files {
            out.extend(self.fresh_of(file));
        }
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|w| seen.insert(w.clone()));
        out
    }

    /// What [`Warnings::to_print`] gives when every job came from the cache: the crate's
    /// warnings, then the build's about files.
    pub fn to_print_cached(&self) -> Vec<String> {
        let mut out = self.general.clone();
        out.extend(self.files.iter().filter_map(|w| match w {
            FileWarning::Build(text) => Some(text.clone()),
            FileWarning::Compiler { .. } => None,
        }));
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|w| seen.insert(w.clone()));
        out
    }

    /// The compiler warnings of `file`'s jobs compiled in this run: each distinct log once (a
    /// warning spans lines), then each distinct ptxas warning, every line prefixed with the arches
    /// that gave it: `kernels/a.cu (sm_80, sm_90): ...`.
    fn fresh_of(&self, file: &str) -> Vec<String> {
        // (text, arches), first seen first.
        let mut logs: Vec<(String, Vec<String>)> = Vec::new();
        let mut lines: Vec<(String, Vec<String>)> = Vec::new();
        let add = |list: &mut Vec<(String, Vec<String>)>, text: String, arch: String| match list
            .iter_mut()
            .find(|(t, _)| *t == text)
        {
            Some((_, arches)) => arches.push(arch),
            None => list.push((text, vec![arch])),
        };
        for w in &self.files {
            let FileWarning::Compiler { file: f, arch, log, ptxas, fresh: true } = w else { continue };
            if f != file {
                continue;
            }
            let log: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).map(str::trim_end).collect();
            if !log.is_empty() {
                add(&mut logs, log.join("\n"), arch.to_string());
            }
            for d in ptxas {
                add(&mut lines, d.clone(), arch.to_string());
            }
        }
        let mut out = Vec::new();
        for (text, arches) in logs.into_iter().chain(lines) {
            let arches = arches.join(", ");
            out.extend(text.lines().map(|l| format!("{file} ({arches}): {l}")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arch(a: &str) -> Arch {
        a.parse().unwrap()
    }

    /// The manifest keeps every compiler warning per arch, cached jobs' included; the build prints
    /// only fresh ones, grouped over arches; its own warnings reach both.
    #[test]
    fn the_manifest_keeps_all_and_the_build_prints_fresh_ones_grouped() {
        let mut w = Warnings::default();
        w.crate_warning("kernels: pattern unused".into());
        w.file_warning("kernels/b.cu: not compiled".into());
        let spill = vec!["ptxas warning : spills".to_string()];
        w.compiler("kernels/a.cu", arch("sm_80"), "a.cu(3): warning: x\n", spill.clone(), true);
        w.compiler("kernels/a.cu", arch("sm_90"), "a.cu(3): warning: x\n", spill.clone(), true);
        w.compiler("kernels/c.cu", arch("sm_90"), "", spill, false);
        assert_eq!(
            w.for_manifest(),
            [
                "kernels: pattern unused",
                "kernels/b.cu: not compiled",
                "kernels/a.cu (sm_80): ptxas warning : spills",
                "kernels/a.cu (sm_80): a.cu(3): warning: x",
                "kernels/a.cu (sm_90): ptxas warning : spills",
                "kernels/a.cu (sm_90): a.cu(3): warning: x",
                "kernels/c.cu (sm_90): ptxas warning : spills",
            ]
        );
        assert_eq!(
            w.to_print(),
            [
                "kernels: pattern unused",
                "kernels/b.cu: not compiled",
                "kernels/a.cu (sm_80, sm_90): a.cu(3): warning: x",
                "kernels/a.cu (sm_80, sm_90): ptxas warning : spills",
            ]
        );
    }
}

//! `[package.metadata.launch]`: what to compile, for which arches, with which flags.
//!
//! ```toml
//! [package.metadata.launch]
//! arch = ["sm_90", "sm_100"]      # required: every arch to build a cubin for
//! kernels = "kernels"             # folder of .cu files, relative to Cargo.toml
//! include = ["include"]           # extra include folders
//! defines = { N = 128, FAST = true }
//! threads = 256                   # block size the host uses for kernels without a contract
//! ```

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use launch::Arch;
use serde::Deserialize;
use toml::Spanned;

use crate::error::Error;

/// The keys `[package.metadata.launch]` accepts.
pub const KEYS: &[&str] = &["arch", "kernels", "include", "defines", "threads", "max-spill-bytes", "kernel"];

/// The keys of a `[package.metadata.launch.kernel.<name>]` table.
pub const KERNEL_KEYS: &[&str] = &["max-spill-bytes", "dynamic-smem", "threads"];

/// Default block size for kernels without a launch contract (seeds/004: "256 when the kernel has
/// no @launch").
pub const DEFAULT_HOST_THREADS: u32 = 256;

/// The validated configuration of one crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Path of the crate's Cargo.toml.
    pub manifest_path: PathBuf,
    /// The package name.
    pub package: String,
    /// Arches to build for, sorted by compute capability, without duplicates.
    pub arches: Vec<Arch>,
    /// Kernel folder, relative to the crate root.
    pub kernel_dir: PathBuf,
    /// Extra include folders, relative to the crate root.
    pub include_dirs: Vec<PathBuf>,
    /// `-D` defines, sorted by name; `None` value means `-DNAME`.
    pub defines: Vec<(String, Option<String>)>,
    /// Block size for kernels without a contract.
    pub host_threads: u32,
    /// Spill budget per kernel and arch (stores + loads, bytes); `None`: spills are warnings.
    pub max_spill_bytes: Option<u32>,
    /// Per-kernel settings, by kernel name (as written in the source, or the symbol name).
    pub kernel: BTreeMap<String, KernelConfig>,
}

#[derive(Deserialize)]
struct CargoToml {
    package: Option<Package>,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    metadata: Option<Metadata>,
}

#[derive(Deserialize)]
struct Metadata {
    launch: Option<Spanned<Raw>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    arch: Option<Spanned<Vec<Spanned<String>>>>,
    kernels: Option<Spanned<String>>,
    include: Option<Vec<Spanned<String>>>,
    defines: Option<BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
    threads: Option<Spanned<i64>>,
    #[serde(rename = "max-spill-bytes")]
    max_spill_bytes: Option<Spanned<i64>>,
    kernel: Option<BTreeMap<String, RawKernel>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKernel {
    #[serde(rename = "max-spill-bytes")]
    max_spill_bytes: Option<Spanned<i64>>,
    #[serde(rename = "dynamic-smem")]
    dynamic_smem: Option<Spanned<i64>>,
    threads: Option<Spanned<i64>>,
}

/// `[package.metadata.launch.kernel.<name>]`: what the host does with one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelConfig {
    /// Spill budget (stores + loads, bytes) overriding the crate's.
    pub max_spill_bytes: Option<u32>,
    /// Dynamic shared memory the host launches it with, bytes.
    pub dynamic_smem: Option<u32>,
    /// Block size the host launches it with when it has no contract.
    pub threads: Option<u32>,
}

impl Config {
    /// Reads and validates the `[package.metadata.launch]` table of the Cargo.toml at `manifest_path`.
    pub fn load(manifest_path: &Path) -> Result<Config, Error> {
        let text = std::fs::read_to_string(manifest_path).map_err(Error::io("read", manifest_path))?;
        Config::parse(manifest_path, &text)
    }

    /// Validates `text`, the contents of `manifest_path`.
    pub fn parse(manifest_path: &Path, text: &str) -> Result<Config, Error> {
        let root = manifest_path.parent().unwrap_or(Path::new("."));
        let err = |span: Option<Range<usize>>, key: &str, message: String| Error::Config {
            location: location(manifest_path, text, span),
            key: format!("package.metadata.launch{}{key}", if key.is_empty() { "" } else { "." }),
            message,
        };
        let doc: CargoToml = toml::from_str(text).map_err(|e| {
            let msg = e.message().trim().to_string();
            let msg = if msg.starts_with("unknown field") && msg.contains("`dynamic-smem`") {
                format!("{msg} (the keys of a [package.metadata.launch.kernel.<name>] table)")
            } else if msg.starts_with("unknown field") {
                format!("{msg} (the keys [package.metadata.launch] accepts: {})", KEYS.join(", "))
            } else {
                msg
            };
            err(e.span(), "", msg)
        })?;
        let package = doc.package.ok_or_else(|| {
            err(None, "", "this Cargo.toml has no [package] (launch-build runs in a package's build script)".into())
        })?;
        let raw = package.metadata.and_then(|m| m.launch).ok_or_else(|| {
            err(
                None,
                "",
                "missing table; add to Cargo.toml:\n\n[package.metadata.launch]\narch = [\"sm_90\"]\n".to_string(),
            )
        })?;
        let table_span = raw.span();
        let raw = raw.into_inner();

        let arch_list = raw.arch.ok_or_else(|| {
            err(
                Some(table_span.clone()),
                "arch",
                format!(
                    "missing: list the GPU architectures to build for, e.g. arch = [\"sm_90\"]; valid choices: {}",
                    launch::KNOWN_ARCHES.join(", ")
                ),
            )
        })?;
        let list_span = arch_list.span();
        let mut arches = Vec::new();
        for a in arch_list.into_inner() {
            let span = a.span();
            let parsed: Arch =
                a.get_ref().parse().map_err(|e: launch::ArchParseError| err(Some(span), "arch", e.to_string()))?;
            arches.push(parsed);
        }
        if arches.is_empty() {
            return Err(err(
                Some(list_span),
                "arch",
                format!(
                    "the list is empty; name at least one GPU architecture; valid choices: {}",
                    launch::KNOWN_ARCHES.join(", ")
                ),
            ));
        }
        arches.sort();
        arches.dedup();

        let kernel_dir = match raw.kernels {
            Some(k) => {
                let span = k.span();
                let p = relative_path(k.into_inner()).map_err(|m| err(Some(span.clone()), "kernels", m))?;
                if !root.join(&p).is_dir() {
                    return Err(err(Some(span), "kernels", format!("`{}` is not a folder", p.display())));
                }
                p
            }
            None => {
                let p = PathBuf::from("kernels");
                if !root.join(&p).is_dir() {
                    return Err(err(
                        Some(table_span),
                        "kernels",
                        format!(
                            "the default kernel folder `{}` does not exist; create it or set `kernels = \"...\"`",
                            root.join(&p).display()
                        ),
                    ));
                }
                p
            }
        };

        let mut include_dirs = Vec::new();
        for inc in raw.include.unwrap_or_default() {
            let span = inc.span();
            let p = relative_path(inc.into_inner()).map_err(|m| err(Some(span.clone()), "include", m))?;
            if !root.join(&p).is_dir() {
                return Err(err(Some(span), "include", format!("`{}` is not a folder", p.display())));
            }
            include_dirs.push(p);
        }

        let mut defines = Vec::new();
        for (name, value) in raw.defines.unwrap_or_default() {
            let (nspan, name) = (name.span(), name.into_inner());
            if !is_identifier(&name) {
                return Err(err(Some(nspan), "defines", format!("`{name}` is not a C identifier")));
            }
            let vspan = value.span();
            let v = match value.into_inner() {
                toml::Value::String(s) => Some(s),
                toml::Value::Integer(i) => Some(i.to_string()),
                toml::Value::Float(x) => Some(x.to_string()),
                toml::Value::Boolean(true) => None,
                toml::Value::Boolean(false) => Some("0".to_string()),
                other => {
                    return Err(err(
                        Some(vspan),
                        "defines",
                        format!("`{name}` has a {} value; use a string, integer, float or boolean", other.type_str()),
                    ))
                }
            };
            defines.push((name, v));
        }

        let block_size = |v: Option<Spanned<i64>>, key: &str| -> Result<Option<u32>, Error> {
            match v {
                None => Ok(None),
                Some(t) => {
                    let span = t.span();
                    let v = t.into_inner();
                    if !(1..=1024).contains(&v) {
                        return Err(err(
                            Some(span),
                            key,
                            format!("{v} is not a block size; it must be between 1 and 1024 (the largest CTA any GPU allows)"),
                        ));
                    }
                    Ok(Some(v as u32))
                }
            }
        };
        let host_threads = block_size(raw.threads, "threads")?.unwrap_or(DEFAULT_HOST_THREADS);

        let bytes = |v: Option<Spanned<i64>>, key: &str| -> Result<Option<u32>, Error> {
            match v {
                None => Ok(None),
                Some(v) => {
                    let span = v.span();
                    let n = v.into_inner();
                    u32::try_from(n)
                        .map(Some)
                        .map_err(|_| err(Some(span), key, format!("{n} is not a byte count (0 to {})", u32::MAX)))
                }
            }
        };
        let max_spill_bytes = bytes(raw.max_spill_bytes, "max-spill-bytes")?;
        let mut kernel = BTreeMap::new();
        for (name, k) in raw.kernel.unwrap_or_default() {
            let key = |f: &str| format!("kernel.{name}.{f}");
            let threads = block_size(k.threads, &key("threads"))?;
            kernel.insert(
                name.clone(),
                KernelConfig {
                    max_spill_bytes: bytes(k.max_spill_bytes, &key("max-spill-bytes"))?,
                    dynamic_smem: bytes(k.dynamic_smem, &key("dynamic-smem"))?,
                    threads,
                },
            );
        }

        Ok(Config {
            max_spill_bytes,
            kernel,
            manifest_path: manifest_path.to_path_buf(),
            package: package.name,
            arches,
            kernel_dir,
            include_dirs,
            defines,
            host_threads,
        })
    }

    /// The crate root (the folder of Cargo.toml).
    pub fn root(&self) -> &Path {
        self.manifest_path.parent().unwrap_or(Path::new("."))
    }
}

/// `sm_90,sm_100` → sorted, deduplicated arches; an error names the bad entry and the choices.
pub fn parse_arch_list(list: &str) -> Result<Vec<Arch>, String> {
    let mut arches = Vec::new();
    for part in list.split(',').map(str::trim) {
        arches.push(part.parse::<Arch>().map_err(|e| e.to_string())?);
    }
    arches.sort();
    arches.dedup();
    Ok(arches)
}

fn relative_path(s: String) -> Result<PathBuf, String> {
    let p = PathBuf::from(&s);
    if s.is_empty() {
        return Err("empty path".into());
    }
    if p.is_absolute() {
        return Err(format!("`{s}` is absolute; use a path relative to Cargo.toml so the crate builds anywhere"));
    }
    Ok(p)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// `path:line:col` of a byte offset, or just `path`.
fn location(path: &Path, text: &str, span: Option<Range<usize>>) -> String {
    match span {
        Some(span) => {
            let (line, col) = line_col(text, span.start);
            format!("{}:{line}:{col}", path.display())
        }
        None => path.display().to_string(),
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(meta: &str) -> Result<Config, Error> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("kernels")).unwrap();
        std::fs::create_dir(dir.path().join("inc")).unwrap();
        let text = format!("[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\n{meta}\n");
        Config::parse(&dir.path().join("Cargo.toml"), &text)
    }

    fn message(meta: &str) -> String {
        parse(meta).unwrap_err().to_string()
    }

    #[test]
    fn a_full_table_is_read_sorted_and_deduplicated() {
        let c = parse(
            "arch = [\"sm_100\", \"sm_90\", \"sm_90\"]\ninclude = [\"inc\"]\ndefines = { N = 128, FAST = true, NAME = \"x\", OFF = false }\nthreads = 128",
        )
        .unwrap();
        let arches: Vec<String> = c.arches.iter().map(|a| a.to_string()).collect();
        assert_eq!(arches, ["sm_90", "sm_100"]);
        assert_eq!(c.include_dirs, [PathBuf::from("inc")]);
        assert_eq!(
            c.defines,
            [
                ("FAST".to_string(), None),
                ("N".to_string(), Some("128".to_string())),
                ("NAME".to_string(), Some("x".to_string())),
                ("OFF".to_string(), Some("0".to_string())),
            ]
        );
        assert_eq!(c.host_threads, 128);
        assert_eq!(c.package, "k");
    }

    #[test]
    fn spill_budget_and_per_kernel_settings() {
        let c = parse(
            "arch = [\"sm_90\"]\nmax-spill-bytes = 0\n[package.metadata.launch.kernel.poly_eval]\nmax-spill-bytes = 8192\ndynamic-smem = 4096\nthreads = 384",
        )
        .unwrap();
        assert_eq!(c.max_spill_bytes, Some(0));
        let k = &c.kernel["poly_eval"];
        assert_eq!((k.max_spill_bytes, k.dynamic_smem, k.threads), (Some(8192), Some(4096), Some(384)));
        let m = message("arch = [\"sm_90\"]\n[package.metadata.launch.kernel.k]\ndynamic_smem = 1");
        assert!(m.contains("unknown field `dynamic_smem`") && m.contains("`dynamic-smem`"), "{m}");
        assert!(message("arch = [\"sm_90\"]\nmax-spill-bytes = -1").contains("-1 is not a byte count"));
        assert!(message("arch = [\"sm_90\"]\n[package.metadata.launch.kernel.k]\nthreads = 0")
            .contains("`package.metadata.launch.kernel.k.threads`"));
    }

    #[test]
    fn default_host_block_is_256() {
        assert_eq!(parse("arch = [\"sm_80\"]").unwrap().host_threads, 256);
    }

    #[test]
    fn misspelt_arch_names_key_value_line_and_choices() {
        let m = message("arch = [\"sm_90\", \"sm_9O\"]");
        assert!(m.contains("Cargo.toml:6:18"), "{m}");
        assert!(m.contains("`package.metadata.launch.arch`"), "{m}");
        assert!(m.contains("`sm_9O`") && m.contains("did you mean `sm_90`"), "{m}");
        assert!(m.contains("valid choices: sm_50"), "{m}");
        assert!(message("arch = [\"sm_91\"]").contains("`sm_91` is not a GPU architecture"));
        assert!(message("arch = [\"90\"]").contains("did you mean `sm_90`"));
    }

    #[test]
    fn empty_or_missing_arch_list_is_an_error() {
        assert!(message("arch = []").contains("the list is empty"));
        assert!(message("threads = 256").contains("missing: list the GPU architectures"));
    }

    #[test]
    fn unknown_key_lists_the_valid_keys() {
        let m = message("arch = [\"sm_90\"]\narchs = [\"sm_90\"]");
        assert!(m.contains("unknown field `archs`"), "{m}");
        assert!(m.contains("arch, kernels, include, defines, threads, max-spill-bytes, kernel"), "{m}");
        assert!(m.contains("Cargo.toml:7:1"), "{m}");
    }

    #[test]
    fn wrong_types_are_errors() {
        assert!(message("arch = \"sm_90\"").contains("invalid type: string \"sm_90\", expected a sequence"));
        assert!(message("arch = [\"sm_90\"]\nthreads = \"256\"").contains("invalid type"));
        assert!(message("arch = [\"sm_90\"]\nthreads = 2048").contains("between 1 and 1024"));
        assert!(message("arch = [\"sm_90\"]\ndefines = { N = [1] }").contains("array value"));
        assert!(message("arch = [\"sm_90\"]\ndefines = { \"1N\" = 1 }").contains("not a C identifier"));
    }

    #[test]
    fn missing_folders_are_errors() {
        assert!(message("arch = [\"sm_90\"]\nkernels = \"nope\"").contains("`nope` is not a folder"));
        assert!(message("arch = [\"sm_90\"]\ninclude = [\"nope\"]").contains("`nope` is not a folder"));
        assert!(message("arch = [\"sm_90\"]\nkernels = \"/abs\"").contains("is absolute"));
    }

    #[test]
    fn missing_table_says_what_to_add() {
        let dir = tempfile::tempdir().unwrap();
        let e = Config::parse(&dir.path().join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap_err();
        assert!(e.to_string().contains("[package.metadata.launch]\narch = [\"sm_90\"]"), "{e}");
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}

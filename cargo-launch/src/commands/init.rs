//! `cargo launch init` (set up an existing crate) and `cargo launch new` (a crate like the
//! template). Cargo.toml is edited with `toml_edit`, so its formatting and comments stay.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use toml_edit::{value, Array, DocumentMut, Item, Table};

use crate::cli::{InitArgs, NewArgs};
use crate::destination;
use crate::error::Error;

mod deps;
mod files;

use deps::Deps;
use files::{build_script, write_all, write_crate};

/// The line a build script needs.
pub(crate) const BUILD_LINE: &str = "launch_build::build();";

/// The arches `init` writes: the data-centre GPUs most kernels are tuned for.
pub(crate) const DEFAULT_ARCHES: &[&str] = &["sm_80", "sm_90"];

const METADATA_COMMENT: &str = "
# cargo-launch: build.rs compiles the .cu files of the kernel folder for every arch listed here.
# sm_80: A100/A30, sm_90: H100/H200. The lowest arch's PTX is embedded too, so newer GPUs run the
# kernels through the driver's JIT; add \"sm_86\", \"sm_89\", \"sm_100\" or \"sm_120\" for their own
# cubins and numbers in `cargo launch report`.
";

const BUILD_RS: &str = "fn main() {\n    launch_build::build()\n}\n";

const EXAMPLE_KERNEL: &str = r#"// An example kernel, y = a * x + y. `cargo launch report` prints its registers, spills and
// occupancy per arch; replace it with your own kernels.
// @launch(256)
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

// The template, embedded so `new` works wherever the binary is. cargo-launch/template/ links to
// template/'s files (its Cargo.toml as Cargo.toml.in: a folder with a Cargo.toml would be left out
// of the package as a package of its own), so the published package carries them.
const TEMPLATE: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../../template/Cargo.toml.in")),
    ("build.rs", include_str!("../../template/build.rs")),
    ("kernels/poly.cu", include_str!("../../template/kernels/poly.cu")),
    ("kernels/poly.cuh", include_str!("../../template/kernels/poly.cuh")),
    ("src/lib.rs", include_str!("../../template/src/lib.rs")),
    ("src/main.rs", include_str!("../../template/src/main.rs")),
    ("src/tuned.rs", include_str!("../../template/src/tuned.rs")),
];

/// The checkout that holds `launch/` and `launch-build/`: `--path`, else the one this binary was
/// built from (nothing is published, so the dependencies are path dependencies).
pub(crate) fn checkout(path: Option<&Path>) -> Result<PathBuf, Error> {
    let dir = match path {
        Some(p) => p.to_path_buf(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new("..")).to_path_buf(),
    };
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    for krate in ["launch", "launch-build"] {
        if !dir.join(krate).join("Cargo.toml").is_file() {
            let how = if path.is_some() { "--path" } else { "the checkout this binary was built from" };
            return Err(Error::Usage(anyhow::anyhow!(
                "{} ({how}) has no {krate}/Cargo.toml; pass --path DIR with the cargo-launch checkout that holds \
                     launch/ and launch-build/",
                dir.display()
            )));
        }
    }
    Ok(dir)
}

/// Runs `cargo launch init`.
pub(crate) fn init(args: &InitArgs) -> Result<(), Error> {
    let usage = Error::Usage;
    let mut manifest = args.manifest_path.clone().unwrap_or_else(|| PathBuf::from("Cargo.toml"));
    // `--manifest-path DIR` means the crate in DIR, as `cargo launch init` run there would.
    if manifest.is_dir() {
        manifest = manifest.join("Cargo.toml");
    }
    if !manifest.is_file() {
        return Err(usage(anyhow::anyhow!(
            "no Cargo.toml at `{}`: run `cargo launch init` in a crate's folder or pass --manifest-path \
             (`cargo launch new NAME` creates a crate)",
            manifest.display()
        )));
    }
    if let Some(k) = args.kernels.as_deref() {
        check_kernels_arg(k).map_err(|e| usage(anyhow::anyhow!("--kernels {e}")))?;
    }
    let deps = Deps::read(checkout(args.path.as_deref())?).map_err(|e| anyhow::anyhow!("{e}"))?;
    let crate_dir = manifest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let text = std::fs::read_to_string(&manifest).with_context(|| format!("cannot read `{}`", manifest.display()))?;
    let mut doc: DocumentMut =
        text.parse().map_err(|e| usage(anyhow::anyhow!("`{}` is not valid TOML: {e}", manifest.display())))?;
    let mut todo: Vec<String> = Vec::new();

    let edit = edit_manifest(&mut doc, &deps, args.kernels.as_deref())
        .map_err(|e| usage(anyhow::anyhow!("`{}`: {e}", manifest.display())))?;
    let mut done = edit.done;
    let new_text = keep_line_endings(&text, doc.to_string());
    // A linked Cargo.toml is edited where it is.
    let manifest_target = std::fs::canonicalize(&manifest).unwrap_or_else(|_| manifest.clone());

    // Every path init writes is checked before anything is written (exit 2 for one that cannot
    // be), and then everything is written or nothing: on a failure what was created is removed.
    if new_text != text {
        destination::file(&manifest_target, &format!("cannot write `{}`", manifest.display()))?;
    }
    let build_rs = match &edit.build {
        BuildScript::Disabled => {
            todo.push(format!(
                "Cargo.toml sets `build = false`: cargo-launch needs a build script with `{BUILD_LINE}` in its main()"
            ));
            None
        }
        BuildScript::At(rel) => build_script(&crate_dir, rel, &mut todo)?,
    };
    let kernels = crate_dir.join(&edit.kernel_dir);
    let folders = match std::fs::symlink_metadata(&kernels) {
        Ok(_) => Vec::new(),
        Err(_) => {
            destination::new_folder(&kernels, &format!("cannot create the kernel folder `{}`", kernels.display()))?
        }
    };

    // Nothing is written unless the result is a crate `report` accepts: the edited Cargo.toml must
    // load as launch-build will load it. The kernel folder `init` would create is created for the
    // check (the config requires it) and removed again when the check fails.
    let created = validate(&manifest, &new_text, &kernels).map_err(|e| {
        usage(anyhow::anyhow!(
            "{e}\nnothing was written: fix [package.metadata.launch] (or the --kernels folder) and run init again"
        ))
    })?;
    let mut files: Vec<(PathBuf, &str)> = Vec::new();
    if created {
        files.push((kernels.join("example.cu"), EXAMPLE_KERNEL));
    }
    if let Some(rel) = &build_rs {
        files.push((crate_dir.join(rel), BUILD_RS));
    }
    write_all(&files, (new_text != text).then_some((&manifest_target, new_text.as_str()))).inspect_err(|_| {
        if created {
            destination::remove_created(&folders);
        }
    })?;
    if created {
        done.push(format!("created {}/ with an example kernel (example.cu)", edit.kernel_dir));
    }
    if let Some(rel) = &build_rs {
        done.push(format!("wrote {} (`{BUILD_LINE}`)", rel.display()));
    }

    let name = doc.get("package").and_then(|p| p.get("name")).and_then(|n| n.as_str()).unwrap_or("this crate");
    let mut out = crate::stdout::stdout();
    let said = if done.is_empty() && todo.is_empty() {
        writeln!(out, "`{name}` is already set up for cargo-launch; `cargo launch report` shows its kernels")
    } else {
        said_what_init_did(&mut out, &done, &todo)
    };
    said.context("writing what init did")?;
    Ok(())
}

/// What `init` did, what is left to do and, when it did something, what comes next.
fn said_what_init_did(out: &mut impl Write, done: &[String], todo: &[String]) -> std::io::Result<()> {
    for d in done {
        writeln!(out, "{d}")?;
    }
    for t in todo {
        writeln!(out, "to do: {t}")?;
    }
    if !done.is_empty() {
        writeln!(
            out,
            "next: `cargo launch report`; `launch::include_kernels!();` in src/lib.rs gives Rust a static per kernel"
        )?;
    }
    Ok(())
}

/// `--kernels DIR`: a folder path relative to Cargo.toml, as `[package.metadata.launch] kernels`
/// must be; the message follows `--kernels `.
fn check_kernels_arg(k: &str) -> Result<(), String> {
    if k.trim_end_matches('/').is_empty() {
        return Err(format!("`{k}` names no folder; pass a folder relative to Cargo.toml, such as `kernels`"));
    }
    if Path::new(k).is_absolute() {
        return Err(format!("`{k}` is absolute; pass a folder relative to Cargo.toml so the crate builds anywhere"));
    }
    if Path::new(k).components().any(|c| c == std::path::Component::ParentDir) {
        return Err(format!(
            "`{k}` leaves the crate's folder (`..`); pass a folder inside it, relative to Cargo.toml, so the crate \
             builds anywhere and `cargo package` takes the kernels along"
        ));
    }
    Ok(())
}

/// Checks that `text` (the Cargo.toml `init` would write at `manifest`) loads as launch-build's
/// config. When the kernel folder is missing it is created for the check, since `init` creates
/// it anyway; it is removed again on failure. Returns whether it was created.
fn validate(manifest: &Path, text: &str, kernels: &Path) -> Result<bool, launch_engine::Error> {
    let first = match launch_engine::Config::parse(manifest, text) {
        Ok(_) => return Ok(false),
        Err(e) => e,
    };
    if std::fs::symlink_metadata(kernels).is_ok() {
        return Err(first);
    }
    // The folders that do not exist yet, deepest first, to remove exactly those.
    let mut missing: Vec<&Path> = Vec::new();
    let mut p = Some(kernels);
    while let Some(dir) = p.filter(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err()) {
        missing.push(dir);
        p = dir.parent();
    }
    if std::fs::create_dir_all(kernels).is_err() {
        return Err(first);
    }
    match launch_engine::Config::parse(manifest, text) {
        Ok(_) => Ok(true),
        Err(e) => {
            for dir in missing {
                let _ = std::fs::remove_dir(dir);
            }
            Err(e)
        }
    }
}

/// `new` in the line endings of `old`: toml_edit writes `\n`, a CRLF Cargo.toml stays CRLF.
fn keep_line_endings(old: &str, new: String) -> String {
    if old.contains("\r\n") {
        new.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        new
    }
}

/// Where the build script is.
enum BuildScript {
    /// `build = false`.
    Disabled,
    /// Relative to the crate root.
    At(PathBuf),
}

/// What `edit_manifest` did.
struct Edit {
    done: Vec<String>,
    build: BuildScript,
    kernel_dir: String,
}

/// Adds `[package.metadata.launch]` and the two dependencies where they are missing.
fn edit_manifest(doc: &mut DocumentMut, deps: &Deps, kernels: Option<&str>) -> Result<Edit, String> {
    let mut done = Vec::new();
    let package = doc
        .get_mut("package")
        .and_then(Item::as_table_like_mut)
        .ok_or("no [package] table (a workspace's root manifest? run init in the crate that has the kernels)")?;
    let build = match package.get("build") {
        Some(b) if b.as_bool() == Some(false) => BuildScript::Disabled,
        Some(b) => BuildScript::At(PathBuf::from(b.as_str().unwrap_or("build.rs"))),
        None => BuildScript::At(PathBuf::from("build.rs")),
    };
    if package.get("metadata").is_none() {
        let mut t = Table::new();
        t.set_implicit(true);
        package.insert("metadata", Item::Table(t));
    }
    let metadata =
        package.get_mut("metadata").and_then(Item::as_table_like_mut).ok_or("`package.metadata` is not a table")?;
    let kernel_dir = match metadata.get("launch") {
        Some(launch) => {
            let existing = launch.get("kernels").and_then(|k| k.as_str()).unwrap_or("kernels").to_string();
            if let Some(k) = kernels.filter(|k| *k != existing) {
                return Err(format!(
                    "[package.metadata.launch] exists already with kernels = \"{existing}\"; edit it to use `{k}`"
                ));
            }
            existing
        }
        None => {
            let mut t = Table::new();
            t.decor_mut().set_prefix(METADATA_COMMENT);
            let mut arches = Array::new();
            for a in DEFAULT_ARCHES {
                arches.push(*a);
            }
            t.insert("arch", value(arches));
            let dir = kernels.unwrap_or("kernels").trim_end_matches('/').to_string();
            if dir != "kernels" {
                t.insert("kernels", value(dir.clone()));
            }
            metadata.insert("launch", Item::Table(t));
            done.push(format!("added [package.metadata.launch] (arch = [{}])", quoted(DEFAULT_ARCHES)));
            dir
        }
    };
    for (section, krate) in [("dependencies", "launch"), ("build-dependencies", "launch-build")] {
        if add_dependency(doc, section, krate, deps)? {
            let dep = deps.dependency(krate);
            done.push(format!("added {krate} to [{section}] ({})", dep.to_string().trim_matches(['{', '}', ' '])));
        }
    }
    Ok(Edit { done, build, kernel_dir })
}

fn quoted(items: &[&str]) -> String {
    items.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ")
}

/// `krate = { path = "...", version = "..." }` in `[section]` unless the crate is there already
/// (in any form).
fn add_dependency(doc: &mut DocumentMut, section: &str, krate: &str, deps: &Deps) -> Result<bool, String> {
    if doc.get(section).is_none() {
        doc.insert(section, Item::Table(Table::new()));
    }
    let table =
        doc.get_mut(section).and_then(Item::as_table_like_mut).ok_or_else(|| format!("`{section}` is not a table"))?;
    if table.get(krate).is_some() {
        return Ok(false);
    }
    table.insert(krate, value(deps.dependency(krate)));
    Ok(true)
}

/// Runs `cargo launch new`.
pub(crate) fn new(args: &NewArgs) -> Result<(), Error> {
    let dir = &args.path_or_name;
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    check_name(&name).and_then(|()| check_new_name(&name)).map_err(|e| Error::Usage(anyhow::anyhow!("{e}")))?;
    if dir.exists() {
        return Err(Error::Usage(anyhow::anyhow!(
            "`{}` exists already; `cargo launch init` sets up an existing crate",
            dir.display()
        )));
    }
    let deps = Deps::read(checkout(args.path.as_deref())?).map_err(|e| anyhow::anyhow!("{e}"))?;
    // Checked before anything is written; the crate is written into a folder beside it and
    // renamed into place when complete, so a failure leaves nothing behind.
    let missing = destination::new_folder(dir, &format!("cannot create `{}`", dir.display()))?;
    let ident = name.replace('-', "_");
    let mut files = Vec::new();
    for (rel, text) in TEMPLATE {
        let text = match *rel {
            "Cargo.toml" => template_manifest(text, &name, &deps)
                .map_err(|e| anyhow::anyhow!("the embedded template's Cargo.toml: {e}"))?,
            "src/main.rs" | "src/tuned.rs" => text.replace("launch_template", &ident).replace("launch-template", &name),
            _ => text.to_string(),
        };
        files.push((*rel, text));
    }
    files.push((".gitignore", "/target\n".to_string()));
    let parent = missing.last().and_then(|m| m.parent()).unwrap_or(dir.parent().unwrap_or(Path::new(".")));
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    let staging = parent.join(format!(".{name}.cargo-launch-new-{}", std::process::id()));
    let written = write_crate(&staging, &files, dir);
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
        destination::remove_created(&missing);
    }
    written?;
    writeln!(
        crate::stdout::stdout(),
        "created `{name}` in {}: kernels/poly.cu (five launch-bounds builds of one kernel), build.rs, src/\n\
         next: cd {} && cargo launch report",
        dir.display(),
        dir.display()
    )
    .context("writing what new did")?;
    Ok(())
}

/// The template's Cargo.toml for package `name`, its dependencies pointing into the checkout with
/// its versions. The template is `publish = false` (it is this project's example); the new crate
/// is the user's, so it drops that and gets placeholders for what `cargo package` asks of a
/// package: a description and a license.
fn template_manifest(text: &str, name: &str, deps: &Deps) -> Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    let package = doc["package"].as_table_mut().ok_or("[package] is not a table")?;
    package["name"] = value(name);
    package.remove("publish");
    package["description"] = value(format!("{name}: CUDA kernels built with cargo-launch"));
    if !package.contains_key("license") {
        package.insert("license", value(LICENSE_PLACEHOLDER));
        if let Some(mut key) = package.key_mut("license") {
            key.leaf_decor_mut().set_prefix(LICENSE_COMMENT);
        }
    }
    for (section, krate) in [("dependencies", "launch"), ("build-dependencies", "launch-build")] {
        let dep = doc
            .get_mut(section)
            .and_then(|s| s.get_mut(krate))
            .and_then(Item::as_inline_table_mut)
            .ok_or_else(|| format!("no {krate} = {{ ... }} in [{section}]"))?;
        deps.point(dep, krate);
    }
    Ok(doc.to_string())
}

/// The new crate's license until its author picks one: cargo-launch's own.
const LICENSE_PLACEHOLDER: &str = "MIT OR Apache-2.0";
const LICENSE_COMMENT: &str = "# A placeholder, as is the description: set your crate's own before publishing it.
";

/// Names cargo accepts but the template's crate cannot build under: `src/main.rs` says
/// `use NAME::...`, and the crate depends on `launch` and `launch-build` by path.
fn check_new_name(name: &str) -> Result<(), String> {
    if name == "_" {
        return Err(
            "`_` cannot be the name of a crate made by `cargo launch new`: its binary says `use <name>::...` and `_` \
             is not an identifier there; pick another name"
                .to_string(),
        );
    }
    let ident = name.replace('-', "_");
    if let Some(taken) = ["launch", "launch_build", "cargo_launch"].iter().find(|t| **t == ident) {
        return Err(format!(
            "`{name}` cannot be the name of a crate made by `cargo launch new`: it clashes with cargo-launch's own \
             crate `{}` (a dependency of the new crate, or this tool); pick another name",
            taken.replace('_', "-")
        ));
    }
    Ok(())
}

/// Cargo's rules for a package name, so `new` refuses what `cargo build` would.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    const KEYWORDS: &[&str] = &[
        "as",
        "async",
        "await",
        "break",
        "const",
        "continue",
        "crate",
        "dyn",
        "else",
        "enum",
        "extern",
        "false",
        "fn",
        "for",
        "if",
        "impl",
        "in",
        "let",
        "loop",
        "match",
        "mod",
        "move",
        "mut",
        "pub",
        "ref",
        "return",
        "self",
        "Self",
        "static",
        "struct",
        "super",
        "trait",
        "true",
        "type",
        "unsafe",
        "use",
        "where",
        "while",
        "abstract",
        "become",
        "box",
        "do",
        "final",
        "macro",
        "override",
        "priv",
        "typeof",
        "unsized",
        "virtual",
        "yield",
        "try",
        "gen",
        "test",
        "core",
        "std",
        "alloc",
        "proc_macro",
        "proc-macro",
    ];
    let fix = "a package name is ASCII letters, digits, `-` and `_`, starting with a letter or `_`";
    let Some(first) = name.chars().next() else {
        return Err(format!("`cargo launch new` needs a name; {fix}"));
    };
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        return Err(format!("`{name}` cannot be a package name: `{}` is not allowed; {fix}", bad.escape_default()));
    }
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Err(format!("`{name}` cannot be a package name: it starts with `{first}`; {fix}"));
    }
    if KEYWORDS.contains(&name) {
        return Err(format!("`{name}` cannot be a package name: it is a Rust keyword or a built-in crate's name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn co() -> Deps {
        Deps::at("/co", "0.1.0")
    }

    const CRATE: &str =
        "[package]\nname = \"k\" # the name\nversion = \"0.1.0\"\n\n# deps below\n[dependencies]\nserde = \"1\"\n";

    #[test]
    fn init_adds_what_is_missing_keeps_comments_and_is_idempotent() {
        let mut doc: DocumentMut = CRATE.parse().unwrap();
        let e = edit_manifest(&mut doc, &co(), None).unwrap();
        let text = doc.to_string();
        assert_eq!(e.done.len(), 3, "{:?}", e.done);
        assert!(text.starts_with("[package]\nname = \"k\" # the name\n"), "{text}");
        assert!(
            text.contains(
                "# deps below\n[dependencies]\nserde = \"1\"\nlaunch = { path = \"/co/launch\", version = \"0.1.0\" }"
            ),
            "{text}"
        );
        assert!(
            text.contains("[build-dependencies]\nlaunch-build = { path = \"/co/launch-build\", version = \"0.1.0\" }"),
            "{text}"
        );
        assert!(
            e.done.contains(&"added launch to [dependencies] (path = \"/co/launch\", version = \"0.1.0\")".to_string()),
            "{:?}",
            e.done
        );
        assert!(text.contains("# cubins and numbers in `cargo launch report`.\n[package.metadata.launch]\narch = [\"sm_80\", \"sm_90\"]\n"), "{text}");
        // Its own config loads.
        let mut again: DocumentMut = text.parse().unwrap();
        let e = edit_manifest(&mut again, &co(), None).unwrap();
        assert!(e.done.is_empty(), "{:?}", e.done);
        assert_eq!(again.to_string(), text);
    }

    #[test]
    fn init_writes_a_kernel_folder_other_than_the_default_and_refuses_a_conflicting_one() {
        let mut doc: DocumentMut = CRATE.parse().unwrap();
        let e = edit_manifest(&mut doc, &co(), Some("cuda/")).unwrap();
        assert_eq!(e.kernel_dir, "cuda");
        assert!(doc.to_string().contains("kernels = \"cuda\""));
        let err = edit_manifest(&mut doc, &co(), Some("other")).err().unwrap();
        assert!(err.contains("exists already with kernels = \"cuda\""), "{err}");
        let mut ws: DocumentMut = "[workspace]\nmembers = []\n".parse().unwrap();
        assert!(edit_manifest(&mut ws, &co(), None).err().unwrap().contains("no [package] table"));
    }

    #[test]
    fn package_names_follow_cargos_rules() {
        assert!(check_name("my-kernels_2").is_ok());
        for bad in ["", "2fast", "a b", "fn", "x.y", "naïve"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_template_manifest_gets_the_name_the_checkout_and_what_packaging_needs() {
        assert!(TEMPLATE[0].1.contains("\npublish = false\n"), "the template itself is never published");
        let text = template_manifest(TEMPLATE[0].1, "gemm-lab", &co()).unwrap();
        assert!(text.contains("name = \"gemm-lab\""), "{text}");
        assert!(
            text.contains("launch = { path = \"/co/launch\", version = \"0.1.0\", features = [\"cudarc\"] }"),
            "{text}"
        );
        assert!(text.contains("launch-build = { path = \"/co/launch-build\", version = \"0.1.0\" }"), "{text}");
        assert!(text.contains("[package.metadata.launch]\narch = "), "comments and layout stay: {text}");
        assert!(!text.contains("publish ="), "{text}");
        assert!(text.contains("description = \"gemm-lab: CUDA kernels built with cargo-launch\""), "{text}");
        assert!(text.contains("before publishing it.\nlicense = \"MIT OR Apache-2.0\"\n"), "{text}");
        let doc: DocumentMut = text.parse().unwrap();
        assert_eq!(doc["package"]["license"].as_str(), Some("MIT OR Apache-2.0"), "in [package]: {text}");
    }

    #[test]
    fn kernels_argument_must_be_a_relative_folder() {
        assert!(check_kernels_arg("cuda/").is_ok());
        assert!(check_kernels_arg("").unwrap_err().contains("names no folder"));
        assert!(check_kernels_arg("/").unwrap_err().contains("names no folder"));
        assert!(check_kernels_arg("/abs/k").unwrap_err().contains("is absolute"));
    }

    #[test]
    fn crlf_manifests_stay_crlf() {
        assert_eq!(keep_line_endings("a\r\nb\r\n", "a\r\nb\nc\n".to_string()), "a\r\nb\r\nc\r\n");
        assert_eq!(keep_line_endings("a\nb\n", "a\nb\nc\n".to_string()), "a\nb\nc\n");
    }

    #[test]
    fn new_refuses_names_the_template_cannot_build_under() {
        for bad in ["_", "launch", "launch-build", "launch_build", "cargo-launch"] {
            assert!(check_new_name(bad).is_err(), "{bad}");
        }
        assert!(check_new_name("launcher").is_ok());
        assert!(check_new_name("_k").is_ok());
    }

    #[test]
    fn validate_creates_a_missing_kernel_folder_only_when_the_config_loads() {
        let tmp = tempfile::tempdir().unwrap();
        let manifest = tmp.path().join("Cargo.toml");
        let good = "[package]\nname = \"k\"\n[package.metadata.launch]\narch = [\"sm_90\"]\nkernels = \"a/b\"\n";
        let bad = "[package]\nname = \"k\"\n[package.metadata.launch]\narch = \"sm_90\"\nkernels = \"a/b\"\n";
        let err = validate(&manifest, bad, &tmp.path().join("a/b")).unwrap_err().to_string();
        assert!(err.contains("package.metadata.launch.arch"), "{err}");
        assert!(!tmp.path().join("a").exists(), "the folders made for the check are gone");
        assert!(validate(&manifest, good, &tmp.path().join("a/b")).unwrap());
        assert!(tmp.path().join("a/b").is_dir());
        assert!(!validate(&manifest, good, &tmp.path().join("a/b")).unwrap(), "an existing folder is not created");
    }
}

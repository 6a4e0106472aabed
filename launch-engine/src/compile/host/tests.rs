use super::*;
use crate::plan::Plan;
use crate::toolchain::Origin;

/// A crate with `meta` in `[package.metadata.launch]` (line 6 on) and the kernel files `files`:
/// its configuration (or the error, with the folder taken out) and kernel files.
fn parse_with(meta: &str, files: &[&str]) -> (tempfile::TempDir, Result<Config, String>, Option<Plan>) {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let p = dir.path().join("kernels").join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }
    std::fs::create_dir_all(dir.path().join("kernels")).unwrap();
    let text = format!("[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\n{meta}\n");
    let config = Config::parse(&dir.path().join("Cargo.toml"), &text).map_err(|e| shown(&dir, e));
    let plan = config.as_ref().ok().map(|c| Plan::resolve(c.clone()).unwrap());
    (dir, config, plan)
}

fn crate_with(meta: &str, files: &[&str]) -> (tempfile::TempDir, Config, Plan) {
    let (dir, config, plan) = parse_with(meta, files);
    (dir, config.unwrap(), plan.unwrap())
}

fn parse(meta: &str) -> Result<Config, String> {
    parse_with(meta, &[]).1
}

fn shown(dir: &tempfile::TempDir, e: Error) -> String {
    e.to_string().replace(&format!("{}/", dir.path().display()), "")
}

/// A toolchain whose ptxas is `ptxas` in `bin` (with nvcc beside it when `nvcc`).
fn toolchain(bin: &Path, version: &str, nvcc: bool) -> Toolchain {
    std::fs::create_dir_all(bin).unwrap();
    // Scripts, not empty files: a toolchain's programs are checked before they run (an empty one
    // is damaged), and these are never run.
    let program = |name: &str| {
        std::fs::write(bin.join(name), "#!/bin/sh\nexit 1\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    };
    program("ptxas");
    if nvcc {
        program("nvcc");
    }
    Toolchain {
        root: bin.parent().unwrap().to_path_buf(),
        origin: Origin::Cache,
        nvrtc: bin.join("libnvrtc.so"),
        ptxas: bin.join("ptxas"),
        include: None,
        cccl_include: None,
        libraries: Vec::new(),
        nvrtc_version: version.into(),
        ptxas_version: version.into(),
    }
}

#[test]
fn host_patterns_are_kept_with_where_they_were_written() {
    let c = parse("arch = [\"sm_90\"]\nhost = [\"mmvq_gguf.cu\", \"./moe/*.cu\", \"launchers/\"]").unwrap();
    let patterns: Vec<&str> = c.host.iter().map(|p| p.pattern.as_str()).collect();
    assert_eq!(patterns, ["mmvq_gguf.cu", "moe/*.cu", "launchers"]);
    let at: Vec<String> = c.host.iter().map(|p| format!("{} {}", p.location, p.key)).collect();
    let at: Vec<&str> = at.iter().map(|s| s.rsplit('/').next().unwrap_or(s)).collect();
    assert_eq!(
        at,
        [
            "Cargo.toml:7:9 package.metadata.launch.host[0]",
            "Cargo.toml:7:25 package.metadata.launch.host[1]",
            "Cargo.toml:7:39 package.metadata.launch.host[2]"
        ]
    );
    let files = ["mmvq_gguf.cu", "moe/topk.cu", "launchers/a/b.cu", "moe/sub/topk.cu", "other.cu"];
    let (_dir, _, plan) =
        crate_with("arch = [\"sm_90\"]\nhost = [\"mmvq_gguf.cu\", \"./moe/*.cu\", \"launchers/\"]", &files);
    let host: Vec<&str> = plan.host_files().map(|f| f.source.kernel_rel.as_str()).collect();
    assert_eq!(host, ["launchers/a/b.cu", "mmvq_gguf.cu", "moe/topk.cu"]);
    assert!(parse("arch = [\"sm_90\"]").unwrap().host.is_empty());
}

#[test]
fn a_bad_host_entry_is_located() {
    let cases: &[(&str, &str)] = &[
        ("host = \"a.cu\"", "Cargo.toml:7:8: `package.metadata.launch.host`: \"a.cu\" is a string; expected a list of kernel files with host code such as [\"launch.cu\", \"moe/*.cu\"]"),
        ("host = [1]", "Cargo.toml:7:9: `package.metadata.launch.host[0]`: 1 is an integer; expected a file, folder or pattern such as \"launch.cu\""),
        ("host = [\"/abs/a.cu\"]", "Cargo.toml:7:9: `package.metadata.launch.host[0]`: `/abs/a.cu` is absolute; expected a file, folder or pattern relative to the kernel folder"),
        ("host = [\"./\"]", "Cargo.toml:7:9: `package.metadata.launch.host[0]`: `./` names no file; expected a file, folder or pattern relative to the kernel folder"),
    ];
    for (meta, want) in cases {
        assert_eq!(&parse(&format!("arch = [\"sm_90\"]\n{meta}")).unwrap_err(), want, "{meta}");
    }
}

#[test]
fn a_host_pattern_that_matches_no_kernel_file_is_a_located_error() {
    let (dir, _, plan) = crate_with(
        "arch = [\"sm_90\"]\nexclude = [\"old\"]\nhost = [\"launch.cu\", \"old/*.cu\"]",
        &["launch.cu", "old/a.cu"],
    );
    let e = shown(&dir, plan.check_host_patterns().unwrap_err());
    assert_eq!(
        e,
        "Cargo.toml:8:22: `package.metadata.launch.host[1]`: `old/*.cu` matches no kernel file under kernels/ (patterns are relative to it; files left out by `exclude` do not count)"
    );
    let (_dir, _, plan) = crate_with("arch = [\"sm_90\"]\nhost = [\"*.cu\"]", &["launch.cu"]);
    assert!(plan.check_host_patterns().is_ok());
}

/// The 12.9 wheels have ptxas but no nvcc: the error says so and names `toolchain = "13.0"`.
#[test]
fn host_files_with_a_toolchain_without_nvcc_name_toolchain_13_0() {
    let (dir, config, _) = crate_with("arch = [\"sm_90\"]\nhost = [\"launch.cu\"]", &["launch.cu"]);
    let t = toolchain(&dir.path().join("tc/bin"), "12.9.86", false);
    let e = shown(&dir, tools(&config, &config.host[0], &t, Ok("/usr/bin/c++".into()), &Env::cli()).unwrap_err());
    assert!(e.starts_with("Cargo.toml:7:9: `package.metadata.launch.host[0]`: `host` files are compiled with nvcc, and the CUDA 12.9 toolchain found (tc) has none: the 12.9 wheels ship NVRTC and ptxas only; set `toolchain = \"13.0\"`"), "{e}");
}

/// What the crate asks for is its configuration (exit 2); what the toolchain or the machine
/// lacks is a toolchain problem (exit 3), located at the `host` entry either way.
#[test]
fn host_tool_problems_are_config_or_toolchain_errors_by_whose_fix_they_need() {
    use crate::error::ErrorKind;
    let (dir, config, _) = crate_with("arch = [\"sm_90\"]\nhost = [\"launch.cu\"]", &["launch.cu"]);
    let kind = |version: &str, nvcc: bool, cxx: Result<PathBuf, String>| {
        let t = toolchain(&dir.path().join(format!("tc-{version}-{nvcc}/bin")), version, nvcc);
        let e = tools(&config, &config.host[0], &t, cxx, &Env::cli()).unwrap_err();
        assert!(!e.diagnostics().is_empty(), "located: {e}");
        e.kind()
    };
    assert_eq!(kind("12.9.86", false, Ok("/usr/bin/c++".into())), ErrorKind::Config, "12.9 has no nvcc: set toolchain");
    assert_eq!(kind("13.0.88", false, Ok("/usr/bin/c++".into())), ErrorKind::Toolchain, "a 13.0 install without nvcc");
    assert_eq!(kind("13.0.88", true, Err("no c++".into())), ErrorKind::Toolchain, "no host C++ compiler");
}

#[test]
fn a_missing_host_compiler_is_said_at_the_host_key() {
    let (dir, config, _) =
        crate_with("toolchain = \"13.0\"\narch = [\"sm_90\"]\nhost = [\"launch.cu\"]", &["launch.cu"]);
    let t = toolchain(&dir.path().join("tc/bin"), "13.0.88", true);
    let why = "`c++` (the `cc` crate's choice: CXX, else c++) is not on PATH".to_string();
    let e = shown(&dir, tools(&config, &config.host[0], &t, Err(why), &Env::cli()).unwrap_err());
    assert_eq!(
        e,
        "Cargo.toml:8:9: `package.metadata.launch.host[0]`: `host` files need a host C++ compiler (nvcc compiles their host code with it), and `c++` (the `cc` crate's choice: CXX, else c++) is not on PATH; install g++ or clang++, or set CXX to one"
    );
}

#[test]
fn the_static_cuda_runtime_is_found_in_wheel_and_toolkit_layouts() {
    let dir = tempfile::tempdir().unwrap();
    for (lib, _) in [("wheel/lib", 0), ("toolkit/targets/sbsa-linux/lib", 1)] {
        std::fs::create_dir_all(dir.path().join(lib)).unwrap();
        std::fs::write(dir.path().join(lib).join("libcudart_static.a"), "").unwrap();
    }
    assert_eq!(cudart_dir(&dir.path().join("wheel/bin/nvcc")), Some(dir.path().join("wheel/lib")));
    assert_eq!(
        cudart_dir(&dir.path().join("toolkit/bin/nvcc")),
        Some(dir.path().join("toolkit/targets/sbsa-linux/lib"))
    );
    assert_eq!(cudart_dir(&dir.path().join("none/bin/nvcc")), None);
}

/// NVRTC spellings become nvcc's; options nvcc lacks are left out.
#[test]
fn crate_flags_reach_nvcc_in_its_spelling() {
    assert_eq!(nvcc_flag("--use_fast_math").as_deref(), Some("--use_fast_math"));
    assert_eq!(nvcc_flag("--std=c++20").as_deref(), Some("--std=c++20"));
    assert_eq!(nvcc_flag("--device-as-default-execution-space").as_deref(), Some("--expt-relaxed-constexpr"));
    assert_eq!(nvcc_flag("--modify-stack-limit=false"), None);
    assert_eq!(nvcc_flag("--device-int128"), None);
    // nvcc has it, same meaning.
    assert_eq!(nvcc_flag("--brief-diagnostics=true").as_deref(), Some("--brief-diagnostics=true"));
}

/// nvcc's stderr with `-Xptxas -v` for two arches: each ptxas run starts at its gmem line, even
/// when a warning comes first; continuation lines stay with their run; nvcc's own messages are
/// kept apart.
#[test]
fn nvcc_output_is_cut_into_one_ptxas_log_per_arch() {
    let text = "\
kernels/a.cu(3): warning #177-D: variable \"x\" was declared but never referenced
ptxas warning : Value of threads per SM for entry _Z1kv is out of range
ptxas info    : 8 bytes gmem
ptxas info    : Compiling entry function '_Z1kv' for 'sm_80'
ptxas info    : Function properties for _Z1kv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers, 352 bytes cmem[0]
ptxas info    : 8 bytes gmem
ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'
ptxas info    : Function properties for _Z1kv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers
#$ _NVVM_BRANCH_=nvvm
a host compiler's note
";
    let (nvcc, runs) = super::nvcc::split_log(text);
    assert_eq!(
        nvcc,
        "kernels/a.cu(3): warning #177-D: variable \"x\" was declared but never referenced\na host compiler's note\n"
    );
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs[0].starts_with("ptxas warning : Value of threads") && runs[0].contains("for 'sm_80'"), "{}", runs[0]);
    assert!(runs[0].contains("    0 bytes stack frame") && !runs[0].contains("sm_90"), "{}", runs[0]);
    assert!(
        runs[1].starts_with("ptxas info    : 8 bytes gmem")
            && runs[1].ends_with("Used 12 registers, used 0 barriers\n")
    );
    // A launcher file without kernels: each run is its gmem line alone.
    let (_, runs) = super::nvcc::split_log("ptxas info    : 0 bytes gmem\nptxas info    : 0 bytes gmem\n");
    assert_eq!(runs, ["ptxas info    : 0 bytes gmem\n", "ptxas info    : 0 bytes gmem\n"]);
}

/// One arch's ptxas block as nvcc prints it, naming `kernels` for `arch`.
fn block(arch: &str, kernels: &[&str]) -> String {
    let mut b = "ptxas info    : 0 bytes gmem\n".to_string();
    for k in kernels {
        b.push_str(&format!("ptxas info    : Compiling entry function '{k}' for '{arch}'\n"));
        b.push_str(&format!("ptxas info    : Function properties for {k}\n    0 bytes stack frame\n"));
    }
    b
}

/// Issue 32, class 12: the blocks of a side-by-side compile come as the arches finish; each goes
/// to the arch it names, and whatever cannot be told apart is refused (the compile then runs one
/// arch at a time).
#[test]
fn side_by_side_ptxas_blocks_are_given_to_the_arches_they_name() {
    let arches: Vec<launch::Arch> = ["sm_80", "sm_90", "sm_100"].iter().map(|a| a.parse().unwrap()).collect();
    let (a80, a90, a100) = (block("sm_80", &["_Z1kv"]), block("sm_90", &["_Z1kv"]), block("sm_100", &["_Z1kv"]));
    let by = |runs: &[&String]| nvcc::by_arch(runs.iter().map(|r| r.to_string()).collect(), &arches);
    // Finished in any order.
    for runs in [[&a90, &a100, &a80], [&a100, &a80, &a90], [&a80, &a90, &a100]] {
        assert_eq!(by(&runs), Some(vec![a80.clone(), a90.clone(), a100.clone()]));
    }
    // No kernel for sm_80 and sm_100 (guarded): their blocks are the same text, either fits.
    let empty = block("", &[]);
    assert_eq!(by(&[&a90, &empty, &empty]), Some(vec![empty.clone(), a90.clone(), empty.clone()]));
    // What cannot be told apart.
    let mixed = format!("{a80}{}", block("sm_90", &["_Z1jv"]).lines().nth(1).unwrap());
    let other_empty = format!("{empty}ptxas warning : something\n");
    for (what, runs) in [
        ("a block naming two arches", vec![&mixed, &a100, &empty]),
        ("two blocks naming one arch", vec![&a80, &a80, &a100]),
        ("unnamed blocks that differ", vec![&a80, &empty, &other_empty]),
        ("an arch the compile did not have", vec![&block("sm_75", &["_Z1kv"]), &a90, &a100]),
        ("a block too few", vec![&a80, &a90]),
    ] {
        assert_eq!(by(&runs), None, "{what}");
    }
}

/// Issue 32, class 11: a host file's one nvcc run does every arch's work, so its limit is the
/// per-run limit once per arch (never less than once, never overflowing).
#[test]
fn a_host_files_nvcc_run_may_take_the_limit_once_per_arch() {
    let per = std::time::Duration::from_secs(1800);
    let cases = [(0, 1800), (1, 1800), (2, 3600), (3, 5400)];
    for (arches, secs) in cases {
        assert_eq!(nvcc::limit(per, arches), std::time::Duration::from_secs(secs), "{arches} arches");
    }
    assert_eq!(nvcc::limit(std::time::Duration::MAX, 2), std::time::Duration::MAX);
}

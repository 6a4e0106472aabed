//! Tests of [`super`] (config.rs).

use super::*;

/// A crate folder with `kernels/`, `inc/`, a file and three kinds of broken links.
fn crate_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir(p.join("kernels")).unwrap();
    std::fs::create_dir(p.join("inc")).unwrap();
    std::fs::write(p.join("file.cu"), "").unwrap();
    #[cfg(unix)]
    for (link, target) in
        [("self", "self"), ("pong", "ping"), ("ping", "pong"), ("dangling", "gone"), ("to_file", "file.cu")]
    {
        std::os::unix::fs::symlink(target, p.join(link)).unwrap();
    }
    dir
}

/// The message for a whole Cargo.toml in `dir`, with the folder cut so it reads `Cargo.toml:L:C`.
fn message_in(dir: &Path, text: &str) -> String {
    match Config::parse(&dir.join("Cargo.toml"), text) {
        Ok(c) => panic!("accepted:\n{text}\n{c:?}"),
        Err(e) => e.to_string().replace(&format!("{}/", dir.display()), ""),
    }
}

/// `[package.metadata.launch]` starts on line 5; its first key is on line 6.
fn manifest(meta: &str) -> String {
    format!("[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\n{meta}\n")
}

fn parse(meta: &str) -> Result<Config, Error> {
    let dir = crate_dir();
    Config::parse(&dir.path().join("Cargo.toml"), &manifest(meta))
}

const CHOICES: &str = "valid choices: sm_50, sm_52, sm_53, sm_60, sm_61, sm_62, sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_100f, sm_101, sm_101a, sm_101f, sm_103, sm_103a, sm_103f, sm_110, sm_110a, sm_110f, sm_120, sm_120a, sm_120f, sm_121, sm_121a, sm_121f";
const ARCH_FORM: &str = " (names are `sm_` and a compute capability, with an `a` or `f` suffix where the arch has one)";

/// Issue 11 item 9: every bad value gives the full key path, `Cargo.toml:LINE:COL` of the
/// value, the value as written and what is expected in TOML terms (no Rust type names).
#[test]
fn every_bad_value_names_key_path_position_value_and_expectation() {
    let a = "arch = [\"sm_90\"]\n";
    let cases: &[(&str, &str)] = &[
        // threads
        ("threads = \"x\"", "Cargo.toml:7:11: `package.metadata.launch.threads`: \"x\" is a string; expected an integer from 1 to 1024"),
        ("threads = 128.5", "Cargo.toml:7:11: `package.metadata.launch.threads`: 128.5 is a floating-point number; expected an integer from 1 to 1024"),
        ("threads = true", "Cargo.toml:7:11: `package.metadata.launch.threads`: true is a boolean; expected an integer from 1 to 1024"),
        ("threads = 1979-05-27", "Cargo.toml:7:11: `package.metadata.launch.threads`: 1979-05-27 is a date-time; expected an integer from 1 to 1024"),
        ("threads = [256]", "Cargo.toml:7:11: `package.metadata.launch.threads`: [256] is a list; expected an integer from 1 to 1024"),
        ("[package.metadata.launch.threads]\nx = 1", "Cargo.toml:7:1: `package.metadata.launch.threads`: [package.metadata.launch.threads] is a table; expected an integer from 1 to 1024"),
        ("threads = 0", "Cargo.toml:7:11: `package.metadata.launch.threads`: 0 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
        ("threads = -5", "Cargo.toml:7:11: `package.metadata.launch.threads`: -5 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
        ("threads = 0x1000", "Cargo.toml:7:11: `package.metadata.launch.threads`: 0x1000 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
        ("threads = 4294967553", "Cargo.toml:7:11: `package.metadata.launch.threads`: 4294967553 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
        ("threads = 99999999999999999999", "Cargo.toml:7:11: `package.metadata.launch.threads`: invalid TOML: number too large to fit in target type at `99999999999999999999` (TOML integers are 64-bit: -9223372036854775808 to 9223372036854775807)"),
        // max-spill-bytes
        ("max-spill-bytes = -1", "Cargo.toml:7:19: `package.metadata.launch.max-spill-bytes`: -1 is not a byte count; expected a non-negative integer number of bytes (0 to 4294967295)"),
        ("max-spill-bytes = 4294967296", "Cargo.toml:7:19: `package.metadata.launch.max-spill-bytes`: 4294967296 is not a byte count; expected a non-negative integer number of bytes (0 to 4294967295)"),
        ("max-spill-bytes = \"1K\"", "Cargo.toml:7:19: `package.metadata.launch.max-spill-bytes`: \"1K\" is a string; expected a non-negative integer number of bytes"),
        // kernel.<name>
        ("kernel = 5", "Cargo.toml:7:10: `package.metadata.launch.kernel`: 5 is an integer; expected a table of per-kernel settings such as [package.metadata.launch.kernel.my_kernel]"),
        ("[[package.metadata.launch.kernel]]\nthreads = 1", "Cargo.toml:7:1: `package.metadata.launch.kernel`: [[package.metadata.launch.kernel]] is a list of tables; expected a table of per-kernel settings such as [package.metadata.launch.kernel.my_kernel]"),
        ("kernel = { poly_eval = 256 }", "Cargo.toml:7:24: `package.metadata.launch.kernel.poly_eval`: 256 is an integer; expected a table of per-kernel settings such as { threads = 256 }"),
        ("[package.metadata.launch.kernel.poly_eval]\nthreads = \"x\"", "Cargo.toml:8:11: `package.metadata.launch.kernel.poly_eval.threads`: \"x\" is a string; expected an integer from 1 to 1024"),
        ("[package.metadata.launch.kernel.poly_eval]\nthreads = 2048", "Cargo.toml:8:11: `package.metadata.launch.kernel.poly_eval.threads`: 2048 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
        ("kernel.k.dynamic-smem = -4096", "Cargo.toml:7:25: `package.metadata.launch.kernel.k.dynamic-smem`: -4096 is not a dynamic shared memory size; expected 0 to 232448 bytes (227 KB, the most shared memory any GPU gives a block)"),
        ("[package.metadata.launch.kernel.k]\nmax-spill-bytes = 1.5", "Cargo.toml:8:19: `package.metadata.launch.kernel.k.max-spill-bytes`: 1.5 is a floating-point number; expected a non-negative integer number of bytes"),
        ("[package.metadata.launch.kernel.\"a b\"]\nthreads = 0", "Cargo.toml:8:11: `package.metadata.launch.kernel.\"a b\".threads`: 0 is not a block size; expected an integer from 1 to 1024 (the largest block any GPU allows)"),
        // unknown keys
        ("archs = 1", "Cargo.toml:7:1: `package.metadata.launch.archs`: unknown key `archs` (did you mean `arch`?); the keys [package.metadata.launch] accepts: arch, kernels, include, defines, threads, max-spill-bytes, kernel, exclude, flags, ptxas-flags, std-headers, file, min-driver, toolchain, tune, host, types, ptx-consts, cache-remote"),
        ("max_spill_bytes = 1", "Cargo.toml:7:1: `package.metadata.launch.max_spill_bytes`: unknown key `max_spill_bytes` (did you mean `max-spill-bytes`?); the keys [package.metadata.launch] accepts: arch, kernels, include, defines, threads, max-spill-bytes, kernel, exclude, flags, ptxas-flags, std-headers, file, min-driver, toolchain, tune, host, types, ptx-consts, cache-remote"),
        ("optimize = true", "Cargo.toml:7:1: `package.metadata.launch.optimize`: unknown key `optimize`; the keys [package.metadata.launch] accepts: arch, kernels, include, defines, threads, max-spill-bytes, kernel, exclude, flags, ptxas-flags, std-headers, file, min-driver, toolchain, tune, host, types, ptx-consts, cache-remote"),
        ("[package.metadata.launch.kernel.k]\ndynamic_smem = 1", "Cargo.toml:8:1: `package.metadata.launch.kernel.k.dynamic_smem`: unknown key `dynamic_smem` (did you mean `dynamic-smem`?); the keys [package.metadata.launch.kernel.<name>] accepts: max-spill-bytes, dynamic-smem, threads"),
        // include
        ("include = \"inc\"", "Cargo.toml:7:11: `package.metadata.launch.include`: \"inc\" is a string; expected a list of folder paths such as [\"include\"]"),
        ("include = [\"inc\", 5]", "Cargo.toml:7:19: `package.metadata.launch.include[1]`: 5 is an integer; expected a folder path such as \"include\""),
        ("include = [\"inc\", \"\"]", "Cargo.toml:7:19: `package.metadata.launch.include[1]`: \"\" is an empty path; expected a folder path such as \"include\""),
        ("include = [\"nope\"]", "Cargo.toml:7:12: `package.metadata.launch.include[0]`: `nope` does not exist; expected an include folder, relative to Cargo.toml"),
        ("include = [\"/nonexistent-launch-include\"]", "Cargo.toml:7:12: `package.metadata.launch.include[0]`: `/nonexistent-launch-include` does not exist; expected an include folder (absolute, as given)"),
        ("flags = [\"-I/nonexistent-launch-include\"]", "Cargo.toml:7:10: `package.metadata.launch.flags[0]`: `/nonexistent-launch-include` does not exist; expected an include folder (absolute, as given)"),
        // defines
        ("defines = \"N=1\"", "Cargo.toml:7:11: `package.metadata.launch.defines`: \"N=1\" is a string; expected a table of macro definitions such as { N = 128 }"),
        ("defines = [\"N\"]", "Cargo.toml:7:11: `package.metadata.launch.defines`: [\"N\"] is a list; expected a table of macro definitions such as { N = 128 }"),
        ("defines = { N = [1] }", "Cargo.toml:7:17: `package.metadata.launch.defines.N`: [1] is a list; expected a string, integer, floating-point number or boolean (the macro's value)"),
        ("defines = { N = { M = 1 } }", "Cargo.toml:7:17: `package.metadata.launch.defines.N`: { M = 1 } is a table; expected a string, integer, floating-point number or boolean (the macro's value)"),
        ("types = 1", "Cargo.toml:7:9: `package.metadata.launch.types`: 1 is an integer; expected a table of C++ type names and Rust paths such as { Params = \"crate::Params\" }"),
        ("types = { Params = 1 }", "Cargo.toml:7:20: `package.metadata.launch.types.Params`: 1 is an integer; expected a Rust path such as \"crate::Params\""),
        ("types = { Params = \"crate::Params<f32>\" }", "Cargo.toml:7:20: `package.metadata.launch.types.Params`: `crate::Params<f32>` is not a Rust type path; expected one such as \"crate::Params\" (identifiers joined by `::`)"),
        ("types = { Params = \"\" }", "Cargo.toml:7:20: `package.metadata.launch.types.Params`: `` is not a Rust type path; expected one such as \"crate::Params\" (identifiers joined by `::`)"),
        ("defines = { \"1N\" = 1 }", "Cargo.toml:7:13: `package.metadata.launch.defines.1N`: `1N` is not a C identifier; expected a macro name of letters, digits and `_`, not starting with a digit"),
        ("defines = { \"A B\" = 1 }", "Cargo.toml:7:13: `package.metadata.launch.defines.\"A B\"`: `A B` is not a C identifier; expected a macro name of letters, digits and `_`, not starting with a digit"),
        ("defines = { N = nan }", "Cargo.toml:7:17: `package.metadata.launch.defines.N`: nan is not a finite number; C has no literal for it"),
        ("defines = { N = \"a\\nb\" }", "Cargo.toml:7:17: `package.metadata.launch.defines.N`: \"a\\nb\" has a line break or NUL; a macro value must be one line"),
        // kernels
        ("kernels = 5", "Cargo.toml:7:11: `package.metadata.launch.kernels`: 5 is an integer; expected a folder path such as \"kernels\""),
        ("kernels = \"\"", "Cargo.toml:7:11: `package.metadata.launch.kernels`: \"\" is an empty path; expected a folder path such as \"kernels\""),
        ("kernels = \"nope\"", "Cargo.toml:7:11: `package.metadata.launch.kernels`: `nope` does not exist; expected a folder of .cu files, relative to Cargo.toml"),
        ("kernels = \"file.cu\"", "Cargo.toml:7:11: `package.metadata.launch.kernels`: `file.cu` is a file, not a folder; expected a folder of .cu files, relative to Cargo.toml"),
        ("kernels = \"/abs\"", "Cargo.toml:7:11: `package.metadata.launch.kernels`: `/abs` is absolute; use a path relative to Cargo.toml so the crate builds anywhere"),
    ];
    let dir = crate_dir();
    for (meta, expected) in cases {
        let text = manifest(&format!("{a}{meta}"));
        assert_eq!(message_in(dir.path(), &text), *expected, "for:\n{meta}");
    }
}

#[test]
fn every_bad_arch_names_the_element_and_the_choices() {
    let cases: &[(&str, String)] = &[
        ("arch = \"sm_90\"", "Cargo.toml:6:8: `package.metadata.launch.arch`: \"sm_90\" is a string; expected a list of arch names such as [\"sm_90\"]".into()),
        ("arch = [\"sm_90\", 90]", "Cargo.toml:6:18: `package.metadata.launch.arch[1]`: 90 is an integer; expected an arch name such as \"sm_90\"".into()),
        ("arch = [\"sm_90\", [\"sm_80\"]]", "Cargo.toml:6:18: `package.metadata.launch.arch[1]`: [\"sm_80\"] is a list; expected an arch name such as \"sm_90\"".into()),
        ("arch = { sm = 90 }", "Cargo.toml:6:8: `package.metadata.launch.arch`: { sm = 90 } is a table; expected a list of arch names such as [\"sm_90\"]".into()),
        ("arch = [\"sm_90\",\n  \"sm_9O\"]", format!("Cargo.toml:7:3: `package.metadata.launch.arch[1]`: `sm_9O` is not a GPU architecture (did you mean `sm_90`?); {CHOICES}{ARCH_FORM}")),
        ("arch = [\"\"]", format!("Cargo.toml:6:9: `package.metadata.launch.arch[0]`: an empty name is not a GPU architecture; {CHOICES}{ARCH_FORM}")),
        ("arch = [\"compute_90\"]", format!("Cargo.toml:6:9: `package.metadata.launch.arch[0]`: `compute_90` is not a GPU architecture (did you mean `sm_90`? `compute_*` names a virtual architecture; a cubin needs a real `sm_*` one); {CHOICES}{ARCH_FORM}")),
        ("arch = []", format!("Cargo.toml:6:8: `package.metadata.launch.arch`: the list is empty; name at least one GPU architecture; {CHOICES}")),
        ("threads = 256", format!("Cargo.toml:5:1: `package.metadata.launch.arch`: missing: list the GPU architectures to build for, e.g. arch = [\"sm_90\"]; {CHOICES}")),
    ];
    let dir = crate_dir();
    for (meta, expected) in cases {
        assert_eq!(message_in(dir.path(), &manifest(meta)), *expected, "for:\n{meta}");
    }
}

/// The tables above `[package.metadata.launch]`: each wrong shape names its own key.
#[test]
fn enclosing_tables_of_the_wrong_type_name_their_key() {
    let cases: &[(&str, &str)] = &[
        ("package = 5", "Cargo.toml:1:11: `package`: 5 is an integer; expected a table: the [package] section"),
        ("[package]\nname = 5", "Cargo.toml:2:8: `package.name`: 5 is an integer; expected a package name string such as \"my-crate\""),
        ("[package]\nname = \"k\"\nmetadata = 5", "Cargo.toml:3:12: `package.metadata`: 5 is an integer; expected a table such as [package.metadata.launch]"),
        ("[package]\nname = \"k\"\n[package.metadata]\nlaunch = \"sm_90\"", "Cargo.toml:4:10: `package.metadata.launch`: \"sm_90\" is a string; expected a table of launch settings such as [package.metadata.launch] with arch = [\"sm_90\"]"),
        ("[package]\nname = \"k\"\n[package.metadata]\nlaunch.arch = \"sm_90\"", "Cargo.toml:4:15: `package.metadata.launch.arch`: \"sm_90\" is a string; expected a list of arch names such as [\"sm_90\"]"),
        ("[package]\nname = \"k\"\n[package.metadata.launch]\narch = [\"sm_90\"]\nthreads =\n", "Cargo.toml:5:10: `package.metadata.launch.threads`: invalid TOML: invalid string; expected `\"`, `'`"),
    ];
    let dir = crate_dir();
    for (text, expected) in cases {
        assert_eq!(message_in(dir.path(), text), *expected, "for:\n{text}");
    }
    let m = message_in(dir.path(), "[package]\nname = \"k\"\n");
    assert_eq!(
        m,
        "Cargo.toml: `package.metadata.launch`: missing table; add to Cargo.toml:\n\n[package.metadata.launch]\narch = [\"sm_90\"]\n"
    );
}

/// Issue 11 item 12: a `kernels` link that loops or dangles says so instead of "does not exist".
#[cfg(unix)]
#[test]
fn broken_links_as_kernel_folder_say_what_is_wrong() {
    let a = "arch = [\"sm_90\"]\n";
    let tail = "; expected a folder of .cu files, relative to Cargo.toml";
    let cases: &[(&str, &str)] = &[
        ("kernels = \"self\"", "`self` is a symbolic-link loop (it points to `self`, back to itself)"),
        ("kernels = \"ping\"", "`ping` is a symbolic-link loop (it points to `pong` → `ping`, back to itself)"),
        ("kernels = \"dangling\"", "`dangling` is a symbolic link to `gone`, which does not exist"),
        ("kernels = \"to_file\"", "`to_file` is a symbolic link to `file.cu`, which is not a folder"),
    ];
    let dir = crate_dir();
    for (meta, why) in cases {
        let m = message_in(dir.path(), &manifest(&format!("{a}{meta}")));
        assert_eq!(m, format!("Cargo.toml:7:11: `package.metadata.launch.kernels`: {why}{tail}"));
    }
    // The default folder, `kernels`, as a link to itself.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("kernels", dir.path().join("kernels")).unwrap();
    let m = message_in(dir.path(), &manifest(a));
    assert_eq!(
        m,
        "Cargo.toml:5:1: `package.metadata.launch.kernels`: the default kernel folder `kernels` is a symbolic-link loop (it points to `kernels`, back to itself); create it or set `kernels = \"...\"`"
    );
    // Without the folder at all.
    std::fs::remove_file(dir.path().join("kernels")).unwrap();
    let m = message_in(dir.path(), &manifest(a));
    assert!(
        m.ends_with("the default kernel folder `kernels` does not exist; create it or set `kernels = \"...\"`"),
        "{m}"
    );
}

#[cfg(unix)]
#[test]
fn a_link_to_a_folder_is_a_folder() {
    let dir = crate_dir();
    std::os::unix::fs::symlink("kernels", dir.path().join("via_link")).unwrap();
    let text = manifest("arch = [\"sm_90\"]\nkernels = \"via_link\"");
    let c = Config::parse(&dir.path().join("Cargo.toml"), &text).unwrap();
    assert_eq!(c.kernel_dir, PathBuf::from("via_link"));
}

#[test]
fn arch_lists_from_the_environment_name_the_bad_entry() {
    let names = |l: &str| parse_arch_list(l).map(|v| v.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    assert_eq!(names("sm_100, sm_90,sm_90").unwrap(), ["sm_90", "sm_100"]);
    assert_eq!(
        names("sm_90,sm_9O").unwrap_err(),
        format!(
            "entry 2 of `sm_90,sm_9O`: `sm_9O` is not a GPU architecture (did you mean `sm_90`?); {CHOICES}{ARCH_FORM}"
        )
    );
    assert_eq!(
        names("sm_90,,sm_100").unwrap_err(),
        "entry 2 of `sm_90,,sm_100` is empty; write comma-separated arch names such as sm_90,sm_100"
    );
    assert_eq!(
        names(" ").unwrap_err(),
        format!("the list is empty; write comma-separated arch names such as sm_90,sm_100; {CHOICES}")
    );
    assert_eq!(
        names("90").unwrap_err(),
        format!("`90` is not a GPU architecture (did you mean `sm_90`?); {CHOICES}{ARCH_FORM}")
    );
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
    assert_eq!(c.kernel_dir, PathBuf::from("kernels"));
}

/// A float macro keeps its point: `1.0` must not become the integer `1` in C.
#[test]
fn float_defines_stay_floats() {
    let c =
        parse("arch = [\"sm_90\"]\n[package.metadata.launch.defines]\nONE = 1.0\nSMALL = 1e-7\nHEX = 0x10").unwrap();
    let value = |n: &str| c.defines.iter().find(|(k, _)| k == n).unwrap().1.clone().unwrap();
    assert_eq!((value("ONE").as_str(), value("SMALL").as_str(), value("HEX").as_str()), ("1.0", "1e-7", "16"));
}

#[test]
fn spill_budget_and_per_kernel_settings() {
    let c = parse(
        "arch = [\"sm_90\"]\nmax-spill-bytes = 0\n[package.metadata.launch.kernel.poly_eval]\nmax-spill-bytes = 8192\ndynamic-smem = 4096\nthreads = 384\n[package.metadata.launch.kernel.other]",
    )
    .unwrap();
    assert_eq!(c.max_spill_bytes, Some(0));
    let k = &c.kernel["poly_eval"];
    assert_eq!((k.max_spill_bytes, k.dynamic_smem, k.threads), (Some(8192), Some(4096), Some(384)));
    assert_eq!(c.kernel["other"], KernelConfig::default());
    let c = parse("arch = [\"sm_90\"]\nkernel = { k = { threads = 64 } }").unwrap();
    assert_eq!(c.kernel["k"].threads, Some(64));
}

/// `flags` and `ptxas-flags` are mapped; `-I` joins `include`, `-Xptxas` joins `ptxas-flags`.
#[test]
fn flags_are_mapped_and_placed() {
    let c = parse(
        "arch = [\"sm_90\"]\nflags = [\"-std=c++17\", \"--expt-relaxed-constexpr\", \"-I\", \"inc\", \"-DX=1\", \"-Xptxas\", \"-O2\", \"-O3\"]\nptxas-flags = [\"-warn-spills\", \"--opt-level=2\"]",
    )
    .unwrap();
    assert_eq!(c.flags, ["--std=c++17", "--device-as-default-execution-space", "--define-macro=X=1"]);
    assert_eq!(c.include_dirs, [PathBuf::from("inc")]);
    assert_eq!(c.ptxas_flags, ["--opt-level=2", "--warn-on-spills"]);
    // nvcc's own options, for `host` files, each where it is written.
    let options: Vec<(&[String], &str)> = c.nvcc_flags.iter().map(|f| (f.option.as_slice(), f.key.as_str())).collect();
    assert_eq!(options, [(&["-O3".to_string()][..], "package.metadata.launch.flags[7]")]);
    assert_eq!(c.nvcc_flags[0].location.to_string(), format!("{}:7:92", c.manifest_path.display()));
    assert!(c.std_headers);
    assert!(!parse("arch = [\"sm_90\"]\nstd-headers = false").unwrap().std_headers);
}

/// A refused or unknown flag is an error at its element, with the reason.
#[test]
fn refused_flags_are_located() {
    let a = "arch = [\"sm_90\"]\n";
    let cases: &[(&str, &str)] = &[
        ("flags = [\"-std=c++17\", \"-arch=sm_80\"]", "Cargo.toml:7:24: `package.metadata.launch.flags[1]`: `-arch=sm_80` is not allowed: launch-build sets the target architecture of every compile from `arch` (and a file's own `arch`)"),
        ("flags = [\"-dc\"]", "Cargo.toml:7:10: `package.metadata.launch.flags[0]`: `-dc` is not allowed: write `-rdc=true`: launch-build passes nvcc's `-c` itself"),
        ("flags = [\"-I\", \"nope\"]", "Cargo.toml:7:10: `package.metadata.launch.flags[0]`: `nope` does not exist; expected an include folder, relative to Cargo.toml"),
        ("flags = \"-std=c++17\"", "Cargo.toml:7:9: `package.metadata.launch.flags`: \"-std=c++17\" is a string; expected a list of compiler options such as [\"-std=c++17\"]"),
        ("flags = [\"-ccbin\", \"clang++\"]", "Cargo.toml:7:10: `package.metadata.launch.flags[0]`: `-ccbin` is not allowed: launch-build gives nvcc the host C++ compiler that cargo's `cc` chooses; set CXX to the one you want"),
        ("flags = [17]", "Cargo.toml:7:10: `package.metadata.launch.flags[0]`: 17 is an integer; expected a string, one option per element, such as \"-std=c++17\""),
        ("ptxas-flags = [\"-O3\", \"--maxrregcount=32\"]", "Cargo.toml:7:23: `package.metadata.launch.ptxas-flags[1]`: `--maxrregcount=32` is not allowed: register and block limits belong to each kernel's launch contract: write `// @launch(threads, min_blocks, max_regs)` above the kernel (or use `__launch_bounds__`)"),
        ("exclude = [\"\"]", "Cargo.toml:7:12: `package.metadata.launch.exclude[0]`: `` names no file; expected a file, folder or pattern relative to the kernel folder"),
        ("exclude = [\"/abs\"]", "Cargo.toml:7:12: `package.metadata.launch.exclude[0]`: `/abs` is absolute; expected a file, folder or pattern relative to the kernel folder"),
        ("ptx-consts = 1", "Cargo.toml:7:14: `package.metadata.launch.ptx-consts`: 1 is an integer; expected a file name such as \"ptx.rs\""),
        ("ptx-consts = \"src/ptx.rs\"", "Cargo.toml:7:14: `package.metadata.launch.ptx-consts`: `src/ptx.rs` is not a plain file name (the file is written directly under OUT_DIR); write a file name such as \"ptx.rs\""),
        ("ptx-consts = \"../ptx.rs\"", "Cargo.toml:7:14: `package.metadata.launch.ptx-consts`: `../ptx.rs` is not a plain file name (the file is written directly under OUT_DIR); write a file name such as \"ptx.rs\""),
        ("ptx-consts = \"ptx.txt\"", "Cargo.toml:7:14: `package.metadata.launch.ptx-consts`: `ptx.txt` is not the name of a Rust file (`<name>.rs`); write a file name such as \"ptx.rs\""),
        ("ptx-consts = \".rs\"", "Cargo.toml:7:14: `package.metadata.launch.ptx-consts`: `.rs` is not a plain file name (the file is written directly under OUT_DIR); write a file name such as \"ptx.rs\""),
        ("ptx-consts = \"\"", "Cargo.toml:7:14: `package.metadata.launch.ptx-consts`: `` is not the name of a Rust file (`<name>.rs`); write a file name such as \"ptx.rs\""),
        ("std-headers = 1", "Cargo.toml:7:15: `package.metadata.launch.std-headers`: 1 is an integer; expected true or false"),
        ("[package.metadata.launch.file.\"a.cu\"]\narch = [\"sm_80\"]", "Cargo.toml:8:9: `package.metadata.launch.file.\"a.cu\".arch[0]`: `sm_80` is not in the crate's `arch` (sm_90); a file's `arch` chooses among those"),
        ("[package.metadata.launch.file.\"a.cu\"]\narch = []", "Cargo.toml:8:8: `package.metadata.launch.file.\"a.cu\".arch`: the list is empty; to leave files out, use `exclude`"),
        ("[package.metadata.launch.file.\"a.cu\"]\nthreads = 1", "Cargo.toml:8:1: `package.metadata.launch.file.\"a.cu\".threads`: unknown key `threads`; the keys [package.metadata.launch.file.\"<pattern>\"] accepts: flags, ptxas-flags, defines, arch"),
        ("[package.metadata.launch.file.\"a.cu\"]\nflags = [\"-Iinc\"]", "Cargo.toml:8:10: `package.metadata.launch.file.\"a.cu\".flags[0]`: an include folder cannot be given to some files only: its headers are tracked for the whole crate; add it to `include` (or the crate's `flags`)"),
        ("[package.metadata.launch.file.\"a.cu\"]\nflags = [\"-o\", \"x\"]", "Cargo.toml:8:10: `package.metadata.launch.file.\"a.cu\".flags[0]`: `-o` is not allowed: launch-build chooses what is produced: PTX for each arch from NVRTC, then a cubin from ptxas, both embedded in the crate"),
        ("[package.metadata.launch.file.\"a.cu\"]\ndefines = { \"1X\" = 1 }", "Cargo.toml:8:13: `package.metadata.launch.file.\"a.cu\".defines.1X`: `1X` is not a C identifier; expected a macro name of letters, digits and `_`, not starting with a digit"),
        ("file = 5", "Cargo.toml:7:8: `package.metadata.launch.file`: 5 is an integer; expected a table of per-file settings such as [package.metadata.launch.file.\"quantized.cu\"]"),
    ];
    let dir = crate_dir();
    for (meta, expected) in cases {
        assert_eq!(message_in(dir.path(), &manifest(&format!("{a}{meta}"))), *expected, "for:\n{meta}");
    }
}

#[test]
fn globs_match_as_documented() {
    let yes = [
        ("*.cu", "a.cu"),
        ("a?.cu", "ab.cu"),
        ("**/*.cu", "a.cu"),
        ("**/*.cu", "x/y/a.cu"),
        ("x/**", "x/y/z.cu"),
        ("x/**/z.cu", "x/z.cu"),
        ("x/**/z.cu", "x/a/b/z.cu"),
        ("mm*_gguf", "mmq_gguf"),
        ("fill_*", "fill_"),
        ("**", ""),
    ];
    let no =
        [("*.cu", "x/a.cu"), ("a?.cu", "a/.cu"), ("x/**/z.cu", "xz.cu"), ("fill_*", "fil"), ("a", "ab"), ("", "a")];
    for (p, t) in yes {
        assert!(glob_match(p, t), "{p} should match {t}");
    }
    for (p, t) in no {
        assert!(!glob_match(p, t), "{p} should not match {t}");
    }
    assert!(path_matches("moe", "moe/a/b.cu") && path_matches("moe/", "moe/a.cu") && !path_matches("moe", "moe2/a.cu"));
    // Quadratic at worst in pattern × text, never exponential.
    let started = std::time::Instant::now();
    assert!(!glob_match(&"*a".repeat(200), &"a".repeat(199)));
    assert!(started.elapsed().as_secs() < 5);
}

#[test]
fn default_host_block_is_256() {
    assert_eq!(parse("arch = [\"sm_80\"]").unwrap().host_threads, 256);
}

#[test]
fn line_col_counts_from_one() {
    assert_eq!(line_col("ab\ncd", 0), (1, 1));
    assert_eq!(line_col("ab\ncd", 4), (2, 2));
    assert_eq!(line_col("é", 1), (1, 1));
    assert_eq!(line_col("ab", 99), (1, 3));
}

/// Mutated manifests (bytes flipped, cut, repeated) give `Ok` or an error, never a panic, and
/// every error that has a position carries `Cargo.toml:LINE:COL`.
#[test]
fn mutated_manifests_never_panic() {
    let base = manifest(
        "arch = [\"sm_90\", \"sm_100\"]\ninclude = [\"inc\"]\ndefines = { N = 128, F = 1.5 }\nthreads = 128\n[package.metadata.launch.kernel.k]\nthreads = 64\ndynamic-smem = 4096",
    );
    let dir = crate_dir();
    let alphabet = b"[]{}=\"',.-_0123456789xe \n#ak";
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let mut bytes = base.clone().into_bytes();
        for _ in 0..1 + next() % 3 {
            let at = (next() as usize) % bytes.len();
            match next() % 3 {
                0 => bytes[at] = alphabet[(next() as usize) % alphabet.len()],
                1 => bytes.truncate(at.max(1)),
                _ => {
                    let piece = bytes[at..].iter().take(8).copied().collect::<Vec<_>>();
                    bytes.splice(at..at, piece);
                }
            }
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Err(e) = Config::parse(&dir.path().join("Cargo.toml"), &text) {
            let m = e.to_string();
            assert!(m.contains("Cargo.toml"), "{m}");
        }
    }
}

/// `min-driver`: a CUDA release of `launch::compat`'s table, located when it is not one.
#[test]
fn min_driver_is_a_known_cuda_version() {
    let a = "arch = [\"sm_90\"]\n";
    assert_eq!(parse(a).unwrap().min_driver, None, "default: the toolchain's own version");
    let c = parse(&format!("{a}min-driver = \"12.4\"")).unwrap();
    assert_eq!(c.min_driver, Some(launch::compat::CudaVersion::new(12, 4)));
    let dir = crate_dir();
    let cases: &[(&str, &str)] = &[
        ("min-driver = 12.4", "Cargo.toml:7:14: `package.metadata.launch.min-driver`: 12.4 is a floating-point number; expected a CUDA version string such as \"12.4\""),
        ("min-driver = \"12.7\"", "Cargo.toml:7:14: `package.metadata.launch.min-driver`: CUDA 12.7 is not a CUDA release this version of launch knows; known: "),
        ("min-driver = \"550.54.14\"", "Cargo.toml:7:14: `package.metadata.launch.min-driver`: `550.54.14` is not a CUDA version; expected \"MAJOR.MINOR\" such as \"12.4\" (the CUDA version `nvidia-smi` shows; driver 550.54.14 is CUDA 12.4); known: "),
        ("min-driver = \"\"", "Cargo.toml:7:14: `package.metadata.launch.min-driver`: `` is not a CUDA version; expected \"MAJOR.MINOR\" such as \"12.4\"; known: "),
    ];
    for (meta, expected) in cases {
        let got = message_in(dir.path(), &manifest(&format!("{a}{meta}")));
        assert!(got.starts_with(expected), "for {meta}:\n{got}");
        assert!(
            got.ends_with("(the oldest driver the crate must run on, as its CUDA version)") || meta.ends_with("12.4"),
            "{got}"
        );
    }
}

/// `[package.metadata.launch.tune.<kernel>]`: the lists as written (repeats dropped), a missing
/// list as `None` (the kernel's own), `max_regs = "cliffs"`, tables in file order, each with the
/// location of its header for the errors the build finds later.
#[test]
fn tune_tables_give_the_grid_as_written() {
    let c = parse(
        "arch = [\"sm_90\"]\n[package.metadata.launch.tune.poly_eval]\nthreads = [256, 1024, 256]\nmin_blocks = [1, 2]\nmax_regs = [64, 32]\n[package.metadata.launch.tune.\"poly.cu::other\"]\nmax_regs = \"cliffs\"",
    )
    .unwrap();
    assert_eq!(c.tune.len(), 2);
    let (a, b) = (&c.tune[0], &c.tune[1]);
    assert_eq!(
        (a.kernel.as_str(), a.threads.clone(), a.min_blocks.clone(), a.max_regs.clone()),
        ("poly_eval", Some(vec![256, 1024]), Some(vec![1, 2]), Some(MaxRegs::Caps(vec![64, 32])))
    );
    assert_eq!(a.key, "package.metadata.launch.tune.poly_eval");
    assert!(a.location.to_string().ends_with("Cargo.toml:7:1"), "{}", a.location);
    assert_eq!(
        (b.kernel.as_str(), b.threads.clone(), b.min_blocks.clone(), b.max_regs.clone()),
        ("poly.cu::other", None, None, Some(MaxRegs::Cliffs))
    );
    assert_eq!(b.key, "package.metadata.launch.tune.\"poly.cu::other\"");
    // An inline table is a table too.
    let c = parse("arch = [\"sm_90\"]\ntune = { k = { threads = [64] } }").unwrap();
    assert_eq!(c.tune[0].threads, Some(vec![64]));
    assert!(parse("arch = [\"sm_90\"]").unwrap().tune.is_empty());
}

/// Every bad tune value is located at the value (or the table), with what is expected.
#[test]
fn bad_tune_tables_are_located_errors() {
    let dir = crate_dir();
    let head = "arch = [\"sm_90\"]\n[package.metadata.launch.tune.k]\n";
    let key = "package.metadata.launch.tune.k";
    let cases: Vec<(String, String)> = vec![
        ("thread = [1]".into(), format!("Cargo.toml:8:1: `{key}.thread`: unknown key `thread` (did you mean `threads`?); the keys [package.metadata.launch.tune.<kernel>] accepts: threads, min_blocks, max_regs")),
        ("min-blocks = [1]".into(), format!("Cargo.toml:8:1: `{key}.min-blocks`: unknown key `min-blocks` (did you mean `min_blocks`?); the keys [package.metadata.launch.tune.<kernel>] accepts: threads, min_blocks, max_regs")),
        ("threads = []".into(), format!("Cargo.toml:8:11: `{key}.threads`: the list is empty; list the block sizes to build, or leave the key out for the kernel's own")),
        ("threads = 256".into(), format!("Cargo.toml:8:11: `{key}.threads`: 256 is an integer; expected a list of block sizes such as [1, 2]")),
        ("threads = [256, 0]".into(), format!("Cargo.toml:8:17: `{key}.threads[1]`: threads = 0 is not a positive multiple of 32: the CTA would not be a whole number of warps (threads: a multiple of 32 from 32 to 1024)")),
        ("threads = [2048]".into(), format!("Cargo.toml:8:12: `{key}.threads[0]`: threads = 2048 is over 1024: no CTA can have more threads (threads: a multiple of 32 from 32 to 1024)")),
        ("threads = [\"256\"]".into(), format!("Cargo.toml:8:12: `{key}.threads[0]`: \"256\" is a string; expected an integer from 32 to 1024")),
        ("min_blocks = [0]".into(), format!("Cargo.toml:8:15: `{key}.min_blocks[0]`: min_blocks = 0: it must be positive (min_blocks: 1 to 32)")),
        ("max_regs = [8]".into(), format!("Cargo.toml:8:13: `{key}.max_regs[0]`: max_regs = 8 is outside 16..=255, the range .maxnreg accepts")),
        ("max_regs = [256]".into(), format!("Cargo.toml:8:13: `{key}.max_regs[0]`: max_regs = 256 is outside 16..=255, the range .maxnreg accepts")),
        ("max_regs = []".into(), format!("Cargo.toml:8:12: `{key}.max_regs`: the list is empty; list the register caps to build, or leave the key out for the kernel's own")),
        ("max_regs = \"cliff\"".into(), format!("Cargo.toml:8:12: `{key}.max_regs`: \"cliff\" is not a grid; expected \"cliffs\" or a list of register caps from 16 to 255 such as [32, 64]")),
        ("max_regs = 64".into(), format!("Cargo.toml:8:12: `{key}.max_regs`: 64 is an integer; expected \"cliffs\" or a list of register caps from 16 to 255 such as [32, 64]")),
        (
            format!("threads = [{}]\nmax_regs = [{}]", (1..=9).map(|t| (t * 32).to_string()).collect::<Vec<_>>().join(", "), (16..=23).map(|r| r.to_string()).collect::<Vec<_>>().join(", ")),
            format!("Cargo.toml:7:1: `{key}`: this grid has 72 variants, more than the 64 one kernel may have (each is a ptxas run per arch and a module in the crate); shorten the lists"),
        ),
    ];
    for (meta, want) in cases {
        assert_eq!(message_in(dir.path(), &manifest(&format!("{head}{meta}"))), want, "{meta}");
    }
    assert_eq!(
        message_in(dir.path(), &manifest("arch = [\"sm_90\"]\ntune = 1")),
        "Cargo.toml:7:8: `package.metadata.launch.tune`: 1 is an integer; expected a table of per-kernel grids such as [package.metadata.launch.tune.my_kernel]"
    );
    assert_eq!(
        message_in(dir.path(), &manifest("arch = [\"sm_90\"]\ntune = { k = 1 }")),
        "Cargo.toml:7:14: `package.metadata.launch.tune.k`: 1 is an integer; expected a table of launch contracts to build, such as { threads = [256, 512] }"
    );
}

/// `Config::new` is what a minimal `[package.metadata.launch]` parses to: every other key at its
/// default.
#[test]
fn new_is_the_parsed_minimal_table() {
    let dir = crate_dir();
    let path = dir.path().join("Cargo.toml");
    let parsed = Config::parse(&path, &manifest("arch = [\"sm_90\"]")).unwrap();
    assert_eq!(Config::new(&path, "k", vec!["sm_90".parse().unwrap()]), parsed);
}

/// An absolute include folder (an installed toolkit's, a wheel's) is taken as given, from
/// `include` and from `-I` in `flags`; a relative one stays relative to Cargo.toml.
#[test]
fn an_absolute_include_folder_is_used_as_given() {
    let elsewhere = tempfile::tempdir().unwrap();
    let abs = elsewhere.path().join("cuda").join("include");
    std::fs::create_dir_all(&abs).unwrap();
    let c = parse(&format!(
        "arch = [\"sm_90\"]\ninclude = [\"inc\", {:?}]\nflags = [\"-I{}\"]",
        abs.display().to_string(),
        elsewhere.path().display()
    ))
    .unwrap();
    assert_eq!(c.include_dirs, [PathBuf::from("inc"), abs.clone(), elsewhere.path().to_path_buf()]);
    // The crate root does not move it: `Path::join` keeps an absolute path.
    assert_eq!(c.root().join(&c.include_dirs[1]), abs);
}

/// Every key of the key tables is read by the parser: a value no key takes (a TOML date) is an
/// error at that key, not accepted and ignored. (The unknown-key check reads the tables' names,
/// so the tables hold no fewer keys than the parser reads.)
#[test]
fn every_key_of_the_tables_is_read_by_the_parser() {
    let tables: [(&[Key], &str, &str); 4] = [
        (KEYS, "", "package.metadata.launch"),
        (FILE_KEYS, "[package.metadata.launch.file.\"a.cu\"]\n", "package.metadata.launch.file.\"a.cu\""),
        (KERNEL_KEYS, "[package.metadata.launch.kernel.k]\n", "package.metadata.launch.kernel.k"),
        (TUNE_KEYS, "[package.metadata.launch.tune.k]\n", "package.metadata.launch.tune.k"),
    ];
    let dir = crate_dir();
    let mut cases = 0;
    for (keys, header, path) in tables {
        for key in keys {
            let arch = if key.name == "arch" && header.is_empty() { "" } else { "arch = [\"sm_90\"]\n" };
            let text = manifest(&format!("{arch}{header}{} = 1979-05-27", key.name));
            let message = message_in(dir.path(), &text);
            assert!(message.contains(&format!("`{path}.{}", key.name)), "{}: {message}", key.name);
            cases += 1;
        }
    }
    assert_eq!(cases, KEYS.len() + 4 + 3 + 3);
}

/// `types` maps each C++ type as the compiler writes it (namespaced too) to a Rust path, from
/// the crate root or another crate.
#[test]
fn types_map_cpp_names_to_rust_paths() {
    let c = parse("arch = [\"sm_90\"]\ntypes = { Params = \"crate::Params\", \"ns::Box\" = \"::dep::Box\" }").unwrap();
    let got: Vec<(&str, &str)> = c.types.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(got, [("Params", "crate::Params"), ("ns::Box", "::dep::Box")]);
}

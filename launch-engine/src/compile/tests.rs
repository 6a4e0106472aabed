//! Tests of [`super`] (compile.rs).

use super::*;
use crate::plan::SourceFile;

fn job_of<'a>(file: &'a PlannedFile, text: &'a str) -> Job<'a> {
    Job { file, text, annotations: &[], headers: &[], arch: "sm_90".parse().unwrap() }
}

/// `kernels/k.cu` of a crate at `/c`, with the crate's settings.
fn planned() -> PlannedFile {
    let source =
        SourceFile { file: "kernels/k.cu".into(), path: PathBuf::from("/c/kernels/k.cu"), kernel_rel: "k.cu".into() };
    PlannedFile { source, settings: Default::default(), arches: Vec::new(), host: false }
}

const ASM_PTX: &str = "\
.version 8.8
.target sm_90
.address_size 64

.visible .entry good()
{
\tret;
}

.visible .entry bad_asm(
\t.param .u64 bad_asm_param_0
)
{
\t.reg .b32 %r<3>;
\t// begin inline asm
\tbogus.instr %r1;
\t// end inline asm
\tret;
}
";

#[test]
fn a_ptxas_error_in_inline_asm_names_the_kernel_and_its_source_line() {
    let source = planned();
    let text = "extern \"C\" __global__ void good() {}\n\nextern \"C\" __global__ void bad_asm(int* p) {\n    asm(\"bogus.instr %0;\" : \"=r\"(p[0]));\n}\n";
    let log = "ptxas /o/launch/work/kernels+k.cu.sm_90.ptx, line 16; error   : Unknown modifier '.instr'\n\
                   ptxas /o/launch/work/kernels+k.cu.sm_90.ptx, line 16; error   : Not a name of any known instruction: 'bogus'\n\
                   ptxas fatal   : Ptx assembly aborted due to errors\n";
    let out = with_ptx_notes(&job_of(&source, text), ASM_PTX, log);
    assert!(out.starts_with(log.trim_end()), "ptxas's own messages come first:\n{out}");
    let notes: Vec<&str> = out.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(
            notes,
            ["kernels/k.cu:3:28: note: PTX line 16 (`bogus.instr %r1;`) comes from an `asm` statement in kernel `bad_asm`, defined here"],
            "one note per PTX line:\n{out}"
        );
}

#[test]
fn a_ptxas_error_is_mapped_through_the_ptx_line_info_when_there_is_some() {
    let source = planned();
    let ptx = ".version 8.8\n.target sm_90\n.file 1 \"kernels/k.cu\"\n\
                   .func  (.param .b32 func_retval0) _Z6helperi(\n.param .b32 p\n)\n{\n\
                   .loc 1 7 12\nadd.s32 %r1, %r2, %r3;\n.loc 1 8 3\nbad.op %r1;\n}\n";
    let log = "ptxas /o/work/x.ptx, line 11; error   : Not a name of any known instruction: 'bad'\n";
    let out = with_ptx_notes(&job_of(&source, ""), ptx, log);
    assert!(
            out.contains("kernels/k.cu:8:3: note: PTX line 11 (`bad.op %r1;`) comes from the code here, in device function `helper(int)`"),
            "{out}"
        );
}

#[test]
fn a_log_without_ptx_locations_is_left_as_it_is() {
    let source = planned();
    let log = "ptxas fatal   : Unresolved extern function 'f'\n";
    assert_eq!(with_ptx_notes(&job_of(&source, ""), ASM_PTX, log), log);
    let beyond = "ptxas /o/k.ptx, line 999; error   : x\n";
    assert_eq!(with_ptx_notes(&job_of(&source, ""), ASM_PTX, beyond), beyond);
}

#[test]
fn the_debug_command_line_quotes_options_with_spaces() {
    let options = ["--gpu-architecture=compute_90".to_string(), "--include-path=/my crate/include".to_string()];
    assert_eq!(
        nvrtc_command_line("kernels/my kernel.cu", &options),
        "NVRTC \"kernels/my kernel.cu\" --gpu-architecture=compute_90 \"--include-path=/my crate/include\""
    );
}

#[test]
fn sanitize_keeps_names_readable() {
    assert_eq!(sanitize("kernels/sub/a.cu"), "kernels+sub+a.cu");
    assert_ne!(sanitize("kernels/a.b.cu"), sanitize("kernels/a/b.cu"));
    let spaced = sanitize("kernels/sub dir/a.cu");
    assert!(
        spaced.starts_with("kernels+sub_dir+a.cu-") && spaced.len() == "kernels+sub_dir+a.cu-".len() + 8,
        "{spaced}"
    );
    assert_ne!(spaced, sanitize("kernels/sub_dir/a.cu"));
    assert_ne!(sanitize("kernels/a+b.cu"), sanitize("kernels/a/b.cu"));
}

#[test]
fn long_names_are_bounded_and_unique_and_short_ones_unchanged() {
    // Before: the name grew with the path, and a kernel 60 folders deep failed with "File name
    // too long" on its work file.
    for short in ["kernels/a.cu", "kernels/sub/a.cu", "kernels/sub dir/a.cu", &format!("kernels/{}.cu", "a".repeat(89))]
    {
        assert_eq!(sanitize(short), sanitize_whole(short), "{short}");
    }
    let deep = |leaf: &str| format!("kernels/{}{leaf}", "folder_abc/".repeat(60));
    let names: Vec<String> = ["a.cu", "b.cu", "a.cuh.cu", "ä.cu"]
        .iter()
        .map(|l| sanitize(&deep(l)))
        .chain([sanitize(&deep("a.cu"))])
        .collect();
    for n in &names {
        assert!(n.len() <= MAX_NAME, "{n}: {} bytes", n.len());
        assert!(n.starts_with("kernels+folder_abc+"), "{n}");
        assert!(n.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.+".contains(&b)), "{n}");
    }
    assert!(names[0].ends_with("+a.cu") && names[1].ends_with("+b.cu"), "{names:?}");
    let distinct: std::collections::BTreeSet<&String> = names[..4].iter().collect();
    assert_eq!(distinct.len(), 4, "{names:?}");
    assert_eq!(names[0], names[4], "the same path, the same name");
    // Two paths that differ only in the middle stay apart.
    let middle = format!("kernels/{}x/{}a.cu", "folder_abc/".repeat(30), "folder_abc/".repeat(30));
    assert_ne!(sanitize(&middle), names[0]);
    // Names made of other text (a long mangled entry) are bounded the same way, on a character
    // boundary.
    assert_eq!(bounded("_Z4fillPfi", "_Z4fillPfi"), "_Z4fillPfi");
    let wide = "é".repeat(80);
    assert!(bounded(&wide, &wide).len() <= MAX_NAME);
}

#[test]
fn a_work_file_the_os_refuses_names_the_kernel_file() {
    let path = Path::new("/out/launch/work/kernels+a.cu.sm_90.ptx");
    let e = work_file("write", path, "kernels/a.cu")(std::io::Error::from_raw_os_error(36)).to_string();
    assert!(e.starts_with("failed to write `/out/launch/work/kernels+a.cu.sm_90.ptx`: "), "{e}");
    assert!(e.ends_with("(a work file of `kernels/a.cu`)"), "{e}");
}

/// The cache key of `kernels/k.cu` (which includes `lib.cuh`) in a crate at `root` whose
/// `include` is the absolute folder `include`, computed as `compile::cached` computes it; and the
/// header's portable path. Needs the toolchain; `None` without one.
fn key_with_absolute_include(root: &Path, include: &Path) -> Option<(crate::cache::Key, String, Vec<String>)> {
    let toolchain = crate::toolchain::discover(&crate::env::Env::cli())
        .map_err(|e| eprintln!("skipped: no CUDA toolchain ({e})"))
        .ok()?;
    std::fs::create_dir_all(root.join("kernels")).unwrap();
    let text = "#include \"lib.cuh\"\nextern \"C\" __global__ void k(float* p) { p[0] = TWICE(1.0f); }\n";
    std::fs::write(root.join("kernels/k.cu"), text).unwrap();
    let manifest = format!(
        "[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\narch = [\"sm_90\"]\ninclude = [{:?}]\n",
        include.display().to_string()
    );
    let config = crate::config::Config::parse(&root.join("Cargo.toml"), &manifest).expect("config");
    let compiler = Compiler::new(toolchain, &config, root.join("work"), Settings::default()).expect("NVRTC loads");
    let plan = crate::plan::Plan::resolve(config).unwrap();
    let file = plan.file("kernels/k.cu").expect("planned");
    let job = job_of(file, text);
    let mut digests = crate::cache::HeaderDigests::default();
    let mut headers: Vec<(String, [u8; 32])> =
        crate::source::dependencies(&file.source.path, &compiler.include_search(&job), compiler.root())
            .unwrap()
            .iter()
            .map(|p| (compiler.portable(p), digests.digest(p)))
            .collect();
    headers.sort();
    let options = compiler.options(&job, true);
    let key = crate::cache::key(&crate::cache::KeyInputs {
        file: &file.source.file,
        text,
        headers: &headers,
        options: &options,
        ptxas_options: &[],
        arch: "sm_90",
        annotations: &[],
        toolchain: &crate::compile::cached::toolchain_id(&compiler, None),
    });
    let portable = compiler.portable(&include.join("lib.cuh"));
    Some((key, portable, options))
}

/// Two copies of one header folder at two absolute paths (and two crate folders) give the same
/// key: the header is keyed by its content under `$INCLUDE0`, never by where the folder is; a
/// change of its content changes the key.
#[test]
fn an_absolute_include_folder_is_keyed_by_content_not_place() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for d in [&a, &b] {
        std::fs::create_dir_all(d.path().join("inc")).unwrap();
        std::fs::write(d.path().join("inc/lib.cuh"), "#define TWICE(x) ((x) * 2.0f)\n").unwrap();
    }
    let Some((key_a, portable_a, options)) = key_with_absolute_include(&a.path().join("crate"), &a.path().join("inc"))
    else {
        return;
    };
    let (key_b, portable_b, _) = key_with_absolute_include(&b.path().join("crate"), &b.path().join("inc")).unwrap();
    assert_eq!(portable_a, "$INCLUDE0/lib.cuh");
    assert_eq!(portable_b, portable_a);
    assert!(options.contains(&"--include-path=$INCLUDE0".to_string()), "{options:?}");
    assert!(!options.iter().any(|o| o.contains(&a.path().display().to_string())), "{options:?}");
    assert_eq!(key_a, key_b);
    std::fs::write(b.path().join("inc/lib.cuh"), "#define TWICE(x) ((x) * 3.0f)\n").unwrap();
    let (key_changed, _, _) = key_with_absolute_include(&b.path().join("crate"), &b.path().join("inc")).unwrap();
    assert_ne!(key_changed, key_a);
}

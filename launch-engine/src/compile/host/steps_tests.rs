//! The dry run read into steps (quotes, nvcc's variables, the arch groups and every shape that is
//! refused), the kept files' packing, and, with the pinned 13.0 toolchain, the steps' object held
//! to nvcc's own byte for byte, with and without an arch restored from a compile that stopped.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use super::*;

fn arches() -> Vec<Arch> {
    vec!["sm_80".parse().unwrap(), "sm_90".parse().unwrap()]
}

/// A dry run in nvcc's shape with absolute programs (nothing is looked up on `PATH`).
fn dry_run(order: &[&str]) -> String {
    let mut text = String::from(
        "nvcc warning : a note of nvcc's own\n#$ _SPACE_= \n#$ CICC_PATH=/t/nvvm/bin\n#$ INCLUDES=\"-I/t/include\"  \n",
    );
    text.push_str("#$ /t/bin/gcc -E -x c++ \"a.cu\" -o \"/k/a.cpp4.ii\" \n");
    text.push_str("#$ /t/bin/cudafe++ --gen_c_file_name \"/k/a.compute_90.cudafe1.cpp\" \"/k/a.cpp4.ii\" \n");
    for arch in order {
        let virt = arch.replace("sm_", "compute_");
        text.push_str(&format!("#$ /t/bin/gcc -D__CUDA_ARCH__=800 -E \"a.cu\" -o \"/k/a.{virt}.cpp1.ii\" \n"));
        text.push_str(&format!("#$ \"$CICC_PATH/cicc\" -arch {virt} \"/k/a.{virt}.cpp1.ii\" -o \"/k/a.{virt}.ptx\"\n"));
        text.push_str(&format!(
            "#$ /t/bin/ptxas -arch={arch} -m64 -v  \"/k/a.{virt}.ptx\"  -o \"/k/a.{virt}.cubin\" \n"
        ));
    }
    text.push_str(
        "#$ /t/bin/fatbinary --create=\"/k/a.fatbin\" \"--image3=kind=elf,sm=80,file=/k/a.compute_80.cubin\"\n",
    );
    text.push_str("#$ /t/bin/gcc -c -x c++ \"/k/a.compute_90.cudafe1.cpp\" -o \"a.o\" \n");
    text
}

#[test]
fn words_split_at_spaces_outside_quotes_and_variables_are_nvccs() {
    assert_eq!(words(r#"gcc  -E "a b.cu" -o"x" "" "q\"uote""#).unwrap(), ["gcc", "-E", "a b.cu", "-ox", "", "q\"uote"]);
    assert_eq!(words("\"unterminated"), None);
    assert_eq!(assignment("INCLUDES=\"-I/t/include\"  "), Some(("INCLUDES".into(), "-I/t/include".into())));
    assert_eq!(assignment("_SPACE_= "), Some(("_SPACE_".into(), String::new())));
    assert_eq!(
        assignment("SYSTEM_INCLUDES=\"-isystem\" \"/t\""),
        Some(("SYSTEM_INCLUDES".into(), "\"-isystem\" \"/t\"".into()))
    );
    assert_eq!(assignment("gcc -DX=1 a.cu"), None, "a command with `=` in it is no assignment");
    assert_eq!(assignment("9X=1"), None);
    let env = vec![("TOP".to_string(), "/t".to_string()), ("TOPDIR".to_string(), "/u".to_string())];
    assert_eq!(expand("$TOPDIR/bin:$TOP/lib:$NONE", &env), "/u/bin:/t/lib:$NONE");
}

#[test]
fn a_dry_run_is_cut_into_before_each_arch_and_after() {
    let plan = plan(&dry_run(&["sm_80", "sm_90"]), &arches()).expect("the shape nvcc prints");
    assert_eq!(plan.notes, "nvcc warning : a note of nvcc's own\n");
    assert_eq!(plan.before.len(), 2, "{:?}", plan.before);
    assert_eq!(plan.arches.len(), 2);
    assert!(plan.arches[1].iter().all(|s| s.args.iter().any(|a| a.contains("compute_90"))), "{:?}", plan.arches[1]);
    assert_eq!(plan.arches[0][1].program, Path::new("/t/nvvm/bin/cicc"), "$CICC_PATH expanded");
    assert_eq!(plan.after.len(), 2);
    assert_eq!(plan.len(), 10);
    assert!(plan.env.contains(&("INCLUDES".to_string(), "-I/t/include".to_string())));
}

#[test]
fn every_other_shape_is_compiled_by_one_nvcc_run() {
    let two = arches();
    assert!(plan(&dry_run(&["sm_80"]), &two[..1]).is_none(), "one arch: nothing to keep apart");
    assert!(plan(&dry_run(&["sm_90", "sm_80"]), &two).is_none(), "arches out of the compile's order");
    assert!(plan(&dry_run(&["sm_80"]), &two).is_none(), "an arch without steps");
    assert!(plan(&dry_run(&["sm_80", "sm_90", "sm_80"]), &two).is_none(), "an arch twice");
    let no_ptxas = dry_run(&["sm_80", "sm_90"]).replace("/t/bin/ptxas -arch=sm_90", "/t/bin/other -arch=sm_90");
    assert!(plan(&no_ptxas, &two).is_none(), "an arch whose group has no ptxas run");
    let late = dry_run(&["sm_80", "sm_90"]) + "#$ /t/bin/ptxas -arch=sm_80 -o \"/k/a.compute_80.cubin\"\n";
    assert!(plan(&late, &two).is_none(), "an arch's step after the host compile");
    let quote = dry_run(&["sm_80", "sm_90"]).replace("-o \"a.o\"", "-o \"a.o");
    assert!(plan(&quote, &two).is_none(), "an unterminated quote");
    let unknown = dry_run(&["sm_80", "sm_90"]).replace("/t/bin/fatbinary", "no-such-program-anywhere");
    assert!(plan(&unknown, &two).is_none(), "a program not on the dry run's PATH");
}

#[test]
fn kept_files_pack_and_unpack_and_damage_is_refused() {
    let files = vec![
        ("a.compute_80.cubin".to_string(), vec![0, 1, 2, 255]),
        ("a.compute_80.ptx".to_string(), b".version".to_vec()),
    ];
    let packed = pack(&files);
    assert_eq!(unpack(&packed).as_ref(), Some(&files));
    assert_eq!(unpack(&[]), Some(Vec::new()));
    // Cut anywhere but between the two files, the bytes are refused.
    let boundary = 8 + files[0].0.len() + 8 + files[0].1.len();
    for cut in 1..packed.len() {
        let expected = (cut == boundary).then(|| files[..1].to_vec());
        assert_eq!(unpack(&packed[..cut]), expected, "cut at {cut}");
    }
    let mut long = packed.clone();
    long[0] = 0xff;
    assert_eq!(unpack(&long), None, "a name longer than the bytes");
}

/// A store that remembers what it was given (and what it was told to forget) and hands out what
/// it holds.
#[derive(Default)]
struct Memory(Mutex<Vec<(Arch, ArchWork)>>, Mutex<Vec<Arch>>);

impl Kept for Memory {
    fn load(&self, arch: Arch) -> Option<ArchWork> {
        self.0.lock().unwrap().iter().find(|(a, _)| *a == arch).map(|(_, w)| w.clone())
    }
    fn store(&self, arch: Arch, work: &ArchWork) {
        self.0.lock().unwrap().push((arch, work.clone()));
    }
    fn forget(&self, arch: Arch) {
        self.1.lock().unwrap().push(arch);
    }
}

/// The pinned 13.0 toolchain's nvcc, if installed (`LAUNCH_TEST_REQUIRE_TOOLCHAINS=1`: it must be).
fn nvcc() -> Option<PathBuf> {
    let env = crate::env::Env::cli();
    let dir = crate::toolchain::pin_dir(&env, &crate::toolchain::pin::CUDA_13_0)?;
    let nvcc = dir.join("nvidia/cu13/bin/nvcc");
    let required = env.get(crate::env::var::LAUNCH_TEST_REQUIRE_TOOLCHAINS).is_some_and(|v| v == "1");
    assert!(nvcc.is_file() || !required, "{} is missing: cargo launch setup --toolchain 13.0", nvcc.display());
    nvcc.is_file().then_some(nvcc)
}

/// The nvcc command of a two-arch compile of `source` into `object`, keeping files in `keep`.
fn command(nvcc: &Path, source: &Path, object: &Path, keep: &Path) -> Tool {
    Tool::new(nvcc)
        .arg("-c")
        .arg(source)
        .arg("-o")
        .arg(object)
        .args(["--keep", "--keep-dir"])
        .arg(keep)
        .args(["-Xptxas", "-v", "-O2", "-Xcompiler", "-fPIC"])
        .args(["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"])
}

#[test]
fn the_steps_make_nvccs_object_and_a_kept_arch_is_not_compiled_again() {
    let Some(nvcc) = nvcc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("k.cu");
    // CUB: names after the arch list, per-arch policies, and host code that launches.
    std::fs::write(
        &source,
        "#include <cub/cub.cuh>\n__global__ void k(float* p) { p[threadIdx.x] *= 2; }\n\
         extern \"C\" int sum(const float* in, float* out, int n) { void* t = nullptr; size_t b = 0;\n\
         return (int)cub::DeviceReduce::Sum(t, b, in, out, n); }\n",
    )
    .unwrap();
    let mkdir = |name: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        d
    };
    let (one, keep) = (dir.path().join("one.o"), mkdir("keep-one"));
    let (status, out) = command(&nvcc, &source, &one, &keep).run_unchecked().unwrap();
    assert!(status.success(), "{}", out.stderr);

    let compile = |name: &str, kept: &Memory| {
        let (object, keep) = (dir.path().join(format!("{name}.o")), mkdir(&format!("keep-{name}")));
        let tool = command(&nvcc, &source, &object, &keep);
        let (status, dry) = tool.clone().arg("-dryrun").run_unchecked().unwrap();
        assert!(status.success(), "{}", dry.stderr);
        let plan =
            plan(&dry.stderr, &arches()).unwrap_or_else(|| panic!("nvcc's dry run not understood:\n{}", dry.stderr));
        let ran = plan.run(&arches(), &keep, Duration::from_secs(600), 2, kept).unwrap();
        assert!(ran.ok, "{}", ran.text);
        (std::fs::read(object).unwrap(), ran)
    };
    let first = Memory::default();
    let (stepped, ran) = compile("steps", &first);
    assert!(stepped == std::fs::read(&one).unwrap(), "the steps' object differs from nvcc's own");
    assert!(ran.kept.is_empty());
    assert_eq!(
        ran.text.matches("Compiling entry function").count(),
        out.stderr.matches("Compiling entry function").count()
    );
    let stored: Vec<Arch> = first.0.lock().unwrap().iter().map(|(a, _)| *a).collect();
    assert_eq!(stored.len(), 2, "each arch kept once it finished");
    let sm80 = first.0.lock().unwrap().iter().find(|(a, _)| a.to_string() == "sm_80").cloned().unwrap();
    let names: Vec<&str> = sm80.1.files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.iter().any(|n| n.ends_with(".compute_80.cubin")) && names.iter().all(|n| !n.ends_with(".ii")),
        "{names:?}"
    );
    assert!(!sm80.1.log.contains("keep-steps"), "the keep folder is written as a placeholder: {}", sm80.1.log);

    // A compile that stopped after sm_80: only its work is there; the rerun compiles sm_90 alone.
    assert_eq!(first.1.lock().unwrap().len(), 2, "both forgotten once the compile finished");
    let resumed = Memory(Mutex::new(vec![sm80]), Mutex::default());
    let (object, ran) = compile("resumed", &resumed);
    assert!(object == std::fs::read(&one).unwrap(), "a resumed compile's object differs from nvcc's own");
    assert_eq!(ran.kept.iter().map(Arch::to_string).collect::<Vec<_>>(), ["sm_80"]);
    let stored: Vec<String> = resumed.0.lock().unwrap().iter().skip(1).map(|(a, _)| a.to_string()).collect();
    assert_eq!(stored, ["sm_90"], "sm_80 was not compiled again");
    assert!(ran.text.contains("for 'sm_80'"), "the kept arch's ptxas lines are in the log as if it ran");

    // The last arch kept: the host compile includes its cicc stub, which must be the kept one.
    let sm90 = first.0.lock().unwrap().iter().find(|(a, _)| a.to_string() == "sm_90").cloned().unwrap();
    let (object, ran) = compile("last", &Memory(Mutex::new(vec![sm90]), Mutex::default()));
    assert!(object == std::fs::read(&one).unwrap(), "with sm_90 kept, the object differs from nvcc's own");
    assert_eq!(ran.kept.iter().map(Arch::to_string).collect::<Vec<_>>(), ["sm_90"]);
}

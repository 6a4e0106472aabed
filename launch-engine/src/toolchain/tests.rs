use std::path::Path;

use super::pin::{CUDA_12_9, CUDA_13_0};
use super::probe::probe;
use super::*;

#[test]
fn ptxas_version_line_is_parsed() {
    let text = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCopyright (c) 2005-2025 NVIDIA Corporation\nBuilt on Tue_May_27_02:18:05_PDT_2025\nCuda compilation tools, release 12.9, V12.9.86\nBuild cuda_12.9.r12.9/compiler.36037853_0\n";
    assert_eq!(parse_ptxas_version(text).as_deref(), Some("12.9.86"));
    assert_eq!(parse_ptxas_version("garbage"), None);
}

#[test]
fn probe_reports_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let e = probe(dir.path(), Origin::Cache, 12).unwrap_err();
    assert!(e.contains("nvidia/cuda_nvrtc/lib/libnvrtc.so.12"), "{e}");
    assert!(e.contains("bin/ptxas"), "{e}");
    let e = probe(dir.path(), Origin::Cache, 13).unwrap_err();
    assert!(e.starts_with("no nvidia/cu13/lib/libnvrtc.so.13, no nvidia/cu13/bin/ptxas, no lib64/libnvrtc.so"), "{e}");
    assert_eq!(probe(&dir.path().join("nope"), Origin::Cache, 12).unwrap_err(), "does not exist");
    // What the path is, when it is there but not a folder (`LAUNCH_TOOLCHAIN=/etc/passwd`).
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert_eq!(probe(&file, Origin::Override, 12).unwrap_err(), "is a file, not a toolchain folder");
    #[cfg(unix)]
    {
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("gone"), &link).unwrap();
        let e = probe(&link, Origin::Override, 12).unwrap_err();
        assert!(e.starts_with("is a broken link to `") && e.ends_with("gone`, not a toolchain folder"), "{e}");
    }
}

/// Empty files at `root`/each path; with `ptxas`, an executable one that prints `version`.
fn fake(root: &Path, files: &[&str], ptxas: Option<(&str, &str)>) {
    for f in files {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        // Not empty (an empty file is a damaged one), and NVRTC with its builtins beside it.
        std::fs::write(&p, b"fake").unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(version) = name.strip_prefix("libnvrtc.so") {
            std::fs::write(p.with_file_name(format!("libnvrtc-builtins.so{version}")), b"fake").unwrap();
        }
    }
    if let Some((path, version)) = ptxas {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let (mm, _) = version.rsplit_once('.').unwrap();
        std::fs::write(&p, format!("#!/bin/sh\necho 'Cuda compilation tools, release {mm}, V{version}'\n")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}

#[test]
fn a_cache_install_without_cccl_is_to_be_upgraded_and_cccl_is_found_when_there() {
    let dir = tempfile::tempdir().unwrap();
    fake(dir.path(), &["nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "nvidia/cuda_nvcc/bin/ptxas"], None);
    let e = probe(dir.path(), Origin::Cache, 12).unwrap_err();
    assert!(e.contains("without CCCL") && e.contains("cargo launch setup"), "{e}");
    // Elsewhere CCCL is optional.
    assert_eq!(probe(dir.path(), Origin::Override, 12).unwrap().cccl_include, None);
    let cccl = dir.path().join("nvidia/cuda_cccl/include");
    fake(dir.path(), &["nvidia/cuda_cccl/include/cuda/std/version"], None);
    assert_eq!(probe(dir.path(), Origin::Cache, 12).unwrap().cccl_include, Some(cccl));
}

/// NVIDIA's CUDA 13 wheels: everything in nvidia/cu13, CCCL in include/cccl, nvcc and nvdisasm
/// beside ptxas; the dist-info gives NVRTC's version.
#[cfg(unix)]
#[test]
fn the_cuda_13_wheel_layout_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fake(
        root,
        &[
            "nvidia/cu13/lib/libnvrtc.so.13",
            "nvidia/cu13/include/cuda_runtime.h",
            "nvidia/cu13/include/cccl/cuda/std/version",
            "nvidia/cu13/bin/nvcc",
            "nvidia/cu13/bin/nvdisasm",
            "nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA",
            // Site-packages may hold the 12.x wheels as well: their version is not taken.
            "nvidia_cuda_nvrtc_cu12-12.9.86.dist-info/METADATA",
        ],
        Some(("nvidia/cu13/bin/ptxas", "13.0.88")),
    );
    let t = at(root, Origin::Cache, &CUDA_13_0).unwrap();
    assert_eq!(t.nvrtc, root.join("nvidia/cu13/lib/libnvrtc.so.13"));
    assert_eq!(t.include, Some(root.join("nvidia/cu13/include")));
    assert_eq!(t.cccl_include, Some(root.join("nvidia/cu13/include/cccl")));
    assert_eq!((t.nvrtc_version.as_str(), t.ptxas_version.as_str(), t.major()), ("13.0.88", "13.0.88", Some(13)));
    assert_eq!(t.nvcc(), Some(root.join("nvidia/cu13/bin/nvcc")));
    assert_eq!(t.nvdisasm(), Some(root.join("nvidia/cu13/bin/nvdisasm")));
    // Asked for 12.9, the same folder says it has CUDA 13's wheels, not 12's.
    let e = at(root, Origin::Override, &CUDA_12_9).unwrap_err().to_string();
    assert!(e.contains("no nvidia/cuda_nvrtc/lib/libnvrtc.so.12"), "{e}");
    assert!(e.contains("it holds the CUDA 13 wheels (nvidia/cu13), not CUDA 12's"), "{e}");
    assert!(e.contains("fix: run `cargo launch setup`"), "{e}");
}

/// A CUDA 13 toolkit (CCCL in include/cccl), and one of the other major: a clear error naming
/// both versions and what to change.
#[cfg(unix)]
#[test]
fn a_cuda_13_toolkit_is_found_and_a_toolkit_of_another_major_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fake(
        root,
        &["lib64/libnvrtc.so", "include/cuda_runtime.h", "include/cccl/cuda/std/version", "bin/nvcc"],
        Some(("bin/ptxas", "13.5.37")),
    );
    let t = at(root, Origin::Toolkit, &CUDA_13_0).unwrap();
    assert_eq!((t.nvrtc.clone(), t.major()), (root.join("lib64/libnvrtc.so"), Some(13)));
    assert_eq!(t.include, Some(root.join("include")));
    assert_eq!(t.cccl_include, Some(root.join("include/cccl")));
    assert_eq!(t.nvcc(), Some(root.join("bin/nvcc")));
    assert_eq!(t.nvdisasm(), None);

    let e = at(root, Origin::Override, &CUDA_12_9).unwrap_err();
    assert!(matches!(e, Error::ToolchainNotFound { toolchain: "12.9", .. }), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains(": holds CUDA 13.5 (ptxas 13.5.37), but toolchain = \"12.9\" needs CUDA 12.x; point LAUNCH_TOOLCHAIN at one, or change `toolchain`"),
        "{e}"
    );

    // Asked for 13.0 with a 12.9 toolkit: the header and the fix name 13.0.
    let old = tempfile::tempdir().unwrap();
    fake(old.path(), &["lib64/libnvrtc.so"], Some(("bin/ptxas", "12.9.86")));
    let e = at(old.path(), Origin::Toolkit, &CUDA_13_0).unwrap_err().to_string();
    assert!(e.starts_with("no CUDA 13.0 toolchain (NVRTC + ptxas, toolchain = \"13.0\") found."), "{e}");
    assert!(e.contains("but toolchain = \"13.0\" needs CUDA 13.x"), "{e}");
    assert!(e.contains("fix: run `cargo launch setup --toolchain 13.0` (installs NVIDIA's pinned 13.0 wheels"), "{e}");
}

#[test]
fn each_pin_installs_into_its_own_folder_and_12_9_stays_where_it_was() {
    let env = Env::cli();
    let Some(cache) = cache_dir(&env) else { return };
    assert_eq!(pinned_dir(&env), Some(cache.join("toolchain/cuda-12.9.86")));
    assert_eq!(pin_dir(&env, &CUDA_13_0), Some(cache.join("toolchain/cuda-13.0.88")));
}

#[cfg(unix)]
#[test]
fn a_ptxas_that_cannot_start_names_its_source_and_the_reason_once() {
    let dir = tempfile::tempdir().unwrap();
    fake(dir.path(), &["nvidia/cuda_nvrtc/lib/libnvrtc.so.12"], None);
    // Not executable.
    std::fs::create_dir_all(dir.path().join("nvidia/cuda_nvcc/bin")).unwrap();
    std::fs::write(dir.path().join("nvidia/cuda_nvcc/bin/ptxas"), b"#!/bin/sh\n").unwrap();
    let e = at(dir.path(), Origin::Override, &CUDA_12_9).unwrap_err();
    assert!(matches!(e, Error::ToolchainNotFound { .. }), "{e:?}");
    let text = anyhow_like(&e);
    // Named as damaged before anything tries to run it, with the way out.
    let ptxas = dir.path().join("nvidia/cuda_nvcc/bin/ptxas");
    let want = format!("- toolchain root: {}: {} is damaged (not executable); ", dir.path().display(), ptxas.display());
    assert!(text.contains(&want) && text.contains("`cargo launch setup`"), "{text}");
    assert_eq!(text.matches("not executable").count(), 1, "{text}");
}

/// The message and every source below it, as `{:#}` of anyhow prints them.
fn anyhow_like(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(&format!(": {c}"));
        cur = c.source();
    }
    s
}

/// A toolchain of `root` whose headers are in `include`, as a probe finds it.
fn found_at(root: &Path, include: &str) -> Toolchain {
    Toolchain {
        root: root.to_path_buf(),
        origin: Origin::SitePackages,
        nvrtc: root.join("libnvrtc.so"),
        ptxas: root.join("ptxas"),
        include: Some(root.join(include)),
        cccl_include: None,
        libraries: Vec::new(),
        nvrtc_version: String::new(),
        ptxas_version: String::new(),
    }
}

/// A 12.x wheel root (site-packages) with cuRAND's wheel beside the toolchain's has its headers
/// searched; a 13.x root's are in the toolchain's own include folder, which is not added twice.
#[test]
fn a_wheel_roots_own_library_headers_are_searched() {
    let env = Env::cli();
    let twelve = tempfile::tempdir().unwrap();
    fake(twelve.path(), &["nvidia/curand/include/curand_kernel.h"], None);
    let t = with_libraries(&env, found_at(twelve.path(), "nvidia/cuda_runtime/include"), &CUDA_12_9);
    assert_eq!(t.libraries.first(), Some(&twelve.path().join("nvidia/curand/include")));
    let thirteen = tempfile::tempdir().unwrap();
    fake(thirteen.path(), &["nvidia/cu13/include/curand_kernel.h"], None);
    let t = with_libraries(&env, found_at(thirteen.path(), "nvidia/cu13/include"), &CUDA_13_0);
    assert!(!t.libraries.contains(&thirteen.path().join("nvidia/cu13/include")), "{:?}", t.libraries);
}

/// An install of a library counts once it is complete: the marker, pip's record of the pinned
/// version and the include folder.
#[test]
fn a_library_install_counts_when_complete_at_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let curand = pin::CURAND_13_0;
    fake(dir.path(), &["nvidia/cu13/include/curand_kernel.h"], None);
    assert!(!library_installed(dir.path(), &curand));
    fake(dir.path(), &[".complete"], None);
    std::fs::create_dir(dir.path().join("nvidia_curand-10.4.0.34.dist-info")).unwrap();
    assert!(!library_installed(dir.path(), &curand), "another version");
    std::fs::create_dir(dir.path().join("nvidia_curand-10.4.0.35.dist-info")).unwrap();
    assert!(library_installed(dir.path(), &curand));
    assert_eq!(library_include(dir.path(), &pin::CURAND_12_9), dir.path().join("nvidia/curand/include"));
    let env = Env::cli();
    if let Some(cache) = cache_dir(&env) {
        assert_eq!(library_dir(&env, &CUDA_13_0, &curand), Some(cache.join("toolchain/cuda-13.0.88-curand")));
    }
}

/// A `ptxas` on PATH belongs to a toolkit (`<root>/bin`) or to a wheel (`<site>/nvidia/<wheel>/bin`,
/// whose root is the folder holding `nvidia/`, where NVRTC's wheel lies too): before, a wheel's bin
/// on PATH was probed as a toolkit root and never found.
#[test]
fn a_ptxas_on_path_names_its_toolkit_or_its_wheels_folder() {
    let cases = [
        ("/usr/local/cuda-13.0/bin/ptxas", "/usr/local/cuda-13.0", Origin::Toolkit),
        ("/site/nvidia/cu13/bin/ptxas", "/site", Origin::SitePackages),
        ("/site/nvidia/cuda_nvcc/bin/ptxas", "/site", Origin::SitePackages),
        ("/opt/cu13/bin/ptxas", "/opt/cu13", Origin::Toolkit),
        ("/site/other/cu13/bin/ptxas", "/site/other/cu13", Origin::Toolkit),
    ];
    for (ptxas, root, origin) in cases {
        assert_eq!(root_of_ptxas(Path::new(ptxas)), (Path::new(root).to_path_buf(), origin), "{ptxas}");
    }
    let dir = tempfile::tempdir().unwrap();
    fake(
        dir.path(),
        &[
            "nvidia/cu13/lib/libnvrtc.so.13",
            "nvidia/cu13/include/cuda_runtime.h",
            "nvidia_cuda_nvrtc-13.0.88.dist-info/METADATA",
        ],
        Some(("nvidia/cu13/bin/ptxas", "13.0.88")),
    );
    let (root, origin) = root_of_ptxas(&dir.path().join("nvidia/cu13/bin/ptxas"));
    let t = at(&root, origin, &CUDA_13_0).unwrap();
    assert_eq!(t.nvrtc, dir.path().join("nvidia/cu13/lib/libnvrtc.so.13"));
}

//! Tests of the `toolchain` key and of the arches each toolchain can target.

use super::values::untargetable;
use super::*;

/// `[package.metadata.launch]` starts on line 5; its first key is on line 6.
fn parse(meta: &str) -> Result<Config, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("kernels")).unwrap();
    let text = format!("[package]\nname = \"k\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\n{meta}\n");
    Config::parse(&dir.path().join("Cargo.toml"), &text)
        .map_err(|e| e.to_string().replace(&format!("{}/", dir.path().display()), ""))
}

#[test]
fn the_toolchain_is_12_9_unless_the_crate_names_another() {
    assert_eq!(parse("arch = [\"sm_90\"]").unwrap().toolchain, pin::CUDA_12_9);
    assert_eq!(parse("arch = [\"sm_90\"]\ntoolchain = \"12.9\"").unwrap().toolchain, pin::CUDA_12_9);
    let c = parse("toolchain = \"13.0\"\narch = [\"sm_90\", \"sm_110f\", \"sm_121\"]").unwrap();
    assert_eq!(c.toolchain, pin::CUDA_13_0);
    assert_eq!(c.arches.iter().map(|a| a.to_string()).collect::<Vec<_>>(), ["sm_90", "sm_110f", "sm_121"]);
}

#[test]
fn a_toolchain_that_is_not_pinned_is_located_with_the_choices() {
    let cases: &[(&str, &str)] = &[
        ("toolchain = \"13\"", "Cargo.toml:7:13: `package.metadata.launch.toolchain`: \"13\" is not a pinned toolchain (did you mean \"13.0\"?); valid choices: \"12.9\", \"13.0\", \"13.5\""),
        ("toolchain = \"12.8\"", "Cargo.toml:7:13: `package.metadata.launch.toolchain`: \"12.8\" is not a pinned toolchain (did you mean \"12.9\"?); valid choices: \"12.9\", \"13.0\", \"13.5\""),
        ("toolchain = \"v13.0.88\"", "Cargo.toml:7:13: `package.metadata.launch.toolchain`: \"v13.0.88\" is not a pinned toolchain (did you mean \"13.0\"?); valid choices: \"12.9\", \"13.0\", \"13.5\""),
        // Spaces are refused, as in every value: a quoting mistake, not another name.
        ("toolchain = \" 12.9\"", "Cargo.toml:7:13: `package.metadata.launch.toolchain`: \" 12.9\" is not a pinned toolchain (did you mean \"12.9\"?)"),
        ("toolchain = \"13.0 \"", "Cargo.toml:7:13: `package.metadata.launch.toolchain`: \"13.0 \" is not a pinned toolchain (did you mean \"13.0\"?)"),
        ("toolchain = \"\\t13.5\"", "Cargo.toml:7:13: `package.metadata.launch.toolchain`: \"\\t13.5\" is not a pinned toolchain (did you mean \"13.0\"?)"),
        ("toolchain = \"11.8\"", "Cargo.toml:7:13: `package.metadata.launch.toolchain`: \"11.8\" is not a pinned toolchain; valid choices: \"12.9\", \"13.0\", \"13.5\""),
        ("toolchain = 13.0", "Cargo.toml:7:13: `package.metadata.launch.toolchain`: 13.0 is a floating-point number; expected a toolchain version string such as \"12.9\""),
        ("toolchains = \"13.0\"", "Cargo.toml:7:1: `package.metadata.launch.toolchains`: unknown key `toolchains` (did you mean `toolchain`?)"),
    ];
    for (meta, want) in cases {
        let got = parse(&format!("arch = [\"sm_90\"]\n{meta}")).unwrap_err();
        assert!(got.starts_with(want), "{meta}:\n got: {got}\nwant: {want}");
    }
}

/// An arch the chosen toolchain cannot target is an error at the arch, naming the toolchains that
/// can; CUDA 13 dropped sm_50–sm_72 and 12.9 does not know sm_110.
#[test]
fn an_arch_the_toolchain_cannot_target_names_the_toolchains_that_can() {
    let cases: &[(&str, &str)] = &[
        ("toolchain = \"13.0\"\narch = [\"sm_90\", \"sm_70\"]", "Cargo.toml:7:18: `package.metadata.launch.arch[1]`: toolchain \"13.0\" cannot target `sm_70`; toolchain \"12.9\" can (set `toolchain = \"12.9\"`)"),
        ("toolchain = \"13.0\"\narch = [\"sm_101a\"]", "Cargo.toml:7:9: `package.metadata.launch.arch[0]`: toolchain \"13.0\" cannot target `sm_101a`; toolchain \"12.9\" can (set `toolchain = \"12.9\"`)"),
        ("arch = [\"sm_110\"]", "Cargo.toml:6:9: `package.metadata.launch.arch[0]`: the default toolchain \"12.9\" cannot target `sm_110`; toolchains \"13.0\", \"13.5\" can"),
    ];
    for (meta, want) in cases {
        assert_eq!(&parse(meta).unwrap_err(), want, "{meta}");
    }
    // The message lists every pin that can, when more than one can.
    assert_eq!(
        untargetable("sm_90".parse().unwrap(), &Pin { targets: &[], ..pin::CUDA_13_0 }),
        "toolchain \"13.0\" cannot target `sm_90`; toolchains \"12.9\", \"13.0\", \"13.5\" can"
    );
}

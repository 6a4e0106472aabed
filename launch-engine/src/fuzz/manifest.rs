//! The manifest reader (`crate::Manifest::from_json`): generated manifests round-trip
//! through JSON; damaged JSON is refused or read as something that round-trips itself; another
//! schema is refused.

use fuzz_harness::{ensure, mutate, random_bytes, run, text, Input, Rng};
use launch::{Contract, ContractSource, Resources, KNOWN_ARCHES};

use super::PACKAGE;
use launch_analysis::DynamicStack;
use launch_schema::manifest::{
    CubinEntry, HostFile, KernelArch, KernelEntry, Manifest, MissingArch, ModuleEntry, Origin, PtxEntry, Toolchain,
    ToolchainInfo, VERSION,
};

fn string(rng: &mut Rng) -> String {
    let pieces =
        ["k", "_Z4tsumIdLi256EEvPT_PKS0_", "kernels/a.cu", "é€\u{1F600}", "\"", "\\", "\n", "\u{0}", "\u{7f}", " "];
    (0..rng.below(5)).map(|_| rng.pick(&pieces)).collect()
}

fn u32v(rng: &mut Rng) -> u32 {
    rng.number() as u32
}

fn arch(rng: &mut Rng) -> launch::Arch {
    rng.pick(KNOWN_ARCHES).parse().expect("known arch")
}

fn manifest(rng: &mut Rng) -> Manifest {
    // Every field of the table; one ptxas may leave out (`cmem`), sometimes absent.
    let resources = |rng: &mut Rng| {
        let mut r = Resources::ZERO;
        for f in Resources::FIELDS {
            let optional = (f.get)(&Resources::ZERO).is_none();
            (f.set)(&mut r, if optional { rng.one_in(2).then(|| u32v(rng)) } else { Some(u32v(rng)) });
        }
        r
    };
    let opt = |rng: &mut Rng| rng.one_in(2).then(|| u32v(rng));
    Manifest {
        schema: VERSION,
        package: string(rng),
        toolchain: ToolchainInfo {
            compilers: Toolchain { nvrtc: string(rng), ptxas: string(rng) },
            description: string(rng),
        },
        arches: (0..rng.below(4)).map(|_| arch(rng)).collect(),
        host_threads: u32v(rng),
        modules: (0..rng.below(3))
            .map(|_| ModuleEntry {
                file: string(rng),
                ptx: string(rng),
                ptx_arch: arch(rng),
                ptx_version: string(rng),
                cubins: (0..rng.below(3)).map(|_| CubinEntry { arch: arch(rng), path: string(rng) }).collect(),
                extra_ptx: (0..rng.below(2))
                    .map(|_| PtxEntry { arch: arch(rng), path: string(rng), version: string(rng) })
                    .collect(),
                rust_module: string(rng),
                ptxas_flags: (0..rng.below(2)).map(|_| string(rng)).collect(),
            })
            .collect(),
        kernels: (0..rng.below(4))
            .map(|_| KernelEntry {
                name: string(rng),
                display_name: string(rng),
                // Never empty, as the build writes it: the reader fills in an empty one (a manifest
                // from before the field), so an empty one would not read back as written.
                qualified: format!("{}::", string(rng)),
                rust_name: string(rng),
                rust_path: string(rng),
                rust_flat: rng.one_in(2),
                file: string(rng),
                line: u32v(rng),
                col: u32v(rng),
                origin: match rng.below(3) {
                    0 => Origin::Definition,
                    1 => Origin::Macro { name: string(rng) },
                    _ => Origin::NotFound,
                },
                contract: rng.one_in(2).then(|| Contract {
                    source: rng.pick(&[ContractSource::Annotation, ContractSource::LaunchBounds]),
                    threads: opt(rng),
                    min_blocks: opt(rng),
                    max_regs: opt(rng),
                    exact: rng.one_in(2),
                }),
                arches: (0..rng.below(3))
                    .map(|_| KernelArch {
                        arch: arch(rng),
                        resources: resources(rng),
                        ptxas_lines: (0..rng.below(3)).map(|_| string(rng)).collect(),
                        dynamic_stack: (rng.below(4) == 0).then(|| DynamicStack {
                            through: (0..rng.below(3)).map(|_| string(rng)).collect(),
                            ptxas_frame: rng.below(1000) as u32,
                            ptxas_warned: rng.below(2) == 0,
                        }),
                        contract: (rng.below(4) == 0).then(|| Contract {
                            source: ContractSource::LaunchBounds,
                            threads: (rng.below(2) == 0).then(|| rng.below(1025) as u32),
                            min_blocks: None,
                            max_regs: None,
                            exact: false,
                        }),
                    })
                    .collect(),
                missing: (0..rng.below(2)).map(|_| MissingArch { arch: arch(rng), reason: string(rng) }).collect(),
                host_threads: rng.one_in(3).then(|| rng.range(1, 1024) as u32),
                dynamic_smem: opt(rng),
                max_spill_bytes: opt(rng),
                variants: Vec::new(),
                params: None,
                params_unknown: None,
            })
            .collect(),
        warnings: (0..rng.below(3)).map(|_| string(rng)).collect(),
        min_driver: rng.one_in(2).then(|| string(rng)),
        host: (0..rng.below(2))
            .map(|_| HostFile { file: string(rng), compiler: string(rng), library: rng.one_in(2).then(|| string(rng)) })
            .collect(),
        unused_kernel_settings: (0..rng.below(2)).map(|_| string(rng)).collect(),
        types: (0..rng.below(2)).map(|_| (string(rng), string(rng))).collect(),
    }
}

const EXTRA: &[&[u8]] = &[
    b"\"schema\": 2,",
    b"\"arch\": \"sm_91\"",
    b"null",
    b"[",
    b"]",
    b"{\"a\":",
    b"\\u0000",
    b"\\ud800",
    b"1e400",
    b"-0.0",
];

#[test]
fn manifest_json() {
    run(
        PACKAGE,
        "manifest",
        |rng| {
            let m = manifest(rng);
            let json = if rng.one_in(2) { serde_json::to_string_pretty(&m) } else { serde_json::to_string(&m) };
            let json = json.expect("a manifest serialises");
            match rng.below(8) {
                0..=2 => Input::new(json, Some(m)),
                3 => {
                    // Another schema: refused (checked by the general property below).
                    let other = json.replacen(&format!("\"schema\":{VERSION}"), "\"schema\":2", 1).replacen(
                        &format!("\"schema\": {VERSION}"),
                        "\"schema\": 2",
                        1,
                    );
                    Input::new(other, None)
                }
                4 => Input::new(
                    format!("{}{}", "[".repeat(rng.range(1, 100_000) as usize), "]".repeat(rng.below(3))),
                    None,
                ),
                5 | 6 => Input::new(text(&mutate(rng, json.as_bytes(), EXTRA)), None),
                _ => Input::new(text(&random_bytes(rng)), None),
            }
        },
        |input| {
            let json = input.str();
            let read = Manifest::from_json(json);
            if let Some(m) = &input.expect {
                return match read {
                    Ok(back) => ensure(back == *m, || format!("read back as {back:?}")),
                    Err(e) => Err(format!("a written manifest is refused: {e}")),
                };
            }
            if let Ok(m) = read {
                ensure(m.schema == VERSION, || format!("schema {} accepted", m.schema))?;
                let again = Manifest::from_json(&serde_json::to_string(&m).map_err(|e| e.to_string())?);
                ensure(again.as_ref() == Ok(&m), || format!("what was read does not round-trip: {again:?}"))?;
            }
            Ok(())
        },
    );
}

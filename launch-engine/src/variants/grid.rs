//! From `[package.metadata.launch.tune.<kernel>]` tables to the variants to build: which kernel
//! each table names (known only once the kernels are compiled), the contracts of its grid and the
//! entry name of each. Arithmetic only: no compiler here.

use std::collections::BTreeSet;

use launch::{Contract, ContractSource};
use launch_analysis::cliffs;

use crate::config::{self, Config, MaxRegs, TuneConfig, MAX_VARIANTS};
use crate::error::Error;
use crate::suggest::edit_distance;
use launch_schema::manifest::KernelEntry;

/// The variants of one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// Index of the kernel in the manifest's kernels.
    pub kernel: usize,
    /// Its variants, in grid order (threads, then min_blocks, then max_regs), each once.
    pub variants: Vec<PlannedVariant>,
    /// The note for the grid's points left out as the same code as another point or as the
    /// kernel itself (see [`same_code`]), with the tune table's location; `None` when none was.
    pub note: Option<String>,
}

/// One variant to build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedVariant {
    /// Its entry name (see [`entry_name`]).
    pub name: String,
    /// The contract written into its PTX.
    pub contract: Contract,
}

/// The variants of every tune table of `config`, against the compiled `kernels`.
///
/// # Errors
/// At the table: a kernel name that names no kernel (with the closest one) or several, two
/// tables of one kernel, a grid of more than [`MAX_VARIANTS`] variants.
pub fn plan(config: &Config, kernels: &[KernelEntry]) -> Result<Vec<Planned>, Error> {
    let mut out: Vec<Planned> = Vec::new();
    let mut by: Vec<(usize, &TuneConfig)> = Vec::new();
    for tune in &config.tune {
        let kernel = resolve(tune, kernels)?;
        if let Some((_, first)) = by.iter().find(|(k, _)| *k == kernel) {
            return Err(config::tune_error(
                tune,
                format!(
                    "`{}` is kernel `{}`, which `{}` already tunes at {}; give each kernel one grid",
                    tune.kernel, kernels[kernel].qualified, first.key, first.location
                ),
            ));
        }
        by.push((kernel, tune));
        let variants = variants(config, tune, &kernels[kernel]);
        if variants.len() > MAX_VARIANTS {
            return Err(config::tune_error(tune, config::too_many_variants(variants.len())));
        }
        let (variants, left_out) = same_code(&kernels[kernel], variants);
        let note = (left_out > 0).then(|| {
            format!(
                "{}: `{}`: {left_out} point{} of the grid of `{}` would be the same code as {} (a register cap at or \
                 above the {} registers the kernel uses, or the kernel's own contract): not built again; {} \
                 variant{} left",
                tune.location,
                tune.key,
                if left_out == 1 { "" } else { "s" },
                kernels[kernel].display_name,
                if variants.is_empty() { "the kernel itself" } else { "another point or the kernel itself" },
                used_registers(&kernels[kernel]).unwrap_or(0),
                variants.len(),
                if variants.len() == 1 { "" } else { "s" }
            )
        });
        out.push(Planned { kernel, variants, note });
    }
    Ok(out)
}

/// The one kernel `tune` names, as every place that takes a kernel name reads it
/// ([`config::named`]: symbol, demangled name, bare name, any of them after the file).
fn resolve(tune: &TuneConfig, kernels: &[KernelEntry]) -> Result<usize, Error> {
    let hits = config::named(&tune.kernel, kernels);
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => {
            let names: Vec<&str> = kernels.iter().map(|k| k.display_name.as_str()).collect();
            let closest = kernels
                .iter()
                .flat_map(|k| [k.display_name.as_str(), k.qualified.as_str()])
                .map(|n| (edit_distance(&tune.kernel, n), n))
                .filter(|(d, n)| *d <= 2.max(n.len() / 3))
                .min();
            let hint = closest.map(|(_, n)| format!(" (did you mean `{n}`?)")).unwrap_or_default();
            let listed = if names.is_empty() {
                "the crate has no kernel".to_string()
            } else {
                let more = names.len().saturating_sub(10);
                let shown = names.iter().take(10).copied().collect::<Vec<_>>().join(", ");
                format!("the kernels: {shown}{}", if more > 0 { format!(" and {more} more") } else { String::new() })
            };
            Err(config::tune_error(tune, format!("`{}` names no kernel{hint}; {listed}", tune.kernel)))
        }
        many => Err(config::tune_error(
            tune,
            format!(
                "`{}` names {} kernels: {}; name one as `file.cu::name`",
                tune.kernel,
                many.len(),
                many.iter().map(|&i| kernels[i].qualified.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// The grid of `tune` for kernel `k`: the product of its lists, a missing list standing for the
/// kernel's own value (its block size, its `min_blocks`, its `max_regs`), each contract once.
///
/// A variant keeps the kernel's contract source and exactness when its block size is the
/// kernel's own (an `@launch` kernel's variants launch at exactly that size too); a block size
/// from the grid is an upper bound, as `__launch_bounds__` writes it.
fn variants(config: &Config, tune: &TuneConfig, k: &KernelEntry) -> Vec<PlannedVariant> {
    let base = k.contract;
    // The kernel's settings as the plan resolved them into its entry.
    let host_threads = k.host_threads.unwrap_or(config.host_threads);
    let own_threads = base.and_then(|c| c.threads);
    let threads = tune.threads.clone().unwrap_or_else(|| vec![own_threads.unwrap_or(host_threads)]);
    let (source, exact) = match (tune.threads.is_none(), base) {
        (true, Some(c)) if c.threads.is_some() => (c.source, c.exact),
        _ => (ContractSource::LaunchBounds, false),
    };
    let min_blocks: Vec<Option<u32>> = match &tune.min_blocks {
        Some(list) => list.iter().map(|&b| Some(b)).collect(),
        None => vec![base.and_then(|c| c.min_blocks)],
    };
    let mut out: Vec<PlannedVariant> = Vec::new();
    for &t in &threads {
        let caps: Vec<Option<u32>> = match &tune.max_regs {
            Some(MaxRegs::Caps(caps)) => caps.iter().map(|&r| Some(r)).collect(),
            Some(MaxRegs::Cliffs) => cliff_caps(k, t, k.dynamic_smem.unwrap_or(0)).into_iter().map(Some).collect(),
            None => vec![base.and_then(|c| c.max_regs)],
        };
        for &b in &min_blocks {
            for &r in &caps {
                let contract = Contract { source, threads: Some(t), min_blocks: b, max_regs: r, exact };
                let name = entry_name(&k.name, &contract);
                if !out.iter().any(|v| v.name == name) {
                    out.push(PlannedVariant { name, contract });
                }
            }
        }
    }
    out
}

/// The most registers kernel `k` uses on its arches, as built with its own contract.
fn used_registers(k: &KernelEntry) -> Option<u32> {
    k.arches.iter().map(|a| a.resources.registers).max()
}

/// The variants that are not the same code as an earlier one or as kernel `k` itself, and how
/// many were left out. Decided on the contracts, normalised, without assembling anything: a
/// register cap at or above the registers `k` uses is dropped when the variant's threads and
/// min_blocks are `k`'s own and `k` has no cap (ptxas, under the same bounds, already stayed
/// within it; tighter bounds only lower the registers). Two variants whose normalised contracts
/// are equal are one; a variant equal to `k`'s own contract is `k` (an empty tune table).
fn same_code(k: &KernelEntry, planned: Vec<PlannedVariant>) -> (Vec<PlannedVariant>, usize) {
    let used = used_registers(k);
    let normal = |c: Contract| match (k.contract, c.max_regs, used) {
        (Some(own), Some(cap), Some(used))
            if own.max_regs.is_none()
                && own.threads == c.threads
                && own.min_blocks == c.min_blocks
                && (own.source, own.exact) == (c.source, c.exact)
                && cap >= used =>
        {
            Contract { max_regs: None, ..c }
        }
        _ => c,
    };
    let total = planned.len();
    let mut seen: Vec<Contract> = k.contract.into_iter().collect();
    let mut out = Vec::new();
    for v in planned {
        let n = normal(v.contract);
        if !seen.contains(&n) {
            seen.push(n);
            out.push(v);
        }
    }
    let left_out = total - out.len();
    (out, left_out)
}

/// The register caps at which the resident blocks of `threads` threads per SM change, on any arch
/// the kernel is built for (`launch_analysis::cliffs`, with its shared memory and barriers
/// there), most registers first, each once, within what `.maxnreg` accepts (16 to 255).
fn cliff_caps(k: &KernelEntry, threads: u32, dynamic_smem: u32) -> Vec<u32> {
    let mut caps = BTreeSet::new();
    for ka in &k.arches {
        let r = &ka.resources;
        // An arch without occupancy data has no cliffs to add.
        for c in cliffs(ka.arch, threads, r.shared_static, dynamic_smem, r.barriers).unwrap_or_default() {
            if (16..=255).contains(&c.registers) {
                caps.insert(c.registers);
            }
        }
    }
    caps.into_iter().rev().collect()
}

/// The entry of a variant: the kernel's symbol, `__`, then the contract's numbers,
/// `poly_eval__t1024_b2_r64` (`t` threads, `b` min_blocks, `r` max_regs; absent ones left out).
/// A valid PTX identifier whenever the symbol is one, and the same for the same contract.
pub fn entry_name(symbol: &str, c: &Contract) -> String {
    let parts: Vec<String> = [("t", c.threads), ("b", c.min_blocks), ("r", c.max_regs)]
        .into_iter()
        .filter_map(|(tag, value)| value.map(|v| format!("{tag}{v}")))
        .collect();
    if parts.is_empty() {
        format!("{symbol}__unbounded")
    } else {
        format!("{symbol}__{}", parts.join("_"))
    }
}

#[cfg(test)]
mod tests {
    use launch::{Arch, Resources};

    use super::*;
    use launch_schema::manifest::KernelArch;

    fn config(tune: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("kernels")).unwrap();
        let text = format!(
            "[package]\nname = \"t\"\nversion = \"0.1.0\"\n\n[package.metadata.launch]\narch = [\"sm_90\", \"sm_100\"]\n{tune}"
        );
        Config::parse(&dir.path().join("Cargo.toml"), &text).expect("valid config")
    }

    fn kernel(name: &str, file: &str, contract: Option<Contract>) -> KernelEntry {
        let arch = |a: &str| a.parse::<Arch>().unwrap();
        KernelEntry {
            name: name.into(),
            display_name: name.into(),
            qualified: format!("{file}::{name}"),
            rust_name: name.to_uppercase(),
            rust_path: String::new(),
            rust_flat: true,
            file: file.into(),
            line: 1,
            col: 1,
            origin: Default::default(),
            contract,
            arches: ["sm_90", "sm_100"]
                .iter()
                .map(|a| KernelArch {
                    arch: arch(a),
                    resources: Resources { registers: 64, ..Default::default() },
                    ptxas_lines: Vec::new(),
                    dynamic_stack: None,
                    contract: None,
                })
                .collect(),
            missing: Vec::new(),
            host_threads: None,
            dynamic_smem: None,
            max_spill_bytes: None,
            variants: Vec::new(),
            params: None,
            params_unknown: None,
        }
    }

    fn names(p: &Planned) -> Vec<&str> {
        p.variants.iter().map(|v| v.name.as_str()).collect()
    }

    #[test]
    fn the_grid_is_the_product_of_the_lists_named_by_their_numbers() {
        let c = config(
            "[package.metadata.launch.tune.poly_eval]\nthreads = [256, 1024]\nmin_blocks = [1, 2]\nmax_regs = [64]",
        );
        let ks = [kernel("other", "kernels/o.cu", None), kernel("poly_eval", "kernels/poly.cu", None)];
        let p = plan(&c, &ks).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].kernel, 1);
        assert_eq!(
            names(&p[0]),
            ["poly_eval__t256_b1_r64", "poly_eval__t256_b2_r64", "poly_eval__t1024_b1_r64", "poly_eval__t1024_b2_r64"]
        );
        let v = &p[0].variants[3].contract;
        assert_eq!(
            (v.source, v.threads, v.min_blocks, v.max_regs, v.exact),
            (ContractSource::LaunchBounds, Some(1024), Some(2), Some(64), false)
        );
    }

    #[test]
    fn missing_lists_are_the_kernels_own_and_an_at_launch_block_size_stays_exact() {
        let at = Contract {
            source: ContractSource::Annotation,
            threads: Some(512),
            min_blocks: Some(2),
            max_regs: None,
            exact: true,
        };
        let c = config("[package.metadata.launch.tune.\"poly.cu::k\"]\nmax_regs = [32, 48, 32]");
        let p = plan(&c, &[kernel("k", "kernels/poly.cu", Some(at))]).unwrap();
        assert_eq!(names(&p[0]), ["k__t512_b2_r32", "k__t512_b2_r48"]);
        assert_eq!(p[0].variants[0].contract, Contract { max_regs: Some(32), ..at });
        // Without a contract: the host's block size (the kernel's own setting first), no bounds.
        let c = config("[package.metadata.launch.tune.k]\nmin_blocks = [3]");
        let own = KernelEntry { host_threads: Some(128), ..kernel("k", "kernels/poly.cu", None) };
        let p = plan(&c, &[own]).unwrap();
        assert_eq!(names(&p[0]), ["k__t128_b3"]);
        assert!(!p[0].variants[0].contract.exact);
    }

    /// Issue 19, item 3: points of a grid that are the same code are built once, and none that
    /// is the kernel itself; the note says how many and where the table is.
    #[test]
    fn points_that_are_the_same_code_are_left_out_with_a_note() {
        let at = Contract {
            source: ContractSource::Annotation,
            threads: Some(256),
            min_blocks: None,
            max_regs: None,
            exact: true,
        };
        let small = |regs: u32| {
            let mut k = kernel("k", "kernels/k.cu", Some(at));
            k.arches.iter_mut().for_each(|a| a.resources.registers = regs);
            k
        };
        // "cliffs" on a 10-register kernel: every cap is above what it uses, so every point is it.
        let c = config("[package.metadata.launch.tune.k]\nmax_regs = \"cliffs\"");
        let p = plan(&c, &[small(10)]).unwrap();
        assert!(p[0].variants.is_empty(), "{:?}", names(&p[0]));
        let note = p[0].note.as_deref().unwrap();
        assert!(note.contains("Cargo.toml:7:1: `package.metadata.launch.tune.k`: "), "{note}");
        assert!(note.contains("would be the same code as the kernel itself"), "{note}");
        assert!(note.contains("above the 10 registers the kernel uses"), "{note}");
        assert!(note.ends_with("0 variants left"), "{note}");
        // An empty table: the kernel's own contract, nothing to build.
        let p = plan(&config("[package.metadata.launch.tune.k]"), &[small(10)]).unwrap();
        assert!(p[0].variants.is_empty());
        assert!(p[0].note.as_deref().unwrap().contains("1 point of the grid of `k`"));
        // Caps below the registers used stay; those above are one point, the kernel.
        let c = config("[package.metadata.launch.tune.k]\nmax_regs = [32, 64, 128, 200]");
        let p = plan(&c, &[small(100)]).unwrap();
        assert_eq!(names(&p[0]), ["k__t256_r32", "k__t256_r64"]);
        assert!(p[0].note.as_deref().unwrap().contains("2 points of the grid"));
        // Other block sizes are other code, whatever the cap; a block size from the grid is an
        // upper bound, not @launch's exact one, so another contract too.
        let c = config("[package.metadata.launch.tune.k]\nthreads = [128, 256]\nmax_regs = [200]");
        let p = plan(&c, &[small(100)]).unwrap();
        assert_eq!(names(&p[0]), ["k__t128_r200", "k__t256_r200"]);
        assert_eq!(p[0].note, None);
    }

    #[test]
    fn cliffs_are_the_union_over_the_arches_of_each_block_sizes_caps() {
        let c = config("[package.metadata.launch.tune.k]\nthreads = [1024, 256]\nmax_regs = \"cliffs\"");
        let k = kernel("k", "kernels/k.cu", None);
        let p = plan(&c, std::slice::from_ref(&k)).unwrap();
        let mut want = Vec::new();
        for t in [1024, 256] {
            let mut caps = BTreeSet::new();
            for ka in &k.arches {
                for cliff in cliffs(ka.arch, t, 0, 0, 0).unwrap() {
                    caps.insert(cliff.registers);
                }
            }
            want.extend(caps.into_iter().rev().filter(|r| (16..=255).contains(r)).map(|r| format!("k__t{t}_r{r}")));
        }
        assert_eq!(names(&p[0]), want);
        assert!(names(&p[0]).contains(&"k__t1024_r64") && names(&p[0]).contains(&"k__t1024_r32"), "{want:?}");
    }

    #[test]
    fn a_table_that_names_no_kernel_one_twice_or_too_many_variants_is_located() {
        let ks = [kernel("poly_eval", "kernels/poly.cu", None), kernel("fill", "kernels/a.cu", None)];
        let err = |tune: &str, ks: &[KernelEntry]| {
            let c = config(tune);
            let dir = c.root().display().to_string();
            plan(&c, ks).unwrap_err().to_string().replace(&format!("{dir}/"), "")
        };
        assert_eq!(
            err("[package.metadata.launch.tune.poly_evl]\nthreads = [64]", &ks),
            "Cargo.toml:7:1: `package.metadata.launch.tune.poly_evl`: `poly_evl` names no kernel (did you mean `poly_eval`?); the kernels: poly_eval, fill"
        );
        assert_eq!(
            err("[package.metadata.launch.tune.\"b.cu::fill\"]\nthreads = [64]", &ks),
            "Cargo.toml:7:1: `package.metadata.launch.tune.\"b.cu::fill\"`: `b.cu::fill` names no kernel; the kernels: poly_eval, fill"
        );
        assert_eq!(
            err("[package.metadata.launch.tune.poly_eval]\nthreads = [64]\n[package.metadata.launch.tune.\"poly.cu::poly_eval\"]\nthreads = [32]", &ks),
            "Cargo.toml:9:1: `package.metadata.launch.tune.\"poly.cu::poly_eval\"`: `poly.cu::poly_eval` is kernel `kernels/poly.cu::poly_eval`, which `package.metadata.launch.tune.poly_eval` already tunes at Cargo.toml:7:1; give each kernel one grid"
        );
        let two = [kernel("fill", "kernels/a.cu", None), kernel("fill", "kernels/b.cu", None)];
        assert_eq!(
            err("[package.metadata.launch.tune.fill]\nthreads = [64]", &two),
            "Cargo.toml:7:1: `package.metadata.launch.tune.fill`: `fill` names 2 kernels: kernels/a.cu::fill, kernels/b.cu::fill; name one as `file.cu::name`"
        );
        // 8 block sizes × their cliffs: more than 64.
        let threads: Vec<String> = (1..=32).map(|w| (w * 32).to_string()).collect();
        let many = err(
            &format!("[package.metadata.launch.tune.fill]\nthreads = [{}]\nmax_regs = \"cliffs\"", threads.join(", ")),
            &two[..1],
        );
        assert!(many.starts_with("Cargo.toml:7:1: `package.metadata.launch.tune.fill`: this grid has "), "{many}");
        assert!(many.ends_with("more than the 64 one kernel may have (each is a ptxas run per arch and a module in the crate); shorten the lists"), "{many}");
    }

    #[test]
    fn entry_names_are_identifiers() {
        let c = |t, b, r| Contract {
            source: ContractSource::LaunchBounds,
            threads: t,
            min_blocks: b,
            max_regs: r,
            exact: false,
        };
        assert_eq!(entry_name("poly_eval", &c(Some(1024), Some(2), Some(64))), "poly_eval__t1024_b2_r64");
        assert_eq!(entry_name("_Z4tmplILi8EEvPi", &c(Some(256), None, None)), "_Z4tmplILi8EEvPi__t256");
        assert_eq!(entry_name("k", &c(None, None, Some(32))), "k__r32");
        assert_eq!(entry_name("k", &c(None, None, None)), "k__unbounded");
    }
}

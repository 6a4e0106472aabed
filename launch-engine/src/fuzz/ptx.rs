//! The PTX directive reader (`crate::ptx::entries` and each entry's `contract`): the
//! fixtures' PTX mutated, modules built with known directives (up to `u32::MAX`), random bytes.

use fuzz_harness::{ensure, mutate, random_bytes, run, text, Input, Rng};
use launch::ContractSource;

use super::PACKAGE;
use crate::ptx::{self, EntryDirectives};

const EXTRA: &[&[u8]] = &[
    b".visible .entry ",
    b".entry k(\n",
    b".maxntid ",
    b".reqntid ",
    b".minnctapersm ",
    b".maxnreg ",
    b"4294967295, 4294967295, 4294967295",
    b"65536, 65536, 2",
    b"\n{\n",
    b".weak ",
];

fn dims(rng: &mut Rng) -> Vec<u32> {
    (0..rng.range(1, 3))
        .map(|_| match rng.below(4) {
            0 => rng.pick(&[0, 1, u32::MAX, 65536, 1 << 31]),
            1 => rng.range(0, u32::MAX as u64) as u32,
            _ => rng.range(1, 1024) as u32,
        })
        .collect()
}

/// A module with known entries and directives.
fn generate(rng: &mut Rng) -> (String, Vec<EntryDirectives>) {
    let mut s = String::from(".version 8.8\n.target sm_90\n.address_size 64\n\n");
    let mut want = Vec::new();
    let full = |d: &[u32]| -> [u32; 3] {
        let mut a = [1; 3];
        a[..d.len()].copy_from_slice(d);
        a
    };
    let list = |d: &[u32]| d.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    // A block whose thread count does not fit in 32 bits is no block: the reader refuses it.
    let fits = |d: &[u32]| d.iter().try_fold(1u32, |p, &v| p.checked_mul(v)).is_some();
    for i in 0..rng.range(1, 5) {
        let name = format!("k{i}_{}", rng.ident());
        let linkage = rng.pick(&[".visible .entry", ".entry", ".weak .entry", ".visible\t.entry"]);
        s += &format!("{linkage} {name}(\n\t.param .u64 {name}_param_0\n)\n");
        let mut e = EntryDirectives { name, ..Default::default() };
        if rng.one_in(2) {
            let d = dims(rng);
            s += &format!(".maxntid {}\n", list(&d));
            e.maxntid = fits(&d).then(|| full(&d));
        }
        if rng.one_in(3) {
            let d = dims(rng);
            s += &format!(".reqntid {}\n", list(&d));
            e.reqntid = fits(&d).then(|| full(&d));
        }
        if rng.one_in(2) {
            let n = rng.number() as u32;
            s += &format!(".minnctapersm {n}\n");
            e.minnctapersm = Some(n);
        }
        if rng.one_in(2) {
            let n = rng.range(0, u32::MAX as u64) as u32;
            s += &format!(".maxnreg {n}\n");
            e.maxnreg = Some(n);
        }
        s += "{\n\t.reg .b32 \t%r<2>;\n\tret;\n}\n\n";
        want.push(e);
    }
    (s, want)
}

/// The contract of any entry: never a panic, threads exactly the product of the dimensions
/// (never a wrapped one), the other fields as the directives say.
fn check_contract(e: &EntryDirectives) -> Result<(), String> {
    let c = e.contract(ContractSource::LaunchBounds);
    let dims = e.reqntid.or(e.maxntid);
    let Some(c) = c else {
        return ensure(dims.is_none() && e.maxnreg.is_none(), || format!("{e:?} has a contract, but none came back"));
    };
    if let Some(t) = c.threads {
        let product: u128 = dims.map_or(0, |d| d.iter().map(|&v| u128::from(v.max(1))).product());
        // Fields filled in by hand may overflow; the product then saturates, never wraps.
        ensure(u128::from(t) == product.min(u128::from(u32::MAX)), || {
            format!("{e:?}: threads {t}, but the product of the dimensions is {product}")
        })?;
    }
    ensure(c.max_regs == e.maxnreg && c.exact == e.reqntid.is_some(), || format!("{e:?} gives {c:?}"))?;
    ensure(c.min_blocks == if c.threads.is_some() { e.minnctapersm } else { None }, || format!("{e:?} gives {c:?}"))
}

#[test]
fn ptx() {
    let corpus = super::corpus(&["fixtures/ptxas/src"], &[".ptx"]);
    run(
        PACKAGE,
        "ptx",
        move |rng| match rng.below(10) {
            0 => Input::new(".visible .entry )\n.maxntid 4,4294967295", None),
            1..=4 => {
                let base = rng.pick_ref(&corpus).clone();
                Input::new(text(&mutate(rng, base.as_bytes(), EXTRA)), None)
            }
            5..=8 => {
                let (s, want) = generate(rng);
                if rng.one_in(3) {
                    Input::new(text(&mutate(rng, s.as_bytes(), EXTRA)), None)
                } else {
                    Input::new(s, Some(want))
                }
            }
            _ => Input::new(text(&random_bytes(rng)), None),
        },
        |input| {
            let src = input.str();
            let entries = ptx::entries(src);
            let _ = ptx::version(src);
            for e in &entries {
                ensure(src.lines().any(|l| ptx::entry_name(l.trim()) == Some(e.name.as_str())), || {
                    format!("entry `{}` is on no `.entry` line", e.name)
                })?;
                check_contract(e)?;
            }
            if let Some(want) = &input.expect {
                ensure(&entries == want, || format!("read {entries:?}"))?;
            }
            Ok(())
        },
    );
}

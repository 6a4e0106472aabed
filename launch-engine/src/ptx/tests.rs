//! Tests of [`super`] (ptx.rs).

use super::*;

const PTX: &str = "\
.version 8.8
.target sm_90
.address_size 64

.visible .entry poly_eval_lb256x4(
\t.param .u64 .ptr .align 1 poly_eval_lb256x4_param_0,
\t.param .u32 poly_eval_lb256x4_param_2
)
.maxntid 256, 1, 1
.minnctapersm 4
{
\tret;
}
.visible .entry poly_eval(
\t.param .u32 poly_eval_param_2
)
{
}
.visible .entry capped(
)
.maxnreg 32
{
}
.entry _Z4tmplILi8EEvPi(
)
.reqntid 16, 2, 1
{
}
";

#[test]
fn directives_are_read_per_entry() {
    let e = entries(PTX);
    let names: Vec<&str> = e.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["poly_eval_lb256x4", "poly_eval", "capped", "_Z4tmplILi8EEvPi"]);
    assert_eq!(e[0].maxntid, Some([256, 1, 1]));
    assert_eq!(e[0].minnctapersm, Some(4));
    assert_eq!(e[1], EntryDirectives { name: "poly_eval".into(), ..Default::default() });
    assert_eq!(e[2].maxnreg, Some(32));
    assert_eq!(e[3].reqntid, Some([16, 2, 1]));
    assert_eq!(version(PTX), Some("8.8"));
}

#[test]
fn contracts_follow_the_directives() {
    let e = entries(PTX);
    let c = e[0].contract(ContractSource::LaunchBounds).unwrap();
    assert_eq!((c.threads, c.min_blocks, c.max_regs, c.exact), (Some(256), Some(4), None, false));
    assert_eq!(e[1].contract(ContractSource::LaunchBounds), None);
    let c = e[2].contract(ContractSource::LaunchBounds).unwrap();
    assert_eq!((c.threads, c.max_regs), (None, Some(32)));
    let c = e[3].contract(ContractSource::LaunchBounds).unwrap();
    assert_eq!((c.threads, c.exact), (Some(32), true));
}

#[test]
fn overflowing_dimensions_neither_panic_nor_read_as_bounds() {
    // Was "attempt to multiply with overflow" from the public API.
    let e = entries(".visible .entry )\n.maxntid 4,4294967295");
    assert_eq!(e[0].maxntid, None, "a block of 2^34 threads is no bound");
    assert_eq!(e[0].contract(ContractSource::LaunchBounds), None);
    let e = entries(".entry k(\n.reqntid 65536, 65536, 2\n.maxnreg 99999999999\n{");
    assert_eq!((e[0].reqntid, e[0].maxnreg), (None, None));
    // Directives built by hand (the fields are public) saturate instead.
    let d = EntryDirectives { maxntid: Some([4, u32::MAX, 2]), ..Default::default() };
    assert_eq!(d.contract(ContractSource::LaunchBounds).unwrap().threads, Some(u32::MAX));
    assert_eq!(entries(".entry k(\n.maxntid 1024, 1, 1\n{")[0].maxntid, Some([1024, 1, 1]));
}

fn bounds(threads: Option<u32>, min_blocks: Option<u32>, max_regs: Option<u32>) -> Contract {
    Contract { source: ContractSource::LaunchBounds, threads, min_blocks, max_regs, exact: false }
}

/// The directives `entries` reads back for `name` after an edit.
fn read_back(ptx: &str, name: &str) -> EntryDirectives {
    entries(ptx).into_iter().find(|e| e.name == name).expect("entry still there")
}

#[test]
fn a_contract_replaces_the_directives_of_one_entry_only() {
    let c = bounds(Some(1024), Some(2), None);
    let out = with_contract(PTX, "poly_eval_lb256x4", Some(&c), None).unwrap();
    let e = read_back(&out, "poly_eval_lb256x4");
    assert_eq!((e.maxntid, e.minnctapersm, e.maxnreg), (Some([1024, 1, 1]), Some(2), None));
    assert!(out.contains("poly_eval_lb256x4_param_2\n)\n.maxntid 1024, 1, 1\n.minnctapersm 2\n{\n\tret;"), "{out}");
    // The others are byte for byte as they were.
    let rest = |p: &str| p[p.find(".visible .entry poly_eval(").unwrap()..].to_string();
    assert_eq!(rest(&out), rest(PTX));
    assert_eq!(entries(&out).len(), 4);
}

#[test]
fn an_entry_without_directives_gains_them_and_none_removes_them() {
    let c = bounds(Some(256), None, Some(64));
    let out = with_contract(PTX, "poly_eval", Some(&c), None).unwrap();
    let e = read_back(&out, "poly_eval");
    assert_eq!((e.maxntid, e.minnctapersm, e.maxnreg), (Some([256, 1, 1]), None, Some(64)));
    assert_eq!(e.contract(ContractSource::LaunchBounds), Some(c));
    let cleared = with_contract(&out, "poly_eval", None, None).unwrap();
    assert_eq!(cleared, PTX, "removing what was added gives the module back");
    let cleared = with_contract(PTX, "poly_eval_lb256x4", None, None).unwrap();
    assert_eq!(
        read_back(&cleared, "poly_eval_lb256x4"),
        EntryDirectives { name: "poly_eval_lb256x4".into(), ..Default::default() }
    );
    // `max_regs` alone; `min_blocks` without threads is not written (ptxas ignores it).
    let out = with_contract(PTX, "capped", Some(&bounds(None, Some(3), Some(40))), None).unwrap();
    let e = read_back(&out, "capped");
    assert_eq!((e.maxntid, e.minnctapersm, e.maxnreg), (None, None, Some(40)));
}

#[test]
fn exact_contracts_write_reqntid_and_keep_the_entrys_own_dimensions() {
    let exact = Contract { exact: true, ..bounds(Some(32), None, None) };
    let out = with_contract(PTX, "_Z4tmplILi8EEvPi", Some(&exact), None).unwrap();
    assert_eq!(read_back(&out, "_Z4tmplILi8EEvPi").reqntid, Some([16, 2, 1]), "same product: 16 × 2 kept");
    let out = with_contract(PTX, "_Z4tmplILi8EEvPi", Some(&Contract { threads: Some(64), ..exact }), None).unwrap();
    assert_eq!(read_back(&out, "_Z4tmplILi8EEvPi").reqntid, Some([64, 1, 1]));
    // An @launch contract is built as `__launch_bounds__`: `.maxntid`, as the build writes it.
    let annotation = Contract { source: ContractSource::Annotation, ..exact };
    let e = read_back(&with_contract(PTX, "poly_eval", Some(&annotation), None).unwrap(), "poly_eval");
    assert_eq!((e.maxntid, e.reqntid), (Some([32, 1, 1]), None));
}

#[test]
fn directives_on_the_header_lines_across_lines_and_with_comments_are_replaced() {
    // On the `)` line, split over lines, a comment, `{` on the last directive's line, and a
    // directive that is not a bound (kept).
    let ptx = ".version 8.8\n.visible .entry k(\n.param .u32 k_p // (x)\n) .maxntid 128,\n  2, 1 /* old */ .explicitcluster\n.minnctapersm 4 .maxnreg 99 {\nret;\n}\n";
    let out = with_contract(ptx, "k", Some(&bounds(Some(512), None, Some(32))), None).unwrap();
    assert_eq!(
        out,
        ".version 8.8\n.visible .entry k(\n.param .u32 k_p // (x)\n)\n.explicitcluster\n.maxntid 512, 1, 1\n.maxnreg 32\n{\nret;\n}\n"
    );
    // No parameter list at all, and a body with nested blocks and braces in comments.
    let ptx = ".entry k .maxntid 64 {\n{ .reg .b32 r; } // }\n}\n.entry j()\n{\n}\n";
    let out = with_contract(ptx, "k", None, None).unwrap();
    assert_eq!(out, ".entry k\n{\n{ .reg .b32 r; } // }\n}\n.entry j()\n{\n}\n");
    assert_eq!(entries(&out).iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["k", "j"]);
}

#[test]
fn renaming_leaves_the_other_entries_alone() {
    let out = with_contract(PTX, "poly_eval", Some(&bounds(Some(256), None, None)), Some("poly_eval__t256")).unwrap();
    let names: Vec<String> = entries(&out).into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["poly_eval_lb256x4", "poly_eval__t256", "capped", "_Z4tmplILi8EEvPi"]);
    assert!(out.contains(".visible .entry poly_eval__t256(\n\t.param .u32 poly_eval_param_2\n)\n.maxntid 256, 1, 1\n{"));
    assert_eq!(with_contract(PTX, "poly_eval", None, Some("poly_eval")).unwrap(), PTX, "its own name is no clash");
    assert_eq!(
        with_contract(PTX, "poly_eval", None, Some("capped")),
        Err(PtxEditError::NameTaken { name: "capped".into() })
    );
    for bad in ["", "1k", "a-b", "%", "k k"] {
        assert_eq!(
            with_contract(PTX, "poly_eval", None, Some(bad)),
            Err(PtxEditError::InvalidName { name: bad.into() }),
            "{bad:?}"
        );
    }
}

#[test]
fn edits_of_an_entry_that_is_not_there_or_never_ends_are_typed_errors() {
    let e = with_contract(PTX, "nope", None, None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the PTX has no entry `nope`; its entries: poly_eval_lb256x4, poly_eval, capped, _Z4tmplILi8EEvPi"
    );
    // A declaration is no definition.
    let decl = ".extern .entry k(\n.param .u32 p\n);\n";
    assert!(
        matches!(with_contract(decl, "k", None, None), Err(PtxEditError::NoEntry { entries, .. }) if entries.is_empty())
    );
    for broken in [".version 8.8\n.entry k(\n.param .u32 p\n", ".entry k()\n{\n{\n}\n", ".entry k()\n.maxntid 1\n"] {
        assert_eq!(
            with_contract(broken, "k", None, None),
            Err(PtxEditError::Unterminated {
                entry: "k".into(),
                line: if broken.starts_with(".version") { 2 } else { 1 }
            }),
            "{broken:?}"
        );
    }
}

#[test]
fn keep_entry_leaves_one_entry_and_everything_else() {
    let ptx = ".version 8.8\n.global .u32 g;\n.func f()\n{\nret;\n}\n.visible .entry a()\n{\n{ ret; }\n}\n.visible .entry b()\n.maxntid 32, 1, 1\n{\nret;\n}\n";
    let out = keep_entry(ptx, "b").unwrap();
    assert_eq!(
        out,
        ".version 8.8\n.global .u32 g;\n.func f()\n{\nret;\n}\n\n.visible .entry b()\n.maxntid 32, 1, 1\n{\nret;\n}\n"
    );
    assert_eq!(
        keep_entry(ptx, "a").unwrap(),
        ".version 8.8\n.global .u32 g;\n.func f()\n{\nret;\n}\n.visible .entry a()\n{\n{ ret; }\n}\n\n"
    );
    assert!(matches!(keep_entry(ptx, "f"), Err(PtxEditError::NoEntry { .. })), "a device function is no entry");
}

/// Every entry's contract removed in one pass is what removing each entry's, one edit at a time,
/// gives; the entries' other directives, their bodies and what lies between them are kept.
#[test]
fn every_contract_removed_at_once_is_each_removed_in_turn() {
    let bounded = with_contract(PTX, "poly_eval", Some(&bounds(Some(128), Some(2), Some(64))), None).unwrap();
    let mut one_by_one = bounded.clone();
    for e in entries(&bounded) {
        one_by_one = with_contract(&one_by_one, &e.name, None, None).unwrap();
    }
    let at_once = without_contracts(&bounded).unwrap();
    assert_eq!(at_once, one_by_one);
    assert!(entries(&at_once).len() > 1);
    for e in entries(&at_once) {
        assert_eq!((e.maxntid, e.reqntid, e.minnctapersm, e.maxnreg), (None, None, None, None), "{}", e.name);
    }
    assert_eq!(without_contracts("// no entries\n").unwrap(), "// no entries\n");
}

use super::*;

/// A module in the shape NVRTC writes: declarations first, callees on the line after `call.uni`,
/// an indirect call through a prototype, comments that mention calls.
const PTX: &str = r#"
.version 8.8
.target sm_90
.address_size 64
.func  (.param .b32 func_retval0) _Z3oddi
(
	.param .b32 _Z3oddi_param_0
)
;
.func  (.param .b32 func_retval0) _Z4facti(
	.param .b32 _Z4facti_param_0
)
{
	// call.uni (retval0), _Z4leafi, (param0);   a comment, not a call
	{ // callseq 0, 0
	.param .b32 param0;
	call.uni (retval0),
	_Z4facti,
	(
	param0
	);
	}
	ret;
}
.func  (.param .b32 func_retval0) _Z4eveni(
	.param .b32 _Z4eveni_param_0
)
{
	{ // callseq 1, 0
	call.uni (retval0), _Z3oddi, (param0);
	}
	ret;
}
.func  (.param .b32 func_retval0) _Z3oddi(
	.param .b32 _Z3oddi_param_0
)
{
	call.uni (retval0), _Z4eveni, (param0);
	ret;
}
.func _Z4leafv()
{
	ret;
}
.visible .entry k_fact(
	.param .u64 k_fact_param_0
)
{
	call.uni (retval0), _Z4facti, (param0);
	ret;
}
.visible .entry k_mutual(
	.param .u64 k_mutual_param_0
)
{
	call.uni _Z4leafv, ();
	call.uni (retval0), _Z4eveni, (param0);
	ret;
}
.visible .entry k_indirect(
	.param .u64 k_indirect_param_0
)
{
	prototype_10 : .callprototype (.param .b32 _) _ (.param .b32 _);
	call (retval0), %rd4, (param0), prototype_10;
	call.uni _Z4leafv, ();
	ret;
}
"#;

fn frames(pairs: &'static [(&'static str, u32)]) -> impl Fn(&str) -> Option<u32> {
    move |f| pairs.iter().find(|(n, _)| *n == f).map(|(_, b)| *b)
}

#[test]
fn recursion_through_a_function_with_a_frame_is_found_direct_and_mutual() {
    let found = recursive_entries(PTX, frames(&[("_Z4facti", 72), ("_Z4eveni", 16), ("_Z3oddi", 0), ("_Z4leafv", 0)]));
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found["k_fact"].cycle, ["_Z4facti"]);
    assert_eq!(found["k_mutual"].cycle, ["_Z4eveni", "_Z3oddi"]);
    assert!(!found.contains_key("k_indirect"), "an indirect call names no target");
}

#[test]
fn a_cycle_of_frameless_functions_costs_nothing_per_level() {
    // ptxas 13.5 sizes such an entry statically (k_frame_fact on the H200: 320 bytes, = driver).
    let found = recursive_entries(PTX, frames(&[("_Z4facti", 0), ("_Z4eveni", 0), ("_Z3oddi", 0), ("_Z4leafv", 0)]));
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_function_ptxas_did_not_report_counts_as_having_a_frame() {
    let found = recursive_entries(PTX, |_| None);
    assert_eq!(found.keys().collect::<Vec<_>>(), ["k_fact", "k_mutual"]);
}

#[test]
fn a_module_without_calls_or_with_damaged_text_has_no_recursion() {
    assert!(recursive_entries(".visible .entry k(\n)\n{\n\tret;\n}\n", |_| Some(8)).is_empty());
    for damaged in ["", ".entry", ".func (", ".entry k {", "call.uni (", ".func f ( { call f", "/*", "\""] {
        let _ = recursive_entries(damaged, |_| Some(8));
    }
    // A body that is never closed still reads: its calls are the rest of the text.
    let open = ".visible .entry k()\n{\n call.uni g, ();\n}\n.func g()\n{\n call.uni g, ();\n";
    assert_eq!(recursive_entries(open, |_| Some(8))["k"].cycle, ["g"]);
}

/// Calls to `.extern` functions alone make no cycle, whatever the module's size: such a module is
/// not read word by word (candle's GGUF modules, 9 MB each, call only vprintf and __assertfail).
/// A module that defines or declares a function of its own still is.
#[test]
fn a_module_calling_only_extern_functions_has_no_recursion_and_is_not_scanned() {
    let externs = ".extern .func (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0\n)\n;\n\
                   .visible .entry k(\n)\n{\n\t{ // callseq 0, 0\n\tcall.uni (retval0), vprintf, (param0, param1);\n\t}\n\tret;\n}\n";
    assert!(!defines_a_function(externs));
    assert!(recursive_entries(externs, |_| Some(8)).is_empty());
    assert!(defines_a_function(PTX));
    let weak = ".weak .func foo(\n)\n{\n\tret;\n}\n";
    let forward = ".func (.param .b32 func_retval0) f\n(\n)\n;\n";
    assert!(defines_a_function(weak) && defines_a_function(forward));
}

#!/usr/bin/env python3
"""Adapt the published candle-kernels package to launch-build (the book's "candle" recipe).

    tools/candle/adapt.py PACKAGE_DIR OUT_DIR [--launch-build PATH] [--arch sm_80,sm_90] [--cubins]
                           [--own-workspace]

PACKAGE_DIR is candle-kernels as cargo unpacked it (its registry folder); OUT_DIR receives a copy
in which only two files change: build.rs becomes launch-build's one line
(fixtures/crates/candle_recipe/build.rs), and Cargo.toml loses cudaforge and gains
`[package.metadata.launch]` (fixtures/crates/candle_recipe/metadata.toml, with `host`, `exclude`
and `flags` as the package's own build.rs has them, so that any candle release from 0.9 on
adapts). Packages of candle 0.9 and before (bindgen_cuda) change one file more: src/ptx.rs, which
bindgen_cuda rewrote on every build, includes the recipe's OUT_DIR/ptx.rs instead. The .cu files
and the rest of src/ stay as published, so the crate keeps its API (`Module`, `AFFINE`...`UNARY`,
the MoE/GGUF symbols of ffi.rs where the release has them).

--cubins also applies the change candle-kernels would take upstream for candle-core to load
cubins instead of JIT-compiling PTX: `Module::cubins()`, each arch's cubin (see
tools/candle/core_cubins.py for candle-core's side).

Nothing of candle is kept in this repository: the package comes from cargo's registry folder.
"""
import argparse
import pathlib
import re
import shutil
import sys

# The build script the recipe gives candle-kernels: one file, which the book shows and the tests build.
BUILD_RS = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "crates" / "candle_recipe" / "build.rs"


# The `[package.metadata.launch]` table, which the book includes too.
METADATA = BUILD_RS.parent / "metadata.toml"


def metadata(arches, plan):
    """The table for this package: the arches asked for; `host`, `exclude` and `flags` as its build.rs says."""
    text = METADATA.read_text()
    lines = {
        "arch": "arch = " + toml_list(arches),
        "host": "host = " + toml_list(plan["host"]) if plan["host"] else None,
        "exclude": "exclude = " + toml_list(plan["exclude"]) if plan["exclude"] else None,
        "flags": "flags = " + toml_list(plan["flags"]),
    }
    for key, line in lines.items():
        found = re.findall(rf"^{key} = .*\n", text, re.M)
        if len(found) != 1:
            sys.exit(f"adapt.py: no single `{key} = ...` line in {METADATA}")
        text = text.replace(found[0], line + "\n" if line else "")
    return "\n" + text


def toml_list(values):
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def build_plan(package):
    """What the package's own build.rs compiles, read from it (candle 0.8 to 0.11 write it alike).

    `host`: the files its static library is built from (`source_files(...)` / `moe_sources`), relative
    to src/; `exclude`: the ones it adds only under a feature (`moe_sources.push(...)`, `cutile`);
    `flags`: the options its PTX build passes (`.arg(...)` before `.build_ptx()`); `ptx_rs`: whether
    src/ptx.rs is the bindgen_cuda one (it includes OUT_DIR/<module>.ptx) rather than OUT_DIR/ptx.rs.
    """
    text = (package / "build.rs").read_text()
    ptx_build = text.find(".build_ptx()")
    if ptx_build < 0:
        sys.exit(f"adapt.py: {package}/build.rs builds no PTX (`.build_ptx()`): not a candle-kernels build this recipe knows")
    start = max(text.rfind("KernelBuilder::", 0, ptx_build), text.rfind("Builder::default()", 0, ptx_build))
    flags = re.findall(r'\.arg\("([^"]+)"\)', text[start:ptx_build])
    optional = re.findall(r'\.push\("src/([^"]+\.cu)"\)', text)
    listed = [f for f in re.findall(r'"src/([^"]+\.cu)"', text) if f not in optional]
    exclude = [f for f in optional if (package / "src" / f).is_file()]
    for f in listed:
        if not (package / "src" / f).is_file():
            sys.exit(f"adapt.py: {package}/build.rs compiles src/{f}, which the package does not hold")
    return {"host": listed, "exclude": exclude, "flags": flags, "ptx_rs": "bindgen_cuda" in text}


# src/ptx.rs of a bindgen_cuda package (candle 0.9 and before), under the recipe.
PTX_RS = "// cargo-launch's candle recipe: launch-build's `ptx-consts` file.\ninclude!(concat!(env!(\"OUT_DIR\"), \"/ptx.rs\"));\n"


# `Module::cubins()`: what candle-core's loader needs to load a binary image.
CUBINS_FIELD = "    ptx: &'static str,\n}"
CUBINS_METHOD = """
    /// Each arch's cubin (`("sm_90", bytes)`), for loaders that take binary images.
    pub fn cubins(&self) -> &'static [(&'static str, &'static [u8])] {
        self.cubins
    }
"""


def apply_cubins(lib_rs):
    text = lib_rs.read_text()
    edits = [
        (CUBINS_FIELD, "    ptx: &'static str,\n    cubins: &'static [(&'static str, &'static [u8])],\n}"),
        ("    pub fn ptx(&self) -> &'static str {\n        self.ptx\n    }\n",
         "    pub fn ptx(&self) -> &'static str {\n        self.ptx\n    }\n" + CUBINS_METHOD),
        ("            ptx: ptx::$cst,\n", "            ptx: ptx::$cst,\n            cubins: ptx::${cst}_CUBINS,\n"),
    ]
    for old, new in edits:
        if text.count(old) != 1:
            sys.exit(f"adapt.py: {lib_rs} is not the lib.rs this recipe knows (no single `{old.strip()}`)")
        text = text.replace(old, new)
    # `${cst}_CUBINS` is no macro syntax: paste the name with a helper the macro can call.
    text = text.replace("cubins: ptx::${cst}_CUBINS,", "cubins: cubins!($cst),")
    text = text.replace("macro_rules! mdl {", cubins_macro(text) + "macro_rules! mdl {", 1)
    lib_rs.write_text(text)


def cubins_macro(text):
    """One arm per module the crate declares with `mdl!(NAME, Id)`: macro_rules cannot paste names."""
    names = re.findall(r"^mdl!\((\w+), \w+\);$", text, re.M)
    if not names:
        sys.exit("adapt.py: no `mdl!(NAME, Id);` lines in lib.rs")
    arms = "".join(f"    ({n}) => {{ ptx::{n}_CUBINS }};\n" for n in names)
    return "macro_rules! cubins {\n" + arms + "}\n\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("package", type=pathlib.Path)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--launch-build", default=None, help="path of launch-build (default: the crates.io release)")
    ap.add_argument("--arch", default="sm_80,sm_90")
    ap.add_argument("--cubins", action="store_true", help="add Module::cubins() (candle-core loads cubins)")
    ap.add_argument("--own-workspace", action="store_true",
                    help="append an empty [workspace], for a copy inside another workspace's folder (the tests')")
    a = ap.parse_args()
    manifest = a.package / "Cargo.toml"
    if not (a.package / "src" / "lib.rs").is_file() or "name = \"candle-kernels\"" not in manifest.read_text():
        sys.exit(f"adapt.py: {a.package} is not a candle-kernels package")
    if a.out.exists():
        shutil.rmtree(a.out)
    shutil.copytree(a.package, a.out, ignore=shutil.ignore_patterns("target", ".cargo-ok", ".cargo_vcs_info.json"))
    plan = build_plan(a.package)
    toml = (a.out / "Cargo.toml").read_text()
    # cudaforge (0.10 on) or bindgen_cuda (before) goes; normalised manifests write it as its own table.
    toml, n = re.subn(r'\n\[build-dependencies\.(cudaforge|bindgen_cuda)\]\nversion = "[^"]*"\n', "\n", toml)
    if n != 1:
        sys.exit("adapt.py: no [build-dependencies.cudaforge] (or bindgen_cuda) table in Cargo.toml")
    dep = f'{{ path = "{a.launch_build}" }}' if a.launch_build else '"0.1"'
    toml += f"\n[build-dependencies]\nlaunch-build = {dep}\n" + metadata(a.arch.split(","), plan)
    if a.own_workspace:
        toml += "\n[workspace]\n"
    (a.out / "Cargo.toml").write_text(toml)
    (a.out / "Cargo.toml.orig").unlink(missing_ok=True)
    shutil.copyfile(BUILD_RS, a.out / "build.rs")
    if plan["ptx_rs"]:
        # bindgen_cuda rewrote src/ptx.rs on every build, as consts that include OUT_DIR/<module>.ptx;
        # the recipe's consts are OUT_DIR/ptx.rs (`ptx-consts`), the same names.
        (a.out / "src" / "ptx.rs").write_text(PTX_RS)
    if a.cubins:
        apply_cubins(a.out / "src" / "lib.rs")
    print(a.out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Adapt the published candle-kernels package to launch-build (the book's "candle" recipe).

    tools/candle/adapt.py PACKAGE_DIR OUT_DIR [--launch-build PATH] [--arch sm_80,sm_90] [--cubins]
                           [--own-workspace]

PACKAGE_DIR is candle-kernels as cargo unpacked it (its registry folder); OUT_DIR receives a copy
in which only two files change: build.rs becomes launch-build's one line
(fixtures/crates/candle_recipe/build.rs), and Cargo.toml loses cudaforge and gains `[package.metadata.launch]`. The .cu files and src/*.rs stay as published, so
the crate keeps its API (`Module`, `AFFINE`...`UNARY`, the MoE/GGUF symbols of ffi.rs).

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


def metadata(arches):
    text = METADATA.read_text()
    line = 'arch = ["sm_80", "sm_90"]\n'
    if text.count(line) != 1:
        sys.exit(f"adapt.py: no single `{line.strip()}` in {METADATA}")
    return "\n" + text.replace(line, "arch = [" + ", ".join(f'"{x}"' for x in arches) + "]\n")


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
    toml = (a.out / "Cargo.toml").read_text()
    # cudaforge goes (normalised manifests write it as its own table).
    toml, n = re.subn(r'\n\[build-dependencies\.cudaforge\]\nversion = "[^"]*"\n', "\n", toml)
    if n != 1:
        sys.exit("adapt.py: no [build-dependencies.cudaforge] table in Cargo.toml")
    dep = f'{{ path = "{a.launch_build}" }}' if a.launch_build else '"0.1"'
    toml += f"\n[build-dependencies]\nlaunch-build = {dep}\n" + metadata(a.arch.split(","))
    if a.own_workspace:
        toml += "\n[workspace]\n"
    (a.out / "Cargo.toml").write_text(toml)
    (a.out / "Cargo.toml.orig").unlink(missing_ok=True)
    shutil.copyfile(BUILD_RS, a.out / "build.rs")
    if a.cubins:
        apply_cubins(a.out / "src" / "lib.rs")
    print(a.out)


if __name__ == "__main__":
    main()

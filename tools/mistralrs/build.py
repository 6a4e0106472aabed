#!/usr/bin/env python3
"""Builds tools/mistralrs/program (issue 34, item 5) against mistralrs-quant's unmodified
`kernels/`, taken from its published package in cargo's registry folder, and copies the program
into .device-carry/ (gzip-compressed, with device.sh) for the GPU machine.

The crate it writes under WORK has the program as src/main.rs and the package's `kernels/` as its
own: [package.metadata.launch] compiles every file as a `host` file with mistralrs-quant 0.8.1's
nvcc flags (its build.rs's, and the `--default-stream per-thread` its builder, cudaforge, adds),
leaving out its dummy files as that build.rs does for arches of 80 and more; sm_80 and sm_90.
Nothing of mistralrs-quant goes into the repository.

Usage (from the repository root): python3 tools/mistralrs/build.py WORK [--version 0.8.1] [--arch sm_90 ...]
Then, on the GPU machine: sh .device-carry/mistralrs-device.sh
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
FLAGS = ["-std=c++17", "-O3", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
         "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr",
         "--expt-extended-lambda", "--use_fast_math", "--verbose", "--compiler-options", "-fPIC",
         "--default-stream", "per-thread"]
EXCLUDE = ["*/dummy_*.cu", "*/*_dummy.cu"]


def toml_list(xs):
    return "[" + ", ".join(json.dumps(x) for x in xs) + "]"


def package_dir(work, version):
    """The package's folder in cargo's registry folder, fetched through a manifest that needs it."""
    fetch = work / "fetch"
    (fetch / "src").mkdir(parents=True, exist_ok=True)
    (fetch / "src/lib.rs").write_text("")
    (fetch / "Cargo.toml").write_text(
        f'[package]\nname = "fetch-mistralrs-quant"\nversion = "0.0.0"\nedition = "2021"\n\n'
        f'[dependencies]\nmistralrs-quant = "={version}"\n\n[workspace]\n')
    meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--manifest-path", str(fetch / "Cargo.toml")],
                          capture_output=True, text=True)
    if meta.returncode != 0:
        sys.exit(f"cargo metadata could not fetch mistralrs-quant {version}:\n{meta.stderr[-2000:]}")
    for p in json.loads(meta.stdout)["packages"]:
        if p["name"] == "mistralrs-quant" and p["version"] == version:
            return pathlib.Path(p["manifest_path"]).parent
    sys.exit(f"mistralrs-quant {version} is not in the fetched graph")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("work")
    ap.add_argument("--version", default="0.8.1")
    ap.add_argument("--arch", action="append")
    args = ap.parse_args()
    work = pathlib.Path(args.work).resolve()
    source = package_dir(work, args.version)
    crate = work / "crate"
    shutil.rmtree(crate / "kernels", ignore_errors=True)
    (crate / "src").mkdir(parents=True, exist_ok=True)
    shutil.copytree(source / "kernels", crate / "kernels")
    shutil.copy(REPO / "tools/mistralrs/program/main.rs", crate / "src/main.rs")
    shutil.copy(REPO / "Cargo.lock", crate / "Cargo.lock")
    (crate / "build.rs").write_text("fn main() { launch_build::build() }\n")
    (crate / "Cargo.toml").write_text(f"""[package]
name = "mistralrs-quant-run"
version = "0.0.0"
edition = "2021"
publish = false

[package.metadata.launch]
toolchain = "13.0"
arch = {toml_list(args.arch or ["sm_80", "sm_90"])}
host = ["*/*.cu"]
exclude = {toml_list(EXCLUDE)}
flags = {toml_list(FLAGS)}

[dependencies]
launch = {{ path = {json.dumps(str(REPO / "launch"))}, features = ["cudarc"] }}

[build-dependencies]
launch-build = {{ path = {json.dumps(str(REPO / "launch-build"))} }}

[workspace]
""")
    target = work / "target"
    subprocess.run(["cargo", "build", "--release", "--manifest-path", str(crate / "Cargo.toml")],
                   env=dict(os.environ, CARGO_TARGET_DIR=str(target)), check=True)
    carry = REPO / ".device-carry"
    carry.mkdir(exist_ok=True)
    shutil.copy(target / "release/mistralrs-quant-run", carry / "mistralrs-quant-run")
    subprocess.run(["strip", str(carry / "mistralrs-quant-run")], check=True)
    # Its cubins make it larger than what one call carries; compressed it is about a sixth.
    subprocess.run(["gzip", "-9", "-f", str(carry / "mistralrs-quant-run")], check=True)
    shutil.copy(REPO / "tools/mistralrs/device.sh", carry / "mistralrs-device.sh")
    packed = carry / "mistralrs-quant-run.gz"
    print(f"{packed}: {packed.stat().st_size} bytes")


if __name__ == "__main__":
    main()

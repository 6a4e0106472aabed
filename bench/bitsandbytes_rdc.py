#!/usr/bin/env python3
"""bitsandbytes' CUDA files built as `host` files the way its CMake build makes them (issue 32,
class 11): with and without separable compilation, each checked for the kernel symbols its static
library leaves undefined and against cuobjdump on that library.

bitsandbytes is not a crate: `--src` is a checkout of its repository (the folder holding `csrc/`
and `CMakeLists.txt`). Its `csrc/` is copied unchanged into a temporary crate whose
[package.metadata.launch] holds what CMakeLists.txt gives nvcc for CUDA 13: `--use_fast_math`,
`--compress-mode=size`, `-DBUILD_CUDA`, `-DBNB_HAS_GEMM4BIT_SM80` (an arch of 80 or more), and
`-rdc=true` (`CUDA_SEPARABLE_COMPILATION ON`); `gemm_4bit_sm75.cu` only with sm_75, as CMake does.
Its headers include cuBLAS's: `--cublas-include` is the `include/` folder of the nvidia-cublas wheel
of the toolchain's CUDA line.

For each build (`rdc`, `whole`: the same without `-rdc=true`), cold, `cargo build -j JOBS` with an
empty kernel cache (its own target folder: the dependencies and the build script compile in it
too): the wall time, and build-stats.json's build-script and nvcc seconds; nvcc's warning #20280-D count; the kernel symbols (`_Z...k...`
names of the manifest) the library references and no member defines; and
`bench/host_folder.py`'s comparison with `cuobjdump -res-usage` of the linked library.

Usage:
    python3 bench/bitsandbytes_rdc.py --src DIR --cublas-include DIR --cuobjdump PATH
        [--toolchain DIR] [--arch sm_80 --arch sm_90] [--jobs 2] [--builds rdc,whole] [--commit SHA] [--json out.json]
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import host_folder  # noqa: E402  (its cuobjdump comparison)


def manifest_text(args, rdc):
    major = [int(re.sub(r"\D", "", a)[:2]) for a in args.arch]
    flags = ["--use_fast_math", "--compress-mode=size", "-DBUILD_CUDA"]
    if any(m >= 80 for m in major):
        flags.append("-DBNB_HAS_GEMM4BIT_SM80")
    if rdc:
        flags.insert(0, "-rdc=true")
    exclude = [] if "sm_75" in args.arch else ["gemm_4bit_sm75.cu"]
    t = host_folder.toml_list
    return f"""[package]
name = "bench-bitsandbytes"
version = "0.0.0"
edition = "2021"
publish = false

[package.metadata.launch]
toolchain = "13.0"
arch = {t(args.arch)}
host = ["*.cu"]
exclude = {t(exclude)}
include = {t([str(pathlib.Path(args.cublas_include).resolve())])}

[package.metadata.launch.file."*.cu"]
flags = {t(flags)}

[dependencies]
launch = {{ path = {json.dumps(str(REPO / "launch"))} }}

[build-dependencies]
launch-build = {{ path = {json.dumps(str(REPO / "launch-build"))} }}

[workspace]
"""


def symbols(lib, kernels):
    """Kernel symbols `lib` references that none of its members defines."""
    def names(*flags):
        out = subprocess.run(["nm", *flags, str(lib)], capture_output=True, text=True, check=True).stdout
        return {line.split()[-1] for line in out.splitlines() if line.strip() and not line.endswith(":")}
    # Defined for the linker: global or weak. A local definition (`t`, as CUDA 13 gives a template
    # kernel's host stub without separable compilation) does not resolve another member's reference.
    undefined = names("-u") - names("-g", "--defined-only")
    return sorted(undefined & kernels)


def build(args, tmp, name, rdc):
    crate = tmp / name
    shutil.copytree(pathlib.Path(args.src) / "csrc", crate / "kernels")
    (crate / "src").mkdir()
    (crate / "src/lib.rs").write_text("")
    (crate / "build.rs").write_text("fn main() { launch_build::build() }\n")
    (crate / "Cargo.toml").write_text(manifest_text(args, rdc))
    shutil.copy(REPO / "Cargo.lock", crate / "Cargo.lock")
    env = dict(os.environ, CARGO_TARGET_DIR=str(tmp / f"target-{name}"), LAUNCH_CACHE_DIR=str(tmp / f"cache-{name}"))
    if args.toolchain:
        env["LAUNCH_TOOLCHAIN"] = args.toolchain
    cmd = ["cargo", "build", "-j", str(args.jobs), "--message-format=json-render-diagnostics"]
    started = time.monotonic()
    ran = subprocess.run(cmd, cwd=crate, env=env, capture_output=True, text=True)
    wall = round(time.monotonic() - started, 1)
    if ran.returncode != 0:
        sys.exit(f"{name}: cargo build failed:\n{ran.stderr[-4000:]}")
    out_dir = None
    for line in ran.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "build-script-executed" and "bench-bitsandbytes" in msg["package_id"]:
            out_dir = pathlib.Path(msg["out_dir"])
    manifest = json.loads((out_dir / "launch/manifest.json").read_text())
    kernels = {k["name"] for k in manifest["kernels"]}
    stats = json.loads((out_dir / "launch/build-stats.json").read_text())
    lib = next(out_dir.glob("liblaunch_host_*.a"))
    members = subprocess.run(["ar", "t", str(lib)], capture_output=True, text=True, check=True).stdout.split()
    undefined = symbols(lib, kernels)
    return {
        "build": name, "rdc": rdc, "arch": args.arch, "jobs": args.jobs, "cold_wall_s": wall,
        "script_s": round(stats["script_ms"] / 1000, 1), "nvcc_s": round(stats["nvcc_ms"] / 1000, 1),
        "warnings_20280": ran.stderr.count("#20280-D"), "members": members,
        "undefined_kernel_symbols": len(undefined), "undefined_examples": undefined[:3],
        "cuobjdump": host_folder.compare(args.cuobjdump, out_dir),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True)
    ap.add_argument("--cublas-include", required=True)
    ap.add_argument("--cuobjdump", required=True)
    ap.add_argument("--toolchain")
    ap.add_argument("--arch", action="append")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--builds", default="rdc,whole")
    ap.add_argument("--commit", help="the checkout's commit, when --src is not a git work tree")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.arch = args.arch or ["sm_80", "sm_90"]
    commit = subprocess.run(["git", "-C", args.src, "rev-parse", "HEAD"], capture_output=True, text=True)
    result = {"bitsandbytes_commit": args.commit or commit.stdout.strip() or None, "machine": f"{os.cpu_count()} cores", "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.builds.split(","):
            row = build(args, pathlib.Path(tmp), name, rdc=name == "rdc")
            print(json.dumps(row), flush=True)
            result["rows"].append(row)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Cold build of a real kernel folder against its floor (issue 10 item 11).

Copies a kernel folder (for example candle-kernels' `src/`) into a temporary crate whose
[package.metadata.launch] holds the given `arch`, `exclude` and `flags`, then with real `cargo build`s:

  raw    the folder compiled one job at a time (`cargo build -j1`, LAUNCH_NO_CACHE=1): the sum of
         NVRTC + ptxas over all jobs, and the longest single job (from build-stats.json);
  floor  max(raw / tokens, longest job): no schedule can beat either;
  cold   --runs cold builds (crate cleaned, empty kernel cache, `-j` tokens): the compile phase's
         wall time (build-stats.json `wall_ms`), and its ratio to the floor of the same run pair.

Also records the CPU time other processes used during each cold build (the machine may be shared).
Usage:

    python3 bench/folder.py --kernels DIR [--arch sm_80 --arch sm_90] [--exclude X ...]
                            [--flag=-std=c++17 ...] [--runs 5] [--jobs 2] [--json out.json]
"""
import argparse
import glob
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench import OTHERS, REPO, sh, summary  # noqa: E402

NAME = "bench-folder"


def toml_list(xs):
    return "[" + ", ".join(json.dumps(x) for x in xs) + "]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", required=True, help="the kernel folder to copy")
    ap.add_argument("--arch", action="append", default=None)
    ap.add_argument("--exclude", action="append", default=[])
    ap.add_argument("--flag", action="append", default=[])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cargo -j (tokens)")
    ap.add_argument("--repo", default=str(REPO), help="the launch-build checkout to build with")
    ap.add_argument("--toolchain", default=os.path.expanduser("~/.cache/cargo-launch/toolchain/cuda-12.9.86"))
    ap.add_argument("--json")
    args = ap.parse_args()
    arches = args.arch or ["sm_80", "sm_90"]

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="launch-folder-bench-"))
    crate, target = tmp / "crate", tmp / "target"
    shutil.copytree(args.kernels, crate / "kernels")
    meta = [f"arch = {toml_list(arches)}"]
    if args.exclude:
        meta.append(f"exclude = {toml_list(args.exclude)}")
    if args.flag:
        meta.append(f"flags = {toml_list(args.flag)}")
    (crate / "Cargo.toml").write_text(
        f'[package]\nname = "{NAME}"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        f"[lib]\npath = \"lib.rs\"\n\n[package.metadata.launch]\n" + "\n".join(meta) + "\n\n"
        f'[dependencies]\nlaunch = {{ path = "{args.repo}/launch" }}\n\n'
        f'[build-dependencies]\nlaunch-build = {{ path = "{args.repo}/launch-build" }}\n\n[workspace]\n'
    )
    (crate / "build.rs").write_text("fn main() {\n    launch_build::build()\n}\n")
    (crate / "lib.rs").write_text("#![allow(missing_docs)]\nlaunch::include_kernels!();\n")

    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("LAUNCH_", "CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS", "CUDA_"))}
    base.update(CARGO_TARGET_DIR=str(target), CARGO_TERM_COLOR="never", LAUNCH_TOOLCHAIN=args.toolchain)
    n_cache = [0]

    def env(**extra):
        n_cache[0] += 1
        e = dict(base, LAUNCH_CACHE_DIR=str(tmp / f"cache-{n_cache[0]}"))
        e.update(extra)
        return e

    manifest = ["--manifest-path", str(crate / "Cargo.toml")]

    def build(*a, **extra):
        sh(["cargo", "clean", "-p", NAME, *manifest], env())
        _, p = sh(["cargo", "build", *a, *manifest], env(**extra), check=False)
        files = glob.glob(str(target / "debug/build" / f"{NAME}-*/out/launch/build-stats.json"))
        if not files:
            sys.exit(f"no build-stats.json: the build failed:\n{p.stderr[-4000:]}")
        stats = json.loads(pathlib.Path(max(files, key=os.path.getmtime)).read_text())
        for f in files:
            os.remove(f)
        return stats

    build()  # dependencies compiled once, not measured
    rows = []
    for _ in range(args.runs):
        raw = build("-j1", LAUNCH_NO_CACHE="1")
        times = [j["nvrtc_ms"] + j["ptxas_ms"] for j in raw["compiled_jobs"]]
        raw_ms, longest = sum(times), max(times)
        floor = max(raw_ms / args.jobs, longest)
        cold = build(f"-j{args.jobs}")
        rows.append({"raw_ms": raw_ms, "longest_ms": longest, "floor_ms": floor, "cold_ms": cold["wall_ms"],
                     "ratio": cold["wall_ms"] / floor, "jobs": cold["jobs"], "max_parallel": cold["max_parallel"],
                     "other_cpu_s": OTHERS[-1]})
        print(json.dumps(rows[-1]), flush=True)
    result = {k: summary([r[k] for r in rows]) for k in rows[0] if k not in ("jobs", "max_parallel")}
    result["jobs"] = rows[0]["jobs"]
    result["runs"] = rows
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

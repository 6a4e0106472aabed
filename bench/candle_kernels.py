#!/usr/bin/env python3
"""candle-kernels built by candle's own build (cudaforge) against the book's recipe (issue 34, item 4).

Back to back on one machine, with no GPU and no `nvidia-smi` (cudaforge is given
`CUDA_COMPUTE_CAP=90`, as its README asks of a GPU-less build), each build in its own empty target
folder and, for cargo-launch, an empty kernel cache (the toolchain is the installed pinned 13.0, given
through `LAUNCH_TOOLCHAIN`, as cudaforge is given its nvcc):

  cold      `cargo build --release` from an empty target folder: dependencies, build script,
            every kernel, the crate (wall time);
  no-op     the same command again (cargo runs no build script);
  ptx-edit  one PTX module's file edited (a comment appended to src/affine.cu);
  host-edit one file of the nvcc-built library edited (src/moe/moe_wmma.cu).

Builds: `cudaforge` (the published package, sm_90 only, nvcc from the pinned 13.0 toolchain),
`launch` (tools/candle/adapt.py: sm_80 and sm_90, each a cubin, PTX at sm_80) and `launch-sm90`
(the recipe with sm_90 alone, the arches cudaforge builds).

    python3 bench/candle_kernels.py WORK [--runs 3] [--builds cudaforge,launch,launch-sm90] [--json F]
        [--edits-only]

`--edits-only` measures the no-op and the edits again on the crates and target folders an earlier
run left in WORK (after a change to launch-build: the first build, which rebuilds it, is left out).
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
TOOLCHAIN = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "cargo-launch/toolchain/cuda-13.0.88"


def package(work):
    """candle-kernels 0.11.1's folder in cargo's registry folder (fetched through a manifest)."""
    fetch = work / "fetch"
    (fetch / "src").mkdir(parents=True, exist_ok=True)
    (fetch / "src/main.rs").write_text("fn main() {}\n")
    (fetch / "Cargo.toml").write_text('[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n'
                                      '[dependencies]\ncandle-kernels = "=0.11.1"\n[workspace]\n')
    meta = json.loads(subprocess.check_output(["cargo", "metadata", "--format-version", "1",
                                               "--manifest-path", str(fetch / "Cargo.toml")]))
    return next(pathlib.Path(p["manifest_path"]).parent for p in meta["packages"] if p["name"] == "candle-kernels")


def prepare(work, pkg, build):
    crate = work / build
    shutil.rmtree(crate, ignore_errors=True)
    if build == "cudaforge":
        shutil.copytree(pkg, crate)
        os.chmod(crate / "Cargo.toml", 0o644)
        with open(crate / "Cargo.toml", "a") as f:
            f.write("\n[workspace]\n")
    else:
        arch = "sm_90" if build == "launch-sm90" else "sm_80,sm_90"
        subprocess.check_call([sys.executable, str(REPO / "tools/candle/adapt.py"), str(pkg), str(crate),
                               "--launch-build", str(REPO / "launch-build"), "--arch", arch, "--own-workspace"])
    for p in crate.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return crate


def cargo_build(crate, env):
    t = time.monotonic()
    r = subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=crate, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    s = time.monotonic() - t
    if r.returncode != 0:
        sys.exit(f"cargo build failed in {crate}:\n{r.stderr[-4000:]}")
    return round(s, 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work", type=pathlib.Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--builds", default="cudaforge,launch,launch-sm90")
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--edits-only", action="store_true")
    a = ap.parse_args()
    nvcc = TOOLCHAIN / "nvidia/cu13/bin"
    if not (nvcc / "nvcc").is_file():
        sys.exit("no CUDA 13.0 toolchain: cargo launch setup --toolchain 13.0")
    a.work.mkdir(parents=True, exist_ok=True)
    work = a.work.resolve()
    pkg = package(work)
    results = {"package": "candle-kernels 0.11.1", "machine": f"{os.cpu_count()} CPUs, Linux {os.uname().release}",
               "runs": a.runs, "builds": {}}
    for build in a.builds.split(","):
        crate = work / build if a.edits_only else prepare(work, pkg, build)
        env = dict(os.environ, PATH=f"{nvcc}:{os.environ['PATH']}", CARGO_TARGET_DIR=str(work / f"target-{build}"),
                   LAUNCH_CACHE_DIR=str(work / f"cache-{build}"), CARGO_INCREMENTAL="0")
        env.pop("CUDA_COMPUTE_CAP", None)
        if build == "cudaforge":
            env["CUDA_COMPUTE_CAP"] = "90"
        else:
            # The same installed toolchain cudaforge's nvcc comes from: the empty cache is the
            # kernel cache's, not a toolchain install.
            env["LAUNCH_TOOLCHAIN"] = str(TOOLCHAIN)
        if a.edits_only:
            r = {"rebuild": cargo_build(crate, env)}
        else:
            for d in (env["CARGO_TARGET_DIR"], env["LAUNCH_CACHE_DIR"]):
                shutil.rmtree(d, ignore_errors=True)
            r = {"cold": cargo_build(crate, env)}
            print(f"{build}: cold {r['cold']} s", flush=True)
        for what, rel in (("no-op", None), ("ptx-edit", "src/affine.cu"), ("host-edit", "src/moe/moe_wmma.cu")):
            r[what] = []
            for i in range(a.runs):
                if rel:
                    with open(crate / rel, "a") as f:
                        f.write(f"\n// edit {i}\n")
                r[what].append(cargo_build(crate, env))
            print(f"{build}: {what} {r[what]} s", flush=True)
        results["builds"][build] = r
    text = json.dumps(results, indent=2)
    print(text)
    if a.json:
        a.json.write_text(text + "\n")


if __name__ == "__main__":
    main()

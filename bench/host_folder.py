#!/usr/bin/env python3
"""A host-code kernel folder built by launch-build against the project's own nvcc build (issue 25).

Copies a kernel folder (for example mistralrs-quant's `kernels/`, from its published crate in
cargo's registry folder) unchanged into a temporary crate whose [package.metadata.launch] holds
`toolchain = "13.0"`, the arches, `exclude`, `host` and `flags`, then measures, back to back:

  own        the project's own build: the pinned 13.0 toolchain's nvcc on every kept file, the
             project's command (`-c`, one `-gencode` per arch, its flags), `--jobs` files at once
             (as cudaforge's thread pool does), then `ar` (wall time);
  cold       `cargo build -j JOBS` with an empty kernel cache, the crate's dependencies and build
             script already built (wall time of the `cargo build`, and build-stats.json);
  no-op      the build script rerun by an environment change (`LAUNCH_BUILD_DEBUG=1`), same cache;
  device     one device (NVRTC) file edited (a comment appended), when `--edit-device` is given;
  host       one host file edited;
  header     one header edited.

Then checks the built crate against cuobjdump (`--cuobjdump`, e.g. from the
`nvidia-cuda-cuobjdump` wheel) run on the linked static library: every (kernel, arch) of the
manifest has cuobjdump's registers, stack and static shared memory, each kernel is listed once,
and the `report --summary` lines are no wider than `--width` (when `--cargo-launch` is given).

Usage:
    python3 bench/host_folder.py --kernels DIR --host '*/*.cu' [--exclude P ...] [--flag F ...]
        [--own-flag F ...] [--arch sm_80 --arch sm_90] [--jobs 2] [--edit-host REL]
        [--edit-header REL] [--edit-device REL] [--cuobjdump PATH] [--json out.json]
"""
import argparse
import concurrent.futures
import glob
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
NAME = "bench-host-folder"


def toml_list(xs):
    return "[" + ", ".join(json.dumps(x) for x in xs) + "]"


def matches(rel, patterns):
    import fnmatch
    return any(fnmatch.fnmatchcase(rel, p) for p in patterns)


def own_build(args, root, files, out):
    """The project's nvcc command on every file (under `root`), `--jobs` at once, then ar. Returns
    seconds."""
    nvcc = pathlib.Path(args.toolchain) / "nvidia/cu13/bin/nvcc"
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in args.arch]
    out.mkdir(parents=True, exist_ok=True)

    per_file = {}

    def one(f):
        obj = out / (f.relative_to(root).as_posix().replace("/", "+") + ".o")
        cmd = [str(nvcc), *gencode, "-c", "-o", str(obj), *args.own_flag, str(f)]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        per_file[f.relative_to(root).as_posix()] = round(time.monotonic() - t0, 2)
        if p.returncode != 0:
            sys.exit(f"own build failed on {f}:\n{p.stderr[-3000:]}")
        return obj

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        objs = list(pool.map(one, files))
    subprocess.run(["ar", "crs", str(out / "libown.a"), *map(str, objs)], check=True)
    return time.monotonic() - start, per_file


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", required=True, type=pathlib.Path)
    ap.add_argument("--host", action="append", default=[])
    ap.add_argument("--exclude", action="append", default=[])
    ap.add_argument("--flag", action="append", default=[], help="launch-build `flags` element")
    ap.add_argument("--own-flag", action="append", default=[], help="the project's own nvcc flag")
    ap.add_argument("--arch", action="append", default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--edit-host")
    ap.add_argument("--edit-header")
    ap.add_argument("--edit-device")
    ap.add_argument("--cuobjdump")
    ap.add_argument("--cargo-launch", help="the cargo-launch binary, for report --summary widths")
    ap.add_argument("--width", type=int, default=120)
    ap.add_argument("--skip-own", action="store_true")
    ap.add_argument("--toolchain", default=os.path.expanduser("~/.cache/cargo-launch/toolchain/cuda-13.0.88"))
    ap.add_argument("--target-dir", help="a cargo target folder to reuse (the dependencies stay built)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary crate (its path is printed)")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.arch = args.arch or ["sm_80", "sm_90"]
    args.kernels = args.kernels.resolve()

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="launch-host-bench-"))
    crate = tmp / "crate"
    target = pathlib.Path(args.target_dir) if args.target_dir else tmp / "target"
    shutil.copytree(args.kernels, crate / "kernels")
    files = sorted(p for p in (crate / "kernels").rglob("*.cu")
                   if not matches(p.relative_to(crate / "kernels").as_posix(), args.exclude))
    meta = ['toolchain = "13.0"', f"arch = {toml_list(args.arch)}", f"host = {toml_list(args.host)}"]
    if args.exclude:
        meta.append(f"exclude = {toml_list(args.exclude)}")
    if args.flag:
        meta.append(f"flags = {toml_list(args.flag)}")
    (crate / "Cargo.toml").write_text(
        f'[package]\nname = "{NAME}"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        f"[lib]\npath = \"lib.rs\"\n\n[package.metadata.launch]\n" + "\n".join(meta) + "\n\n"
        f'[dependencies]\nlaunch = {{ path = "{REPO}/launch" }}\n\n'
        f'[build-dependencies]\nlaunch-build = {{ path = "{REPO}/launch-build" }}\n\n[workspace]\n'
    )
    shutil.copy(REPO / "Cargo.lock", crate / "Cargo.lock")
    (crate / "build.rs").write_text("fn main() {\n    launch_build::build()\n}\n")
    (crate / "lib.rs").write_text("#![allow(missing_docs)]\nlaunch::include_kernels!();\n")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("LAUNCH_", "CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS", "CUDA_"))}
    base.update(CARGO_TARGET_DIR=str(target), CARGO_TERM_COLOR="never", LAUNCH_TOOLCHAIN=args.toolchain,
                LAUNCH_CACHE_DIR=str(tmp / "cache"))
    manifest = ["--manifest-path", str(crate / "Cargo.toml")]

    def build(label, **extra):
        e = dict(base, **extra)
        start = time.monotonic()
        p = subprocess.run(["cargo", "build", f"-j{args.jobs}", *manifest], env=e, capture_output=True, text=True)
        wall = time.monotonic() - start
        if p.returncode != 0:
            sys.exit(f"{label}: cargo build failed:\n{p.stderr[-6000:]}")
        stats_files = glob.glob(str(target / "debug/build" / f"{NAME}-*/out/launch/build-stats.json"))
        stats = json.loads(pathlib.Path(max(stats_files, key=os.path.getmtime)).read_text())
        host = stats.get("host_jobs", [])
        row = {"step": label, "wall_s": round(wall, 1), "script_s": round(stats["wall_ms"] / 1e3, 1),
               "build_script_s": round(stats.get("script_ms", 0) / 1e3, 2), "kept": stats.get("kept", False),
               "archive_s": round(stats.get("host_link_ms", 0) / 1e3, 2), "jobs": stats["jobs"],
               "compiled_jobs": stats["compiled"], "host_files": len(host),
               "host_compiled": sum(1 for h in host if h["from"] == "compiled"),
               "device_compiled": len(stats["compiled_jobs"]), "nvcc_s": round(stats.get("nvcc_ms", 0) / 1e3, 1),
               "max_parallel": stats["max_parallel"],
               "per_file_s": {h["file"].removeprefix("kernels/"): round(h["nvcc_ms"] / 1e3, 2)
                              for h in host if h["from"] == "compiled"}}
        print(json.dumps({k: v for k, v in row.items() if k != "per_file_s"}), flush=True)
        return row

    def append(rel, label):
        path = crate / "kernels" / rel
        path.write_text(path.read_text() + f"\n// {label}\n")

    # The crate's dependencies and build script compiled once, not measured (docs.rs mode
    # compiles no kernel).
    subprocess.run(["cargo", "build", f"-j{args.jobs}", *manifest], env=dict(base, DOCS_RS="1"),
                   capture_output=True, check=True)
    rows = []
    if not args.skip_own:
        own, per_file = own_build(args, crate / "kernels", files, tmp / "own")
        rows.append({"step": "own nvcc build (cold)", "wall_s": round(own, 1), "files": len(files),
                     "nvcc_s": round(sum(per_file.values()), 1), "per_file_s": per_file})
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "per_file_s"}), flush=True)
    rows.append(build("cold"))
    rows.append(build("no-op (environment changed)", LAUNCH_BUILD_DEBUG="1"))
    for rel, label in [(args.edit_device, "device file edited"), (args.edit_host, "host file edited"),
                       (args.edit_header, "header edited")]:
        if rel:
            append(rel, label)
            rows.append(dict(build(label), edited=rel))
    result = {"kernels": str(args.kernels), "arch": args.arch, "jobs": args.jobs, "flags": args.flag,
              "own_flags": args.own_flag, "host": args.host, "exclude": args.exclude, "rows": rows,
              "machine": f"{os.cpu_count()} cores"}
    out_dir = pathlib.Path(max(glob.glob(str(target / "debug/build" / f"{NAME}-*/out")), key=os.path.getmtime))
    if args.cuobjdump:
        result["cuobjdump"] = compare(args.cuobjdump, out_dir, tmp / "own" / "libown.a")
        print(json.dumps(result["cuobjdump"]), flush=True)
    if args.cargo_launch:
        result["summary"] = summary_widths(args, base, manifest)
        print(json.dumps(result["summary"]), flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    if args.keep:
        print(f"kept: {tmp}", flush=True)
    else:
        shutil.rmtree(tmp, ignore_errors=True)


def resources(cuobjdump, lib):
    """(function, arch) -> (REG, STACK, SHARED) from cuobjdump -res-usage of a library."""
    text = subprocess.run([cuobjdump, "-res-usage", str(lib)], capture_output=True, text=True, check=True).stdout
    linked = {}
    arch = None
    func = None
    for line in text.splitlines():
        m = re.match(r"arch = (sm_\w+)", line)
        if m:
            arch = m.group(1)
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            func = m.group(1)
            continue
        m = re.match(r"\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", line)
        if m and func:
            linked[(func, arch)] = tuple(int(x) for x in m.groups()[:3])
            func = None
    return linked


def compare(cuobjdump, out_dir, own_lib=None):
    """Every (kernel, arch) of the manifest against cuobjdump -res-usage of the linked library, and
    that library against the project's own build's (`own_lib`), kernel by kernel."""
    linked = resources(cuobjdump, next(out_dir.glob("liblaunch_host_*.a")))
    own = resources(cuobjdump, own_lib) if own_lib and own_lib.exists() else None
    manifest = json.loads((out_dir / "launch/manifest.json").read_text())
    names = [k["name"] for k in manifest["kernels"]]
    records, diffs, reserved = 0, [], 0
    for k in manifest["kernels"]:
        for a in k["arches"]:
            r = a["resources"]
            ours = (r["registers"], r["stack_frame"], r["shared_static"])
            theirs = linked.get((k["name"], a["arch"]))
            records += 1
            # cuobjdump's SHARED on sm_90 and newer counts the 1 KiB the GPU reserves per block
            # for kernels that use shared memory (static or dynamic); ptxas's `smem` (and the
            # driver's sharedSizeBytes, which the occupancy uses) do not.
            if theirs and ours[:2] == theirs[:2] and theirs[2] == ours[2] + 1024 \
                    and int(re.sub(r"\D", "", a["arch"])[:2]) >= 90:
                reserved += 1
                continue
            if ours != theirs:
                diffs.append({"kernel": k["name"][:200], "arch": a["arch"], "ours": ours, "linked": theirs})
    ours_keys = {(k["name"], a["arch"]) for k in manifest["kernels"] for a in k["arches"]}
    only_linked = [f"{f[:120]} {a}" for (f, a) in linked if (f, a) not in ours_keys]
    missing = sum(len(k.get("missing", [])) for k in manifest["kernels"])
    vs_own = None
    if own is not None:
        vs_own = {"own_records": len(own), "same_keys": set(own) == set(linked),
                  "differences": sum(1 for k in own if own[k] != linked.get(k))}
    return {"vs_own_build": vs_own, "kernels": len(names), "unique_names": len(set(names)), "records": records,
            "linked_records": len(linked), "differences": len(diffs), "reserved_1k_in_cuobjdump_shared": reserved, "first_differences": diffs[:5],
            "linked_but_not_reported": len(only_linked), "examples": only_linked[:5], "missing_arches": missing}


def summary_widths(args, base, manifest):
    p = subprocess.run([args.cargo_launch, "launch", "report", "--no-setup", "--summary", *manifest],
                       env=base, capture_output=True, text=True)
    lines = p.stdout.splitlines()
    widths = sorted(len(l) for l in lines) or [0]
    return {"exit": p.returncode, "lines": len(lines), "max_width": widths[-1],
            "median_width": widths[len(widths) // 2], "over_bound": sum(1 for w in widths if w > args.width)}


if __name__ == "__main__":
    main()

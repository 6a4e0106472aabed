#!/usr/bin/env python3
"""Loads every embedded image of the builds `coverage_prepare.sh` wrote (cubins and PTX, as
OUT_DIR/launch has them) on this machine's GPU with cuModuleLoadData, records success or the CUDA
error, which kernels each loaded module holds, and compares with `cargo launch coverage --gpu H200
--driver 13.0 --format json` for the same builds (each kernel: native cubin, PTX JIT, PTX refused
with 222, or no image, 209). Also loads a PTX of ISA 9.5 (NVRTC 13.5), which launch::compat
predicts a CUDA 13.0 driver refuses with 222.

    python3 tools/gpu/coverage_device.py SRC OUT

Only the driver library (ctypes on libcuda.so.1); JIT times with CUDA_CACHE_DISABLE=1.
"""
import ctypes
import glob
import json
import os
import sys
import time

os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
cu = ctypes.CDLL("libcuda.so.1")


def check(code, what):
    if code:
        sys.exit(f"{what}: CUDA error {code}")


def setup():
    check(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    ver, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    cu.cuDriverGetVersion(ctypes.byref(ver))
    cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
    cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)  # COMPUTE_CAPABILITY_MINOR
    name = ctypes.create_string_buffer(256)
    cu.cuDeviceGetName(name, 256, dev)
    return {"gpu": name.value.decode(), "cc": f"{major.value}.{minor.value}", "driver": ver.value}


def load(path, symbols):
    """(error code, [symbols the module holds], milliseconds) of loading one image."""
    data = open(path, "rb").read()
    if path.endswith(".ptx"):
        data += b"\0"
    module = ctypes.c_void_p()
    t0 = time.perf_counter()
    code = cu.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(data))
    ms = (time.perf_counter() - t0) * 1000
    held = []
    if code == 0:
        for s in symbols:
            f = ctypes.c_void_p()
            if cu.cuModuleGetFunction(ctypes.byref(f), module, s.encode()) == 0:
                held.append(s)
        cu.cuModuleUnload(module)
    return code, held, round(ms, 3)


def images(build_dir, manifest):
    """Per module file: [(kind, arch, path)]."""
    flat = lambda p: os.path.join(build_dir, p.replace("/", "__"))
    out = {}
    for m in manifest["modules"]:
        imgs = [("cubin", c["arch"], flat(c["path"])) for c in m["cubins"]]
        if m["ptx"]:
            imgs.append(("ptx", m["ptx_arch"], flat(m["ptx"])))
        imgs += [("ptx", p["arch"], flat(p["path"])) for p in m.get("extra_ptx", [])]
        out[m["file"]] = imgs
    return out


def observe(build_dir):
    """Every image's load and, per kernel, what a loader by launch's rule would find: the loads."""
    manifest = json.load(open(os.path.join(build_dir, "manifest.json")))
    kernels = {k["file"] + "::" + k["display_name"]: (k["file"], k["name"]) for k in manifest["kernels"]}
    loads = {}
    for file, imgs in images(build_dir, manifest).items():
        symbols = [sym for (f, sym) in kernels.values() if f == file]
        for kind, arch, path in imgs:
            code, held, ms = load(path, symbols)
            loads[(file, kind, arch)] = {"file": file, "kind": kind, "arch": arch, "error": code, "holds": held, "ms": ms}
    return kernels, loads


def compare(kernels, loads, predicted):
    """Each kernel's predicted outcome against what the driver did."""
    rows = []
    for gpu in predicted["gpus"]:
        for group in gpu["loads"]:
            for name in group["kernels"]:
                file, sym = kernels[name]
                mine = [l for l in loads.values() if l["file"] == file]
                runs = lambda kind: [l for l in mine if l["kind"] == kind and l["error"] == 0 and sym in l["holds"]]
                outcome, arch = group["outcome"], group["image"]
                if outcome == "native":
                    ok = any(l["arch"] == arch for l in runs("cubin"))
                elif outcome == "jit":
                    ok = not runs("cubin") and any(l["arch"] == arch for l in runs("ptx"))
                elif outcome == "jit_refused":
                    ok = any(l["kind"] == "ptx" and l["arch"] == arch and l["error"] == 222 for l in mine)
                else:  # no_image: nothing that loads holds it
                    ok = not runs("cubin") and not runs("ptx")
                rows.append({"kernel": name, "predicted": outcome, "image": arch, "agrees": ok})
    return rows


def main(src, out):
    info = setup()
    report = {"device": info, "builds": {}}
    for pred in sorted(glob.glob(os.path.join(src, "*.predicted.json"))):
        build = os.path.basename(pred)[: -len(".predicted.json")]
        kernels, loads = observe(os.path.join(src, build))
        rows = compare(kernels, loads, json.load(open(pred)))
        report["builds"][build] = {"images": list(loads.values()), "kernels": rows}
    ptx = os.path.join(src, "axpb135.cuda-13.5.ptx")
    if os.path.exists(ptx):
        code, held, ms = load(ptx, ["axpb135"])
        # launch::compat: ISA 9.5 needs CUDA 13.5; this driver is 13.0 → 222 predicted.
        report["ptx_isa_9_5"] = {"error": code, "predicted": 222, "agrees": code == 222, "ms": ms}
    json.dump(report, open(os.path.join(out, "coverage_device.json"), "w"), indent=1)
    lines = [f"{info['gpu']} (cc {info['cc']}), driver {info['driver']}"]
    for build, r in report["builds"].items():
        lines.append(f"{build}:")
        for l in r["images"]:
            lines.append(f"  {l['file']} {l['kind']} {l['arch']}: error {l['error']}, holds {','.join(l['holds']) or '-'}, {l['ms']} ms")
        for k in r["kernels"]:
            lines.append(f"  {k['kernel']}: predicted {k['predicted']} {k['image']}: {'agrees' if k['agrees'] else 'DISAGREES'}")
    if "ptx_isa_9_5" in report:
        p = report["ptx_isa_9_5"]
        lines.append(f"PTX ISA 9.5: error {p['error']} (predicted 222): {'agrees' if p['agrees'] else 'DISAGREES'}")
    total = [k["agrees"] for r in report["builds"].values() for k in r["kernels"]]
    lines.append(f"{sum(total)} of {len(total)} kernel predictions agree")
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "coverage_device.txt"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

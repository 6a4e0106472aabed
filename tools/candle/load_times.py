#!/usr/bin/env python3
"""First-use load time of each candle module on the GPU: PTX (JIT-compiled by the driver) vs cubin.

    CUDA_CACHE_DISABLE=1 python3 tools/candle/load_times.py DIR REPS

DIR holds `i/<module>.ptx` (candle's cudaforge build), `a/<module>.ptx` (cargo-launch's fallback
PTX, which candle-core unchanged loads) and `b/<module>.cubin` (cargo-launch's cubin for this
device, which the cubins change loads). Each is given to cuModuleLoadData REPS times in this
process (run with the driver's JIT cache off, so every PTX load compiles); prints one JSON line
per module and way with every time in ms and the median.
"""
import json
import pathlib
import statistics
import sys
import time

from cuda.bindings import driver as cu


def ok(result):
    err = result[0] if isinstance(result, tuple) else result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise SystemExit(f"CUDA error {err}")
    return result[1] if isinstance(result, tuple) and len(result) > 1 else None


def main():
    folder, reps = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    ok(cu.cuInit(0))
    dev = ok(cu.cuDeviceGet(0))
    ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(dev))))
    ways = [("i", "ptx", "cudaforge PTX"), ("a", "ptx", "cargo-launch PTX"), ("b", "cubin", "cargo-launch cubin")]
    names = sorted(p.stem for p in (folder / "b").glob("*.cubin"))
    for name in names:
        for sub, ext, way in ways:
            image = (folder / sub / f"{name}.{ext}").read_bytes()
            if ext == "ptx":
                image += b"\0"
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                module = ok(cu.cuModuleLoadData(image))
                times.append((time.perf_counter() - t0) * 1e3)
                ok(cu.cuModuleUnload(module))
            row = {"module": name, "way": way, "bytes": len(image), "ms": [round(t, 2) for t in times]}
            row["median_ms"] = round(statistics.median(times), 2)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Ask a real GPU's driver what `launch::occupancy` computes, for every kernel of kernels.cu.

Run on a machine with an NVIDIA GPU, nvcc and the `cuda.bindings` (cuda-python) package:

    python3 tools/h200/measure.py --out DIR

1. Compiles kernels.cu with nvcc for sm_90 twice: to a cubin with `-Xptxas -v` (the ptxas log gives
   registers, barriers and static shared memory per kernel) and to PTX (the launch-bounds
   directives `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg` per kernel).
2. Loads the cubin with `cuModuleLoadData` and, for every kernel, records the function attributes
   and:
   * default configuration: `cuOccupancyMaxActiveBlocksPerMultiprocessor` at every block size
     1..=1024 for several dynamic shared-memory sizes (0 included), `cuOccupancyMaxPotentialBlockSize`
     (no callback, no block-size limit) for each size, and `cuOccupancyAvailableDynamicSMemPerBlock`
     on a small grid;
   * each shared-memory carveout of CARVEOUTS (`CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`,
     the last one, -1, restores the default): the same three queries on SUBSET_BLOCK_SIZES;
   * after the opt-in (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` = opt-in limit - static):
     the same three queries on SUBSET_BLOCK_SIZES.
   Function attributes are properties of the loaded module; no device setting is changed.
3. Writes DIR/occupancy-sm90.json (the fixture format read by launch/tests/h200_driver.rs) and
   DIR/ptxas-sm90.log (the verbatim `-Xptxas -v` output).

A failing CUDA call in an occupancy query is recorded (negative CUresult in a blocks array, `err`
elsewhere); any other failing call aborts the run.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "kernels.cu")
ARCH = "sm_90"

MAX_BLOCK = 1024
# Block sizes of the carveout and opt-in sections: every multiple of 32, plus 1, 33 and 1000.
SUBSET_BLOCK_SIZES = sorted({1, 33, 1000} | set(range(32, MAX_BLOCK + 1, 32)))
# Shared-memory carveouts (percent); -1 (CU_SHAREDMEM_CARVEOUT_DEFAULT) last, which restores it.
CARVEOUTS = [0, 10, 25, 50, 75, 100, -1]
CARVEOUT_DYNAMIC = [0, 8192, 30000]
# cuOccupancyAvailableDynamicSMemPerBlock grid.
AVAILABLE_NUM_BLOCKS = [1, 2, 3, 7, 32]
AVAILABLE_BLOCK_SIZES = [32, 256, 1024]

DEVICE_ATTRIBUTES = [
    "COMPUTE_CAPABILITY_MAJOR",
    "COMPUTE_CAPABILITY_MINOR",
    "MULTIPROCESSOR_COUNT",
    "MAX_THREADS_PER_BLOCK",
    "MAX_THREADS_PER_MULTIPROCESSOR",
    "MAX_BLOCKS_PER_MULTIPROCESSOR",
    "WARP_SIZE",
    "MAX_REGISTERS_PER_BLOCK",
    "MAX_REGISTERS_PER_MULTIPROCESSOR",
    "MAX_SHARED_MEMORY_PER_BLOCK",
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "RESERVED_SHARED_MEMORY_PER_BLOCK",
    "TOTAL_CONSTANT_MEMORY",
    "CLOCK_RATE",
]

FUNCTION_ATTRIBUTES = [
    "NUM_REGS",
    "SHARED_SIZE_BYTES",
    "LOCAL_SIZE_BYTES",
    "CONST_SIZE_BYTES",
    "MAX_THREADS_PER_BLOCK",
    "MAX_DYNAMIC_SHARED_SIZE_BYTES",
    "PREFERRED_SHARED_MEMORY_CARVEOUT",
    "PTX_VERSION",
    "BINARY_VERSION",
]


def default_dynamic(max_dynamic):
    """Dynamic shared-memory sizes swept over every block size in the default configuration."""
    return sorted({0, 1, 3072, 20000, max_dynamic, max_dynamic + 1})


def optin_dynamic(max_dynamic):
    """Dynamic shared-memory sizes of the opt-in section."""
    return sorted({0, 49152, 65536, 100000, 150000, max_dynamic, max_dynamic + 1})


# ---------------------------------------------------------------------------------------------
# Compilation and the ptxas / PTX text
# ---------------------------------------------------------------------------------------------


def find_nvcc():
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.isfile(candidate):
            return candidate
    sys.exit("measure.py: nvcc not found (PATH, /usr/local/cuda/bin)")


def run_checked(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"measure.py: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc


def compile_kernels(workdir):
    """Returns (cubin bytes, ptx text, ptxas log, [commands], nvcc --version)."""
    nvcc = find_nvcc()
    version = run_checked([nvcc, "--version"]).stdout.strip()
    cubin_path = os.path.join(workdir, "kernels.cubin")
    ptx_path = os.path.join(workdir, "kernels.ptx")
    cubin_cmd = [nvcc, f"-arch={ARCH}", "-cubin", "-Xptxas", "-v", "-o", cubin_path, SOURCE]
    ptx_cmd = [nvcc, f"-arch={ARCH}", "-ptx", "-o", ptx_path, SOURCE]
    proc = run_checked(cubin_cmd)
    log = proc.stdout + proc.stderr
    run_checked(ptx_cmd)
    with open(cubin_path, "rb") as f:
        cubin = f.read()
    with open(ptx_path) as f:
        ptx = f.read()
    commands = [" ".join(c).replace(HERE + "/", "tools/h200/").replace(workdir + "/", "") for c in (cubin_cmd, ptx_cmd)]
    return cubin, ptx, log, commands, version


ENTRY_RE = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")


def _int(pattern, text, default=0):
    m = re.search(pattern, text)
    return int(m.group(1)) if m else default


def parse_ptxas_log(log):
    """{kernel: {registers, barriers, smem, stack_frame, spill_stores, spill_loads}} from `ptxas -v`."""
    out = {}
    starts = list(ENTRY_RE.finditer(log))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(log)
        section = log[m.end() : end]
        if not re.search(r"Used \d+ registers", section):
            sys.exit(f"measure.py: no 'Used N registers' line for {m.group(1)}")
        out[m.group(1)] = {
            "registers": _int(r"Used (\d+) registers", section),
            "barriers": _int(r"used (\d+) barriers", section),
            "smem": _int(r"(\d+) bytes smem", section),
            "stack_frame": _int(r"(\d+) bytes stack frame", section),
            "spill_stores": _int(r"(\d+) bytes spill stores", section),
            "spill_loads": _int(r"(\d+) bytes spill loads", section),
        }
    return out


PTX_ENTRY_RE = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(")


def parse_ptx_directives(ptx):
    """{kernel: {maxntid, reqntid, minnctapersm, maxnreg}} from the performance-tuning directives
    between each `.entry` parameter list and its body (`null` when absent)."""
    out = {}
    for m in PTX_ENTRY_RE.finditer(ptx):
        close = ptx.index(")", m.end())
        head = ptx[close + 1 : ptx.index("{", close)]

        def dims(name):
            d = re.search(r"\." + name + r"\s+([\d\s,]+)", head)
            return [int(x) for x in d.group(1).replace(",", " ").split()] if d else None

        def scalar(name):
            d = re.search(r"\." + name + r"\s+(\d+)", head)
            return int(d.group(1)) if d else None

        out[m.group(1)] = {
            "maxntid": dims("maxntid"),
            "reqntid": dims("reqntid"),
            "minnctapersm": scalar("minnctapersm"),
            "maxnreg": scalar("maxnreg"),
        }
    return out


# ---------------------------------------------------------------------------------------------
# Driver queries
# ---------------------------------------------------------------------------------------------


class Driver:
    def __init__(self, cu):
        self.cu = cu
        self.ok = cu.CUresult.CUDA_SUCCESS
        self.failures = 0

    def name(self, err):
        e, s = self.cu.cuGetErrorName(err)
        return s.decode() if e == self.ok and s else str(err)

    def must(self, what, result):
        """A call that must succeed: returns its values (a single value unwrapped)."""
        err, rest = result[0], result[1:]
        if err != self.ok:
            sys.exit(f"measure.py: {what} failed: {self.name(err)} ({int(err)})")
        return rest[0] if len(rest) == 1 else rest

    def may(self, result):
        """A call whose failure is data: (error code, values)."""
        err, rest = result[0], result[1:]
        code = int(err)
        if code != 0:
            self.failures += 1
        return code, rest

    def blocks(self, func, block_size, dynamic):
        code, rest = self.may(self.cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, block_size, dynamic))
        return int(rest[0]) if code == 0 else -code

    def potential(self, func, dynamic):
        try:  # no blockSizeToDynamicSMemSize callback (NULL), no block-size limit
            result = self.cu.cuOccupancyMaxPotentialBlockSize(func, None, dynamic, 0)
        except TypeError:  # bindings that want the NULL callback as 0
            result = self.cu.cuOccupancyMaxPotentialBlockSize(func, 0, dynamic, 0)
        code, rest = self.may(result)
        return [dynamic, code, int(rest[0]), int(rest[1])] if code == 0 else [dynamic, code, 0, 0]

    def available(self, func, num_blocks, block_size):
        code, rest = self.may(self.cu.cuOccupancyAvailableDynamicSMemPerBlock(func, num_blocks, block_size))
        return [num_blocks, block_size, code, int(rest[0]) if code == 0 else 0]

    def func_attr(self, func, name):
        attr = getattr(self.cu.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name)
        return int(self.must(f"cuFuncGetAttribute({name})", self.cu.cuFuncGetAttribute(attr, func)))

    def func_set(self, func, name, value):
        attr = getattr(self.cu.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name)
        code, _ = self.may(self.cu.cuFuncSetAttribute(func, attr, value))
        return code


def section(drv, func, block_sizes, dynamics):
    """Blocks per SM for each dynamic size over `block_sizes`, the potential block size for each
    dynamic size, and the available dynamic shared memory grid, in the current configuration."""
    return {
        "occupancy": [
            {"dynamic_smem": d, "blocks": [drv.blocks(func, b, d) for b in block_sizes]} for d in dynamics
        ],
        "potential": [drv.potential(func, d) for d in dynamics],
        "available": [drv.available(func, n, b) for b in AVAILABLE_BLOCK_SIZES for n in AVAILABLE_NUM_BLOCKS],
    }


def measure_kernel(drv, module, name, ptxas, ptx, optin_limit):
    func = drv.must(f"cuModuleGetFunction({name})", drv.cu.cuModuleGetFunction(module, name.encode()))
    attributes = {a: drv.func_attr(func, a) for a in FUNCTION_ATTRIBUTES}
    max_dynamic = attributes["MAX_DYNAMIC_SHARED_SIZE_BYTES"]
    kernel = {"name": name, "ptxas": ptxas, "ptx": ptx, "attributes": attributes}
    kernel["default"] = section(drv, func, range(1, MAX_BLOCK + 1), default_dynamic(max_dynamic))

    carveouts = []
    for pct in CARVEOUTS:
        set_err = drv.func_set(func, "PREFERRED_SHARED_MEMORY_CARVEOUT", pct)
        entry = {"percent": pct, "set_err": set_err}
        entry["attribute_after"] = drv.func_attr(func, "PREFERRED_SHARED_MEMORY_CARVEOUT")
        entry.update(section(drv, func, SUBSET_BLOCK_SIZES, CARVEOUT_DYNAMIC))
        carveouts.append(entry)
    kernel["carveout"] = carveouts

    optin_max = optin_limit - attributes["SHARED_SIZE_BYTES"]
    set_err = drv.func_set(func, "MAX_DYNAMIC_SHARED_SIZE_BYTES", optin_max)
    optin = {"max_dynamic_smem": optin_max, "set_err": set_err}
    optin["attribute_after"] = drv.func_attr(func, "MAX_DYNAMIC_SHARED_SIZE_BYTES")
    optin.update(section(drv, func, SUBSET_BLOCK_SIZES, optin_dynamic(optin_max)))
    kernel["optin"] = optin
    return kernel


def tool_output(cmd):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return (proc.stdout + proc.stderr).strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"unavailable: {e}"


def measure(cu, cubin, ptx_text, log):
    import numpy as np

    drv = Driver(cu)
    drv.must("cuInit", cu.cuInit(0))
    driver_version = int(drv.must("cuDriverGetVersion", cu.cuDriverGetVersion()))
    dev = drv.must("cuDeviceGet", cu.cuDeviceGet(0))
    name = drv.must("cuDeviceGetName", cu.cuDeviceGetName(256, dev))
    name = bytes(name).split(b"\0", 1)[0].decode()
    attrs = {}
    for a in DEVICE_ATTRIBUTES:
        attr = getattr(cu.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + a)
        attrs[a] = int(drv.must(f"cuDeviceGetAttribute({a})", cu.cuDeviceGetAttribute(attr, dev)))

    ctx = drv.must("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(dev))
    drv.must("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))
    image = np.frombuffer(cubin, dtype=np.uint8).copy()
    module = drv.must("cuModuleLoadData", cu.cuModuleLoadData(image.ctypes.data))

    ptxas = parse_ptxas_log(log)
    directives = parse_ptx_directives(ptx_text)
    names = sorted(ptxas)
    missing = sorted(set(names) ^ set(directives))
    if missing:
        sys.exit(f"measure.py: kernels in only one of the ptxas log and the PTX: {missing}")

    kernels = []
    for n in names:
        t = time.time()
        kernels.append(measure_kernel(drv, module, n, ptxas[n], directives[n], attrs["MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"]))
        k = kernels[-1]
        print(
            f"{n:>16}: {ptxas[n]['registers']:3} regs {ptxas[n]['barriers']:2} bars {ptxas[n]['smem']:5} B smem"
            f" | NUM_REGS {k['attributes']['NUM_REGS']:3} MAX_THREADS {k['attributes']['MAX_THREADS_PER_BLOCK']:4}"
            f" | blocks@32,256,1024 = {k['default']['occupancy'][0]['blocks'][31]},"
            f"{k['default']['occupancy'][0]['blocks'][255]},{k['default']['occupancy'][0]['blocks'][1023]}"
            f" | potential {k['default']['potential'][0][2:]} ({time.time() - t:.2f} s)",
            flush=True,
        )

    drv.must("cuModuleUnload", cu.cuModuleUnload(module))
    drv.must("cuDevicePrimaryCtxRelease", cu.cuDevicePrimaryCtxRelease(dev))
    device = {
        "name": name,
        "driver_api_version": driver_version,
        "attributes": attrs,
    }
    return device, kernels, drv.failures


# ---------------------------------------------------------------------------------------------
# Output: JSON with every list of scalars on one line
# ---------------------------------------------------------------------------------------------


def dump(value, indent=0):
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f'{pad} {json.dumps(k)}: {dump(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return "[" + ",".join(json.dumps(v) for v in value) + "]"
        if all(isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v) for v in value):
            return "[" + ",".join(dump(v) for v in value) + "]"
        items = [f"{pad} {dump(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder for occupancy-sm90.json and ptxas-sm90.log")
    parser.add_argument("--command", default=None, help="the command line to record (default: this one)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    started = time.time()

    try:
        from cuda.bindings import driver as cu
    except ImportError:  # cuda-python before 12.6
        from cuda import cuda as cu
    try:
        from importlib.metadata import version

        bindings_version = version("cuda-bindings")
    except Exception:  # noqa: BLE001 - only informative
        bindings_version = "unknown"

    with tempfile.TemporaryDirectory() as work:
        cubin, ptx_text, log, compile_commands, nvcc_version = compile_kernels(work)
    with open(os.path.join(args.out, "ptxas-sm90.log"), "w") as f:
        f.write(log)
    print(f"compiled {len(parse_ptxas_log(log))} kernels ({time.time() - started:.1f} s)", flush=True)

    device, kernels, failures = measure(cu, cubin, ptx_text, log)
    smi = tool_output(
        ["nvidia-smi", "--query-gpu=name,driver_version,compute_cap,memory.total", "--format=csv,noheader"]
    )
    record = {
        "about": "Real-driver occupancy of the kernels of tools/h200/kernels.cu; see tools/h200/README.md",
        "recorded": {
            "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": args.command or " ".join(["python3"] + sys.argv),
            "compile_commands": compile_commands,
            "nvcc_version": nvcc_version.splitlines()[-1] if nvcc_version else "",
            "nvidia_smi": smi,
            "cuda_bindings": bindings_version,
            "python": platform.python_version(),
            "failed_queries": failures,
            "wall_s": round(time.time() - started, 1),
        },
        "device": device,
        "max_block_size": MAX_BLOCK,
        "subset_block_sizes": SUBSET_BLOCK_SIZES,
        "kernels": kernels,
    }
    path = os.path.join(args.out, "occupancy-sm90.json")
    with open(path, "w") as f:
        f.write(dump(record) + "\n")
    print(
        f"{device['name']} ({smi}), driver API {device['driver_api_version']}, {len(kernels)} kernels, "
        f"{failures} failed queries, {os.path.getsize(path)} bytes -> {path} ({time.time() - started:.1f} s)"
    )


if __name__ == "__main__":
    main()

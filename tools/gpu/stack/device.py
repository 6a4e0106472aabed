"""On the GPU machine: LOCAL_SIZE_BYTES and NUM_REGS of every kernel of each stack-*.cubin, as the
driver reports them (nothing is launched). Prints one line per toolchain and kernel."""
import glob
import os
import sys

from cuda.bindings import driver as cu

KERNELS = ["k_plain", "k_callee", "k_fact", "k_fib", "k_frame_fib", "k_frame_fact", "k_mutual", "k_indirect"]


def ok(result):
    err, *rest = result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{cu.cuGetErrorName(err)[1].decode()}")
    return rest[0] if len(rest) == 1 else rest


ok(cu.cuInit(0))
ctx = ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))
ok(cu.cuCtxSetCurrent(ctx))
print("driver", ok(cu.cuDriverGetVersion()), "default stack limit", ok(cu.cuCtxGetLimit(cu.CUlimit.CU_LIMIT_STACK_SIZE)))
here = os.path.dirname(os.path.abspath(__file__))
for path in sorted(glob.glob(os.path.join(here, "stack-*.cubin"))):
    version = os.path.basename(path)[len("stack-"):-len(".cubin")]
    module = ok(cu.cuModuleLoadData(open(path, "rb").read()))
    for name in KERNELS:
        f = ok(cu.cuModuleGetFunction(module, name.encode()))
        attr = lambda a: ok(cu.cuFuncGetAttribute(a, f))
        local = attr(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
        regs = attr(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS)
        print(f"{version} {name} LOCAL_SIZE_BYTES={local} NUM_REGS={regs}")
    ok(cu.cuModuleUnload(module))
sys.stdout.flush()

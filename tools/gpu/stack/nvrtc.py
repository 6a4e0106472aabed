"""PTX of one CUDA file through an NVRTC library, for compute_90: nvrtc.py LIBNVRTC SOURCE PTX."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
source = open(sys.argv[2], "rb").read()
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), source, b"stack.cu", 0, None, None) == 0
options = (ctypes.c_char_p * 1)(b"--gpu-architecture=compute_90")
status = lib.nvrtcCompileProgram(prog, 1, options)
size = ctypes.c_size_t()
lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
log = ctypes.create_string_buffer(size.value)
lib.nvrtcGetProgramLog(prog, log)
if status != 0:
    sys.exit(f"nvrtc: {log.value.decode()}")
lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
ptx = ctypes.create_string_buffer(size.value)
lib.nvrtcGetPTX(prog, ptx)
open(sys.argv[3], "wb").write(ptx.value)

/* cargo-launch: <cuda.h> for NVRTC, found before the toolkit's own.
 *
 * The toolkit's cuda.h declares the driver API's host functions, and NVRTC refuses any host
 * function declaration ("host functions are not allowed in JIT mode"). Device code uses only the
 * version macro and a few types from it; this header gives those. Host code that calls the
 * driver API belongs in Rust (the `launch` crate) or in a file left out with `exclude`. */
#ifndef LAUNCH_CUDA_H
#define LAUNCH_CUDA_H
#include <stdint.h>

/* The same value the toolkit's cuda.h gives, from the compiler's own version macros. */
#ifndef CUDA_VERSION
#  define CUDA_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)
#endif

typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;
typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;

/* Opaque handles: pointers to types device code never looks into. */
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef unsigned long long CUtexObject_v1;
typedef CUtexObject_v1 CUtexObject;
typedef unsigned long long CUsurfObject_v1;
typedef CUsurfObject_v1 CUsurfObject;

/* A TMA descriptor, passed to kernels as a `const __grid_constant__ CUtensorMap` parameter: 128
 * opaque bytes, 64-byte aligned. */
#ifndef CU_TENSOR_MAP_NUM_QWORDS
#  define CU_TENSOR_MAP_NUM_QWORDS 16
#endif
typedef struct CUtensorMap_st {
    alignas(64) cuuint64_t opaque[CU_TENSOR_MAP_NUM_QWORDS];
} CUtensorMap;

#endif

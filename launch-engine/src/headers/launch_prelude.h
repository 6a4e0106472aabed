/* cargo-launch prelude, pre-included into every kernel file (turned off by `std-headers = false`).
 *
 * nvcc compiles device code with cuda_runtime.h and, through it, the host's <math.h>, <stdlib.h>
 * and <stdint.h> already included, so kernels written for nvcc use INFINITY, M_PI, uint32_t or
 * std::sin without including anything. NVRTC declares the device functions itself; this adds
 * the rest. It holds declarations and macros only, so it never changes the generated code. */
#ifndef LAUNCH_PRELUDE_H
#define LAUNCH_PRELUDE_H
#include <stdint.h>
#include <stddef.h>
#include <limits.h>
#include <float.h>
#include <cmath>
#endif

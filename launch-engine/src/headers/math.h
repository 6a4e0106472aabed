/* cargo-launch: <math.h> for NVRTC. NVRTC declares the device math functions itself (sinf, exp,
 * fmaxf, isnan, ...); this adds the macros C and POSIX define next to them. */
#ifndef LAUNCH_MATH_H
#define LAUNCH_MATH_H

/* Constant expressions, usable in constexpr and host code too: the IEEE 754 bit patterns. */
#ifndef INFINITY
#  define INFINITY __builtin_bit_cast(float, 0x7f800000U)
#endif
#ifndef NAN
#  define NAN __builtin_bit_cast(float, 0x7fc00000U)
#endif
#ifndef HUGE_VALF
#  define HUGE_VALF __builtin_bit_cast(float, 0x7f800000U)
#endif
#ifndef HUGE_VAL
#  define HUGE_VAL __builtin_bit_cast(double, 0x7ff0000000000000ULL)
#endif
#ifndef HUGE_VALL
#  define HUGE_VALL ((long double)HUGE_VAL)
#endif

#ifndef FP_NAN
#  define FP_NAN 0
#endif
#ifndef FP_INFINITE
#  define FP_INFINITE 1
#endif
#ifndef FP_ZERO
#  define FP_ZERO 2
#endif
#ifndef FP_SUBNORMAL
#  define FP_SUBNORMAL 3
#endif
#ifndef FP_NORMAL
#  define FP_NORMAL 4
#endif

/* The POSIX constants (g++ defines _GNU_SOURCE, so nvcc users have them from <math.h>). */
#ifndef M_PI
#  define M_E 2.7182818284590452354
#  define M_LOG2E 1.4426950408889634074
#  define M_LOG10E 0.43429448190325182765
#  define M_LN2 0.69314718055994530942
#  define M_LN10 2.30258509299404568402
#  define M_PI 3.14159265358979323846
#  define M_PI_2 1.57079632679489661923
#  define M_PI_4 0.78539816339744830962
#  define M_1_PI 0.31830988618379067154
#  define M_2_PI 0.63661977236758134308
#  define M_2_SQRTPI 1.12837916709551257390
#  define M_SQRT2 1.41421356237309504880
#  define M_SQRT1_2 0.70710678118654752440
#endif

#endif

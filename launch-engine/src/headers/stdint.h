/* cargo-launch: fixed-width integer types for NVRTC (see launch_prelude.h).
 *
 * CCCL defines the same names under NVRTC, unconditionally: its typedefs are the same types as
 * these, and its macros the same values (cargo-launch drops NVRTC's warning that it redefined
 * them). */
#ifndef LAUNCH_STDINT_H
#define LAUNCH_STDINT_H

#include <limits.h>

#ifndef LAUNCH_STDINT_TYPES
#define LAUNCH_STDINT_TYPES
/* The LP64 device ABI: 64-bit integers are `long long`, as CCCL spells them under NVRTC. */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int8_t int_least8_t;
typedef int16_t int_least16_t;
typedef int32_t int_least32_t;
typedef int64_t int_least64_t;
typedef uint8_t uint_least8_t;
typedef uint16_t uint_least16_t;
typedef uint32_t uint_least32_t;
typedef uint64_t uint_least64_t;
typedef int8_t int_fast8_t;
typedef int16_t int_fast16_t;
typedef int32_t int_fast32_t;
typedef int64_t int_fast64_t;
typedef uint8_t uint_fast8_t;
typedef uint16_t uint_fast16_t;
typedef uint32_t uint_fast32_t;
typedef uint64_t uint_fast64_t;
typedef int64_t intptr_t;
typedef uint64_t uintptr_t;
typedef int64_t intmax_t;
typedef uint64_t uintmax_t;
#endif

#ifndef INT8_MAX
#  define INT8_MAX SCHAR_MAX
#  define INT16_MAX SHRT_MAX
#  define INT32_MAX INT_MAX
#  define INT64_MAX LLONG_MAX
#  define INT8_MIN SCHAR_MIN
#  define INT16_MIN SHRT_MIN
#  define INT32_MIN INT_MIN
#  define INT64_MIN LLONG_MIN
#  define UINT8_MAX UCHAR_MAX
#  define UINT16_MAX USHRT_MAX
#  define UINT32_MAX UINT_MAX
#  define UINT64_MAX ULLONG_MAX
#endif
#ifndef INT_LEAST8_MAX
#  define INT_LEAST8_MIN INT8_MIN
#  define INT_LEAST16_MIN INT16_MIN
#  define INT_LEAST32_MIN INT32_MIN
#  define INT_LEAST64_MIN INT64_MIN
#  define INT_LEAST8_MAX INT8_MAX
#  define INT_LEAST16_MAX INT16_MAX
#  define INT_LEAST32_MAX INT32_MAX
#  define INT_LEAST64_MAX INT64_MAX
#  define UINT_LEAST8_MAX UINT8_MAX
#  define UINT_LEAST16_MAX UINT16_MAX
#  define UINT_LEAST32_MAX UINT32_MAX
#  define UINT_LEAST64_MAX UINT64_MAX
#endif
#ifndef INT_FAST8_MAX
#  define INT_FAST8_MIN INT8_MIN
#  define INT_FAST16_MIN INT16_MIN
#  define INT_FAST32_MIN INT32_MIN
#  define INT_FAST64_MIN INT64_MIN
#  define INT_FAST8_MAX INT8_MAX
#  define INT_FAST16_MAX INT16_MAX
#  define INT_FAST32_MAX INT32_MAX
#  define INT_FAST64_MAX INT64_MAX
#  define UINT_FAST8_MAX UINT8_MAX
#  define UINT_FAST16_MAX UINT16_MAX
#  define UINT_FAST32_MAX UINT32_MAX
#  define UINT_FAST64_MAX UINT64_MAX
#endif
#ifndef INTPTR_MAX
#  define INTPTR_MIN INT64_MIN
#  define INTPTR_MAX INT64_MAX
#  define UINTPTR_MAX UINT64_MAX
#endif
#ifndef INTMAX_MAX
#  define INTMAX_MIN INT64_MIN
#  define INTMAX_MAX INT64_MAX
#  define UINTMAX_MAX UINT64_MAX
#endif
#ifndef PTRDIFF_MAX
#  define PTRDIFF_MIN LONG_MIN
#  define PTRDIFF_MAX LONG_MAX
#endif
#ifndef SIZE_MAX
#  define SIZE_MAX ULONG_MAX
#endif
#ifndef INT8_C
#  define INT8_C(c) c
#  define INT16_C(c) c
#  define INT32_C(c) c
#  define INT64_C(c) c##LL
#  define UINT8_C(c) c
#  define UINT16_C(c) c
#  define UINT32_C(c) c##U
#  define UINT64_C(c) c##ULL
#  define INTMAX_C(c) c##LL
#  define UINTMAX_C(c) c##ULL
#endif

#endif

/* cargo-launch: integer limits for NVRTC (the device ABI: LP64, 8-bit signed char). CCCL's
 * <cuda/std/climits> defines the same values again under NVRTC (see stdint.h). */
#ifndef LAUNCH_LIMITS_H
#define LAUNCH_LIMITS_H

#ifndef CHAR_BIT
#  define CHAR_BIT 8
#endif
#ifndef SCHAR_MAX
#  define SCHAR_MIN (-127 - 1)
#  define SCHAR_MAX 127
#  define UCHAR_MAX 255
#endif
#ifndef CHAR_MAX
#  if '\xff' > 0
#    define CHAR_MIN 0
#    define CHAR_MAX UCHAR_MAX
#  else
#    define CHAR_MIN SCHAR_MIN
#    define CHAR_MAX SCHAR_MAX
#  endif
#endif
#ifndef SHRT_MAX
#  define SHRT_MIN (-32767 - 1)
#  define SHRT_MAX 32767
#  define USHRT_MAX 65535
#endif
#ifndef INT_MAX
#  define INT_MIN (-2147483647 - 1)
#  define INT_MAX 2147483647
#  define UINT_MAX 4294967295U
#endif
#ifndef LLONG_MAX
#  define LLONG_MIN (-9223372036854775807LL - 1)
#  define LLONG_MAX 9223372036854775807LL
#  define ULLONG_MAX 18446744073709551615ULL
#endif
#ifndef LONG_MAX
#  define LONG_MIN (-9223372036854775807L - 1)
#  define LONG_MAX 9223372036854775807L
#  define ULONG_MAX 18446744073709551615UL
#endif
#ifndef MB_LEN_MAX
#  define MB_LEN_MAX 16
#endif

#endif

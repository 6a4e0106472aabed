/* cargo-launch: floating-point limits for NVRTC (IEEE 754 binary32 and binary64; long double is
 * double in device code). */
#ifndef LAUNCH_FLOAT_H
#define LAUNCH_FLOAT_H
#ifndef FLT_MAX
#  define FLT_RADIX 2
#  define FLT_ROUNDS 1
#  define FLT_EVAL_METHOD 0
#  define DECIMAL_DIG 17
#  define FLT_MANT_DIG 24
#  define FLT_DIG 6
#  define FLT_DECIMAL_DIG 9
#  define FLT_MIN_EXP (-125)
#  define FLT_MIN_10_EXP (-37)
#  define FLT_MAX_EXP 128
#  define FLT_MAX_10_EXP 38
#  define FLT_MAX 3.40282347e+38F
#  define FLT_MIN 1.17549435e-38F
#  define FLT_EPSILON 1.19209290e-07F
#  define FLT_TRUE_MIN 1.40129846e-45F
#  define FLT_HAS_SUBNORM 1
#  define DBL_MANT_DIG 53
#  define DBL_DIG 15
#  define DBL_DECIMAL_DIG 17
#  define DBL_MIN_EXP (-1021)
#  define DBL_MIN_10_EXP (-307)
#  define DBL_MAX_EXP 1024
#  define DBL_MAX_10_EXP 308
#  define DBL_MAX 1.7976931348623157e+308
#  define DBL_MIN 2.2250738585072014e-308
#  define DBL_EPSILON 2.2204460492503131e-16
#  define DBL_TRUE_MIN 4.9406564584124654e-324
#  define DBL_HAS_SUBNORM 1
#  define LDBL_MANT_DIG DBL_MANT_DIG
#  define LDBL_DIG DBL_DIG
#  define LDBL_DECIMAL_DIG DBL_DECIMAL_DIG
#  define LDBL_MIN_EXP DBL_MIN_EXP
#  define LDBL_MIN_10_EXP DBL_MIN_10_EXP
#  define LDBL_MAX_EXP DBL_MAX_EXP
#  define LDBL_MAX_10_EXP DBL_MAX_10_EXP
#  define LDBL_MAX 1.7976931348623157e+308L
#  define LDBL_MIN 2.2250738585072014e-308L
#  define LDBL_EPSILON 2.2204460492503131e-16L
#  define LDBL_TRUE_MIN 4.9406564584124654e-324L
#  define LDBL_HAS_SUBNORM 1
#endif
#endif

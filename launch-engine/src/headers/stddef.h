/* cargo-launch: <stddef.h> for NVRTC, which already has size_t, ptrdiff_t and NULL built in. */
#ifndef LAUNCH_STDDEF_H
#define LAUNCH_STDDEF_H
#ifndef offsetof
/* A member's byte offset, a constant expression: NVRTC's front end folds __INTADDR__. */
#  define offsetof(type, member) ((size_t)__INTADDR__(&(((type*)0)->member)))
#endif
/* The strictest fundamental alignment of the x86-64 and AArch64 Linux ABIs. */
struct alignas(16) launch_max_align_t {
    unsigned char launch_bytes[16];
};
typedef launch_max_align_t max_align_t;
#endif

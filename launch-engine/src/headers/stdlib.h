/* cargo-launch: <stdlib.h> for NVRTC: device code has malloc, free, abs, labs and llabs, which
 * NVRTC declares itself; the rest of stdlib is host-only. */
#ifndef LAUNCH_STDLIB_H
#define LAUNCH_STDLIB_H
#include <stddef.h>
#endif

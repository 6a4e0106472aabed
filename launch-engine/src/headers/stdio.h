/* cargo-launch: <stdio.h> for NVRTC: device code has printf, which NVRTC declares itself; the
 * rest of stdio (files, streams) is host-only. */
#ifndef LAUNCH_STDIO_H
#define LAUNCH_STDIO_H
#include <stddef.h>
#endif

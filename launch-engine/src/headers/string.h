/* cargo-launch: <string.h> for NVRTC: device code has memcpy and memset, which NVRTC declares
 * itself. */
#ifndef LAUNCH_STRING_H
#define LAUNCH_STRING_H
#include <stddef.h>
#endif

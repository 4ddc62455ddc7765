/* hlsgen's Verilator harness (hg_harness.cpp): what a C program linked into the harness can call besides the
 * platform layer of hlsgen_platform.h, and the one function it must define. */
#ifndef HG_HARNESS_H
#define HG_HARNESS_H

#include <stdint.h>

#include "hlsgen_platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The running harness's platform (NULL before the harness's main has built and reset the model). */
hg_platform *hg_harness_platform(void);
/* The device memory the harness models: byte addresses 0 to this (--mem-bytes). */
uint64_t hg_harness_mem_bytes(hg_platform *p);
/* Clock cycles simulated since the reset ended. */
uint64_t hg_harness_cycles(hg_platform *p);

/* Defined by the application linked into the harness (build_harness(..., app_sources=[...]), which defines
 * HG_WITH_APP): the harness's main calls it in `app` mode with the arguments after `app` (argv[0] the
 * executable's name), after the reset; its return value is the process's exit status. */
int hg_app_main(hg_platform *p, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif

/* hlsgen's platform layer (docs/runtime.md, "The C driver"): the four things the driver needs of a system.
 * Each platform implements them once: hlsgen_platform_baremetal.c (memory-mapped registers, physical
 * addresses), hlsgen_platform_linux.c (UIO or /dev/mem), and the Verilator harness (hlsgen.runtime.harness). */
#ifndef HLSGEN_PLATFORM_H
#define HLSGEN_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a platform keeps (register window, memory window, file descriptors): defined by the platform. */
typedef struct hg_platform hg_platform;

/* A 32-bit register of the accelerator's AXI4-Lite port at byte `offset` (hlsgen_regs.h). */
uint32_t hg_platform_read(hg_platform *p, uint32_t offset);
void hg_platform_write(hg_platform *p, uint32_t offset, uint32_t value);

/* Copy `bytes` between the host's buffer and the device's memory at byte address `device_addr` (the address
 * the accelerator's AXI4 masters use): to the device when `to_device` is non-zero, else from it. The copy is
 * complete and visible to the other side (caches written back or invalidated) when it returns. 0 on success. */
int hg_platform_copy(hg_platform *p, uint64_t device_addr, void *host, size_t bytes, int to_device);

/* Wait at most `microseconds`, returning early when the accelerator's interrupt is raised: 1 if it was (or
 * may have been: a platform without the interrupt returns 0 after sleeping), 0 otherwise. */
int hg_platform_wait(hg_platform *p, uint32_t microseconds);

#ifdef __cplusplus
}
#endif
#endif

/* The Linux platform layer (hlsgen_platform_linux.c): what an application allocates and opens. */
#ifndef HLSGEN_PLATFORM_LINUX_H
#define HLSGEN_PLATFORM_LINUX_H

#include "hlsgen_platform.h"

struct hg_platform {
    volatile uint32_t *regs;  /* the AXI4-Lite window */
    uint8_t *mem;             /* the device memory window, mapped */
    uint64_t mem_phys;        /* its physical (device) address */
    size_t mem_bytes;
    int uio;                  /* the UIO device's descriptor, or -1: waits sleep */
};

/* regs: "/dev/uioN" or "/dev/mem@0xA0000000"; mem_phys/mem_bytes: the device memory window (physically
 * contiguous, the address the accelerator sees). 0 on success, else -errno. */
int hg_linux_open(struct hg_platform *p, const char *regs, uint64_t mem_phys, size_t mem_bytes);

#endif

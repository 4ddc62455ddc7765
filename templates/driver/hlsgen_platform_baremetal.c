/* The platform layer on bare metal (a soft CPU, or a Zynq without an OS): the accelerator's registers at
 * HG_BAREMETAL_REGS, device addresses equal to the CPU's physical addresses, no cache maintenance (map the
 * images' memory uncached, or add your CPU's flush and invalidate calls where marked), and waits as busy loops
 * of HG_BAREMETAL_LOOPS_PER_US iterations. Define both for your system when compiling. */
#include <string.h>

#include "hlsgen_platform.h"

#ifndef HG_BAREMETAL_REGS
#error "define HG_BAREMETAL_REGS, the accelerator's AXI4-Lite base address (e.g. -DHG_BAREMETAL_REGS=0x43C00000)"
#endif
#ifndef HG_BAREMETAL_LOOPS_PER_US
#define HG_BAREMETAL_LOOPS_PER_US 100u
#endif

struct hg_platform {
    int unused;
};

uint32_t hg_platform_read(hg_platform *p, uint32_t offset) {
    (void)p;
    return *(volatile uint32_t *)(uintptr_t)(HG_BAREMETAL_REGS + offset);
}

void hg_platform_write(hg_platform *p, uint32_t offset, uint32_t value) {
    (void)p;
    *(volatile uint32_t *)(uintptr_t)(HG_BAREMETAL_REGS + offset) = value;
}

int hg_platform_copy(hg_platform *p, uint64_t device_addr, void *host, size_t bytes, int to_device) {
    (void)p;
    if (to_device) {
        memcpy((void *)(uintptr_t)device_addr, host, bytes);  /* then flush the range from the data cache */
    } else {
        memcpy(host, (const void *)(uintptr_t)device_addr, bytes);  /* invalidate the range first */
    }
    return 0;
}

int hg_platform_wait(hg_platform *p, uint32_t microseconds) {
    volatile uint32_t n = microseconds * HG_BAREMETAL_LOOPS_PER_US;
    (void)p;
    while (n != 0u) n = n - 1u;
    return 0;
}

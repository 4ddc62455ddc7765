/* The platform layer on Linux (a Zynq running PetaLinux or PYNQ's image): the registers through a UIO device
 * (/dev/uioN, whose map 0 is the AXI4-Lite window; its interrupt through read() and poll()) or /dev/mem at a
 * physical address, and the device memory as a physically contiguous buffer mapped from /dev/mem (reserve it
 * with a reserved-memory node or take it from udmabuf / PYNQ's CMA allocator; open /dev/mem with O_SYNC so the
 * mapping is uncached). hg_linux_open fills a struct hg_platform. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hlsgen_platform_linux.h"


int hg_linux_open(struct hg_platform *p, const char *regs, uint64_t mem_phys, size_t mem_bytes) {
    int fd = open("/dev/mem", O_RDWR | O_SYNC);
    unsigned long long at = 0;
    memset(p, 0, sizeof *p);
    p->uio = -1;
    if (fd < 0) return -errno;
    p->mem = mmap(NULL, mem_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mem_phys);
    p->mem_phys = mem_phys;
    p->mem_bytes = mem_bytes;
    if (p->mem == MAP_FAILED) {
        close(fd);
        return -errno;
    }
    if (sscanf(regs, "/dev/mem@%llx", &at) == 1) {
        p->regs = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)at);
    } else {
        p->uio = open(regs, O_RDWR);
        if (p->uio < 0) {
            close(fd);
            return -errno;
        }
        p->regs = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED, p->uio, 0);
    }
    close(fd);
    return p->regs == MAP_FAILED ? -errno : 0;
}

uint32_t hg_platform_read(hg_platform *p, uint32_t offset) { return p->regs[offset / 4u]; }

void hg_platform_write(hg_platform *p, uint32_t offset, uint32_t value) { p->regs[offset / 4u] = value; }

int hg_platform_copy(hg_platform *p, uint64_t device_addr, void *host, size_t bytes, int to_device) {
    if (device_addr < p->mem_phys || device_addr - p->mem_phys + bytes > p->mem_bytes) return -1;
    if (to_device) {
        memcpy(p->mem + (device_addr - p->mem_phys), host, bytes);
    } else {
        memcpy(host, p->mem + (device_addr - p->mem_phys), bytes);
    }
    return 0;
}

int hg_platform_wait(hg_platform *p, uint32_t microseconds) {
    if (p->uio >= 0) {  /* UIO: re-enable the interrupt, then wait for it */
        uint32_t enable = 1u, count;
        struct pollfd fd = {p->uio, POLLIN, 0};
        if (write(p->uio, &enable, sizeof enable) != (ssize_t)sizeof enable) return 0;
        if (poll(&fd, 1, (int)((microseconds + 999u) / 1000u)) > 0) {
            return read(p->uio, &count, sizeof count) == (ssize_t)sizeof count;
        }
        return 0;
    }
    usleep(microseconds);
    return 0;
}

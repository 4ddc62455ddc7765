/* hlsgen's C driver: see hlsgen_driver.h. C99, no dependencies but the platform layer (hlsgen_platform.h);
 * the register map is hlsgen_regs.h, generated from hlsgen/rtl/control.py like the Verilog's and the Python
 * runtime's. */
#include "hlsgen_driver.h"

#include <stdio.h>
#include <string.h>

#include "hlsgen_regs.h"

#define HG_ALIGN 4096u        /* every image on a page of its own: no burst crosses into another image */
#define HG_POLL_US 10u        /* a wait's slice: DONE is read between slices */
#define HG_PACK_CHUNK 512u    /* bytes of packed input words copied at a time */

static uint64_t align_up(uint64_t x) { return (x + HG_ALIGN - 1u) & ~(uint64_t)(HG_ALIGN - 1u); }

static int fail(hg_device *dev, int code, const char *what) {
    snprintf(dev->error, sizeof dev->error, "%s", what);
    return code;
}

static void write64(hg_device *dev, uint32_t lo, uint64_t value) {
    hg_platform_write(dev->platform, lo, (uint32_t)value);
    hg_platform_write(dev->platform, lo + 4u, (uint32_t)(value >> 32));
}

static int copy(hg_device *dev, uint64_t addr, void *host, size_t bytes, int to_device) {
    if (bytes == 0u) return HG_OK;
    if (hg_platform_copy(dev->platform, addr, host, bytes, to_device) != 0) {
        snprintf(dev->error, sizeof dev->error, "the platform could not copy %lu bytes %s device address 0x%llx",
                 (unsigned long)bytes, to_device ? "to" : "from", (unsigned long long)addr);
        return HG_ERR_STATE;
    }
    return HG_OK;
}

/* Wait for CONTROL.done after a start or load, at most dev->timeout_us. */
static int wait_done(hg_device *dev, const char *what) {
    uint32_t waited = 0u;
    for (;;) {
        uint32_t status = hg_platform_read(dev->platform, HG_REG_CONTROL);
        if (status & HG_CONTROL_DONE) {
            dev->last_cycles = hg_platform_read(dev->platform, HG_REG_CYCLES);
            return HG_OK;
        }
        if (waited >= dev->timeout_us) {
            snprintf(dev->error, sizeof dev->error,
                     "%s: no DONE after %lu us (CONTROL reads 0x%08lx, CYCLES %lu)", what, (unsigned long)waited,
                     (unsigned long)status, (unsigned long)hg_platform_read(dev->platform, HG_REG_CYCLES));
            return HG_ERR_TIMEOUT;
        }
        hg_platform_wait(dev->platform, HG_POLL_US);
        waited += HG_POLL_US;
    }
}

int hg_init(hg_device *dev, hg_platform *platform, uint64_t mem_base, uint64_t mem_bytes) {
    uint32_t id, shape;
    memset(dev, 0, sizeof *dev);
    dev->platform = platform;
    dev->mem_base = mem_base;
    dev->mem_bytes = mem_bytes;
    dev->timeout_us = 10u * 1000u * 1000u;
    dev->use_irq = 1;
    id = hg_platform_read(platform, HG_REG_ID);
    if (id != HG_ID) {
        snprintf(dev->error, sizeof dev->error,
                 "ID reads 0x%08lx, not 0x%08lx (an hlsgen accelerator with register map version %u)",
                 (unsigned long)id, (unsigned long)HG_ID, (unsigned)HG_VERSION);
        return HG_ERR_ID;
    }
    shape = hg_platform_read(platform, HG_REG_SHAPE);
    dev->rows = shape >> 16;
    dev->cols = shape & 0xFFFFu;
    return HG_OK;
}

uint32_t hg_output_bytes(const hg_model *model) {
    uint32_t total = 0u, k;
    for (k = 0u; k < model->outputs && k < HG_MAX_OUTPUTS; ++k) total += model->output_bytes[k];
    return total;
}

int hg_load(hg_device *dev, const hg_model *m, const void *program, const void *weights) {
    uint64_t at = align_up(dev->mem_base);
    uint32_t io, want;
    int status;
    dev->model = NULL;
    if (m->rows != dev->rows || m->cols != dev->cols) {
        snprintf(dev->error, sizeof dev->error, "model '%s' was built for a %lux%lu array, the device's is %lux%lu",
                 m->name, (unsigned long)m->rows, (unsigned long)m->cols, (unsigned long)dev->rows,
                 (unsigned long)dev->cols);
        return HG_ERR_SHAPE;
    }
    if (m->outputs == 0u || m->outputs > HG_MAX_OUTPUTS) return fail(dev, HG_ERR_STATE, "a model without outputs");
    dev->program_addr = at;
    dev->weights_addr = at = align_up(at + m->program_bytes);
    dev->fmap_addr = at = align_up(at + m->weights_bytes);
    dev->input_addr = at = align_up(at + m->fmap_bytes);
    dev->output_addr = at = align_up(at + m->input_bytes);
    at = align_up(at + hg_output_bytes(m));
    if (at - dev->mem_base > dev->mem_bytes) {
        snprintf(dev->error, sizeof dev->error, "model '%s' needs %llu bytes of device memory, the window holds %llu",
                 m->name, (unsigned long long)(at - dev->mem_base), (unsigned long long)dev->mem_bytes);
        return HG_ERR_MEMORY;
    }
    if ((status = copy(dev, dev->program_addr, (void *)program, m->program_bytes, 1)) != HG_OK) return status;
    if ((status = copy(dev, dev->weights_addr, (void *)weights, m->weights_bytes, 1)) != HG_OK) return status;
    write64(dev, HG_REG_WEIGHTS_BASE_LO, dev->weights_addr);
    write64(dev, HG_REG_FMAP_BASE_LO, dev->fmap_addr);
    write64(dev, HG_REG_PROGRAM_BASE_LO, dev->program_addr);
    write64(dev, HG_REG_INPUT_BASE_LO, dev->input_addr);
    write64(dev, HG_REG_OUTPUT_BASE_LO, dev->output_addr);
    want = HG_IO_OUTPUT | (m->input_in_fmap ? 0u : HG_IO_INPUT);
    hg_platform_write(dev->platform, HG_REG_IO, want);
    io = hg_platform_read(dev->platform, HG_REG_IO);
    if ((io & want) != want) {
        snprintf(dev->error, sizeof dev->error, "IO reads 0x%lx: this accelerator streams its input or outputs "
                 "(build with --program external for inputs and outputs through memory)", (unsigned long)io);
        return HG_ERR_IO;
    }
    hg_platform_write(dev->platform, HG_REG_IRQ_ENABLE, dev->use_irq ? 1u : 0u);
    hg_platform_write(dev->platform, HG_REG_CONTROL, HG_CONTROL_LOAD);
    if ((status = wait_done(dev, "loading the program")) != HG_OK) return status;
    dev->model = m;
    return HG_OK;
}

/* The input into the feature-map image, as the activation memory holds it: word (c / G) x pixels + pixel,
 * byte j of a word channel (c / G) x G + (j mod G) (zero past the channels). */
/* Channel c of pixel `pixel` of the packed input: channel (ky kw + kx) C + c0 of pixel (y, x) is channel c0 of
   input pixel (sy y + ky - top, sx x + kx - left), the fill off the input (hg_model.fold_*). */
static uint8_t input_byte(const hg_model *m, const uint8_t *input, uint32_t c, uint32_t pixel) {
    uint32_t c0 = c % m->image[0], tap = c / m->image[0];
    long y = (long)(pixel / m->input_width * m->fold_stride[0] + tap / m->fold_kernel[1]) - (long)m->fold_pad[0];
    long x = (long)(pixel % m->input_width * m->fold_stride[1] + tap % m->fold_kernel[1]) - (long)m->fold_pad[1];
    if (y < 0 || x < 0 || y >= (long)m->image[1] || x >= (long)m->image[2]) return (uint8_t)m->fold_fill;
    return input[((size_t)c0 * m->image[1] + (size_t)y) * m->image[2] + (size_t)x];
}

static int pack_input(hg_device *dev, const uint8_t *input) {
    const hg_model *m = dev->model;
    uint8_t chunk[HG_PACK_CHUNK];
    uint32_t rows = dev->rows, g = m->input_banks, blocks = (m->input_channels + g - 1u) / g;
    uint32_t words = blocks * m->input_pixels, per = HG_PACK_CHUNK / rows, w = 0u;
    uint64_t at = dev->fmap_addr + (uint64_t)m->input_word * rows;
    while (w < words) {
        uint32_t n = words - w < per ? words - w : per, k, j;
        int status;
        for (k = 0u; k < n; ++k) {
            uint32_t block = (w + k) / m->input_pixels, pixel = (w + k) % m->input_pixels;
            for (j = 0u; j < rows; ++j) {
                uint32_t c = block * g + j % g;
                chunk[k * rows + j] = c < m->input_channels ? input_byte(m, input, c, pixel) : 0u;
            }
        }
        if ((status = copy(dev, at + (uint64_t)w * rows, chunk, (size_t)n * rows, 1)) != HG_OK) return status;
        w += n;
    }
    return HG_OK;
}

int hg_run(hg_device *dev, const void *input, void *outputs) {
    const hg_model *m = dev->model;
    int status;
    if (m == NULL) return fail(dev, HG_ERR_STATE, "hg_run before a successful hg_load");
    status = m->input_in_fmap ? pack_input(dev, (const uint8_t *)input)
                              : copy(dev, dev->input_addr, (void *)input, m->input_bytes, 1);
    if (status != HG_OK) return status;
    hg_platform_write(dev->platform, HG_REG_CONTROL, HG_CONTROL_START);
    if ((status = wait_done(dev, "running an inference")) != HG_OK) return status;
    return copy(dev, dev->output_addr, outputs, hg_output_bytes(m), 0);
}

const char *hg_error(const hg_device *dev) { return dev->error; }

/* hlsgen's C driver (docs/runtime.md, "The C driver"): C99, no dependencies but hlsgen_platform.h.
 * init (check ID and SHAPE) -> load (program and weights into device memory, bases, CONTROL.load) ->
 * run one inference at a time (input in, START, wait for DONE by the interrupt or polling, outputs out). */
#ifndef HLSGEN_DRIVER_H
#define HLSGEN_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "hlsgen_platform.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HG_MAX_OUTPUTS 12  /* hlsgen.rtl.overlay.MAX_OUTPUTS */

enum {
    HG_OK = 0,
    HG_ERR_ID = -1,       /* the ID register does not read the accelerator's magic and version */
    HG_ERR_SHAPE = -2,    /* the array (SHAPE) is not the one the model was built for */
    HG_ERR_TIMEOUT = -3,  /* DONE did not rise within the device's timeout */
    HG_ERR_MEMORY = -4,   /* the images do not fit the device memory window */
    HG_ERR_IO = -5,       /* the accelerator cannot read its input or write its outputs through memory */
    HG_ERR_STATE = -6,    /* a call out of order (run before load) or a platform copy that failed */
};

/* One model as a build made it (OUT/driver/hlsgen_model_<name>.c): sizes and layouts, not the images. */
typedef struct {
    const char *name;
    uint32_t rows, cols;          /* the array the model was built for */
    uint32_t program_bytes;       /* program.bin */
    uint32_t weights_bytes;       /* weights.bin */
    uint32_t fmap_bytes;          /* the feature-map image the program uses (0: none) */
    uint32_t input_bytes;         /* the inputs' elements, one byte each, [channel][row][col], one input after
                                     another in graph-input order */
    uint32_t input_in_fmap;       /* 1: the program reads the input from the feature-map image, packed */
    uint32_t input_word;          /*    at this word (rows bytes each) of the image, */
    uint32_t input_channels;      /*    channels, */
    uint32_t input_pixels;        /*    pixels (height x width), */
    uint32_t input_banks;         /*    channel banks G (channel c in byte (c mod G) of word (c / G) x pixels) */
    uint32_t outputs;             /* graph outputs, at most HG_MAX_OUTPUTS */
    uint32_t output_bytes[HG_MAX_OUTPUTS];  /* each output's elements, one byte each, in graph-output order */
    uint32_t input_width;         /*    its width in packed pixels */
    uint32_t image[3];            /* the input as hg_run takes it: channels C, height, width ([c][y][x]) */
    uint32_t fold_kernel[2];      /* the host's fold (kernel and stride 1: none): packed channel (ky kw + kx) C + c */
    uint32_t fold_stride[2];      /*    of pixel (y, x) is channel c of input pixel (sy y + ky - top, */
    uint32_t fold_pad[2];         /*    sx x + kx - left): kh kw, sy sx, top left, */
    uint32_t fold_fill;           /*    this byte off the input */
} hg_model;

typedef struct {
    hg_platform *platform;
    uint64_t mem_base, mem_bytes;  /* the device memory window the driver places the images in */
    uint32_t rows, cols;           /* SHAPE */
    uint32_t timeout_us;           /* a run or load that takes longer is HG_ERR_TIMEOUT (default 10 s) */
    int use_irq;                   /* 1: IRQ_ENABLE set, waits return at the interrupt (default 1) */
    const hg_model *model;         /* the loaded model, or NULL */
    uint64_t program_addr, weights_addr, fmap_addr, input_addr, output_addr;
    uint32_t last_cycles;          /* CYCLES after the last load or run */
    char error[192];               /* what went wrong, one line */
} hg_device;

/* Check ID and SHAPE; `mem_base`/`mem_bytes`: device memory the driver may use for the images. */
int hg_init(hg_device *dev, hg_platform *platform, uint64_t mem_base, uint64_t mem_bytes);
/* Copy the images into device memory, set the bases and IO, LOAD the program and wait for DONE. */
int hg_load(hg_device *dev, const hg_model *model, const void *program, const void *weights);
/* One inference: `input` (model->input_bytes: every input) in, START, wait for DONE, every output into `outputs`
 * (the sum of output_bytes, graph-output order). */
int hg_run(hg_device *dev, const void *input, void *outputs);
/* The sum of a model's output_bytes. */
uint32_t hg_output_bytes(const hg_model *model);
const char *hg_error(const hg_device *dev);

#ifdef __cplusplus
}
#endif
#endif

/* hlsgen's SoC firmware (hlsgen.deploy.firmware), in the ROM in place of LiteX's BIOS. At reset it
 * initialises the DRAM with LiteX's liblitedram (as the BIOS does: leveling where the PHY has it, then a
 * memory test), runs the stored test images of images.h through the accelerator and prints, for each,
 * "image I out HEX acc_cycles N soc_cycles M", then "done total_cycles N". In the simulation of
 * `hlsgen deploy --simulate` it then ends the simulator; otherwise it serves the host on the UART
 * (hlsgen.runtime.uart, `hlsgen run DEPLOY --backend uart:PORT`), one command byte at a time:
 *   'I'  identify: the line "hlsgen-id MODEL_ID BOARD_NAME"
 *   'W'  weights (a top that reads them from external memory): WEIGHTS_BYTES bytes follow, a '+' answering
 *        each BLOCK bytes but the last; the answer is 'K'
 *   'R'  run: the input (IN_WORDS little-endian words) follows, a '+' answering each BLOCK bytes but the
 *        last; the answer is 'O', OUT_BYTES output bytes, then the accelerator's and the whole inference's
 *        cycles (32 bits each, little-endian); 'N' in place of 'O' when the weights are not loaded
 *   'T'  the stored images again, as at reset
 * Other bytes (a terminal's keys) are ignored.
 *
 * A top with external memory (its registers at HLSGEN_CTRL_BASE) reads its weights at WEIGHTS_OFFSET of
 * main RAM and keeps its feature maps at FMAP_OFFSET, the input packed into them at INPUT_OFFSET when it
 * has no input stream (INPUT_IN_FMAP); its AXI4 masters reach the DRAM past the CPU's L2 cache, so the
 * firmware writes the cache back before the accelerator reads what the CPU wrote. */
#include <stdint.h>
#include <stdio.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <libbase/uart.h>
#include <system.h>
#ifdef CSR_SDRAM_BASE
#include <liblitedram/sdram.h>
#endif

#include "hlsgen_regs.h"
#include "images.h"

#if INPUT_IN_FMAP
#define IN_BUF ((volatile uint8_t *)(MAIN_RAM_BASE + FMAP_OFFSET + INPUT_OFFSET))
#else
#define IN_BUF ((volatile uint8_t *)(MAIN_RAM_BASE + IN_OFFSET))
#endif
#define OUT_BUF ((volatile uint8_t *)(MAIN_RAM_BASE + OUT_OFFSET))
#define WEIGHTS_BUF ((volatile uint8_t *)(MAIN_RAM_BASE + WEIGHTS_OFFSET))

static int weights_ready = WEIGHTS_AT_RESET;

static uint32_t uptime(void) {
    timer0_uptime_latch_write(1);
    return (uint32_t)timer0_uptime_cycles_read();
}

#ifdef HLSGEN_CTRL_BASE
static uint32_t reg_read(uint32_t offset) { return *(volatile uint32_t *)(HLSGEN_CTRL_BASE + offset); }
static void reg_write(uint32_t offset, uint32_t value) { *(volatile uint32_t *)(HLSGEN_CTRL_BASE + offset) = value; }

/* The accelerator's bases (its images in main RAM), outputs on its stream, no interrupt, the program loaded:
 * 0 when its ID is not hlsgen's. */
static int setup_accelerator(void) {
    uint32_t id = reg_read(HG_REG_ID);
    if (id != HG_ID) {
        printf("hlsgen: the accelerator's ID reads 0x%08lx, not 0x%08lx; halted\n", (unsigned long)id,
               (unsigned long)HG_ID);
        return 0;
    }
    reg_write(HG_REG_WEIGHTS_BASE_LO, MAIN_RAM_BASE + WEIGHTS_OFFSET);
    reg_write(HG_REG_WEIGHTS_BASE_HI, 0);
    reg_write(HG_REG_FMAP_BASE_LO, MAIN_RAM_BASE + FMAP_OFFSET);
    reg_write(HG_REG_FMAP_BASE_HI, 0);
    reg_write(HG_REG_IO, 0);
    reg_write(HG_REG_IRQ_ENABLE, 0);
    reg_write(HG_REG_CONTROL, HG_CONTROL_LOAD);
    while (!(reg_read(HG_REG_CONTROL) & HG_CONTROL_DONE)) {}
    return 1;
}
#endif

/* The input in IN_BUF through the accelerator into OUT_BUF; its cycles (first input to last output beat, or
 * with registers, START to DONE). */
static uint32_t infer(void) {
    uint32_t cycles;
    acc_writer_base_write(MAIN_RAM_BASE + OUT_OFFSET);
    acc_writer_length_write(4 * OUT_WORDS);
    acc_writer_enable_write(1);  /* before the output: a disabled writer drops beats */
    acc_start_write(1);
#if INPUT_IN_FMAP
    flush_l2_cache();  /* the input, written through the L2 cache, into the DRAM the accelerator reads */
#else
    acc_reader_base_write(MAIN_RAM_BASE + IN_OFFSET);
    acc_reader_length_write(4 * IN_WORDS);
    acc_reader_enable_write(1);
#endif
#ifdef HLSGEN_CTRL_BASE
    reg_write(HG_REG_CONTROL, HG_CONTROL_START);
    while (!acc_writer_done_read() || !(reg_read(HG_REG_CONTROL) & HG_CONTROL_DONE)) {}
    cycles = reg_read(HG_REG_CYCLES);
#else
    while (!acc_writer_done_read() || !acc_done_read()) {}
    cycles = acc_cycles_read();
#endif
#if !INPUT_IN_FMAP
    acc_reader_enable_write(0);
#endif
    acc_writer_enable_write(0);
    return cycles;
}

static void run_images(void) {
#if N_IMAGES
    for (int i = 0; i < N_IMAGES && weights_ready; i++) {
        uint32_t t0 = uptime();
        for (int k = 0; k < IN_WORDS; k++) ((volatile uint32_t *)IN_BUF)[k] = images[i][k];
        uint32_t cycles = infer();
        uint8_t out[OUT_BYTES];
        for (int k = 0; k < OUT_BYTES; k++) out[k] = OUT_BUF[k];
        uint32_t t1 = uptime();
        printf("image %d out ", i);
        for (int k = 0; k < OUT_BYTES; k++) printf("%02x", out[k]);
        printf(" acc_cycles %lu soc_cycles %lu\n", (unsigned long)cycles, (unsigned long)(t1 - t0));
    }
#endif
    if (!weights_ready) printf("hlsgen: the weights are not in DRAM yet: the host uploads them ('W')\n");
    printf("done total_cycles %lu\n", (unsigned long)uptime());
}

/* Text for the host, without the '\r' LiteX's console adds after each '\n'. */
static void put_text(const char *s) {
    while (*s) uart_write(*s++);
}

static void put_word(uint32_t v) {
    for (int k = 0; k < 4; k++) uart_write((char)(v >> (8 * k)));
}

/* `bytes` bytes from the host into `to`, a '+' after each BLOCK but the last. */
static void receive(volatile uint8_t *to, uint32_t bytes) {
    for (uint32_t k = 0; k < bytes; k++) {
        to[k] = (uint8_t)uart_read();
        if ((k + 1) % BLOCK == 0 && k + 1 < bytes) uart_write('+');
    }
}

/* 'R': the host's input into IN_BUF, the inference, the answer. */
static void serve_run(void) {
    uint32_t t0 = uptime();
    receive(IN_BUF, 4 * IN_WORDS);
    if (!weights_ready) {
        uart_write('N');
        return;
    }
    uint32_t cycles = infer();
    uart_write('O');
    for (int k = 0; k < OUT_BYTES; k++) uart_write((char)OUT_BUF[k]);
    put_word(cycles);
    put_word(uptime() - t0);
}

/* 'W': the weight image into main RAM, written back from the L2 cache for the accelerator. */
static void serve_weights(void) {
    receive(WEIGHTS_BUF, WEIGHTS_BYTES);
    flush_l2_cache();
    weights_ready = 1;
    uart_write('K');
}

int main(void) {
    uart_init();
    printf("\nhlsgen: " MODEL_NAME " on " BOARD_NAME "\n");
#ifdef CSR_SDRAM_BASE
    if (!sdram_init()) {
        printf("hlsgen: the DRAM failed its initialisation or memory test; halted\n");
        for (;;) {}
    }
#endif
#ifdef HLSGEN_CTRL_BASE
    if (!setup_accelerator()) {
        for (;;) {}
    }
#endif
    run_images();
#if defined(CSR_SIM_FINISH_BASE) && FINISH_AFTER_IMAGES
    while (!uart_txempty_read()) {}
    for (volatile int k = 0; k < 100; k++) {}
    sim_finish_finish_write(1);  /* $finish: the simulator exits */
#endif
    for (;;) {
        char c = uart_read();
        if (c == 'I') put_text("hlsgen-id " MODEL_ID " " BOARD_NAME "\n");
        else if (c == 'R') serve_run();
        else if (c == 'W' && WEIGHTS_BYTES > 0) serve_weights();
        else if (c == 'T') run_images();
    }
    return 0;
}

/* hlsgen's SoC firmware (hlsgen.deploy.firmware), in the ROM in place of LiteX's BIOS. At reset it
 * initialises the DRAM with LiteX's liblitedram (as the BIOS does: leveling where the PHY has it, then a
 * memory test), runs the stored test images of images.h through the accelerator and prints, for each,
 * "image I out HEX acc_cycles N soc_cycles M", then "done total_cycles N". In the simulation of
 * `hlsgen deploy --simulate` it then ends the simulator; otherwise it serves the host on the UART
 * (hlsgen.runtime.uart, `hlsgen run DEPLOY --backend uart:PORT`), one command byte at a time:
 *   'I'  identify: the line "hlsgen-id MODEL_ID BOARD_NAME"
 *   'R'  run: the input (IN_WORDS little-endian words) follows, a '+' answering each BLOCK bytes but the
 *        last; the answer is 'O', OUT_BYTES output bytes, then the accelerator's and the whole inference's
 *        cycles (32 bits each, little-endian)
 *   'T'  the stored images again, as at reset
 * Other bytes (a terminal's keys) are ignored. */
#include <stdint.h>
#include <stdio.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <libbase/uart.h>
#ifdef CSR_SDRAM_BASE
#include <liblitedram/sdram.h>
#endif

#include "images.h"

#define IN_BUF  ((volatile uint8_t *)MAIN_RAM_BASE)
#define OUT_BUF ((volatile uint8_t *)(MAIN_RAM_BASE + 0x10000))

static uint32_t uptime(void) {
    timer0_uptime_latch_write(1);
    return (uint32_t)timer0_uptime_cycles_read();
}

/* The input in IN_BUF through the accelerator into OUT_BUF; its cycles (first input to last output beat). */
static uint32_t infer(void) {
    acc_writer_base_write(MAIN_RAM_BASE + 0x10000);
    acc_writer_length_write(4 * OUT_WORDS);
    acc_writer_enable_write(1);  /* before the output: a disabled writer drops beats */
    acc_start_write(1);
    acc_reader_base_write(MAIN_RAM_BASE);
    acc_reader_length_write(4 * IN_WORDS);
    acc_reader_enable_write(1);
    while (!acc_writer_done_read() || !acc_done_read()) {}
    acc_reader_enable_write(0);
    acc_writer_enable_write(0);
    return acc_cycles_read();
}

static void run_images(void) {
    for (int i = 0; i < N_IMAGES; i++) {
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
    printf("done total_cycles %lu\n", (unsigned long)uptime());
}

/* Text for the host, without the '\r' LiteX's console adds after each '\n'. */
static void put_text(const char *s) {
    while (*s) uart_write(*s++);
}

static void put_word(uint32_t v) {
    for (int k = 0; k < 4; k++) uart_write((char)(v >> (8 * k)));
}

/* 'R': the host's input into IN_BUF, the inference, the answer. */
static void serve_run(void) {
    uint32_t t0 = uptime();
    for (int k = 0; k < 4 * IN_WORDS; k++) {
        IN_BUF[k] = (uint8_t)uart_read();
        if ((k + 1) % BLOCK == 0 && k + 1 < 4 * IN_WORDS) uart_write('+');
    }
    uint32_t cycles = infer();
    uart_write('O');
    for (int k = 0; k < OUT_BYTES; k++) uart_write((char)OUT_BUF[k]);
    put_word(cycles);
    put_word(uptime() - t0);
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
        else if (c == 'T') run_images();
    }
    return 0;
}

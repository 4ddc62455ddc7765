/* hlsgen's SoC firmware (freestanding, no BIOS; hlsgen.deploy.firmware): for each image of images.h, copy
 * it to main RAM, stream it through the accelerator with the DMAs, and print its output bytes and cycles on
 * the UART ("image I out HEX acc_cycles N soc_cycles M"), then "done total_cycles N". In the simulation it
 * then ends the simulator; on a board it waits for a key on the UART and runs the images again.
 * csr.h and mem.h are LiteX's generated headers (addresses only), images.h is rendered by hlsgen. */
#include <stdint.h>
#include "csr.h"
#include "mem.h"
#include "images.h"

#define REG(a) (*(volatile uint32_t *)(uintptr_t)(a))

/* A CSR of `words` 32-bit registers, most significant first (LiteX's csr_data_width=32 layout). */
static void csr_set(uint32_t addr, int words, uint32_t value) {
    for (int i = 0; i < words - 1; i++) REG(addr + 4 * i) = 0;
    REG(addr + 4 * (words - 1)) = value;
}
static uint32_t csr_low(uint32_t addr, int words) { return REG(addr + 4 * (words - 1)); }

static uint32_t uptime(void) {
    REG(CSR_TIMER0_UPTIME_LATCH_ADDR) = 1;
    return csr_low(CSR_TIMER0_UPTIME_CYCLES_ADDR, CSR_TIMER0_UPTIME_CYCLES_SIZE);
}

static void putc_(char c) {
    while (REG(CSR_UART_TXFULL_ADDR)) {}
    REG(CSR_UART_RXTX_ADDR) = (uint8_t)c;
}
static void puts_(const char *s) { while (*s) putc_(*s++); }
static void puthex8(uint32_t v) { const char *h = "0123456789abcdef"; putc_(h[(v >> 4) & 15]); putc_(h[v & 15]); }
static void putdec(uint32_t v) {
    char buf[11]; int n = 0;
    do { buf[n++] = '0' + v % 10; v /= 10; } while (v);
    while (n) putc_(buf[--n]);
}

#define IN_BUF  (MAIN_RAM_BASE)
#define OUT_BUF (MAIN_RAM_BASE + 0x10000)

static void run_images(void) {
    static uint8_t out[OUT_BYTES];
    for (int i = 0; i < N_IMAGES; i++) {
        uint32_t t0 = uptime();
        for (int k = 0; k < IN_WORDS; k++) REG(IN_BUF + 4 * k) = images[i][k];
        csr_set(CSR_ACC_WRITER_BASE_ADDR, CSR_ACC_WRITER_BASE_SIZE, OUT_BUF);
        csr_set(CSR_ACC_WRITER_LENGTH_ADDR, CSR_ACC_WRITER_LENGTH_SIZE, 4 * OUT_WORDS);
        REG(CSR_ACC_WRITER_ENABLE_ADDR) = 1;  /* before the output: a disabled writer drops beats */
        REG(CSR_ACC_START_ADDR) = 1;
        csr_set(CSR_ACC_READER_BASE_ADDR, CSR_ACC_READER_BASE_SIZE, IN_BUF);
        csr_set(CSR_ACC_READER_LENGTH_ADDR, CSR_ACC_READER_LENGTH_SIZE, 4 * IN_WORDS);
        REG(CSR_ACC_READER_ENABLE_ADDR) = 1;
        while (!REG(CSR_ACC_WRITER_DONE_ADDR) || !REG(CSR_ACC_DONE_ADDR)) {}
        REG(CSR_ACC_READER_ENABLE_ADDR) = 0;
        REG(CSR_ACC_WRITER_ENABLE_ADDR) = 0;
        for (int k = 0; k < OUT_BYTES; k++) out[k] = *(volatile uint8_t *)(uintptr_t)(OUT_BUF + k);
        uint32_t t1 = uptime();
        puts_("image "); putdec(i); puts_(" out ");
        for (int k = 0; k < OUT_BYTES; k++) puthex8(out[k]);
        puts_(" acc_cycles "); putdec(csr_low(CSR_ACC_CYCLES_ADDR, CSR_ACC_CYCLES_SIZE));
        puts_(" soc_cycles "); putdec(t1 - t0); putc_('\n');
    }
}

int main(void) {
    puts_("hlsgen: " MODEL_NAME " on " BOARD_NAME "\n");
    for (;;) {
        run_images();
        puts_("done total_cycles "); putdec(uptime()); putc_('\n');
        while (!REG(CSR_UART_TXEMPTY_ADDR)) {}
#ifdef CSR_SIM_FINISH_FINISH_ADDR
        for (volatile int k = 0; k < 100; k++) {}
        REG(CSR_SIM_FINISH_FINISH_ADDR) = 1;  /* $finish: the simulator exits */
#endif
        while (REG(CSR_UART_RXEMPTY_ADDR)) {}  /* a key runs the images again */
        (void)REG(CSR_UART_RXTX_ADDR);
        REG(CSR_UART_EV_PENDING_ADDR) = 2;  /* acknowledge the received byte */
    }
}

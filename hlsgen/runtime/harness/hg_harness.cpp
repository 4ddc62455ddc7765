/* hlsgen's Verilator harness: the target's top (`hlsgen build ... --program external`) Verilated as `Vtop`, with
 * one byte-addressed memory behind its AXI4 masters, an AXI4-Lite master on its control port, and the platform
 * layer of hlsgen_platform.h over both, so the C driver runs against the RTL as it runs on a board.
 * hlsgen.runtime.harness.build_harness compiles it; C++17.
 *
 * The executable's main is this file's. It parses the options, builds and resets the model, then runs a command:
 *
 *   hg_harness [OPTIONS] serve         the line protocol below on stdin/stdout (hlsgen.runtime.harness.HarnessDevice);
 *                                      the default when no application is linked in
 *   hg_harness [OPTIONS] app [ARGS]    int hg_app_main(hg_platform *p, int argc, char **argv) (hg_harness.h) with
 *                                      the executable's name and ARGS; its return value is the exit status. The
 *                                      default when the build links an application (and defines HG_WITH_APP)
 *
 * Options: --mem-bytes N (the memory: addresses 0 to N; default 256M; suffixes K, M, G), --read-latency N (cycles
 * from an AR handshake to the burst's first R beat; default 60), --write-latency N (from a burst's last W beat to
 * its B response; default the read latency, as the performance model charges a store), --mhz F (cycles per
 * microsecond of hg_platform_wait and WAIT; default 200), --lite-timeout N (cycles a register access may take;
 * default 1000), --bytes-per-cycle F (the R channels' sustained rate, the target's external_memory.bytes_per_cycle:
 * a beat whenever that many bytes a cycle have accrued; default 0, a beat every cycle).
 *
 * serve: one command a line, each answered on stdout and flushed:
 *   R <offset>              -> <value>            (a register, decimal)
 *   W <offset> <value>      -> ok
 *   C2D <addr> <n>          then n raw bytes -> ok   (host to device memory, no simulated time)
 *   D2C <addr> <n>          -> n raw bytes
 *   WAIT <us>               -> 1 or 0             (1 as soon as irq is high, 0 after us * mhz cycles without)
 *   CYCLES                  -> <cycles since the reset>
 *   STREAM                  -> <n>, then n raw bytes: what m_axis sent since the last STREAM
 *   QUIT                    (or end of input): exit 0
 * Numbers are decimal or 0x-prefixed hex. Any error (a bad command, an AXI4 access outside the memory, a register
 * that does not answer, $finish) prints one line `error: ...` on stdout (and stderr) and exits with status 1.
 *
 * Ports served (the builder greps the top's port list and defines what it finds): HG_HAS_WEIGHTS_PORT m_axi_*
 * (read only), HG_HAS_FMAP_PORT m_axi_fmap_*, HG_HAS_IO_PORT m_axi_io_*, HG_HAS_S_AXIS (tied idle: inputs go
 * through memory), HG_HAS_M_AXIS (always ready; every beat's bytes are kept for STREAM). */
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "Vtop.h"
#include "hg_harness.h"
#include "verilated.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "a bus's bytes are copied as the host stores them");

namespace {

bool g_serve = false;  // errors also go to stdout, as the protocol's `error:` line

[[noreturn]] void fail(const char *format, ...) {
    char message[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
    if (g_serve) {
        std::printf("error: %s\n", message);
        std::fflush(stdout);
    }
    std::fprintf(stderr, "hg_harness: error: %s\n", message);
    std::exit(1);
}

// A bus signal of any width to and from bytes: Verilator keeps a signal of up to 64 bits in an integer and a
// wider one in 32-bit words, lowest first; either way its bytes are the bus's byte lanes on a little-endian host.
template <class T> void to_signal(T &signal, const uint8_t *bytes) { std::memcpy(&signal, bytes, sizeof(T)); }
template <class T> void from_signal(const T &signal, uint8_t *bytes) { std::memcpy(bytes, &signal, sizeof(T)); }

constexpr unsigned kMaxBusBytes = 64;  // 512-bit data: the widest AXI4 port a target has; its strobes fit 64 bits

struct Memory {
    uint8_t *bytes;
    uint64_t size;
    // calloc of a large block maps zero pages lazily: 256 MiB costs only the pages the run touches.
    explicit Memory(uint64_t n) : bytes(static_cast<uint8_t *>(std::calloc(n, 1))), size(n) {
        if (bytes == nullptr) fail("cannot allocate %" PRIu64 " bytes of device memory", n);
    }
    ~Memory() { std::free(bytes); }
    bool holds(uint64_t addr, uint64_t n) const { return addr <= size && n <= size - addr; }
};

// One AXI4 slave on the shared memory: INCR bursts, `read_latency` cycles from an AR handshake to the burst's
// first R beat then one beat a cycle, any number of reads in flight (answered in order), writes honouring the
// strobes with B `write_latency` cycles after the last W beat. The read and write channels are independent.
// What the slave drives depends on its state only (begin_cycle), never on what the master drives this cycle,
// so the two never form a combinational loop.
class AxiSlave {
public:
    AxiSlave(const char *name, Memory &mem, unsigned bus_bytes, uint64_t read_latency, uint64_t write_latency,
             double rate)
        : name_(name), mem_(mem), bus_(bus_bytes), read_latency_(read_latency), write_latency_(write_latency),
          rate_(rate), credit_(double(bus_bytes)) {
        if (bus_bytes > kMaxBusBytes || (bus_bytes & (bus_bytes - 1)) != 0)
            fail("%s: a %u-byte data bus is not supported", name, bus_bytes);
    }

    // Decide this cycle's R and B beats (valid, data) from the state at the clock edge that began it.
    void begin_cycle(uint64_t now) {
        // R beats at the sustained rate: a beat's bytes of credit earned per beat, up to two beats' worth saved
        // while idle (as hlsgen.rtl.cocotb_model.dram_pauses paces the stream testbench's memory)
        if (rate_ > 0.0) credit_ = std::min(credit_ + rate_, 2.0 * double(bus_));
        rvalid_ = !reads_.empty() && reads_.front().due <= now && (rate_ <= 0.0 || credit_ >= double(bus_));
        if (rvalid_) {
            const Burst &b = reads_.front();
            std::memcpy(rdata_, mem_.bytes + word_of(b, b.done), bus_);
        }
        bvalid_ = !responses_.empty() && responses_.front().due <= now;
    }
    bool rvalid() const { return rvalid_; }
    const uint8_t *rdata() const { return rdata_; }
    unsigned rid() const { return reads_.front().id; }
    bool rlast() const { return reads_.front().done + 1 == reads_.front().beats; }
    bool bvalid() const { return bvalid_; }
    unsigned bid() const { return responses_.front().id; }

    // The handshakes of the cycle (ARREADY, AWREADY and WREADY are always high).
    void read_address(uint64_t addr, unsigned len, unsigned size, unsigned burst, unsigned id, uint64_t now) {
        reads_.push_back(checked("read", addr, len, size, burst, id, now + read_latency_));
    }
    void read_beat() {
        if (rate_ > 0.0) credit_ -= double(bus_);
        if (++reads_.front().done == reads_.front().beats) reads_.pop_front();
    }
    void write_address(uint64_t addr, unsigned len, unsigned size, unsigned burst, unsigned id) {
        writes_.push_back(checked("write", addr, len, size, burst, id, 0));
    }
    // W may come before its AW: beats wait in `data_` until their burst's address has arrived.
    void write_data(const uint8_t *data, uint64_t strobes, bool last, uint64_t now) {
        WriteBeat beat{{}, strobes, last};
        std::memcpy(beat.data, data, bus_);
        data_.push_back(beat);
        while (!writes_.empty() && !data_.empty()) {
            Burst &b = writes_.front();
            const WriteBeat &w = data_.front();
            uint64_t word = word_of(b, b.done);
            for (unsigned lane = 0; lane < bus_; ++lane)
                if (w.strobes >> lane & 1) mem_.bytes[word + lane] = w.data[lane];
            bool final_beat = ++b.done == b.beats;
            if (w.last != final_beat)
                fail("%s: WLAST %s on beat %u of a %u-beat write burst at 0x%" PRIx64, name_, w.last ? "high" : "low",
                     b.done - 1, b.beats, b.addr);
            data_.pop_front();
            if (final_beat) {
                responses_.push_back({b.id, now + write_latency_});
                writes_.pop_front();
            }
        }
    }
    void write_response() { responses_.pop_front(); }

private:
    struct Burst {
        uint64_t addr;
        unsigned beats, size, id;
        uint64_t due;  // reads: the cycle of the first R beat
        unsigned done = 0;
    };
    struct WriteBeat {
        uint8_t data[kMaxBusBytes];
        uint64_t strobes;
        bool last;
    };
    struct Response {
        unsigned id;
        uint64_t due;
    };

    // The bus word holding beat k: beat 0 at the burst's (possibly unaligned) address, then aligned beats.
    uint64_t word_of(const Burst &b, unsigned k) const {
        uint64_t at = k == 0 ? b.addr : (b.addr & ~uint64_t(b.size - 1)) + uint64_t(k) * b.size;
        return at & ~uint64_t(bus_ - 1);
    }

    Burst checked(const char *what, uint64_t addr, unsigned len, unsigned size_log2, unsigned burst, unsigned id,
                  uint64_t due) const {
        Burst b{addr, len + 1, 1u << size_log2, id, due};
        if (burst != 1)
            fail("%s: %s burst at 0x%" PRIx64 " of type %u: only INCR (1) is served", name_, what, addr, burst);
        if (b.size > bus_)
            fail("%s: %s burst at 0x%" PRIx64 " of %u-byte beats on a %u-byte bus", name_, what, addr, b.size, bus_);
        uint64_t first = addr & ~uint64_t(bus_ - 1);
        uint64_t end = word_of(b, b.beats - 1) + bus_;
        if (!mem_.holds(first, end - first))
            fail("%s: %s burst at 0x%" PRIx64 " (%u beats of %u bytes) is outside the memory (0x%" PRIx64 " bytes)",
                 name_, what, addr, b.beats, b.size, mem_.size);
        uint64_t last = (addr & ~uint64_t(b.size - 1)) + uint64_t(b.beats) * b.size - 1;
        if ((addr >> 12) != (last >> 12))
            fail("%s: %s burst at 0x%" PRIx64 " (%u beats of %u bytes) crosses a 4 KiB boundary", name_, what, addr,
                 b.beats, b.size);
        return b;
    }

    const char *name_;
    Memory &mem_;
    unsigned bus_;
    uint64_t read_latency_, write_latency_;
    double rate_, credit_;  // bytes per cycle the R channel sustains (0: a beat every cycle), and earned
    std::deque<Burst> reads_, writes_;
    std::deque<WriteBeat> data_;
    std::deque<Response> responses_;
    bool rvalid_ = false, bvalid_ = false;
    uint8_t rdata_[kMaxBusBytes] = {};
};

struct Options {
    uint64_t mem_bytes = uint64_t(256) << 20;
    uint64_t read_latency = 60;
    int64_t write_latency = -1;  // -1: the read latency
    double bytes_per_cycle = 0.0;  // the R channels' sustained rate (0: a beat every cycle)
    double mhz = 200.0;
    uint64_t lite_timeout = 1000;
};

const char *const kRegisters[16] = {  // hlsgen/rtl/control.py's map, for error messages
    "CONTROL", "ID", "SHAPE", "IRQ_ENABLE", "WEIGHTS_BASE_LO", "WEIGHTS_BASE_HI", "FMAP_BASE_LO", "FMAP_BASE_HI",
    "PROGRAM_BASE_LO", "PROGRAM_BASE_HI", "INPUT_BASE_LO", "INPUT_BASE_HI", "OUTPUT_BASE_LO", "OUTPUT_BASE_HI",
    "IO", "CYCLES"};

}  // namespace

// Each AXI4 master's channels, by the port's name prefix P: what the slave S drives, then the cycle's handshakes.
#define HG_DRIVE_READ(P, S)                                                                                     \
    do {                                                                                                        \
        top_->P##_arready = 1;                                                                                  \
        top_->P##_rvalid = S.rvalid();                                                                          \
        top_->P##_rresp = 0;                                                                                    \
        if (S.rvalid()) {                                                                                       \
            to_signal(top_->P##_rdata, S.rdata());                                                              \
            top_->P##_rid = S.rid();                                                                            \
            top_->P##_rlast = S.rlast();                                                                        \
        }                                                                                                       \
    } while (0)
#define HG_SAMPLE_READ(P, S)                                                                                    \
    do {                                                                                                        \
        if (top_->P##_arvalid)                                                                                  \
            S.read_address(top_->P##_araddr, top_->P##_arlen, top_->P##_arsize, top_->P##_arburst,              \
                           top_->P##_arid, cycles_);                                                            \
        if (S.rvalid() && top_->P##_rready) S.read_beat();                                                      \
    } while (0)
#define HG_DRIVE_WRITE(P, S)                                                                                    \
    do {                                                                                                        \
        top_->P##_awready = 1;                                                                                  \
        top_->P##_wready = 1;                                                                                   \
        top_->P##_bvalid = S.bvalid();                                                                          \
        top_->P##_bresp = 0;                                                                                    \
        if (S.bvalid()) top_->P##_bid = S.bid();                                                                \
    } while (0)
#define HG_SAMPLE_WRITE(P, S)                                                                                   \
    do {                                                                                                        \
        if (top_->P##_awvalid)                                                                                  \
            S.write_address(top_->P##_awaddr, top_->P##_awlen, top_->P##_awsize, top_->P##_awburst,             \
                            top_->P##_awid);                                                                    \
        if (top_->P##_wvalid) {                                                                                 \
            uint8_t data[sizeof(top_->P##_wdata)];                                                              \
            from_signal(top_->P##_wdata, data);                                                                 \
            S.write_data(data, uint64_t(top_->P##_wstrb), top_->P##_wlast, cycles_);                            \
        }                                                                                                       \
        if (S.bvalid() && top_->P##_bready) S.write_response();                                                 \
    } while (0)

class Harness {
public:
    explicit Harness(const Options &o)
        : mem(o.mem_bytes), mhz_(o.mhz), lite_timeout_(o.lite_timeout), context_(new VerilatedContext),
          top_(new Vtop(context_.get(), "top"))
#ifdef HG_HAS_WEIGHTS_PORT
          , weights_("m_axi", mem, sizeof(top_->m_axi_rdata), o.read_latency, 0, o.bytes_per_cycle)
#endif
#ifdef HG_HAS_FMAP_PORT
          , fmap_("m_axi_fmap", mem, sizeof(top_->m_axi_fmap_rdata), o.read_latency, write_latency(o),
                  o.bytes_per_cycle)
#endif
#ifdef HG_HAS_IO_PORT
          , io_("m_axi_io", mem, sizeof(top_->m_axi_io_rdata), o.read_latency, write_latency(o),
                  o.bytes_per_cycle)
#endif
    {
#ifdef HG_HAS_S_AXIS
        top_->s_axis_tvalid = 0;  // inputs go through memory (or the feature-map image)
        top_->s_axis_tdata = 0;
        top_->s_axis_tlast = 0;
#endif
#ifdef HG_HAS_M_AXIS
        top_->m_axis_tready = 1;
#endif
        top_->clk = 0;
        top_->rst = 1;
        top_->eval();
        for (int k = 0; k < 8; ++k) tick();  // a synchronous reset: held for a few edges
        top_->rst = 0;
        cycles_ = 0;
    }
    ~Harness() { top_->final(); }

    Memory mem;

    // One clock cycle: drive what the harness holds, settle the design's outputs, take the cycle's handshakes
    // (valid and ready as they stand just before the edge), then the rising edge.
    void tick() {
        top_->clk = 0;
        drive();
        top_->eval();
        sample();
        top_->clk = 1;
        top_->eval();
        ++cycles_;
        if (context_->gotFinish()) fail("the design called $finish after %" PRIu64 " cycles", cycles_);
    }

    uint32_t read(uint32_t offset) {
        check_register(offset);
        lite_ = Lite{};
        lite_.arvalid = lite_.rready = true;
        lite_.addr = offset;
        finish_access(offset, "read");
        return lite_.rdata;
    }
    void write(uint32_t offset, uint32_t value) {
        check_register(offset);
        lite_ = Lite{};
        lite_.awvalid = lite_.wvalid = lite_.bready = true;
        lite_.addr = offset;
        lite_.wdata = value;
        finish_access(offset, "write");
    }
    // Up to us microseconds of cycles: true as soon as irq is high.
    bool wait(uint64_t us) {
        uint64_t n = uint64_t(std::llround(double(us) * mhz_));
        for (uint64_t k = 0;; ++k) {
            if (top_->irq) return true;
            if (k == n) return false;
            tick();
        }
    }
    uint64_t cycles() const { return cycles_; }
    std::vector<uint8_t> take_stream() { return std::move(stream_); }

private:
    static int64_t write_latency(const Options &o) {
        return o.write_latency < 0 ? int64_t(o.read_latency) : o.write_latency;
    }

    struct Lite {  // the AXI4-Lite master: one access at a time
        bool awvalid = false, wvalid = false, bready = false, arvalid = false, rready = false, done = false;
        uint32_t addr = 0, wdata = 0, rdata = 0, resp = 0;
    };

    static void check_register(uint32_t offset) {
        if (offset % 4 != 0 || offset >= 4 * 16)
            fail("register offset 0x%x: the control port has 16 registers at 0x00 to 0x3c", offset);
    }
    void finish_access(uint32_t offset, const char *what) {
        for (uint64_t n = 0; !lite_.done; ++n) {
            if (n == lite_timeout_)
                fail("register %s (0x%02x): the %s got no answer within %" PRIu64 " cycles", kRegisters[offset / 4],
                     offset, what, lite_timeout_);
            tick();
        }
        if (lite_.resp != 0)
            fail("register %s (0x%02x): the %s answered %s", kRegisters[offset / 4], offset, what,
                 lite_.resp == 2 ? "SLVERR" : lite_.resp == 3 ? "DECERR" : "EXOKAY");
    }

    void drive() {
        top_->s_axi_ctrl_awvalid = lite_.awvalid;
        top_->s_axi_ctrl_awaddr = lite_.addr;
        top_->s_axi_ctrl_wvalid = lite_.wvalid;
        top_->s_axi_ctrl_wdata = lite_.wdata;
        top_->s_axi_ctrl_wstrb = 0xF;
        top_->s_axi_ctrl_bready = lite_.bready;
        top_->s_axi_ctrl_arvalid = lite_.arvalid;
        top_->s_axi_ctrl_araddr = lite_.addr;
        top_->s_axi_ctrl_rready = lite_.rready;
#ifdef HG_HAS_WEIGHTS_PORT
        weights_.begin_cycle(cycles_);
        HG_DRIVE_READ(m_axi, weights_);
#endif
#ifdef HG_HAS_FMAP_PORT
        fmap_.begin_cycle(cycles_);
        HG_DRIVE_READ(m_axi_fmap, fmap_);
        HG_DRIVE_WRITE(m_axi_fmap, fmap_);
#endif
#ifdef HG_HAS_IO_PORT
        io_.begin_cycle(cycles_);
        HG_DRIVE_READ(m_axi_io, io_);
        HG_DRIVE_WRITE(m_axi_io, io_);
#endif
    }

    void sample() {
        if (lite_.awvalid && top_->s_axi_ctrl_awready) lite_.awvalid = false;
        if (lite_.wvalid && top_->s_axi_ctrl_wready) lite_.wvalid = false;
        if (lite_.bready && top_->s_axi_ctrl_bvalid) {
            lite_.bready = false;
            lite_.done = true;
            lite_.resp = top_->s_axi_ctrl_bresp;
        }
        if (lite_.arvalid && top_->s_axi_ctrl_arready) lite_.arvalid = false;
        if (lite_.rready && top_->s_axi_ctrl_rvalid) {
            lite_.rready = false;
            lite_.done = true;
            lite_.rdata = top_->s_axi_ctrl_rdata;
            lite_.resp = top_->s_axi_ctrl_rresp;
        }
        if (top_->rst) return;  // no transfers while the design is in reset
#ifdef HG_HAS_WEIGHTS_PORT
        HG_SAMPLE_READ(m_axi, weights_);
#endif
#ifdef HG_HAS_FMAP_PORT
        HG_SAMPLE_READ(m_axi_fmap, fmap_);
        HG_SAMPLE_WRITE(m_axi_fmap, fmap_);
#endif
#ifdef HG_HAS_IO_PORT
        HG_SAMPLE_READ(m_axi_io, io_);
        HG_SAMPLE_WRITE(m_axi_io, io_);
#endif
#ifdef HG_HAS_M_AXIS
        if (top_->m_axis_tvalid) {
            uint8_t beat[sizeof(top_->m_axis_tdata)];
            from_signal(top_->m_axis_tdata, beat);
            stream_.insert(stream_.end(), beat, beat + sizeof beat);
        }
#endif
    }

    double mhz_;
    uint64_t lite_timeout_;
    uint64_t cycles_ = 0;
    Lite lite_;
    std::vector<uint8_t> stream_;
    std::unique_ptr<VerilatedContext> context_;
    std::unique_ptr<Vtop> top_;
#ifdef HG_HAS_WEIGHTS_PORT
    AxiSlave weights_;
#endif
#ifdef HG_HAS_FMAP_PORT
    AxiSlave fmap_;
#endif
#ifdef HG_HAS_IO_PORT
    AxiSlave io_;
#endif
};

// ---- the platform layer (hlsgen_platform.h) ------------------------------------------------------------------

struct hg_platform {
    Harness *harness;
};

namespace {
hg_platform g_platform{nullptr};
}

extern "C" {

hg_platform *hg_harness_platform(void) { return g_platform.harness != nullptr ? &g_platform : nullptr; }
uint64_t hg_harness_mem_bytes(hg_platform *p) { return p->harness->mem.size; }
uint64_t hg_harness_cycles(hg_platform *p) { return p->harness->cycles(); }

uint32_t hg_platform_read(hg_platform *p, uint32_t offset) { return p->harness->read(offset); }
void hg_platform_write(hg_platform *p, uint32_t offset, uint32_t value) { p->harness->write(offset, value); }

// A CPU writing shared DRAM: the bytes move at once, in no simulated time.
int hg_platform_copy(hg_platform *p, uint64_t device_addr, void *host, size_t bytes, int to_device) {
    Memory &mem = p->harness->mem;
    if (!mem.holds(device_addr, bytes)) return -1;
    if (to_device)
        std::memcpy(mem.bytes + device_addr, host, bytes);
    else
        std::memcpy(host, mem.bytes + device_addr, bytes);
    return 0;
}

int hg_platform_wait(hg_platform *p, uint32_t microseconds) { return p->harness->wait(microseconds) ? 1 : 0; }

}  // extern "C"

// ---- main: options, then serve or app --------------------------------------------------------------------------

namespace {

bool parse_number(const char *text, uint64_t &value) {
    if (text == nullptr || *text == '\0' || *text == '-' || *text == '+') return false;
    char *end = nullptr;
    errno = 0;
    value = std::strtoull(text, &end, 0);
    return errno == 0 && *end == '\0';
}

uint64_t option_number(const char *name, const char *text) {
    std::string digits = text == nullptr ? "" : text;
    uint64_t scale = 1;
    if (!digits.empty()) {
        char suffix = digits.back();
        if (suffix == 'K' || suffix == 'k') scale = uint64_t(1) << 10;
        if (suffix == 'M' || suffix == 'm') scale = uint64_t(1) << 20;
        if (suffix == 'G' || suffix == 'g') scale = uint64_t(1) << 30;
        if (scale != 1) digits.pop_back();
    }
    uint64_t value;
    if (!parse_number(digits.c_str(), value)) fail("%s wants a number, not '%s'", name, text ? text : "");
    return value * scale;
}

std::vector<std::string> words(const char *line) {
    std::vector<std::string> out;
    std::string word;
    for (const char *c = line; *c != '\0'; ++c) {
        if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') {
            if (!word.empty()) out.push_back(word);
            word.clear();
        } else {
            word += *c;
        }
    }
    if (!word.empty()) out.push_back(word);
    return out;
}

void answer(const char *format, ...) {
    va_list args;
    va_start(args, format);
    std::vprintf(format, args);
    va_end(args);
    std::fflush(stdout);
}

int serve(Harness &h) {
    g_serve = true;
    char *line = nullptr;
    size_t capacity = 0;
    while (getline(&line, &capacity, stdin) > 0) {
        std::vector<std::string> w = words(line);
        if (w.empty()) continue;
        const std::string &command = w[0];
        uint64_t a = 0, b = 0;
        auto args = [&](size_t n) {
            if (w.size() != n + 1 || (n > 0 && !parse_number(w[1].c_str(), a)) ||
                (n > 1 && !parse_number(w[2].c_str(), b)))
                fail("%s takes %zu number%s", command.c_str(), n, n == 1 ? "" : "s");
        };
        if (command == "R") {
            args(1);
            answer("%" PRIu32 "\n", h.read(uint32_t(a)));
        } else if (command == "W") {
            args(2);
            if (b > 0xFFFFFFFFu) fail("W: value %" PRIu64 " does not fit 32 bits", b);
            h.write(uint32_t(a), uint32_t(b));
            answer("ok\n");
        } else if (command == "C2D") {
            args(2);
            if (!h.mem.holds(a, b))
                fail("C2D: %" PRIu64 " bytes at 0x%" PRIx64 " are outside the memory (0x%" PRIx64 " bytes)", b, a,
                     h.mem.size);
            if (std::fread(h.mem.bytes + a, 1, b, stdin) != b) fail("C2D: the input ended before %" PRIu64 " bytes", b);
            answer("ok\n");
        } else if (command == "D2C") {
            args(2);
            if (!h.mem.holds(a, b))
                fail("D2C: %" PRIu64 " bytes at 0x%" PRIx64 " are outside the memory (0x%" PRIx64 " bytes)", b, a,
                     h.mem.size);
            std::fwrite(h.mem.bytes + a, 1, b, stdout);
            std::fflush(stdout);
        } else if (command == "WAIT") {
            args(1);
            answer("%d\n", h.wait(a) ? 1 : 0);
        } else if (command == "CYCLES") {
            args(0);
            answer("%" PRIu64 "\n", h.cycles());
        } else if (command == "STREAM") {
            args(0);
            std::vector<uint8_t> bytes = h.take_stream();
            std::printf("%zu\n", bytes.size());
            std::fwrite(bytes.data(), 1, bytes.size(), stdout);
            std::fflush(stdout);
        } else if (command == "QUIT") {
            break;
        } else {
            fail("unknown command '%s' (R, W, C2D, D2C, WAIT, CYCLES, STREAM, QUIT)", command.c_str());
        }
    }
    std::free(line);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    int k = 1;
    for (; k < argc && std::strncmp(argv[k], "--", 2) == 0; ++k) {
        std::string name = argv[k];
        const char *value = k + 1 < argc ? argv[k + 1] : nullptr;
        if (name == "--mem-bytes") o.mem_bytes = option_number("--mem-bytes", value);
        else if (name == "--read-latency") o.read_latency = option_number("--read-latency", value);
        else if (name == "--write-latency") o.write_latency = int64_t(option_number("--write-latency", value));
        else if (name == "--lite-timeout") o.lite_timeout = option_number("--lite-timeout", value);
        else if (name == "--bytes-per-cycle") {
            char *end = nullptr;
            o.bytes_per_cycle = value ? std::strtod(value, &end) : -1.0;
            if (value == nullptr || *end != '\0' || o.bytes_per_cycle < 0.0)
                fail("--bytes-per-cycle wants a number of bytes (0: a beat every cycle)");
        } else if (name == "--mhz") {
            char *end = nullptr;
            o.mhz = value ? std::strtod(value, &end) : 0.0;
            if (value == nullptr || *end != '\0' || !(o.mhz > 0.0)) fail("--mhz wants a positive number");
        } else {
            fail("unknown option %s (--mem-bytes, --read-latency, --write-latency, --bytes-per-cycle, --mhz, --lite-timeout)", argv[k]);
        }
        ++k;
    }
    if (o.read_latency < 1) fail("--read-latency must be at least 1 cycle");
    if (o.mem_bytes == 0 || o.mem_bytes % 4096 != 0) fail("--mem-bytes must be a positive multiple of 4096");
#ifdef HG_WITH_APP
    const char *command = k < argc ? argv[k] : "app";
#else
    const char *command = k < argc ? argv[k] : "serve";
#endif
    if (k < argc) ++k;
    g_serve = std::strcmp(command, "serve") == 0;  // an error while building the model is a protocol error too
    Harness harness(o);
    g_platform.harness = &harness;
    if (std::strcmp(command, "serve") == 0) return serve(harness);
#ifdef HG_WITH_APP
    if (std::strcmp(command, "app") == 0) {
        std::vector<char *> args{argv[0]};
        args.insert(args.end(), argv + k, argv + argc);
        args.push_back(nullptr);
        return hg_app_main(&g_platform, int(args.size()) - 1, args.data());
    }
    fail("unknown command '%s' (serve, app)", command);
#else
    fail("unknown command '%s' (serve; `app` needs an application linked in)", command);
#endif
}

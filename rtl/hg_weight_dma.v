// Weights in external memory (docs/rtl.md, "Weights in external memory"): an AXI4 master read port that
// fetches the running array layer's weight tiles, in the order hg_array_engine loads them, into two tile
// slots; the engine loads a full slot into the PEs' shadow weights (R rows, one per cycle, as from the
// weight ROM) and releases it. The weight image in memory is the weight ROM's words (S slices of C bits),
// from byte address `base` (aligned to a word); a word is BEATS beats of the port (DATA_W = C * S / BEATS),
// lowest bytes first, and the slots keep whole words: a port narrower than a row of the widest weights
// costs the same bytes per tile, and the rows come out of the slots as from the ROM.
//
// Requests run AHEAD tiles ahead of the data (the bursts of the next tile follow those of the last at once,
// as long as fewer than AHEAD tiles wait for their data); the data of a tile past the two slots waits in the
// memory: a beat is taken only when its slot is free (RREADY low otherwise), and a slot is full only when its
// last beat has arrived, so any latency or backpressure delays the engine and never changes a weight. Bursts
// never cross a 4 KiB boundary nor exceed 256 beats.
//
// The tiles of the image's rows flow as one stream (docs/rtl.md): once the requests, then the data, of the
// current row's tiles are done, the walks go on to the next row's (`nx_*`, the layer table's row after the
// current one), while the current row still runs or waits; so the next array row finds its first tile in a
// slot, its read latency paid behind the rows before it (the cycle model's weight_hidden). The slots go
// round the stream: the engine reads and releases the oldest (`ready`: it is full). The walks are
// hg_weight_tiles; outside the image's rows (`running` low) they start over: the first row of an image
// fetches its tiles when it starts.
`default_nettype none
module hg_weight_dma #(
    parameter integer R = 4,
    parameter integer C = 4,
    parameter integer W_W = 8,
    parameter integer WB_W = 4,
    parameter integer S = 8,             // slices per word
    parameter integer BEATS = 1,         // beats per word: a power of two
    parameter integer WSA_W = 12,        // slice addresses of the weight image
    parameter integer CNT_W = 10,
    parameter integer AXI_AW = 32,
    parameter integer TILE_WORDS = 16,   // words a slot holds: a power of two, at least a tile's words
    parameter integer AHEAD = 2,         // tiles requested ahead of the data: enough to cover the read latency
    // derived
    parameter integer WORD = C * S,
    parameter integer DATA_W = WORD / BEATS,
    parameter integer SL_W = (S > 1) ? $clog2(S) : 1,
    parameter integer TW_W = (TILE_WORDS > 1) ? $clog2(TILE_WORDS) : 1,
    parameter integer LG_B = $clog2(DATA_W / 8),  // bytes per beat
    parameter integer LG_K = $clog2(BEATS),       // beats per word
    parameter integer K_W = (BEATS > 1) ? LG_K : 1,
    parameter integer AH_W = $clog2(AHEAD + 1)
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                running,      // the image's rows run
    input  wire                start,        // a row of the layer table starts (cfg_* is its configuration)
    input  wire                advance,      // the row ends: the table's cursor moves to the next row
    input  wire                cfg_ext,      // the current row streams its weights (an array row)
    input  wire [WSA_W-1:0]    cfg_w_base,
    input  wire [WB_W-1:0]     cfg_w_bits,
    input  wire [CNT_W-1:0]    cfg_tr,
    input  wire [CNT_W-1:0]    cfg_tc,
    input  wire [CNT_W-1:0]    cfg_ts,
    input  wire                nx_ext,       // the next row is one of the image's and streams its weights
    input  wire [WSA_W-1:0]    nx_w_base,
    input  wire [WB_W-1:0]     nx_w_bits,
    input  wire [CNT_W-1:0]    nx_tr,
    input  wire [CNT_W-1:0]    nx_tc,
    input  wire [CNT_W-1:0]    nx_ts,
    input  wire [AXI_AW-1:0]   base,
    // AXI4 read address and data channels (one ID: the data comes back in order)
    output wire                m_axi_arid,
    output wire [AXI_AW-1:0]   m_axi_araddr,
    output wire [7:0]          m_axi_arlen,
    output wire [2:0]          m_axi_arsize,
    output wire [1:0]          m_axi_arburst,
    output wire                m_axi_arvalid,
    input  wire                m_axi_arready,
    input  wire                m_axi_rid,
    input  wire [DATA_W-1:0]   m_axi_rdata,
    input  wire [1:0]          m_axi_rresp,
    input  wire                m_axi_rlast,
    input  wire                m_axi_rvalid,
    output wire                m_axi_rready,
    // the engine: it reads the oldest slot, once full, and releases it
    output wire                ready,          // the oldest slot holds its tile
    input  wire                release_slot,   // the engine has read the oldest slot
    input  wire [WSA_W-1:0]    rd_addr,        // a row's first slice, in the whole image
    output wire [C*W_W-1:0]    rd_data         // two cycles later, sign-extended (hg_weight_row)
);
    localparam integer WD_W = WSA_W - SL_W;   // word addresses of the image
    localparam [12:0] PAGE = 13'd4096;
    localparam [31:0] R32 = R;
    localparam [31:0] LAST32 = BEATS - 1;
    localparam [K_W-1:0] LAST_BEAT = LAST32[K_W-1:0];
    localparam [31:0] MAX32 = 256 / BEATS;
    localparam [12:0] MAX_WORDS = MAX32[12:0];

    // ---- a tile's words ----------------------------------------------------------------------------------
    wire [WSA_W-1:0] a_slice, b_slice;   // the walks over the rows' tiles: a requests them, b takes their data
    wire [WB_W-1:0] a_bits, b_bits;
    wire a_more, b_more;
    wire [WSA_W+31:0] a_span = R32 * {{(32-WB_W){1'b0}}, a_bits} - 1;   // slices after the first
    wire [WSA_W+31:0] b_span = R32 * {{(32-WB_W){1'b0}}, b_bits} - 1;
    wire [WSA_W-1:0] a_end = a_slice + a_span[WSA_W-1:0];
    wire [WSA_W-1:0] b_end = b_slice + b_span[WSA_W-1:0];
    wire [WD_W-1:0] a_first = a_slice[WSA_W-1:SL_W], b_first = b_slice[WSA_W-1:SL_W];
    wire [WD_W-1:0] a_words = a_end[WSA_W-1:SL_W] - a_first + 1'b1;
    wire [WD_W-1:0] b_last = b_end[WSA_W-1:SL_W] - b_first;

    // ---- requests: whole words (a page boundary is a word boundary: `base` is aligned to a word) ------------
    reg             ar_busy;    // a tile's bursts are being requested
    reg [WD_W-1:0]  ar_word, ar_left;
    reg [AH_W-1:0]  ahead;      // tiles fully requested, not yet fully received
    localparam [AH_W-1:0] AHEAD_MAX = AHEAD[AH_W-1:0];
    wire a_take = !ar_busy && a_more && ahead != AHEAD_MAX;
    wire [AXI_AW-1:0] word_addr = {{(AXI_AW-WD_W){1'b0}}, ar_word} << (LG_B + LG_K);
    assign m_axi_araddr = base + word_addr;
    wire [12:0] page_left = (PAGE - {1'b0, m_axi_araddr[11:0]}) >> (LG_B + LG_K);   // words
    wire [12:0] burst_max = page_left < MAX_WORDS ? page_left : MAX_WORDS;            // AXI4: 256 beats at most
    wire [WD_W+12:0] left_wide = {13'd0, ar_left};
    wire [WD_W+12:0] burst = left_wide < {{WD_W{1'b0}}, burst_max} ? left_wide : {{WD_W{1'b0}}, burst_max};
    wire [WD_W+12:0] burst_1 = (burst << LG_K) - 1'b1;   // beats
    assign m_axi_arlen = burst_1[7:0];
    assign m_axi_arsize = LG_B[2:0];
    assign m_axi_arburst = 2'b01;          // INCR
    assign m_axi_arid = 1'b0;
    assign m_axi_arvalid = ar_busy;
    wire ar_fire = m_axi_arvalid && m_axi_arready;
    wire ar_tile_done = ar_fire && left_wide == burst;

    // ---- data: beats into words into the slots ------------------------------------------------------------
    reg [WORD-1:0]   mem [0:2*TILE_WORDS-1];
    reg [1:0]        full;
    reg              rx_slot, rel_slot;
    assign ready = full[rel_slot ^ release_slot];   // the slot after the oldest while that one is released
    reg [WD_W-1:0]   rx_word;
    reg [K_W-1:0]    rx_beat;
    reg [WD_W-1:0]   slot_base [0:1];
    assign m_axi_rready = b_more && !full[rx_slot];
    wire r_fire = m_axi_rvalid && m_axi_rready;
    wire word_in = r_fire && rx_beat == LAST_BEAT;
    wire rx_tile_done = word_in && rx_word == b_last;
    wire [WORD-1:0] rx_data;
    generate
        if (BEATS > 1) begin : g_beats
            reg [WORD-DATA_W-1:0] earlier;   // the word's earlier beats
            assign rx_data = {m_axi_rdata, earlier};
            always @(posedge clk) if (r_fire) earlier <= rx_data[WORD-1:DATA_W];
        end else begin : g_beat
            assign rx_data = m_axi_rdata;
        end
    endgenerate

    hg_weight_tiles #(.R(R), .WB_W(WB_W), .WSA_W(WSA_W), .CNT_W(CNT_W)) request_tiles (
        .clk(clk), .rst(rst), .running(running), .start(start), .advance(advance), .cfg_ext(cfg_ext),
        .cfg_w_base(cfg_w_base), .cfg_w_bits(cfg_w_bits), .cfg_tr(cfg_tr), .cfg_tc(cfg_tc), .cfg_ts(cfg_ts),
        .nx_ext(nx_ext), .nx_w_base(nx_w_base), .nx_w_bits(nx_w_bits), .nx_tr(nx_tr), .nx_tc(nx_tc), .nx_ts(nx_ts),
        .step(a_take), .slice(a_slice), .bits(a_bits), .more(a_more));
    hg_weight_tiles #(.R(R), .WB_W(WB_W), .WSA_W(WSA_W), .CNT_W(CNT_W)) data_tiles (
        .clk(clk), .rst(rst), .running(running), .start(start), .advance(advance), .cfg_ext(cfg_ext),
        .cfg_w_base(cfg_w_base), .cfg_w_bits(cfg_w_bits), .cfg_tr(cfg_tr), .cfg_tc(cfg_tc), .cfg_ts(cfg_ts),
        .nx_ext(nx_ext), .nx_w_base(nx_w_base), .nx_w_bits(nx_w_bits), .nx_tr(nx_tr), .nx_tc(nx_tc), .nx_ts(nx_ts),
        .step(rx_tile_done), .slice(b_slice), .bits(b_bits), .more(b_more));

    always @(posedge clk) begin
        if (rst) begin
            ar_busy <= 1'b0;
            ahead <= {AH_W{1'b0}};
            full <= 2'b00;
            rx_slot <= 1'b0;
            rel_slot <= 1'b0;
            rx_word <= {WD_W{1'b0}};
            rx_beat <= {K_W{1'b0}};
        end else begin
            if (a_take) begin
                ar_busy <= 1'b1;
                ar_word <= a_first;
                ar_left <= a_words;
            end else if (ar_fire) begin
                ar_word <= ar_word + burst[WD_W-1:0];
                ar_left <= ar_left - burst[WD_W-1:0];
                if (ar_tile_done) ar_busy <= 1'b0;
            end
            ahead <= ahead + {{(AH_W-1){1'b0}}, ar_tile_done} - {{(AH_W-1){1'b0}}, rx_tile_done};
            if (r_fire) rx_beat <= rx_beat == LAST_BEAT ? {K_W{1'b0}} : rx_beat + 1'b1;
            if (word_in) begin
                mem[{rx_slot, rx_word[TW_W-1:0]}] <= rx_data;
                rx_word <= rx_tile_done ? {WD_W{1'b0}} : rx_word + 1'b1;
            end
            if (rx_tile_done) begin
                full[rx_slot] <= 1'b1;
                slot_base[rx_slot] <= b_first;
                rx_slot <= !rx_slot;
            end
            if (release_slot) begin
                full[rel_slot] <= 1'b0;
                rel_slot <= !rel_slot;
            end
        end
    end

    // ---- rows for the engine: the word pair a row may straddle, relative to its slot's first word ----------
    wire [WD_W-1:0] rd_word = rd_addr[WSA_W-1:SL_W] - slot_base[rel_slot];
    wire [TW_W-1:0] rd_low = rd_word[TW_W-1:0];
    wire [TW_W-1:0] rd_high = rd_low + 1'b1;   // wraps within the slot when the row ends in its last word
    // registered once more after the memory, as in hg_weight_rom: two cycles of latency
    reg  [WORD-1:0]   low, high, low_2, high_2;
    reg  [SL_W-1:0]   first, first_2;
    reg  [WB_W-1:0]   bits_1, bits_2;
    always @(posedge clk) begin
        low <= mem[{rel_slot, rd_low}];
        high <= mem[{rel_slot, rd_high}];
        first <= rd_addr[SL_W-1:0];
        bits_1 <= cfg_w_bits;
        {low_2, high_2, first_2, bits_2} <= {low, high, first, bits_1};
    end

    hg_weight_row #(.C(C), .W_W(W_W), .WB_W(WB_W), .S(S)) row (
        .low(low_2), .high(high_2), .first(first_2), .bits(bits_2), .data(rd_data));

    // one ID and whole bursts: the data's ID, response and last flag say nothing the beat count does not
    wire unused = ^{m_axi_rid, m_axi_rresp, m_axi_rlast, a_span[WSA_W+31:WSA_W], b_span[WSA_W+31:WSA_W], burst_1[WD_W+12:8],
                    rd_word[WD_W-1:TW_W], rx_word[WD_W-1:TW_W], a_end[SL_W-1:0], b_end[SL_W-1:0]};
endmodule
`default_nettype wire

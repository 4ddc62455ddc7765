// Feature maps in external memory (docs/rtl.md, "Feature maps in external memory"): an AXI4 master that runs
// one move of the layer program between the feature-map image in DRAM and the activation memory. A move is
// `segments` runs (a map's channel blocks) of `seg_words` words; run s starts at image word
// dram_word + s * dram_stride and at on-chip word buf_base + s * buf_stride. A word is one activation-memory
// word (R bytes, byte j = bank j) at byte address base + word * R, BPW beats of the port (BPW >= 1: a port
// wider than a word is refused by the program compiler), lowest bytes first.
//
// Load: the read bursts are all requested at once (the memory's read latency is paid once per move, as the
// cycle model charges it) and every word is written into the memory the cycle after its last beat (RREADY
// stays high: the memory's write port is the DMA's alone during a move); a map read by a depthwise layer gets
// the same word in the depthwise window memory, at its row pitch there, as the writer would write it. Store: the words are read one a
// cycle into a small FIFO that feeds the W channel, the write bursts follow the same 4 KiB rule as the reads,
// and `done` waits for every write response. Backpressure on any channel only delays a move.
`default_nettype none
module hg_fmap_dma #(
    parameter integer R = 4,
    parameter integer C = 4,
    parameter integer D_W = 8,
    parameter integer DATA_W = 32,       // AXI4 data: a word's bits or a power-of-two fraction of them
    parameter integer ADDR_W = 12,
    parameter integer DIM_W = 8,
    parameter integer WORD_W = 16,       // word addresses and counts of the image
    parameter integer SEG_W = 8,
    parameter integer AXI_AW = 32,
    parameter integer FIFO = 4,          // words read ahead of the W channel (a power of two)
    // derived
    parameter integer WORD = R * D_W,
    parameter integer BPW = WORD / DATA_W,
    parameter integer K_W = (BPW > 1) ? $clog2(BPW) : 1,
    parameter integer LG_R = $clog2(WORD / 8),
    parameter integer LG_B = $clog2(DATA_W / 8),
    parameter integer F_W = $clog2(FIFO)
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                start,        // a move starts (its configuration is stable until done)
    input  wire                cfg_store,    // 0: DRAM to chip, 1: chip to DRAM
    input  wire [SEG_W-1:0]    cfg_segments,
    input  wire [WORD_W-1:0]   cfg_seg_words,
    input  wire [WORD_W-1:0]   cfg_dram_word,
    input  wire [WORD_W-1:0]   cfg_dram_stride,
    input  wire [ADDR_W-1:0]   cfg_buf_base,
    input  wire [ADDR_W-1:0]   cfg_buf_stride,
    input  wire                cfg_dw,       // a load into a depthwise layer's input: copy to its window
    input  wire [ADDR_W-1:0]   cfg_dw_base,
    input  wire [DIM_W-1:0]    cfg_dw_width,  // the buffer's rows (words) and their pitch in the window memory,
    input  wire [DIM_W-1:0]    cfg_dw_pitch,  // its segments' distance there (hlsgen/hw/window_banks.py)
    input  wire [ADDR_W-1:0]   cfg_dw_stride,
    input  wire [AXI_AW-1:0]   base,         // the feature-map image's byte address (aligned to a word)
    output reg                 done,         // one cycle: the move is over
    // the activation memory: a whole word written, or read (its data one cycle after the address)
    output reg                 wr_en,
    output reg  [ADDR_W-1:0]   wr_addr,
    output reg  [WORD-1:0]     wr_data,
    output reg                 dw_en,
    output reg  [ADDR_W-1:0]   dw_addr,
    output reg  [C*D_W-1:0]    dw_data,
    output wire [ADDR_W-1:0]   rd_addr,
    input  wire [WORD-1:0]     rd_data,
    // AXI4 (one ID: everything in order)
    output wire                m_axi_awid,
    output wire [AXI_AW-1:0]   m_axi_awaddr,
    output wire [7:0]          m_axi_awlen,
    output wire [2:0]          m_axi_awsize,
    output wire [1:0]          m_axi_awburst,
    output wire                m_axi_awvalid,
    input  wire                m_axi_awready,
    output wire [DATA_W-1:0]   m_axi_wdata,
    output wire [DATA_W/8-1:0] m_axi_wstrb,
    output wire                m_axi_wlast,
    output wire                m_axi_wvalid,
    input  wire                m_axi_wready,
    input  wire                m_axi_bid,
    input  wire [1:0]          m_axi_bresp,
    input  wire                m_axi_bvalid,
    output wire                m_axi_bready,
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
    output wire                m_axi_rready
);
    localparam [31:0] LAST32 = BPW - 1;
    localparam [K_W-1:0] LAST_BEAT = LAST32[K_W-1:0];
    localparam [31:0] FIFO32 = FIFO;
    reg busy, store;

    // ---- requests: the read bursts of a load, the write bursts of a store -----------------------------------
    wire [AXI_AW-1:0] req_addr;
    wire [8:0] req_beats;
    wire req_more, ar_fire, aw_fire;
    hg_fmap_bursts #(.AXI_AW(AXI_AW), .WORD_W(WORD_W), .SEG_W(SEG_W), .LG_R(LG_R), .LG_B(LG_B)) requests (
        .clk(clk), .rst(rst), .init(start), .step(ar_fire || aw_fire), .cfg_segments(cfg_segments),
        .cfg_seg_words(cfg_seg_words), .cfg_dram_word(cfg_dram_word), .cfg_dram_stride(cfg_dram_stride),
        .base(base), .addr(req_addr), .beats(req_beats), .more(req_more));
    wire [8:0] req_len = req_beats - 1'b1;
    assign m_axi_arvalid = busy && !store && req_more;
    assign m_axi_awvalid = busy && store && req_more;
    assign m_axi_araddr = req_addr;
    assign m_axi_awaddr = req_addr;
    assign m_axi_arlen = req_len[7:0];
    assign m_axi_awlen = req_len[7:0];
    assign m_axi_arsize = LG_B[2:0];
    assign m_axi_awsize = LG_B[2:0];
    assign m_axi_arburst = 2'b01;   // INCR
    assign m_axi_awburst = 2'b01;
    assign m_axi_arid = 1'b0;
    assign m_axi_awid = 1'b0;
    assign ar_fire = m_axi_arvalid && m_axi_arready;
    assign aw_fire = m_axi_awvalid && m_axi_awready;

    // ---- the on-chip words: written by a load as they arrive, read by a store into the FIFO ----------------
    wire [ADDR_W-1:0] chip_addr;
    wire chip_more, word_in, rd_issue;
    hg_fmap_words #(.ADDR_W(ADDR_W), .WORD_W(WORD_W), .SEG_W(SEG_W)) chip (
        .clk(clk), .rst(rst), .init(start), .step(word_in || rd_issue), .cfg_segments(cfg_segments),
        .cfg_seg_words(cfg_seg_words), .cfg_buf_base(cfg_buf_base), .cfg_buf_stride(cfg_buf_stride),
        .addr(chip_addr), .more(chip_more));

    // ---- load: beats into words into the memory ------------------------------------------------------------
    assign m_axi_rready = busy && !store;
    wire r_fire = m_axi_rvalid && m_axi_rready;
    reg  [K_W-1:0] r_beat;
    wire [WORD-1:0] word;
    generate
        if (BPW > 1) begin : g_beats
            reg [WORD-DATA_W-1:0] low;   // the word's earlier beats
            assign word = {m_axi_rdata, low};
            always @(posedge clk) if (r_fire) low <= word[WORD-1:DATA_W];
        end else begin : g_beat
            assign word = m_axi_rdata;
        end
    endgenerate
    assign word_in = r_fire && r_beat == LAST_BEAT;

    // the same word's place in the window memory: segments of whole rows, each row at the pitch
    reg [ADDR_W-1:0] dw_seg, dw_row;
    reg [DIM_W-1:0]  dw_col;
    reg [WORD_W-1:0] dw_left;   // words of the segment after this one
    wire [DIM_W+ADDR_W-1:0] dw_col_w = {{ADDR_W{1'b0}}, dw_col};
    wire [DIM_W+ADDR_W-1:0] dw_pitch_w = {{ADDR_W{1'b0}}, cfg_dw_pitch};
    wire unused_dw = ^{dw_col_w[DIM_W+ADDR_W-1:ADDR_W], dw_pitch_w[DIM_W+ADDR_W-1:ADDR_W]};
    always @(posedge clk) begin
        wr_en <= !rst && word_in;
        wr_addr <= chip_addr;
        wr_data <= word;
        dw_en <= !rst && word_in && cfg_dw;
        dw_addr <= dw_row + dw_col_w[ADDR_W-1:0];
        dw_data <= word[C*D_W-1:0];
        if (start) begin
            {dw_seg, dw_row, dw_col, dw_left} <= {cfg_dw_base, cfg_dw_base, {DIM_W{1'b0}}, cfg_seg_words - 1'b1};
        end else if (word_in) begin
            if (dw_left == {WORD_W{1'b0}}) begin
                {dw_seg, dw_row} <= {dw_seg + cfg_dw_stride, dw_seg + cfg_dw_stride};
                {dw_col, dw_left} <= {{DIM_W{1'b0}}, cfg_seg_words - 1'b1};
            end else begin
                dw_left <= dw_left - 1'b1;
                if (dw_col == cfg_dw_width - 1'b1) {dw_col, dw_row} <= {{DIM_W{1'b0}}, dw_row + dw_pitch_w[ADDR_W-1:0]};
                else dw_col <= dw_col + 1'b1;
            end
        end
    end

    // ---- store: words through the FIFO to the W channel, bursts as requested, then every response ----------
    reg  [WORD-1:0] fifo [0:FIFO-1];
    reg  [F_W:0]    f_wr, f_rd;
    reg             rd_pending;   // a word read last cycle: its data is on rd_data now
    reg  [K_W-1:0]  w_beat;
    reg  [8:0]      w_in_burst;
    wire [F_W:0]    f_used = f_wr - f_rd + {{F_W{1'b0}}, rd_pending};
    assign rd_issue = busy && store && chip_more && f_used < FIFO32[F_W:0];
    assign rd_addr = chip_addr;

    wire [AXI_AW-1:0] unused_w_addr;
    wire [8:0] w_beats;
    wire w_more;
    wire w_fire = m_axi_wvalid && m_axi_wready;
    hg_fmap_bursts #(.AXI_AW(AXI_AW), .WORD_W(WORD_W), .SEG_W(SEG_W), .LG_R(LG_R), .LG_B(LG_B)) writes (
        .clk(clk), .rst(rst), .init(start), .step(w_fire && m_axi_wlast), .cfg_segments(cfg_segments),
        .cfg_seg_words(cfg_seg_words), .cfg_dram_word(cfg_dram_word), .cfg_dram_stride(cfg_dram_stride),
        .base(base), .addr(unused_w_addr), .beats(w_beats), .more(w_more));
    wire [WORD-1:0] head = fifo[f_rd[F_W-1:0]];
    assign m_axi_wvalid = busy && store && f_wr != f_rd;
    generate
        if (BPW > 1) begin : g_w_beats
            assign m_axi_wdata = head[w_beat * DATA_W +: DATA_W];
        end else begin : g_w_beat
            assign m_axi_wdata = head;
        end
    endgenerate
    assign m_axi_wstrb = {DATA_W/8{1'b1}};
    assign m_axi_wlast = w_in_burst == w_beats - 1'b1;

    reg [WORD_W+SEG_W:0] outstanding;   // write bursts requested, not yet answered
    assign m_axi_bready = 1'b1;
    wire b_fire = m_axi_bvalid && m_axi_bready;
    wire finished = busy && (store ? !req_more && !w_more && outstanding == 0 && !aw_fire : !chip_more);

    always @(posedge clk) begin
        done <= !rst && finished;
        if (rst || start) begin
            busy <= !rst;
            store <= cfg_store;
            r_beat <= {K_W{1'b0}};
            f_wr <= {(F_W+1){1'b0}};
            f_rd <= {(F_W+1){1'b0}};
            rd_pending <= 1'b0;
            w_beat <= {K_W{1'b0}};
            w_in_burst <= 9'd0;
            outstanding <= {(WORD_W+SEG_W+1){1'b0}};
        end else begin
            if (finished) busy <= 1'b0;
            if (r_fire) r_beat <= r_beat == LAST_BEAT ? {K_W{1'b0}} : r_beat + 1'b1;
            rd_pending <= rd_issue;
            if (rd_pending) begin
                fifo[f_wr[F_W-1:0]] <= rd_data;
                f_wr <= f_wr + 1'b1;
            end
            if (w_fire) begin
                w_beat <= w_beat == LAST_BEAT ? {K_W{1'b0}} : w_beat + 1'b1;
                if (w_beat == LAST_BEAT) f_rd <= f_rd + 1'b1;
                w_in_burst <= m_axi_wlast ? 9'd0 : w_in_burst + 1'b1;
            end
            outstanding <= outstanding + {{(WORD_W+SEG_W){1'b0}}, aw_fire} - {{(WORD_W+SEG_W){1'b0}}, b_fire};
        end
    end

    // one ID, whole bursts, an OKAY-only memory: IDs, responses and the last flag say nothing the counts do not
    wire unused = ^{m_axi_rid, m_axi_rresp, m_axi_rlast, m_axi_bid, m_axi_bresp, req_len[8], unused_w_addr};
endmodule
`default_nettype wire

// Loads a layer program from its image in external memory into the design's tables (docs/rtl.md, "The
// program in external memory"; the image is hlsgen/rtl/program_image.py's). On `load` it reads the header
// (HDR_BEATS beats: 32-bit words, word 1 + t holding the entries of table t), then table after table every
// entry, one INCR burst of 2^BEATS_LG[t] beats each (beat 0 holds the entry's lowest bits), and writes the
// entry into table t the cycle after its last beat; `loaded` for a cycle after the last entry. Entries sit at
// offsets that are multiples of their own size (a power of two, at most SLOT bytes) and `base` is aligned to
// SLOT, so no burst crosses a 4 KiB page (an empty table takes no room: the next one's first entry is aligned
// to its own size). One burst is in flight at a time: a load is paid once per model.
`default_nettype none
module hg_program_loader #(
    parameter integer DATA_W = 128,
    parameter integer TABLES = 1,
    parameter [4*TABLES-1:0] BEATS_LG = 0,  // table t's entry: 2^BEATS_LG[4t +: 4] beats
    parameter integer HDR_BEATS = 4,        // the header: a power of two of beats, at least 64 bits
    parameter integer ENTRY_W = 64,         // the widest entry (table words are its low bits)
    parameter integer SLOT_BEATS = 4,       // the largest entry (or the header), in beats
    parameter integer ENTRY_AW = 8,         // entry address bits of the deepest table
    parameter integer AXI_AW = 32
) (
    input  wire                     clk,
    input  wire                     rst,
    input  wire                     load,
    input  wire [AXI_AW-1:0]        base,
    output reg                      loaded,
    output wire                     busy,      // from load to loaded: the loader owns the read channels
    output reg  [HDR_BEATS*DATA_W-1:0] header,
    output reg  [TABLES-1:0]        wr_en,     // one-hot: the table written
    output reg  [ENTRY_AW-1:0]      wr_addr,
    output wire [ENTRY_W-1:0]       wr_data,
    output wire [AXI_AW-1:0]        m_axi_araddr,
    output wire [7:0]               m_axi_arlen,
    output wire [2:0]               m_axi_arsize,
    output reg                      m_axi_arvalid,
    input  wire                     m_axi_arready,
    input  wire [DATA_W-1:0]        m_axi_rdata,
    input  wire                     m_axi_rlast,
    input  wire                     m_axi_rvalid,
    output wire                     m_axi_rready
);
    localparam integer SLOT_W = SLOT_BEATS * DATA_W;
    localparam integer BEAT_BYTES = DATA_W / 8;
    localparam integer T_W = (TABLES > 1) ? $clog2(TABLES + 1) : 1;
    localparam [31:0] LAST32 = TABLES - 1, HDR_LEN32 = HDR_BEATS - 1, SIZE32 = $clog2(BEAT_BYTES);
    localparam [T_W-1:0] LAST_TABLE = LAST32[T_W-1:0];
    localparam [TABLES-1:0] ONE = 1;
    localparam [1:0] S_IDLE = 2'd0, S_READ = 2'd1, S_WRITE = 2'd2, S_NEXT = 2'd3;

    reg [1:0] state;
    reg header_phase;                     // the burst in flight is the header's
    reg [T_W-1:0] table_i;
    reg [31:0] entry, offset;             // the entry of table_i being read; its byte offset from base
    reg [7:0] beat_i;
    reg [SLOT_W-1:0] assembled;
    localparam integer LG_W = 4;          // a field of BEATS_LG
    wire [LG_W-1:0] lg = BEATS_LG[LG_W * table_i +: LG_W];
    wire [31:0] count_word = {{(32 - T_W){1'b0}}, table_i} + 32'd1;   // table t's count: header word 1 + t
    wire [31:0] count = header[32 * count_word +: 32];
    wire [7:0] entry_len = (8'd1 << lg) - 8'd1;
    wire [31:0] entry_bytes = header_phase ? HDR_BEATS * BEAT_BYTES : BEAT_BYTES << lg;
    wire [31:0] aligned = (offset + entry_bytes - 1) & ~(entry_bytes - 1);
    wire beat = m_axi_rvalid && m_axi_rready;

    assign busy = state != S_IDLE;
    assign m_axi_araddr = base + offset[AXI_AW-1:0];
    assign m_axi_arlen = header_phase ? HDR_LEN32[7:0] : entry_len;
    assign m_axi_arsize = SIZE32[2:0];
    assign m_axi_rready = state == S_READ && !m_axi_arvalid;
    assign wr_data = assembled[ENTRY_W-1:0];
    wire unused = ^assembled;   // bits past the widest entry (the header's slot)

    always @(posedge clk) begin
        loaded <= 1'b0;
        wr_en <= {TABLES{1'b0}};
        if (rst) begin
            state <= S_IDLE;
            m_axi_arvalid <= 1'b0;
        end else begin
            case (state)
                S_IDLE: if (load) begin
                    state <= S_READ;
                    header_phase <= 1'b1;
                    offset <= 32'd0;
                    beat_i <= 8'd0;
                    m_axi_arvalid <= 1'b1;
                end
                S_READ: begin
                    if (m_axi_arvalid && m_axi_arready) m_axi_arvalid <= 1'b0;
                    if (beat) begin
                        assembled[beat_i * DATA_W +: DATA_W] <= m_axi_rdata;
                        beat_i <= m_axi_rlast ? 8'd0 : beat_i + 8'd1;
                        if (m_axi_rlast) begin
                            offset <= offset + entry_bytes;
                            state <= header_phase ? S_NEXT : S_WRITE;
                        end
                    end
                end
                S_WRITE: begin
                    wr_en <= ONE << table_i;
                    wr_addr <= entry[ENTRY_AW-1:0];
                    entry <= entry + 1;
                    state <= S_NEXT;
                end
                default: begin  // S_NEXT: the next entry, or the next table with any, or the end
                    if (header_phase) begin
                        header <= assembled[HDR_BEATS*DATA_W-1:0];
                        header_phase <= 1'b0;
                        table_i <= {T_W{1'b0}};
                        entry <= 32'd0;
                    end else if (entry >= count) begin
                        if (table_i == LAST_TABLE) begin
                            state <= S_IDLE;
                            loaded <= 1'b1;
                        end
                        table_i <= table_i + 1'b1;
                        entry <= 32'd0;
                    end else begin
                        offset <= aligned;
                        state <= S_READ;
                        m_axi_arvalid <= 1'b1;
                    end
                end
            endcase
        end
    end
endmodule
`default_nettype wire

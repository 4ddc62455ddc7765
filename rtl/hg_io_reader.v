// Inputs through memory (docs/rtl.md, "Inputs and outputs through memory"): reads `bytes` bytes from byte
// address `base` (aligned to a beat) over an AXI4 read master and sends them as a byte stream, lowest byte of
// each beat first, one byte per cycle while TREADY holds. Requests run ahead of the data (INCR bursts of up to
// 256 beats, never across a 4 KiB page; RREADY backpressures them), so the read latency is paid once.
`default_nettype none
module hg_io_reader #(
    parameter integer AXI_AW = 32,
    parameter integer DATA_W = 64,
    parameter integer LG_B = $clog2(DATA_W / 8)   // log2 of a beat's bytes
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              start,       // one cycle: read `bytes` from `base`
    input  wire [AXI_AW-1:0] base,
    input  wire [31:0]       bytes,
    output reg  [AXI_AW-1:0] m_axi_araddr,
    output wire [7:0]        m_axi_arlen,
    output wire [2:0]        m_axi_arsize,
    output wire [1:0]        m_axi_arburst,   // INCR
    output wire              m_axi_arid,
    output wire              m_axi_arvalid,
    input  wire              m_axi_arready,
    input  wire [DATA_W-1:0] m_axi_rdata,
    input  wire              m_axi_rvalid,
    input  wire              m_axi_rid,       // in order: one ID
    input  wire [1:0]        m_axi_rresp,     // a read error is not reported: the data is taken as it comes
    input  wire              m_axi_rlast,     // the beats are counted instead
    output wire              m_axi_rready,
    output wire [7:0]        m_tdata,
    output wire              m_tvalid,
    input  wire              m_tready
);
    localparam integer BB = DATA_W / 8;
    localparam [12:0] PAGE = 13'd4096;
    localparam [LG_B-1:0] LAST_BYTE = BB[LG_B-1:0] - 1'b1;
    localparam [31:0] BEAT_MASK = BB - 1;

    reg [31:0] request_left;  // beats not yet requested
    reg [31:0] bytes_left;    // bytes not yet sent
    reg [DATA_W-1:0] beat;
    reg [LG_B-1:0] index;     // the beat's next byte
    reg full;                 // `beat` holds bytes to send

    // the next burst: to the page's end, the data's end or 256 beats
    wire [12:0] page_left = (PAGE - {1'b0, m_axi_araddr[11:0]}) >> LG_B;
    wire [31:0] to_page = request_left < {19'd0, page_left} ? request_left : {19'd0, page_left};
    wire [31:0] burst = to_page < 32'd256 ? to_page : 32'd256;
    assign m_axi_arlen = burst[7:0] - 8'd1;
    assign m_axi_arsize = LG_B[2:0];
    assign m_axi_arburst = 2'b01;
    assign m_axi_arid = 1'b0;
    assign m_axi_arvalid = request_left != 32'd0;

    assign m_tvalid = full && bytes_left != 32'd0;
    assign m_tdata = beat[{index, 3'b000} +: 8];
    wire pop = m_tvalid && m_tready;
    wire drained = pop && (index == LAST_BYTE || bytes_left == 32'd1);  // the beat's last byte to send leaves
    assign m_axi_rready = !full || drained;
    wire take = m_axi_rvalid && m_axi_rready;

    always @(posedge clk) begin
        if (rst) begin
            request_left <= 32'd0;
            bytes_left <= 32'd0;
            full <= 1'b0;
        end else if (start) begin
            m_axi_araddr <= base;
            request_left <= (bytes >> LG_B) + {31'd0, (bytes & BEAT_MASK) != 32'd0};
            bytes_left <= bytes;
            full <= 1'b0;
        end else begin
            if (m_axi_arvalid && m_axi_arready) begin
                m_axi_araddr <= m_axi_araddr + (burst[AXI_AW-1:0] << LG_B);
                request_left <= request_left - burst;
            end
            if (pop) begin
                bytes_left <= bytes_left - 32'd1;
                index <= index + 1'b1;
            end
            if (take) begin
                beat <= m_axi_rdata;
                index <= {LG_B{1'b0}};
            end
            full <= take || (full && !drained);
        end
    end

    wire unused = ^{burst[31:8], base[LG_B-1:0], m_axi_rid, m_axi_rresp, m_axi_rlast};
endmodule
`default_nettype wire

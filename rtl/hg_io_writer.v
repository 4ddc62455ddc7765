// Outputs through memory (docs/rtl.md, "Inputs and outputs through memory"): takes `bytes` bytes of a byte
// stream and writes them from byte address `base` (aligned to a beat) over an AXI4 write master, lowest byte of
// each beat first: a beat is written (one-beat INCR burst, WSTRB covering the bytes it holds) as soon as it is
// full or holds the last byte, while the next one fills, so the stream runs at one byte per cycle. `done`
// pulses when the last write response is in.
`default_nettype none
module hg_io_writer #(
    parameter integer AXI_AW = 32,
    parameter integer DATA_W = 64,
    parameter integer LG_B = $clog2(DATA_W / 8)   // log2 of a beat's bytes
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                start,       // one cycle: write the next `bytes` bytes of the stream at `base`
    input  wire [AXI_AW-1:0]   base,
    input  wire [31:0]         bytes,
    input  wire [7:0]          s_tdata,
    input  wire                s_tvalid,
    output wire                s_tready,
    output reg  [AXI_AW-1:0]   m_axi_awaddr,
    output wire [7:0]          m_axi_awlen,
    output wire [2:0]          m_axi_awsize,
    output wire [1:0]          m_axi_awburst,   // INCR
    output wire                m_axi_awid,
    output reg                 m_axi_awvalid,
    input  wire                m_axi_awready,
    output reg  [DATA_W-1:0]   m_axi_wdata,
    output reg  [DATA_W/8-1:0] m_axi_wstrb,
    output wire                m_axi_wlast,
    output reg                 m_axi_wvalid,
    input  wire                m_axi_wready,
    input  wire                m_axi_bvalid,
    input  wire                m_axi_bid,
    input  wire [1:0]          m_axi_bresp,     // a write error is not reported
    output wire                m_axi_bready,
    output reg                 done
);
    localparam integer BB = DATA_W / 8;
    localparam [LG_B-1:0] LAST_BYTE = BB[LG_B-1:0] - 1'b1;

    reg active;
    reg [31:0] bytes_left;     // bytes still to take from the stream
    reg [31:0] responses;      // writes issued and not yet answered
    reg [AXI_AW-1:0] next_addr;
    reg [DATA_W-1:0] fill;     // the beat being filled
    reg [BB-1:0] fill_strb;
    reg [LG_B-1:0] index;

    assign m_axi_awlen = 8'd0;
    assign m_axi_awsize = LG_B[2:0];
    assign m_axi_awburst = 2'b01;
    assign m_axi_awid = 1'b0;
    assign m_axi_wlast = 1'b1;
    assign m_axi_bready = 1'b1;
    wire pending = m_axi_awvalid || m_axi_wvalid;      // the previous beat is not yet handed over
    wire closes = index == LAST_BYTE || bytes_left == 32'd1;  // this byte ends a beat
    assign s_tready = active && bytes_left != 32'd0 && !(closes && pending);
    wire take = s_tvalid && s_tready;
    wire issued = m_axi_awvalid && m_axi_awready;
    wire answered = m_axi_bvalid;

    always @(posedge clk) begin
        done <= 1'b0;
        if (rst) begin
            active <= 1'b0;
            m_axi_awvalid <= 1'b0;
            m_axi_wvalid <= 1'b0;
            bytes_left <= 32'd0;
            responses <= 32'd0;
        end else if (start) begin
            active <= 1'b1;
            bytes_left <= bytes;
            next_addr <= base;
            index <= {LG_B{1'b0}};
            fill_strb <= {BB{1'b0}};
        end else begin
            if (issued) m_axi_awvalid <= 1'b0;
            if (m_axi_wvalid && m_axi_wready) m_axi_wvalid <= 1'b0;
            responses <= responses + {31'd0, issued} - {31'd0, answered};
            if (take) begin
                bytes_left <= bytes_left - 32'd1;
                index <= index + 1'b1;
                fill[{index, 3'b000} +: 8] <= s_tdata;
                fill_strb[index] <= 1'b1;
                if (closes) begin  // hand the beat over: the write channels are free (s_tready says so)
                    m_axi_awaddr <= next_addr;
                    m_axi_awvalid <= 1'b1;
                    m_axi_wdata <= fill;
                    m_axi_wdata[{index, 3'b000} +: 8] <= s_tdata;
                    m_axi_wstrb <= fill_strb | ({{(BB-1){1'b0}}, 1'b1} << index);
                    m_axi_wvalid <= 1'b1;
                    next_addr <= next_addr + BB[AXI_AW-1:0];
                    index <= {LG_B{1'b0}};
                    fill_strb <= {BB{1'b0}};
                end
            end
            // no write waits to be handed over (so none is issued now) and the last response is this one
            if (active && bytes_left == 32'd0 && !pending && responses == {31'd0, answered}) begin
                active <= 1'b0;
                done <= 1'b1;
            end
        end
    end

    wire unused = ^{base[LG_B-1:0], m_axi_bid, m_axi_bresp};
endmodule
`default_nettype wire

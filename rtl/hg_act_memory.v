// Activation memory (docs/hardware.md): two planes of R byte-wide banks, each bank one write port and
// one read port. A feature map lives in one plane; its channel m in bank m mod G (see hg_writer).
// An array layer's lane r reads bank r of the input's plane; a vector layer's lane c reads bank c of
// each input's plane (a QAdd's two inputs live in different planes, so both are read every cycle);
// the output stream reads one byte. Reads answer one cycle later (the output stream's two). The DMA unit (hg_fmap_dma) writes whole words
// into one plane (a load) or reads them from one (a store) while the engines run: it takes that plane's write
// or read port, which the layer program's waits keep the engines off (docs/program.md, "Two queues").
`default_nettype none
module hg_act_memory #(
    parameter integer R = 4,
    parameter integer C = 4,
    parameter integer D_W = 8,
    parameter integer ADDR_W = 12,
    parameter integer DEPTH0 = 4096,
    parameter integer DEPTH1 = 4096,
    parameter integer BANK_W = (R > 1) ? $clog2(R) : 1
) (
    input  wire                clk,
    // who reads: an array layer, a vector layer or the output stream
    input  wire                array_mode,
    input  wire                array_plane,
    input  wire [R*ADDR_W-1:0] array_addr,
    output wire [R*D_W-1:0]    array_data,
    input  wire                vec_a_plane,
    input  wire                vec_b_plane,
    input  wire [C*ADDR_W-1:0] vec_a_addr,
    input  wire [C*ADDR_W-1:0] vec_b_addr,
    output wire [C*D_W-1:0]    vec_a_data,
    output wire [C*D_W-1:0]    vec_b_data,
    input  wire                out_mode,
    input  wire                out_plane,
    input  wire [BANK_W-1:0]   out_bank,
    input  wire [ADDR_W-1:0]   out_addr,
    output wire [D_W-1:0]      out_data,
    // one write port per bank, shared by the writer, the input stream (into the other plane while a first
    // row runs under the stream: docs/rtl.md) and the DMA unit
    input  wire                wr_plane,
    input  wire [R-1:0]        wr_en,
    input  wire [ADDR_W-1:0]   wr_addr,
    input  wire [R*D_W-1:0]    wr_data,
    input  wire                in_wr_plane,
    input  wire [R-1:0]        in_wr_en,
    input  wire [ADDR_W-1:0]   in_wr_addr,
    input  wire [R*D_W-1:0]    in_wr_data,
    // the DMA unit: a word into dma_wr_plane, or one read from dma_rd_plane (while dma_rd)
    input  wire                dma_wr_plane,
    input  wire                dma_wr_en,
    input  wire [ADDR_W-1:0]   dma_wr_addr,
    input  wire [R*D_W-1:0]    dma_wr_data,
    input  wire                dma_rd,
    input  wire                dma_rd_plane,
    input  wire [ADDR_W-1:0]   dma_rd_addr,
    output wire [R*D_W-1:0]    dma_rd_data
);
    wire [R*D_W-1:0] rdata [0:1];
    reg              array_plane_1, a_plane_1, b_plane_1, out_plane_1, dma_plane_1;
    reg [BANK_W-1:0] out_bank_1, out_bank_2;
    reg [R*D_W-1:0]  out_word;   // the output stream's word, registered before its bank is chosen

    always @(posedge clk) begin
        dma_plane_1 <= dma_rd_plane;
        array_plane_1 <= array_plane;
        a_plane_1 <= vec_a_plane;
        b_plane_1 <= vec_b_plane;
        out_plane_1 <= out_plane;
        out_bank_1 <= out_bank;
        out_bank_2 <= out_bank_1;
        out_word <= rdata[out_plane_1];
    end

    genvar p, j;
    generate
        for (p = 0; p < 2; p = p + 1) begin : g_plane
            localparam integer DEPTH = (p == 0) ? DEPTH0 : DEPTH1;
            for (j = 0; j < R; j = j + 1) begin : g_bank
                reg [ADDR_W-1:0] raddr;
                wire dma_w = dma_wr_en && dma_wr_plane == p[0];
                wire in_w = in_wr_en[j] && in_wr_plane == p[0];
                always @* begin
                    if (dma_rd && dma_rd_plane == p[0]) raddr = dma_rd_addr;
                    else if (out_mode) raddr = out_addr;
                    else if (array_mode) raddr = array_addr[j*ADDR_W +: ADDR_W];
                    else if (j < C && vec_b_plane == p[0] && vec_a_plane != p[0]) raddr = vec_b_addr[(j % C)*ADDR_W +: ADDR_W];
                    else if (j < C) raddr = vec_a_addr[(j % C)*ADDR_W +: ADDR_W];
                    else raddr = {ADDR_W{1'b0}};
                end
                localparam integer AW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
                wire [ADDR_W-1:0] waddr = dma_w ? dma_wr_addr : in_w ? in_wr_addr : wr_addr;
                wire [ADDR_W-1:0] unused_hi = raddr | waddr;
                hg_ram #(.W(D_W), .DEPTH(DEPTH)) bank (
                    .clk(clk), .we(dma_w || in_w || (wr_en[j] && wr_plane == p[0])), .waddr(waddr[AW-1:0]),
                    .wdata(dma_w ? dma_wr_data[j*D_W +: D_W] : in_w ? in_wr_data[j*D_W +: D_W] : wr_data[j*D_W +: D_W]), .re(1'b1), .raddr(raddr[AW-1:0]),
                    .rdata(rdata[p][j*D_W +: D_W]));
            end
        end
    endgenerate

    assign dma_rd_data = rdata[dma_plane_1];
    assign array_data = rdata[array_plane_1];
    assign vec_a_data = rdata[a_plane_1][C*D_W-1:0];
    assign vec_b_data = rdata[b_plane_1][C*D_W-1:0];
    assign out_data = out_word[out_bank_2*D_W +: D_W];
endmodule
`default_nettype wire

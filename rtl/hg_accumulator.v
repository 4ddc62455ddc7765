// Accumulator buffer: C columns of partial sums, one entry per pixel of a spatial tile. A dot-product
// vector from the array starts its pixel's sum (plus the bias) on the first row tile and adds to it
// on the others; on the last row tile the sum goes on to the requantizer instead of back to memory.
// Two cycles from p_valid to s_valid; an entry is written two cycles after it is read, and the array
// revisits a pixel only R cycles later, so reads never see a stale entry.
`default_nettype none
module hg_accumulator #(
    parameter integer C = 4,
    parameter integer P_W = 32,
    parameter integer DEPTH = 512,
    parameter integer AW = (DEPTH > 1) ? $clog2(DEPTH) : 1
) (
    input  wire               clk,
    input  wire               p_valid,
    input  wire [AW-1:0]      p_addr,
    input  wire               p_first,   // first row tile: start from the bias
    input  wire               p_last,    // last row tile: pass the sum on
    input  wire [C*P_W-1:0]   p_data,
    input  wire [C*P_W-1:0]   bias,      // valid one cycle after p_valid
    output reg                s_valid,   // a finished sum (last row tile)
    output reg  [C*P_W-1:0]   s_data
);
    reg             v1, first1, last1, keep2;
    reg [AW-1:0]    addr1, addr2;
    reg [C*P_W-1:0] data1;
    wire [C*P_W-1:0] stored;
    reg [C*P_W-1:0] sum;

    hg_ram #(.W(C * P_W), .DEPTH(DEPTH)) sums (
        .clk(clk), .we(keep2), .waddr(addr2), .wdata(s_data),
        .re(p_valid), .raddr(p_addr), .rdata(stored));

    integer c;
    always @* begin
        for (c = 0; c < C; c = c + 1)
            sum[c*P_W +: P_W] = (first1 ? bias[c*P_W +: P_W] : stored[c*P_W +: P_W]) + data1[c*P_W +: P_W];
    end

    always @(posedge clk) begin
        v1 <= p_valid;
        addr1 <= p_addr;
        first1 <= p_first;
        last1 <= p_last;
        data1 <= p_data;
        s_data <= sum;
        addr2 <= addr1;
        keep2 <= v1 && !last1;
        s_valid <= v1 && last1;
    end
endmodule
`default_nettype wire

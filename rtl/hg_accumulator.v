// Accumulator buffer: C columns of partial sums, one entry per pixel of a spatial tile. A dot-product
// vector from the array starts its pixel's sum (plus the bias) on the first row tile and adds to it
// on the others; on the last row tile the sum goes on to the requantizer instead of back to memory.
// Three cycles from p_valid to s_valid: the memory's answer (and the bias) is registered before the adder,
// which would otherwise follow a block RAM's slow clock-to-output in the same cycle (ECP5: 4.1 ns of 8). An
// entry is written three cycles after it is read, and the array revisits a pixel only R >= 4 cycles later,
// so reads never see a stale entry.
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
    reg             v1, first1, last1, v2, first2, last2, keep3;
    reg [AW-1:0]    addr1, addr2, addr3;
    reg [C*P_W-1:0] data1, data2, stored2, bias2;
    wire [C*P_W-1:0] stored;
    reg [C*P_W-1:0] sum;

    hg_ram #(.W(C * P_W), .DEPTH(DEPTH)) sums (
        .clk(clk), .we(keep3), .waddr(addr3), .wdata(s_data),
        .re(p_valid), .raddr(p_addr), .rdata(stored));

    integer c;
    always @* begin
        for (c = 0; c < C; c = c + 1)
            sum[c*P_W +: P_W] = (first2 ? bias2[c*P_W +: P_W] : stored2[c*P_W +: P_W]) + data2[c*P_W +: P_W];
    end

    always @(posedge clk) begin
        v1 <= p_valid;
        addr1 <= p_addr;
        first1 <= p_first;
        last1 <= p_last;
        data1 <= p_data;
        {v2, addr2, first2, last2, data2} <= {v1, addr1, first1, last1, data1};
        stored2 <= stored;
        bias2 <= bias;
        s_data <= sum;
        addr3 <= addr2;
        keep3 <= v2 && !last2;
        s_valid <= v2 && last2;
    end
endmodule
`default_nettype wire

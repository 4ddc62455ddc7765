// The weight ROM (hlsgen/rtl/weight_rom.py): every layer's weights at the width quantization chose for it.
// A row of C weights of `bits` bits is `bits` slices of C bits, slice j holding bit j of every weight, and
// rows follow one another slice after slice; a word holds S slices (a power of two, at least W_W). A read
// fetches the two words the row can straddle and returns its C weights sign-extended to W_W bits (slice j
// for j < bits, else slice bits - 1): one row per cycle, two cycles of latency: the words are registered
// once more before the row's shift and sign selection, which would otherwise follow a block RAM's slow
// clock-to-output in the same cycle (ECP5: 4.1 ns of 8). The write port fills it as a RAM (the target's top
// loads a program's weights into it, hg_program_loader); a ROM ties `we` low.
`default_nettype none
module hg_weight_rom #(
    parameter integer C = 4,
    parameter integer W_W = 8,       // the PEs' weights
    parameter integer WB_W = 4,      // holds W_W
    parameter integer S = 8,         // slices per word
    parameter integer DEPTH = 64,
    parameter INIT = "",
    parameter integer AW = (DEPTH > 1) ? $clog2(DEPTH) : 1,
    parameter integer SL_W = (S > 1) ? $clog2(S) : 1,
    parameter integer SA_W = AW + SL_W    // slice addresses
) (
    input  wire            clk,
    input  wire [SA_W-1:0] addr,          // the row's first slice
    input  wire [WB_W-1:0] bits,          // its width, 1 to W_W
    output wire [C*W_W-1:0] data,
    input  wire            we,
    input  wire [AW-1:0]   waddr,
    input  wire [C*S-1:0]  wdata
);
    localparam [31:0] LAST = DEPTH - 1;

    reg [C*S-1:0] mem [0:DEPTH-1];
    initial if (INIT != "") $readmemh(INIT, mem);

    // a row starting in the last word ends in it: its second read stays in range
    wire [AW-1:0] word = addr[SA_W-1:SL_W];
    wire [AW-1:0] next = (word == LAST[AW-1:0]) ? word : word + 1'b1;
    reg  [C*S-1:0] low, high, low_2, high_2;
    reg  [SL_W-1:0] first, first_2;
    reg  [WB_W-1:0] bits_1, bits_2;
    always @(posedge clk) if (we) mem[waddr] <= wdata;
    always @(posedge clk) begin
        low <= mem[word];
        high <= mem[next];
        first <= addr[SL_W-1:0];
        bits_1 <= bits;
        {low_2, high_2, first_2, bits_2} <= {low, high, first, bits_1};
    end

    hg_weight_row #(.C(C), .W_W(W_W), .WB_W(WB_W), .S(S)) row (
        .low(low_2), .high(high_2), .first(first_2), .bits(bits_2), .data(data));
endmodule
`default_nettype wire

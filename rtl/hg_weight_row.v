// One row of weights out of the bit-sliced weight image (hlsgen/rtl/weight_rom.py): the row starts at slice
// `first` of the word pair {high, low} and is `bits` slices wide; weight c takes slice j for bit j < bits and
// slice bits - 1 above it, so a row at any width comes out sign-extended to the PEs' W_W bits. Shared by the
// weight ROM and the external-memory tile buffer, which hold the same words.
`default_nettype none
module hg_weight_row #(
    parameter integer C = 4,
    parameter integer W_W = 8,
    parameter integer WB_W = 4,
    parameter integer S = 8,         // slices per word
    parameter integer SL_W = (S > 1) ? $clog2(S) : 1
) (
    input  wire [C*S-1:0]   low,
    input  wire [C*S-1:0]   high,
    input  wire [SL_W-1:0]  first,
    input  wire [WB_W-1:0]  bits,
    output reg  [C*W_W-1:0] data
);
    wire [2*C*S-1:0] pair = {high, low} >> (first * C);
    wire [31:0] sign_slice = {{(32-WB_W){1'b0}}, bits} - 32'd1;
    wire [C-1:0] sign = pair[sign_slice*C +: C];
    integer j, c;
    always @* begin
        for (j = 0; j < W_W; j = j + 1)
            for (c = 0; c < C; c = c + 1)
                data[c*W_W + j] = (j < {{(32-WB_W){1'b0}}, bits}) ? pair[j*C + c] : sign[c];
    end
endmodule
`default_nettype wire

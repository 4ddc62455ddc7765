// One requantizer lane (docs/numerics.md): y = saturate(rshift_round(acc * M, s) + zp, lo, hi), with
// rshift_round(v, s) = (v + 2^(s-1)) >>> s (round half up), M = M_neg where acc < 0 when NEG is set
// (a fused LeakyRelu). Three pipeline stages: multiply here, then round-shift and add zero point and
// saturate (hg_round_saturate).
// The output is the low D_W bits of the saturated value (lo/hi keep it inside the output's range).
`default_nettype none
module hg_requant #(
    parameter integer P_W = 32,   // signed accumulator
    parameter integer M_W = 16,   // unsigned multiplier
    parameter integer S_W = 6,    // right shift
    parameter integer Z_W = 10,   // signed zero point and bounds
    parameter integer D_W = 8     // output bits
) (
    input  wire                  clk,
    input  wire signed [P_W-1:0] acc,
    input  wire        [M_W-1:0] mult,
    input  wire        [M_W-1:0] mult_neg,
    input  wire                  use_neg,    // layer has a negative-branch multiplier
    input  wire        [S_W-1:0] shift,
    input  wire signed [Z_W-1:0] zp,
    input  wire signed [Z_W-1:0] lo,
    input  wire signed [Z_W-1:0] hi,
    output wire        [D_W-1:0] q
);
    reg  signed [63:0] product;
    reg         [S_W-1:0] shift_1;
    reg  signed [Z_W-1:0] zp_1, lo_1, hi_1;

    wire [M_W-1:0] m = (use_neg && acc[P_W-1]) ? mult_neg : mult;
    wire signed [63:0] acc_w = {{(64-P_W){acc[P_W-1]}}, acc};
    wire signed [63:0] m_w = {{(64-M_W){1'b0}}, m};

    always @(posedge clk) begin
        product <= acc_w * m_w;
        shift_1 <= shift;
        {zp_1, lo_1, hi_1} <= {zp, lo, hi};
    end

    hg_round_saturate #(.S_W(S_W), .Z_W(Z_W), .D_W(D_W)) round_saturate (
        .clk(clk), .v(product), .shift(shift_1), .zp(zp_1), .lo(lo_1), .hi(hi_1), .q(q));
endmodule
`default_nettype wire

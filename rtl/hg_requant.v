// One requantizer lane (docs/numerics.md): y = saturate(rshift_round(acc * M, s) + zp, lo, hi), with
// rshift_round(v, s) = (v + 2^(s-1)) >>> s (round half up), M = M_neg where acc < 0 when NEG is set
// (a fused LeakyRelu). Six pipeline stages: the operands are registered (the multiplier choice stays out of
// the multipliers' path), the product is two registered partial products (the accumulator's low half,
// unsigned, and its high half, signed, each times M: one 18x18 DSP each) and then their sum, so that no
// path holds a multiplier and an adder; then round-shift and saturate (hg_round_saturate, three stages).
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
    localparam integer LO_W = P_W / 2;     // the accumulator's low half, unsigned
    localparam integer HI_W = P_W - LO_W;  // its high half, signed

    reg  signed [P_W-1:0]      acc_1;
    reg         [M_W-1:0]      m_1;
    reg  signed [LO_W+M_W+1:0] low_2;
    reg  signed [HI_W+M_W:0]   high_2;
    reg  signed [63:0]         product;
    reg         [S_W-1:0]      shift_1, shift_2, shift_3;
    reg  signed [Z_W-1:0]      zp_1, lo_1, hi_1, zp_2, lo_2, hi_2, zp_3, lo_3, hi_3;

    wire signed [M_W:0]    m_s = {1'b0, m_1};
    wire signed [LO_W:0]   low_s = {1'b0, acc_1[LO_W-1:0]};
    wire signed [HI_W-1:0] high_s = acc_1[P_W-1:LO_W];
    wire signed [63:0] low_w = {{(64-LO_W-M_W-2){low_2[LO_W+M_W+1]}}, low_2};
    wire signed [63:0] high_w = {{(64-HI_W-M_W-1){high_2[HI_W+M_W]}}, high_2};

    always @(posedge clk) begin
        acc_1 <= acc;
        m_1 <= (use_neg && acc[P_W-1]) ? mult_neg : mult;
        low_2 <= low_s * m_s;
        high_2 <= high_s * m_s;
        product <= (high_w <<< LO_W) + low_w;
        {shift_1, zp_1, lo_1, hi_1} <= {shift, zp, lo, hi};
        {shift_2, zp_2, lo_2, hi_2} <= {shift_1, zp_1, lo_1, hi_1};
        {shift_3, zp_3, lo_3, hi_3} <= {shift_2, zp_2, lo_2, hi_2};
    end

    hg_round_saturate #(.S_W(S_W), .Z_W(Z_W), .D_W(D_W)) round_saturate (
        .clk(clk), .v(product), .shift(shift_3), .zp(zp_3), .lo(lo_3), .hi(hi_3), .q(q));
endmodule
`default_nettype wire

// The last two requantizer stages (docs/numerics.md), shared by hg_requant and hg_vector_lane:
// q = saturate(rshift_round(v, s) + zp, lo, hi), with rshift_round(v, s) = (v + 2^(s-1)) >>> s (round
// half up; no bias for s = 0). Two pipeline stages: round-shift, then add zero point and saturate; v,
// shift, zp, lo and hi arrive together and q follows two cycles later. The output is the low D_W bits of
// the saturated value (lo/hi keep it inside the output's range).
`default_nettype none
module hg_round_saturate #(
    parameter integer S_W = 6,    // right shift
    parameter integer Z_W = 10,   // signed zero point and bounds
    parameter integer D_W = 8     // output bits
) (
    input  wire                  clk,
    input  wire signed [63:0]    v,
    input  wire        [S_W-1:0] shift,
    input  wire signed [Z_W-1:0] zp,
    input  wire signed [Z_W-1:0] lo,
    input  wire signed [Z_W-1:0] hi,
    output reg         [D_W-1:0] q
);
    reg  signed [63:0] scaled;
    reg  signed [Z_W-1:0] zp_1, lo_1, hi_1;

    wire signed [63:0] half = (shift == {S_W{1'b0}}) ? 64'sd0 : (64'sd1 <<< (shift - 1'b1));
    wire signed [63:0] biased = scaled + {{(64-Z_W){zp_1[Z_W-1]}}, zp_1};
    wire signed [63:0] lo_w = {{(64-Z_W){lo_1[Z_W-1]}}, lo_1};
    wire signed [63:0] hi_w = {{(64-Z_W){hi_1[Z_W-1]}}, hi_1};
    wire signed [63:0] clamped = (biased < lo_w) ? lo_w : ((biased > hi_w) ? hi_w : biased);

    always @(posedge clk) begin
        scaled <= (v + half) >>> shift;
        {zp_1, lo_1, hi_1} <= {zp, lo, hi};
        q <= clamped[D_W-1:0];
    end

    wire unused_clamped = ^clamped[63:D_W];
endmodule
`default_nettype wire

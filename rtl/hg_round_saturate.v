// The last three requantizer stages (docs/numerics.md), shared by hg_requant and hg_vector_lane:
// q = saturate(rshift_round(v, s) + zp, lo, hi), with rshift_round(v, s) = (v + 2^(s-1)) >>> s (round
// half up; no bias for s = 0). Three pipeline stages, so that no path holds more than one wide carry chain
// or the barrel shifter (ECP5 at 125 MHz): add the rounding bias; shift; saturate. The saturation compares
// the shifted value with lo - zp and hi - zp (computed beside the shift) instead of adding zp first:
// v + zp < lo exactly when v < lo - zp, and the low D_W bits of v + zp need only a D_W-bit adder.
// v, shift, zp, lo and hi arrive together and q follows three cycles later. The output is the low D_W
// bits of the saturated value (lo/hi keep it inside the output's range).
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
    reg  signed [63:0] biased, scaled;
    reg         [S_W-1:0] shift_1;
    reg  signed [Z_W-1:0] zp_1, lo_1, hi_1, zp_2, lo_2, hi_2;
    reg  signed [Z_W:0]   lo_t, hi_t;   // lo - zp, hi - zp

    wire signed [63:0] half = (shift == {S_W{1'b0}}) ? 64'sd0 : (64'sd1 <<< (shift - 1'b1));
    wire signed [63:0] lo_w = {{(64-Z_W-1){lo_t[Z_W]}}, lo_t};
    wire signed [63:0] hi_w = {{(64-Z_W-1){hi_t[Z_W]}}, hi_t};
    wire        [D_W-1:0] kept = scaled[D_W-1:0] + zp_2[D_W-1:0];

    always @(posedge clk) begin
        biased <= v + half;
        shift_1 <= shift;
        {zp_1, lo_1, hi_1} <= {zp, lo, hi};
        scaled <= biased >>> shift_1;
        lo_t <= {lo_1[Z_W-1], lo_1} - {zp_1[Z_W-1], zp_1};
        hi_t <= {hi_1[Z_W-1], hi_1} - {zp_1[Z_W-1], zp_1};
        {zp_2, lo_2, hi_2} <= {zp_1, lo_1, hi_1};
        q <= (scaled < lo_w) ? lo_2[D_W-1:0] : ((scaled > hi_w) ? hi_2[D_W-1:0] : kept);
    end

    wire unused_bounds = ^{zp_2[Z_W-1:D_W], lo_2[Z_W-1:D_W], hi_2[Z_W-1:D_W]};
endmodule
`default_nettype wire

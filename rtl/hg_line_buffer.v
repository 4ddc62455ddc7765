// The line buffer of the array: a sliding-window generator over the banked activation memory.
//
// For the current output pixel it produces one window vector, the R values of the current row tile:
// lane r reads the input value at (y0 + dy_r, x0 + dx_r) of channel c_r, zero-padded outside the
// image. A lane's tap (dy, dx, and coff, the linear offset of channel c_r and of the tap within its
// bank) comes from the layer's tap table, one entry per row tile; the activation memory keeps lane r's
// channels in bank r, so the R reads of a cycle never collide and no window is ever copied.
`default_nettype none
module hg_line_buffer #(
    parameter integer R = 4,
    parameter integer DIM_W = 8,
    parameter integer ADDR_W = 12,
    parameter integer OFF_W = 18,
    parameter integer ST_W = 4,      // strides
    parameter integer PW_W = 4,      // fused pooling windows
    // the tap word of hlsgen/rtl/words.py (the generated top sets it)
    parameter integer TAP_OFF_LSB = 0,
    parameter integer TAP_DX_LSB = TAP_OFF_LSB + ADDR_W,
    parameter integer TAP_DY_LSB = TAP_DX_LSB + DIM_W,
    parameter integer TAP_VALID_LSB = TAP_DY_LSB + DIM_W,
    parameter integer TAP_W = TAP_VALID_LSB + 1
) (
    input  wire                   clk,
    input  wire                   init,
    input  wire                   step,
    input  wire                   save,
    input  wire                   restore,
    // layer geometry
    input  wire [ADDR_W-1:0]      base,
    input  wire [DIM_W-1:0]       in_h,
    input  wire [DIM_W-1:0]       in_w,
    input  wire [DIM_W-1:0]       out_w,
    input  wire [ST_W-1:0]        sx,
    input  wire [ST_W-1:0]        sy,
    input  wire signed [DIM_W:0]  x0_first,
    input  wire signed [DIM_W:0]  y0_first,
    input  wire signed [OFF_W-1:0] pix_first,
    input  wire [OFF_W-1:0]       row_step,
    input  wire [PW_W-1:0]        pool_kh,
    input  wire [PW_W-1:0]        pool_kw,
    // taps of the current row tile: lane r = {valid, dy, dx, coff}
    input  wire [R*TAP_W-1:0]     taps,
    // the window vector's reads
    output wire [R*ADDR_W-1:0]    addr,
    output wire [R-1:0]           in_bounds,
    // where the pixel is
    output wire [DIM_W-1:0]       oy,
    output wire [DIM_W-1:0]       ox,
    output wire [DIM_W-1:0]       py,
    output wire [DIM_W-1:0]       px,
    output wire [PW_W-1:0]        pi,
    output wire [PW_W-1:0]        pj
);
    wire signed [DIM_W:0] y0, x0;
    wire signed [OFF_W-1:0] pix;

    hg_pixel_walk #(.DIM_W(DIM_W), .OFF_W(OFF_W), .ST_W(ST_W), .PW_W(PW_W)) walk (
        .clk(clk), .init(init), .step(step), .save(save), .restore(restore),
        .out_w(out_w), .sx(sx), .sy(sy), .x0_first(x0_first), .y0_first(y0_first), .pix_first(pix_first),
        .row_step(row_step), .pool_kh(pool_kh), .pool_kw(pool_kw),
        .oy(oy), .ox(ox), .y0(y0), .x0(x0), .pix(pix), .py(py), .px(px), .pi(pi), .pj(pj));

    genvar r;
    generate
        for (r = 0; r < R; r = r + 1) begin : g_lane
            wire [TAP_W-1:0] tap = taps[r*TAP_W +: TAP_W];
            wire             valid = tap[TAP_VALID_LSB];
            wire [DIM_W-1:0] dy = tap[TAP_DY_LSB +: DIM_W];
            wire [DIM_W-1:0] dx = tap[TAP_DX_LSB +: DIM_W];
            wire [ADDR_W-1:0] coff = tap[TAP_OFF_LSB +: ADDR_W];
            wire signed [DIM_W+1:0] y = {y0[DIM_W], y0} + $signed({2'b00, dy});
            wire signed [DIM_W+1:0] x = {x0[DIM_W], x0} + $signed({2'b00, dx});
            wire signed [OFF_W-1:0] sum = pix + $signed({{(OFF_W-ADDR_W){1'b0}}, base})
                                         + $signed({{(OFF_W-ADDR_W){1'b0}}, coff});
            assign in_bounds[r] = valid && !y[DIM_W+1] && y < $signed({2'b00, in_h})
                                     && !x[DIM_W+1] && x < $signed({2'b00, in_w});
            assign addr[r*ADDR_W +: ADDR_W] = sum[ADDR_W-1:0];
            wire unused_sum = ^sum[OFF_W-1:ADDR_W];
        end
    endgenerate
endmodule
`default_nettype wire

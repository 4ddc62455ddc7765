// The first weight slice of each weight tile of an array layer, in the order hg_array_engine consumes them:
// for spatial tile, for column tile, for row tile; the tiles of a spatial tile follow one another R rows of
// `bits` slices apart, and every spatial tile starts over at the layer's first slice. The configuration is
// taken at `init` and kept, whatever the layer table says afterwards (hg_weight_dma walks the next array
// row's tiles while the current row still runs); `more` falls after the last tile and stays low until the
// next init.
`default_nettype none
module hg_weight_tiles #(
    parameter integer R = 4,
    parameter integer WB_W = 4,
    parameter integer WSA_W = 12,    // slice addresses
    parameter integer CNT_W = 10,
    parameter integer ROW_W = (R > 1) ? $clog2(R) : 1
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             init,     // a layer's first tile, with the layer's configuration
    input  wire             step,     // the next tile
    input  wire [WSA_W-1:0] cfg_w_base,
    input  wire [WB_W-1:0]  cfg_w_bits,
    input  wire [CNT_W-1:0] cfg_tr,
    input  wire [CNT_W-1:0] cfg_tc,
    input  wire [CNT_W-1:0] cfg_ts,
    output reg  [WSA_W-1:0] slice,    // the tile's first slice
    output reg  [WB_W-1:0]  bits,     // the layer's weight width, as taken at init
    output reg              more      // a tile is left
);
    reg [WSA_W-1:0] w_base;
    reg [CNT_W-1:0] tr, tc, ts;
    reg [CNT_W-1:0] rt, ct, st;
    wire last_rt = rt == tr - 1'b1;
    wire last_ct = ct == tc - 1'b1;
    wire [WSA_W+WB_W+ROW_W-1:0] tile_slices = {{(WSA_W+ROW_W){1'b0}}, bits} << ROW_W;   // R: a power of two
    wire last_st = st == ts - 1'b1;

    always @(posedge clk) begin
        if (rst) begin
            more <= 1'b0;
        end else if (init) begin
            {rt, ct, st} <= {3*CNT_W{1'b0}};
            {w_base, bits, tr, tc, ts} <= {cfg_w_base, cfg_w_bits, cfg_tr, cfg_tc, cfg_ts};
            slice <= cfg_w_base;
            more <= 1'b1;
        end else if (step) begin
            if (last_rt && last_ct && last_st) more <= 1'b0;
            rt <= last_rt ? {CNT_W{1'b0}} : rt + 1'b1;
            if (last_rt) ct <= last_ct ? {CNT_W{1'b0}} : ct + 1'b1;
            if (last_rt && last_ct) begin
                st <= st + 1'b1;
                slice <= w_base;
            end else begin
                slice <= slice + tile_slices[WSA_W-1:0];
            end
        end
    end

    wire unused = ^tile_slices[WSA_W+WB_W+ROW_W-1:WSA_W];
endmodule
`default_nettype wire

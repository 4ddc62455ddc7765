// A walk over the weight tiles of the image's array rows, in the order hg_array_engine consumes them: per
// row, for spatial tile, for column tile, for row tile; the tiles of a spatial tile follow one another R rows
// of `bits` slices apart, and every spatial tile starts over at the row's first slice. `slice` is the
// current tile's first slice, `more` says a tile of the walked row is left, and `step` moves on.
//
// The walk starts a row when the row starts (`start`, its configuration cfg_*) unless it is already on it,
// and once it is done with the current row's tiles it goes on to the next row's (`nx_*`, the layer table's
// row after the current one, `nx_ext`: it streams weights), while the current row still runs; `advance`
// (the current row ends) makes that row the current one. It takes a row's configuration when it starts the
// row and keeps it. Outside the image's rows (`running` low) it starts over. hg_weight_dma walks twice: once
// requesting the tiles, once taking their data in.
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
    input  wire             running,  // the image's rows run
    input  wire             start,    // the current row starts
    input  wire             advance,  // the current row ends
    input  wire             cfg_ext,  // the current row streams its weights
    input  wire [WSA_W-1:0] cfg_w_base,
    input  wire [WB_W-1:0]  cfg_w_bits,
    input  wire [CNT_W-1:0] cfg_tr,
    input  wire [CNT_W-1:0] cfg_tc,
    input  wire [CNT_W-1:0] cfg_ts,
    input  wire             nx_ext,   // the next row is one of the image's and streams its weights
    input  wire [WSA_W-1:0] nx_w_base,
    input  wire [WB_W-1:0]  nx_w_bits,
    input  wire [CNT_W-1:0] nx_tr,
    input  wire [CNT_W-1:0] nx_tc,
    input  wire [CNT_W-1:0] nx_ts,
    input  wire             step,     // the next tile
    output reg  [WSA_W-1:0] slice,    // the tile's first slice
    output reg  [WB_W-1:0]  bits,     // the walked row's weight width
    output reg              more      // a tile is left
);
    // served: the walk has taken the current row (walking its tiles, or none); ahead: it walks the next row's
    reg served, ahead;
    wire go_ahead = running && served && !ahead && !more && nx_ext && !start && !advance;
    wire init = (start && !served && cfg_ext) || go_ahead;
    always @(posedge clk) begin
        if (rst || !running) begin
            {served, ahead} <= {1'b0, 1'b0};
        end else if (advance) begin
            {served, ahead} <= {ahead, 1'b0};
        end else begin
            if (start) served <= 1'b1;
            if (go_ahead) ahead <= 1'b1;
        end
    end

    reg [WSA_W-1:0] w_base;
    reg [CNT_W-1:0] tr, tc, ts;
    reg [CNT_W-1:0] rt, ct, st;
    wire last_rt = rt == tr - 1'b1;
    wire last_ct = ct == tc - 1'b1;
    wire [WSA_W+WB_W+ROW_W-1:0] tile_slices = {{(WSA_W+ROW_W){1'b0}}, bits} << ROW_W;   // R: a power of two
    wire last_st = st == ts - 1'b1;
    wire [WSA_W-1:0] n_w_base = go_ahead ? nx_w_base : cfg_w_base;

    always @(posedge clk) begin
        if (rst) begin
            more <= 1'b0;
        end else if (init) begin
            {rt, ct, st} <= {3*CNT_W{1'b0}};
            {w_base, bits, tr, tc, ts} <= go_ahead ? {nx_w_base, nx_w_bits, nx_tr, nx_tc, nx_ts}
                                                   : {cfg_w_base, cfg_w_bits, cfg_tr, cfg_tc, cfg_ts};
            slice <= n_w_base;
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

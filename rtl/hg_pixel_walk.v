// Walks the output pixels of a layer in raster order and keeps, for the current pixel, its window
// origin in the input (oy*sy - pad_top, ox*sx - pad_left), the linear input offset of that origin
// (y0 * in_w + x0, negative inside the padding) and its place in a fused pooling window (pool row and
// column, and the offsets inside the window). `save` and `restore` let a tile replay the same pixels.
//
// At a clock edge: next = step ? successor(current) : current; current <= restore ? saved : next;
// saved <= next when save.
`default_nettype none
module hg_pixel_walk #(
    parameter integer DIM_W = 8,    // unsigned pixel coordinates
    parameter integer OFF_W = 18,   // signed linear offsets
    parameter integer ST_W = 4,     // strides
    parameter integer PW_W = 4      // pooling windows
) (
    input  wire                    clk,
    input  wire                    init,      // back to the first pixel (wins over everything else)
    input  wire                    step,
    input  wire                    save,
    input  wire                    restore,
    input  wire [DIM_W-1:0]        out_w,     // output pixels per row
    input  wire [ST_W-1:0]         sx,
    input  wire [ST_W-1:0]         sy,
    input  wire signed [DIM_W:0]   x0_first,  // -pad_left
    input  wire signed [DIM_W:0]   y0_first,  // -pad_top
    input  wire signed [OFF_W-1:0] pix_first, // y0_first * in_w + x0_first
    input  wire [OFF_W-1:0]        row_step,  // sy * in_w
    input  wire [PW_W-1:0]         pool_kh,
    input  wire [PW_W-1:0]         pool_kw,
    output reg  [DIM_W-1:0]        oy,
    output reg  [DIM_W-1:0]        ox,
    output reg  signed [DIM_W:0]   y0,
    output reg  signed [DIM_W:0]   x0,
    output reg  signed [OFF_W-1:0] pix,
    output reg  [DIM_W-1:0]        py,
    output reg  [DIM_W-1:0]        px,
    output reg  [PW_W-1:0]         pi,
    output reg  [PW_W-1:0]         pj
);
    localparam integer S_W = 4 * DIM_W + 2 * (DIM_W + 1) + 2 * OFF_W + 2 * PW_W;

    reg signed [OFF_W-1:0] row_pix;   // offset of (y0, x0_first)
    reg [S_W-1:0] saved;

    // successor of the current pixel
    reg [DIM_W-1:0] n_oy, n_ox, n_py, n_px;
    reg signed [DIM_W:0] n_y0, n_x0;
    reg signed [OFF_W-1:0] n_pix, n_row;
    reg [PW_W-1:0] n_pi, n_pj;

    always @* begin
        {n_oy, n_ox, n_y0, n_x0, n_pix, n_row, n_py, n_px, n_pi, n_pj} =
            {oy, ox, y0, x0, pix, row_pix, py, px, pi, pj};
        if (step) begin
            if (ox == out_w - 1'b1) begin
                n_ox = {DIM_W{1'b0}};
                n_x0 = x0_first;
                n_oy = oy + 1'b1;
                n_y0 = y0 + $signed({1'b0, {(DIM_W-ST_W){1'b0}}, sy});
                n_row = row_pix + $signed(row_step);
                n_pix = row_pix + $signed(row_step) + $signed({{(OFF_W-DIM_W-1){x0_first[DIM_W]}}, x0_first});
                n_pj = {PW_W{1'b0}};
                n_px = {DIM_W{1'b0}};
                if (pi == pool_kh - 1'b1) begin
                    n_pi = {PW_W{1'b0}};
                    n_py = py + 1'b1;
                end else begin
                    n_pi = pi + 1'b1;
                end
            end else begin
                n_ox = ox + 1'b1;
                n_x0 = x0 + $signed({1'b0, {(DIM_W-ST_W){1'b0}}, sx});
                n_pix = pix + $signed({{(OFF_W-ST_W){1'b0}}, sx});
                if (pj == pool_kw - 1'b1) begin
                    n_pj = {PW_W{1'b0}};
                    n_px = px + 1'b1;
                end else begin
                    n_pj = pj + 1'b1;
                end
            end
        end
    end

    wire [S_W-1:0] next_state = {n_oy, n_ox, n_y0, n_x0, n_pix, n_row, n_py, n_px, n_pi, n_pj};

    always @(posedge clk) begin
        if (init) begin
            {oy, ox, py, px} <= {4*DIM_W{1'b0}};
            {pi, pj} <= {2*PW_W{1'b0}};
            y0 <= y0_first;
            x0 <= x0_first;
            pix <= pix_first;
            row_pix <= pix_first - $signed({{(OFF_W-DIM_W-1){x0_first[DIM_W]}}, x0_first});
            saved <= {{2*DIM_W{1'b0}}, y0_first, x0_first, pix_first,
                      pix_first - $signed({{(OFF_W-DIM_W-1){x0_first[DIM_W]}}, x0_first}), {2*DIM_W+2*PW_W{1'b0}}};
        end else begin
            if (restore) {oy, ox, y0, x0, pix, row_pix, py, px, pi, pj} <= saved;
            else {oy, ox, y0, x0, pix, row_pix, py, px, pi, pj} <= next_state;
            if (save) saved <= next_state;
        end
    end
endmodule
`default_nettype wire

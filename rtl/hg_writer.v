// Writes a layer's results into the activation memory: C channels of one pixel per cycle, lane c
// holding channel cblk*C + c. A map with G = 2^lg channel banks keeps channel m in every bank
// j = m (mod G) (G < R replicates a map with few channels so that every array lane finds its channel
// in its own bank), at address base + ((cblk*C) >> lg) * chan_stride + row * width + col.
//
// A MaxPool whose windows do not overlap (stride = kernel) is fused here: the values stream in raster
// order, a running maximum covers the pool window's columns and a one-row buffer its rows, and only
// the pooled pixel is written, so the pooled map costs no pass of its own.
`default_nettype none
module hg_writer #(
    parameter integer R = 4,
    parameter integer C = 4,
    parameter integer D_W = 8,
    parameter integer DIM_W = 8,
    parameter integer ADDR_W = 12,
    parameter integer CNT_W = 10,
    parameter integer PW_W = 4,      // pooling windows
    parameter integer POOL_DEPTH = 32,
    parameter integer POOL_AW = (POOL_DEPTH > 1) ? $clog2(POOL_DEPTH) : 1
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire                 i_valid,
    input  wire                 i_last,
    input  wire [CNT_W-1:0]     i_cblk,
    input  wire [DIM_W-1:0]     i_oy,
    input  wire [DIM_W-1:0]     i_ox,
    input  wire [DIM_W-1:0]     i_py,
    input  wire [DIM_W-1:0]     i_px,
    input  wire [PW_W-1:0]      i_pi,
    input  wire [PW_W-1:0]      i_pj,
    input  wire [C*D_W-1:0]     i_data,
    input  wire [ADDR_W-1:0]    cfg_base,
    input  wire [ADDR_W-1:0]    cfg_chan_stride,
    input  wire [DIM_W-1:0]     cfg_width,     // of the written map
    input  wire [2:0]           cfg_lg,        // log2 of its channel banks
    input  wire [CNT_W-1:0]     cfg_channels,  // channels that exist (lanes beyond are masked)
    input  wire                 cfg_signed,
    input  wire                 cfg_pool,
    input  wire [PW_W-1:0]      cfg_pool_kh,
    input  wire [PW_W-1:0]      cfg_pool_kw,
    input  wire [DIM_W-1:0]     cfg_pool_h,    // pooled rows
    input  wire [DIM_W-1:0]     cfg_pool_w,    // pooled columns
    input  wire                 cfg_dw,        // the map is a depthwise input: copy it to the window
    input  wire [ADDR_W-1:0]    cfg_dw_base,
    output reg                  dw_en,
    output reg  [ADDR_W-1:0]    dw_addr,
    output reg  [C*D_W-1:0]     dw_data,
    output reg  [R-1:0]         wr_en,
    output reg  [ADDR_W-1:0]    wr_addr,
    output reg  [R*D_W-1:0]     wr_data,
    output reg                  done
);
    localparam [31:0] C32 = C;

    // ---- fused max pooling ----------------------------------------------------------------------------
    reg  [C*D_W-1:0] hmax;
    reg  [C*D_W-1:0] rows [0:POOL_DEPTH-1];
    wire [C*D_W-1:0] row_max = rows[i_px[POOL_AW-1:0]];
    reg  [C*D_W-1:0] across, pooled;

    function automatic [D_W-1:0] larger(input [D_W-1:0] a, input [D_W-1:0] b, input sgn);
        larger = ((sgn ? ($signed(a) > $signed(b)) : (a > b))) ? a : b;
    endfunction

    integer c;
    always @* begin
        for (c = 0; c < C; c = c + 1) begin
            across[c*D_W +: D_W] = (i_pj == {PW_W{1'b0}}) ? i_data[c*D_W +: D_W]
                                                  : larger(hmax[c*D_W +: D_W], i_data[c*D_W +: D_W], cfg_signed);
            pooled[c*D_W +: D_W] = (i_pi == {PW_W{1'b0}}) ? across[c*D_W +: D_W]
                                                  : larger(row_max[c*D_W +: D_W], across[c*D_W +: D_W], cfg_signed);
        end
    end

    wire in_region = i_py < cfg_pool_h && i_px < cfg_pool_w;
    wire col_done = i_pj == cfg_pool_kw - 1'b1;
    wire row_done = i_pi == cfg_pool_kh - 1'b1;

    always @(posedge clk) begin
        if (i_valid && cfg_pool && in_region) begin
            hmax <= across;
            if (col_done && !row_done) rows[i_px[POOL_AW-1:0]] <= pooled;
        end
    end

    // ---- address and bank enables ---------------------------------------------------------------------
    wire write = i_valid && (!cfg_pool || (in_region && col_done && row_done));
    wire [DIM_W-1:0] row = cfg_pool ? i_py : i_oy;
    wire [DIM_W-1:0] col = cfg_pool ? i_px : i_ox;
    wire [CNT_W+7:0] first_channel = i_cblk * C32[7:0];
    wire [CNT_W+7:0] slot = first_channel >> cfg_lg;
    wire [ADDR_W+CNT_W+7:0] block_offset = slot * cfg_chan_stride;
    wire [2*DIM_W-1:0] pixel_narrow = row * cfg_width + {{DIM_W{1'b0}}, col};
    wire [2*DIM_W+ADDR_W-1:0] pixel = {{ADDR_W{1'b0}}, pixel_narrow};
    wire [C*D_W-1:0] values = cfg_pool ? pooled : i_data;
    wire [7:0] group_mask = (8'd1 << cfg_lg) - 8'd1;

    wire [R-1:0] en;
    wire [R*D_W-1:0] data;
    genvar j;
    generate
        for (j = 0; j < R; j = j + 1) begin : g_bank
            // bank j holds the channels m = j (mod G): lane (j mod G) of this block, when it exists
            localparam [31:0] J32 = j;
            wire [7:0] lane = J32[7:0] & group_mask;
            wire [CNT_W+7:0] channel = first_channel + {{CNT_W{1'b0}}, lane};
            assign en[j] = write && lane < C32[7:0] && channel < {8'd0, cfg_channels};
            assign data[j*D_W +: D_W] = values[lane*D_W +: D_W];
        end
    endgenerate

    always @(posedge clk) begin
        wr_en <= rst ? {R{1'b0}} : en;
        wr_addr <= cfg_base + block_offset[ADDR_W-1:0] + pixel[ADDR_W-1:0];
        wr_data <= data;
        dw_en <= !rst && write && cfg_dw;
        dw_addr <= cfg_dw_base + block_offset[ADDR_W-1:0] + pixel[ADDR_W-1:0];
        dw_data <= values;
        done <= !rst && i_valid && i_last;
    end

    wire unused = ^{block_offset[ADDR_W+CNT_W+7:ADDR_W], pixel[2*DIM_W+ADDR_W-1:ADDR_W]};
endmodule
`default_nettype wire

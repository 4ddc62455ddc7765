// Writes a layer's results into the activation memory: C channels of one pixel per cycle, lane c
// holding channel cblk*C + c. A map with G = 2^lg channel banks keeps channel m in every bank
// j = m (mod G) (G < R replicates a map with few channels so that every array lane finds its channel
// in its own bank), at address base + ((cblk*C) >> lg) * chan_stride + row * width + col * col_step
// (col_step > 1 with width a multiple of the map's: one phase of an Interleave, every col_step-th pixel); a
// depthwise layer's input also at dw_base + block * dw_stride + row * dw_pitch + col * col_step in the window
// memory.
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
    parameter integer ST_W = 4,      // column steps
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
    input  wire [DIM_W-1:0]     cfg_width,     // of the written map (its row pitch)
    input  wire [ST_W-1:0]      cfg_col_step,  // words between written columns
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
    input  wire [ADDR_W-1:0]    cfg_dw_stride, // its channel blocks' distance there
    input  wire [DIM_W-1:0]     cfg_dw_pitch,  // and its rows' (hlsgen/hw/window_banks.py)
    output reg                  dw_en,
    output reg  [ADDR_W-1:0]    dw_addr,
    output reg  [C*D_W-1:0]     dw_data,
    output reg  [R-1:0]         wr_en,
    output reg  [ADDR_W-1:0]    wr_addr,
    output reg  [R*D_W-1:0]     wr_data,
    output reg                  done
);
    localparam [31:0] C32 = C;

    // Four stages, so that no path holds two carry chains or a multiplier and an adder (ECP5 at 125 MHz):
    // the inputs are registered (1); the running maximum over the window's columns, the address's two
    // products and the bank enables (2); the maximum with the one-row buffer and the address's sum (3); the
    // bank data, each bank's lane out of the C (4).

    // ---- stage 1: the inputs --------------------------------------------------------------------------
    reg               v1, last1;
    reg [DIM_W-1:0]   row1, col1, py1, px1;
    reg [PW_W-1:0]    pi1, pj1;
    reg [C*D_W-1:0]   data1;
    reg [CNT_W+7:0]   first1, slot1;
    wire [CNT_W+7:0]  first_channel = i_cblk * C32[7:0];
    always @(posedge clk) begin
        v1 <= i_valid && !rst;
        last1 <= i_last;
        row1 <= cfg_pool ? i_py : i_oy;
        col1 <= cfg_pool ? i_px : i_ox;
        {py1, px1, pi1, pj1} <= {i_py, i_px, i_pi, i_pj};
        data1 <= i_data;
        first1 <= first_channel;
        slot1 <= first_channel >> cfg_lg;
    end

    // ---- stage 2: the window's columns, the products, the enables ------------------------------------
    // signed values compare as unsigned ones with their sign bits flipped: one comparator, not two and a mux
    function automatic [D_W-1:0] larger(input [D_W-1:0] a, input [D_W-1:0] b, input sgn);
        larger = ({a[D_W-1] ^ sgn, a[D_W-2:0]} > {b[D_W-1] ^ sgn, b[D_W-2:0]}) ? a : b;
    endfunction

    reg  [C*D_W-1:0] hmax, across;
    integer c;
    always @* begin
        for (c = 0; c < C; c = c + 1)
            across[c*D_W +: D_W] = (pj1 == {PW_W{1'b0}}) ? data1[c*D_W +: D_W]
                                                     : larger(hmax[c*D_W +: D_W], data1[c*D_W +: D_W], cfg_signed);
    end

    wire in_region = py1 < cfg_pool_h && px1 < cfg_pool_w;
    wire col_done = pj1 == cfg_pool_kw - 1'b1;
    wire row_done = pi1 == cfg_pool_kh - 1'b1;
    wire write = v1 && (!cfg_pool || (in_region && col_done && row_done));
    wire [7:0] group_mask = (8'd1 << cfg_lg) - 8'd1;

    wire [R-1:0] en;
    genvar j;
    generate
        for (j = 0; j < R; j = j + 1) begin : g_en
            // bank j holds the channels m = j (mod G): lane (j mod G) of this block, when it exists
            localparam [31:0] J32 = j;
            wire [7:0] lane = J32[7:0] & group_mask;
            wire [CNT_W+7:0] channel = first1 + {{CNT_W{1'b0}}, lane};
            assign en[j] = write && lane < C32[7:0] && channel < {8'd0, cfg_channels};
        end
    endgenerate

    reg               v2, last2, write2, keep2, first_row2;
    reg [R-1:0]       en2;
    reg [POOL_AW-1:0] px2;
    reg [C*D_W-1:0]   across2, data2;
    reg [2*DIM_W-1:0] pixel2;
    reg [DIM_W+ST_W-1:0] col2;
    reg [ADDR_W+CNT_W+7:0] block2, dw_block2;
    reg [2*DIM_W-1:0] dw_pixel2;
    always @(posedge clk) begin
        if (v1 && cfg_pool && in_region) hmax <= across;
        v2 <= v1 && !rst;
        last2 <= last1;
        write2 <= write;
        keep2 <= v1 && cfg_pool && in_region && col_done && !row_done;
        first_row2 <= pi1 == {PW_W{1'b0}};
        en2 <= en;
        px2 <= px1[POOL_AW-1:0];
        across2 <= across;
        data2 <= data1;
        pixel2 <= row1 * cfg_width;
        col2 <= col1 * cfg_col_step;
        block2 <= slot1 * cfg_chan_stride;
        dw_pixel2 <= row1 * cfg_dw_pitch;
        dw_block2 <= slot1 * cfg_dw_stride;
    end

    // ---- stage 3: the window's rows, the address, the bank data ---------------------------------------
    reg  [C*D_W-1:0] rows [0:POOL_DEPTH-1];
    wire [C*D_W-1:0] row_max = rows[px2];
    reg  [C*D_W-1:0] pooled;
    always @* begin
        for (c = 0; c < C; c = c + 1)
            pooled[c*D_W +: D_W] = first_row2 ? across2[c*D_W +: D_W]
                                              : larger(row_max[c*D_W +: D_W], across2[c*D_W +: D_W], cfg_signed);
    end
    always @(posedge clk) if (keep2) rows[px2] <= pooled;

    reg  [C*D_W-1:0]  values3;
    reg  [R-1:0]      en3;
    reg               dw3, last3, v3;
    reg  [ADDR_W-1:0] address3, dw_address3;
    wire [2*DIM_W+ADDR_W-1:0] dw_pixel_w = {{ADDR_W{1'b0}}, dw_pixel2};
    wire [2*DIM_W+ADDR_W-1:0] pixel_w = {{ADDR_W{1'b0}}, pixel2};
    wire [DIM_W+ST_W+ADDR_W-1:0] col_w = {{ADDR_W{1'b0}}, col2};
    always @(posedge clk) begin
        values3 <= cfg_pool ? pooled : data2;
        en3 <= rst ? {R{1'b0}} : en2;
        dw3 <= !rst && write2 && cfg_dw;
        v3 <= v2 && !rst;
        last3 <= last2;
        address3 <= block2[ADDR_W-1:0] + pixel_w[ADDR_W-1:0] + col_w[ADDR_W-1:0];
        dw_address3 <= dw_block2[ADDR_W-1:0] + dw_pixel_w[ADDR_W-1:0] + col_w[ADDR_W-1:0];
    end

    // ---- stage 4: the bank data ------------------------------------------------------------------------
    wire [R*D_W-1:0] data;
    generate
        for (j = 0; j < R; j = j + 1) begin : g_bank
            localparam [31:0] J32 = j;
            wire [7:0] lane = J32[7:0] & group_mask;
            assign data[j*D_W +: D_W] = values3[lane*D_W +: D_W];
        end
    endgenerate

    always @(posedge clk) begin
        wr_en <= rst ? {R{1'b0}} : en3;
        wr_addr <= cfg_base + address3;
        wr_data <= data;
        dw_en <= !rst && dw3;
        dw_addr <= cfg_dw_base + dw_address3;
        dw_data <= values3;
        done <= !rst && v3 && last3;
    end

    wire unused = ^{block2[ADDR_W+CNT_W+7:ADDR_W], pixel_w[2*DIM_W+ADDR_W-1:ADDR_W], col_w[DIM_W+ST_W+ADDR_W-1:ADDR_W],
                    dw_block2[ADDR_W+CNT_W+7:ADDR_W], dw_pixel_w[2*DIM_W+ADDR_W-1:ADDR_W]};
endmodule
`default_nettype wire

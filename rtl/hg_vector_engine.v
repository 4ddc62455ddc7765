// The vector unit (docs/hardware.md): C lanes, one channel per lane, one element per lane per cycle,
// in L = ceil(channels / C) passes over the map's pixels.
//   OP_ADD  QAdd: a from one activation plane, b from the other, one output pixel per input pixel
//   OP_MUL  QMul: as OP_ADD, the lanes requantizing the product (a - za) * (b - zb) (formed in the hold
//           stage); cfg_b_one: b is one pixel per channel (a broadcast gate), read at its pixel 0
//   OP_REQ  QRequant (and standalone Relu/Clip): one input
//   OP_LUT  QLut: a table per lane
//   OP_GAVG global average pool: sums over the pass, one output per pass
//   OP_GMAX global max pool: maximum over the pass, one output per pass
//   (cfg_acc: the pass carries on the totals of the layer-table row before it, a band of the same channels
//   over earlier rows of the map: one pass per band)
//   OP_WAVG windowed average pool, OP_WMAX windowed max pool: a window tap per cycle (kh * kw cycles per
//           output pixel), taps outside the map read nothing (0 to a sum; never the maximum); the average's
//           (multiplier, shift) come from the divisor table at div_base + the window's count, which counts
//           the taps inside [cnt_y0, cnt_y1) x [cnt_x0, cnt_x1) (the map, with its explicit padding under
//           count_include_pad; never a ceil-mode overhang)
//   OP_LERP interpolation (a linear Resize, QResample): a window of 2 x 2 taps (1 x 2 on a 1-D map) at
//           source pixel (iy, ix), each tap times its weight (den_y - ry or ry) * (den_x - rx or rx), summed;
//           counters step iy, ry by num_y / den_y per output row from off_y = iy * den_y + ry of the first
//           (off_y in [-den_y, den_y)), ix, rx likewise per output column; outside [0, in - 1) a counter
//           reads the map's edge pixel with remainder 0. It takes its steps from the count region's fields
//           (cnt_y0 = num_y, cnt_y1 = den_y, cnt_x0 = num_x, cnt_x1 = den_x) and its offsets from the window
//           origin's (y0 = off_y, x0 = off_x): a layer-table row holds one op's
//   OP_PICK a nearest Resize by a fraction: OP_LERP's counters, a window of one tap at (iy, ix), weight 1
// Every op reads output pixel (y, x) from source pixel (y // up_y, x // up_x) of a map src_w wide (factors
// 1 and src_w = w: the same pixel); with OP_REQ as the identity that is nearest upsampling (Resize). An
// edge-repeating Resize reads source pixel (clamp((y - pre_y) // up_y), clamp((x - pre_x) // up_x)), clamped
// to the src_h x src_w map (cfg_edge): its repeat counters start at -pre (cfg_jx0, cfg_jy0).
// Windowed pools read tap (ky, kx) of output pixel (oy, ox) at (oy * sy + y0 + ky * dil_y, ox * sx + x0 +
// kx * dil_x) of an in_h x in_w map: the pixel walk keeps the window origin, the tap counters its offset.
// Pipeline: read (1), centre (1), accumulate, multiply or hold (1), lane (7): results reach the writer 10 cycles
// after their last read is issued, with their pixel and channel block.
`default_nettype none
module hg_vector_engine #(
    parameter integer C = 4,
    parameter integer D_W = 8,
    parameter integer Z_W = 10,
    parameter integer DIM_W = 8,
    parameter integer ADDR_W = 12,
    parameter integer OFF_W = 18,   // the pixel walk's signed offsets (wider than DIM_W + 1)
    parameter integer CNT_W = 10,
    parameter integer PIX_W = 12,
    parameter integer ST_W = 4,     // the pixel walk's strides
    parameter integer PW_W = 4,     // pooling windows
    parameter integer UP_W = 4,     // upsampling factors minus one
    parameter integer VM_W = 17,    // multipliers
    parameter integer S_W = 6,      // right shift
    parameter integer LUT_DEPTH = 1,
    parameter LUT_INIT = "",
    parameter integer LUT_AW = (LUT_DEPTH > 1) ? $clog2(LUT_DEPTH) : 1,
    parameter integer DIV_W = 23,           // a divisor word (hlsgen/rtl/words.py)
    parameter integer DIV_MULT_LSB = 0,
    parameter integer DIV_SHIFT_LSB = 17,
    parameter integer DIV_DEPTH = 1,
    parameter DIV_INIT = "",
    parameter integer DIV_AW = (DIV_DEPTH > 1) ? $clog2(DIV_DEPTH) : 1,
    parameter integer LD_AW = (LUT_AW > DIV_AW) ? LUT_AW : DIV_AW,
    parameter integer LD_W = (DIV_W > D_W) ? DIV_W : D_W,
    parameter integer OP_W = 4      // the op codes (hlsgen.rtl.program's OP_*)
) (
    input  wire                  clk,
    input  wire                  rst,
    input  wire                  start,
    input  wire [OP_W-1:0]       cfg_op,
    input  wire [ADDR_W-1:0]     cfg_a_base,
    input  wire [ADDR_W-1:0]     cfg_b_base,
    input  wire [2:0]            cfg_a_lg,
    input  wire [2:0]            cfg_b_lg,
    input  wire                  cfg_b_one,     // b holds one pixel per channel: its slots are one word apart
    input  wire [ADDR_W-1:0]     cfg_stride,    // H * W: one channel slot of the inputs
    input  wire [DIM_W-1:0]      cfg_w,
    input  wire [PIX_W-1:0]      cfg_pixels,    // H * W
    input  wire [UP_W-1:0]       cfg_up_x,      // upsampling factors minus one
    input  wire [UP_W-1:0]       cfg_up_y,
    input  wire [DIM_W-1:0]      cfg_src_w,     // width of the map read
    input  wire [DIM_W-1:0]      cfg_src_h,     // its height (cfg_edge)
    input  wire signed [UP_W:0]  cfg_jx0,       // the repeat counters' first values (a band may start inside
    input  wire signed [UP_W:0]  cfg_jy0,       // a source row; negative: edge pixels before the map)
    input  wire                  cfg_edge,      // the last source column / row repeats to the output's end
    input  wire [CNT_W-1:0]      cfg_passes,
    input  wire                  cfg_acc,       // global pools: start from the totals already held
    input  wire signed [Z_W-1:0] cfg_a_zp,      // OP_LUT: the table's first input level
    input  wire signed [Z_W-1:0] cfg_b_zp,
    input  wire                  cfg_a_signed,
    input  wire                  cfg_b_signed,
    input  wire [VM_W-1:0]       cfg_ma,
    input  wire [VM_W-1:0]       cfg_mb,
    input  wire [S_W-1:0]        cfg_shift,
    input  wire signed [Z_W-1:0] cfg_zp,
    input  wire signed [Z_W-1:0] cfg_lo,
    input  wire signed [Z_W-1:0] cfg_hi,
    input  wire [LUT_AW-1:0]     cfg_lut_base,
    input  wire [PW_W-1:0]       cfg_pool_kh,
    input  wire [PW_W-1:0]       cfg_pool_kw,
    // windowed pools: the input map, strides, window origin of pixel 0 and its linear offset, sy * in_w
    input  wire [DIM_W-1:0]      cfg_in_h,
    input  wire [DIM_W-1:0]      cfg_in_w,
    input  wire [ST_W-1:0]       cfg_sx,
    input  wire [ST_W-1:0]       cfg_sy,
    input  wire signed [DIM_W:0] cfg_x0,
    input  wire signed [DIM_W:0] cfg_y0,
    input  wire signed [OFF_W-1:0] cfg_pix0,
    input  wire [OFF_W-1:0]      cfg_row_step,
    input  wire [DIM_W-1:0]      cfg_kh,        // the window
    input  wire [DIM_W-1:0]      cfg_kw,
    input  wire [DIM_W-1:0]      cfg_dil_x,
    input  wire [DIM_W-1:0]      cfg_dil_y,
    input  wire [OFF_W-1:0]      cfg_dil_row,   // dil_y * in_w
    input  wire signed [DIM_W:0]   cfg_cnt_y0,  // the region a window's count counts
    input  wire signed [DIM_W:0]   cfg_cnt_y1,
    input  wire signed [DIM_W:0]   cfg_cnt_x0,
    input  wire signed [DIM_W:0]   cfg_cnt_x1,
    input  wire [DIV_AW-1:0]     cfg_div_base,
    // activation memory: lane c reads bank c of the a plane and of the b plane
    // table loads (hg_program_loader): ld_en[0] writes a lookup-table entry (into every lane), ld_en[1] a
    // divisor word; tied to zero where the tables are the model's ROMs
    input  wire [1:0]            ld_en,
    input  wire [LD_AW-1:0]      ld_addr,
    input  wire [LD_W-1:0]       ld_data,
    output wire [C*ADDR_W-1:0]   a_addr,
    output wire [C*ADDR_W-1:0]   b_addr,
    input  wire [C*D_W-1:0]      a_data,
    input  wire [C*D_W-1:0]      b_data,
    output wire                  o_valid,
    output wire                  o_last,
    output wire [CNT_W-1:0]      o_cblk,
    output wire [DIM_W-1:0]      o_oy,
    output wire [DIM_W-1:0]      o_ox,
    output wire [DIM_W-1:0]      o_py,
    output wire [DIM_W-1:0]      o_px,
    output wire [PW_W-1:0]       o_pi,
    output wire [PW_W-1:0]       o_pj,
    output wire [C*D_W-1:0]      o_data
);
    localparam [OP_W-1:0] OP_ADD = 0, OP_LUT = 2, OP_GAVG = 3, OP_GMAX = 4, OP_WAVG = 5, OP_WMAX = 6, OP_MUL = 7,
                          OP_LERP = 8, OP_PICK = 9;
    // 1: OP_REQ
    localparam integer V_W = 32;
    localparam integer P_W = Z_W + 2;  // a centred operand of a product: an element minus a zero point
    localparam integer TAG_W = 1 + CNT_W + 4 * DIM_W + 2 * PW_W;
    localparam [31:0] C32 = C;

    wire global_pool = cfg_op == OP_GAVG || cfg_op == OP_GMAX;
    wire pick = cfg_op == OP_PICK;
    wire lerp = cfg_op == OP_LERP || pick;  // the interpolation counters' window
    wire window = cfg_op == OP_WAVG || cfg_op == OP_WMAX || lerp;
    wire sum_op = cfg_op == OP_GAVG || cfg_op == OP_WAVG;
    wire max_op = cfg_op == OP_GMAX || cfg_op == OP_WMAX;

    // ---- passes over the pixels -------------------------------------------------------------------
    reg             busy;
    reg [CNT_W-1:0] pass;
    reg [PIX_W-1:0] p;
    wire last_pixel = p == cfg_pixels - 1'b1;
    wire last_pass = pass == cfg_passes - 1'b1;
    wire issue = busy;
    // a windowed pool issues kh * kw taps per output pixel; every other op one read
    reg  [DIM_W-1:0] ky, kx;
    wire first_tap = ky == {DIM_W{1'b0}} && kx == {DIM_W{1'b0}};
    wire last_tap = !window || (ky == cfg_kh - 1'b1 && kx == cfg_kw - 1'b1);
    wire advance = issue && last_tap;

    always @(posedge clk) begin
        if (rst) begin
            busy <= 1'b0;
        end else if (start && !busy) begin
            busy <= 1'b1;
            pass <= {CNT_W{1'b0}};
            p <= {PIX_W{1'b0}};
        end else if (advance) begin
            p <= p + 1'b1;
            if (last_pixel) begin
                p <= {PIX_W{1'b0}};
                pass <= pass + 1'b1;
                if (last_pass) busy <= 1'b0;
            end
        end
    end

    // the source pixel: a column and a row offset that advance once per up_x columns / up_y rows
    // (repeat counters from jx0, jy0: the first source pixel is read up + 1 - j0 times)
    reg [DIM_W-1:0] col, src_col, src_y;
    reg signed [UP_W:0] jx, jy;
    wire signed [UP_W:0] jx_first = cfg_jx0;
    wire signed [UP_W:0] jy_first = cfg_jy0;
    wire x_wrap = jx == $signed({1'b0, cfg_up_x});
    wire y_wrap = jy == $signed({1'b0, cfg_up_y});
    wire x_more = !cfg_edge || src_col != cfg_src_w - 1'b1;
    wire y_more = !cfg_edge || src_y != cfg_src_h - 1'b1;
    localparam integer SRC_W = (PIX_W > DIM_W ? PIX_W : DIM_W) + 1;
    reg [SRC_W-1:0] src_row;
    wire restart = (start && !busy) || (advance && last_pixel);
    always @(posedge clk) begin
        if (restart) begin
            col <= {DIM_W{1'b0}};
            src_col <= {DIM_W{1'b0}};
            src_row <= {SRC_W{1'b0}};
            src_y <= {DIM_W{1'b0}};
            jx <= jx_first;
            jy <= jy_first;
        end else if (advance) begin
            if (col == cfg_w - 1'b1) begin
                col <= {DIM_W{1'b0}};
                src_col <= {DIM_W{1'b0}};
                jx <= jx_first;
                jy <= y_wrap ? {(UP_W+1){1'b0}} : jy + 1'b1;
                if (y_wrap && y_more) begin
                    src_row <= src_row + {{(SRC_W-DIM_W){1'b0}}, cfg_src_w};
                    src_y <= src_y + 1'b1;
                end
            end else begin
                col <= col + 1'b1;
                jx <= x_wrap ? {(UP_W+1){1'b0}} : jx + 1'b1;
                if (x_wrap && x_more) src_col <= src_col + 1'b1;
            end
        end
    end
    wire [SRC_W-1:0] src = src_row + {{(SRC_W-DIM_W){1'b0}}, src_col};

    // OP_LERP: the source row and column (li_y, li_x) and their remainders, clamped to the map's edge pixel
    // (remainder 0) outside [0, in - 1); l_row is the clamped row times in_w
    localparam integer LI_W = DIM_W + 2;
    reg  signed [LI_W-1:0] li_y, li_x;
    reg  [DIM_W:0]         lr_y, lr_x;
    reg  signed [OFF_W-1:0] l_row;
    wire [DIM_W:0] num_y = cfg_cnt_y0, den_y = cfg_cnt_y1, num_x = cfg_cnt_x0, den_x = cfg_cnt_x1;
    // the first output pixel's source pixel: off = i0 * den + r0, i0 = -1 or 0
    wire signed [LI_W-1:0] i0_y = cfg_y0[DIM_W] ? -1 : 0, i0_x = cfg_x0[DIM_W] ? -1 : 0;
    wire [DIM_W:0] r0_y = cfg_y0[DIM_W] ? cfg_y0 + den_y : cfg_y0;
    wire [DIM_W:0] r0_x = cfg_x0[DIM_W] ? cfg_x0 + den_x : cfg_x0;
    wire [DIM_W+1:0] lr_y_next = {1'b0, lr_y} + {1'b0, num_y};
    wire [DIM_W+1:0] lr_x_next = {1'b0, lr_x} + {1'b0, num_x};
    wire y_carry = lr_y_next >= {1'b0, den_y};
    wire x_carry = lr_x_next >= {1'b0, den_x};
    wire [DIM_W+1:0] lr_y_step = y_carry ? lr_y_next - {1'b0, den_y} : lr_y_next;
    wire [DIM_W+1:0] lr_x_step = x_carry ? lr_x_next - {1'b0, den_x} : lr_x_next;
    wire signed [LI_W-1:0] y_last = $signed({2'b00, cfg_in_h}) - 1;
    wire signed [LI_W-1:0] x_last = $signed({2'b00, cfg_in_w}) - 1;
    wire y_low = li_y < 0, x_low = li_x < 0;
    wire y_high = li_y >= y_last, x_high = li_x >= x_last;
    wire signed [LI_W-1:0] ly = y_low ? {LI_W{1'b0}} : (y_high ? y_last : li_y);
    wire signed [LI_W-1:0] lx = x_low ? {LI_W{1'b0}} : (x_high ? x_last : li_x);
    wire [DIM_W:0] wr_y = (y_low || y_high) ? {(DIM_W+1){1'b0}} : lr_y;
    wire [DIM_W:0] wr_x = (x_low || x_high) ? {(DIM_W+1){1'b0}} : lr_x;
    wire signed [OFF_W-1:0] in_w_row = $signed({{(OFF_W-DIM_W){1'b0}}, cfg_in_w});
    always @(posedge clk) begin
        if (restart) begin
            li_y <= i0_y;
            li_x <= i0_x;
            lr_y <= r0_y;
            lr_x <= r0_x;
            l_row <= {OFF_W{1'b0}};  // i0 is -1 or 0: row 0
        end else if (advance) begin
            if (col == cfg_w - 1'b1) begin
                li_x <= i0_x;
                lr_x <= r0_x;
                li_y <= li_y + {{(LI_W-1){1'b0}}, y_carry};
                lr_y <= lr_y_step[DIM_W:0];
                if (y_carry && !y_low && !y_high) l_row <= l_row + in_w_row;
            end else begin
                li_x <= li_x + {{(LI_W-1){1'b0}}, x_carry};
                lr_x <= lr_x_step[DIM_W:0];
            end
        end
    end
    wire unused_lerp = ^{lr_y_step[DIM_W+1], lr_x_step[DIM_W+1]};

    wire [DIM_W-1:0] oy, ox, py, px;
    wire [PW_W-1:0] pi, pj;
    wire signed [DIM_W:0] win_y0, win_x0;
    wire signed [OFF_W-1:0] win_pix;
    hg_pixel_walk #(.DIM_W(DIM_W), .OFF_W(OFF_W), .ST_W(ST_W), .PW_W(PW_W)) walk (
        .clk(clk), .init(restart), .step(advance), .save(1'b0), .restore(1'b0),
        .out_w(cfg_w), .sx(cfg_sx), .sy(cfg_sy), .x0_first(cfg_x0), .y0_first(cfg_y0),
        .pix_first(cfg_pix0), .row_step(cfg_row_step), .pool_kh(cfg_pool_kh), .pool_kw(cfg_pool_kw),
        .oy(oy), .ox(ox), .y0(win_y0), .x0(win_x0), .pix(win_pix), .py(py), .px(px), .pi(pi), .pj(pj));

    // the tap inside the window: (ty, tx) = (ky * dil_y, kx * dil_x), trow = ty * in_w
    reg signed [OFF_W-1:0] ty, tx, trow;
    always @(posedge clk) begin
        if (restart || advance) begin
            {ky, kx} <= {2*DIM_W{1'b0}};
            {ty, tx, trow} <= {3*OFF_W{1'b0}};
        end else if (issue) begin
            if (kx == cfg_kw - 1'b1) begin
                kx <= {DIM_W{1'b0}};
                tx <= {OFF_W{1'b0}};
                ky <= ky + 1'b1;
                ty <= ty + $signed({{(OFF_W-DIM_W){1'b0}}, cfg_dil_y});
                trow <= trow + $signed(cfg_dil_row);
            end else begin
                kx <= kx + 1'b1;
                tx <= tx + $signed({{(OFF_W-DIM_W){1'b0}}, cfg_dil_x});
            end
        end
    end
    // the window's origin: the pixel walk's, or the interpolation's source pixel
    wire signed [OFF_W-1:0] org_y = lerp ? $signed({{(OFF_W-LI_W){ly[LI_W-1]}}, ly})
                                         : $signed({{(OFF_W-DIM_W-1){win_y0[DIM_W]}}, win_y0});
    wire signed [OFF_W-1:0] org_x = lerp ? $signed({{(OFF_W-LI_W){lx[LI_W-1]}}, lx})
                                         : $signed({{(OFF_W-DIM_W-1){win_x0[DIM_W]}}, win_x0});
    wire signed [OFF_W-1:0] tap_y = org_y + ty;
    wire signed [OFF_W-1:0] tap_x = org_x + tx;
    wire signed [OFF_W-1:0] tap_pix = (lerp ? l_row + org_x : win_pix) + trow + tx;
    // OP_LERP: the tap's weight
    localparam integer LW_W = 2 * DIM_W + 2;
    wire [DIM_W:0] wt_y = (ky != {DIM_W{1'b0}}) ? wr_y : den_y - wr_y;
    wire [DIM_W:0] wt_x = (kx != {DIM_W{1'b0}}) ? wr_x : den_x - wr_x;
    wire [LW_W-1:0] weight = pick ? {{(LW_W-1){1'b0}}, 1'b1} : wt_y * wt_x;
    function automatic in_range(input signed [OFF_W-1:0] v, input signed [OFF_W-1:0] lo, input signed [OFF_W-1:0] hi);
        in_range = v >= lo && v < hi;
    endfunction
    wire signed [OFF_W-1:0] in_h_s = $signed({{(OFF_W-DIM_W){1'b0}}, cfg_in_h});
    wire signed [OFF_W-1:0] in_w_s = $signed({{(OFF_W-DIM_W){1'b0}}, cfg_in_w});
    wire on_map = !window || (in_range(tap_y, {OFF_W{1'b0}}, in_h_s) && in_range(tap_x, {OFF_W{1'b0}}, in_w_s));
    wire counted = in_range(tap_y, $signed({{(OFF_W-DIM_W-1){cfg_cnt_y0[DIM_W]}}, cfg_cnt_y0}),
                          $signed({{(OFF_W-DIM_W-1){cfg_cnt_y1[DIM_W]}}, cfg_cnt_y1}))
                && in_range(tap_x, $signed({{(OFF_W-DIM_W-1){cfg_cnt_x0[DIM_W]}}, cfg_cnt_x0}),
                          $signed({{(OFF_W-DIM_W-1){cfg_cnt_x1[DIM_W]}}, cfg_cnt_x1}));

    // the window's count so far (this tap included); at its last tap, the divisor table's index
    localparam integer N_W = 2 * DIM_W + 1;
    reg  [N_W-1:0] count;
    wire [N_W-1:0] count_now = (first_tap ? {N_W{1'b0}} : count) + {{(N_W-1){1'b0}}, counted};
    always @(posedge clk) if (issue) count <= count_now;
    wire [N_W+DIV_AW-1:0] div_index = {{N_W{1'b0}}, cfg_div_base} + {{DIV_AW{1'b0}}, count_now};
    wire [DIV_W-1:0] div_word;
    generate
        if (DIV_DEPTH > 1) begin : g_div
            hg_ram #(.W(DIV_W), .DEPTH(DIV_DEPTH), .INIT(DIV_INIT)) divisors (
                .clk(clk), .we(ld_en[1]), .waddr(ld_addr[DIV_AW-1:0]), .wdata(ld_data[DIV_W-1:0]), .re(1'b1),
                .raddr(div_index[DIV_AW-1:0]), .rdata(div_word));
        end else begin : g_no_div
            assign div_word = {DIV_W{1'b0}};
            wire unused_div = ^div_index[DIV_AW-1:0];
        end
    endgenerate

    // lane c reads channel pass * C + c, in channel slot (channel >> lg) of its bank
    wire [CNT_W+7:0] first_channel = pass * C32[7:0];
    wire [ADDR_W+SRC_W-1:0] p_wide = {{ADDR_W{1'b0}}, src};
    wire [ADDR_W-1:0] pixel = window ? tap_pix[ADDR_W-1:0] : p_wide[ADDR_W-1:0];
    genvar c;
    generate
        for (c = 0; c < C; c = c + 1) begin : g_addr
            localparam [31:0] CI = c;
            wire [CNT_W+7:0] channel = first_channel + CI[CNT_W+7:0];
            wire [CNT_W+7:0] a_slot = channel >> cfg_a_lg;
            wire [CNT_W+7:0] b_slot = channel >> cfg_b_lg;
            wire [ADDR_W+CNT_W+7:0] a_off = a_slot * cfg_stride;
            wire [ADDR_W+CNT_W+7:0] b_off = cfg_b_one ? {{ADDR_W{1'b0}}, b_slot} : b_slot * cfg_stride;
            assign a_addr[c*ADDR_W +: ADDR_W] = cfg_a_base + a_off[ADDR_W-1:0] + pixel;
            assign b_addr[c*ADDR_W +: ADDR_W] = cfg_b_base + b_off[ADDR_W-1:0] + (cfg_b_one ? {ADDR_W{1'b0}} : pixel);
            wire unused_off = ^{a_off[ADDR_W+CNT_W+7:ADDR_W], b_off[ADDR_W+CNT_W+7:ADDR_W]};
        end
    endgenerate

    wire out_now = window ? last_tap : (!global_pool || last_pixel);
    wire [TAG_W-1:0] tag0 = {last_pass && last_pixel, pass, global_pool ? {4*DIM_W+2*PW_W{1'b0}} : {oy, ox, py, px, pi, pj}};

    // (the low V_W bits: the sum stays below 2^31, hlsgen.quant.lower.ACC_LIMIT_BITS)
    function automatic [V_W-1:0] weighted(input signed [P_W-1:0] x, input [LW_W-1:0] w);
        weighted = $signed({{(V_W-P_W){x[P_W-1]}}, x}) * $signed({{(V_W-LW_W){1'b0}}, w});
    endfunction

    function automatic [V_W-1:0] product(input signed [P_W-1:0] a, input signed [P_W-1:0] b);
        reg signed [2*P_W-1:0] ab;
        begin
            ab = a * b;
            product = {{(V_W-2*P_W){ab[2*P_W-1]}}, ab};
        end
    endfunction

    // stage 0: the banks answer; stage 1: centred operands; stage 2: accumulate (pools), multiply or hold
    reg             v0, v1, v2, first0, first1, emit0, emit1, on_map0;
    reg [DIV_W-1:0] div1, div2;
    reg [LW_W-1:0]  lw0, lw1;
    reg [TAG_W-1:0] tag0_r, tag1, tag2;
    reg [C*V_W-1:0] xa1, xb1, va2, vb2;
    integer k;
    always @(posedge clk) begin
        v0 <= issue && !rst;
        first0 <= window ? first_tap : p == {PIX_W{1'b0}} && !(global_pool && cfg_acc);
        on_map0 <= on_map;
        emit0 <= out_now;
        tag0_r <= tag0;
        v1 <= v0 && !rst;
        first1 <= first0;
        emit1 <= emit0;
        tag1 <= tag0_r;
        div1 <= div_word;
        div2 <= div1;
        lw0 <= weight;
        lw1 <= lw0;
        // a tap outside the map adds 0 to a sum and is below every value of a maximum
        for (k = 0; k < C; k = k + 1) begin
            if (!on_map0) xa1[k*V_W +: V_W] <= max_op ? {1'b1, {(V_W-1){1'b0}}} : {V_W{1'b0}};
            else xa1[k*V_W +: V_W] <= $signed({{(V_W-D_W){cfg_a_signed & a_data[k*D_W + D_W - 1]}}, a_data[k*D_W +: D_W]})
                                 - $signed({{(V_W-Z_W){cfg_a_zp[Z_W-1]}}, cfg_a_zp});
            xb1[k*V_W +: V_W] <= $signed({{(V_W-D_W){cfg_b_signed & b_data[k*D_W + D_W - 1]}}, b_data[k*D_W +: D_W]})
                                 - $signed({{(V_W-Z_W){cfg_b_zp[Z_W-1]}}, cfg_b_zp});
        end
        v2 <= v1 && emit1 && !rst;
        tag2 <= tag1;
        if (v1) begin
            for (k = 0; k < C; k = k + 1) begin
                if (lerp)
                    va2[k*V_W +: V_W] <= (first1 ? {V_W{1'b0}} : va2[k*V_W +: V_W]) + weighted(xa1[k*V_W +: P_W], lw1);
                else if (sum_op)
                    va2[k*V_W +: V_W] <= (first1 ? {V_W{1'b0}} : va2[k*V_W +: V_W]) + xa1[k*V_W +: V_W];
                else if (max_op)
                    va2[k*V_W +: V_W] <= (first1 || $signed(xa1[k*V_W +: V_W]) > $signed(va2[k*V_W +: V_W]))
                                         ? xa1[k*V_W +: V_W] : va2[k*V_W +: V_W];
                else if (cfg_op == OP_MUL)
                    va2[k*V_W +: V_W] <= product(xa1[k*V_W +: P_W], xb1[k*V_W +: P_W]);
                else
                    va2[k*V_W +: V_W] <= xa1[k*V_W +: V_W];
            end
            vb2 <= xb1;
        end
    end

    wire [VM_W-1:0] mb = (cfg_op == OP_ADD) ? cfg_mb : {VM_W{1'b0}};
    wire [VM_W-1:0] ma = (cfg_op == OP_WAVG) ? div2[DIV_MULT_LSB +: VM_W] : cfg_ma;
    wire [S_W-1:0] shift = (cfg_op == OP_WAVG) ? div2[DIV_SHIFT_LSB +: S_W] : cfg_shift;
    generate
        for (c = 0; c < C; c = c + 1) begin : g_lane
            wire [V_W-1:0] index = va2[c*V_W +: V_W] + {{(V_W-LUT_AW){1'b0}}, cfg_lut_base};
            hg_vector_lane #(.V_W(V_W), .M_W(VM_W), .S_W(S_W), .Z_W(Z_W), .D_W(D_W), .LUT_DEPTH(LUT_DEPTH), .LUT_INIT(LUT_INIT)) lane (
                .clk(clk), .lookup(cfg_op == OP_LUT), .lut_addr(index[LUT_AW-1:0]), .lut_we(ld_en[0]),
                .lut_waddr(ld_addr[LUT_AW-1:0]), .lut_wdata(ld_data[D_W-1:0]),
                .va(va2[c*V_W +: V_W]), .vb(vb2[c*V_W +: V_W]), .ma(ma), .mb(mb), .shift(shift),
                .zp(cfg_zp), .lo(cfg_lo), .hi(cfg_hi), .q(o_data[c*D_W +: D_W]));
            wire unused_index = ^index[V_W-1:LUT_AW];
        end
    endgenerate

    wire [TAG_W-1:0] o_tag;
    hg_delay #(.W(1 + TAG_W), .D(7)) align (.clk(clk), .d({v2 && !rst, tag2}), .q({o_valid, o_tag}));
    assign o_last = o_tag[TAG_W-1];
    assign o_cblk = o_tag[TAG_W-2 -: CNT_W];
    assign {o_oy, o_ox, o_py, o_px, o_pi, o_pj} = o_tag[4*DIM_W+2*PW_W-1:0];

    wire unused_ld = ^{ld_en, ld_addr, ld_data};
    wire unused = ^{p_wide[ADDR_W+SRC_W-1:ADDR_W], div_index[N_W+DIV_AW-1:DIV_AW], tap_pix[OFF_W-1:ADDR_W]};
endmodule
`default_nettype wire

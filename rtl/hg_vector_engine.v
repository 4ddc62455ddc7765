// The vector unit (docs/hardware.md): C lanes, one channel per lane, one element per lane per cycle,
// in L = ceil(channels / C) passes over the map's pixels.
//   OP_ADD  QAdd: a from one activation plane, b from the other, one output pixel per input pixel
//   OP_REQ  QRequant (and standalone Relu/Clip): one input
//   OP_LUT  QLut: a table per lane
//   OP_GAVG global average pool: sums over the pass, one output per pass
//   OP_GMAX global max pool: maximum over the pass, one output per pass
// Every op reads output pixel (y, x) from source pixel (y // up_y, x // up_x) of a map src_w wide (factors
// 1 and src_w = w: the same pixel); with OP_REQ as the identity that is nearest upsampling (Resize).
// Pipeline: read (1), centre (1), accumulate/hold (1), lane (3): results reach the writer 6 cycles
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
    parameter integer LUT_AW = (LUT_DEPTH > 1) ? $clog2(LUT_DEPTH) : 1
) (
    input  wire                  clk,
    input  wire                  rst,
    input  wire                  start,
    input  wire [2:0]            cfg_op,
    input  wire [ADDR_W-1:0]     cfg_a_base,
    input  wire [ADDR_W-1:0]     cfg_b_base,
    input  wire [2:0]            cfg_a_lg,
    input  wire [2:0]            cfg_b_lg,
    input  wire [ADDR_W-1:0]     cfg_stride,    // H * W: one channel slot of the inputs
    input  wire [DIM_W-1:0]      cfg_w,
    input  wire [PIX_W-1:0]      cfg_pixels,    // H * W
    input  wire [UP_W-1:0]       cfg_up_x,      // upsampling factors minus one
    input  wire [UP_W-1:0]       cfg_up_y,
    input  wire [DIM_W-1:0]      cfg_src_w,     // width of the map read
    input  wire [CNT_W-1:0]      cfg_passes,
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
    // activation memory: lane c reads bank c of the a plane and of the b plane
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
    localparam [2:0] OP_ADD = 3'd0, OP_LUT = 3'd2, OP_GAVG = 3'd3, OP_GMAX = 3'd4;  // 1: OP_REQ
    localparam integer V_W = 32;
    localparam integer TAG_W = 1 + CNT_W + 4 * DIM_W + 2 * PW_W;
    localparam [UP_W-1:0] UP_0 = {UP_W{1'b0}};
    localparam [31:0] C32 = C;

    wire global_pool = cfg_op == OP_GAVG || cfg_op == OP_GMAX;

    // ---- passes over the pixels -------------------------------------------------------------------
    reg             busy;
    reg [CNT_W-1:0] pass;
    reg [PIX_W-1:0] p;
    wire last_pixel = p == cfg_pixels - 1'b1;
    wire last_pass = pass == cfg_passes - 1'b1;
    wire issue = busy;

    always @(posedge clk) begin
        if (rst) begin
            busy <= 1'b0;
        end else if (start && !busy) begin
            busy <= 1'b1;
            pass <= {CNT_W{1'b0}};
            p <= {PIX_W{1'b0}};
        end else if (busy) begin
            p <= p + 1'b1;
            if (last_pixel) begin
                p <= {PIX_W{1'b0}};
                pass <= pass + 1'b1;
                if (last_pass) busy <= 1'b0;
            end
        end
    end

    // the source pixel: a column and a row offset that advance once per up_x columns / up_y rows
    reg [DIM_W-1:0] col, src_col;
    reg [UP_W-1:0]  jx, jy;
    localparam integer SRC_W = (PIX_W > DIM_W ? PIX_W : DIM_W) + 1;
    reg [SRC_W-1:0] src_row;
    wire restart = (start && !busy) || (issue && last_pixel);
    always @(posedge clk) begin
        if (restart) begin
            col <= {DIM_W{1'b0}};
            src_col <= {DIM_W{1'b0}};
            src_row <= {SRC_W{1'b0}};
            jx <= UP_0;
            jy <= UP_0;
        end else if (issue) begin
            if (col == cfg_w - 1'b1) begin
                col <= {DIM_W{1'b0}};
                src_col <= {DIM_W{1'b0}};
                jx <= UP_0;
                jy <= (jy == cfg_up_y) ? UP_0 : jy + 1'b1;
                if (jy == cfg_up_y) src_row <= src_row + {{(SRC_W-DIM_W){1'b0}}, cfg_src_w};
            end else begin
                col <= col + 1'b1;
                jx <= (jx == cfg_up_x) ? UP_0 : jx + 1'b1;
                if (jx == cfg_up_x) src_col <= src_col + 1'b1;
            end
        end
    end
    wire [SRC_W-1:0] src = src_row + {{(SRC_W-DIM_W){1'b0}}, src_col};

    wire [DIM_W-1:0] oy, ox, py, px;
    wire [PW_W-1:0] pi, pj;
    wire signed [DIM_W:0] unused_y0, unused_x0;
    wire signed [OFF_W-1:0] unused_pix;
    hg_pixel_walk #(.DIM_W(DIM_W), .OFF_W(OFF_W), .ST_W(ST_W), .PW_W(PW_W)) walk (
        .clk(clk), .init((start && !busy) || (issue && last_pixel)), .step(issue), .save(1'b0), .restore(1'b0),
        .out_w(cfg_w), .sx({{(ST_W-1){1'b0}}, 1'b1}), .sy({{(ST_W-1){1'b0}}, 1'b1}), .x0_first({(DIM_W+1){1'b0}}), .y0_first({(DIM_W+1){1'b0}}),
        .pix_first({OFF_W{1'b0}}), .row_step({OFF_W{1'b0}}), .pool_kh(cfg_pool_kh), .pool_kw(cfg_pool_kw),
        .oy(oy), .ox(ox), .y0(unused_y0), .x0(unused_x0), .pix(unused_pix), .py(py), .px(px), .pi(pi), .pj(pj));

    // lane c reads channel pass * C + c, in channel slot (channel >> lg) of its bank
    wire [CNT_W+7:0] first_channel = pass * C32[7:0];
    wire [ADDR_W+SRC_W-1:0] p_wide = {{ADDR_W{1'b0}}, src};
    genvar c;
    generate
        for (c = 0; c < C; c = c + 1) begin : g_addr
            localparam [31:0] CI = c;
            wire [CNT_W+7:0] channel = first_channel + CI[CNT_W+7:0];
            wire [CNT_W+7:0] a_slot = channel >> cfg_a_lg;
            wire [CNT_W+7:0] b_slot = channel >> cfg_b_lg;
            wire [ADDR_W+CNT_W+7:0] a_off = a_slot * cfg_stride;
            wire [ADDR_W+CNT_W+7:0] b_off = b_slot * cfg_stride;
            assign a_addr[c*ADDR_W +: ADDR_W] = cfg_a_base + a_off[ADDR_W-1:0] + p_wide[ADDR_W-1:0];
            assign b_addr[c*ADDR_W +: ADDR_W] = cfg_b_base + b_off[ADDR_W-1:0] + p_wide[ADDR_W-1:0];
            wire unused_off = ^{a_off[ADDR_W+CNT_W+7:ADDR_W], b_off[ADDR_W+CNT_W+7:ADDR_W]};
        end
    endgenerate

    wire out_now = !global_pool || last_pixel;
    wire [TAG_W-1:0] tag0 = {last_pass && last_pixel, pass, global_pool ? {4*DIM_W+2*PW_W{1'b0}} : {oy, ox, py, px, pi, pj}};

    // stage 0: the banks answer; stage 1: centred operands; stage 2: accumulate (pools) or hold
    reg             v0, v1, v2, first0, first1, emit0, emit1;
    reg [TAG_W-1:0] tag0_r, tag1, tag2;
    reg [C*V_W-1:0] xa1, xb1, va2, vb2;
    integer k;
    always @(posedge clk) begin
        v0 <= issue && !rst;
        first0 <= p == {PIX_W{1'b0}};
        emit0 <= out_now;
        tag0_r <= tag0;
        v1 <= v0 && !rst;
        first1 <= first0;
        emit1 <= emit0;
        tag1 <= tag0_r;
        for (k = 0; k < C; k = k + 1) begin
            xa1[k*V_W +: V_W] <= $signed({{(V_W-D_W){cfg_a_signed & a_data[k*D_W + D_W - 1]}}, a_data[k*D_W +: D_W]})
                                 - $signed({{(V_W-Z_W){cfg_a_zp[Z_W-1]}}, cfg_a_zp});
            xb1[k*V_W +: V_W] <= $signed({{(V_W-D_W){cfg_b_signed & b_data[k*D_W + D_W - 1]}}, b_data[k*D_W +: D_W]})
                                 - $signed({{(V_W-Z_W){cfg_b_zp[Z_W-1]}}, cfg_b_zp});
        end
        v2 <= v1 && emit1 && !rst;
        tag2 <= tag1;
        if (v1) begin
            for (k = 0; k < C; k = k + 1) begin
                if (cfg_op == OP_GAVG)
                    va2[k*V_W +: V_W] <= (first1 ? {V_W{1'b0}} : va2[k*V_W +: V_W]) + xa1[k*V_W +: V_W];
                else if (cfg_op == OP_GMAX)
                    va2[k*V_W +: V_W] <= (first1 || $signed(xa1[k*V_W +: V_W]) > $signed(va2[k*V_W +: V_W]))
                                         ? xa1[k*V_W +: V_W] : va2[k*V_W +: V_W];
                else
                    va2[k*V_W +: V_W] <= xa1[k*V_W +: V_W];
            end
            vb2 <= xb1;
        end
    end

    wire [VM_W-1:0] mb = (cfg_op == OP_ADD) ? cfg_mb : {VM_W{1'b0}};
    generate
        for (c = 0; c < C; c = c + 1) begin : g_lane
            wire [V_W-1:0] index = va2[c*V_W +: V_W] + {{(V_W-LUT_AW){1'b0}}, cfg_lut_base};
            hg_vector_lane #(.V_W(V_W), .M_W(VM_W), .S_W(S_W), .Z_W(Z_W), .D_W(D_W), .LUT_DEPTH(LUT_DEPTH), .LUT_INIT(LUT_INIT)) lane (
                .clk(clk), .lookup(cfg_op == OP_LUT), .lut_addr(index[LUT_AW-1:0]),
                .va(va2[c*V_W +: V_W]), .vb(vb2[c*V_W +: V_W]), .ma(cfg_ma), .mb(mb), .shift(cfg_shift),
                .zp(cfg_zp), .lo(cfg_lo), .hi(cfg_hi), .q(o_data[c*D_W +: D_W]));
            wire unused_index = ^index[V_W-1:LUT_AW];
        end
    endgenerate

    wire [TAG_W-1:0] o_tag;
    hg_delay #(.W(1 + TAG_W), .D(3)) align (.clk(clk), .d({v2 && !rst, tag2}), .q({o_valid, o_tag}));
    assign o_last = o_tag[TAG_W-1];
    assign o_cblk = o_tag[TAG_W-2 -: CNT_W];
    assign {o_oy, o_ox, o_py, o_px, o_pi, o_pj} = o_tag[4*DIM_W+2*PW_W-1:0];

    wire unused = ^{unused_y0, unused_x0, unused_pix, p_wide[ADDR_W+SRC_W-1:ADDR_W]};
endmodule
`default_nettype wire

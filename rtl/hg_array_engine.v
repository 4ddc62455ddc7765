// Runs one Conv or Dense layer on the systolic array (docs/hardware.md, "The systolic array").
//
// Loop order: for spatial tile, for column tile, for row tile: stream the tile's pixels, one window
// vector per cycle. A tile occupies max(P_t, R) cycles: while it streams, the next tile's weights load
// into the other weight bank (R cycles, one row per cycle), and its taps load from the tap table.
// The first tile's weights load first (R cycles). Dot products leave the array into the accumulator;
// the last row tile's sums go through the requantizer to the writer, with their pixel and channel
// block. Every stage is a fixed pipeline. With EXT_WEIGHTS the weights come from hg_weight_dma's two tile
// slots instead of the ROM: a load waits until the oldest slot is full, and a tile lasts until the next tile's
// load is R - 1 cycles in (on chip that is always within max(P_t, R), so on-chip cycles do not change).
// With WRAM_DEPTH too (the target's top) a weight RAM sits beside the slots: a program whose weights fit it
// has them written there at its load (wr_*) and runs with `w_onchip` high, as from the ROM.
// A row that runs while the input still streams in (docs/rtl.md, "The first row under the input stream")
// starts a spatial tile only once `in_avail`, the input elements written so far, reaches what the tile reads:
// `need0` for the first spatial tile, `need_step` more for each next one (tiles of whole output rows). Every
// other row sees in_avail all ones.
`default_nettype none
module hg_array_engine #(
    parameter integer R = 4,
    parameter integer C = 4,
    parameter integer W_W = 8,       // the PEs' weights (the widest layer's)
    parameter integer WB_W = 4,      // a layer's weight width (holds W_W)
    parameter integer WS = 8,        // weight slices per ROM word (hg_weight_rom)
    parameter integer P_W = 32,
    parameter integer D_W = 8,
    parameter integer Z_W = 10,
    parameter integer DIM_W = 8,
    parameter integer ADDR_W = 12,
    parameter integer OFF_W = 18,
    parameter integer CNT_W = 10,
    parameter integer PIX_W = 10,
    parameter integer ST_W = 4,      // strides
    parameter integer PW_W = 4,      // fused pooling windows
    // the layouts of hlsgen/rtl/words.py (the generated top sets them)
    parameter integer M_W = 16,
    parameter integer S_W = 6,
    parameter integer PAR_SHIFT_LSB = 0,
    parameter integer PAR_NEG_LSB = PAR_SHIFT_LSB + S_W,
    parameter integer PAR_MULT_LSB = PAR_NEG_LSB + M_W,
    parameter integer PAR_BIAS_LSB = PAR_MULT_LSB + M_W,
    parameter integer PAR_W = PAR_BIAS_LSB + P_W,
    parameter integer TAP_OFF_LSB = 0,
    parameter integer TAP_DX_LSB = TAP_OFF_LSB + ADDR_W,
    parameter integer TAP_DY_LSB = TAP_DX_LSB + DIM_W,
    parameter integer TAP_VALID_LSB = TAP_DY_LSB + DIM_W,
    parameter integer TAP_W = TAP_VALID_LSB + 1,
    parameter integer ACC_DEPTH = 512,
    parameter integer WROM_DEPTH = 64,
    parameter WROM_INIT = "",
    parameter integer EXT_WEIGHTS = 0,    // 1: weights from hg_weight_dma (wx_*), no ROM
    parameter integer WRAM_DEPTH = 0,     // EXT_WEIGHTS: words of a loaded weight RAM beside the slots (0: none)
    parameter integer TAP_DEPTH = 8,
    parameter TAP_INIT = "",
    parameter integer PAR_DEPTH = 8,
    parameter PAR_INIT = "",
    parameter integer DW_BANKS = 0,       // banks of the depthwise window memory (0: no depthwise layer; else R)
    parameter integer DW_DEPTH = 1,
    // derived
    parameter integer A_W = D_W + 1,
    parameter integer WROM_AW = (WROM_DEPTH > 1) ? $clog2(WROM_DEPTH) : 1,
    parameter integer WSA_W = WROM_AW + ((WS > 1) ? $clog2(WS) : 1),   // weight slice addresses
    parameter integer TAP_AW = (TAP_DEPTH > 1) ? $clog2(TAP_DEPTH) : 1,
    parameter integer PAR_AW = (PAR_DEPTH > 1) ? $clog2(PAR_DEPTH) : 1,
    parameter integer ACC_AW = (ACC_DEPTH > 1) ? $clog2(ACC_DEPTH) : 1,
    parameter integer ROW_W = (R > 1) ? $clog2(R) : 1,
    parameter integer TAG_W = 3 + CNT_W + PIX_W + 4 * DIM_W + 2 * PW_W,
    parameter integer LD_AW = (TAP_AW > PAR_AW) ? TAP_AW : PAR_AW,
    parameter integer WRAM_AW = (WRAM_DEPTH > 1) ? $clog2(WRAM_DEPTH) : 1,
    parameter integer LD_W = (R * TAP_W > C * PAR_W) ? R * TAP_W : C * PAR_W
) (
    input  wire                   clk,
    input  wire                   rst,
    input  wire                   start,
    // the input stream's progress (all ones once it is complete) and what the spatial tiles read of it
    input  wire [31:0]            in_avail,
    input  wire [31:0]            need0,
    input  wire [31:0]            need_step,
    // layer configuration, stable while the layer runs
    input  wire [ADDR_W-1:0]      cfg_in_base,
    input  wire [DIM_W-1:0]       cfg_in_h,
    input  wire [DIM_W-1:0]       cfg_in_w,
    input  wire [DIM_W-1:0]       cfg_out_w,
    input  wire [ST_W-1:0]        cfg_sx,
    input  wire [ST_W-1:0]        cfg_sy,
    input  wire signed [DIM_W:0]  cfg_x0,
    input  wire signed [DIM_W:0]  cfg_y0,
    input  wire signed [OFF_W-1:0] cfg_pix0,
    input  wire [OFF_W-1:0]       cfg_row_step,
    input  wire [PW_W-1:0]        cfg_pool_kh,
    input  wire [PW_W-1:0]        cfg_pool_kw,
    input  wire signed [Z_W-1:0]  cfg_in_zp,
    input  wire                   cfg_in_signed,
    input  wire [CNT_W-1:0]       cfg_tr,        // row tiles
    input  wire [CNT_W-1:0]       cfg_tc,        // column tiles
    input  wire [CNT_W-1:0]       cfg_ts,        // spatial tiles
    input  wire [PIX_W-1:0]       cfg_pt,        // pixels per spatial tile
    input  wire [PIX_W-1:0]       cfg_pt_last,   // pixels of the last spatial tile
    input  wire [WSA_W-1:0]       cfg_w_base,    // the layer's first weight slice
    input  wire [WB_W-1:0]        cfg_w_bits,    // its weights' width: a row is cfg_w_bits slices
    input  wire [TAP_AW-1:0]      cfg_tap_base,
    input  wire [PAR_AW-1:0]      cfg_par_base,
    input  wire                   cfg_neg,
    input  wire signed [Z_W-1:0]  cfg_zp,
    input  wire signed [Z_W-1:0]  cfg_lo,
    input  wire signed [Z_W-1:0]  cfg_hi,
    input  wire                   cfg_dw,        // depthwise mode
    input  wire [ADDR_W-1:0]      cfg_dw_base,   // the input's place in the depthwise window memory
    input  wire [ADDR_W-1:0]      cfg_in_slot,   // H * W of the input: one channel block
    // the writer's writes into depthwise inputs
    input  wire                   dw_wr_en,
    input  wire [ADDR_W-1:0]      dw_wr_addr,
    input  wire [C*D_W-1:0]       dw_wr_data,
    // EXT_WEIGHTS: the tile slots of hg_weight_dma (the engine reads the oldest, which may hold the next tile)
    input  wire                   wx_ready,
    output wire                   wx_release,
    output wire [WSA_W-1:0]       wx_addr,
    input  wire [C*W_W-1:0]       wx_data,
    // WRAM_DEPTH: the program's weights are in the weight RAM, which wr_* fill at its load
    input  wire                   w_onchip,
    input  wire                   wr_en,
    input  wire [WRAM_AW-1:0]     wr_addr,
    input  wire [C*WS-1:0]        wr_data,
    // table loads (hg_program_loader): ld_en[0] writes a tap word, ld_en[1] a parameter word; tied to zero
    // where the tables are the model's ROMs
    input  wire [1:0]             ld_en,
    input  wire [LD_AW-1:0]       ld_addr,
    input  wire [LD_W-1:0]        ld_data,
    // activation memory: lane r reads bank r (one cycle of latency)
    output wire [R*ADDR_W-1:0]    rd_addr,
    input  wire [R*D_W-1:0]       rd_data,
    // results, in pixel order per channel block
    output wire                   o_valid,
    output wire                   o_last,
    output wire [CNT_W-1:0]       o_cblk,
    output wire [DIM_W-1:0]       o_oy,
    output wire [DIM_W-1:0]       o_ox,
    output wire [DIM_W-1:0]       o_py,
    output wire [DIM_W-1:0]       o_px,
    output wire [PW_W-1:0]        o_pi,
    output wire [PW_W-1:0]        o_pj,
    output wire [C*D_W-1:0]       o_data
);
    localparam [1:0] S_IDLE = 2'd0, S_LOAD = 2'd1, S_RUN = 2'd2;
    localparam [31:0] R32 = R;
    localparam [PIX_W-1:0] R_PIX = R32[PIX_W-1:0];
    localparam [ROW_W-1:0] ROW_LAST = R32[ROW_W-1:0] - 1'b1;

    // ---- tile schedule ------------------------------------------------------------------------
    reg [1:0]       state;
    reg [PIX_W-1:0] tcnt;
    reg [CNT_W-1:0] rt, ct, st;
    reg [ADDR_W-1:0] slot_off;   // depthwise: the column tile's channel block in the input
    reg [WSA_W-1:0] wt;     // first weight slice of the current tile
    reg             bank;

    wire last_rt = rt == cfg_tr - 1'b1;
    wire last_ct = ct == cfg_tc - 1'b1;
    wire last_st = st == cfg_ts - 1'b1;
    wire last_tile = last_rt && last_ct && last_st;
    wire [PIX_W-1:0] p_t = last_st ? cfg_pt_last : cfg_pt;
    wire [PIX_W-1:0] period = (p_t > R_PIX) ? p_t : R_PIX;
    wire running = state == S_RUN;
    // the next tile's weights: the load starts once its slot is full (always, from the ROM), and the tiles
    // may switch R - 1 cycles after it started
    reg              loaded;
    reg [ROW_W-1:0]  ld_wait;
    wire next_ready = EXT_WEIGHTS == 0 || (WRAM_DEPTH != 0 && w_onchip) || wx_ready;
    wire switch_ok = loaded && ld_wait == {ROW_W{1'b0}};
    reg  [31:0]      need;   // input elements the next spatial tile reads
    wire input_ok = in_avail >= need;
    wire period_end = (tcnt == period - 1'b1 || tcnt == period)
                      && (last_tile || (switch_ok && (!(last_rt && last_ct) || input_ok)));
    wire issue = running && tcnt < p_t;
    wire next_new_spatial = last_rt && last_ct;
    wire [CNT_W-1:0] n_rt = last_rt ? {CNT_W{1'b0}} : rt + 1'b1;
    wire [WSA_W+31:0] tile_slices = {{WSA_W{1'b0}}, R32} * {{(WSA_W+32-WB_W){1'b0}}, cfg_w_bits};
    wire [WSA_W-1:0] n_wt = next_new_spatial ? cfg_w_base : wt + tile_slices[WSA_W-1:0];
    wire boot = state == S_IDLE && start;
    wire advance = running && period_end && !last_tile;
    wire load_end = state == S_LOAD && switch_ok && input_ok;
    // the first tile's weights and taps load at the start, the next tile's in every period but the last one
    wire first_load = (boot || (state == S_LOAD && !loaded)) && next_ready;
    wire prefetch = running && !loaded && !last_tile && next_ready;
    wire load_go = first_load || prefetch;

    always @(posedge clk) begin
        if (rst) begin
            state <= S_IDLE;
        end else begin
            case (state)
                S_IDLE: if (start) begin
                    state <= S_LOAD;
                    tcnt <= {PIX_W{1'b0}};
                    {rt, ct, st} <= {3*CNT_W{1'b0}};
                    wt <= cfg_w_base;
                    slot_off <= {ADDR_W{1'b0}};
                    bank <= 1'b0;
                end
                S_LOAD: if (load_end) begin
                    state <= S_RUN;
                    tcnt <= {PIX_W{1'b0}};
                end
                default: begin
                    if (tcnt != period) tcnt <= tcnt + 1'b1;   // past the pixels, it waits for the weights
                    if (period_end) begin
                        tcnt <= {PIX_W{1'b0}};
                        if (last_tile) begin
                            state <= S_IDLE;
                        end else begin
                            rt <= n_rt;
                            if (last_rt) ct <= last_ct ? {CNT_W{1'b0}} : ct + 1'b1;
                            if (next_new_spatial) st <= st + 1'b1;
                            if (next_new_spatial) slot_off <= {ADDR_W{1'b0}};
                            else if (last_rt) slot_off <= slot_off + cfg_in_slot;
                            wt <= n_wt;
                            bank <= !bank;
                        end
                    end
                end
            endcase
        end
    end

    always @(posedge clk) begin
        if (boot) need <= need0;
        else if (load_end || (advance && next_new_spatial)) need <= need + need_step;
    end

    always @(posedge clk) begin
        if (rst || load_end || advance) begin
            loaded <= 1'b0;
        end else if (load_go) begin
            loaded <= 1'b1;
            ld_wait <= first_load ? ROW_LAST : ROW_LAST - 1'b1;   // the first load ends S_LOAD a cycle later
        end else if (ld_wait != {ROW_W{1'b0}}) begin
            ld_wait <= ld_wait - 1'b1;
        end
    end

    // ---- weights: R rows of the next tile into the idle bank --------------------------------------
    reg             wl_active;
    reg [ROW_W-1:0] wl_row;
    reg [WSA_W-1:0] w_addr;
    reg             wl_bank;
    reg             w_we, w_we_1;   // the weight memories answer two cycles after the address
    reg [ROW_W-1:0] w_row, w_row_1;
    reg             w_bank, w_bank_1;
    wire [C*W_W-1:0] w_data;

    always @(posedge clk) begin
        if (rst) begin
            wl_active <= 1'b0;
            w_we_1 <= 1'b0;
            w_we <= 1'b0;
        end else begin
            if (load_go) begin
                wl_active <= 1'b1;
                wl_row <= {ROW_W{1'b0}};
                w_addr <= running ? n_wt : cfg_w_base;
                wl_bank <= running && !bank;
            end else if (wl_active) begin
                wl_row <= wl_row + 1'b1;
                w_addr <= w_addr + {{(WSA_W-WB_W){1'b0}}, cfg_w_bits};
                if (wl_row == ROW_LAST) wl_active <= 1'b0;
            end
            w_we_1 <= wl_active;
            w_row_1 <= wl_row;
            w_bank_1 <= wl_bank;
            w_we <= w_we_1;
            w_row <= w_row_1;
            w_bank <= w_bank_1;
        end
    end

    assign wx_release = wl_active && wl_row == ROW_LAST && !(WRAM_DEPTH != 0 && w_onchip);
    assign wx_addr = w_addr;
    generate
        if (EXT_WEIGHTS != 0 && WRAM_DEPTH != 0) begin : g_both
            localparam integer RAM_SA_W = WRAM_AW + ((WS > 1) ? $clog2(WS) : 1);
            wire [C*W_W-1:0] ram_data;
            hg_weight_rom #(.C(C), .W_W(W_W), .WB_W(WB_W), .S(WS), .DEPTH(WRAM_DEPTH), .INIT("")) weights (
                .clk(clk), .addr(w_addr[RAM_SA_W-1:0]), .bits(cfg_w_bits), .data(ram_data),
                .we(wr_en), .waddr(wr_addr), .wdata(wr_data));
            assign w_data = w_onchip ? ram_data : wx_data;
        end else if (EXT_WEIGHTS != 0) begin : g_ext
            assign w_data = wx_data;
            wire unused_wram = ^{w_onchip, wr_en, wr_addr, wr_data};
        end else begin : g_rom
            hg_weight_rom #(.C(C), .W_W(W_W), .WB_W(WB_W), .S(WS), .DEPTH(WROM_DEPTH), .INIT(WROM_INIT)) weights (
                .clk(clk), .addr(w_addr), .bits(cfg_w_bits), .data(w_data),
                .we(1'b0), .waddr({WROM_AW{1'b0}}), .wdata({C*WS{1'b0}}));
            wire unused_wx = ^{wx_ready, wx_data, w_onchip, wr_en, wr_addr, wr_data};
        end
    endgenerate

    // ---- taps of the current row tile ------------------------------------------------------------
    // the table's address is registered (the tile counters' logic and the route to the block RAM do not fit
    // one cycle at 125 MHz), so its word arrives two cycles after load_go, well within the R cycles of a load
    reg  [R*TAP_W-1:0] taps;
    wire [R*TAP_W-1:0] tap_word;
    reg                tap_pending, tap_pending_2;
    reg  [R*TAP_W-1:0] taps_next;
    wire [CNT_W+TAP_AW-1:0] n_rt_wide = {{TAP_AW{1'b0}}, n_rt};
    reg  [TAP_AW-1:0]  tap_addr;

    hg_ram #(.W(R * TAP_W), .DEPTH(TAP_DEPTH), .INIT(TAP_INIT)) tap_table (
        .clk(clk), .we(ld_en[0]), .waddr(ld_addr[TAP_AW-1:0]), .wdata(ld_data[R*TAP_W-1:0]), .re(1'b1),
        .raddr(tap_addr), .rdata(tap_word));

    always @(posedge clk) begin
        tap_addr <= cfg_tap_base + (running ? n_rt_wide[TAP_AW-1:0] : {TAP_AW{1'b0}});
        tap_pending <= load_go;
        tap_pending_2 <= tap_pending;
        if (tap_pending_2) taps_next <= tap_word;
        if (load_end || advance) taps <= taps_next;
    end

    // ---- window vectors ----------------------------------------------------------------------------
    wire [R-1:0] in_bounds;
    wire [R*ADDR_W-1:0] window_addr;
    assign rd_addr = window_addr;
    wire [DIM_W-1:0] oy, ox, py, px;
    wire [PW_W-1:0] pi, pj;

    hg_line_buffer #(.R(R), .DIM_W(DIM_W), .ADDR_W(ADDR_W), .OFF_W(OFF_W), .ST_W(ST_W), .PW_W(PW_W),
                     .TAP_OFF_LSB(TAP_OFF_LSB), .TAP_DX_LSB(TAP_DX_LSB), .TAP_DY_LSB(TAP_DY_LSB),
                     .TAP_VALID_LSB(TAP_VALID_LSB), .TAP_W(TAP_W)) window (
        .clk(clk), .init(boot), .step(issue), .save(advance && next_new_spatial),
        .restore(advance && !next_new_spatial),
        .base(cfg_dw ? cfg_dw_base + slot_off : cfg_in_base), .in_h(cfg_in_h), .in_w(cfg_in_w), .out_w(cfg_out_w), .sx(cfg_sx), .sy(cfg_sy),
        .x0_first(cfg_x0), .y0_first(cfg_y0), .pix_first(cfg_pix0), .row_step(cfg_row_step),
        .pool_kh(cfg_pool_kh), .pool_kw(cfg_pool_kw), .taps(taps),
        .addr(window_addr), .in_bounds(in_bounds), .oy(oy), .ox(ox), .py(py), .px(px), .pi(pi), .pj(pj));

    wire layer_last = last_tile && tcnt == p_t - 1'b1;
    wire [TAG_W-1:0] issue_tag = {layer_last, last_rt, rt == {CNT_W{1'b0}}, ct, tcnt, oy, ox, py, px, pi, pj};

    // stage 1: the banks answer; stage 1b: their answer registered (a block RAM's clock-to-output leaves no
    // time for the centring in the same cycle); stage 2: centred values (x - zero point, 0 outside the image)
    reg             v1, v1b, v2, bank1, bank1b, bank2;
    wire [Z_W-1:0]  unused_zp = cfg_in_zp;
    reg [R-1:0]     in1, in1b;
    reg [TAG_W-1:0] tag1, tag1b, tag2;
    reg [R*D_W-1:0] rd1b;
    reg [R*A_W-1:0] a2;
    integer r;
    always @(posedge clk) begin
        v1 <= issue && !rst;
        bank1 <= bank;
        in1 <= in_bounds;
        tag1 <= issue_tag;
        v1b <= v1 && !rst;
        {bank1b, in1b, tag1b} <= {bank1, in1, tag1};
        rd1b <= rd_data;
        v2 <= v1b && !rst;
        bank2 <= bank1b;
        tag2 <= tag1b;
        for (r = 0; r < R; r = r + 1)
            a2[r*A_W +: A_W] <= in1b[r]
                ? {cfg_in_signed & rd1b[r*D_W + D_W - 1], rd1b[r*D_W +: D_W]} - cfg_in_zp[A_W-1:0]
                : {A_W{1'b0}};
    end

    // ---- array, accumulator, requantizer ------------------------------------------------------------
    wire             p_valid;
    wire [TAG_W-1:0] p_tag;
    wire [C*P_W-1:0] p_data;

    wire [R*C*A_W-1:0] dw_data;
    generate
        if (DW_BANKS > 0) begin : g_dw
            hg_dw_window #(.R(R), .C(C), .D_W(D_W), .ADDR_W(ADDR_W), .BANKS(DW_BANKS), .DEPTH(DW_DEPTH),
                           .Z_W(Z_W)) dw_window (
                .clk(clk), .addr(window_addr), .in_bounds(in_bounds), .in_signed(cfg_in_signed), .in_zp(cfg_in_zp),
                .wr_en(dw_wr_en), .wr_addr(dw_wr_addr), .wr_data(dw_wr_data), .dw_data(dw_data));
        end else begin : g_no_dw
            assign dw_data = {R{ {C*A_W{1'b0}} }};   // R*C*A_W bits in one replication exceed lint's limit on 32x32
            wire unused_dw = ^{dw_wr_en, dw_wr_addr, dw_wr_data};
        end
    endgenerate

    hg_systolic_array #(.R(R), .C(C), .A_W(A_W), .W_W(W_W), .P_W(P_W), .TAG_W(TAG_W)) array (
        .clk(clk), .w_we(w_we), .w_bank(w_bank), .w_row(w_row), .w_data(w_data),
        .dw_mode(cfg_dw), .dw_data(dw_data),
        .a_valid(v2), .a_bank(bank2), .a_tag(tag2), .a_data(a2),
        .p_valid(p_valid), .p_tag(p_tag), .p_data(p_data));

    wire [CNT_W+PAR_AW-1:0] p_ct = {{PAR_AW{1'b0}}, p_tag[TAG_W-4 -: CNT_W]};
    wire [PIX_W+ACC_AW-1:0] p_pix = {{ACC_AW{1'b0}}, p_tag[TAG_W-4-CNT_W -: PIX_W]};
    wire [C*PAR_W-1:0] par;
    hg_ram #(.W(C * PAR_W), .DEPTH(PAR_DEPTH), .INIT(PAR_INIT)) params (
        .clk(clk), .we(ld_en[1]), .waddr(ld_addr[PAR_AW-1:0]), .wdata(ld_data[C*PAR_W-1:0]), .re(1'b1),
        .raddr(cfg_par_base + p_ct[PAR_AW-1:0]), .rdata(par));
    wire unused_ld = ^{ld_addr, ld_data};

    wire [C*P_W-1:0] bias;
    reg  [C*M_W-1:0] mult2, neg2, mult3, neg3;   // per lane, aligned with the sums (3 cycles after p_valid)
    reg  [C*S_W-1:0] shift2, shift3;
    genvar c;
    generate
        for (c = 0; c < C; c = c + 1) begin : g_par
            assign bias[c*P_W +: P_W] = par[c*PAR_W + PAR_BIAS_LSB +: P_W];
            always @(posedge clk) begin
                mult2[c*M_W +: M_W] <= par[c*PAR_W + PAR_MULT_LSB +: M_W];
                neg2[c*M_W +: M_W] <= par[c*PAR_W + PAR_NEG_LSB +: M_W];
                shift2[c*S_W +: S_W] <= par[c*PAR_W + PAR_SHIFT_LSB +: S_W];
                {mult3[c*M_W +: M_W], neg3[c*M_W +: M_W], shift3[c*S_W +: S_W]}
                    <= {mult2[c*M_W +: M_W], neg2[c*M_W +: M_W], shift2[c*S_W +: S_W]};
            end
        end
    endgenerate

    wire             s_valid;
    wire [C*P_W-1:0] s_data;
    reg  [TAG_W-1:0] tag_a1, tag_a2, tag_a3;
    always @(posedge clk) begin
        tag_a1 <= p_tag;
        tag_a2 <= tag_a1;
        tag_a3 <= tag_a2;
    end

    hg_accumulator #(.C(C), .P_W(P_W), .DEPTH(ACC_DEPTH)) accumulator (
        .clk(clk), .p_valid(p_valid), .p_addr(p_pix[ACC_AW-1:0]), .p_first(p_tag[TAG_W-3]),
        .p_last(p_tag[TAG_W-2]), .p_data(p_data), .bias(bias), .s_valid(s_valid), .s_data(s_data));

    generate
        for (c = 0; c < C; c = c + 1) begin : g_requant
            hg_requant #(.P_W(P_W), .M_W(M_W), .S_W(S_W), .Z_W(Z_W), .D_W(D_W)) requant (
                .clk(clk), .acc(s_data[c*P_W +: P_W]), .mult(mult3[c*M_W +: M_W]),
                .mult_neg(neg3[c*M_W +: M_W]), .use_neg(cfg_neg), .shift(shift3[c*S_W +: S_W]),
                .zp(cfg_zp), .lo(cfg_lo), .hi(cfg_hi), .q(o_data[c*D_W +: D_W]));
        end
    endgenerate

    wire [TAG_W-1:0] o_tag;
    hg_delay #(.W(1 + TAG_W), .D(6)) align (.clk(clk), .d({s_valid && !rst, tag_a3}), .q({o_valid, o_tag}));
    assign o_last = o_tag[TAG_W-1];
    assign o_cblk = o_tag[TAG_W-4 -: CNT_W];
    assign {o_oy, o_ox, o_py, o_px, o_pi, o_pj} = o_tag[4*DIM_W+2*PW_W-1:0];

    wire unused_tags = ^{o_tag[TAG_W-2 -: 2], o_tag[TAG_W-4-CNT_W -: PIX_W], p_pix[PIX_W+ACC_AW-1:ACC_AW],
                         tile_slices[WSA_W+31:WSA_W], p_ct[CNT_W+PAR_AW-1:PAR_AW], p_tag[4*DIM_W+2*PW_W-1:0], p_tag[TAG_W-1], n_rt_wide[CNT_W+TAP_AW-1:TAP_AW]};
endmodule
`default_nettype wire

// The depthwise window: in depthwise mode PE(r, c) multiplies tap r of channel c, so every cycle the
// array needs R x C activations, not R. Each feature map that a depthwise layer reads is therefore also
// kept in the window memory: BANKS (= R) wide memories, a word holding the C channels of one pixel, word a
// in bank a mod BANKS at address a / BANKS (the writer and the DMA write every word once, at no cost in
// time). The compiler lays each map out there at a row pitch of its own that puts the taps of every row tile
// in different banks (hlsgen/hw/window_banks.py), so the in-image taps of the pixel being issued are all read
// in that cycle: bank b serves the lowest in-image lane whose tap falls in it. Lane r's word then waits r
// cycles and the byte of column c c more, so PE(r, c) sees its activation exactly when the normal flow would
// have brought it (r + c cycles late).
`default_nettype none
module hg_dw_window #(
    parameter integer R = 4,
    parameter integer C = 4,
    parameter integer D_W = 8,
    parameter integer ADDR_W = 10,
    parameter integer BANKS = 4,     // a power of two: R
    parameter integer DEPTH = 1,     // words per bank
    parameter integer A_W = D_W + 1,
    parameter integer Z_W = 10
) (
    input  wire                  clk,
    // taps of the pixel being issued: lane r's address and whether it lies inside the image
    input  wire [R*ADDR_W-1:0]   addr,
    input  wire [R-1:0]          in_bounds,
    input  wire                  in_signed,
    input  wire signed [Z_W-1:0] in_zp,
    // the writer's (or the DMA's) copy of every word it writes into a depthwise input map
    input  wire                  wr_en,
    input  wire [ADDR_W-1:0]     wr_addr,
    input  wire [C*D_W-1:0]      wr_data,
    output wire [R*C*A_W-1:0]    dw_data
);
    localparam integer LG = $clog2(BANKS);
    localparam integer AW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
    localparam integer SUB_W = ADDR_W - LG;   // holds AW: the program's addresses cover BANKS x DEPTH words
    wire [Z_W-1:0] unused_zp = in_zp;

    // each lane's bank and its address in that bank
    wire [LG-1:0]    bank_of [0:R-1];
    wire [SUB_W-1:0] sub_of  [0:R-1];
    genvar r, b, c;
    generate
        for (r = 0; r < R; r = r + 1) begin : g_lane_addr
            wire [ADDR_W-1:0] a = addr[r*ADDR_W +: ADDR_W];
            assign bank_of[r] = a[LG-1:0];
            assign sub_of[r] = a[ADDR_W-1:LG];
        end
    endgenerate

    wire [LG-1:0]    wr_bank = wr_addr[LG-1:0];
    wire [SUB_W-1:0] wr_sub = wr_addr[ADDR_W-1:LG];
    wire [C*D_W-1:0] word [0:BANKS-1];
    generate
        for (b = 0; b < BANKS; b = b + 1) begin : g_bank
            localparam [31:0] B32 = b;
            reg [SUB_W-1:0] raddr;
            integer k;
            always @* begin
                raddr = {SUB_W{1'b0}};
                for (k = R - 1; k >= 0; k = k - 1)
                    if (in_bounds[k] && bank_of[k] == B32[LG-1:0]) raddr = sub_of[k];
            end
            hg_ram #(.W(C * D_W), .DEPTH(DEPTH)) bank (
                .clk(clk), .we(wr_en && wr_bank == B32[LG-1:0]), .waddr(wr_sub[AW-1:0]), .wdata(wr_data),
                .re(1'b1), .raddr(raddr[AW-1:0]), .rdata(word[b]));
            wire unused_raddr = ^raddr;
        end
    endgenerate
    wire unused_wr = ^wr_sub;

    generate
        for (r = 0; r < R; r = r + 1) begin : g_row
            // the bank's answer (one cycle) is picked and registered before the centring, as the array
            // engine's banks are
            reg [LG-1:0]     bank_1;
            reg              in_1, in_2;
            reg [C*D_W-1:0]  word_2;
            reg [C*A_W-1:0]  centred;
            integer k;
            always @(posedge clk) begin
                bank_1 <= bank_of[r];
                in_1 <= in_bounds[r];
                in_2 <= in_1;
                word_2 <= word[bank_1];
            end
            always @(posedge clk) begin
                for (k = 0; k < C; k = k + 1)
                    centred[k*A_W +: A_W] <= in_2
                        ? {in_signed & word_2[k*D_W + D_W - 1], word_2[k*D_W +: D_W]} - in_zp[A_W-1:0]
                        : {A_W{1'b0}};
            end
            for (c = 0; c < C; c = c + 1) begin : g_col
                hg_delay #(.W(A_W), .D(r + c)) skew (
                    .clk(clk), .d(centred[c*A_W +: A_W]), .q(dw_data[(r*C+c)*A_W +: A_W]));
            end
            wire unused_sub = ^sub_of[r];
        end
    endgenerate
endmodule
`default_nettype wire

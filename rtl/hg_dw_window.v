// The depthwise window: in depthwise mode PE(r, c) multiplies tap r of channel c, so every cycle the
// array needs R x C activations, not R. Each feature map that a depthwise layer reads is therefore also
// kept in COPIES wide memories, one per PE row, a word holding the C channels of one pixel (the
// writer fills them all at once, so they cost no time). PE row r reads its copy at the address of its
// tap, r cycles after the pixel is issued; the byte of column c then waits c more cycles, so PE(r, c)
// sees its activation exactly when the normal flow would have brought it (r + c cycles late).
`default_nettype none
module hg_dw_window #(
    parameter integer R = 4,
    parameter integer C = 4,
    parameter integer D_W = 8,
    parameter integer ADDR_W = 10,
    parameter integer COPIES = 1,
    parameter integer DEPTH = 1,
    parameter integer A_W = D_W + 1,
    parameter integer Z_W = 10
) (
    input  wire                  clk,
    // taps of the pixel being issued: row r's address and whether it lies inside the image
    input  wire [R*ADDR_W-1:0]   addr,
    input  wire [R-1:0]          in_bounds,
    input  wire                  in_signed,
    input  wire signed [Z_W-1:0] in_zp,
    // the writer's copy of every word it writes into a depthwise input map
    input  wire                  wr_en,
    input  wire [ADDR_W-1:0]     wr_addr,
    input  wire [C*D_W-1:0]      wr_data,
    output wire [R*C*A_W-1:0]    dw_data
);
    localparam integer AW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
    wire [Z_W-1:0] unused_zp = in_zp;
    wire [ADDR_W-1:0] unused_wr = wr_addr;

    genvar r, c;
    generate
        for (r = 0; r < R; r = r + 1) begin : g_row
            if (r < COPIES) begin : g_copy
                wire [ADDR_W-1:0] row_addr;
                wire              row_in;
                hg_delay #(.W(ADDR_W + 1), .D(r)) skew (
                    .clk(clk), .d({in_bounds[r], addr[r*ADDR_W +: ADDR_W]}), .q({row_in, row_addr}));
                wire [C*D_W-1:0] word;
                hg_ram #(.W(C * D_W), .DEPTH(DEPTH)) copy (
                    .clk(clk), .we(wr_en), .waddr(wr_addr[AW-1:0]), .wdata(wr_data), .re(1'b1),
                    .raddr(row_addr[AW-1:0]), .rdata(word));
                // the copy's answer is registered before the centring, as the array engine's banks are
                reg in_1, in_2;
                reg [C*D_W-1:0] word_2;
                reg [C*A_W-1:0] centred;
                integer k;
                always @(posedge clk) begin
                    in_1 <= row_in;
                    in_2 <= in_1;
                    word_2 <= word;
                end
                always @(posedge clk) begin
                    for (k = 0; k < C; k = k + 1)
                        centred[k*A_W +: A_W] <= in_2
                            ? {in_signed & word_2[k*D_W + D_W - 1], word_2[k*D_W +: D_W]} - in_zp[A_W-1:0]
                            : {A_W{1'b0}};
                end
                for (c = 0; c < C; c = c + 1) begin : g_col
                    hg_delay #(.W(A_W), .D(c)) skew_c (
                        .clk(clk), .d(centred[c*A_W +: A_W]), .q(dw_data[(r*C+c)*A_W +: A_W]));
                end
                wire unused_addr = ^row_addr;
            end else begin : g_none
                assign dw_data[r*C*A_W +: C*A_W] = {C*A_W{1'b0}};
                wire unused_row = ^{addr[r*ADDR_W +: ADDR_W], in_bounds[r]};
            end
        end
    endgenerate
endmodule
`default_nettype wire

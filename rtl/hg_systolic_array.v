// R x C weight-stationary systolic array: R reduction lanes enter from the left (row r delayed r
// cycles), C partial sums leave at the bottom (column c delayed C-1-c cycles), so one R-vector in per
// cycle gives one C-vector of dot products out per cycle, LATENCY = R + C + 1 cycles later
// (a PE's three stages: input registers, product, partial sum).
// A side-band tag (valid, and TAG_W bits the caller defines) travels beside the data.
//
// Weights load one array row per cycle into the bank that is not streaming. The write of column c is
// delayed c cycles (it travels with the same skew as the activations), so a tile's new weights never
// overtake the previous tile's last activations: PE(r, c) is written r + c cycles after the row enters.
`default_nettype none
module hg_systolic_array #(
    parameter integer R = 4,
    parameter integer C = 4,
    parameter integer A_W = 9,
    parameter integer W_W = 8,
    parameter integer P_W = 32,
    parameter integer TAG_W = 1,
    parameter integer ROW_W = (R > 1) ? $clog2(R) : 1
) (
    input  wire                 clk,
    // weight load: one row of C weights per cycle into bank w_bank
    input  wire                 w_we,
    input  wire                 w_bank,
    input  wire [ROW_W-1:0]     w_row,
    input  wire [C*W_W-1:0]     w_data,
    // activations: R lanes, lane r multiplies row r of the weights
    input  wire                 a_valid,
    input  wire                 a_bank,
    input  wire [TAG_W-1:0]     a_tag,
    input  wire [R*A_W-1:0]     a_data,
    // depthwise mode: PE(r, c) takes dw_data lane r*C + c (it must arrive r + c cycles after a_data)
    input  wire                 dw_mode,
    input  wire [R*C*A_W-1:0]   dw_data,
    // dot products: C lanes
    output wire                 p_valid,
    output wire [TAG_W-1:0]     p_tag,
    output wire [C*P_W-1:0]     p_data
);
    localparam integer LATENCY = R + C + 1;

    wire [A_W-1:0] a_h [0:R-1][0:C];   // activation entering PE(r, c) from the left
    wire           b_h [0:R-1][0:C];   // its weight bank
    wire [P_W-1:0] p_v [0:R][0:C-1];   // partial sum entering PE(r, c) from above

    wire           w_we_c   [0:C-1];
    wire           w_bank_c [0:C-1];
    wire [ROW_W-1:0] w_row_c [0:C-1];
    wire [W_W-1:0] w_data_c [0:C-1];

    genvar r, c;
    generate
        for (c = 0; c < C; c = c + 1) begin : g_wskew
            hg_delay #(.W(2 + ROW_W + W_W), .D(c)) skew (
                .clk(clk), .d({w_we, w_bank, w_row, w_data[c*W_W +: W_W]}),
                .q({w_we_c[c], w_bank_c[c], w_row_c[c], w_data_c[c]}));
        end
        for (r = 0; r < R; r = r + 1) begin : g_skew
            hg_delay #(.W(A_W + 1), .D(r)) skew (
                .clk(clk), .d({a_bank, a_data[r*A_W +: A_W]}), .q({b_h[r][0], a_h[r][0]}));
        end
        for (c = 0; c < C; c = c + 1) begin : g_top
            assign p_v[0][c] = {P_W{1'b0}};
        end
        for (r = 0; r < R; r = r + 1) begin : g_row
            for (c = 0; c < C; c = c + 1) begin : g_col
                hg_pe #(.A_W(A_W), .W_W(W_W), .P_W(P_W)) pe (
                    .clk(clk),
                    .w_we(w_we_c[c] && w_row_c[c] == r[ROW_W-1:0]), .w_bank(w_bank_c[c]), .w_data(w_data_c[c]),
.dw_mode(dw_mode), .dw_in(dw_data[(r*C+c)*A_W +: A_W]),
                    .a_in(a_h[r][c]), .a_bank_in(b_h[r][c]), .a_out(a_h[r][c+1]), .a_bank_out(b_h[r][c+1]),
                    .p_in(p_v[r][c]), .p_out(p_v[r+1][c]));
            end
        end
        for (c = 0; c < C; c = c + 1) begin : g_deskew
            hg_delay #(.W(P_W), .D(C - 1 - c)) deskew (.clk(clk), .d(p_v[R][c]), .q(p_data[c*P_W +: P_W]));
        end
    endgenerate

    hg_delay #(.W(TAG_W + 1), .D(LATENCY)) side (.clk(clk), .d({a_valid, a_tag}), .q({p_valid, p_tag}));

    // The last column's activations leave the array unused.
    wire unused_edge;
    generate
        if (1) begin : g_unused
            wire [R*(A_W+1)-1:0] edge_bits;
            for (r = 0; r < R; r = r + 1) begin : g_e
                assign edge_bits[r*(A_W+1) +: A_W+1] = {b_h[r][C], a_h[r][C]};
            end
            assign unused_edge = ^edge_bits;
        end
    endgenerate
endmodule
`default_nettype wire

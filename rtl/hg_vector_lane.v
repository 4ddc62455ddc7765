// One lane of the vector unit: y = saturate(rshift_round(va * ma + vb * mb, s) + zp, lo, hi), or
// y = table[index] in lookup mode. Three pipeline stages either way.
//   QAdd:          va = a - za, vb = b - zb (docs/numerics.md)
//   QRequant:      va = x - zx, mb = 0
//   average pool:  va = sum of (x - zx) over the window, ma = M_count, mb = 0
//   max pool:      va = maximum, ma = 1, s = 0, zp = 0 (an identity)
`default_nettype none
module hg_vector_lane #(
    parameter integer V_W = 32,   // signed operands
    parameter integer M_W = 17,   // unsigned multipliers
    parameter integer S_W = 6,    // right shift
    parameter integer Z_W = 10,
    parameter integer D_W = 8,
    parameter integer LUT_DEPTH = 1,
    parameter LUT_INIT = "",
    parameter integer LUT_AW = (LUT_DEPTH > 1) ? $clog2(LUT_DEPTH) : 1
) (
    input  wire                  clk,
    input  wire                  lookup,
    input  wire [LUT_AW-1:0]     lut_addr,
    input  wire                  lut_we,       // a table load (hg_program_loader) writes an entry
    input  wire [LUT_AW-1:0]     lut_waddr,
    input  wire [D_W-1:0]        lut_wdata,
    input  wire signed [V_W-1:0] va,
    input  wire signed [V_W-1:0] vb,
    input  wire        [M_W-1:0] ma,
    input  wire        [M_W-1:0] mb,
    input  wire        [S_W-1:0] shift,
    input  wire signed [Z_W-1:0] zp,
    input  wire signed [Z_W-1:0] lo,
    input  wire signed [Z_W-1:0] hi,
    output wire        [D_W-1:0] q
);
    reg  signed [63:0] total;
    reg         [S_W-1:0] shift_1;
    reg  signed [Z_W-1:0] zp_1, lo_1, hi_1;
    reg                lookup_1, lookup_2;
    wire        [D_W-1:0] arith;

    wire signed [63:0] va_w = {{(64-V_W){va[V_W-1]}}, va};
    wire signed [63:0] vb_w = {{(64-V_W){vb[V_W-1]}}, vb};
    wire signed [63:0] ma_w = {{(64-M_W){1'b0}}, ma};
    wire signed [63:0] mb_w = {{(64-M_W){1'b0}}, mb};

    always @(posedge clk) begin
        total <= va_w * ma_w + vb_w * mb_w;
        shift_1 <= shift;
        {zp_1, lo_1, hi_1} <= {zp, lo, hi};
        lookup_1 <= lookup;
        lookup_2 <= lookup_1;
    end

    // round-shift, then add zero point and saturate: two more stages
    hg_round_saturate #(.S_W(S_W), .Z_W(Z_W), .D_W(D_W)) round_saturate (
        .clk(clk), .v(total), .shift(shift_1), .zp(zp_1), .lo(lo_1), .hi(hi_1), .q(arith));

    // lookup: the table answers one cycle later, then waits two to stay aligned with the arithmetic
    wire [D_W-1:0] entry;
    reg  [D_W-1:0] entry_2, entry_3;
    reg            lookup_3;
    generate
        if (LUT_DEPTH > 1) begin : g_lut
            hg_ram #(.W(D_W), .DEPTH(LUT_DEPTH), .INIT(LUT_INIT)) table_ram (
                .clk(clk), .we(lut_we), .waddr(lut_waddr), .wdata(lut_wdata), .re(1'b1), .raddr(lut_addr),
                .rdata(entry));
        end else begin : g_no_lut
            assign entry = {D_W{1'b0}};
            wire unused_lut = ^{lut_addr, lut_we, lut_waddr, lut_wdata};
        end
    endgenerate
    always @(posedge clk) begin
        entry_2 <= entry;
        entry_3 <= entry_2;
        lookup_3 <= lookup_2;
    end
    assign q = lookup_3 ? entry_3 : arith;
endmodule
`default_nettype wire

// One lane of the vector unit: y = saturate(rshift_round(va * ma + vb * mb, s) + zp, lo, hi), or
// y = table[index] in lookup mode. Seven pipeline stages either way: the operands are
// registered; four partial products (each operand's low half, unsigned, and high half, signed, times its
// multiplier: one 18x18 DSP each); the two products; their sum; round-shift and saturate
// (hg_round_saturate, three stages). No path holds a multiplier and an adder, or two wide adders.
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
    localparam integer LATENCY = 7;
    localparam integer LO_W = V_W / 2;     // an operand's low half, unsigned
    localparam integer HI_W = V_W - LO_W;  // its high half, signed

    reg  signed [V_W-1:0] va_1, vb_1;
    reg         [M_W-1:0] ma_1, mb_1;
    reg  signed [LO_W+M_W+1:0] a_low, b_low;
    reg  signed [HI_W+M_W:0]   a_high, b_high;
    reg  signed [63:0] pa, pb, total;
    wire        [D_W-1:0] arith;

    wire signed [M_W:0]    ma_s = {1'b0, ma_1};
    wire signed [M_W:0]    mb_s = {1'b0, mb_1};
    wire signed [LO_W:0]   a_low_s = {1'b0, va_1[LO_W-1:0]};
    wire signed [LO_W:0]   b_low_s = {1'b0, vb_1[LO_W-1:0]};
    wire signed [HI_W-1:0] a_high_s = va_1[V_W-1:LO_W];
    wire signed [HI_W-1:0] b_high_s = vb_1[V_W-1:LO_W];

    function automatic signed [63:0] widen_low(input signed [LO_W+M_W+1:0] x);
        widen_low = {{(64-LO_W-M_W-2){x[LO_W+M_W+1]}}, x};
    endfunction
    function automatic signed [63:0] widen_high(input signed [HI_W+M_W:0] x);
        widen_high = {{(64-HI_W-M_W-1){x[HI_W+M_W]}}, x};
    endfunction

    always @(posedge clk) begin
        {va_1, vb_1, ma_1, mb_1} <= {va, vb, ma, mb};
        a_low <= a_low_s * ma_s;
        a_high <= a_high_s * ma_s;
        b_low <= b_low_s * mb_s;
        b_high <= b_high_s * mb_s;
        pa <= (widen_high(a_high) <<< LO_W) + widen_low(a_low);
        pb <= (widen_high(b_high) <<< LO_W) + widen_low(b_low);
        total <= pa + pb;
    end

    // the scale's fields wait for the product (4 stages), then round-shift and saturate: three more
    wire [S_W-1:0] shift_4;
    wire signed [Z_W-1:0] zp_4, lo_4, hi_4;
    hg_delay #(.W(S_W + 3 * Z_W), .D(4)) scale (.clk(clk), .d({shift, zp, lo, hi}), .q({shift_4, zp_4, lo_4, hi_4}));
    hg_round_saturate #(.S_W(S_W), .Z_W(Z_W), .D_W(D_W)) round_saturate (
        .clk(clk), .v(total), .shift(shift_4), .zp(zp_4), .lo(lo_4), .hi(hi_4), .q(arith));

    // lookup: the table answers one cycle later, then waits to stay aligned with the arithmetic
    wire [D_W-1:0] entry, entry_late;
    wire           lookup_late;
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
    hg_delay #(.W(D_W), .D(LATENCY - 1)) entry_delay (.clk(clk), .d(entry), .q(entry_late));
    hg_delay #(.W(1), .D(LATENCY)) lookup_delay (.clk(clk), .d(lookup), .q(lookup_late));
    assign q = lookup_late ? entry_late : arith;
endmodule
`default_nettype wire

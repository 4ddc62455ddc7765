// Processing element of the weight-stationary systolic array.
//
// Two weight registers (banks): one is written while the other computes, so a new weight tile loads
// without stopping the stream. Every activation carries the bank its weights are in (`a_bank`), so a
// tile switch travels through the array with the data and never needs a global stall.
// The MAC is pipelined like a DSP slice: input registers (the operand and bank selects stay out of the
// multiplier's path), product register, then the adder into the partial sum, so a partial sum leaves
// PE(r, c) three cycles after the activation entered it. Every row is one stage deeper, so the rows' skew
// is still one cycle each and only the array's latency grows (ECP5: 61 MHz with no register around the
// multiplier, about 125 MHz with both).
// In depthwise mode the PE multiplies its own activation (dw_in: tap r of channel c, from the depthwise
// window) instead of the one passing from the left; the passing one still carries the weight bank.
`default_nettype none
module hg_pe #(
    parameter integer A_W = 9,   // signed activation (x - zero point)
    parameter integer W_W = 8,   // signed weight
    parameter integer P_W = 32   // signed partial sum
) (
    input  wire                  clk,
    input  wire                  w_we,     // write w_data into weight bank w_bank
    input  wire                  w_bank,
    input  wire signed [W_W-1:0] w_data,
    input  wire                  dw_mode,
    input  wire signed [A_W-1:0] dw_in,
    input  wire signed [A_W-1:0] a_in,     // from the left
    input  wire                  a_bank_in,
    output reg  signed [A_W-1:0] a_out,    // to the right, one cycle later
    output reg                   a_bank_out,
    input  wire signed [P_W-1:0] p_in,     // from above
    output reg  signed [P_W-1:0] p_out     // to below
);
    reg  signed [W_W-1:0]     weight0, weight1;
    reg  signed [A_W+W_W-1:0] product;
    reg  signed [A_W-1:0]     operand_1;
    reg  signed [W_W-1:0]     weight_1;
    wire signed [W_W-1:0]     weight = a_bank_in ? weight1 : weight0;
    wire signed [A_W-1:0]     operand = dw_mode ? dw_in : a_in;

    always @(posedge clk) begin
        if (w_we && !w_bank) weight0 <= w_data;
        if (w_we && w_bank) weight1 <= w_data;
        a_out <= a_in;
        a_bank_out <= a_bank_in;
        operand_1 <= operand;
        weight_1 <= weight;
        product <= operand_1 * weight_1;
        p_out <= p_in + {{(P_W-A_W-W_W){product[A_W+W_W-1]}}, product};
    end
endmodule
`default_nettype wire

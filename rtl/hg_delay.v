// A W-bit value delayed by D clock cycles (D = 0 passes it through).
`default_nettype none
module hg_delay #(
    parameter integer W = 1,
    parameter integer D = 1
) (
    input  wire         clk,
    input  wire [W-1:0] d,
    output wire [W-1:0] q
);
    generate
        if (D == 0) begin : g_wire
            assign q = d;
            wire unused_clk = clk;
        end else begin : g_regs
            reg [W-1:0] stage [0:D-1];
            integer i;
            always @(posedge clk) begin
                stage[0] <= d;
                for (i = 1; i < D; i = i + 1) stage[i] <= stage[i-1];
            end
            assign q = stage[D-1];
        end
    endgenerate
endmodule
`default_nettype wire

// Read-only memory initialized from a $readmemh file; registered output (one cycle of latency).
`default_nettype none
module hg_rom #(
    parameter integer W = 8,
    parameter integer DEPTH = 256,
    parameter integer AW = (DEPTH > 1) ? $clog2(DEPTH) : 1,
    parameter INIT = ""
) (
    input  wire          clk,
    input  wire [AW-1:0] addr,
    output reg  [W-1:0]  data
);
    reg [W-1:0] mem [0:DEPTH-1];
    initial if (INIT != "") $readmemh(INIT, mem);

    always @(posedge clk) data <= mem[addr];
endmodule
`default_nettype wire

// Simple dual-port RAM: one write port, one read port with a registered output (one cycle of read
// latency), as block RAM or distributed RAM implement it. INIT names a $readmemh file ("" = none).
`default_nettype none
module hg_ram #(
    parameter integer W = 8,
    parameter integer DEPTH = 256,
    parameter integer AW = (DEPTH > 1) ? $clog2(DEPTH) : 1,
    parameter INIT = ""
) (
    input  wire          clk,
    input  wire          we,
    input  wire [AW-1:0] waddr,
    input  wire [W-1:0]  wdata,
    input  wire          re,
    input  wire [AW-1:0] raddr,
    output reg  [W-1:0]  rdata
);
    reg [W-1:0] mem [0:DEPTH-1];
    initial if (INIT != "") $readmemh(INIT, mem);

    always @(posedge clk) begin
        if (we) mem[waddr] <= wdata;
        if (re) rdata <= mem[raddr];
    end
endmodule
`default_nettype wire

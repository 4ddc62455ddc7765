// AXI-Stream slave that writes one input feature map into the activation memory, one element per
// beat in [channel][row][col] order (docs/hardware.md: "input elements, one element per beat"). The
// map keeps channel c in every bank j = c (mod 2^lg), at base + (c >> lg) * hw + pixel. The geometry is
// the generated top's constants, or a loaded program's header (docs/rtl.md, "The program in external memory").
`default_nettype none
module hg_stream_in #(
    parameter integer R = 4,
    parameter integer D_W = 8,
    parameter integer ADDR_W = 12
) (
    input  wire               clk,
    input  wire               rst,
    input  wire [ADDR_W-1:0]  base,
    input  wire [2:0]         lg,
    input  wire [31:0]        hw,
    input  wire [ADDR_W-1:0]  stride,      // words between channel blocks: hw, or a batch's N images' hw
    input  wire [31:0]        channels,
    input  wire               active,
    input  wire [D_W-1:0]     s_tdata,
    input  wire               s_tvalid,
    output wire               s_tready,
    output reg                done,
    output reg  [R-1:0]       wr_en,
    output reg  [ADDR_W-1:0]  wr_addr,
    output reg  [R*D_W-1:0]   wr_data
);
    wire [31:0] group = (32'd1 << lg) - 32'd1;   // channels c and c' share a bank when c & group == c' & group

    reg [31:0] pixel, channel;
    reg [ADDR_W-1:0] slot_base;
    reg        full;   // the whole map arrived: take no more beats until the next input phase
    wire beat = s_tready && s_tvalid;
    wire last_pixel = pixel == hw - 32'd1;
    wire last_channel = channel == channels - 32'd1;
    assign s_tready = active && !full;

    integer j;
    always @(posedge clk) begin
        done <= 1'b0;
        wr_en <= {R{1'b0}};
        if (rst || !active) begin
            pixel <= 32'd0;
            channel <= 32'd0;
            slot_base <= base;
            full <= 1'b0;
        end else if (beat) begin
            for (j = 0; j < R; j = j + 1) wr_en[j] <= (j & group) == (channel & group);
            wr_addr <= slot_base + pixel[ADDR_W-1:0];
            wr_data <= {R{s_tdata}};
            pixel <= pixel + 1;
            if (last_pixel) begin
                pixel <= 32'd0;
                channel <= channel + 1;
                if ((channel & group) == group) slot_base <= slot_base + stride;
                if (last_channel) begin
                    done <= 1'b1;
                    full <= 1'b1;
                end
            end
        end
    end

    wire unused = ^{pixel[31:ADDR_W], hw[31:ADDR_W]};
endmodule
`default_nettype wire

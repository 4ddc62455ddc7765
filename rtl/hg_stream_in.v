// AXI-Stream slave that writes one input feature map into the activation memory, one element per
// beat in [channel][row][col] order (docs/hardware.md: "input elements, one element per beat"). The
// map keeps channel c in every bank j = c (mod 2^LG), at BASE + (c >> LG) * HW + pixel.
`default_nettype none
module hg_stream_in #(
    parameter integer R = 4,
    parameter integer D_W = 8,
    parameter integer ADDR_W = 12,
    parameter integer BASE = 0,
    parameter integer LG = 0,
    parameter integer HW = 1,
    parameter integer CHANNELS = 1
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               active,
    input  wire [D_W-1:0]     s_tdata,
    input  wire               s_tvalid,
    output wire               s_tready,
    output reg                done,
    output reg  [R-1:0]       wr_en,
    output reg  [ADDR_W-1:0]  wr_addr,
    output reg  [R*D_W-1:0]   wr_data
);
    localparam integer G = 1 << LG;
    localparam [31:0] HW32 = HW, CH32 = CHANNELS, BASE32 = BASE;

    reg [31:0] pixel, channel, slot_base;
    reg        full;   // the whole map arrived: take no more beats until the next input phase
    wire beat = s_tready && s_tvalid;
    wire last_pixel = pixel == HW32 - 1;
    wire last_channel = channel == CH32 - 1;
    assign s_tready = active && !full;

    integer j;
    always @(posedge clk) begin
        done <= 1'b0;
        wr_en <= {R{1'b0}};
        if (rst || !active) begin
            pixel <= 32'd0;
            channel <= 32'd0;
            slot_base <= BASE32;
            full <= 1'b0;
        end else if (beat) begin
            for (j = 0; j < R; j = j + 1) wr_en[j] <= (j % G) == (channel % G);
            wr_addr <= slot_base[ADDR_W-1:0] + pixel[ADDR_W-1:0];
            wr_data <= {R{s_tdata}};
            pixel <= pixel + 1;
            if (last_pixel) begin
                pixel <= 32'd0;
                channel <= channel + 1;
                if (channel % G == G - 1) slot_base <= slot_base + HW32;
                if (last_channel) begin
                    done <= 1'b1;
                    full <= 1'b1;
                end
            end
        end
    end

    wire unused = ^{pixel[31:ADDR_W], slot_base[31:ADDR_W]};
endmodule
`default_nettype wire

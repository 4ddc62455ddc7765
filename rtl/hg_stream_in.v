// AXI-Stream slave that writes the model's input maps into the activation memory, one after another
// (graph-input order), each one element per beat in [channel][row][col] order (docs/hardware.md: "input
// elements, one element per beat"). A map keeps channel c in every bank j = c (mod 2^lg), at
// base + (c >> lg) * hw + pixel. `map` is the map being written: the geometry ports are that map's (the
// generated top's constants, a `case` on `map` when the model has several inputs, or a loaded program's
// header: docs/rtl.md, "The program in external memory"); `plane` is its activation plane, and `wr_plane`
// the plane of the registered write.
`default_nettype none
module hg_stream_in #(
    parameter integer R = 4,
    parameter integer D_W = 8,
    parameter integer ADDR_W = 12,
    parameter integer MAP_W = 1        // bits of the input map index
) (
    input  wire               clk,
    input  wire               rst,
    input  wire [MAP_W-1:0]   last_map,    // input maps - 1
    output reg  [MAP_W-1:0]   map,         // the map being written: the geometry below is its
    input  wire [ADDR_W-1:0]  base,
    input  wire [2:0]         lg,
    input  wire [31:0]        hw,
    input  wire [ADDR_W-1:0]  stride,      // words between channel blocks: hw, or a batch's N images' hw
    input  wire [31:0]        channels,
    input  wire               plane,
    input  wire               active,
    input  wire [D_W-1:0]     s_tdata,
    input  wire               s_tvalid,
    output wire               s_tready,
    output reg                done,
    output reg  [R-1:0]       wr_en,
    output reg                wr_plane,
    output reg  [ADDR_W-1:0]  wr_addr,
    output reg  [R*D_W-1:0]   wr_data
);
    wire [31:0] group = (32'd1 << lg) - 32'd1;   // channels c and c' share a bank when c & group == c' & group

    reg [31:0] pixel, channel;
    reg [ADDR_W-1:0] slot_base;
    reg        fresh;  // the map's first beat is still to come: its first block starts at `base`
    reg        full;   // every map arrived: take no more beats until the next input phase
    wire beat = s_tready && s_tvalid;
    wire last_pixel = pixel == hw - 32'd1;
    wire last_channel = channel == channels - 32'd1;
    wire [ADDR_W-1:0] block = fresh ? base : slot_base;
    assign s_tready = active && !full;

    integer j;
    always @(posedge clk) begin
        done <= 1'b0;
        wr_en <= {R{1'b0}};
        if (rst || !active) begin
            map <= {MAP_W{1'b0}};
            pixel <= 32'd0;
            channel <= 32'd0;
            fresh <= 1'b1;
            full <= 1'b0;
        end else if (beat) begin
            for (j = 0; j < R; j = j + 1) wr_en[j] <= (j & group) == (channel & group);
            wr_plane <= plane;
            wr_addr <= block + pixel[ADDR_W-1:0];
            wr_data <= {R{s_tdata}};
            fresh <= 1'b0;
            slot_base <= block;
            pixel <= pixel + 1;
            if (last_pixel) begin
                pixel <= 32'd0;
                channel <= channel + 1;
                if ((channel & group) == group) slot_base <= block + stride;
                if (last_channel) begin  // the next map's first beat writes at its own base
                    channel <= 32'd0;
                    fresh <= 1'b1;
                    if (map == last_map) begin
                        done <= 1'b1;
                        full <= 1'b1;
                    end else begin
                        map <= map + 1'b1;
                    end
                end
            end
        end
    end

    wire unused = ^{pixel[31:ADDR_W], hw[31:ADDR_W]};
endmodule
`default_nettype wire

// AXI-Stream master that sends the model's output maps from the activation memory, one after another
// (graph-output order), each one element per beat in [channel][row][col] order, TLAST on the last element of
// the last map. The memory answers two cycles after the address (its word is registered before the bank is
// chosen: a block RAM's clock-to-output leaves no time for the choice in the same cycle), so reads are issued
// ahead into a four-entry queue and the stream runs at one beat per cycle while TREADY holds, across the
// maps too: the first read of a map follows the last of the one before it in the next cycle.
// `map` is the map being read; the geometry ports (as hg_stream_in's) are that map's: the generated top's
// constants (a `case` on `map` when the model has several outputs) or a loaded program's header.
`default_nettype none
module hg_stream_out #(
    parameter integer R = 4,
    parameter integer D_W = 8,
    parameter integer ADDR_W = 12,
    parameter integer MAP_W = 1,       // bits of the output map index
    parameter integer BANK_W = (R > 1) ? $clog2(R) : 1
) (
    input  wire               clk,
    input  wire               rst,
    input  wire [MAP_W-1:0]   last_map,    // output maps - 1
    output reg  [MAP_W-1:0]   map,         // the map being read: the geometry below is its
    input  wire [ADDR_W-1:0]  base,
    input  wire [2:0]         lg,
    input  wire [31:0]        hw,
    input  wire [ADDR_W-1:0]  stride,      // words between channel blocks: hw, or a batch's N images' hw
    input  wire [31:0]        channels,
    input  wire               active,
    output wire [ADDR_W-1:0]  rd_addr,
    output wire [BANK_W-1:0]  rd_bank,
    input  wire [D_W-1:0]     rd_data,     // two cycles after rd_addr
    output wire [D_W-1:0]     m_tdata,
    output wire               m_tvalid,
    input  wire               m_tready,
    output wire               m_tlast,
    output reg                done
);
    wire [31:0] group = (32'd1 << lg) - 32'd1;
    wire [31:0] total = hw * channels;

    reg [31:0] pixel, channel, issued;
    reg [ADDR_W-1:0] slot_base;
    reg        fresh;      // the map's first read is still to come: its block starts at `base`
    reg        exhausted;  // every map's every element has been read
    reg        inflight, inflight_last, inflight_2, inflight_last_2;
    reg [D_W:0] queue [0:3];   // {last, data}
    reg [2:0]  count;
    reg [1:0]  head;

    wire pop = m_tvalid && m_tready;
    localparam integer HELD_W = 4;  // queued + in flight, 0..5: wider than the 3-bit count
    localparam [HELD_W-1:0] QUEUE_DEPTH = 4;
    wire [HELD_W-1:0] held = {1'b0, count} + {3'b000, inflight} + {3'b000, inflight_2} - {3'b000, pop};
    wire issue = active && !exhausted && held < QUEUE_DEPTH;
    wire map_end = issued == total - 32'd1;   // this read is the map's last
    wire final_map = map == last_map;
    wire [ADDR_W-1:0] block = fresh ? base : slot_base;
    assign rd_addr = block + pixel[ADDR_W-1:0];
    assign rd_bank = channel[BANK_W-1:0] & group[BANK_W-1:0];
    assign m_tvalid = count != 3'd0;
    assign {m_tlast, m_tdata} = queue[head];

    always @(posedge clk) begin
        done <= 1'b0;
        if (rst || !active) begin
            map <= {MAP_W{1'b0}};
            pixel <= 32'd0;
            channel <= 32'd0;
            issued <= 32'd0;
            fresh <= 1'b1;
            exhausted <= 1'b0;
            inflight <= 1'b0;
            inflight_2 <= 1'b0;
            count <= 3'd0;
            head <= 2'd0;
        end else begin
            inflight <= issue;
            inflight_last <= map_end && final_map;
            inflight_2 <= inflight;
            inflight_last_2 <= inflight_last;
            if (issue) begin
                fresh <= 1'b0;
                slot_base <= block;
                issued <= issued + 1;
                pixel <= pixel + 1;
                if (pixel == hw - 32'd1) begin
                    pixel <= 32'd0;
                    channel <= channel + 1;
                    if ((channel & group) == group) slot_base <= block + stride;
                end
                if (map_end) begin  // the next map's first read follows in the next cycle
                    issued <= 32'd0;
                    pixel <= 32'd0;
                    channel <= 32'd0;
                    fresh <= 1'b1;
                    if (final_map) exhausted <= 1'b1;
                    else map <= map + 1'b1;
                end
            end
            if (inflight_2) queue[head + count[1:0]] <= {inflight_last_2, rd_data};
            count <= count + {2'b00, inflight_2} - {2'b00, pop};
            if (pop) begin
                head <= head + 2'd1;
                if (m_tlast) done <= 1'b1;
            end
        end
    end

    wire unused = ^{pixel[31:ADDR_W], hw[31:ADDR_W], channel[31:BANK_W], group[31:BANK_W]};
endmodule
`default_nettype wire

// The on-chip side of a feature-map move (hg_fmap_dma): the activation-memory word address of every word, in
// the order the image holds them: `segments` runs of `seg_words` words, the first at `buf_base`, each
// `buf_stride` words after the last. `more` falls after the last word and stays low until the next init.
`default_nettype none
module hg_fmap_words #(
    parameter integer ADDR_W = 12,
    parameter integer WORD_W = 16,
    parameter integer SEG_W = 8
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              init,
    input  wire              step,      // the current word was taken
    input  wire [SEG_W-1:0]  cfg_segments,
    input  wire [WORD_W-1:0] cfg_seg_words,
    input  wire [ADDR_W-1:0] cfg_buf_base,
    input  wire [ADDR_W-1:0] cfg_buf_stride,
    output reg  [ADDR_W-1:0] addr,
    output wire              more
);
    reg [SEG_W-1:0]  seg_left;
    reg [ADDR_W-1:0] seg_base;
    reg [WORD_W-1:0] word;
    assign more = seg_left != {SEG_W{1'b0}};

    always @(posedge clk) begin
        if (rst) begin
            seg_left <= {SEG_W{1'b0}};
        end else if (init) begin
            seg_left <= cfg_seg_words == {WORD_W{1'b0}} ? {SEG_W{1'b0}} : cfg_segments;
            seg_base <= cfg_buf_base;
            addr <= cfg_buf_base;
            word <= {WORD_W{1'b0}};
        end else if (step && more) begin
            if (word == cfg_seg_words - 1'b1) begin
                seg_left <= seg_left - 1'b1;
                seg_base <= seg_base + cfg_buf_stride;
                addr <= seg_base + cfg_buf_stride;
                word <= {WORD_W{1'b0}};
            end else begin
                addr <= addr + 1'b1;
                word <= word + 1'b1;
            end
        end
    end
endmodule
`default_nettype wire

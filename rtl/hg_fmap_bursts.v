// The AXI4 bursts of a feature-map move (hg_fmap_dma): `segments` runs of `seg_words` words, the first at word
// `dram_word` of the feature-map image, each `dram_stride` words after the last, a word BPW beats. A burst
// is as long as the run allows, never longer than 256 beats and never across a 4 KiB boundary. `more` falls
// after the last burst and stays low until the next init.
`default_nettype none
module hg_fmap_bursts #(
    parameter integer AXI_AW = 32,
    parameter integer WORD_W = 16,   // word addresses and counts of the image
    parameter integer SEG_W = 8,
    parameter integer LG_R = 2,      // log2 of a word's bytes
    parameter integer LG_B = 2,      // log2 of a beat's bytes (at most a word's)
    parameter integer BEAT_W = WORD_W + LG_R - LG_B + 1
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              init,
    input  wire              step,       // the current burst was taken
    input  wire [SEG_W-1:0]  cfg_segments,
    input  wire [WORD_W-1:0] cfg_seg_words,
    input  wire [WORD_W-1:0] cfg_dram_word,
    input  wire [WORD_W-1:0] cfg_dram_stride,
    input  wire [AXI_AW-1:0] base,       // the image's byte address
    output reg  [AXI_AW-1:0] addr,
    output wire [8:0]        beats,      // 1 to 256
    output wire              more
);
    localparam [12:0] PAGE = 13'd4096;
    reg [SEG_W-1:0]  seg_left;
    reg [AXI_AW-1:0] seg_addr;
    reg [BEAT_W-1:0] left;    // beats left in the run

    wire [AXI_AW-1:0] first = base + ({{(AXI_AW-WORD_W){1'b0}}, cfg_dram_word} << LG_R);
    wire [AXI_AW-1:0] stride = {{(AXI_AW-WORD_W){1'b0}}, cfg_dram_stride} << LG_R;
    wire [BEAT_W-1:0] run = {{(BEAT_W-WORD_W){1'b0}}, cfg_seg_words} << (LG_R - LG_B);

    // beats to the page boundary (at most 4096 / beat bytes), to the run's end, and 256
    wire [12:0] page_left = (PAGE - {1'b0, addr[11:0]}) >> LG_B;
    wire [BEAT_W+12:0] left_wide = {13'd0, left};
    wire [BEAT_W+12:0] page_wide = {{BEAT_W{1'b0}}, page_left};
    wire [BEAT_W+12:0] to_page = left_wide < page_wide ? left_wide : page_wide;
    wire [BEAT_W+12:0] burst = to_page < 256 ? to_page : 256;
    assign beats = burst[8:0];
    assign more = seg_left != {SEG_W{1'b0}};
    wire run_done = left_wide == burst;

    always @(posedge clk) begin
        if (rst) begin
            seg_left <= {SEG_W{1'b0}};
        end else if (init) begin
            seg_left <= cfg_seg_words == {WORD_W{1'b0}} ? {SEG_W{1'b0}} : cfg_segments;
            seg_addr <= first;
            addr <= first;
            left <= run;
        end else if (step && more) begin
            if (run_done) begin
                seg_left <= seg_left - 1'b1;
                seg_addr <= seg_addr + stride;
                addr <= seg_addr + stride;
                left <= run;
            end else begin
                addr <= addr + ({{(AXI_AW-9){1'b0}}, burst[8:0]} << LG_B);
                left <= left - burst[BEAT_W-1:0];
            end
        end
    end

    wire unused = ^burst[BEAT_W+12:9];
endmodule
`default_nettype wire

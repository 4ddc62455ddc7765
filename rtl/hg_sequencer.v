// Runs the model's layer program (docs/hardware.md, "The whole inference"; docs/program.md, "Two queues"):
// take the input stream into activation memory, run the program's rows on two queues, then send the output
// stream; then the next input. The engines run the layer table's rows (each ends when the writer has written
// its last result), the DMA unit the move table's rows, each queue in order. A row starts as soon as its
// queue is free and the other queue has finished `wait` rows (its table's wait field, a dependency counter):
// `start` and `move_start` are combinational so that a row starts the cycle after the row it waited for ends.
// The tables' row counts are the generated top's constants, or a loaded program's (its header's).
// `layer_ahead` and `move_ahead` are the cursors' values in the next cycle: a table read synchronously there
// (a block RAM) holds the row of the current cursor in every cycle, at no cycle's cost.
// Throughput mode (--batch N, hlsgen.hw.batching): `image` counts the run's N images. Images 0..N-2 take
// their input and run the head, rows [0, head), only; the last image runs on through the tail, rows
// [head, layers), which computes all N; then the N outputs leave one after another, the output stream
// restarting (P_NEXT, one cycle) between them. At batch 1 (last_image 0, head = layers) this is the plain
// input, rows, output loop. A first row that runs under the input stream (docs/rtl.md) leaves the input
// phase at the first beat (`in_done` then) and holds `in_busy` until the last: the other rows and the moves wait.
`default_nettype none
module hg_sequencer #(
    parameter integer LAYERS = 1,        // the layer table's capacity
    parameter integer MOVES = 0,         // the move table's capacity
    parameter integer L_W = $clog2(LAYERS + 1),
    parameter integer MV_W = (MOVES > 0) ? $clog2(MOVES + 1) : 1,
    parameter integer IMG_W = 1           // bits of the image counter
) (
    input  wire           clk,
    input  wire           rst,
    input  wire [L_W-1:0] layers,        // the program's layers (at least one)
    input  wire [MV_W-1:0] moves,         // the program's moves
    input  wire [L_W-1:0] head,          // the batch's first tail row (layers: no batch)
    input  wire [IMG_W-1:0] last_image,  // images per run - 1
    input  wire           in_done,       // the input map is in memory (or its first row may start)
    input  wire           in_busy,       // the input still streams in: only the first row may start
    input  wire           layer_done,    // the writer wrote the layer's last result
    input  wire           move_done,     // the DMA unit finished its move
    input  wire           out_done,      // the output stream sent its last beat
    input  wire [MV_W-1:0] layer_wait,    // moves the current layer waits for
    input  wire [L_W-1:0] move_wait,     // layers the current move waits for
    output reg  [1:0]     phase,         // 0: input, 1: layers, 2: output, 3: the next image's output
    output reg  [IMG_W-1:0] image,       // the image being taken in, or sent out
    output reg  [L_W-1:0] layer,         // the running (or next) layer: also how many have finished
    output wire [L_W-1:0] layer_ahead,   // `layer` in the next cycle
    output wire           start,         // one cycle, at the start of every layer
    output reg  [MV_W-1:0] move,          // the running (or next) move: also how many have finished
    output wire [MV_W-1:0] move_ahead,    // `move` in the next cycle
    output wire           move_start,    // one cycle, at the start of every move
    output wire           has_next       // a row follows `layer` in this image's rows (the weights walk to it)
);
    localparam [1:0] P_IN = 2'd0, P_RUN = 2'd1, P_OUT = 2'd2, P_NEXT = 2'd3;

    reg layer_busy, move_busy;
    // the cursors after this cycle: the output starts the cycle after the last row ends, as the model charges
    wire [L_W-1:0] layer_next = layer_done ? layer + 1'b1 : layer;
    wire [MV_W-1:0] move_next = move_done ? move + 1'b1 : move;
    wire restart = phase == P_IN && in_done;  // the cursors return to the first rows
    wire last = image == last_image;
    wire [L_W-1:0] rows_end = last ? layers : head;  // where this image's rows end
    assign layer_ahead = rst || restart ? {L_W{1'b0}} : phase == P_RUN ? layer_next : layer;
    assign move_ahead = rst || restart ? {MV_W{1'b0}} : phase == P_RUN ? move_next : move;
    wire [L_W:0] after = {1'b0, layer} + 1'b1;
    assign has_next = phase == P_RUN && after < {1'b0, rows_end};
    assign start = phase == P_RUN && !layer_busy && layer != rows_end && move >= layer_wait
                   && (!in_busy || layer == {L_W{1'b0}});
    assign move_start = phase == P_RUN && !move_busy && move != moves && layer >= move_wait && !in_busy;

    always @(posedge clk) begin
        if (rst) begin
            phase <= P_IN;
            image <= {IMG_W{1'b0}};
            layer <= {L_W{1'b0}};
            move <= {MV_W{1'b0}};
            layer_busy <= 1'b0;
            move_busy <= 1'b0;
        end else begin
            case (phase)
                P_IN: if (in_done) begin
                    phase <= P_RUN;
                    layer <= {L_W{1'b0}};
                    move <= {MV_W{1'b0}};
                end
                P_RUN: begin
                    if (start) layer_busy <= 1'b1;
                    if (layer_done) layer_busy <= 1'b0;
                    if (move_start) move_busy <= 1'b1;
                    if (move_done) move_busy <= 1'b0;
                    layer <= layer_next;
                    move <= move_next;
                    if (layer_next == rows_end && move_next == moves && !in_busy) begin
                        phase <= last ? P_OUT : P_IN;
                        image <= last ? {IMG_W{1'b0}} : image + 1'b1;
                    end
                end
                P_OUT: if (out_done) begin
                    phase <= last ? P_IN : P_NEXT;
                    image <= last ? {IMG_W{1'b0}} : image + 1'b1;
                end
                default: phase <= P_OUT;
            endcase
        end
    end
endmodule
`default_nettype wire

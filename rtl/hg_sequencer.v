// Runs the model's layer schedule (docs/hardware.md, "The whole inference"): take the input stream
// into activation memory, run the layers one at a time (each starts the engine of its kind and ends
// when the writer has written its last result), then send the output stream; then the next input. The
// last layer is the generated top's constant, or a loaded program's (its header's row count less one).
`default_nettype none
module hg_sequencer #(
    parameter integer LAYERS = 1,
    parameter integer L_W = (LAYERS > 1) ? $clog2(LAYERS) : 1
) (
    input  wire           clk,
    input  wire           rst,
    input  wire [L_W-1:0] last,          // the last layer's index (below LAYERS)
    input  wire           in_done,       // the input map is in memory
    input  wire           layer_done,    // the writer wrote the layer's last result
    input  wire           out_done,      // the output stream sent its last beat
    output reg  [1:0]     phase,         // 0: input, 1: layers, 2: output
    output reg  [L_W-1:0] layer,
    output reg            start          // one cycle, at the start of every layer
);
    localparam [1:0] P_IN = 2'd0, P_RUN = 2'd1, P_OUT = 2'd2;

    always @(posedge clk) begin
        start <= 1'b0;
        if (rst) begin
            phase <= P_IN;
            layer <= {L_W{1'b0}};
        end else begin
            case (phase)
                P_IN: if (in_done) begin
                    phase <= P_RUN;
                    layer <= {L_W{1'b0}};
                    start <= 1'b1;
                end
                P_RUN: if (layer_done) begin
                    if (layer == last) begin
                        phase <= P_OUT;
                    end else begin
                        layer <= layer + 1'b1;
                        start <= 1'b1;
                    end
                end
                default: if (out_done) phase <= P_IN;
            endcase
        end
    end
endmodule
`default_nettype wire

// AXI4-Lite control registers (docs/rtl.md, "AXI4-Lite control"; the map is hlsgen/rtl/control.py's):
// a host loads a layer program, starts an inference, sees either done (or takes the interrupt) and sets the
// base addresses of the program, weight and feature-map images. 32-bit data; every access answers OKAY (an unmapped word reads 0 and
// ignores writes, as a host probing the block expects rather than a bus error).
//   0x00 CONTROL  bit 0 start (write 1: a one-cycle pulse; reads 0), bit 1 done (sticky; write 1 or start
//                 clears it), bit 2 busy (read-only: between start or load and done), bit 3 load (write 1: a
//                 one-cycle pulse; reads 0)
//   0x04 ID       read-only: MAGIC in [31:16], VERSION in [15:0]
//   0x08 SHAPE    read-only: the array's rows R in [31:16], columns C in [15:0]
//   0x0C IRQ_EN   bit 0: irq = done & enable
//   0x10/0x14     weight image base, low/high word
//   0x18/0x1C     feature-map image base, low/high word
//   0x20/0x24     program image base, low/high word
//   0x28/0x2C     input base (inputs through memory), low/high word
//   0x30/0x34     output base (outputs through memory), low/high word
//   0x38 IO       bit 0: the input from the input base, bit 1: the outputs to the output base (a bit IO_BITS
//                 lacks reads 0 and is ignored: a top whose I/O is streamed only)
//   0x3C CYCLES   read-only: the last run's (or load's) cycles from start (or load) to done
`default_nettype none
module hg_axil_ctrl #(
    parameter integer R = 8,
    parameter integer C = 8,
    parameter integer A_W = 6,         // byte address bits, at least 6: the words past the map read 0
    parameter [1:0]   IO_BITS = 2'b00  // the IO bits the top implements (inputs, outputs through memory)
) (
    input  wire              clk,
    input  wire              rst,
    input  wire [A_W-1:0]    s_axi_awaddr,
    input  wire              s_axi_awvalid,
    output wire              s_axi_awready,
    input  wire [31:0]       s_axi_wdata,
    input  wire [32/8-1:0]   s_axi_wstrb,    // a bit per byte of the data
    input  wire              s_axi_wvalid,
    output wire              s_axi_wready,
    output wire [1:0]        s_axi_bresp,
    output reg               s_axi_bvalid,
    input  wire              s_axi_bready,
    input  wire [A_W-1:0]    s_axi_araddr,
    input  wire              s_axi_arvalid,
    output wire              s_axi_arready,
    output reg  [31:0]       s_axi_rdata,
    output wire [1:0]        s_axi_rresp,
    output reg               s_axi_rvalid,
    input  wire              s_axi_rready,
    output reg               start,          // one cycle: the host wrote CONTROL.start
    input  wire              finished,       // one cycle: the run is complete
    output reg               load,           // one cycle: the host wrote CONTROL.load
    input  wire              loaded,         // one cycle: the program is in the design's tables
    output wire [63:0]       weights_base,
    output wire [63:0]       fmap_base,
    output wire [63:0]       program_base,
    output wire [63:0]       input_base,
    output wire [63:0]       output_base,
    output wire [1:0]        io,             // IO: bit 0 input from memory, bit 1 outputs to memory
    output wire              irq
);
    localparam [15:0] MAGIC = 16'h4847, VERSION = 16'h0003;   // "HG", the map's version
    localparam [31:0] SHAPE = (R << 16) | C;
    localparam integer BYTES = 4;
    // word addresses (byte address / 4)
    localparam [A_W-3:0] A_CONTROL = 0, A_ID = 1, A_SHAPE = 2, A_IRQ_EN = 3, A_W_LO = 4, A_W_HI = 5, A_F_LO = 6,
                         A_F_HI = 7, A_P_LO = 8, A_P_HI = 9, A_I_LO = 10, A_I_HI = 11, A_O_LO = 12,
                         A_O_HI = 13, A_IO = 14, A_CYCLES = 15;

    reg done, busy, irq_en;
    reg [31:0] w_lo, w_hi, f_lo, f_hi, p_lo, p_hi, i_lo, i_hi, o_lo, o_hi, cycles;
    reg [1:0] io_mode;
    assign input_base = {i_hi, i_lo};
    assign output_base = {o_hi, o_lo};
    assign io = io_mode;
    assign weights_base = {w_hi, w_lo};
    assign fmap_base = {f_hi, f_lo};
    assign program_base = {p_hi, p_lo};
    assign irq = done && irq_en;
    assign s_axi_bresp = 2'b00;
    assign s_axi_rresp = 2'b00;

    // a write's address and data may come in either order, or together: each is held until both are in
    // and the previous response has been taken
    reg aw_full, w_full;
    reg [A_W-1:0] aw_addr;
    reg [31:0] w_data;
    reg [BYTES-1:0] w_strb;
    // nothing is taken in reset (a request taken then would never be answered)
    assign s_axi_awready = !aw_full && !rst;
    assign s_axi_wready = !w_full && !rst;
    wire write = aw_full && w_full && !s_axi_bvalid;
    wire [A_W-3:0] w_word = aw_addr[A_W-1:2];
    wire unused_addr = ^{aw_addr[1:0], s_axi_araddr[1:0]};

    function [31:0] merge(input [31:0] old, input [31:0] data, input [BYTES-1:0] strb);
        integer b;
        begin
            for (b = 0; b < BYTES; b = b + 1) merge[8*b +: 8] = strb[b] ? data[8*b +: 8] : old[8*b +: 8];
        end
    endfunction

    wire host_start = write && w_word == A_CONTROL && w_strb[0] && w_data[0];
    wire host_clear = write && w_word == A_CONTROL && w_strb[0] && w_data[1];
    wire host_load = write && w_word == A_CONTROL && w_strb[0] && w_data[3];

    always @(posedge clk) begin
        start <= host_start;
        load <= host_load;
        if (rst) begin
            aw_full <= 1'b0;
            w_full <= 1'b0;
            s_axi_bvalid <= 1'b0;
            done <= 1'b0;
            busy <= 1'b0;
            irq_en <= 1'b0;
            {w_hi, w_lo, f_hi, f_lo, p_hi, p_lo, i_hi, i_lo, o_hi, o_lo} <= 320'd0;
            io_mode <= 2'b00;
            cycles <= 32'd0;
            start <= 1'b0;
            load <= 1'b0;
        end else begin
            if (s_axi_bvalid && s_axi_bready) s_axi_bvalid <= 1'b0;
            if (s_axi_awvalid && s_axi_awready) begin
                aw_full <= 1'b1;
                aw_addr <= s_axi_awaddr;
            end
            if (s_axi_wvalid && s_axi_wready) begin
                w_full <= 1'b1;
                w_data <= s_axi_wdata;
                w_strb <= s_axi_wstrb;
            end
            if (write) begin
                aw_full <= 1'b0;
                w_full <= 1'b0;
                s_axi_bvalid <= 1'b1;
                case (w_word)
                    A_IRQ_EN: if (w_strb[0]) irq_en <= w_data[0];
                    A_W_LO: w_lo <= merge(w_lo, w_data, w_strb);
                    A_W_HI: w_hi <= merge(w_hi, w_data, w_strb);
                    A_F_LO: f_lo <= merge(f_lo, w_data, w_strb);
                    A_F_HI: f_hi <= merge(f_hi, w_data, w_strb);
                    A_P_LO: p_lo <= merge(p_lo, w_data, w_strb);
                    A_P_HI: p_hi <= merge(p_hi, w_data, w_strb);
                    A_I_LO: i_lo <= merge(i_lo, w_data, w_strb);
                    A_I_HI: i_hi <= merge(i_hi, w_data, w_strb);
                    A_O_LO: o_lo <= merge(o_lo, w_data, w_strb);
                    A_O_HI: o_hi <= merge(o_hi, w_data, w_strb);
                    A_IO: if (w_strb[0]) io_mode <= w_data[1:0] & IO_BITS;
                    default: ;
                endcase
            end
            // the run's (or load's) end is newer than any clear written in the same cycle, so it wins
            if (host_start || host_clear || host_load) done <= 1'b0;
            if (host_start || host_load) busy <= 1'b1;
            // counts the cycles from the start (or load) pulse to done, as the host sees BUSY
            if (start || load) cycles <= 32'd1;
            else if (busy) cycles <= cycles + 32'd1;
            if (finished || loaded) begin
                done <= 1'b1;
                busy <= 1'b0;
            end
        end
    end

    assign s_axi_arready = !s_axi_rvalid && !rst;
    always @(posedge clk) begin
        if (rst) begin
            s_axi_rvalid <= 1'b0;
        end else begin
            if (s_axi_rvalid && s_axi_rready) s_axi_rvalid <= 1'b0;
            if (s_axi_arvalid && s_axi_arready) begin
                s_axi_rvalid <= 1'b1;
                case (s_axi_araddr[A_W-1:2])
                    A_CONTROL: s_axi_rdata <= {29'd0, busy, done, 1'b0};
                    A_ID: s_axi_rdata <= {MAGIC, VERSION};
                    A_SHAPE: s_axi_rdata <= SHAPE;
                    A_IRQ_EN: s_axi_rdata <= {31'd0, irq_en};
                    A_W_LO: s_axi_rdata <= w_lo;
                    A_W_HI: s_axi_rdata <= w_hi;
                    A_F_LO: s_axi_rdata <= f_lo;
                    A_F_HI: s_axi_rdata <= f_hi;
                    A_P_LO: s_axi_rdata <= p_lo;
                    A_P_HI: s_axi_rdata <= p_hi;
                    A_I_LO: s_axi_rdata <= i_lo;
                    A_I_HI: s_axi_rdata <= i_hi;
                    A_O_LO: s_axi_rdata <= o_lo;
                    A_O_HI: s_axi_rdata <= o_hi;
                    A_IO: s_axi_rdata <= {30'd0, io_mode};
                    A_CYCLES: s_axi_rdata <= cycles;
                    default: s_axi_rdata <= 32'd0;
                endcase
            end
        end
    end
endmodule
`default_nettype wire

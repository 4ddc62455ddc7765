// hlsgen_axis.h: hls::axis<T, 0, 0, 0>, the AXI4-Stream beat (data and TLAST) of the overlay's ports.
// Vitis HLS ships it in ap_axi_sdata.h; C simulation with hlsgen's portable headers, or with the ap_types
// headers alone (hls4ml's copy has no ap_axi_sdata.h), gets this stand-in (hlsgen's own code) with the
// same member names, so the same sources compile either way.
#ifndef HLSGEN_AXIS_H
#define HLSGEN_AXIS_H

#if !defined(HLSGEN_PORTABLE) && defined(__has_include)
#if __has_include(<ap_axi_sdata.h>)
#include <ap_axi_sdata.h>
#define HLSGEN_VENDOR_AXIS 1
#endif
#endif

#ifndef HLSGEN_VENDOR_AXIS
namespace hls {

template <typename T, int WUser, int WId, int WDest>
struct axis {
    T data;
    ap_uint<1> last;  // TLAST: set on the last value of a tensor
};

}  // namespace hls
#endif

#endif  // HLSGEN_AXIS_H

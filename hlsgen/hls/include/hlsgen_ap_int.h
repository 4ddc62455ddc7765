// hlsgen_ap_int.h: the subset of the ap_int / ap_uint arbitrary-precision types that hlsgen's generated
// HLS C++ uses, written for plain C++14 compilers that have no vendor headers (hlsgen's own code, not a
// copy of any vendor header).
//
// A value is kept in a 64-bit integer, wrapped to its W bits on every construction and assignment (two's
// complement; ap_int sign-extends, ap_uint zero-extends), as the vendor types do. Arithmetic converts to
// long long and is exact as long as every intermediate fits in 63 bits: hlsgen sizes every type so that
// it does (docs/hls.md), and then results equal the vendor types' (whose operators widen exactly).
// Supported: construction from integers and other ap types, + - * with any integer or ap operand,
// comparisons, >> and << by an int (both keep W bits, as the vendor types do), += -= *=, to_int(),
// to_int64(). Widths: ap_int<1..64>, ap_uint<1..63>. Construction is constexpr, so that large `static
// const` tables of these types (the overlay's parameter ROM) are constant data, not code g++ must compile.
#ifndef HLSGEN_AP_INT_H
#define HLSGEN_AP_INT_H

template <int W, bool S>
class ap_int_base {
    static_assert(W >= 1 && W <= (S ? 64 : 63), "hlsgen_ap_int.h: width out of range");

  public:
    constexpr ap_int_base() : v_(0) {}
    constexpr ap_int_base(long long v) : v_(wrap(v)) {}
    template <int W2, bool S2>
    constexpr ap_int_base(const ap_int_base<W2, S2>& other) : v_(wrap(other.to_int64())) {}

    constexpr long long to_int64() const { return v_; }
    int to_int() const { return static_cast<int>(v_); }
    operator long long() const { return v_; }

    ap_int_base& operator+=(long long rhs) { v_ = wrap(v_ + rhs); return *this; }
    ap_int_base& operator-=(long long rhs) { v_ = wrap(v_ - rhs); return *this; }
    ap_int_base& operator*=(long long rhs) { v_ = wrap(v_ * rhs); return *this; }
    ap_int_base operator<<(int n) const { return ap_int_base(static_cast<long long>(
        static_cast<unsigned long long>(v_) << n)); }
    ap_int_base operator>>(int n) const { return ap_int_base(v_ >> n); }

  private:
    static constexpr long long wrap(long long v) {
        if (W == 64) return v;
        const unsigned long long mask = (1ULL << (W % 64)) - 1ULL;
        unsigned long long bits = static_cast<unsigned long long>(v) & mask;
        if (S && ((bits >> (W - 1)) & 1ULL)) bits |= ~mask;  // sign-extend
        return static_cast<long long>(bits);
    }

    long long v_;
};

template <int W>
struct ap_int : ap_int_base<W, true> {
    constexpr ap_int() {}
    constexpr ap_int(long long v) : ap_int_base<W, true>(v) {}
    template <int W2, bool S2>
    constexpr ap_int(const ap_int_base<W2, S2>& other) : ap_int_base<W, true>(other) {}
};

template <int W>
struct ap_uint : ap_int_base<W, false> {
    constexpr ap_uint() {}
    constexpr ap_uint(long long v) : ap_int_base<W, false>(v) {}
    template <int W2, bool S2>
    constexpr ap_uint(const ap_int_base<W2, S2>& other) : ap_int_base<W, false>(other) {}
};

#endif  // HLSGEN_AP_INT_H

// Conversions between element dtypes with the rules that kp_cast documents:
// floats are rounded to nearest even once, directly from the source value;
// floats become integers by truncation with saturation (NaN gives 0); integers
// narrow by keeping their low bits; NaN becomes the destination's canonical
// quiet NaN with the source's sign; a conversion to the same dtype copies bits.
//
// kp_convert<Dst>(x) is the one entry point. Every path is written so that it
// gives the same bits under nvcc and hipcc: no C++ conversion whose result is
// undefined (float to integer out of range) or rounds twice (f64 or i64 to
// f16/bf16 through f32) is used.
#pragma once
#include "kp_device.cuh"

// ---- what each element type is

template <typename A, typename B> struct kp_same_type { static constexpr bool value = false; };
template <typename A> struct kp_same_type<A, A> { static constexpr bool value = true; };

template <typename T> struct kp_type_info;
template <> struct kp_type_info<float> { static constexpr bool is_float = true; static constexpr int bits = 32; };
template <> struct kp_type_info<double> { static constexpr bool is_float = true; static constexpr int bits = 64; };
template <> struct kp_type_info<kp_f16> { static constexpr bool is_float = true; static constexpr int bits = 16; };
template <> struct kp_type_info<kp_bf16> { static constexpr bool is_float = true; static constexpr int bits = 16; };
template <> struct kp_type_info<uint8_t> { static constexpr bool is_float = false; static constexpr int bits = 8; };
template <> struct kp_type_info<uint32_t> { static constexpr bool is_float = false; static constexpr int bits = 32; };
template <> struct kp_type_info<int64_t> { static constexpr bool is_float = false; static constexpr int bits = 64; };

// ---- NaN detection and canonical NaNs

KP_DEVICE bool kp_is_nan(float x) { return x != x; }
KP_DEVICE bool kp_is_nan(double x) { return x != x; }
KP_DEVICE bool kp_is_nan(kp_f16 x) { return (x.bits & 0x7fffu) > 0x7c00u; }
KP_DEVICE bool kp_is_nan(kp_bf16 x) { return (x.bits & 0x7fffu) > 0x7f80u; }

KP_DEVICE bool kp_sign_bit(float x) { return (__float_as_uint(x) >> 31) != 0; }
KP_DEVICE bool kp_sign_bit(double x) { return ((unsigned long long)__double_as_longlong(x) >> 63) != 0; }
KP_DEVICE bool kp_sign_bit(kp_f16 x) { return (x.bits >> 15) != 0; }
KP_DEVICE bool kp_sign_bit(kp_bf16 x) { return (x.bits >> 15) != 0; }

// What a NaN becomes: the canonical quiet NaN (sign kept) of a float type, 0 for an integer.
template <typename T> KP_DEVICE T kp_nan_result(bool neg) { (void)neg; return (T)0; }
template <> KP_DEVICE float kp_nan_result<float>(bool neg)
{
    return __uint_as_float(0x7fc00000u | ((uint32_t)neg << 31));
}
template <> KP_DEVICE double kp_nan_result<double>(bool neg)
{
    return __longlong_as_double((long long)(0x7ff8000000000000ull | ((unsigned long long)neg << 63)));
}
template <> KP_DEVICE kp_f16 kp_nan_result<kp_f16>(bool neg) { return kp_f16{(uint16_t)(0x7e00u | ((unsigned)neg << 15))}; }
template <> KP_DEVICE kp_bf16 kp_nan_result<kp_bf16>(bool neg) { return kp_bf16{(uint16_t)(0x7fc0u | ((unsigned)neg << 15))}; }

// ---- rounding an exact value into a 16-bit float format

// A binary float format with FRAC stored fraction bits and EXP exponent bits.
template <int FRAC, int EXP> struct kp_float_format {
    static constexpr int frac_bits = FRAC;
    static constexpr int bias = (1 << (EXP - 1)) - 1;
    static constexpr int emin = 1 - bias;  // exponent of the smallest normal
    static constexpr int emax = bias;      // exponent of the largest finite
    static constexpr uint32_t inf_bits = ((1u << EXP) - 1u) << FRAC;
};
typedef kp_float_format<10, 5> kp_f16_format;
typedef kp_float_format<7, 8> kp_bf16_format;

// Bits (sign clear) of mag * 2^exp, mag != 0, rounded to nearest even in
// format F: too large gives infinity, too small a subnormal or zero. Exact
// integer arithmetic, so one rounding whatever the source type was.
template <typename F> KP_DEVICE uint32_t kp_round_to_format(unsigned long long mag, int exp)
{
    const int top = 63 - __clzll((long long)mag);  // bit index of the leading one
    const int e = top + exp;                       // value is in [2^e, 2^(e+1))
    if (e > F::emax)
        return F::inf_bits;
    // Exponent of the last kept bit: F::frac_bits below the leading one for
    // normals; subnormals all share the quantum of the smallest normals.
    int q = (e > F::emin ? e : F::emin) - F::frac_bits;
    const int drop = q - exp;  // low bits of mag that fall below the quantum
    unsigned long long keep;
    if (drop <= 0) {
        keep = mag << -drop;  // exact; fits, as keep < 2^(frac_bits + 1)
    } else if (drop > 64) {
        return 0;  // below half the smallest subnormal
    } else {
        const unsigned long long rem = drop == 64 ? mag : mag & ((1ull << drop) - 1);
        const unsigned long long half = 1ull << (drop - 1);
        keep = drop == 64 ? 0 : mag >> drop;
        if (rem > half || (rem == half && (keep & 1)))
            keep++;
    }
    if (keep >> (F::frac_bits + 1)) {  // rounding carried into the next binade
        keep >>= 1;
        q++;
    }
    if (keep < (1ull << F::frac_bits))
        return (uint32_t)keep;  // subnormal (or zero): biased exponent 0
    const int biased = q + F::frac_bits + F::bias;
    if (biased >= (int)(F::inf_bits >> F::frac_bits))
        return F::inf_bits;
    return ((uint32_t)biased << F::frac_bits) | ((uint32_t)keep & ((1u << F::frac_bits) - 1u));
}

// A finite or infinite (not NaN) double, rounded once into format F; with sign.
template <typename F> KP_DEVICE uint16_t kp_f64_to_format(double d)
{
    const unsigned long long u = (unsigned long long)__double_as_longlong(d);
    const uint32_t sign = (uint32_t)(u >> 63) << 15;
    const int ex = (int)((u >> 52) & 0x7ff);
    const unsigned long long man = u & ((1ull << 52) - 1);
    if (ex == 0x7ff)
        return (uint16_t)(sign | F::inf_bits);
    if (ex == 0 && man == 0)
        return (uint16_t)sign;
    const unsigned long long mag = ex ? man | (1ull << 52) : man;
    return (uint16_t)(sign | kp_round_to_format<F>(mag, (ex ? ex : 1) - 1075));
}

// Sign of an integer (only i64 can be negative).
template <typename T> KP_DEVICE bool kp_is_negative(T x) { (void)x; return false; }
KP_DEVICE bool kp_is_negative(int64_t x) { return x < 0; }

// An integer rounded once into format F; with sign.
template <typename F, typename I> KP_DEVICE uint16_t kp_int_to_format(I x)
{
    const bool neg = kp_is_negative(x);
    const unsigned long long mag = neg ? 0ull - (unsigned long long)x : (unsigned long long)x;
    if (mag == 0)
        return 0;
    return (uint16_t)(((uint32_t)neg << 15) | kp_round_to_format<F>(mag, 0));
}

// ---- float to integer: truncate toward zero, saturate, NaN gives 0

// S is float or double; x is not NaN.
template <typename I, typename S> KP_DEVICE I kp_float_to_int(S x)
{
    if constexpr (kp_same_type<I, int64_t>::value) {
        if (x >= (S)9223372036854775808.0)
            return INT64_MAX;
        if (x <= (S)-9223372036854775808.0)
            return INT64_MIN;
        return (int64_t)x;
    } else {
        // Unsigned: anything below 1 (negative values, -Inf, fractions) gives 0.
        const S limit = (S)(1ull << kp_type_info<I>::bits);  // 2^bits, exact
        if (!(x >= (S)1))
            return 0;
        if (x >= limit)
            return (I)((1ull << kp_type_info<I>::bits) - 1);
        return (I)x;
    }
}

// ---- the conversion

template <typename Dst, typename Src> KP_DEVICE Dst kp_convert(Src x)
{
    if constexpr (kp_same_type<Dst, Src>::value) {
        return x;  // same dtype: the bits, unchanged
    } else if constexpr (kp_type_info<Src>::is_float) {
        if (kp_is_nan(x))
            return kp_nan_result<Dst>(kp_sign_bit(x));
        if constexpr (kp_same_type<Dst, kp_f16>::value && kp_same_type<Src, double>::value) {
            return kp_f16{kp_f64_to_format<kp_f16_format>(x)};
        } else if constexpr (kp_same_type<Dst, kp_bf16>::value && kp_same_type<Src, double>::value) {
            return kp_bf16{kp_f64_to_format<kp_bf16_format>(x)};
        } else if constexpr (kp_same_type<Dst, kp_f16>::value) {
            return kp_f32_to_f16(kp_load(x));  // f32, f16 and bf16 are exact in f32
        } else if constexpr (kp_same_type<Dst, kp_bf16>::value) {
            return kp_f32_to_bf16(kp_load(x));
        } else if constexpr (kp_type_info<Dst>::is_float) {
            return (Dst)kp_load(x);  // f32/f64: exact widening or one IEEE rounding
        } else {
            return kp_float_to_int<Dst>(kp_load(x));
        }
    } else {  // integer source
        if constexpr (kp_same_type<Dst, kp_f16>::value) {
            return kp_f16{kp_int_to_format<kp_f16_format>(x)};
        } else if constexpr (kp_same_type<Dst, kp_bf16>::value) {
            return kp_bf16{kp_int_to_format<kp_bf16_format>(x)};
        } else {
            // To f32/f64: one IEEE round-to-nearest-even conversion. To an
            // integer: widening is exact; narrowing to unsigned wraps modulo 2^bits.
            return (Dst)x;
        }
    }
}

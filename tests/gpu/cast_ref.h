/* CPU reference for kp_cast and the inputs that test it. The reference
 * implements the rules documented for kp_cast in <kernelpack/ops.h> and is
 * written independently of the kernels: rounding into f16/bf16 searches the
 * ordered bit patterns for the nearest value instead of shifting bits. */
#ifndef KP_CAST_REF_H
#define KP_CAST_REF_H

#include <stddef.h>
#include <stdint.h>
#include <kernelpack/tensor.h>

/* Converts one element: *in holds a `src` element, *out receives a `dst`
 * element (kp_dtype_size(dst) bytes). */
void cast_ref(kp_dtype dst, void *out, kp_dtype src, const void *in);

/* Writes up to `max` special `src` elements (NaN, infinities, signed zeros,
 * rounding ties of f16/bf16/f32/f64, subnormals, integer range limits) to
 * out; returns how many. */
size_t cast_special_inputs(kp_dtype src, void *out, size_t max);

/* Fills n `src` elements with pseudo-random values (rng of harness.h) that
 * mix random bit patterns, values around integer ranges and values on or
 * next to f16/bf16 rounding ties. */
void cast_random_inputs(kp_dtype src, void *out, size_t n);

/* Element i of a `dtype` array as raw bits (zero-extended) and as a double
 * (for messages). */
uint64_t cast_bits(kp_dtype dtype, const void *base, size_t i);
double cast_value(kp_dtype dtype, const void *base, size_t i);

#endif

/* CPU reference of the GGUF block formats (kernels/common/kp_quant_blocks.h),
 * written from ggml's ggml-quants.c (dequantize_row_*, quantize_row_*_ref)
 * and checked bit for bit against the gguf Python package's numpy code by
 * tests/check_quant_ref.py. Plain C, compiled without floating-point
 * contraction so every product and sum is one f32 operation, as in ggml. */
#ifndef KP_QUANT_REF_H
#define KP_QUANT_REF_H

#include <stddef.h>
#include <stdint.h>

#include "kp_quant_blocks.h"

/* Block geometry of format `qf` (a KP_QF_* value); 0 for an unknown value. */
int quant_ref_block_elems(int qf);
int quant_ref_block_bytes(int qf);
/* GGUF's name of the format ("q4_K"), or NULL. */
const char *quant_ref_name(int qf);
/* True for the formats kp_quantize writes (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1). */
int quant_ref_can_quantize(int qf);

/* binary16 <-> f32, round to nearest even (subnormals, overflow to inf).
 * NaN: f16 -> f32 keeps the payload; f32 -> f16 gives a quiet NaN of the
 * same sign with the top payload bits (as F16C). */
float quant_ref_f16_to_f32(uint16_t h);
uint16_t quant_ref_f32_to_f16(float f);

/* Dequantizes `cols` elements (a multiple of the block elements) of one
 * row of blocks to f32; aborts on an unknown format or a partial block.
 * Q8_1, which ggml never dequantizes, gives qs * d as Q8_0 (s is not read).
 * With binary16 scales every format's element is the exact value of ggml's
 * formula rounded once (the partial products are exact), so the order of
 * operations or a fused multiply-add cannot change it; Q8_K's f32 d * q is
 * a single product too. */
void quant_ref_dequantize_row(int qf, const void *blocks, float *out, int64_t cols);

/* Quantizes `cols` f32 elements into blocks as ggml's quantize_row_*_ref;
 * only for the formats of quant_ref_can_quantize (aborts otherwise). Unlike
 * dequantize this is sensitive to rounding: x * (1/d) is not x / d, and a
 * fused x * id + 8.5 truncates differently near the ties. Signed zeros
 * follow ggml: Q4_0/Q5_0 store d = -0 for a block of zeros, Q4_1/Q5_1 take
 * the first of equal min/max values. Inputs must be finite, and a block not
 * all zero must have a scale whose reciprocal is finite (ggml's casts are
 * undefined otherwise, e.g. for a block of only f32 subnormals). */
void quant_ref_quantize_row(int qf, const float *x, void *blocks, int64_t cols);

/* Fills `nblocks` blocks of format qf with pseudo-random content from *seed
 * (any 64-bit state; updated): random quant bits, and scales (d, m, dmin,
 * Q8_K's f32 d) that are finite, of either sign where the format allows,
 * with magnitudes between about 2^-10 and 2^-2, so that dequantized values
 * are finite and dot products of them stay well inside f32 range. */
void quant_ref_random_blocks(int qf, void *blocks, size_t nblocks, uint64_t *seed);

#endif

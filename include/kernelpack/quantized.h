/* kernelpack: GGUF block-quantized matrices (the `quantized` module):
 * dequantize, quantize, row lookup and the matrix x vector product of token
 * generation.
 *
 * Formats. Blocks are byte for byte those of GGUF files (ggml's block_*
 * structs), so tensor data read from a GGUF file is uploaded unchanged. Each
 * block holds `block elements` consecutive elements of a row:
 *
 *   format  elems bytes  layout (16-bit floats are IEEE binary16)
 *   Q4_0     32    18    d; 16 bytes of 4-bit q:      x = d * (q - 8)
 *   Q4_1     32    20    d, m; 16 bytes of 4-bit q:   x = d * q + m
 *   Q5_0     32    22    d; 4 bytes high bits; 16 bytes low nibbles: x = d * (q - 16)
 *   Q5_1     32    24    d, m; 4 bytes high bits; 16 bytes low nibbles: x = d * q + m
 *   Q8_0     32    34    d; 32 int8 q:                x = d * q
 *   Q8_1     32    36    d, s = d * sum(q); 32 int8 q: x = d * q
 *   Q2_K    256    84    16 (4-bit scale, 4-bit min) per 16; 2-bit q; d, dmin:
 *                        x = d * scale * q - dmin * min
 *   Q3_K    256   110    high-bit mask; 2-bit q; 16 six-bit scales; d:
 *                        x = d * (scale - 32) * (q - 4 * !high)
 *   Q4_K    256   144    d, dmin; 8 six-bit (scale, min) per 32; 4-bit q:
 *                        x = d * scale * q - dmin * min
 *   Q5_K    256   176    as Q4_K plus a high-bit plane (5-bit q)
 *   Q6_K    256   210    4-bit low q; 2-bit high q; 16 int8 scales; d:
 *                        x = d * scale * (q - 32)
 *   Q8_K    256   292    f32 d; 256 int8 q; 16 int16 sums of 16 q:  x = d * q
 *   IQ4_NL   32    18    d; 16 bytes of 4-bit indices into a fixed table of
 *                        16 values from -127 to 113:  x = d * table[q]
 *   IQ4_XS  256   136    d; 8 six-bit scales (biased by 32) per 32; indices
 *                        as IQ4_NL:  x = d * (scale - 32) * table[q]
 *
 * Results are exactly ggml's: each product and sum above is one f32
 * operation, evaluated left to right, never fused (kernels/common/
 * kp_quant_blocks.h documents the bit positions; ggml's ggml-quants.c is
 * the definition).
 *
 * A quantized matrix is `rows` rows of `cols` elements; row r starts
 * `offset + r * row_stride` bytes into the buffer and is cols / block
 * elements blocks, back to back. `cols` must be a multiple of the format's
 * block elements; `offset` and `row_stride` multiples of the format's field
 * alignment (4 bytes for Q4_1, Q5_1, Q8_1, Q2_K, Q4_K, Q5_K, Q8_K, IQ4_XS;
 * 2 bytes for the others), and `row_stride` at least one row's bytes.
 *
 * As for every op, arguments are checked before anything is queued, bad
 * ones give KP_ERR_INVALID_ARGUMENT (or KP_ERR_BUFFER_TOO_SMALL) with a
 * message naming the problem, and nothing outside the operands is touched. */
#ifndef KERNELPACK_QUANTIZED_H
#define KERNELPACK_QUANTIZED_H

#include <stddef.h>
#include <stdint.h>
#include "core.h"
#include "device.h"
#include "indexing.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Values are GGUF's tensor type numbers (ggml_type). */
typedef enum kp_qformat {
    KP_QFORMAT_Q4_0 = 2,
    KP_QFORMAT_Q4_1 = 3,
    KP_QFORMAT_Q5_0 = 6,
    KP_QFORMAT_Q5_1 = 7,
    KP_QFORMAT_Q8_0 = 8,
    KP_QFORMAT_Q8_1 = 9,
    KP_QFORMAT_Q2_K = 10,
    KP_QFORMAT_Q3_K = 11,
    KP_QFORMAT_Q4_K = 12,
    KP_QFORMAT_Q5_K = 13,
    KP_QFORMAT_Q6_K = 14,
    KP_QFORMAT_Q8_K = 15,
    KP_QFORMAT_IQ4_NL = 20,
    KP_QFORMAT_IQ4_XS = 23
} kp_qformat;

typedef struct kp_qformat_info {
    const char *name;         /* "q4_0", "q4_K", "iq4_xs": GGUF's spelling */
    uint32_t block_elems;     /* 32 or 256 */
    uint32_t block_bytes;     /* 18 for Q4_0, 144 for Q4_K, ... */
    uint32_t alignment;       /* what offset and row_stride must be multiples of */
} kp_qformat_info;

/* Describes `format`; KP_ERR_INVALID_ARGUMENT if it is not one of the above. */
KP_API kp_status kp_qformat_get_info(kp_qformat format, kp_qformat_info *info);
/* Number of formats and the i-th one (in the enum's order), for iterating. */
KP_API size_t kp_qformat_count(void);
KP_API kp_qformat kp_qformat_at(size_t index);

/* A block-quantized matrix in device memory (see the top of this file). */
typedef struct kp_qmatrix {
    kp_buffer *buffer;
    size_t offset;            /* bytes from the buffer start to row 0 */
    kp_qformat format;
    int64_t rows;
    int64_t cols;             /* elements per row: a multiple of the block elements */
    size_t row_stride;        /* bytes between row starts */
} kp_qmatrix;

/* Fills *m for rows packed back to back (row_stride = one row's bytes). */
KP_API kp_status kp_qmatrix_packed(kp_qmatrix *m, kp_buffer *buffer, size_t offset,
                                   kp_qformat format, int64_t rows, int64_t cols);

/* dst (rows x cols: f32, f16 or bf16, any layout) = the dequantized src.
 * f32 results are ggml's bit for bit; f16 and bf16 are those rounded to
 * nearest even. dst must not overlap src. Fastest for a whole matrix whose
 * rows are packed back to back (kp_qmatrix_packed) from a 16-byte boundary
 * of the buffer, into a contiguous dst that starts at a 16-byte boundary:
 * it then streams through in tiles; other layouts are decoded eight
 * elements at a time where they lie. */
KP_API kp_status kp_dequantize(kp_stream *stream, const kp_tensor *dst, const kp_qmatrix *src);

/* dst = src (rows x cols: f32, f16 or bf16, any layout) quantized to Q8_0,
 * Q8_1, Q4_0, Q4_1, Q5_0 or Q5_1 with ggml's reference rounding
 * (quantize_row_*_ref): per block, Q8 takes d = max|x| / 127 and
 * q = round-half-away(x / d) (computed as x * (1/d)); Q4_0/Q5_0 take the
 * element of largest magnitude m, d = m / -8 (-16) and q = min(15 (31),
 * trunc(x * (1/d) + 8.5 (16.5))); Q4_1/Q5_1 take d = (max - min) / 15 (31),
 * m = min and q = trunc((x - min) * (1/d) + 0.5) (Q4_1 capped at 15). Scales
 * are computed in f32 and stored rounded to binary16; Q8_1's s is
 * binary16(sum(q) * d). f16/bf16 sources are first widened to f32 exactly.
 * Non-finite inputs give unspecified blocks. */
KP_API kp_status kp_quantize(kp_stream *stream, const kp_qmatrix *dst, const kp_tensor *src);

/* Embedding lookup in a quantized table: dst (n x cols, f32/f16/bf16, any
 * layout) row i = dequantized row ids[i] of `table`, for ids of rank 1
 * (length n, u32 or i64, any stride). An id outside 0..rows-1 gives a row of
 * zeros and is recorded in `status` (if not NULL) at position i, as the
 * indexing module's ops do (indexing.h). */
KP_API kp_status kp_quantized_get_rows(kp_stream *stream, const kp_tensor *dst,
                                       const kp_qmatrix *table, const kp_tensor *ids,
                                       kp_index_status *status);

/* Largest batch kp_quantized_matvec takes. */
#define KP_QMATVEC_MAX_BATCH 8

/* Matrix x vector(s), the product of token generation:
 *     dst[b, r] = sum_c w[r, c] * x[b, c]
 * for w (rows x cols, any format above), x (batch x cols; or rank 1 of
 * cols for batch 1; f32, f16 or bf16, any layout) and dst (batch x rows, or
 * rank 1 of rows; f32, f16 or bf16, any layout), batch 1..8. The products
 * (this, kp_quantized_matmul, kp_quantized_moe) take up to 32 x (2^31 - 1)
 * columns.
 *
 * As in ggml, x is first quantized on the device to Q8_1 blocks (the
 * rounding of kp_quantize) into `workspace`, and the products run on 8-bit
 * integers with exact integer sums per block; each block's sum is then
 * scaled in f32 and the blocks are added in f32 in an unspecified order.
 * The result therefore equals the f64 dot of the dequantized weights with
 * the Q8_1-rounded x up to f32 rounding of those block terms.
 *
 * Workspace: kp_quantized_matvec_workspace_size gives the bytes for
 * (batch, cols); the workspace must be on the stream's device, 16-byte
 * aligned, at least that large, not overlap dst, and not be used by other
 * work until the op has finished on the stream. */
KP_API kp_status kp_quantized_matvec(kp_stream *stream, const kp_tensor *dst,
                                     const kp_qmatrix *w, const kp_tensor *x,
                                     kp_buffer *workspace);
KP_API kp_status kp_quantized_matvec_workspace_size(int64_t batch, int64_t cols, size_t *bytes);

/* Largest batch kp_quantized_matmul takes (its grid holds 65535 tiles of 16
 * batch rows). */
#define KP_QMATMUL_MAX_BATCH (65535 * 16)

/* The same product for any batch 1..KP_QMATMUL_MAX_BATCH (prompt
 * processing): batches up to KP_QMATVEC_MAX_BATCH run kp_quantized_matvec's
 * kernels, larger ones a tiled mat-mat on the same Q8_1 activations, with
 * 8-bit integer matrix instructions where the device has them (NVIDIA
 * sm_80+) and dot-product instructions elsewhere. Results, arguments and
 * workspace rules are kp_quantized_matvec's; the workspace size comes from
 * kp_quantized_matmul_workspace_size. */
KP_API kp_status kp_quantized_matmul(kp_stream *stream, const kp_tensor *dst,
                                     const kp_qmatrix *w, const kp_tensor *x,
                                     kp_buffer *workspace);
KP_API kp_status kp_quantized_matmul_workspace_size(int64_t batch, int64_t cols, size_t *bytes);

/* Mixture-of-experts products: for every token t and each of its k slots j,
 *     dst[t, j, :] = experts[ids[t, j]] x x[t, :]        (x: tokens x cols)
 *  or dst[t, j, :] = experts[ids[t, j]] x x[t, j, :]     (x: tokens x k x cols)
 * where `experts` stacks n_experts matrices of the same format, each of
 * rows = experts->rows / n_experts rows and experts->cols columns (a GGUF
 * expert tensor of (experts, rows, cols) as one kp_qmatrix), ids are
 * (tokens, k) u32 or i64, any strides, and dst is (tokens, k, rows), f32,
 * f16 or bf16, any layout. x is f32, f16 or bf16; a rank-3 x must have its
 * token stride k times its slot stride. Each pair's result is computed as
 * kp_quantized_matvec computes a batch row (same Q8_1 activations, same
 * tolerance). With few pairs per expert (token generation) every pair
 * reads its expert's matrix; with many (prompts) the pairs are first
 * listed by expert on the device and each expert's run as a mat-mat, so its
 * weights are read once per tile of pairs.
 * An id outside 0..n_experts-1 gives zeros in dst[t, j, :] and is recorded
 * in `status` (if not NULL) at position t * k + j, as the indexing module's
 * ops record invalid ids (indexing.h).
 * Workspace: kp_quantized_moe_workspace_size(tokens, k, n_experts, cols),
 * on the stream's device, 16-byte aligned, not overlapping the operands,
 * and not used by other work until the op has finished on the stream.
 * tokens * k must fit in an int32, and tokens * k / 64 + n_experts must not
 * exceed 65535 (the grid of the grouped path). */
KP_API kp_status kp_quantized_moe(kp_stream *stream, const kp_tensor *dst,
                                  const kp_qmatrix *experts, int64_t n_experts,
                                  const kp_tensor *ids, const kp_tensor *x,
                                  kp_buffer *workspace, kp_index_status *status);
KP_API kp_status kp_quantized_moe_workspace_size(int64_t tokens, int64_t k, int64_t n_experts,
                                                 int64_t cols, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif

/* What the quantized module's op files share (quantized.c,
 * quantized_products.c, quantized_moe.c). */
#ifndef KP_QUANTIZED_INTERNAL_H
#define KP_QUANTIZED_INTERNAL_H

#include "internal.h"
#include "kernel_families.h"
#include "kp_quant_abi.h"

struct qformat_row {
    kp_qformat format;
    const char *name;
    uint32_t elems, bytes;
};

/* Checks a quantized matrix argument on dev: its format (*format), shape,
 * alignment and extent in its buffer; *view is its bytes as a u8 tensor,
 * for the overlap checks. */
kp_status kp_qcheck_matrix(const char *fn, const char *what, const kp_qmatrix *m,
                           const kp_device *dev, const struct qformat_row **format,
                           kp_tensor *view);
/* kp_check_tensor for the float operands: f32, f16 or bf16. */
kp_status kp_qcheck_float_tensor(const char *fn, const char *what, const kp_tensor *t,
                                 const kp_device *dev, uint64_t *numel);
/* The kernels' code for a float dtype: 0 f32, 1 f16, 2 bf16. */
int kp_qfloat_code(kp_dtype d);

/* ---- the products' Q8_1 activations (quantized_products.c) */

/* Where the quantized activations of `batch` rows of `cols` lie in the
 * workspace: int8 values (batch x cols), then metadata (batch rows of
 * KP_QMV_META_STRIDE entries); total is the workspace size. */
struct kp_qmv_workspace {
    size_t qs, meta, total;
};
bool kp_qmv_plan_workspace(int64_t batch, int64_t cols, struct kp_qmv_workspace *w);
/* The products' kernels number a row's 32-element items with 32-bit
 * integers: more than KP_QPRODUCT_MAX_COLS columns are refused. */
#define KP_QPRODUCT_MAX_COLS ((int64_t)INT32_MAX * 32)
kp_status kp_qcheck_product_cols(const char *fn, const char *what, int64_t cols);
/* Checks the caller's workspace for plan (after the other arguments):
 * present, on the stream's device, large enough, 16-byte aligned and
 * disjoint from x, w and (if it has elements) dst. */
kp_status kp_qmv_check_workspace(const char *fn, const kp_stream *stream, kp_buffer *workspace,
                                 const struct kp_qmv_workspace *plan, const kp_tensor *x,
                                 const kp_tensor *dst, uint64_t n_dst, const kp_tensor *w_view);
/* Quantizes x's rows (rows x cols, strides in elements) into the
 * workspace at base; interleaved for the tensor-core batch-8 mat-vec
 * (kp_qmv_act_args::interleave) if asked. */
kp_status kp_qmv_quantize_act(kp_stream *stream, const kp_tensor *x, int64_t rows, int64_t cols,
                              int64_t row_stride, int64_t col_stride, bool interleave, void *base,
                              const struct kp_qmv_workspace *plan);
/* The mat-vec kernels' staging: 16 where every row of w starts 16-byte
 * aligned, else 2 (kp_qmv_args::vector). */
int kp_qmv_staging_vector(const void *w, size_t row_stride, int64_t rows);
/* The dynamic shared memory of the loaded mat-mat kernel of `family`
 * (plain or mixture-of-experts) for format f and batch tile nb: the
 * tensor-core form's stages are dynamic (KP_QMM_SHARED_BYTES), the other
 * forms' static (0); which one is loaded, the kernel's static shared
 * memory tells: too little for any tile's stages means dynamic ones. */
kp_status kp_qmm_shared_bytes(kp_device *dev, enum kp_family_id family, const struct qformat_row *f,
                              int nb, unsigned *bytes);
/* The mat-mat's tiles along the weight rows for the tile of nb batch rows
 * (KP_QMM_NB_SMALL or KP_QMM_NB_LARGE, KP_QMM_ROWS(nb) weight rows). */
uint64_t kp_qmm_row_tiles(int64_t rows, int nb);

#endif

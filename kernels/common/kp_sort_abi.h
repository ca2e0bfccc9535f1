/* Parameters and sizes of the sort kernels, shared by the launchers (C11)
 * and the kernels (CUDA/HIP C++). */
#ifndef KP_SORT_ABI_H
#define KP_SORT_ABI_H

#include <stdint.h>

/* Elements one block sorts in shared memory (a power of two), and the
 * threads of that block. Rows up to KP_SORT_TILE long are sorted by one
 * block; longer rows are sorted in tiles and then merged. */
#define KP_SORT_TILE 2048
#define KP_SORT_BLOCK 256
/* Items each thread of a sorting or merging block holds (TILE / BLOCK). */
#define KP_SORT_ITEMS 8

/* One argsort: `rows` rows of `ncols` keys. Row r starts where the `outer`
 * kp_strided layout (operand 0 dst, operand 1 src, over the dims before
 * the last) puts it; columns step by the *_col_stride elements. */
struct kp_sort_rows {
    int64_t rows;
    int64_t ncols;
    int64_t dst_col_stride;
    int64_t src_col_stride;
    int32_t seg_log2;       /* block path: each row padded to 2^seg_log2 keys */
    int32_t descending;     /* nonzero: largest key first */
};

/* One merge pass over sorted runs of `width` keys in each row of a dense
 * rows x ncols scratch array: runs 2k and 2k+1 become one run. */
struct kp_sort_merge {
    int64_t rows;
    int64_t ncols;
    int64_t width;
    int64_t dst_col_stride; /* final pass: where the indices go */
};

#endif

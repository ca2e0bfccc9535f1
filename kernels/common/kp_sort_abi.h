/* Parameters and sizes of the sort kernels, shared by the launchers (C11)
 * and the kernels (CUDA/HIP C++). */
#ifndef KP_SORT_ABI_H
#define KP_SORT_ABI_H

#include <stdint.h>

/* Elements one block sorts or ranks at a time (a power of two), and the
 * threads of that block. Rows up to KP_SORT_TILE long are sorted by one
 * block; longer rows by radix passes over whole rows, a tile a block. */
#define KP_SORT_TILE 2048
#define KP_SORT_BLOCK 256
/* Items each thread of a block holds (TILE / BLOCK). */
#define KP_SORT_ITEMS 8
/* Rows of at least this many keys (padded to a power of two) are sorted
 * within a block by radix passes; shorter ones by a bitonic network. */
#define KP_SORT_RADIX_MIN 128

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

/* One radix pass over rows longer than KP_SORT_TILE, held in dense rows x
 * ncols scratch arrays: the digit is the key's 8 bits from `shift` up. */
struct kp_sort_radix {
    int64_t rows;
    int64_t ncols;
    int64_t dst_col_stride; /* last pass: where the columns go */
    int32_t shift;
    int32_t unused;
};

#endif

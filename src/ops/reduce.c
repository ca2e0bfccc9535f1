/* kp_reduce: validation, dimension planning and launch of the reductions of
 * the reduce module.
 *
 * Planning: the kept dims and the reduced dims are each ordered by source
 * stride (largest first; the order of either set does not change the
 * result, since outputs are addressed through both src and dst strides and
 * a reduction does not depend on the order of its elements up to float
 * rounding) and merged where they form one run. Then:
 * - the reduced set is one contiguous run: a group of threads per output
 *   (reduce_<op>: a block, or a segment of <= 32 lanes for short runs) with
 *   16-byte loads;
 * - outputs lie closer together than the elements of one output (a
 *   reduction over outer dims): one thread per output, or per 16 bytes of
 *   outputs contiguous in src and dst (reduce_cols_<op>; these split the
 *   reduced elements across the block's y dimension when outputs are few);
 * - otherwise a group per output gathering at any strides (reduce_strided).
 * When there are too few outputs to fill the device (a full-tensor sum), the
 * reduced set is split across blocks that write partials to the stream's
 * scratch area, and reduce_final_<op> combines them: two passes, no
 * atomics, deterministic. */
#include <string.h>

#include "kernel_families.h"

#define REDUCE_BLOCK ((unsigned)KP_REDUCE_MAX_BLOCK)
#define SPLIT_MIN_GROUP 4096u  /* reduced elements per split (16 per thread) */
#define SPLIT_MIN_COLS 32u     /* reduced elements per thread and split (cols kernel) */
#define GROUP_UNITS 32u        /* most units (16-byte loads or elements) per thread of a group */
#define COL_SLICES_MAX 8u      /* reduced-dim slices a block (cols kernel): >= 32 runs a row */
#define COL_SLICE_MIN 16u      /* reduced elements per slice at least */
#define COL_RUN_BLOCKS 3u      /* blocks a multiprocessor that 16-byte column runs aim for */

enum reduce_kind { KIND_GROUPS, KIND_STRIDED, KIND_COLS, KIND_FINAL };

static const enum kp_family_id reduce_families[KP_REDUCE_OP_COUNT][4] = {
    [KP_REDUCE_SUM] = {KP_KF_REDUCE_SUM, KP_KF_REDUCE_STRIDED_SUM, KP_KF_REDUCE_COLS_SUM,
                       KP_KF_REDUCE_FINAL_SUM},
    [KP_REDUCE_MEAN] = {KP_KF_REDUCE_SUM, KP_KF_REDUCE_STRIDED_SUM, KP_KF_REDUCE_COLS_SUM,
                        KP_KF_REDUCE_FINAL_SUM},
    [KP_REDUCE_MIN] = {KP_KF_REDUCE_MIN, KP_KF_REDUCE_STRIDED_MIN, KP_KF_REDUCE_COLS_MIN,
                       KP_KF_REDUCE_FINAL_MIN},
    [KP_REDUCE_MAX] = {KP_KF_REDUCE_MAX, KP_KF_REDUCE_STRIDED_MAX, KP_KF_REDUCE_COLS_MAX,
                       KP_KF_REDUCE_FINAL_MAX},
    [KP_REDUCE_ARGMIN] = {KP_KF_REDUCE_ARGMIN, KP_KF_REDUCE_STRIDED_ARGMIN, KP_KF_REDUCE_COLS_ARGMIN,
                          KP_KF_REDUCE_FINAL_ARGMIN},
    [KP_REDUCE_ARGMAX] = {KP_KF_REDUCE_ARGMAX, KP_KF_REDUCE_STRIDED_ARGMAX, KP_KF_REDUCE_COLS_ARGMAX,
                          KP_KF_REDUCE_FINAL_ARGMAX},
};

static const char *const op_names[KP_REDUCE_OP_COUNT] = {"sum", "mean", "min", "max", "argmin", "argmax"};

static bool is_arg(kp_reduce_op op) { return op == KP_REDUCE_ARGMIN || op == KP_REDUCE_ARGMAX; }

static bool is_float(kp_dtype dt)
{
    return dt == KP_DTYPE_F32 || dt == KP_DTYPE_F64 || dt == KP_DTYPE_F16 || dt == KP_DTYPE_BF16;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static unsigned pow2_at_least(uint64_t n)
{
    unsigned p = 1;
    while (p < n && p < (1u << 30))
        p <<= 1;
    return p;
}

/* Bytes of one partial result in the scratch area (the kernels' acc type). */
static size_t partial_size(kp_reduce_op op, kp_dtype dt)
{
    if (is_arg(op))
        return 16;  /* value, padded, and a 64-bit index */
    return dt == KP_DTYPE_F64 || dt == KP_DTYPE_I64 ? 8 : 4;
}

struct dim {
    int64_t size, src, dst;
};

/* Orders dims by source stride, largest first (stable), and merges
 * neighbours that step as one dimension in src (and in dst if with_dst).
 * Returns the new count. */
static int order_and_merge(struct dim *d, int n, bool with_dst)
{
    for (int i = 1; i < n; i++) {
        struct dim t = d[i];
        int j = i;
        for (; j > 0 && d[j - 1].src < t.src; j--)
            d[j] = d[j - 1];
        d[j] = t;
    }
    int r = 0;
    for (int i = 0; i < n; i++) {
        if (r > 0 && d[r - 1].src == d[i].src * d[i].size &&
            (!with_dst || d[r - 1].dst == d[i].dst * d[i].size)) {
            d[r - 1].size *= d[i].size;
            d[r - 1].src = d[i].src;
            d[r - 1].dst = d[i].dst;
            continue;
        }
        d[r++] = d[i];
    }
    return r;
}

static kp_status check_dims(const char *fn, kp_reduce_op op, const kp_tensor *src, const int *dims,
                            int ndims, bool reduced[KP_MAX_RANK])
{
    int rank = src->layout.rank;
    if (ndims < 1 || ndims > rank)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ndims = %d is outside 1..%d (src's rank)", fn,
                       ndims, rank);
    if (!dims)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dims is NULL", fn);
    if (is_arg(op) && ndims != 1)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s reduces exactly one dim, not %d", fn,
                       op_names[op], ndims);
    memset(reduced, 0, KP_MAX_RANK * sizeof(bool));
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0 || dims[i] >= rank)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dims[%d] = %d is outside 0..%d", fn, i,
                           dims[i], rank - 1);
        if (reduced[dims[i]])
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dims[%d] = %d is listed twice", fn, i,
                           dims[i]);
        reduced[dims[i]] = true;
    }
    return KP_OK;
}

static kp_status check_reduce(const char *fn, kp_stream *stream, kp_reduce_op op,
                              const kp_tensor *dst, const kp_tensor *src, const int *dims,
                              int ndims, bool reduced[KP_MAX_RANK], uint64_t *n_out)
{
    uint64_t n_src = 0;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, n_out, &n_src);
    if (st != KP_OK)
        return st;
    if ((unsigned)op >= KP_REDUCE_OP_COUNT)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: op %d is not a kp_reduce_op", fn, (int)op);
    st = check_dims(fn, op, src, dims, ndims, reduced);
    if (st != KP_OK)
        return st;
    if (op == KP_REDUCE_MEAN && !is_float(src->dtype))
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: mean needs a float src, not %s", fn,
                       kp_dtype_name(src->dtype));
    kp_dtype want = is_arg(op) ? KP_DTYPE_U32 : src->dtype;
    if (dst->dtype != want)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst of %s over %s must be %s, not %s", fn,
                       op_names[op], kp_dtype_name(src->dtype), kp_dtype_name(want),
                       kp_dtype_name(dst->dtype));
    const kp_layout *s = &src->layout, *d = &dst->layout;
    if (d->rank != s->rank)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: dst has rank %d; it must keep src's rank %d with reduced dims of size 1",
                       fn, d->rank, s->rank);
    uint64_t n_red = 1;
    for (int i = 0; i < s->rank; i++) {
        int64_t want_size = reduced[i] ? 1 : s->shape[i];
        if (d->shape[i] != want_size)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst shape[%d] is %lld, expected %lld", fn, i,
                           (long long)d->shape[i], (long long)want_size);
        if (reduced[i])
            n_red *= (uint64_t)s->shape[i];
    }
    if (*n_out == 0)
        return KP_OK;
    if (n_red == 0 && op != KP_REDUCE_SUM && op != KP_REDUCE_MEAN)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s over an empty set of elements", fn,
                       op_names[op]);
    if (is_arg(op) && n_red - 1 > UINT32_MAX)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s over %llu elements: indices exceed u32", fn,
                       op_names[op], (unsigned long long)n_red);
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK && n_src > 0)
        st = kp_check_no_overlap(fn, dst, src, false);
    return st;
}

struct reduce_plan {
    struct kp_reduce_args args;
    enum reduce_kind kind;
    struct kp_launch_dims dims;
};

/* Fills args' dims from src/dst and the reduced flags. */
static void plan_dims(const kp_tensor *dst, const kp_tensor *src, const bool reduced[KP_MAX_RANK],
                      struct kp_reduce_args *a)
{
    struct dim kept[KP_MAX_RANK], red[KP_MAX_RANK];
    int nk = 0, nr = 0;
    const kp_layout *s = &src->layout, *d = &dst->layout;
    uint64_t n_out = 1, n_red = 1;
    for (int i = 0; i < s->rank; i++) {
        if (reduced[i])
            n_red *= (uint64_t)s->shape[i];
        else
            n_out *= (uint64_t)s->shape[i];
        if (s->shape[i] == 1)
            continue;
        struct dim x = {s->shape[i], s->strides[i], reduced[i] ? 0 : d->strides[i]};
        if (reduced[i])
            red[nr++] = x;
        else
            kept[nk++] = x;
    }
    nk = order_and_merge(kept, nk, true);
    nr = order_and_merge(red, nr, false);
    memset(a, 0, sizeof(*a));
    a->n_out = (int64_t)n_out;
    a->n_red = (int64_t)n_red;
    a->kept_rank = nk;
    a->red_rank = nr;
    for (int i = 0; i < nk; i++) {
        a->kept_shape[i] = kept[i].size;
        a->kept_src_stride[i] = kept[i].src;
        a->kept_dst_stride[i] = kept[i].dst;
    }
    for (int i = 0; i < nr; i++) {
        a->red_shape[i] = red[i].size;
        a->red_stride[i] = red[i].src;
    }
}

/* Splits for outputs that alone leave the device idle (fewer than
 * fill_blocks blocks): about fill_blocks blocks in all, each with at least
 * `min_elems` elements, within the scratch area. Few long blocks rather
 * than many short ones: each block pays a ramp-up (its first loads'
 * latency) and a drain (its reduction), which cost a 16-bit full-tensor
 * sum about a fifth of its time when it ran as 64 waves of blocks. */
static uint64_t choose_splits(uint64_t out_blocks, uint64_t n_out, uint64_t n_red,
                              uint64_t fill_blocks, uint64_t min_elems, size_t psize)
{
    if (out_blocks >= fill_blocks || n_red < 2 * min_elems)
        return 1;
    uint64_t s = ceil_div(fill_blocks, out_blocks);
    s = min_u64(s, n_red / min_elems);
    s = min_u64(s, KP_STREAM_SCRATCH_BYTES / psize / n_out);
    s = min_u64(s, 65535);
    return s >= 2 ? s : 1;
}

static void set_chunks(struct kp_reduce_args *a, uint64_t splits, uint64_t align)
{
    uint64_t n_red = (uint64_t)a->n_red;
    if (splits <= 1 || n_red == 0) {
        a->splits = 1;
        a->chunk = (int64_t)n_red;
        return;
    }
    uint64_t chunk = ceil_div(ceil_div(n_red, splits), align) * align;
    a->chunk = (int64_t)chunk;
    a->splits = (int64_t)ceil_div(n_red, chunk);
}

/* Outputs a thread of reduce_cols_<op> takes (kernels/reduce.cu): for
 * sum, mean, min and max, 16 bytes' worth of 2- and 4-byte elements where
 * those outputs are 16 contiguous, aligned bytes of src and of dst at
 * every reduced element (one reduced dim), else 1. */
static int32_t column_run(const struct kp_reduce_args *a, kp_reduce_op op, kp_dtype dt, const void *x,
                          const void *y)
{
    const size_t es = kp_dtype_size(dt);
    const int64_t v = (int64_t)(16 / es), last = a->kept_rank - 1;
    if (op == KP_REDUCE_ARGMIN || op == KP_REDUCE_ARGMAX || (es != 2 && es != 4) || a->red_rank != 1 ||
        a->kept_src_stride[last] != 1 || a->kept_dst_stride[last] != 1 || a->kept_shape[last] % v != 0 ||
        a->red_stride[0] % v != 0 || ((uintptr_t)x | (uintptr_t)y) % 16 != 0)
        return 1;
    for (int d = 0; d < last; d++)
        if (a->kept_src_stride[d] % v != 0 || a->kept_dst_stride[d] % v != 0)
            return 1;
    return (int32_t)v;
}

static void plan_launch(const kp_device *dev, kp_reduce_op op, kp_dtype dt, const void *x, const void *y,
                        struct reduce_plan *p)
{
    struct kp_reduce_args *a = &p->args;
    const uint64_t n_out = (uint64_t)a->n_out, n_red = (uint64_t)a->n_red;
    const uint64_t sms = dev->info.multiprocessors > 0 ? (uint64_t)dev->info.multiprocessors : 1;
    const uint64_t fill_blocks = sms * 8;      /* 8 blocks of 256 threads fill a multiprocessor */
    const size_t psize = partial_size(op, dt);
    const bool contig = a->red_rank == 0 || (a->red_rank == 1 && a->red_stride[0] == 1);
    const bool columns = !contig && a->kept_rank > 0 && n_out >= REDUCE_BLOCK &&
                         a->kept_src_stride[a->kept_rank - 1] < a->red_stride[a->red_rank - 1];
    a->mean = op == KP_REDUCE_MEAN;
    memset(&p->dims, 0, sizeof(p->dims));
    p->dims.block[0] = REDUCE_BLOCK;
    p->dims.block[1] = p->dims.block[2] = 1;
    p->dims.grid[2] = 1;
    if (columns) {
        a->group = column_run(a, op, dt, x, y);
        /* 16-byte runs: the block's y dimension takes slices of the reduced
         * elements while the blocks would leave the device part-empty (a
         * single pass; partials of many outputs overflow the scratch area).
         * Their threads keep 64 bytes in flight: COL_RUN_BLOCKS blocks a
         * multiprocessor are enough, and fit in one wave of blocks. */
        const uint64_t want = a->group > 1 ? sms * COL_RUN_BLOCKS : fill_blocks;
        const uint64_t threads = n_out / (uint64_t)a->group;
        unsigned slices = 1;
        while (a->group > 1 && slices < COL_SLICES_MAX &&
               ceil_div(threads, REDUCE_BLOCK / slices) < want &&
               n_red >= 2 * slices * (uint64_t)COL_SLICE_MIN)
            slices <<= 1;
        uint64_t blocks = ceil_div(threads, REDUCE_BLOCK / slices);
        set_chunks(a, choose_splits(blocks, n_out, n_red, want, SPLIT_MIN_COLS * slices, psize), 1);
        p->kind = KIND_COLS;
        p->dims.block[0] = REDUCE_BLOCK / slices;
        p->dims.block[1] = slices;
        p->dims.grid[0] = kp_grid_blocks(blocks, REDUCE_BLOCK);
        p->dims.grid[1] = (unsigned)a->splits;
        return;
    }
    /* Units of work per output: 16-byte vectors of a contiguous run, else
     * elements. A group of threads per output: the smallest power of two
     * that leaves each thread at most GROUP_UNITS units (the setup of an
     * output, its offsets and group reduction, costs about as much as a few
     * dozen units, so it is spread over many), doubled while the groups of
     * all outputs would leave the device part-empty and each thread keeps
     * >= 4 units. Up to 32 threads it is a segment (several per 256-thread
     * block, reduced with shuffles alone), above a whole block. */
    const uint64_t lanes = 16 / kp_dtype_size(dt);
    const uint64_t units = contig ? n_red / lanes : n_red;
    const uint64_t resident = sms * 2048;  /* threads the device holds at once */
    unsigned group = pow2_at_least(ceil_div(units, GROUP_UNITS));
    while (group < REDUCE_BLOCK && n_out * group < resident && units >= 2 * group * 4)
        group <<= 1;
    if (group > REDUCE_BLOCK)
        group = REDUCE_BLOCK;
    unsigned block = group > 32 ? group : REDUCE_BLOCK;
    uint64_t out_blocks = ceil_div(n_out, block / group);
    uint64_t splits = choose_splits(n_out, n_out, n_red, fill_blocks, SPLIT_MIN_GROUP,
                                    psize);
    if (out_blocks < fill_blocks && splits > 1) {
        block = group = REDUCE_BLOCK;  /* one output per block and split */
        out_blocks = n_out;
    } else {
        splits = 1;
    }
    set_chunks(a, splits, 256);
    a->group = (int32_t)group;
    p->kind = contig ? KIND_GROUPS : KIND_STRIDED;
    p->dims.block[0] = block;
    p->dims.grid[0] = kp_grid_blocks(out_blocks, block);
    p->dims.grid[1] = (unsigned)a->splits;
}

/* The second pass: a group per output over its partials. */
static struct kp_launch_dims plan_final(struct kp_reduce_args *a)
{
    uint64_t splits = (uint64_t)a->splits;
    unsigned group = splits > 32 ? REDUCE_BLOCK : pow2_at_least(splits);  /* <= 32 or the block */
    a->group = (int32_t)group;
    struct kp_launch_dims d = {
        {kp_grid_blocks(ceil_div((uint64_t)a->n_out, REDUCE_BLOCK / group), REDUCE_BLOCK), 1, 1},
        {REDUCE_BLOCK, 1, 1}, 0};
    return d;
}

kp_status kp_reduce(kp_stream *stream, kp_reduce_op op, const kp_tensor *dst, const kp_tensor *src,
                    const int *dims, int ndims)
{
    static const char fn[] = "kp_reduce";
    bool reduced[KP_MAX_RANK];
    uint64_t n_out = 0;
    kp_status st = check_reduce(fn, stream, op, dst, src, dims, ndims, reduced, &n_out);
    if (st != KP_OK || n_out == 0)
        return st;

    struct reduce_plan plan;
    plan_dims(dst, src, reduced, &plan.args);
    const void *x = kp_tensor_base(src);
    void *y = kp_tensor_base(dst), *part = NULL;
    plan_launch(stream->device, op, src->dtype, x, y, &plan);

    const bool two_pass = plan.args.splits > 1;
    if (two_pass) {
        st = kp_stream_scratch_acquire(stream, &part);
        if (st != KP_OK)
            return st;
    }
    void *args[] = {&plan.args, &x, &y, &part};
    st = kp_launch_family(stream, reduce_families[op][plan.kind], src->dtype, &plan.dims, args);
    if (st == KP_OK && two_pass) {
        struct kp_reduce_args final_args = plan.args;
        struct kp_launch_dims final_dims = plan_final(&final_args);
        void *fargs[] = {&final_args, &part, &y};
        st = kp_launch_family(stream, reduce_families[op][KIND_FINAL], src->dtype, &final_dims, fargs);
    }
    if (two_pass)
        kp_stream_scratch_release(stream);
    return st;
}

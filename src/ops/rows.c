/* kp_softmax, kp_log_softmax, kp_rmsnorm, kp_layernorm: row-wise ops over
 * the last dimension, launched from the rows module.
 *
 * Geometry: a group of threads per row, a segment of <= 32 lanes for short
 * rows (several rows per 256-thread block) or a whole block of 64..512
 * threads (a multiple of 64, or of 32 for exact fits of many rows where the
 * device's waves are 32 wide: see plan_rows), and the row split into slots
 * of 16 bytes' worth of elements. A row of at most KP_ROW_MAX_SLOTS slots
 * per thread is read once into registers; longer rows are streamed once per
 * pass.
 * Kernels: <op>_exact_<dtype> takes rows that split exactly (cols = group x
 * slots x elements per slot, 1..KP_ROW_MAX_SLOTS slots: no slot passes the
 * row's end, nothing is tested per element); <op>_<dtype> other rows of
 * whole 16-byte slots; <op>_stream_<dtype> rows too long to cache (several
 * slots' loads at once); <op>_split_<dtype> few such rows, each over
 * several blocks (see split_rows); <op>_whole_<dtype> many such rows of up
 * to 128 KB, a row in one block's shared memory (softmax, 16-bit rmsnorm:
 * see whole_rows); <op>_cluster_f32 and <op>_staged_<dtype> the other many
 * such rows, where the loaded kernels run in thread block clusters (see
 * cluster_rows).
 * All need unit inner strides and 16-byte-aligned rows in every operand;
 * other layouts, and cached rows whose last slot is cut, use
 * <op>_strided_<dtype>. */
#include <math.h>
#include <string.h>

#include "kernel_families.h"

#define ROW_MAX_BLOCK ((unsigned)KP_ROWS_MAX_BLOCK)
#define ROW_SEGMENT_BLOCK 256u

enum row_kind { ROW_SOFTMAX, ROW_RMSNORM, ROW_LAYERNORM };

enum row_path {
    PATH_EXACT, PATH_VEC, PATH_STREAM, PATH_STRIDED, PATH_SPLIT, PATH_CLUSTER, PATH_STAGED, PATH_WHOLE
};

/* Layernorm has no whole-row kernel (whole_rows never picks it): its entry
 * repeats the stream kernel. */
static const enum kp_family_id row_families[3][8] = {
    [ROW_SOFTMAX] = {KP_KF_SOFTMAX_EXACT, KP_KF_SOFTMAX, KP_KF_SOFTMAX_STREAM, KP_KF_SOFTMAX_STRIDED,
                     KP_KF_SOFTMAX_SPLIT, KP_KF_SOFTMAX_CLUSTER, KP_KF_SOFTMAX_STAGED, KP_KF_SOFTMAX_WHOLE},
    [ROW_RMSNORM] = {KP_KF_RMSNORM_EXACT, KP_KF_RMSNORM, KP_KF_RMSNORM_STREAM, KP_KF_RMSNORM_STRIDED,
                     KP_KF_RMSNORM_SPLIT, KP_KF_RMSNORM_CLUSTER, KP_KF_RMSNORM_STAGED, KP_KF_RMSNORM_WHOLE},
    [ROW_LAYERNORM] = {KP_KF_LAYERNORM_EXACT, KP_KF_LAYERNORM, KP_KF_LAYERNORM_STREAM,
                       KP_KF_LAYERNORM_STRIDED, KP_KF_LAYERNORM_SPLIT, KP_KF_LAYERNORM_CLUSTER,
                       KP_KF_LAYERNORM_STAGED, KP_KF_LAYERNORM_STREAM},
};

/* Values a chunk of a split row leaves in the scratch (kp_kernel_abi.h). */
static const uint64_t split_parts[3] = {[ROW_SOFTMAX] = KP_ROWS_SOFTMAX_PARTS,
                                        [ROW_RMSNORM] = KP_ROWS_RMSNORM_PARTS,
                                        [ROW_LAYERNORM] = KP_ROWS_LAYERNORM_PARTS};

static bool is_float(kp_dtype dt)
{
    return dt == KP_DTYPE_F32 || dt == KP_DTYPE_F64 || dt == KP_DTYPE_F16 || dt == KP_DTYPE_BF16;
}

static uint64_t ceil_div_u64(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static bool aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

/* The device's multiprocessors, at least one. */
static uint64_t multiprocessors(const kp_device *dev)
{
    return (uint64_t)(dev->info.multiprocessors > 0 ? dev->info.multiprocessors : 1);
}

/* Threads that take `slots` 16-byte slots about `per_thread` at a time: a
 * multiple of 64, at most KP_ROWS_CLUSTER_MAX_BLOCK (the cluster and
 * whole-row kernels' bound). */
static uint64_t slot_group(uint64_t slots, uint64_t per_thread)
{
    const uint64_t group = ceil_div_u64(ceil_div_u64(slots, per_thread), 64) * 64;
    return group < KP_ROWS_CLUSTER_MAX_BLOCK ? group : KP_ROWS_CLUSTER_MAX_BLOCK;
}

/* weight or bias: NULL, or a rank-1 tensor of `cols` elements of `dtype`. */
static kp_status check_vector(const char *fn, const char *what, const kp_tensor *t, const kp_device *dev,
                              kp_dtype dtype, int64_t cols)
{
    uint64_t n = 0;
    if (!t)
        return KP_OK;
    kp_status st = kp_check_tensor(fn, what, t, dev, &n);
    if (st != KP_OK)
        return st;
    st = kp_check_dtype_as_src(fn, what, t, dtype);
    if (st != KP_OK)
        return st;
    if (t->layout.rank != 1 || t->layout.shape[0] != cols)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s must have shape (%lld), the length of src's last dim", fn, what,
                       (long long)cols);
    return KP_OK;
}

static kp_status check_rows(const char *fn, kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                            const kp_tensor *weight, const kp_tensor *bias, uint64_t *n)
{
    uint64_t n_src = 0;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, n, &n_src);
    if (st != KP_OK)
        return st;
    if (!is_float(src->dtype))
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src is %s; f32, f64, f16 or bf16 are supported",
                       fn, kp_dtype_name(src->dtype));
    st = kp_check_same_dtype(fn, dst, src);
    if (st != KP_OK)
        return st;
    if (src->layout.rank < 1)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src has rank 0; it needs a last dim", fn);
    st = kp_check_same_shape(fn, dst, src);
    int64_t cols = src->layout.shape[src->layout.rank - 1];
    if (st == KP_OK)
        st = check_vector(fn, "weight", weight, stream->device, src->dtype, cols);
    if (st == KP_OK)
        st = check_vector(fn, "bias", bias, stream->device, src->dtype, cols);
    if (st != KP_OK || *n == 0)
        return st;
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_no_overlap(fn, dst, src, true);
    if (st == KP_OK && weight && kp_check_no_overlap(fn, dst, weight, false) != KP_OK)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst overlaps weight", fn);
    if (st == KP_OK && bias && kp_check_no_overlap(fn, dst, bias, false) != KP_OK)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst overlaps bias", fn);
    return st;
}

/* A group size the exact-fit kernels take: a power of two <= 32 (a
 * segment), else a multiple of `wave` (64, or 32: see plan_rows) up to
 * ROW_MAX_BLOCK. */
static bool group_ok(uint64_t g, unsigned wave)
{
    return (g <= 32 && (g & (g - 1)) == 0) || (g % wave == 0 && g <= ROW_MAX_BLOCK);
}

/* The smallest such group of at least n threads (n <= ROW_MAX_BLOCK). */
static unsigned group_for(uint64_t n)
{
    uint64_t g = 1;
    while (g < n && g < 64)
        g <<= 1;
    if (g < n)
        g = ceil_div_u64(n, 64) * 64;
    return (unsigned)g;
}

/* An exact fit of a row of `vectors` 16-byte slots: group x slots ==
 * vectors, with the most slots per thread (<= KP_ROW_MAX_SLOTS). */
static bool exact_fit(uint64_t vectors, unsigned wave, unsigned *group, int *slots)
{
    for (int v = KP_ROW_MAX_SLOTS; v >= 1; v--) {
        if (vectors % (uint64_t)v == 0 && vectors > 0 && group_ok(vectors / (uint64_t)v, wave)) {
            *group = (unsigned)(vectors / (uint64_t)v);
            *slots = v;
            return true;
        }
    }
    return false;
}

/* The row geometry and the kernel family that runs it. */
static enum row_path plan_rows(const kp_device *dev, const kp_tensor *dst, const kp_tensor *src,
                               const kp_tensor *weight, const kp_tensor *bias,
                               struct kp_rows_args *a, struct kp_launch_dims *dims)
{
    const kp_layout *x = &src->layout, *y = &dst->layout;
    const int last = x->rank - 1;
    const int64_t cols = x->shape[last];
    const int64_t lanes = 16 / (int64_t)kp_dtype_size(src->dtype);
    memset(a, 0, sizeof(*a));
    a->cols = cols;
    a->x_inner = cols > 1 ? x->strides[last] : 1;
    a->y_inner = cols > 1 ? y->strides[last] : 1;
    a->w_stride = weight && cols > 1 ? weight->layout.strides[0] : 1;
    a->b_stride = bias && cols > 1 ? bias->layout.strides[0] : 1;
    uint64_t rows = 1;
    int r = 0;
    for (int d = 0; d < last; d++) {
        int64_t size = x->shape[d];
        rows *= (uint64_t)size;
        if (size == 1)
            continue;
        if (r > 0 && a->x_outer[r - 1] == x->strides[d] * size && a->y_outer[r - 1] == y->strides[d] * size) {
            a->outer_shape[r - 1] *= size;
            a->x_outer[r - 1] = x->strides[d];
            a->y_outer[r - 1] = y->strides[d];
            continue;
        }
        a->outer_shape[r] = size;
        a->x_outer[r] = x->strides[d];
        a->y_outer[r] = y->strides[d];
        r++;
    }
    a->rows = (int64_t)rows;
    a->outer_rank = r;

    bool vec = a->x_inner == 1 && a->y_inner == 1 && aligned16(kp_tensor_base(src)) &&
               aligned16(kp_tensor_base(dst));
    for (int d = 0; d < r; d++)
        vec = vec && a->x_outer[d] % lanes == 0 && a->y_outer[d] % lanes == 0;
    if (weight)
        vec = vec && a->w_stride == 1 && aligned16(kp_tensor_base(weight));
    if (bias)
        vec = vec && a->b_stride == 1 && aligned16(kp_tensor_base(bias));

    /* Threads per row and 16-byte slots per thread (see the file comment). */
    const uint64_t vectors = ceil_div_u64((uint64_t)cols, (uint64_t)lanes);
    /* Groups of a multiple of 64 threads (whole waves at either size), or,
     * where the device's waves are 32 wide and the rows at least fill its
     * multiprocessors, of 32: fewer threads a row with more slots each. 16-bit rows of 5120 then
     * take 160 threads of four slots instead of 320 of two: H200, 6553 rows,
     * softmax 67-68 -> 95-98 % of the copy bandwidth, rmsnorm 77-78 -> 96.5-98,
     * layernorm 64-68 -> 81-90. Few rows keep the wider groups, whose threads
     * each wait on fewer loads (not measured apart: 8 rows take about 5 us
     * either way, within the noise of such short runs). */
    const bool fills = rows >= multiprocessors(dev);
    const unsigned wave = dev->info.warp_size == 32 && fills ? 32 : 64;
    unsigned group, block;
    int slots = 0;
    const bool exact = vec && (uint64_t)cols % lanes == 0 && exact_fit(vectors, wave, &group, &slots);
    if (!exact) {
        slots = vectors <= KP_ROW_MAX_SLOTS * ROW_MAX_BLOCK ? KP_ROW_MAX_SLOTS : 0;
        group = slots ? group_for(ceil_div_u64(vectors, KP_ROW_MAX_SLOTS)) : ROW_MAX_BLOCK;
    }
    a->cached = slots;
    a->group = (int32_t)group;
    block = group <= 32 ? ROW_SEGMENT_BLOCK : group;
    const uint64_t blocks = (rows + block / group - 1) / (block / group);
    *dims = (struct kp_launch_dims){{kp_grid_blocks(blocks, block), 1, 1}, {block, 1, 1}, 0};
    /* <op>_<dtype> caches whole slots only (a check a slot, not an element:
     * see kp_rows); rows whose last slot is cut (a single row, or rows
     * padded apart) take the strided kernel's checks */
    const bool whole = (uint64_t)cols % lanes == 0;
    return exact ? PATH_EXACT : !vec ? PATH_STRIDED : !slots ? PATH_STREAM : whole ? PATH_VEC : PATH_STRIDED;
}

/* Rows longer than a block's cached slots, fewer rows than the device has
 * multiprocessors: chunks of one block's slots, a block each, in two
 * launches through the stream's scratch (see kp_rows_split in
 * kernels/rows.cu), where the partials (`parts` of the compute type a
 * chunk) fit in it; else false and <op>_stream takes a block a row.
 * Softmax on H200, 8 rows of 32000 to 151936 went from 9-42 % of a copy's
 * bandwidth to 40-77 %; with a row or more a multiprocessor the split
 * measured slower (w32000 x1048 f32: 52 -> 36 %), its second read coming
 * from memory. The norms on H100, 8 rows of 32000 / 128256 / 151936, f32
 * GB/s, medians of 200 runs (a copy of the same bytes: 400 / 1140 / 1250):
 * rmsnorm 140/191/194 -> 270/844/734, layernorm 106/131/132 ->
 * 233/729/817; 16-bit rows alike (bf16 layernorm at 151936: 71 -> 432),
 * the one-block kernels reading each row two or three times from 8
 * multiprocessors. */
static bool split_rows(const kp_device *dev, struct kp_rows_args *a, kp_dtype dtype, uint64_t parts,
                       struct kp_launch_dims *dims)
{
    const uint64_t es = kp_dtype_size(dtype), compute = dtype == KP_DTYPE_F64 ? 8 : 4;
    const uint64_t sms = multiprocessors(dev);
    const uint64_t want = 2 * sms;
    if ((uint64_t)a->rows >= sms)
        return false;
    /* Blocks of KP_ROWS_SPLIT_MAX_BLOCK threads, fewer (down to 64) where
     * that leaves fewer than two blocks a multiprocessor. */
    unsigned group = KP_ROWS_SPLIT_MAX_BLOCK;
    uint64_t blocks = 0;
    for (;; group /= 2) {
        const uint64_t chunk = (uint64_t)group * KP_ROW_MAX_SLOTS * (16 / es);
        blocks = (uint64_t)a->rows * ceil_div_u64((uint64_t)a->cols, chunk);
        if (blocks >= want || group == 64)
            break;
    }
    if (blocks * parts * compute > KP_STREAM_SCRATCH_BYTES)
        return false;
    a->group = (int32_t)group;
    *dims = (struct kp_launch_dims){{(unsigned)blocks, 1, 1}, {group, 1, 1}, 0, 0};
    return true;
}

/* Rows longer than a block's cached slots, as many as the device has
 * multiprocessors or more, where the loaded cluster kernels run in clusters
 * of KP_ROWS_CLUSTER blocks (NVIDIA sm_90+; a kernel says so itself, as PTX
 * JIT-compiled from an older arch has none): a row per cluster, each block
 * holding an equal chunk of whole 16-byte slots (see kp_rows_cluster).
 * f32 chunks of at most KP_ROWS_CLUSTER_MAX_BLOCK x KP_ROWS_CLUSTER_SLOTS
 * slots go to <op>_cluster_f32, in registers, the fewest threads (a
 * multiple of 64) that hold them. Rows of more than ROW_STAGED_BYTES, and
 * f32 layernorm rows of any length, go to <op>_staged_<dtype> (f32, f16,
 * bf16), chunks in dynamic shared memory, blocks of KP_ROWS_STAGED_SLOTS
 * slots a thread (a multiple of 64 threads, at most
 * KP_ROWS_CLUSTER_MAX_BLOCK), where the device has that memory.
 * Else (rows not a whole number of slots, shorter 16-bit rows, GPUs without
 * clusters) PATH_STREAM. H100, many 16-bit rows: of 32000 (64 KB) the
 * stream kernels were faster (their second read of a row comes from the
 * cache), of 128256 (256 KB) and more the staged ones; rows in between were
 * not measured. Many f32 rows of 32000, registers -> staged: layernorm 71
 * -> 81 % of copy, rmsnorm 85 -> 76, softmax level. The stream kernels
 * instead, their grid capped at one or two blocks a multiprocessor so that
 * the rows in flight stay in L2 for their second read, lost on H200 (1048
 * rows of 32000, 261 of 128256, 220 of 151936): with two blocks, or no
 * cap, from level to 16 points lower (f32 softmax 66 -> 64-65, 16-bit
 * softmax of 128256 72 -> 56, f32 layernorm of 32000 68 -> 56); with one,
 * 6-28 lower. */
#define ROW_STAGED_BYTES ((uint64_t)128 << 10)

static enum row_path cluster_rows(kp_device *dev, enum row_kind kind, kp_dtype dtype, struct kp_rows_args *a,
                                  struct kp_launch_dims *dims)
{
    const uint64_t es = kp_dtype_size(dtype), lanes = 16 / es;
    const uint64_t chunk = ceil_div_u64((uint64_t)a->cols / lanes, KP_ROWS_CLUSTER);  /* slots a block */
    const uint64_t row_bytes = (uint64_t)a->cols * es;
    if ((uint64_t)a->cols % lanes != 0)
        return PATH_STREAM;
    enum row_path path;
    uint64_t group = 0, shared = 0;
    const bool f32_layernorm = dtype == KP_DTYPE_F32 && kind == ROW_LAYERNORM;
    if (dtype == KP_DTYPE_F32 && !f32_layernorm &&
        chunk <= (uint64_t)KP_ROWS_CLUSTER_MAX_BLOCK * KP_ROWS_CLUSTER_SLOTS) {
        path = PATH_CLUSTER;
        group = slot_group(chunk, KP_ROWS_CLUSTER_SLOTS);  /* within the bound: chunk is checked above */
    } else if ((row_bytes > ROW_STAGED_BYTES || f32_layernorm) && dtype != KP_DTYPE_F64) {
        path = PATH_STAGED;
        group = slot_group(chunk, KP_ROWS_STAGED_SLOTS);
        shared = chunk * 16;
    } else {
        return PATH_STREAM;
    }
    int blocks = 1, static_shared = 0;
    if (kp_family_cluster_limits(dev, row_families[kind][path], dtype, &blocks, &static_shared) != KP_OK ||
        blocks != KP_ROWS_CLUSTER || shared + (uint64_t)static_shared > dev->limits.max_shared_bytes)
        return PATH_STREAM;
    uint64_t clusters = (uint64_t)a->rows;  /* the kernels walk rows a grid's clusters apart */
    const uint64_t max_clusters = (((uint64_t)1 << 31) - 1) / (KP_ROWS_CLUSTER * group);
    if (clusters > max_clusters)
        clusters = max_clusters;
    a->group = (int32_t)group;
    *dims = (struct kp_launch_dims){
        {(unsigned)(clusters * KP_ROWS_CLUSTER), 1, 1}, {(unsigned)group, 1, 1}, (unsigned)shared, 0};
    return path;
}

/* The two launches of <op>_split_<dtype>, args being the row kernels'
 * (a, x, y, w, b) and a slot for the scratch. */
static kp_status launch_split(kp_stream *stream, enum kp_family_id family, kp_dtype dtype,
                              struct kp_rows_args *a, const struct kp_launch_dims *dims, void **args)
{
    void *part = NULL;
    kp_status st = kp_stream_scratch_acquire(stream, &part);
    if (st != KP_OK)
        return st;
    args[5] = &part;
    st = kp_launch_family(stream, family, dtype, dims, args);
    if (st == KP_OK) {
        struct kp_launch_dims final_dims = *dims;
        final_dims.flags = KP_LAUNCH_OVERLAP_PRIOR;
        a->flags |= KP_ROWS_SPLIT_FINAL;
        st = kp_launch_family(stream, family, dtype, &final_dims, args);
    }
    kp_stream_scratch_release(stream);
    return st;
}

/* Rows longer than a block's cached slots, as many as the device has
 * multiprocessors or more, of whole 16-byte slots and at most
 * ROW_WHOLE_BYTES: softmax (f32, f16, bf16) and 16-bit rmsnorm take
 * <op>_whole_<dtype>, a row per block staged in its shared memory (see
 * kp_rows_whole), blocks of ROW_WHOLE_SLOTS slots a thread (a multiple of
 * 64 threads, at most KP_ROWS_CLUSTER_MAX_BLOCK), on devices whose blocks
 * may take more than ROW_WHOLE_BYTES of it (NVIDIA sm_80, sm_90, sm_100:
 * two or more 16-bit rows of 32000 a multiprocessor; not AMD's 64 KB).
 * Measured on an H200 only: 1048 rows of 32000, % of copy, before (the
 * cluster kernel for f32, the stream kernels for 16-bit) -> whole: softmax
 * f32 66 -> 77, f16 64 -> 81, bf16 64 -> 79; rmsnorm f16 and bf16 64 ->
 * 68, but f32 73 -> 65.5, and layernorm level (16-bit) or worse (f32 68 ->
 * 56), so those keep theirs; 32 slots a thread (half the threads) lost
 * 14-18 points. Rows between the cached width and 32000 were not
 * measured. */
#define ROW_WHOLE_BYTES ((uint64_t)128 << 10)
#define ROW_WHOLE_SLOTS 16

static bool whole_rows(kp_device *dev, enum row_kind kind, kp_dtype dtype, struct kp_rows_args *a,
                       struct kp_launch_dims *dims)
{
    const uint64_t es = kp_dtype_size(dtype), lanes = 16 / es;
    const uint64_t row_bytes = (uint64_t)a->cols * es, slots = (uint64_t)a->cols / lanes;
    const bool half = dtype == KP_DTYPE_F16 || dtype == KP_DTYPE_BF16;
    if (!(kind == ROW_SOFTMAX && (half || dtype == KP_DTYPE_F32)) && !(kind == ROW_RMSNORM && half))
        return false;
    if ((uint64_t)a->cols % lanes != 0 || row_bytes > ROW_WHOLE_BYTES ||
        dev->limits.max_shared_bytes <= ROW_WHOLE_BYTES ||
        (uint64_t)a->rows < multiprocessors(dev))
        return false;
    int blocks = 0, static_shared = 0;
    if (kp_family_cluster_limits(dev, row_families[kind][PATH_WHOLE], dtype, &blocks, &static_shared) != KP_OK ||
        row_bytes + (uint64_t)static_shared > dev->limits.max_shared_bytes)
        return false;
    const uint64_t group = slot_group(slots, ROW_WHOLE_SLOTS);
    a->group = (int32_t)group;
    *dims = (struct kp_launch_dims){{kp_grid_blocks((uint64_t)a->rows, (unsigned)group), 1, 1},
                                    {(unsigned)group, 1, 1}, (unsigned)row_bytes, 0};
    return true;
}

static kp_status run_rows(const char *fn, kp_stream *stream, enum row_kind kind, int flags,
                          const kp_tensor *dst, const kp_tensor *src, const kp_tensor *weight,
                          const kp_tensor *bias, float eps)
{
    uint64_t n = 0;
    kp_status st = check_rows(fn, stream, dst, src, weight, bias, &n);
    if (st == KP_OK && kind != ROW_SOFTMAX && !(isfinite(eps) && eps >= 0))
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: eps = %g must be finite and >= 0", fn, (double)eps);
    if (st != KP_OK || n == 0)
        return st;

    struct kp_rows_args a;
    struct kp_launch_dims dims;
    enum row_path path = plan_rows(stream->device, dst, src, weight, bias, &a, &dims);
    a.flags = flags | (weight ? KP_ROWS_WEIGHT : 0) | (bias ? KP_ROWS_BIAS : 0);
    a.eps = eps;
    const void *x = kp_tensor_base(src), *w = weight ? kp_tensor_base(weight) : NULL;
    const void *b = bias ? kp_tensor_base(bias) : NULL;
    void *y = kp_tensor_base(dst);
    void *args[] = {&a, &x, &y, &w, &b, NULL};
    if (path == PATH_STREAM && split_rows(stream->device, &a, src->dtype, split_parts[kind], &dims))
        return launch_split(stream, row_families[kind][PATH_SPLIT], src->dtype, &a, &dims, args);
    if (path == PATH_STREAM && whole_rows(stream->device, kind, src->dtype, &a, &dims))
        path = PATH_WHOLE;
    else if (path == PATH_STREAM)
        path = cluster_rows(stream->device, kind, src->dtype, &a, &dims);
    return kp_launch_family(stream, row_families[kind][path], src->dtype, &dims, args);
}

kp_status kp_softmax(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src)
{
    return run_rows("kp_softmax", stream, ROW_SOFTMAX, 0, dst, src, NULL, NULL, 0);
}

kp_status kp_log_softmax(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src)
{
    return run_rows("kp_log_softmax", stream, ROW_SOFTMAX, KP_ROWS_LOG, dst, src, NULL, NULL, 0);
}

kp_status kp_rmsnorm(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                     const kp_tensor *weight, float eps)
{
    return run_rows("kp_rmsnorm", stream, ROW_RMSNORM, 0, dst, src, weight, NULL, eps);
}

kp_status kp_layernorm(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                       const kp_tensor *weight, const kp_tensor *bias, float eps)
{
    return run_rows("kp_layernorm", stream, ROW_LAYERNORM, 0, dst, src, weight, bias, eps);
}

/* index_select, gather, scatter, scatter_add and index_add on the GPU
 * against a CPU reference: every op x ids dtype x value dtype over a set of
 * layouts (contiguous, transposed, padded rows, strided and broadcast ids,
 * broadcast src, offsets, ranks 1-4, indexed dim first/middle/last, empty),
 * out-of-range ids (zeroed or skipped, and reported with the first
 * position), heavily repeated ids for the adding ops, and the status
 * lifecycle; sub-word additions at both ends of buffers that end or start
 * in the middle of a 32-bit word.
 *
 * Tolerances: everything is bit-exact except float sums of scatter_add and
 * index_add over random values, whose order is unspecified: there
 * |got - want| <= (n + 1) * eps * (|dst| + sum |terms|) for n terms, with eps
 * the dtype's machine epsilon. With small whole-number values (the repeated
 * ids test) every partial sum is exact, so those sums must match exactly.
 *
 * Outputs of index_select and gather are poisoned first; dst of the writing
 * ops starts random. Every dst element outside the view, or not named by a
 * valid id, must keep its original bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define POISON 0xA5

static const kp_dtype all_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                      KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
#define N_DTYPES 7
static const kp_dtype id_dtypes[] = {KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
#define N_ID_DTYPES 3

enum op { OP_INDEX_SELECT, OP_GATHER, OP_SCATTER, OP_SCATTER_ADD, OP_INDEX_ADD, N_OPS };
static const char *const op_names[N_OPS] = {"index_select", "gather", "scatter", "scatter_add",
                                            "index_add"};

static int reads(enum op op) { return op == OP_INDEX_SELECT || op == OP_GATHER; }
static int rank1_ids(enum op op) { return op == OP_INDEX_SELECT || op == OP_INDEX_ADD; }

static kp_status call_op(enum op op, const kp_tensor *dst, const kp_tensor *src,
                         const kp_tensor *ids, int dim, kp_index_status *status)
{
    switch (op) {
    case OP_INDEX_SELECT: return kp_index_select(gpu_stream, dst, src, ids, dim, status);
    case OP_GATHER: return kp_gather(gpu_stream, dst, src, ids, dim, status);
    case OP_SCATTER: return kp_scatter(gpu_stream, dst, src, ids, dim, status);
    case OP_SCATTER_ADD: return kp_scatter_add(gpu_stream, dst, src, ids, dim, status);
    default: return kp_index_add(gpu_stream, dst, src, ids, dim, status);
    }
}

/* ---- layouts */

enum kind {
    CONTIG,
    TRANSPOSED,  /* column-major */
    PADDED,      /* row-major with 3 unused elements after each last-dim row */
    STRIDED,     /* row-major, every third element */
    BROADCAST,   /* row-major with stride 0 at one dim (inputs only) */
    ROW_CONST,   /* row-major with stride 0 at every dim after the indexed one (ids only:
                    gather's rows of one id, as torch's expand gives) */
};

/* `full` is the shape of the tensor indexed along dim (src when reading,
 * dst when writing); the other value tensor and gather/scatter ids have
 * `full` with k at dim; rank-1 ids have length k. */
struct index_case {
    const char *name;
    int rank;
    int64_t full[4];
    int dim;
    int64_t k;
    enum kind src_kind, dst_kind, ids_kind;
    int64_t src_off, dst_off, ids_off;
};

static const struct index_case cases[] = {
    {"2-D, dim 0", 2, {50, 33}, 0, 40, CONTIG, CONTIG, CONTIG, 0, 0, 0},
    {"2-D, dim 1", 2, {20, 70}, 1, 45, CONTIG, CONTIG, CONTIG, 0, 0, 0},
    {"3-D, middle dim, transposed src", 3, {6, 30, 7}, 1, 25, TRANSPOSED, CONTIG, CONTIG, 0, 0, 0},
    {"3-D, last dim, padded dst, offsets", 3, {5, 4, 60}, 2, 37, CONTIG, PADDED, CONTIG, 1, 3, 0},
    {"strided ids with offset", 2, {40, 9}, 0, 31, CONTIG, CONTIG, STRIDED, 0, 0, 2},
    {"broadcast src", 3, {10, 12, 5}, 0, 14, BROADCAST, CONTIG, CONTIG, 0, 0, 0},
    {"broadcast ids", 3, {4, 16, 6}, 1, 9, CONTIG, CONTIG, BROADCAST, 0, 0, 1},
    {"rank 1", 1, {1000}, 0, 777, CONTIG, CONTIG, CONTIG, 0, 0, 0},
    {"rank 4, transposed dst, padded src", 4, {3, 4, 20, 5}, 2, 13, PADDED, TRANSPOSED, CONTIG, 0, 0, 0},
    {"empty ids", 2, {10, 5}, 0, 0, CONTIG, CONTIG, CONTIG, 0, 0, 0},
    {"wide aligned rows", 2, {300, 1024}, 0, 257, CONTIG, CONTIG, CONTIG, 0, 0, 0},
    /* rows of 4100: several rounds of vectors a thread (64 threads a row
     * copying, 256 adding), the last round partial, and a 16-bit tail */
    {"long rows", 2, {37, 4100}, 0, 29, CONTIG, CONTIG, CONTIG, 0, 0, 0},
    {"odd rows, misaligned", 2, {97, 33}, 0, 120, CONTIG, CONTIG, CONTIG, 1, 1, 0},
    {"indexed dim of size 1", 3, {7, 1, 9}, 1, 5, CONTIG, STRIDED, CONTIG, 0, 0, 0},
    /* ids constant along rows: gather and scatter copy rows */
    {"ids constant along rows", 2, {300, 1024}, 0, 257, CONTIG, CONTIG, ROW_CONST, 0, 0, 0},
    {"ids constant along long rows", 2, {37, 4100}, 0, 29, CONTIG, CONTIG, ROW_CONST, 0, 0, 0},
    {"ids constant along rows, 3-D", 3, {5, 40, 24}, 1, 33, CONTIG, CONTIG, ROW_CONST, 0, 0, 0},
    {"ids constant along odd rows, misaligned", 2, {97, 33}, 0, 120, CONTIG, CONTIG, ROW_CONST, 1, 1, 2},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

struct operand {
    struct gpu_buf buf;
    kp_tensor t;
    size_t elems;  /* elements in the buffer */
};

static void make_operand(struct operand *o, kp_dtype dt, int rank, const int64_t *shape,
                         enum kind kind, int bdim, int64_t offset)
{
    int64_t strides[4] = {0}, s = 1;
    if (kind == TRANSPOSED) {
        for (int d = 0; d < rank; d++) {
            strides[d] = s;
            s *= shape[d] > 1 ? shape[d] : 1;
        }
    } else {
        for (int d = rank - 1; d >= 0; d--) {
            strides[d] = s * (kind == STRIDED ? 3 : 1);
            int64_t size = shape[d] > 1 ? shape[d] : 1;
            s *= d == rank - 1 && kind == PADDED ? size + 3 : size;
        }
        if (kind == BROADCAST)
            strides[bdim] = 0;
        for (int d = bdim + 1; kind == ROW_CONST && d < rank; d++)
            strides[d] = 0;
    }
    int64_t last = offset;
    int empty = 0;
    for (int d = 0; d < rank; d++) {
        empty |= shape[d] == 0;
        last += (shape[d] - 1) * strides[d];
    }
    o->elems = empty ? (size_t)offset : (size_t)last + 1;
    gpu_buf_alloc(&o->buf, o->elems * kp_dtype_size(dt));
    o->t = gpu_tensor(&o->buf, dt, rank, shape, strides, offset);
}

static void free_operand(struct operand *o)
{
    gpu_buf_free(&o->buf);
}

static void unravel(uint64_t i, int rank, const int64_t *shape, int64_t *coords)
{
    for (int d = rank - 1; d >= 0; d--) {
        coords[d] = (int64_t)(i % (uint64_t)shape[d]);
        i /= (uint64_t)shape[d];
    }
}

static size_t offset_of(const kp_tensor *t, const int64_t *coords)
{
    int64_t off = t->layout.offset;
    for (int d = 0; d < t->layout.rank; d++)
        off += coords[d] * t->layout.strides[d];
    return (size_t)off;
}

/* ---- ids */

enum ids_mode {
    IDS_VALID,         /* uniform in 0 .. size-1 (0 .. 255 for u8) */
    IDS_SOME_INVALID,  /* a quarter out of range: too large, or negative for i64 */
    IDS_FEW_TARGETS,   /* 0 .. 2 only: many repeats */
};

static void set_id(kp_dtype idt, void *base, size_t i, int64_t v)
{
    if (idt == KP_DTYPE_U8)
        ((uint8_t *)base)[i] = (uint8_t)v;
    else if (idt == KP_DTYPE_U32)
        ((uint32_t *)base)[i] = (uint32_t)v;
    else
        ((int64_t *)base)[i] = v;
}

static int64_t get_id(kp_dtype idt, const void *base, size_t i)
{
    if (idt == KP_DTYPE_U8)
        return ((const uint8_t *)base)[i];
    if (idt == KP_DTYPE_U32)
        return ((const uint32_t *)base)[i];
    return ((const int64_t *)base)[i];
}

static int64_t invalid_id(kp_dtype idt, int64_t size)
{
    uint64_t r = rng_next();
    switch (idt) {
    case KP_DTYPE_U8: return size < 256 ? size + (int64_t)(r % (uint64_t)(256 - size)) : 255;
    case KP_DTYPE_U32: return r % 2 ? 0xffffffffll : size + (int64_t)(r % 1000);
    default: {
        static const int64_t picks[] = {-1, INT64_MIN, -1000, INT64_MAX};
        return r % 5 < 4 ? picks[r % 5] : size + (int64_t)(r % 1000);
    }
    }
}

static void fill_ids(kp_dtype idt, struct operand *ids, int64_t size, enum ids_mode mode)
{
    int64_t limit = idt == KP_DTYPE_U8 && size > 256 ? 256 : size;
    if (mode == IDS_FEW_TARGETS && limit > 3)
        limit = 3;
    for (size_t i = 0; i < ids->elems; i++) {
        int bad = mode == IDS_SOME_INVALID && rng_next() % 4 == 0;
        set_id(idt, ids->buf.host, i,
               bad || limit == 0 ? invalid_id(idt, size) : (int64_t)(rng_next() % (uint64_t)limit));
    }
}

/* ---- values */

enum value_mode { VALUES_RANDOM, VALUES_SMALL_INT };

static void fill_values(kp_dtype dt, void *base, size_t n, enum value_mode mode)
{
    if (mode == VALUES_RANDOM || dt == KP_DTYPE_U8 || dt == KP_DTYPE_U32) {
        host_random(dt, base, n);  /* unsigned sums wrap exactly anyway */
        return;
    }
    for (size_t i = 0; i < n; i++)
        host_set(dt, base, i, (double)((int64_t)(rng_next() % 9) - 4));
}

static uint64_t raw_bits(const void *base, size_t i, size_t es)
{
    uint64_t v = 0;
    memcpy(&v, (const unsigned char *)base + i * es, es);
    return v;
}

static double epsilon(kp_dtype dt)
{
    switch (dt) {
    case KP_DTYPE_F32: return 1.2e-7;
    case KP_DTYPE_F64: return 2.3e-16;
    case KP_DTYPE_F16: return 9.8e-4;
    default: return 7.9e-3;
    }
}

static int is_float(kp_dtype dt)
{
    return dt == KP_DTYPE_F32 || dt == KP_DTYPE_F64 || dt == KP_DTYPE_F16 || dt == KP_DTYPE_BF16;
}

/* ---- one run */

struct run_opts {
    enum ids_mode ids;
    enum value_mode values;
    int exact_sums;  /* float sums must match exactly (small whole numbers) */
};

#define NO_POSITION UINT64_MAX

static void run_index(enum op op, kp_dtype idt, kp_dtype dt, const struct index_case *c,
                      struct run_opts opts)
{
    const int rank = c->rank, dim = c->dim;
    const size_t es = kp_dtype_size(dt);
    int64_t full[4], part[4];
    memcpy(full, c->full, sizeof(full));
    memcpy(part, c->full, sizeof(part));
    part[dim] = c->k;
    const int ids_rank = rank1_ids(op) ? 1 : rank;
    const int64_t *ids_shape = rank1_ids(op) ? &c->k : part;
    const int bdim = rank > 1 ? (dim == 0 ? 1 : 0) : 0;
    struct operand src, dst, ids;
    make_operand(&src, dt, rank, reads(op) ? full : part, c->src_kind, bdim, c->src_off);
    make_operand(&dst, dt, rank, reads(op) ? part : full, c->dst_kind, bdim, c->dst_off);
    make_operand(&ids, idt, ids_rank, ids_shape, c->ids_kind,
                 ids_rank == 1 ? 0 : c->ids_kind == ROW_CONST ? dim : bdim, c->ids_off);

    const int64_t size = full[dim];  /* valid ids: 0 .. size-1 */
    fill_values(dt, src.buf.host, src.elems, opts.values);
    if (reads(op))
        memset(dst.buf.host, POISON, dst.buf.bytes);
    else
        fill_values(dt, dst.buf.host, dst.elems, opts.values);
    fill_ids(idt, &ids, size, opts.ids);
    unsigned char *orig = malloc(dst.buf.bytes + 1);
    memcpy(orig, dst.buf.host, dst.buf.bytes);
    gpu_buf_upload(&src.buf);
    gpu_buf_upload(&dst.buf);
    gpu_buf_upload(&ids.buf);

    kp_index_status *status = NULL;
    CK_OK(kp_index_status_create(gpu_dev, &status));
    CK_OK(call_op(op, &dst.t, &src.t, &ids.t, dim, status));
    kp_index_report report;
    CK_OK(kp_index_status_read(gpu_stream, status, &report));
    kp_index_status_destroy(&status);
    gpu_buf_download(&dst.buf);

    /* Walk the iteration shape (dst's when reading, src's when writing). */
    const kp_tensor *iter = reads(op) ? &dst.t : &src.t;
    uint64_t n = tensor_numel(iter), first = NO_POSITION;
    unsigned char *want = malloc(dst.buf.bytes + 1);
    memcpy(want, orig, dst.buf.bytes);
    int *hits = calloc(dst.elems + 1, sizeof(int));       /* valid ids naming each dst element */
    int *matched = calloc(dst.elems + 1, sizeof(int));    /* scatter: got one of its values */
    double *sum = calloc(dst.elems + 1, sizeof(double));  /* adds: exact sum of the terms */
    double *abs_sum = calloc(dst.elems + 1, sizeof(double));
    uint64_t *int_sum = calloc(dst.elems + 1, sizeof(uint64_t));
    const unsigned char *got = dst.buf.host;
    for (uint64_t i = 0; i < n; i++) {
        int64_t coords[4];
        unravel(i, rank, iter->layout.shape, coords);
        uint64_t pos = rank1_ids(op) ? (uint64_t)coords[dim] : i;
        int64_t id = get_id(idt, ids.buf.host, tensor_offset(&ids.t, pos));
        int valid = id >= 0 && id < size;
        if (!valid && pos < first)
            first = pos;
        size_t it_off = tensor_offset(iter, i);
        if (reads(op)) {
            if (valid) {
                coords[dim] = id;
                memcpy(want + it_off * es, (unsigned char *)src.buf.host + offset_of(&src.t, coords) * es, es);
            } else {
                memset(want + it_off * es, 0, es);
            }
            hits[it_off] = 1;
            continue;
        }
        if (!valid)
            continue;
        coords[dim] = id;
        size_t target = offset_of(&dst.t, coords);
        hits[target]++;
        if (op == OP_SCATTER) {
            matched[target] |= memcmp(got + target * es, (unsigned char *)src.buf.host + it_off * es, es) == 0;
        } else {
            double v = host_get(dt, src.buf.host, it_off);
            sum[target] += v;
            abs_sum[target] += fabs(v);
            int_sum[target] += raw_bits(src.buf.host, it_off, es);
        }
    }

    char ctx[256];
    snprintf(ctx, sizeof(ctx), "%s, ids %s, values %s, case '%s'", op_names[op],
             kp_dtype_name(idt), kp_dtype_name(dt), c->name);
    for (size_t e = 0; e < dst.elems; e++) {
        const unsigned char *g = got + e * es;
        double gv = host_get(dt, got, e);
        if (!hits[e] || reads(op)) {
            /* untouched (orig) or, when reading, exactly the reference */
            if (memcmp(g, want + e * es, es) != 0)
                ck_abort_msg("%s: dst element %zu (%s): got %.17g want %.17g", ctx, e,
                             hits[e] ? "in the view" : "not written by the op", gv,
                             host_get(dt, want, e));
        } else if (op == OP_SCATTER) {
            ck_assert_msg(matched[e], "%s: dst element %zu holds %.17g, none of the %d values "
                          "scattered to it", ctx, e, gv, hits[e]);
        } else if (is_float(dt)) {
            double o = host_get(dt, orig, e), w = o + sum[e];
            double tol = opts.exact_sums ? 0 : (hits[e] + 1) * epsilon(dt) * (fabs(o) + abs_sum[e]);
            ck_assert_msg(fabs(gv - w) <= tol, "%s: dst element %zu after %d additions: got "
                          "%.17g want %.17g (tolerance %.3g)", ctx, e, hits[e], gv, w, tol);
        } else {
            uint64_t mask = es == 8 ? UINT64_MAX : (((uint64_t)1 << (8 * es)) - 1);
            uint64_t w = (raw_bits(orig, e, es) + int_sum[e]) & mask, gr = raw_bits(got, e, es);
            ck_assert_msg(gr == w, "%s: dst element %zu after %d additions: got %llu want %llu "
                          "(raw bits, wrapping)", ctx, e, hits[e], (unsigned long long)gr,
                          (unsigned long long)w);
        }
    }
    if (first == NO_POSITION)
        ck_assert_msg(!report.out_of_range, "%s: all ids valid but the status reports position %llu",
                      ctx, (unsigned long long)report.first_position);
    else
        ck_assert_msg(report.out_of_range && report.first_position == first,
                      "%s: status says out_of_range=%d first=%llu, want the first invalid id "
                      "at position %llu", ctx, report.out_of_range,
                      (unsigned long long)report.first_position, (unsigned long long)first);
    free(orig);
    free(want);
    free(hits);
    free(matched);
    free(sum);
    free(abs_sum);
    free(int_sum);
    free_operand(&src);
    free_operand(&dst);
    free_operand(&ids);
}

/* ---- tests */

/* _i = ((op * N_ID_DTYPES + ids) * N_DTYPES + dtype) * N_CASES + case */
START_TEST(test_all_ops_dtypes_layouts)
{
    rng_seed(1000 + (uint64_t)_i);
    int i = _i;
    const struct index_case *c = &cases[i % N_CASES];
    i /= N_CASES;
    kp_dtype dt = all_dtypes[i % N_DTYPES];
    i /= N_DTYPES;
    kp_dtype idt = id_dtypes[i % N_ID_DTYPES];
    run_index((enum op)(i / N_ID_DTYPES), idt, dt, c, (struct run_opts){IDS_VALID, VALUES_RANDOM, 0});
}
END_TEST

/* A quarter of the ids out of range: zeros / skipped updates, and the
 * first offending position reported. */
START_TEST(test_out_of_range_ids)
{
    static const struct index_case oob[] = {
        {"out of range, 3-D middle dim", 3, {6, 20, 5}, 1, 30, CONTIG, CONTIG, CONTIG, 0, 0, 0},
        {"out of range, strided", 2, {25, 8}, 0, 40, TRANSPOSED, PADDED, STRIDED, 1, 2, 1},
        {"indexed dim of size 0", 2, {0, 5}, 0, 3, CONTIG, CONTIG, CONTIG, 0, 0, 0},
    };
    rng_seed(2000 + (uint64_t)_i);
    int i = _i;
    const struct index_case *c = &oob[i % 3];
    i /= 3;
    kp_dtype dt = all_dtypes[i % N_DTYPES];
    i /= N_DTYPES;
    kp_dtype idt = id_dtypes[i % N_ID_DTYPES];
    run_index((enum op)(i / N_ID_DTYPES), idt, dt, c,
              (struct run_opts){IDS_SOME_INVALID, VALUES_RANDOM, 0});
}
END_TEST

/* scatter_add and index_add with ids from {0, 1, 2}: hundreds of atomic
 * additions per element. Small whole numbers keep every float partial sum
 * exact (bf16 has fewer terms: its integers are exact only up to 256). */
START_TEST(test_repeated_ids_add)
{
    int i = _i;
    kp_dtype dt = all_dtypes[i % N_DTYPES];
    i /= N_DTYPES;
    kp_dtype idt = id_dtypes[i % N_ID_DTYPES];
    enum op op = i / N_ID_DTYPES ? OP_INDEX_ADD : OP_SCATTER_ADD;
    int64_t k = dt == KP_DTYPE_BF16 ? 45 : 300;
    struct index_case c = {"repeated ids", 2, {3, 64}, 0, k, CONTIG, CONTIG, CONTIG, 0, 0, 0};
    rng_seed(3000 + (uint64_t)_i);
    run_index(op, idt, dt, &c, (struct run_opts){IDS_FEW_TARGETS, VALUES_SMALL_INT, 1});
    struct index_case t = {"repeated ids, transposed src", 3, {3, 8, 16}, 0, k, TRANSPOSED,
                           CONTIG, STRIDED, 0, 0, 0};
    run_index(op, idt, dt, &t, (struct run_opts){IDS_FEW_TARGETS, VALUES_SMALL_INT, 1});
}
END_TEST

/* ---- sub-word atomics at the ends of a buffer */

/* Adds 1 `per_elem` times to each of the n elements of dst, through ids that
 * name the first and last element most often, and checks the sums. dst is
 * `bytes_before` bytes into a poisoned allocation of `bytes_before + n * es +
 * bytes_after` bytes, wrapped as a buffer of exactly n elements when there
 * are bytes around it: the poison must survive. */
static void add_at_edges(enum op op, kp_dtype dt, kp_dtype idt, int64_t n, size_t bytes_before,
                         size_t bytes_after)
{
    const size_t es = kp_dtype_size(dt), bytes = (size_t)n * es;
    const int64_t per_elem = dt == KP_DTYPE_BF16 ? 200 : 1000, edge_extra = 3000;
    const int64_t m = n * per_elem + 2 * edge_extra;
    struct gpu_buf whole, src, ids;
    gpu_buf_alloc(&whole, bytes_before + bytes + bytes_after);
    gpu_buf_alloc(&src, (size_t)m * es);
    gpu_buf_alloc(&ids, (size_t)m * kp_dtype_size(idt));
    memset(whole.host, POISON, whole.bytes);
    memset((char *)whole.host + bytes_before, 0, bytes);
    for (int64_t i = 0; i < m; i++) {
        host_set(dt, src.host, (size_t)i, 1.0);
        /* i < n * per_elem: every element in turn; then the two ends */
        int64_t id = i < n * per_elem ? i % n : (i % 2 ? n - 1 : 0);
        host_set(idt, ids.host, (size_t)i, (double)id);
    }
    gpu_buf_upload(&whole);
    gpu_buf_upload(&src);
    gpu_buf_upload(&ids);

    kp_buffer *target = whole.dev;
    if (bytes_before || bytes_after)
        CK_OK(kp_buffer_wrap(gpu_dev, (char *)kp_buffer_device_ptr(whole.dev) + bytes_before,
                             bytes, &target));
    kp_tensor d = {target, dt, {0}};
    CK_OK(kp_layout_contiguous(&d.layout, 1, (int64_t[]){n}));
    kp_tensor s = gpu_tensor(&src, dt, 1, (int64_t[]){m}, NULL, 0);
    kp_tensor x = gpu_tensor(&ids, idt, 1, (int64_t[]){m}, NULL, 0);
    CK_OK(call_op(op, &d, &s, &x, 0, NULL));
    gpu_buf_download(&whole);

    const unsigned char *raw = whole.host;
    for (size_t b = 0; b < whole.bytes; b++)
        if (b < bytes_before || b >= bytes_before + bytes)
            ck_assert_msg(raw[b] == POISON, "%s %s: byte %zu outside the %zu-byte buffer changed",
                          op_names[op], kp_dtype_name(dt), b, bytes);
    for (int64_t e = 0; e < n; e++) {
        double want = (double)(per_elem + (e == 0 ? edge_extra : 0) + (e == n - 1 ? edge_extra : 0));
        if (dt == KP_DTYPE_U8)
            want = fmod(want, 256.0);
        else if (dt == KP_DTYPE_BF16 && want > 256.0)
            want = 256.0;  /* bf16 stops counting at 256: 256 + 1 rounds back to 256 */
        else if (dt == KP_DTYPE_F16 && want > 2048.0)
            want = 2048.0;
        double got = host_get(dt, raw + bytes_before, (size_t)e);
        ck_assert_msg(got == want, "%s %s, %lld elements at byte %zu: dst[%lld] = %g, want %g",
                      op_names[op], kp_dtype_name(dt), (long long)n, bytes_before, (long long)e,
                      got, want);
    }
    if (target != whole.dev)
        kp_buffer_destroy(&target);
    gpu_buf_free(&whole);
    gpu_buf_free(&src);
    gpu_buf_free(&ids);
}

/* Every sub-word dtype and adding op, with the last element at the very end
 * of an exactly-sized allocation (odd element counts leave the last 32-bit
 * word half outside) and inside wrapped buffers that start and end in the
 * middle of a word, where the updates must stay inside the wrapped bytes. */
START_TEST(test_add_at_buffer_edges)
{
    static const kp_dtype sub_word[] = {KP_DTYPE_F16, KP_DTYPE_BF16, KP_DTYPE_U8};
    kp_dtype dt = sub_word[_i % 3];
    enum op op = (_i / 3) % 2 ? OP_INDEX_ADD : OP_SCATTER_ADD;
    kp_dtype idt = _i / 6 ? KP_DTYPE_I64 : KP_DTYPE_U32;
    const int64_t counts[] = {1, 3, 5, 7};
    for (int k = 0; k < 4; k++) {
        add_at_edges(op, dt, idt, counts[k], 0, 0);
        add_at_edges(op, dt, idt, counts[k], kp_dtype_size(dt), 3 * kp_dtype_size(dt));
        if (dt == KP_DTYPE_U8)
            add_at_edges(op, dt, idt, counts[k], 3, 1);
    }
}
END_TEST

/* The status: clear after creation, records the smallest position over
 * several ops, stays set until cleared; NULL status still zeroes. */
START_TEST(test_status_lifecycle)
{
    struct gpu_buf src, dst, ids;
    gpu_buf_alloc(&src, 10 * 4 * 4);
    gpu_buf_alloc(&dst, 5 * 4 * 4);
    gpu_buf_alloc(&ids, 5 * 4);
    host_random(KP_DTYPE_F32, src.host, 40);
    gpu_buf_upload(&src);
    kp_tensor s = gpu_tensor(&src, KP_DTYPE_F32, 2, (int64_t[]){10, 4}, NULL, 0);
    kp_tensor d = gpu_tensor(&dst, KP_DTYPE_F32, 2, (int64_t[]){5, 4}, NULL, 0);
    kp_tensor x = gpu_tensor(&ids, KP_DTYPE_U32, 1, (int64_t[]){5}, NULL, 0);
    kp_index_status *status = NULL;
    kp_index_report r;
    CK_OK(kp_index_status_create(gpu_dev, &status));
    CK_OK(kp_index_status_read(gpu_stream, status, &r));
    ck_assert_msg(!r.out_of_range && r.first_position == 0, "a new status is not clear");

    const uint32_t bad_at_3[5] = {0, 1, 2, 10, 4}, bad_at_1[5] = {0, 99, 2, 3, 4};
    const uint32_t valid[5] = {9, 8, 7, 6, 5};
    const uint32_t *seq[3] = {bad_at_3, bad_at_1, valid};
    const uint64_t want_first[3] = {3, 1, 1};
    for (int k = 0; k < 3; k++) {
        memcpy(ids.host, seq[k], sizeof(valid));
        gpu_buf_upload(&ids);
        CK_OK(kp_index_select(gpu_stream, &d, &s, &x, 0, status));
        CK_OK(kp_index_status_read(gpu_stream, status, &r));
        ck_assert_msg(r.out_of_range && r.first_position == want_first[k],
                      "after op %d: out_of_range=%d first=%llu, want first %llu", k,
                      r.out_of_range, (unsigned long long)r.first_position,
                      (unsigned long long)want_first[k]);
    }
    CK_OK(kp_index_status_clear(gpu_stream, status));
    CK_OK(kp_index_status_read(gpu_stream, status, &r));
    ck_assert_msg(!r.out_of_range, "cleared status still reports position %llu",
                  (unsigned long long)r.first_position);

    memcpy(ids.host, bad_at_1, sizeof(valid));
    gpu_buf_upload(&ids);
    memset(dst.host, POISON, dst.bytes);
    gpu_buf_upload(&dst);
    CK_OK(kp_index_select(gpu_stream, &d, &s, &x, 0, NULL));
    gpu_buf_download(&dst);
    const float *got = dst.host, *table = src.host;
    for (int row = 0; row < 5; row++)
        for (int col = 0; col < 4; col++) {
            float w = row == 1 ? 0.0f : table[bad_at_1[row] * 4 + col];
            ck_assert_msg(got[row * 4 + col] == w, "no status: dst[%d][%d] = %g, want %g", row,
                          col, got[row * 4 + col], w);
        }
    CK_OK(kp_index_status_read(gpu_stream, status, &r));
    ck_assert_msg(!r.out_of_range, "an op without the status changed it");
    kp_index_status_destroy(&status);
    ck_assert_ptr_null(status);
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
    gpu_buf_free(&ids);
}
END_TEST

START_TEST(test_module_preload)
{
    CK_OK(kp_device_load_module(gpu_dev, "indexing"));
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("indexing");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_module_preload);
    tcase_add_test(tc, test_status_lifecycle);
    tcase_add_loop_test(tc, test_all_ops_dtypes_layouts, 0,
                        (int)(N_OPS * N_ID_DTYPES * N_DTYPES * N_CASES));
    tcase_add_loop_test(tc, test_out_of_range_ids, 0, N_OPS * N_ID_DTYPES * N_DTYPES * 3);
    tcase_add_loop_test(tc, test_repeated_ids_add, 0, 2 * N_ID_DTYPES * N_DTYPES);
    tcase_add_loop_test(tc, test_add_at_buffer_edges, 0, 12);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}

/* kp-bench cases of the spatial module (im2col/col2im, pooling,
 * upsampling) on the shapes of vision and audio models: a ResNet stage
 * (32 x 128 x 56 x 56), its stem's pooling (32 x 64 x 112 x 112), a VAE
 * decoder's upsampling (8 x 256 x 64 x 64) and Whisper's front-end
 * (80 x 3000). Bytes = src read once + dst written; inputs alternate
 * between INPUT_SETS copies. bench/torch_conv.py times PyTorch on the same
 * (op, variant) keys. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

enum sop { IM2COL, COL2IM, MAX_POOL, AVG_POOL, NEAREST, BILINEAR };

struct scase {
    enum sop kind;
    const char *op, *variant;
    int rank;                 /* of the image: 4, or 3 for (N, C, L) */
    int64_t n, c, h, w;       /* the image (rank 3: h = 1) */
    kp_window win;            /* window ops; 1-d: element [0] */
    int64_t h_out, w_out;     /* upsampling */
    bool u8;                  /* also in u8 (images as decoded), besides f32 and bf16 */
};

#define W2(k, s, p) {{k, k}, {s, s}, {p, p}, {1, 1}}
static const struct scase scases[] = {
    {IM2COL, "im2col", "3x3", 4, 32, 128, 56, 56, W2(3, 1, 1), 0, 0, false},
    {IM2COL, "im2col", "1d_k3", 3, 1, 80, 1, 3000, {{3}, {1}, {1}, {1}}, 0, 0, false},
    {COL2IM, "col2im", "3x3", 4, 32, 128, 56, 56, W2(3, 1, 1), 0, 0, true},
    {COL2IM, "col2im", "1d_k3", 3, 1, 80, 1, 3000, {{3}, {1}, {1}, {1}}, 0, 0, false},
    {MAX_POOL, "max_pool2d", "3x3s2p1", 4, 32, 64, 112, 112, W2(3, 2, 1), 0, 0, true},
    {MAX_POOL, "max_pool2d", "2x2s2", 4, 32, 128, 56, 56, W2(2, 2, 0), 0, 0, true},
    {AVG_POOL, "avg_pool2d", "2x2s2", 4, 32, 128, 56, 56, W2(2, 2, 0), 0, 0, false},
    {NEAREST, "upsample_nearest2d", "x2", 4, 8, 256, 64, 64, W2(1, 1, 0), 128, 128, false},
    {BILINEAR, "upsample_bilinear2d", "x2", 4, 8, 256, 64, 64, W2(1, 1, 0), 128, 128, false},
};
#define N_SCASES (sizeof(scases) / sizeof(scases[0]))
/* Every case's dtypes: the first two, and the third where it says u8. */
static const kp_dtype sdtypes[] = {KP_DTYPE_F32, KP_DTYPE_BF16, KP_DTYPE_U8};

static size_t case_dtypes(const struct scase *c)
{
    return c->u8 ? 3 : 2;
}

static size_t spatial_count(void)
{
    size_t n = 0;
    for (size_t k = 0; k < N_SCASES; k++)
        n += case_dtypes(&scases[k]);
    return n;
}

/* Entry i: its case, and its dtype in *dtype. */
static const struct scase *spatial_entry(size_t i, kp_dtype *dtype)
{
    size_t k = 0;
    while (i >= case_dtypes(&scases[k]))
        i -= case_dtypes(&scases[k++]);
    *dtype = sdtypes[i];
    return &scases[k];
}

static void spatial_describe(size_t i, struct bench_entry *e)
{
    const struct scase *c = spatial_entry(i, &e->dtype);
    e->op = c->op;
    snprintf(e->variant, sizeof(e->variant), "%s", c->variant);
}

static kp_tensor tensor(kp_buffer *buf, kp_dtype dtype, int rank, const int64_t *shape)
{
    kp_tensor t = {buf, dtype, {0}};
    kp_layout_contiguous(&t.layout, rank, shape);
    return t;
}

static uint64_t numel(const kp_tensor *t)
{
    uint64_t n = 1;
    for (int d = 0; d < t->layout.rank; d++)
        n *= (uint64_t)t->layout.shape[d];
    return n;
}

/* The image's shape, and the output (or, for col2im, the input) of the op. */
static void shapes(const struct scase *c, int64_t image[4], int *other_rank, int64_t other[4])
{
    image[0] = c->n;
    image[1] = c->c;
    image[2] = c->rank == 3 ? c->w : c->h;
    image[3] = c->w;
    const kp_window *w = &c->win;
    int kd = c->rank == 3 ? 0 : 1;  /* the window element of the last dim */
    int64_t h_out = c->rank == 3 ? 1 : (c->h + 2 * w->padding[0] - w->kernel[0]) / w->stride[0] + 1;
    int64_t w_out = (c->w + 2 * w->padding[kd] - w->kernel[kd]) / w->stride[kd] + 1;
    int64_t taps = w->kernel[0] * (c->rank == 3 ? 1 : w->kernel[1]);
    switch (c->kind) {
    case IM2COL:
    case COL2IM:
        *other_rank = 3;
        other[0] = c->n;
        other[1] = c->c * taps;
        other[2] = h_out * w_out;
        break;
    case NEAREST:
    case BILINEAR:
        h_out = c->h_out;
        w_out = c->w_out;
        /* fall through */
    default:
        *other_rank = 4;
        other[0] = c->n;
        other[1] = c->c;
        other[2] = h_out;
        other[3] = w_out;
    }
}

struct sctx {
    const struct scase *c;
    kp_stream *stream;
    kp_tensor src[INPUT_SETS], dst;
    int sets, next;
};

static kp_status run_scase(void *ctx, int i)
{
    (void)i;  /* rotates by its own count, across warm-ups and timed runs */
    struct sctx *s = ctx;
    const kp_tensor *src = &s->src[s->next++ % s->sets];
    const kp_window *w = &s->c->win;
    switch (s->c->kind) {
    case IM2COL: return kp_im2col(s->stream, &s->dst, src, w);
    case COL2IM: return kp_col2im(s->stream, &s->dst, src, w);
    case MAX_POOL: return kp_max_pool2d(s->stream, &s->dst, NULL, src, w, false);
    case AVG_POOL: return kp_avg_pool2d(s->stream, &s->dst, src, w, false, true);
    case NEAREST: return kp_upsample_nearest2d(s->stream, &s->dst, src, NULL);
    case BILINEAR: return kp_upsample_bilinear2d(s->stream, &s->dst, src, false, NULL);
    }
    return KP_ERR_INTERNAL;
}

static void spatial_run(struct bench *b, size_t i, struct result *r)
{
    kp_dtype dt;
    const struct scase *c = spatial_entry(i, &dt);
    struct bench_entry e;
    spatial_describe(i, &e);
    memset(r, 0, sizeof(*r));
    r->op = e.op;
    memcpy(r->variant, e.variant, sizeof(r->variant));
    r->dtype = r->out_dtype = dt;

    int64_t image[4], other[4];
    int other_rank;
    shapes(c, image, &other_rank, other);
    bool cols_in = c->kind == COL2IM;
    struct sctx s = {c, b->stream, {{0}}, {0}, 0, 0};
    kp_tensor src = cols_in ? tensor(NULL, dt, 3, other) : tensor(NULL, dt, c->rank, image);
    s.dst = cols_in ? tensor(NULL, dt, c->rank, image) : tensor(NULL, dt, other_rank, other);
    const size_t es = kp_dtype_size(dt);
    const uint64_t src_bytes = numel(&src) * es, dst_bytes = numel(&s.dst) * es;
    kp_buffer *bufs[INPUT_SETS + 1] = {NULL};
    kp_status st = kp_buffer_alloc(b->dev, dst_bytes, &bufs[INPUT_SETS]);
    for (int k = 0; st == KP_OK && k < INPUT_SETS; k++) {
        st = kp_buffer_alloc(b->dev, src_bytes, &bufs[k]);
        if (st == KP_ERR_OUT_OF_MEMORY && k > 0)
            break;  /* fewer sets: the sets column says so */
        if (st == KP_OK)
            st = fill_random(b, bufs[k], dt);
        s.src[k] = src;
        s.src[k].buffer = bufs[k];
        s.sets = k + 1;
    }
    s.dst.buffer = bufs[INPUT_SETS];
    if (st != KP_OK && st != KP_ERR_OUT_OF_MEMORY) {
        result_fail(r, "setup", st);
    } else {
        r->elements = numel(&s.dst);
        r->bytes = src_bytes + dst_bytes;
        r->sets = s.sets;
        st = time_runs(b, run_scase, &s, &r->ms);
        if (st == KP_OK)
            st = measure_copy(b, r->bytes, &r->copy_ms);
        if (st != KP_OK)
            result_fail(r, c->op, st);
    }
    for (int k = 0; k <= INPUT_SETS; k++)
        kp_buffer_destroy(&bufs[k]);
}

const struct bench_table bench_spatial_table = {spatial_count, spatial_describe, spatial_run};

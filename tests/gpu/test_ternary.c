/* kp_where on the GPU against a CPU reference: every cond dtype (u8, u32,
 * i64) x value dtype x layout (contiguous odd sizes, offsets, transposed,
 * broadcast rows, columns and scalars through stride 0, strided outputs,
 * rank 0, empty), and in-place use. Conds mix zeros with nonzero values
 * whose low bytes are zero (256, 2^32, INT64_MIN) so that only a full-width
 * test passes. Values include NaNs with payloads and -0: where copies bits,
 * so every result must equal its source bit for bit. Outputs are poisoned
 * first; every element of the view must be written and every byte outside it
 * keep the poison. Inputs must come back unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operands.h"

#define POISON 0xA5

static const kp_dtype all_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                      KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
#define N_DTYPES (sizeof(all_dtypes) / sizeof(all_dtypes[0]))
static const kp_dtype cond_dtypes[] = {KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
#define N_CONDS (sizeof(cond_dtypes) / sizeof(cond_dtypes[0]))

/* Half zeros; the rest nonzero, many with zero low bytes. */
static void fill_cond(kp_dtype dt, void *base, size_t n)
{
    static const uint8_t u8s[] = {1, 255, 128, 2};
    static const uint32_t u32s[] = {1, 256, 65536, 0x80000000u, 0x01000000u, 0xffffffffu};
    static const int64_t i64s[] = {1, -1, 256, (int64_t)1 << 32, INT64_MIN, (int64_t)1 << 56};
    for (size_t i = 0; i < n; i++) {
        bool zero = rng_next() % 2;
        uint64_t pick = rng_next();
        switch (dt) {
        case KP_DTYPE_U8: ((uint8_t *)base)[i] = zero ? 0 : u8s[pick % 4]; break;
        case KP_DTYPE_U32: ((uint32_t *)base)[i] = zero ? 0 : u32s[pick % 6]; break;
        default: ((int64_t *)base)[i] = zero ? 0 : i64s[pick % 6]; break;
        }
    }
}

/* Random values plus NaNs with payloads, -0 and infinities, as raw bits. */
static void fill_values(kp_dtype dt, void *base, size_t n)
{
    size_t es = kp_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
        void *e = (unsigned char *)base + i * es;
        host_random(dt, e, 1);
        if (rng_next() % 8)
            continue;
        unsigned pick = (unsigned)(rng_next() % 3);
        switch (dt) {
        case KP_DTYPE_F32: {
            static const uint32_t bits[] = {0x7fc12345u, 0x80000000u, 0xff800000u};
            memcpy(e, &bits[pick], 4);
            break;
        }
        case KP_DTYPE_F64: {
            static const uint64_t bits[] = {0xfff8000000abcdefull, 0x8000000000000000ull,
                                            0x7ff0000000000000ull};
            memcpy(e, &bits[pick], 8);
            break;
        }
        case KP_DTYPE_F16: {
            static const uint16_t bits[] = {0x7e01, 0x8000, 0xfc00};
            memcpy(e, &bits[pick], 2);
            break;
        }
        case KP_DTYPE_BF16: {
            static const uint16_t bits[] = {0x7fc1, 0x8000, 0xff80};
            memcpy(e, &bits[pick], 2);
            break;
        }
        default: break;  /* integers: random values are enough */
        }
    }
}

static bool cond_true(kp_dtype dt, const void *base, size_t i)
{
    switch (dt) {
    case KP_DTYPE_U8: return ((const uint8_t *)base)[i] != 0;
    case KP_DTYPE_U32: return ((const uint32_t *)base)[i] != 0;
    default: return ((const int64_t *)base)[i] != 0;
    }
}

struct where_case {
    const char *name;
    int rank;
    int64_t shape[CASE_MAX_RANK];
    struct operand_layout dst, cond, on_true, on_false;
};

#define C OPERAND_CONTIGUOUS
#define S OPERAND_STRIDED
static const struct where_case cases[] = {
    {"contiguous odd size", 1, {100003}, C(0), C(0), C(0), C(0)},
    {"contiguous, 16-byte aligned offsets", 1, {1001}, C(16), C(32), C(48), C(64)},
    {"contiguous, odd offsets", 2, {33, 65}, C(3), C(1), C(2), C(5)},
    {"transposed cond", 2, {37, 53}, C(0), S(5, 1, 37), C(0), C(0)},
    {"cond row broadcast (stride 0)", 2, {41, 67}, C(0), S(3, 0, 1), C(0), C(2)},
    {"on_false scalar broadcast, transposed on_true", 2, {29, 31}, C(0), C(0), S(0, 1, 29),
     S(7, 0, 0)},
    {"on_true column broadcast, strided dst", 2, {19, 23}, S(1, 47, 2), C(0), S(0, 1, 0), C(4)},
    {"cond scalar, on_true column broadcast", 2, {37, 64}, C(0), S(2, 0, 0), S(0, 1, 0), C(0)},
    {"rank 3: gaps everywhere, cond broadcast", 3, {3, 7, 9}, S(2, 100, 12, 1), S(0, 0, 9, 1),
     S(7, 70, 10, 1), S(1, 63, 9, 1)},
    {"rank 0", 0, {0}, C(4), C(9), C(1), C(2)},
    {"empty", 2, {0, 17}, C(0), C(0), C(0), C(0)},
};
#undef C
#undef S
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static void run_case(kp_dtype cdt, kp_dtype dt, const struct where_case *c)
{
    size_t es = kp_dtype_size(dt), cs = kp_dtype_size(cdt);
    size_t nd = operand_extent(c->rank, c->shape, &c->dst);
    size_t nc = operand_extent(c->rank, c->shape, &c->cond);
    size_t nt = operand_extent(c->rank, c->shape, &c->on_true);
    size_t nf = operand_extent(c->rank, c->shape, &c->on_false);
    struct gpu_buf db, cb, tb, fb;
    gpu_buf_alloc(&db, nd * es);
    gpu_buf_alloc(&cb, nc * cs);
    gpu_buf_alloc(&tb, nt * es);
    gpu_buf_alloc(&fb, nf * es);
    fill_cond(cdt, cb.host, nc);
    fill_values(dt, tb.host, nt);
    fill_values(dt, fb.host, nf);
    memset(db.host, POISON, db.bytes);
    struct gpu_buf *inputs[3] = {&cb, &tb, &fb};
    void *sent[3];
    for (int k = 0; k < 3; k++) {
        gpu_buf_upload(inputs[k]);
        sent[k] = malloc(inputs[k]->bytes);
        memcpy(sent[k], inputs[k]->host, inputs[k]->bytes);
    }
    gpu_buf_upload(&db);

    kp_tensor d = operand_tensor(&db, dt, c->rank, c->shape, &c->dst);
    kp_tensor cond = operand_tensor(&cb, cdt, c->rank, c->shape, &c->cond);
    kp_tensor t = operand_tensor(&tb, dt, c->rank, c->shape, &c->on_true);
    kp_tensor f = operand_tensor(&fb, dt, c->rank, c->shape, &c->on_false);
    CK_OK(kp_where(gpu_stream, &d, &cond, &t, &f));
    gpu_buf_download(&db);

    char context[160];
    snprintf(context, sizeof(context), "where cond %s, values %s, case '%s'", kp_dtype_name(cdt),
             kp_dtype_name(dt), c->name);
    static const char *const input_names[3] = {"cond", "on_true", "on_false"};
    for (int k = 0; k < 3; k++) {
        gpu_buf_download(inputs[k]);
        ck_assert_msg(memcmp(inputs[k]->host, sent[k], inputs[k]->bytes) == 0, "%s: %s was modified",
                      context, input_names[k]);
        free(sent[k]);
    }

    unsigned char *written = calloc(nd, 1);
    uint64_t n = tensor_numel(&d);
    for (uint64_t i = 0; i < n; i++) {
        size_t di = tensor_offset(&d, i), ci = tensor_offset(&cond, i);
        size_t ti = tensor_offset(&t, i), fi = tensor_offset(&f, i);
        written[di] = 1;
        bool pick_true = cond_true(cdt, cb.host, ci);
        const void *want_base = pick_true ? tb.host : fb.host;
        size_t wi = pick_true ? ti : fi;
        const unsigned char *got = (const unsigned char *)db.host + di * es;
        if (memcmp(got, (const unsigned char *)want_base + wi * es, es) != 0) {
            char cv[64], g[64], w[64];
            ck_abort_msg("%s: element %llu: cond %s selects %s: got %s, want %s", context,
                         (unsigned long long)i, format_element(cdt, cb.host, ci, cv, sizeof(cv)),
                         pick_true ? "on_true" : "on_false",
                         format_element(dt, got, 0, g, sizeof(g)),
                         format_element(dt, want_base, wi, w, sizeof(w)));
        }
    }
    check_untouched(&db, written, es, POISON, context);
    free(written);
    gpu_buf_free(&db);
    gpu_buf_free(&cb);
    gpu_buf_free(&tb);
    gpu_buf_free(&fb);
}

START_TEST(test_where_layouts)
{
    rng_seed(9000 + (uint64_t)_i);
    kp_dtype cdt = cond_dtypes[_i % N_CONDS];
    kp_dtype dt = all_dtypes[(_i / N_CONDS) % N_DTYPES];
    run_case(cdt, dt, &cases[_i / (N_CONDS * N_DTYPES)]);
}
END_TEST

/* dst is on_true, on_false or cond itself (same view); transposed views too. */
START_TEST(test_where_in_place)
{
    rng_seed(99);
    enum { INTO_TRUE, INTO_FALSE, INTO_COND };
    static const struct {
        int into;
        kp_dtype cond, values;
        bool transposed;
    } runs[] = {
        {INTO_TRUE, KP_DTYPE_U8, KP_DTYPE_F32, false},
        {INTO_FALSE, KP_DTYPE_I64, KP_DTYPE_BF16, true},
        {INTO_COND, KP_DTYPE_U8, KP_DTYPE_U8, true},
        {INTO_COND, KP_DTYPE_I64, KP_DTYPE_I64, false},
    };
    const int64_t rows = 45, cols = 37;
    const size_t n = (size_t)(rows * cols);
    int64_t shape[2] = {rows, cols}, tr[2] = {1, rows};
    for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
        kp_dtype cdt = runs[k].cond, dt = runs[k].values;
        size_t es = kp_dtype_size(dt);
        struct gpu_buf cb, tb, fb;
        gpu_buf_alloc(&cb, n * kp_dtype_size(cdt));
        gpu_buf_alloc(&tb, n * es);
        gpu_buf_alloc(&fb, n * es);
        fill_cond(cdt, cb.host, n);
        fill_values(dt, tb.host, n);
        fill_values(dt, fb.host, n);
        struct gpu_buf *bufs[3] = {&cb, &tb, &fb};
        void *sent[3];
        for (int b = 0; b < 3; b++) {
            gpu_buf_upload(bufs[b]);
            sent[b] = malloc(bufs[b]->bytes);
            memcpy(sent[b], bufs[b]->host, bufs[b]->bytes);
        }
        const int64_t *strides = runs[k].transposed ? tr : NULL;
        kp_tensor cond = gpu_tensor(&cb, cdt, 2, shape, runs[k].into == INTO_COND ? strides : NULL, 0);
        kp_tensor t = gpu_tensor(&tb, dt, 2, shape, runs[k].into == INTO_TRUE ? strides : NULL, 0);
        kp_tensor f = gpu_tensor(&fb, dt, 2, shape, runs[k].into == INTO_FALSE ? strides : NULL, 0);
        const kp_tensor *dst = runs[k].into == INTO_TRUE ? &t : runs[k].into == INTO_FALSE ? &f : &cond;
        CK_OK(kp_where(gpu_stream, dst, &cond, &t, &f));
        struct gpu_buf *db = bufs[runs[k].into == INTO_TRUE ? 1 : runs[k].into == INTO_FALSE ? 2 : 0];
        gpu_buf_download(db);
        for (uint64_t i = 0; i < n; i++) {
            size_t ci = tensor_offset(&cond, i), ti = tensor_offset(&t, i), fi = tensor_offset(&f, i);
            size_t di = tensor_offset(dst, i);
            bool pick_true = cond_true(cdt, sent[0], ci);
            const unsigned char *want = (const unsigned char *)(pick_true ? sent[1] : sent[2]) +
                                        (pick_true ? ti : fi) * es;
            const unsigned char *got = (const unsigned char *)db->host + di * es;
            char g[64], w[64];
            ck_assert_msg(memcmp(got, want, es) == 0,
                          "where in place (run %zu: cond %s, values %s%s): element %llu: "
                          "got %s, want %s",
                          k, kp_dtype_name(cdt), kp_dtype_name(dt),
                          runs[k].transposed ? ", transposed" : "",
                          (unsigned long long)i, format_element(dt, got, 0, g, sizeof(g)),
                          format_element(dt, want, 0, w, sizeof(w)));
        }
        for (int b = 0; b < 3; b++) {
            free(sent[b]);
            gpu_buf_free(bufs[b]);
        }
    }
}
END_TEST

START_TEST(test_module_preload)
{
    CK_OK(kp_device_load_module(gpu_dev, "ternary"));
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("ternary");
    TCase *tc = tcase_create("gpu");
    tcase_add_test(tc, test_module_preload);
    tcase_add_loop_test(tc, test_where_layouts, 0, (int)(N_CONDS * N_DTYPES * N_CASES));
    tcase_add_test(tc, test_where_in_place);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}

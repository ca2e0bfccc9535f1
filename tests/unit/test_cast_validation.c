/* kp_cast: bad arguments get a clear status and launch nothing; valid calls
 * launch the kernel named after the source and destination dtypes. */
#include "fake_env.h"

static void setup(void)
{
    fake_env_setup(4096);
}

/* A rows x cols contiguous tensor starting at element `offset`. */
static kp_tensor tensor(kp_buffer *b, kp_dtype dtype, int64_t rows, int64_t cols, int64_t offset)
{
    kp_tensor t = {b, dtype, {0}};
    int64_t shape[2] = {rows, cols};
    ck_assert_int_eq(kp_layout_contiguous(&t.layout, 2, shape), KP_OK);
    t.layout.offset = offset;
    return t;
}

START_TEST(test_cast_rejects_bad_arguments)
{
    /* dst: 8x16 f32 in bytes [0, 512); src: 8x16 bf16 in bytes [2048, 2304). */
    kp_tensor d = tensor(buf, KP_DTYPE_F32, 8, 16, 0), s = tensor(buf, KP_DTYPE_BF16, 8, 16, 1024);
    EXPECT(kp_cast(NULL, &d, &s), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_cast(stream, NULL, &s), KP_ERR_INVALID_ARGUMENT, "dst is NULL");
    EXPECT(kp_cast(stream, &d, NULL), KP_ERR_INVALID_ARGUMENT, "src is NULL");

    kp_tensor bad = d;
    bad.dtype = (kp_dtype)KP_DTYPE_COUNT;
    EXPECT(kp_cast(stream, &bad, &s), KP_ERR_INVALID_ARGUMENT, "dst has invalid dtype");
    bad = s;
    bad.dtype = (kp_dtype)-1;
    EXPECT(kp_cast(stream, &d, &bad), KP_ERR_INVALID_ARGUMENT, "src has invalid dtype");

    bad = s;
    bad.layout.shape[1] = 15;
    EXPECT(kp_cast(stream, &d, &bad), KP_ERR_INVALID_ARGUMENT, "src has shape [8, 15] but dst has [8, 16]");
    bad = s;
    bad.layout.rank = 1;
    EXPECT(kp_cast(stream, &d, &bad), KP_ERR_INVALID_ARGUMENT, "src has shape [8] but dst has [8, 16]");

    bad = tensor(small, KP_DTYPE_F64, 8, 16, 0);
    EXPECT(kp_cast(stream, &bad, &s), KP_ERR_BUFFER_TOO_SMALL, "dst reaches element");
    bad = s;
    bad.layout.offset = 4096 / 2 - 100;  /* the last elements fall off the end */
    EXPECT(kp_cast(stream, &d, &bad), KP_ERR_BUFFER_TOO_SMALL, "src reaches element");
    bad = s;
    bad.layout.strides[1] = -1;
    EXPECT(kp_cast(stream, &d, &bad), KP_ERR_INVALID_ARGUMENT, "negative");
    bad = s;
    bad.buffer = foreign;
    EXPECT(kp_cast(stream, &d, &bad), KP_ERR_DEVICE_MISMATCH, "src buffer belongs");
    bad = d;
    bad.buffer = NULL;
    EXPECT(kp_cast(stream, &bad, &s), KP_ERR_INVALID_ARGUMENT, "dst buffer is NULL");

    bad = d;
    bad.layout.strides[0] = 0;  /* rows would all write the same elements */
    EXPECT(kp_cast(stream, &bad, &s), KP_ERR_INVALID_ARGUMENT, "more than once");

    /* Overlap is judged in bytes, across element sizes: u8 src bytes
     * [500, 628) overlap the f32 dst's [0, 512). */
    bad = tensor(buf, KP_DTYPE_U8, 8, 16, 500);
    EXPECT(kp_cast(stream, &d, &bad), KP_ERR_INVALID_ARGUMENT, "dst overlaps src");
    /* Not even in place with the same dtype and layout. */
    kp_tensor same = tensor(buf, KP_DTYPE_F32, 8, 16, 0);
    EXPECT(kp_cast(stream, &d, &same), KP_ERR_INVALID_ARGUMENT, "dst overlaps src");
    /* Same start, wider destination. */
    bad = tensor(buf, KP_DTYPE_F16, 8, 16, 0);
    EXPECT(kp_cast(stream, &d, &bad), KP_ERR_INVALID_ARGUMENT, "dst overlaps src");

    fake_env_assert_untouched();
}
END_TEST

START_TEST(test_every_pair_launches_its_kernel)
{
    int launches = 0;
    for (int s = 0; s < KP_DTYPE_COUNT; s++) {
        for (int t = 0; t < KP_DTYPE_COUNT; t++) {
            kp_tensor dst = tensor(buf, (kp_dtype)t, 4, 8, 0);
            kp_tensor src = tensor(buf, (kp_dtype)s, 4, 8, 0);
            src.layout.offset = 2048 / (int64_t)kp_dtype_size((kp_dtype)s);  /* second half */
            char want[64];

            ck_assert_int_eq(kp_cast(stream, &dst, &src), KP_OK);
            snprintf(want, sizeof(want), "cast_%s_%s", kp_dtype_name((kp_dtype)s), kp_dtype_name((kp_dtype)t));
            ck_assert_str_eq(fake.last_kernel, want);
            ck_assert_int_eq(atomic_load(&fake.launches), ++launches);

            /* Transposed source: the strided kernel of the same pair. */
            kp_tensor tsrc = tensor(buf, (kp_dtype)s, 4, 8, src.layout.offset);
            tsrc.layout.strides[0] = 1;
            tsrc.layout.strides[1] = 4;
            ck_assert_int_eq(kp_cast(stream, &dst, &tsrc), KP_OK);
            snprintf(want, sizeof(want), "cast_strided_%s_%s", kp_dtype_name((kp_dtype)s),
                     kp_dtype_name((kp_dtype)t));
            ck_assert_str_eq(fake.last_kernel, want);
            ck_assert_int_eq(atomic_load(&fake.launches), ++launches);
        }
    }
}
END_TEST

START_TEST(test_layout_choices)
{
    kp_tensor d = tensor(buf, KP_DTYPE_BF16, 8, 16, 0), s = tensor(buf, KP_DTYPE_I64, 8, 16, 128);
    /* Contiguous with an offset (any alignment): still the contiguous kernel. */
    d.layout.offset = 3;
    ck_assert_int_eq(kp_cast(stream, &d, &s), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "cast_i64_bf16");
    /* Broadcast source (stride 0) is fine. */
    s.layout.strides[0] = 0;
    ck_assert_int_eq(kp_cast(stream, &d, &s), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "cast_strided_i64_bf16");
    /* Strided destination. */
    s = tensor(buf, KP_DTYPE_I64, 8, 16, 128);
    d = tensor(buf, KP_DTYPE_BF16, 8, 16, 0);
    d.layout.strides[0] = 32;
    ck_assert_int_eq(kp_cast(stream, &d, &s), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "cast_strided_i64_bf16");
    /* Rank 0 (one element) and size-1 dims count as contiguous. */
    kp_tensor d0 = {buf, KP_DTYPE_U8, {0}}, s0 = {buf, KP_DTYPE_F64, {0}};
    s0.layout.offset = 10;
    ck_assert_int_eq(kp_cast(stream, &d0, &s0), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "cast_f64_u8");
    /* Empty tensors: checked, but nothing is launched, even with broadcast dst. */
    int before = atomic_load(&fake.launches);
    kp_tensor e = tensor(buf, KP_DTYPE_F32, 0, 16, 0), es = tensor(buf, KP_DTYPE_F16, 0, 16, 0);
    ck_assert_int_eq(kp_cast(stream, &e, &es), KP_OK);
    e.layout.strides[1] = 0;
    ck_assert_int_eq(kp_cast(stream, &e, &es), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
    /* An empty tensor is still checked. */
    es.dtype = (kp_dtype)99;
    ck_assert_int_eq(kp_cast(stream, &e, &es), KP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
}
END_TEST

/* The contiguous kernel's grid covers the tensor once, a thread for each
 * 16 bytes of the destination and at most 32 of the source (kp_map_lanes),
 * not the grid-stride grid capped by the multiprocessor count (4 here). */
START_TEST(test_contiguous_grid_covers_tensor)
{
    enum { N = 1 << 16 };
    kp_buffer *big = NULL;
    ck_assert_int_eq(kp_buffer_alloc(dev, 12 * N, &big), KP_OK);
    static const struct {
        kp_dtype from, to;
        unsigned lanes;
    } pairs[] = {
        {KP_DTYPE_F32, KP_DTYPE_F16, 8},  /* narrowing: 16 bytes of f16 */
        {KP_DTYPE_F16, KP_DTYPE_F32, 4},  /* widening: 16 bytes of f32 */
        {KP_DTYPE_F64, KP_DTYPE_U8, 4},   /* 32 bytes of f64 at most */
        {KP_DTYPE_U8, KP_DTYPE_U8, 16},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        kp_tensor d = tensor(big, pairs[i].to, 1, N - 3, 0);
        kp_tensor s = tensor(big, pairs[i].from, 1, N - 3, 0);
        s.layout.offset = 4 * N / (int64_t)kp_dtype_size(pairs[i].from);  /* past dst */
        ck_assert_int_eq(kp_cast(stream, &d, &s), KP_OK);
        const unsigned threads = (N - 3 + pairs[i].lanes - 1) / pairs[i].lanes;
        ck_assert_uint_eq(fake.last_dims.block[0], 256);
        ck_assert_uint_eq(fake.last_dims.grid[0], (threads + 255) / 256);
    }
    kp_buffer_destroy(&big);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cast_validation");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, fake_env_teardown);
    tcase_add_test(tc, test_cast_rejects_bad_arguments);
    tcase_add_test(tc, test_every_pair_launches_its_kernel);
    tcase_add_test(tc, test_layout_choices);
    tcase_add_test(tc, test_contiguous_grid_covers_tensor);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

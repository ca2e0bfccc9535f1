/* argsort with the fake backend: argument and workspace checks, the
 * workspace size, and the launch sequence (one block launch for rows of up
 * to 2048, by a kernel of its own for rows of up to 64; for longer rows the
 * key conversion, then per byte of the key a count (but for the first
 * byte), a scan and a scatter, the last one writing dst). */
#include "unit_util.h"

static kp_device *dev, *other_dev;
static kp_stream *stream;
static kp_buffer *buf, *ws, *foreign;

static void setup(void)
{
    char arch[64];
    built_arch(arch, sizeof(arch));
    fake_install(arch);
    ck_assert_int_eq(kp_device_open(0, &dev), KP_OK);
    ck_assert_int_eq(kp_device_open(0, &other_dev), KP_OK);
    ck_assert_int_eq(kp_stream_create(dev, &stream), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 1 << 20, &buf), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 1 << 20, &ws), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(other_dev, 1 << 20, &foreign), KP_OK);
}

static void teardown(void)
{
    kp_buffer_destroy(&buf);
    kp_buffer_destroy(&ws);
    kp_buffer_destroy(&foreign);
    kp_stream_destroy(&stream);
    kp_device_close(&dev);
    kp_device_close(&other_dev);
    kp_backend_override(NULL);
}

START_TEST(test_rejects_bad_arguments)
{
    kp_tensor s = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){4, 100}, 0);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){4, 100}, 1000);
    EXPECT(kp_argsort(NULL, &d, &s, false, NULL), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_argsort(stream, NULL, &s, false, NULL), KP_ERR_INVALID_ARGUMENT, "dst is NULL");
    EXPECT(kp_argsort(stream, &d, NULL, false, NULL), KP_ERR_INVALID_ARGUMENT, "src is NULL");
    kp_tensor bad = d;
    bad.dtype = KP_DTYPE_I64;
    EXPECT(kp_argsort(stream, &bad, &s, false, NULL), KP_ERR_INVALID_ARGUMENT, "dst is i64; it must be u32");
    bad = s;
    bad.dtype = (kp_dtype)42;
    EXPECT(kp_argsort(stream, &d, &bad, false, NULL), KP_ERR_INVALID_ARGUMENT, "invalid dtype");
    bad = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){4, 99}, 1000);
    EXPECT(kp_argsort(stream, &bad, &s, false, NULL), KP_ERR_INVALID_ARGUMENT, "src has shape [4, 100] but dst has [4, 99]");
    bad = d;
    bad.layout.offset = 300;  /* overlaps src's 400 floats */
    EXPECT(kp_argsort(stream, &bad, &s, false, NULL), KP_ERR_INVALID_ARGUMENT, "dst overlaps src");
    bad = d;
    bad.layout.strides[1] = 0;
    EXPECT(kp_argsort(stream, &bad, &s, false, NULL), KP_ERR_INVALID_ARGUMENT, "more than once");
    bad = s;
    bad.buffer = foreign;
    EXPECT(kp_argsort(stream, &d, &bad, false, NULL), KP_ERR_DEVICE_MISMATCH, "src buffer belongs");
    /* rows whose columns do not fit u32 indices (shape only: a stride-0 view) */
    kp_tensor wide = {buf, KP_DTYPE_U8, {1, {(int64_t)UINT32_MAX + 1}, {0}, 0}};
    kp_tensor wide_dst = {buf, KP_DTYPE_U32, {1, {(int64_t)UINT32_MAX + 1}, {0}, 0}};
    EXPECT(kp_argsort(stream, &wide_dst, &wide, false, NULL), KP_ERR_INVALID_ARGUMENT,
           "exceed the u32 index range");
    ck_assert_int_eq(atomic_load(&fake.launches), 0);
}
END_TEST

START_TEST(test_workspace)
{
    size_t bytes = 99;
    kp_tensor s = unit_tensor(NULL, KP_DTYPE_F64, 2, (int64_t[]){3, 2048}, 0);
    ck_assert_int_eq(kp_argsort_workspace_size(&s, &bytes), KP_OK);
    ck_assert_uint_eq(bytes, 0);  /* fits one block: no buffer, even with a NULL src buffer */
    s = unit_tensor(NULL, KP_DTYPE_F64, 2, (int64_t[]){3, 2049}, 0);
    ck_assert_int_eq(kp_argsort_workspace_size(&s, &bytes), KP_OK);
    /* two (key, index) array pairs and 256 u32 counts per tile (2 tiles a row), 5 alignments */
    const size_t counts = 3 * 2 * 256 * 4;
    ck_assert_uint_ge(bytes, 2 * 3 * 2049 * (8 + 4) + counts);
    ck_assert_uint_le(bytes, 2 * 3 * 2049 * (8 + 4) + counts + 5 * 256);
    size_t f16_bytes = 0;
    s.dtype = KP_DTYPE_F16;
    ck_assert_int_eq(kp_argsort_workspace_size(&s, &f16_bytes), KP_OK);
    ck_assert_uint_lt(f16_bytes, bytes);  /* keys as wide as the dtype */
    s = unit_tensor(NULL, KP_DTYPE_F32, 0, NULL, 0);
    ck_assert_int_eq(kp_argsort_workspace_size(&s, &bytes), KP_OK);
    ck_assert_uint_eq(bytes, 0);
    EXPECT(kp_argsort_workspace_size(NULL, &bytes), KP_ERR_INVALID_ARGUMENT, "src is NULL");
    EXPECT(kp_argsort_workspace_size(&s, NULL), KP_ERR_INVALID_ARGUMENT, "bytes is NULL");
    s.layout.rank = 9;
    EXPECT(kp_argsort_workspace_size(&s, &bytes), KP_ERR_INVALID_ARGUMENT, "rank 9");

    /* long rows need the workspace */
    kp_tensor src = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){2, 5000}, 0);
    kp_tensor dst = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){2, 5000}, 10000);
    size_t need = 0;
    ck_assert_int_eq(kp_argsort_workspace_size(&src, &need), KP_OK);
    EXPECT(kp_argsort(stream, &dst, &src, false, NULL), KP_ERR_INVALID_ARGUMENT,
           "workspace is NULL but rows of 5000 elements need");
    kp_buffer *small = NULL, *unaligned = NULL, *far = NULL;
    ck_assert_int_eq(kp_buffer_alloc(dev, need - 1, &small), KP_OK);
    EXPECT(kp_argsort(stream, &dst, &src, false, small), KP_ERR_BUFFER_TOO_SMALL, "workspace holds");
    EXPECT(kp_argsort(stream, &dst, &src, false, foreign), KP_ERR_DEVICE_MISMATCH, "workspace buffer belongs");
    ck_assert_int_eq(kp_buffer_wrap(dev, (char *)kp_buffer_device_ptr(ws) + 8, need, &unaligned), KP_OK);
    EXPECT(kp_argsort(stream, &dst, &src, false, unaligned), KP_ERR_INVALID_ARGUMENT, "16-byte aligned");
    /* a workspace carved out of src's or dst's memory */
    ck_assert_int_eq(kp_buffer_wrap(dev, kp_buffer_device_ptr(buf), need, &far), KP_OK);
    EXPECT(kp_argsort(stream, &dst, &src, false, far), KP_ERR_INVALID_ARGUMENT, "workspace overlaps src");
    ck_assert_int_eq(atomic_load(&fake.launches), 0);
    kp_buffer_destroy(&small);
    kp_buffer_destroy(&unaligned);
    kp_buffer_destroy(&far);
}
END_TEST

START_TEST(test_launch_sequence)
{
    kp_tensor s = unit_tensor(buf, KP_DTYPE_BF16, 2, (int64_t[]){7, 1000}, 0);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){7, 1000}, 10000);
    ck_assert_int_eq(kp_argsort(stream, &d, &s, true, NULL), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 1);
    ck_assert_str_eq(fake.last_kernel, "argsort_rows_bf16");

    /* 8193 columns of 8-byte keys: keys, then scan + scatter, then 7 x (count, scan, scatter) */
    kp_tensor s2 = unit_tensor(buf, KP_DTYPE_I64, 1, (int64_t[]){8193}, 0);
    kp_tensor d2 = unit_tensor(buf, KP_DTYPE_U32, 1, (int64_t[]){8193}, 20000);
    ck_assert_int_eq(kp_argsort(stream, &d2, &s2, false, ws), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 1 + 1 + 2 + 7 * 3);
    ck_assert_str_eq(fake.last_kernel, "argsort_scatter_final_x64");

    /* 4097 columns of 1-byte keys: keys, scan, the final scatter */
    kp_tensor s3 = unit_tensor(buf, KP_DTYPE_U8, 1, (int64_t[]){4097}, 0);
    kp_tensor d3 = unit_tensor(buf, KP_DTYPE_U32, 1, (int64_t[]){4097}, 20000);
    ck_assert_int_eq(kp_argsort(stream, &d3, &s3, false, ws), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 25 + 3);
    ck_assert_str_eq(fake.last_kernel, "argsort_scatter_final_x8");

    /* 2049 columns of 2-byte keys: keys, scan, scatter, count, scan, final scatter */
    kp_tensor s4 = unit_tensor(buf, KP_DTYPE_F16, 1, (int64_t[]){2049}, 0);
    kp_tensor d4 = unit_tensor(buf, KP_DTYPE_U32, 1, (int64_t[]){2049}, 20000);
    ck_assert_int_eq(kp_argsort(stream, &d4, &s4, false, ws), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 28 + 6);
    ck_assert_str_eq(fake.last_kernel, "argsort_scatter_final_x16");

    /* rank 0 is one row of one element; empty tensors launch nothing */
    kp_tensor s5 = unit_tensor(buf, KP_DTYPE_F64, 0, NULL, 0);
    kp_tensor d5 = unit_tensor(buf, KP_DTYPE_U32, 0, NULL, 20000);
    ck_assert_int_eq(kp_argsort(stream, &d5, &s5, false, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "argsort_rows_short_f64");
    kp_tensor s6 = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){0, 9000}, 0);
    kp_tensor d6 = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){0, 9000}, 20000);
    ck_assert_int_eq(kp_argsort(stream, &d6, &s6, false, NULL), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 35);

    /* rows of 64 take the bitonic kernel, rows of 65 (padded to 128) the radix one */
    kp_tensor s7 = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){3, 64}, 0);
    kp_tensor d7 = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){3, 64}, 20000);
    ck_assert_int_eq(kp_argsort(stream, &d7, &s7, false, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "argsort_rows_short_u32");
    kp_tensor s8 = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){3, 65}, 0);
    kp_tensor d8 = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){3, 65}, 20000);
    ck_assert_int_eq(kp_argsort(stream, &d8, &s8, false, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "argsort_rows_u32");
    ck_assert_int_eq(atomic_load(&fake.launches), 37);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sort");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_rejects_bad_arguments);
    tcase_add_test(tc, test_workspace);
    tcase_add_test(tc, test_launch_sequence);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

/* Bad arguments get a clear status and nothing is launched or written. */
#include "fake_env.h"

static void setup(void) { fake_env_setup(4096); }

static kp_tensor tensor(kp_buffer *b, kp_dtype dtype, int64_t rows, int64_t cols)
{
    kp_tensor t = {b, dtype, {0}};
    int64_t shape[2] = {rows, cols};
    ck_assert_int_eq(kp_layout_contiguous(&t.layout, 2, shape), KP_OK);
    return t;
}

START_TEST(test_affine_rejects_bad_arguments)
{
    kp_tensor a = tensor(buf, KP_DTYPE_F32, 16, 16), b = tensor(buf, KP_DTYPE_F32, 16, 16);
    b.layout.offset = 256;  /* second half of buf */
    a.layout.shape[0] = 8;
    b.layout.shape[0] = 8;
    EXPECT(kp_affine(NULL, &a, &b, 1, 0), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_affine(stream, NULL, &b, 1, 0), KP_ERR_INVALID_ARGUMENT, "dst is NULL");
    kp_tensor bad = a;
    bad.dtype = (kp_dtype)99;
    EXPECT(kp_affine(stream, &bad, &b, 1, 0), KP_ERR_INVALID_ARGUMENT, "invalid dtype");
    bad = a;
    bad.layout.rank = KP_MAX_RANK + 1;
    EXPECT(kp_affine(stream, &bad, &b, 1, 0), KP_ERR_INVALID_ARGUMENT, "rank 9");
    bad = a;
    bad.layout.shape[0] = INT64_MAX / 2;
    bad.layout.shape[1] = 4;
    EXPECT(kp_affine(stream, &bad, &b, 1, 0), KP_ERR_INVALID_ARGUMENT, "overflows");
    bad = a;
    bad.layout.strides[0] = INT64_MAX / 4;
    EXPECT(kp_affine(stream, &bad, &b, 1, 0), KP_ERR_INVALID_ARGUMENT, "overflow");
    bad = a;
    bad.layout.strides[1] = -1;
    EXPECT(kp_affine(stream, &bad, &b, 1, 0), KP_ERR_INVALID_ARGUMENT, "negative");
    bad = tensor(small, KP_DTYPE_F32, 8, 16);
    EXPECT(kp_affine(stream, &bad, &b, 1, 0), KP_ERR_BUFFER_TOO_SMALL, "holds 16 bytes");
    bad = a;
    bad.buffer = foreign;
    EXPECT(kp_affine(stream, &bad, &b, 1, 0), KP_ERR_DEVICE_MISMATCH, "dst buffer belongs");
    bad = a;
    bad.buffer = NULL;
    EXPECT(kp_affine(stream, &bad, &b, 1, 0), KP_ERR_INVALID_ARGUMENT, "dst buffer is NULL");
    bad = b;
    bad.dtype = KP_DTYPE_F16;
    EXPECT(kp_affine(stream, &a, &bad, 1, 0), KP_ERR_INVALID_ARGUMENT, "src is f16");
    bad = b;
    bad.layout.shape[1] = 15;
    EXPECT(kp_affine(stream, &a, &bad, 1, 0), KP_ERR_INVALID_ARGUMENT, "src has shape [8, 15] but dst has [8, 16]");
    bad = a;
    bad.layout.strides[0] = 0;
    EXPECT(kp_affine(stream, &bad, &b, 1, 0), KP_ERR_INVALID_ARGUMENT, "more than once");
    bad = b;
    bad.layout.offset = 8;  /* overlaps a, but is not the same view */
    EXPECT(kp_affine(stream, &a, &bad, 1, 0), KP_ERR_INVALID_ARGUMENT, "overlaps");
    kp_tensor u8 = tensor(buf, KP_DTYPE_U8, 4, 4), u8b = u8;
    u8b.layout.offset = 100;
    EXPECT(kp_affine(stream, &u8, &u8b, 2.5, 0), KP_ERR_INVALID_ARGUMENT, "whole number");
    EXPECT(kp_affine(stream, &u8, &u8b, 1, 256), KP_ERR_INVALID_ARGUMENT, "add = 256");
    EXPECT(kp_affine(stream, &u8, &u8b, -1, 0), KP_ERR_INVALID_ARGUMENT, "mul = -1");
    fake_env_assert_untouched();
}
END_TEST

START_TEST(test_valid_calls_launch_the_right_kernel)
{
    kp_tensor a = tensor(buf, KP_DTYPE_BF16, 16, 16), b = a;
    b.layout.offset = 512;
    ck_assert_int_eq(kp_affine(stream, &a, &b, 2, 1), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "affine_bf16");
    ck_assert_int_eq(kp_affine(stream, &a, &a, 2, 1), KP_OK);  /* in place */
    b.layout.strides[0] = 1;   /* transposed view */
    b.layout.strides[1] = 16;
    ck_assert_int_eq(kp_affine(stream, &a, &b, 2, 1), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "affine_strided_bf16");
    int64_t v = -7;
    kp_tensor i64 = tensor(buf, KP_DTYPE_I64, 4, 4);
    ck_assert_int_eq(kp_fill(stream, &i64, &v), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "fill_x64");
    i64.layout.strides[0] = 0;  /* broadcast fill is fine */
    ck_assert_int_eq(kp_fill(stream, &i64, &v), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "fill_strided_x64");
    /* copies of a permuted f16 view into [2, 4, 8]: from [4, 2, 8] its rows
     * of 8 stay contiguous; from [8, 4, 2] (last stride 8) it goes element
     * by element; from [2, 8, 4] it is a batched transpose */
    kp_tensor h = {buf, KP_DTYPE_F16, {0}}, hs;
    ck_assert_int_eq(kp_layout_contiguous(&h.layout, 3, (int64_t[]){2, 4, 8}), KP_OK);
    hs = h;
    hs.layout.offset = 1024;
    hs.layout.strides[0] = 8;
    hs.layout.strides[1] = 16;
    ck_assert_int_eq(kp_copy(stream, &h, &hs), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "copy_strided_rows_x16");
    hs.layout.strides[0] = 1;
    hs.layout.strides[1] = 2;
    hs.layout.strides[2] = 8;
    ck_assert_int_eq(kp_copy(stream, &h, &hs), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "copy_strided_x16");
    hs.layout.strides[0] = 32;
    hs.layout.strides[1] = 1;
    hs.layout.strides[2] = 4;
    ck_assert_int_eq(kp_copy(stream, &h, &hs), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "transpose2d_x16");
    kp_tensor empty = tensor(buf, KP_DTYPE_F32, 0, 5);
    int before = atomic_load(&fake.launches);
    ck_assert_int_eq(kp_fill(stream, &empty, &v), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
}
END_TEST

START_TEST(test_fill_and_copy_reject_bad_arguments)
{
    kp_tensor a = tensor(buf, KP_DTYPE_U32, 8, 8), b = a;
    b.layout.offset = 512;
    EXPECT(kp_fill(stream, &a, NULL), KP_ERR_INVALID_ARGUMENT, "value is NULL");
    kp_tensor c = b;
    c.dtype = KP_DTYPE_F32;
    EXPECT(kp_copy(stream, &a, &c), KP_ERR_INVALID_ARGUMENT, "use a cast");
    EXPECT(kp_copy(stream, &a, &a), KP_ERR_INVALID_ARGUMENT, "overlaps");
    c = b;
    c.layout.strides[1] = 0;  /* broadcast source is fine ... */
    ck_assert_int_eq(kp_copy(stream, &a, &c), KP_OK);
    c = a;
    c.layout.strides[1] = 0;  /* ... a broadcast destination is not */
    EXPECT(kp_copy(stream, &c, &b), KP_ERR_INVALID_ARGUMENT, "more than once");
    EXPECT(kp_copy2d(stream, KP_DTYPE_U32, buf, 0, 4, buf, 512, 8, 8, 8), KP_ERR_INVALID_ARGUMENT,
           "must be >= cols");
    EXPECT(kp_copy2d(stream, KP_DTYPE_U32, buf, 0, 8, small, 0, 8, 8, 8), KP_ERR_BUFFER_TOO_SMALL, "src");
    EXPECT(kp_copy2d(stream, KP_DTYPE_U32, buf, 0, 8, foreign, 0, 8, 8, 8), KP_ERR_DEVICE_MISMATCH, "src");
    EXPECT(kp_memcpy_h2d(stream, small, 8, "0123456789", 10), KP_ERR_BUFFER_TOO_SMALL, "exceeds");
    EXPECT(kp_memset(stream, foreign, 0, 1, 1), KP_ERR_DEVICE_MISMATCH, "belongs");
}
END_TEST

START_TEST(test_memory_roundtrip)
{
    const char msg[] = "kernelpack";
    char back[sizeof(msg)] = {0};
    ck_assert_int_eq(kp_memcpy_h2d(stream, small, 0, msg, sizeof(msg)), KP_OK);
    ck_assert_int_eq(kp_memcpy_d2d(stream, buf, 100, small, 0, sizeof(msg)), KP_OK);
    ck_assert_int_eq(kp_memcpy_d2h(stream, back, buf, 100, sizeof(msg)), KP_OK);
    ck_assert_str_eq(back, msg);
    ck_assert_uint_eq(kp_buffer_size(buf), 4096);
    ck_assert_ptr_null(kp_buffer_device_ptr(NULL));
    kp_buffer *w = NULL;
    EXPECT(kp_buffer_wrap(dev, NULL, 8, &w), KP_ERR_INVALID_ARGUMENT, "device_ptr is NULL");
    ck_assert_int_eq(kp_buffer_wrap(dev, kp_buffer_device_ptr(buf), 64, &w), KP_OK);
    kp_buffer_destroy(&w);  /* does not free buf's memory */
    kp_buffer_destroy(&w);  /* NULL is a no-op */
    ck_assert_int_eq(kp_memset(stream, buf, 0, 0x5a, 4096), KP_OK);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("validation");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, fake_env_teardown);
    tcase_add_test(tc, test_affine_rejects_bad_arguments);
    tcase_add_test(tc, test_valid_calls_launch_the_right_kernel);
    tcase_add_test(tc, test_fill_and_copy_reject_bad_arguments);
    tcase_add_test(tc, test_memory_roundtrip);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

/* kp_binary and kp_where: bad arguments get a clear status and launch
 * nothing; good ones launch the contiguous or strided kernel they should. */
#include "fake_env.h"

static void setup(void)
{
    fake_env_setup(8192);
}

/* A contiguous rows x cols tensor of buf starting at element `offset`. */
static kp_tensor tensor(kp_dtype dtype, int64_t rows, int64_t cols, int64_t offset)
{
    kp_tensor t = {buf, dtype, {0}};
    int64_t shape[2] = {rows, cols};
    ck_assert_int_eq(kp_layout_contiguous(&t.layout, 2, shape), KP_OK);
    t.layout.offset = offset;
    return t;
}

#define EXPECT_KERNEL(call, name)                           \
    do {                                                    \
        int before_ = atomic_load(&fake.launches);          \
        ck_assert_int_eq((call), KP_OK);                    \
        ck_assert_int_eq(atomic_load(&fake.launches), before_ + 1); \
        ck_assert_str_eq(fake.last_kernel, (name));         \
    } while (0)

START_TEST(test_op_names)
{
    static const char *const names[KP_BINARY_OP_COUNT] = {
        "add", "sub", "mul", "div", "minimum", "maximum", "eq", "ne", "lt", "le", "gt", "ge"};
    for (int op = 0; op < KP_BINARY_OP_COUNT; op++) {
        ck_assert_ptr_nonnull(kp_binary_op_name((kp_binary_op)op));
        ck_assert_str_eq(kp_binary_op_name((kp_binary_op)op), names[op]);
    }
    ck_assert_ptr_null(kp_binary_op_name(KP_BINARY_OP_COUNT));
    ck_assert_ptr_null(kp_binary_op_name((kp_binary_op)-1));
}
END_TEST

/* dst = elements 0..127, lhs = 256..383, rhs = 512..639 (f32: disjoint bytes). */
START_TEST(test_binary_rejects_bad_arguments)
{
    kp_tensor d = tensor(KP_DTYPE_F32, 8, 16, 0), a = tensor(KP_DTYPE_F32, 8, 16, 256),
              b = tensor(KP_DTYPE_F32, 8, 16, 512);
    EXPECT(kp_binary(stream, KP_BINARY_OP_COUNT, &d, &a, &b), KP_ERR_INVALID_ARGUMENT,
           "op 12 is not a kp_binary_op");
    EXPECT(kp_binary(stream, (kp_binary_op)-3, &d, &a, &b), KP_ERR_INVALID_ARGUMENT, "op -3");
    EXPECT(kp_binary(NULL, KP_BINARY_ADD, &d, &a, &b), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_binary(stream, KP_BINARY_ADD, NULL, &a, &b), KP_ERR_INVALID_ARGUMENT, "dst is NULL");
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &d, NULL, &b), KP_ERR_INVALID_ARGUMENT, "lhs is NULL");
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &d, &a, NULL), KP_ERR_INVALID_ARGUMENT, "rhs is NULL");

    kp_tensor bad = b;
    bad.dtype = (kp_dtype)42;
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &d, &a, &bad), KP_ERR_INVALID_ARGUMENT,
           "rhs has invalid dtype");
    bad = b;
    bad.buffer = small;
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &d, &a, &bad), KP_ERR_BUFFER_TOO_SMALL, "rhs reaches");
    bad = a;
    bad.buffer = foreign;
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &d, &bad, &b), KP_ERR_DEVICE_MISMATCH, "lhs buffer belongs");

    /* dtypes */
    bad = b;
    bad.dtype = KP_DTYPE_F16;
    EXPECT(kp_binary(stream, KP_BINARY_MUL, &d, &a, &bad), KP_ERR_INVALID_ARGUMENT,
           "mul: lhs is f32 but rhs is f16");
    bad = d;
    bad.dtype = KP_DTYPE_F64;
    EXPECT(kp_binary(stream, KP_BINARY_SUB, &bad, &a, &b), KP_ERR_INVALID_ARGUMENT,
           "sub writes the inputs' dtype f32 but dst is f64");
    bad = d;
    bad.dtype = KP_DTYPE_U8;  /* an arithmetic op does not write u8 for f32 inputs */
    EXPECT(kp_binary(stream, KP_BINARY_MAXIMUM, &bad, &a, &b), KP_ERR_INVALID_ARGUMENT,
           "maximum writes the inputs' dtype f32 but dst is u8");
    EXPECT(kp_binary(stream, KP_BINARY_LT, &d, &a, &b), KP_ERR_INVALID_ARGUMENT,
           "lt writes u8 (1 or 0) but dst is f32");
    kp_tensor d_u32 = tensor(KP_DTYPE_U32, 8, 16, 0);
    EXPECT(kp_binary(stream, KP_BINARY_GE, &d_u32, &a, &b), KP_ERR_INVALID_ARGUMENT,
           "ge writes u8 (1 or 0) but dst is u32");

    /* shapes: same rank and sizes as dst, broadcasting only through strides */
    bad = a;
    bad.layout.shape[1] = 15;
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &d, &bad, &b), KP_ERR_INVALID_ARGUMENT,
           "lhs has shape [8, 15] but dst has [8, 16]");
    bad = tensor(KP_DTYPE_F32, 1, 16, 512);  /* numpy-style broadcast shape: refused */
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &d, &a, &bad), KP_ERR_INVALID_ARGUMENT,
           "rhs has shape [1, 16] but dst has [8, 16]");
    bad = b;
    bad.layout.rank = 1;
    bad.layout.shape[0] = 128;
    bad.layout.strides[0] = 1;
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &d, &a, &bad), KP_ERR_INVALID_ARGUMENT,
           "rhs has shape [128] but dst has [8, 16]");

    /* overlap */
    bad = d;
    bad.layout.strides[0] = 0;
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &bad, &a, &b), KP_ERR_INVALID_ARGUMENT, "more than once");
    bad = a;
    bad.layout.offset = 64;  /* lhs overlaps dst but is not the same view */
    EXPECT(kp_binary(stream, KP_BINARY_ADD, &d, &bad, &b), KP_ERR_INVALID_ARGUMENT, "dst overlaps lhs");
    bad = d;
    bad.layout.strides[0] = 1;  /* dst's elements transposed: same bytes, other order */
    bad.layout.strides[1] = 8;
    EXPECT(kp_binary(stream, KP_BINARY_DIV, &d, &a, &bad), KP_ERR_INVALID_ARGUMENT, "dst overlaps rhs");
    /* A comparison cannot run in place on f32 inputs: dst (u8) is another dtype. */
    kp_tensor cmp_dst = tensor(KP_DTYPE_U8, 8, 16, 1024);  /* bytes 1024..1151 = lhs's first elements */
    kp_tensor lhs_f32 = tensor(KP_DTYPE_F32, 8, 16, 256);
    EXPECT(kp_binary(stream, KP_BINARY_EQ, &cmp_dst, &lhs_f32, &b), KP_ERR_INVALID_ARGUMENT,
           "dst overlaps lhs");
    fake_env_assert_untouched();
}
END_TEST

START_TEST(test_binary_launches_the_right_kernel)
{
    kp_tensor d = tensor(KP_DTYPE_BF16, 8, 16, 0), a = tensor(KP_DTYPE_BF16, 8, 16, 256),
              b = tensor(KP_DTYPE_BF16, 8, 16, 512);
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_ADD, &d, &a, &b), "add_bf16");
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_MINIMUM, &d, &a, &b), "minimum_bf16");
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_SUB, &d, &d, &b), "sub_bf16");  /* in place on lhs */
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_DIV, &d, &a, &d), "div_bf16");  /* in place on rhs */
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_MUL, &d, &d, &d), "mul_bf16");  /* both */
    kp_tensor t = a;  /* transposed lhs */
    t.layout.shape[0] = 16;
    t.layout.shape[1] = 16;
    t.layout.strides[0] = 1;
    t.layout.strides[1] = 16;
    kp_tensor d16 = tensor(KP_DTYPE_BF16, 16, 16, 0), b16 = tensor(KP_DTYPE_BF16, 16, 16, 1024);
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_MUL, &d16, &t, &b16), "mul_strided_bf16");
    kp_tensor row = b;  /* one row of rhs broadcast over dst's rows */
    row.layout.strides[0] = 0;
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_MAXIMUM, &d, &a, &row), "maximum_strided_bf16");
    kp_tensor col = a;  /* one column of lhs broadcast over dst's columns */
    col.layout.strides[0] = 1;
    col.layout.strides[1] = 0;
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_ADD, &d, &col, &b), "add_strided_bf16");
    kp_tensor gaps = d;  /* every other element of dst */
    gaps.layout.strides[1] = 2;
    gaps.layout.strides[0] = 32;
    gaps.layout.offset = 2048;
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_SUB, &gaps, &a, &b), "sub_strided_bf16");

    /* Comparisons name the input dtype and write u8; u8 inputs may run in place. */
    kp_tensor m = tensor(KP_DTYPE_U8, 8, 16, 6000);
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_LT, &m, &a, &b), "lt_bf16");
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_NE, &m, &a, &row), "ne_strided_bf16");
    kp_tensor u = tensor(KP_DTYPE_U8, 8, 16, 7000);
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_EQ, &m, &m, &u), "eq_u8");
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_GE, &m, &u, &m), "ge_u8");
    kp_tensor i = tensor(KP_DTYPE_I64, 2, 8, 256), j = tensor(KP_DTYPE_I64, 2, 8, 512);
    EXPECT(kp_binary(stream, KP_BINARY_GT, &m, &i, &j), KP_ERR_INVALID_ARGUMENT,
           "lhs has shape [2, 8] but dst has [8, 16]");
    kp_tensor m2 = tensor(KP_DTYPE_U8, 2, 8, 6000);
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_GT, &m2, &i, &j), "gt_i64");

    /* Rank 0 is contiguous; empty tensors launch nothing (and are not checked for overlap). */
    kp_tensor s0 = {buf, KP_DTYPE_U32, {0, {0}, {0}, 3}}, s1 = s0, s2 = s0;
    s1.layout.offset = 10;
    s2.layout.offset = 20;
    EXPECT_KERNEL(kp_binary(stream, KP_BINARY_DIV, &s0, &s1, &s2), "div_u32");
    kp_tensor e = tensor(KP_DTYPE_F64, 0, 5, 0);
    int before = atomic_load(&fake.launches);
    ck_assert_int_eq(kp_binary(stream, KP_BINARY_ADD, &e, &e, &e), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
}
END_TEST

/* dst = f32 elements 0..127, cond at byte 2048.., on_true 256.., on_false 512.. */
START_TEST(test_where_rejects_bad_arguments)
{
    kp_tensor d = tensor(KP_DTYPE_F32, 8, 16, 0), c = tensor(KP_DTYPE_U8, 8, 16, 2048),
              t = tensor(KP_DTYPE_F32, 8, 16, 256), f = tensor(KP_DTYPE_F32, 8, 16, 640);
    EXPECT(kp_where(NULL, &d, &c, &t, &f), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_where(stream, NULL, &c, &t, &f), KP_ERR_INVALID_ARGUMENT, "dst is NULL");
    EXPECT(kp_where(stream, &d, NULL, &t, &f), KP_ERR_INVALID_ARGUMENT, "cond is NULL");
    EXPECT(kp_where(stream, &d, &c, NULL, &f), KP_ERR_INVALID_ARGUMENT, "on_true is NULL");
    EXPECT(kp_where(stream, &d, &c, &t, NULL), KP_ERR_INVALID_ARGUMENT, "on_false is NULL");
    kp_tensor bad = c;
    bad.buffer = foreign;
    EXPECT(kp_where(stream, &d, &bad, &t, &f), KP_ERR_DEVICE_MISMATCH, "cond buffer belongs");
    bad = f;
    bad.buffer = small;
    EXPECT(kp_where(stream, &d, &c, &t, &bad), KP_ERR_BUFFER_TOO_SMALL, "on_false reaches");

    static const kp_dtype bad_conds[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16};
    for (size_t k = 0; k < sizeof(bad_conds) / sizeof(bad_conds[0]); k++) {
        bad = c;
        bad.dtype = bad_conds[k];
        bad.layout.offset = 0;  /* inside buf for every dtype; the dtype is refused first */
        char want[64];
        snprintf(want, sizeof(want), "cond is %s but must be u8, u32 or i64",
                 kp_dtype_name(bad_conds[k]));
        EXPECT(kp_where(stream, &d, &bad, &t, &f), KP_ERR_INVALID_ARGUMENT, want);
    }
    bad = f;
    bad.dtype = KP_DTYPE_I64;
    EXPECT(kp_where(stream, &d, &c, &t, &bad), KP_ERR_INVALID_ARGUMENT,
           "on_true is f32 but on_false is i64");
    bad = d;
    bad.dtype = KP_DTYPE_U32;
    EXPECT(kp_where(stream, &bad, &c, &t, &f), KP_ERR_INVALID_ARGUMENT,
           "dst is u32 but on_true and on_false are f32");

    bad = c;
    bad.layout.shape[0] = 4;
    EXPECT(kp_where(stream, &d, &bad, &t, &f), KP_ERR_INVALID_ARGUMENT,
           "cond has shape [4, 16] but dst has [8, 16]");
    bad = t;
    bad.layout.shape[1] = 17;
    EXPECT(kp_where(stream, &d, &c, &bad, &f), KP_ERR_INVALID_ARGUMENT, "on_true has shape [8, 17]");
    bad = f;
    bad.layout.rank = 3;
    bad.layout.shape[2] = 1;
    EXPECT(kp_where(stream, &d, &c, &t, &bad), KP_ERR_INVALID_ARGUMENT, "on_false has shape [8, 16, 1]");

    bad = d;
    bad.layout.strides[1] = 0;
    EXPECT(kp_where(stream, &bad, &c, &t, &f), KP_ERR_INVALID_ARGUMENT, "more than once");
    bad = t;
    bad.layout.offset = 100;  /* dst covers 0..127 */
    EXPECT(kp_where(stream, &d, &c, &bad, &f), KP_ERR_INVALID_ARGUMENT, "dst overlaps on_true");
    bad = f;
    bad.layout.offset = 1;
    EXPECT(kp_where(stream, &d, &c, &t, &bad), KP_ERR_INVALID_ARGUMENT, "dst overlaps on_false");
    bad = c;  /* u8 cond in the bytes of dst: other dtype, so never in place */
    bad.layout.offset = 8;
    EXPECT(kp_where(stream, &d, &bad, &t, &f), KP_ERR_INVALID_ARGUMENT, "dst overlaps cond");
    fake_env_assert_untouched();
}
END_TEST

START_TEST(test_where_launches_the_right_kernel)
{
    kp_tensor d = tensor(KP_DTYPE_F16, 8, 16, 0), t = tensor(KP_DTYPE_F16, 8, 16, 256),
              f = tensor(KP_DTYPE_F16, 8, 16, 512);
    kp_tensor c8 = tensor(KP_DTYPE_U8, 8, 16, 4096), c32 = tensor(KP_DTYPE_U32, 8, 16, 1200),
              c64 = tensor(KP_DTYPE_I64, 8, 16, 768);
    EXPECT_KERNEL(kp_where(stream, &d, &c8, &t, &f), "where_u8_f16");
    EXPECT_KERNEL(kp_where(stream, &d, &c32, &t, &f), "where_u32_f16");
    EXPECT_KERNEL(kp_where(stream, &d, &c64, &t, &f), "where_i64_f16");
    EXPECT_KERNEL(kp_where(stream, &t, &c8, &t, &f), "where_u8_f16");  /* in place on on_true */
    EXPECT_KERNEL(kp_where(stream, &f, &c8, &t, &f), "where_u8_f16");  /* in place on on_false */
    kp_tensor scalar = f;  /* one on_false value broadcast everywhere */
    scalar.layout.strides[0] = 0;
    scalar.layout.strides[1] = 0;
    EXPECT_KERNEL(kp_where(stream, &d, &c64, &t, &scalar), "where_strided_i64_f16");
    kp_tensor crow = c32;
    crow.layout.strides[0] = 0;
    EXPECT_KERNEL(kp_where(stream, &d, &crow, &t, &f), "where_strided_u32_f16");

    /* u8 values with a u8 cond: dst may be the cond itself */
    kp_tensor u = tensor(KP_DTYPE_U8, 8, 16, 5000), v = tensor(KP_DTYPE_U8, 8, 16, 6000);
    EXPECT_KERNEL(kp_where(stream, &c8, &c8, &u, &v), "where_u8_u8");
    kp_tensor i64 = tensor(KP_DTYPE_I64, 4, 4, 800), i64b = tensor(KP_DTYPE_I64, 4, 4, 900);
    kp_tensor c44 = tensor(KP_DTYPE_U8, 4, 4, 4096);
    c44.layout.strides[0] = 1;  /* transposed cond */
    c44.layout.strides[1] = 4;
    EXPECT_KERNEL(kp_where(stream, &i64, &c44, &i64, &i64b), "where_strided_u8_i64");

    kp_tensor s0 = {buf, KP_DTYPE_F64, {0, {0}, {0}, 1}}, s1 = s0, s2 = s0;
    kp_tensor sc = {buf, KP_DTYPE_U32, {0, {0}, {0}, 40}};
    s1.layout.offset = 2;
    s2.layout.offset = 3;
    EXPECT_KERNEL(kp_where(stream, &s0, &sc, &s1, &s2), "where_u32_f64");
    kp_tensor e = tensor(KP_DTYPE_F32, 3, 0, 0), ec = tensor(KP_DTYPE_U8, 3, 0, 0);
    int before = atomic_load(&fake.launches);
    ck_assert_int_eq(kp_where(stream, &e, &ec, &e, &e), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("binary_validation");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, fake_env_teardown);
    tcase_add_test(tc, test_op_names);
    tcase_add_test(tc, test_binary_rejects_bad_arguments);
    tcase_add_test(tc, test_binary_launches_the_right_kernel);
    tcase_add_test(tc, test_where_rejects_bad_arguments);
    tcase_add_test(tc, test_where_launches_the_right_kernel);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

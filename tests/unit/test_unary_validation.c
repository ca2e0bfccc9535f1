/* kp_unary: bad arguments get a clear status and launch nothing; valid calls
 * launch the kernel the op, dtype and layouts call for. */
#include "fake_env.h"

static void setup(void) { fake_env_setup(4096); }

static kp_tensor tensor(kp_buffer *b, kp_dtype dtype, int64_t rows, int64_t cols, int64_t offset)
{
    kp_tensor t = {b, dtype, {0}};
    int64_t shape[2] = {rows, cols};
    ck_assert_int_eq(kp_layout_contiguous(&t.layout, 2, shape), KP_OK);
    t.layout.offset = offset;
    return t;
}

/* The ops each integer dtype has, as ops.h states them; floats have all. */
static bool documented_support(kp_unary_op op, kp_dtype dt)
{
    if (dt == KP_DTYPE_F32 || dt == KP_DTYPE_F64 || dt == KP_DTYPE_F16 || dt == KP_DTYPE_BF16)
        return true;
    switch (op) {
    case KP_UNARY_COPY: case KP_UNARY_ABS: case KP_UNARY_SIGN: case KP_UNARY_SQR: case KP_UNARY_RELU:
        return true;
    case KP_UNARY_NEG:
        return dt == KP_DTYPE_I64;
    default:
        return false;
    }
}

START_TEST(test_op_names)
{
    ck_assert_str_eq(kp_unary_op_name(KP_UNARY_COPY), "copy");
    ck_assert_str_eq(kp_unary_op_name(KP_UNARY_EXP), "exp");
    ck_assert_str_eq(kp_unary_op_name(KP_UNARY_GELU_ERF), "gelu_erf");
    ck_assert_str_eq(kp_unary_op_name(KP_UNARY_POWF), "powf");
    ck_assert_ptr_null(kp_unary_op_name(KP_UNARY_OP_COUNT));
    ck_assert_ptr_null(kp_unary_op_name((kp_unary_op)-1));
    for (int a = 0; a < KP_UNARY_OP_COUNT; a++) {
        const char *name = kp_unary_op_name((kp_unary_op)a);
        ck_assert_msg(name && *name, "op %d has no name", a);
        for (int b = 0; b < a; b++)
            ck_assert_msg(strcmp(name, kp_unary_op_name((kp_unary_op)b)) != 0,
                          "ops %d and %d are both named %s", b, a, name);
    }
}
END_TEST

START_TEST(test_rejects_bad_arguments)
{
    kp_tensor a = tensor(buf, KP_DTYPE_F32, 8, 16, 0), b = tensor(buf, KP_DTYPE_F32, 8, 16, 256);
    EXPECT(kp_unary(NULL, KP_UNARY_EXP, &a, &b, 0), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_unary(stream, (kp_unary_op)KP_UNARY_OP_COUNT, &a, &b, 0), KP_ERR_INVALID_ARGUMENT,
           "op 24 is not a kp_unary_op");
    EXPECT(kp_unary(stream, (kp_unary_op)-1, &a, &b, 0), KP_ERR_INVALID_ARGUMENT,
           "op -1 is not a kp_unary_op");
    EXPECT(kp_unary(stream, KP_UNARY_EXP, NULL, &b, 0), KP_ERR_INVALID_ARGUMENT, "dst is NULL");
    EXPECT(kp_unary(stream, KP_UNARY_EXP, &a, NULL, 0), KP_ERR_INVALID_ARGUMENT, "src is NULL");
    kp_tensor bad = b;
    bad.layout.rank = KP_MAX_RANK + 1;
    EXPECT(kp_unary(stream, KP_UNARY_EXP, &a, &bad, 0), KP_ERR_INVALID_ARGUMENT, "src has rank 9");
    bad = tensor(small, KP_DTYPE_F32, 8, 16, 0);
    EXPECT(kp_unary(stream, KP_UNARY_EXP, &bad, &b, 0), KP_ERR_BUFFER_TOO_SMALL, "holds 16 bytes");
    bad = b;
    bad.dtype = KP_DTYPE_BF16;
    EXPECT(kp_unary(stream, KP_UNARY_EXP, &a, &bad, 0), KP_ERR_INVALID_ARGUMENT,
           "dst is f32 but src is bf16");
    bad = b;
    bad.layout.shape[1] = 15;
    EXPECT(kp_unary(stream, KP_UNARY_EXP, &a, &bad, 0), KP_ERR_INVALID_ARGUMENT, "src has shape [8, 15] but dst has [8, 16]");
    bad = a;
    bad.layout.strides[0] = 0;  /* broadcast output */
    EXPECT(kp_unary(stream, KP_UNARY_EXP, &bad, &b, 0), KP_ERR_INVALID_ARGUMENT, "more than once");
    bad = b;
    bad.layout.offset = 8;  /* overlaps a without being the same view */
    EXPECT(kp_unary(stream, KP_UNARY_EXP, &a, &bad, 0), KP_ERR_INVALID_ARGUMENT, "overlaps");
    bad = a;
    bad.layout.strides[0] = 1;  /* same buffer and base as a, but transposed: not in place */
    bad.layout.strides[1] = 8;
    bad.layout.shape[0] = 16;
    bad.layout.shape[1] = 8;
    kp_tensor a_t = tensor(buf, KP_DTYPE_F32, 16, 8, 0);
    EXPECT(kp_unary(stream, KP_UNARY_EXP, &a_t, &bad, 0), KP_ERR_INVALID_ARGUMENT, "overlaps");
    /* elu and powf take param in f32 for f32/f16/bf16: it must fit. */
    EXPECT(kp_unary(stream, KP_UNARY_ELU, &a, &b, 1e39), KP_ERR_INVALID_ARGUMENT,
           "param = 1e+39 is outside the range of f32");
    kp_tensor h = tensor(buf, KP_DTYPE_F16, 8, 16, 0), hb = tensor(buf, KP_DTYPE_F16, 8, 16, 512);
    EXPECT(kp_unary(stream, KP_UNARY_POWF, &h, &hb, -1e300), KP_ERR_INVALID_ARGUMENT,
           "in which f16 computes powf");
    fake_env_assert_untouched();
}
END_TEST

START_TEST(test_unsupported_pairs)
{
    kp_tensor u8 = tensor(buf, KP_DTYPE_U8, 4, 4, 0), u8b = tensor(buf, KP_DTYPE_U8, 4, 4, 64);
    EXPECT(kp_unary(stream, KP_UNARY_EXP, &u8, &u8b, 0), KP_ERR_UNSUPPORTED,
           "op exp does not support u8 (only f32, f64, f16, bf16)");
    kp_tensor u32 = tensor(buf, KP_DTYPE_U32, 4, 4, 0), u32b = tensor(buf, KP_DTYPE_U32, 4, 4, 64);
    EXPECT(kp_unary(stream, KP_UNARY_NEG, &u32, &u32b, 0), KP_ERR_UNSUPPORTED,
           "op neg does not support u32 (only f32, f64, f16, bf16, i64)");
    kp_tensor i64 = tensor(buf, KP_DTYPE_I64, 4, 4, 0), i64b = tensor(buf, KP_DTYPE_I64, 4, 4, 64);
    EXPECT(kp_unary(stream, KP_UNARY_ELU, &i64, &i64b, 1.0), KP_ERR_UNSUPPORTED,
           "op elu does not support i64");
    /* Unsupported even when there is nothing to do. */
    kp_tensor empty = tensor(buf, KP_DTYPE_I64, 0, 4, 0);
    EXPECT(kp_unary(stream, KP_UNARY_SQRT, &empty, &empty, 0), KP_ERR_UNSUPPORTED,
           "op sqrt does not support i64");
    fake_env_assert_untouched();
}
END_TEST

/* Every (op, dtype): supported exactly as documented, launching <op>_<dtype>. */
START_TEST(test_support_matrix_and_kernel_names)
{
    kp_unary_op op = (kp_unary_op)(_i / KP_DTYPE_COUNT);
    kp_dtype dt = (kp_dtype)(_i % KP_DTYPE_COUNT);
    kp_tensor d = tensor(buf, dt, 4, 8, 0), s = tensor(buf, dt, 4, 8, 64);
    char want[64];
    kp_status st = kp_unary(stream, op, &d, &s, 0.5);
    if (!documented_support(op, dt)) {
        ck_assert_msg(st == KP_ERR_UNSUPPORTED, "%s %s: got %s, want unsupported",
                      kp_unary_op_name(op), kp_dtype_name(dt), kp_status_string(st));
        fake_env_assert_untouched();
        return;
    }
    ck_assert_msg(st == KP_OK, "%s %s: %s", kp_unary_op_name(op), kp_dtype_name(dt),
                  kp_last_error_message());
    snprintf(want, sizeof(want), "%s_%s", kp_unary_op_name(op), kp_dtype_name(dt));
    ck_assert_str_eq(fake.last_kernel, want);
    s.layout.strides[0] = 1;  /* a transposed view of a 8x4 block */
    s.layout.strides[1] = 4;
    ck_assert_int_eq(kp_unary(stream, op, &d, &s, 0.5), KP_OK);
    snprintf(want, sizeof(want), "%s_strided_%s", kp_unary_op_name(op), kp_dtype_name(dt));
    ck_assert_str_eq(fake.last_kernel, want);
    ck_assert_int_eq(atomic_load(&fake.launches), 2);
}
END_TEST

START_TEST(test_layout_choices)
{
    kp_tensor a = tensor(buf, KP_DTYPE_BF16, 16, 16, 0), b = tensor(buf, KP_DTYPE_BF16, 16, 16, 512);
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_GELU, &a, &b, 0), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "gelu_bf16");
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_SILU, &a, &a, 0), KP_OK);  /* in place */
    ck_assert_str_eq(fake.last_kernel, "silu_bf16");
    kp_tensor t = a;  /* in place on a transposed view: the same view, so allowed */
    t.layout.strides[0] = 1;
    t.layout.strides[1] = 16;
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_TANH, &t, &t, 0), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "tanh_strided_bf16");
    kp_tensor bc = b;  /* broadcast source rows */
    bc.layout.strides[0] = 0;
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_ELU, &a, &bc, 0.5), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "elu_strided_bf16");
    kp_tensor off = tensor(buf, KP_DTYPE_I64, 3, 5, 7), off2 = tensor(buf, KP_DTYPE_I64, 3, 5, 100);
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_NEG, &off, &off2, 0), KP_OK);  /* offsets only */
    ck_assert_str_eq(fake.last_kernel, "neg_i64");
    kp_tensor scalar = {buf, KP_DTYPE_U8, {0}}, scalar2 = scalar;
    scalar2.layout.offset = 9;
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_SQR, &scalar, &scalar2, 0), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "sqr_u8");
    int before = atomic_load(&fake.launches);
    kp_tensor empty = tensor(buf, KP_DTYPE_F32, 0, 5, 0);
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_EXP, &empty, &empty, 0), KP_OK);
    /* An empty tensor still gets its arguments checked. */
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_POWF, &empty, &empty, 1e39), KP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
    /* param only matters to elu and powf; f64 takes any double. */
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_EXP, &a, &b, 1e300), KP_OK);
    kp_tensor d = tensor(buf, KP_DTYPE_F64, 4, 4, 0), d2 = tensor(buf, KP_DTYPE_F64, 4, 4, 16);
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_POWF, &d, &d2, 1e300), KP_OK);
    ck_assert_int_eq(kp_unary(stream, KP_UNARY_ELU, &a, &b, INFINITY), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "elu_bf16");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("unary_validation");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, fake_env_teardown);
    tcase_add_test(tc, test_op_names);
    tcase_add_test(tc, test_rejects_bad_arguments);
    tcase_add_test(tc, test_unsupported_pairs);
    tcase_add_loop_test(tc, test_support_matrix_and_kernel_names, 0, KP_UNARY_OP_COUNT * KP_DTYPE_COUNT);
    tcase_add_test(tc, test_layout_choices);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

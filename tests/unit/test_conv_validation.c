/* kp_conv / kp_conv_transpose with the fake backend: every bad argument is
 * refused with a message before anything launches; N = 0 launches
 * nothing; good calls launch one kernel with the expected grid and
 * GEMM description. */
#include "unit_util.h"
#include "kp_conv_abi.h"

static kp_device *dev;
static kp_stream *stream;
static kp_buffer *buf;
static struct kp_conv_launch seen_launch;
#define seen (seen_launch.conv[0])

static void record_args(void **args)
{
    seen_launch = *(const struct kp_conv_launch *)args[0];
}

static void setup(void)
{
    char arch[64];
    built_arch(arch, sizeof(arch));
    fake_install(arch);
    fake.launch_hook = record_args;
    ck_assert_int_eq(kp_device_open(0, &dev), KP_OK);
    ck_assert_int_eq(kp_stream_create(dev, &stream), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 1 << 22, &buf), KP_OK);
}

static void teardown(void)
{
    kp_buffer_destroy(&buf);
    kp_stream_destroy(&stream);
    kp_device_close(&dev);
    kp_backend_override(NULL);
}

/* A valid 2-d problem: src (2, 4, 8, 8), weight (6, 4, 3, 3), pad 1 -> dst (2, 6, 8, 8). */
#define SRC_OFF 0
#define W_OFF 100000
#define B_OFF 110000
#define DST_OFF 200000
static const kp_conv_params p3 = {{1, 1}, {1, 1}, {1, 1}, {0, 0}, 1};

START_TEST(test_rejects_bad_arguments)
{
    kp_tensor s = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 4, 8, 8}, SRC_OFF);
    kp_tensor w = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){6, 4, 3, 3}, W_OFF);
    kp_tensor b = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){6}, B_OFF);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 6, 8, 8}, DST_OFF);
    kp_conv_params p = p3;
    EXPECT(kp_conv(NULL, &d, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_conv(stream, NULL, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "dst is NULL");
    EXPECT(kp_conv(stream, &d, NULL, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "src is NULL");
    EXPECT(kp_conv(stream, &d, &s, NULL, &b, &p), KP_ERR_INVALID_ARGUMENT, "weight is NULL");
    EXPECT(kp_conv(stream, &d, &s, &w, &b, NULL), KP_ERR_INVALID_ARGUMENT, "params is NULL");

    /* ranks */
    kp_tensor bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 8}, SRC_OFF);
    EXPECT(kp_conv(stream, &d, &bad, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "src has rank 2");
    bad = unit_tensor(buf, KP_DTYPE_F32, 3, (int64_t[]){6, 4, 3}, W_OFF);
    EXPECT(kp_conv(stream, &d, &s, &bad, &b, &p), KP_ERR_INVALID_ARGUMENT, "weight has 3 and dst 4");
    bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){1, 6}, B_OFF);
    EXPECT(kp_conv(stream, &d, &s, &w, &bad, &p), KP_ERR_INVALID_ARGUMENT, "bias has rank 2");

    /* dtypes */
    kp_tensor su = s, wu = w, bu = b, du = d;
    su.dtype = wu.dtype = bu.dtype = du.dtype = KP_DTYPE_I64;
    EXPECT(kp_conv(stream, &du, &su, &wu, &bu, &p), KP_ERR_UNSUPPORTED, "src is i64");
    bad = w;
    bad.dtype = KP_DTYPE_F16;
    EXPECT(kp_conv(stream, &d, &s, &bad, &b, &p), KP_ERR_INVALID_ARGUMENT, "weight is f16 but src is f32");
    bad = b;
    bad.dtype = KP_DTYPE_F64;
    EXPECT(kp_conv(stream, &d, &s, &w, &bad, &p), KP_ERR_INVALID_ARGUMENT, "bias is f64 but src is f32");
    bad = d;
    bad.dtype = KP_DTYPE_BF16;
    EXPECT(kp_conv(stream, &bad, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "dst is bf16 but src is f32");

    /* sizes */
    bad = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 4, 0, 8}, SRC_OFF);
    EXPECT(kp_conv(stream, &d, &bad, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "every size but N must be >= 1");
    bad = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){6, 4, 0, 3}, W_OFF);
    EXPECT(kp_conv(stream, &d, &s, &bad, &b, &p), KP_ERR_INVALID_ARGUMENT, "weight is [6, 4, 0, 3]");

    /* parameters */
    p = p3;
    p.stride[1] = 0;
    EXPECT(kp_conv(stream, &d, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "width stride 0");
    p = p3;
    p.dilation[0] = 0;
    EXPECT(kp_conv(stream, &d, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "dilation 0 must be >= 1");
    p = p3;
    p.padding[0] = -1;
    EXPECT(kp_conv(stream, &d, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "height padding -1 is negative");
    p = p3;
    p.output_padding[0] = 1;
    EXPECT(kp_conv(stream, &d, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "for kp_conv_transpose only");
    p = p3;
    p.groups = 0;
    EXPECT(kp_conv(stream, &d, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "groups is 0");
    p = p3;
    p.groups = 3;
    EXPECT(kp_conv(stream, &d, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT,
           "4 input channels are not divisible by groups 3");
    /* groups 4 divides C_in but not C_out 6 */
    p.groups = 4;
    bad = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){6, 1, 3, 3}, W_OFF);
    EXPECT(kp_conv(stream, &d, &s, &bad, &b, &p), KP_ERR_INVALID_ARGUMENT,
           "6 output channels are not divisible by groups 4");
    p = p3;
    bad = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){6, 2, 3, 3}, W_OFF);
    EXPECT(kp_conv(stream, &d, &s, &bad, &b, &p), KP_ERR_INVALID_ARGUMENT,
           "weight is [6, 2, 3, 3] but must be [6, 4, 3, 3]");
    bad = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){5}, B_OFF);
    EXPECT(kp_conv(stream, &d, &s, &w, &bad, &p), KP_ERR_INVALID_ARGUMENT,
           "bias has 5 elements but there are 6 output channels");

    /* output size below 1: a 3x3 kernel over 2x2 without padding */
    p = p3;
    p.padding[0] = p.padding[1] = 0;
    kp_tensor small = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 4, 2, 2}, SRC_OFF);
    EXPECT(kp_conv(stream, &d, &small, &w, &b, &p), KP_ERR_INVALID_ARGUMENT,
           "height output size would be 0");
    /* dst shape */
    p = p3;
    bad = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 6, 7, 8}, DST_OFF);
    EXPECT(kp_conv(stream, &bad, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT,
           "kp_conv: dst has shape [2, 6, 7, 8] but must be [2, 6, 8, 8]");

    /* overlaps */
    bad = d;
    bad.layout.strides[3] = 0;
    EXPECT(kp_conv(stream, &bad, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "more than once");
    bad = d;
    bad.layout.offset = SRC_OFF + 100;
    EXPECT(kp_conv(stream, &bad, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "dst overlaps src");
    bad.layout.offset = W_OFF - 10;
    EXPECT(kp_conv(stream, &bad, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "dst overlaps weight");
    bad.layout.offset = B_OFF - 10;
    EXPECT(kp_conv(stream, &bad, &s, &w, &b, &p), KP_ERR_INVALID_ARGUMENT, "dst overlaps bias");

    /* buffer too small */
    bad = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 6, 8, 8}, (1 << 20) - 10);
    EXPECT(kp_conv(stream, &bad, &s, &w, &b, &p), KP_ERR_BUFFER_TOO_SMALL, "dst reaches element");
    ck_assert_int_eq(atomic_load(&fake.launches), 0);
}
END_TEST

START_TEST(test_transpose_rejects)
{
    /* src (1, 4, 5, 5), weight (4, 3, 3, 3) groups 1 -> C_out 3; s 2 p 1: out 9 (+ output_padding) */
    kp_tensor s = unit_tensor(buf, KP_DTYPE_F16, 4, (int64_t[]){1, 4, 5, 5}, SRC_OFF);
    kp_tensor w = unit_tensor(buf, KP_DTYPE_F16, 4, (int64_t[]){4, 3, 3, 3}, W_OFF);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F16, 4, (int64_t[]){1, 3, 9, 9}, DST_OFF);
    kp_conv_params p = {{2, 2}, {1, 1}, {1, 1}, {0, 0}, 1};
    p.output_padding[1] = 2;
    EXPECT(kp_conv_transpose(stream, &d, &s, &w, NULL, &p), KP_ERR_INVALID_ARGUMENT,
           "width output_padding 2 must be >= 0 and below the stride or the dilation");
    p.output_padding[1] = -1;
    EXPECT(kp_conv_transpose(stream, &d, &s, &w, NULL, &p), KP_ERR_INVALID_ARGUMENT,
           "width output_padding -1");
    p.output_padding[1] = 1;
    EXPECT(kp_conv_transpose(stream, &d, &s, &w, NULL, &p), KP_ERR_INVALID_ARGUMENT,
           "kp_conv_transpose: dst has shape [1, 3, 9, 9] but must be [1, 3, 9, 10]");
    /* groups 2: weight (4, 3, ...) gives C_out 6 and must be (C_in, C_out/groups) */
    p.output_padding[1] = 0;
    p.groups = 2;
    EXPECT(kp_conv_transpose(stream, &d, &s, &w, NULL, &p), KP_ERR_INVALID_ARGUMENT,
           "dst has shape [1, 3, 9, 9] but must be [1, 6, 9, 9]");
    /* output size below 1: large padding */
    p.groups = 1;
    p.padding[0] = 7;
    EXPECT(kp_conv_transpose(stream, &d, &s, &w, NULL, &p), KP_ERR_INVALID_ARGUMENT,
           "height output size would be -3");
    ck_assert_int_eq(atomic_load(&fake.launches), 0);
}
END_TEST

START_TEST(test_launches)
{
    kp_tensor s = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 4, 8, 8}, SRC_OFF);
    kp_tensor w = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){6, 4, 3, 3}, W_OFF);
    kp_tensor b = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){6}, B_OFF);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 6, 8, 8}, DST_OFF);
    ck_assert_int_eq(kp_conv(stream, &d, &s, &w, &b, &p3), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 1);
    ck_assert_str_eq(fake.last_kernel, "conv_f32");
    ck_assert_uint_eq(fake.last_dims.grid[0], 1);   /* 128 pixels: one tile */
    ck_assert_uint_eq(fake.last_dims.grid[1], 1);
    ck_assert_uint_eq(fake.last_dims.block[0], KP_CONV_BLOCK);
    ck_assert_int_eq(seen.pixels, 128);
    ck_assert_int_eq(seen.k_total, 36);
    ck_assert_int_eq(seen.has_bias, 1);
    ck_assert_int_eq(seen.w_stride_m, 36);

    /* N = 0: valid, nothing launched */
    kp_tensor s0 = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){0, 4, 8, 8}, SRC_OFF);
    kp_tensor d0 = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){0, 6, 8, 8}, DST_OFF);
    ck_assert_int_eq(kp_conv(stream, &d0, &s0, &w, NULL, &p3), KP_OK);
    kp_tensor w0 = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){4, 6, 3, 3}, W_OFF);
    ck_assert_int_eq(kp_conv_transpose(stream, &d0, &s0, &w0, NULL, &p3), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 1);

    /* 1-d, groups 2, f64: (3, 4, 100) * (6, 2, 5) stride 2 -> (3, 6, 48) */
    kp_conv_params p = {{2, 99}, {0, 99}, {1, 99}, {0, 99}, 2};
    kp_tensor s1 = unit_tensor(buf, KP_DTYPE_F64, 3, (int64_t[]){3, 4, 100}, SRC_OFF);
    kp_tensor w1 = unit_tensor(buf, KP_DTYPE_F64, 3, (int64_t[]){6, 2, 5}, W_OFF);
    kp_tensor d1 = unit_tensor(buf, KP_DTYPE_F64, 3, (int64_t[]){3, 6, 48}, DST_OFF);
    /* element [1] of each pair (99 here) is ignored for 1-d */
    ck_assert_int_eq(kp_conv(stream, &d1, &s1, &w1, NULL, &p), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "conv_f64");
    ck_assert_int_eq(seen.out_h, 1);
    ck_assert_int_eq(seen.out_w, 48);
    ck_assert_int_eq(seen.groups, 2);
    ck_assert_int_eq(seen.k_total, 10);
    ck_assert_int_eq(seen.has_bias, 0);
    ck_assert_uint_eq(fake.last_dims.grid[0], (3 * 48 + KP_CONV_TILE_N_F64 - 1) / KP_CONV_TILE_N_F64);
    ck_assert_uint_eq(fake.last_dims.grid[1], 2);

    /* transposed, bf16, channels-last src, stride 2: one conv per output
     * phase (4), each over the taps that reach it; weight strides map
     * (C_in, C_out/g). The last phase is (1, 1): taps 0 and 2 of 4,
     * reading input yy + 1 - ii. */
    kp_tensor st = unit_tensor(buf, KP_DTYPE_BF16, 4, (int64_t[]){1, 4, 5, 5}, SRC_OFF);
    st.layout.strides[0] = 100;
    st.layout.strides[1] = 1;
    st.layout.strides[2] = 20;
    st.layout.strides[3] = 4;
    kp_tensor wt = unit_tensor(buf, KP_DTYPE_BF16, 4, (int64_t[]){4, 3, 4, 4}, W_OFF);
    kp_tensor dt = unit_tensor(buf, KP_DTYPE_BF16, 4, (int64_t[]){1, 3, 10, 10}, DST_OFF);
    kp_conv_params pt = {{2, 2}, {1, 1}, {1, 1}, {0, 0}, 1};
    ck_assert_int_eq(kp_conv_transpose(stream, &dt, &st, &wt, NULL, &pt), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 2 + 1);   /* the 4 phases in one launch */
    ck_assert_str_eq(fake.last_kernel, "conv_bf16");
    ck_assert_uint_eq(fake.last_dims.grid[2], 4);
    const struct kp_conv_args *last = &seen_launch.conv[3];
    ck_assert_int_eq(last->w_stride_m, 16);
    ck_assert_int_eq(last->w_stride_c, 48);
    ck_assert_int_eq(last->w_stride_i, 8);
    ck_assert_int_eq(last->src_stride[1], 1);
    ck_assert_int_eq(last->c_out_group, 3);
    ck_assert_int_eq(last->out_h, 5);
    ck_assert_int_eq(last->k_h, 2);
    ck_assert_int_eq(last->k_total, 16);
    ck_assert_int_eq(last->stride_h, 1);
    ck_assert_int_eq(last->pad_h, -1);
    ck_assert_int_eq(last->dil_h, -1);
    ck_assert_int_eq(last->dst_stride[2], 20);
    /* phase (1, 1) starts at dst (y 1, x 1) and at weight tap (0, 0) */
    ck_assert_int_eq(last->dst_offset, 10 + 1);
    ck_assert_int_eq(last->w_offset, 0);
    /* phase (0, 1): taps 1 and 3 of each dim's 4 in y, 0 and 2 in x */
    ck_assert_int_eq(seen_launch.conv[1].w_offset, 4);

    /* stride and dilation both above 1: the gather kernel, one launch */
    pt.dilation[1] = 2;
    dt = unit_tensor(buf, KP_DTYPE_BF16, 4, (int64_t[]){1, 3, 10, 13}, DST_OFF);
    ck_assert_int_eq(kp_conv_transpose(stream, &dt, &st, &wt, NULL, &pt), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 2 + 1 + 1);
    ck_assert_str_eq(fake.last_kernel, "conv_transpose_bf16");
    ck_assert_int_eq(seen.dil_w, 2);
    ck_assert_int_eq(seen.stride_w, 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conv_validation");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_rejects_bad_arguments);
    tcase_add_test(tc, test_transpose_rejects);
    tcase_add_test(tc, test_launches);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

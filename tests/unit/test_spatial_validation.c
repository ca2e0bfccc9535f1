/* The spatial module's launchers with the fake backend: argument checks
 * (each bad call fails with its message and launches nothing), PyTorch's
 * output sizes (ceil_mode included), N = 0 launching nothing, the kernel
 * each dtype gets, and the walk order for channels-last operands. */
#include "unit_util.h"
#include "kp_spatial_abi.h"

static kp_device *dev, *other_dev;
static kp_stream *stream;
static kp_buffer *buf, *buf2, *foreign;
static struct kp_spatial_args last_args;

static void record_args(void **args)
{
    last_args = *(const struct kp_spatial_args *)args[0];
}

static void setup(void)
{
    char arch[64];
    built_arch(arch, sizeof(arch));
    fake_install(arch);
    fake.launch_hook = record_args;
    ck_assert_int_eq(kp_device_open(0, &dev), KP_OK);
    ck_assert_int_eq(kp_device_open(0, &other_dev), KP_OK);
    ck_assert_int_eq(kp_stream_create(dev, &stream), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 1 << 22, &buf), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 1 << 22, &buf2), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(other_dev, 1 << 20, &foreign), KP_OK);
}

static void teardown(void)
{
    kp_buffer_destroy(&buf);
    kp_buffer_destroy(&buf2);
    kp_buffer_destroy(&foreign);
    kp_stream_destroy(&stream);
    kp_device_close(&dev);
    kp_device_close(&other_dev);
    kp_backend_override(NULL);
}

static kp_tensor tensor(kp_buffer *b, kp_dtype dtype, int rank, const int64_t *shape)
{
    kp_tensor t = {b, dtype, {0}};
    ck_assert_int_eq(kp_layout_contiguous(&t.layout, rank, shape), KP_OK);
    return t;
}

/* (N, C, H, W) with C innermost in memory. */
static kp_tensor channels_last(kp_buffer *b, kp_dtype dtype, const int64_t *s)
{
    kp_tensor t = tensor(b, dtype, 4, s);
    int64_t strides[4] = {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
    for (int d = 0; d < 4; d++)
        t.layout.strides[d] = strides[d];
    return t;
}

#define WINDOW(k, s, p, d) ((kp_window){{k, k}, {s, s}, {p, p}, {d, d}})

START_TEST(test_im2col_checks)
{
    kp_window w = WINDOW(3, 1, 1, 1);
    kp_tensor src = tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 5, 6});
    kp_tensor dst = tensor(buf2, KP_DTYPE_F32, 3, (int64_t[]){2, 27, 30});
    EXPECT(kp_im2col(stream, &dst, &src, NULL), KP_ERR_INVALID_ARGUMENT, "window is NULL");
    EXPECT(kp_im2col(NULL, &dst, &src, &w), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    kp_tensor bad = tensor(buf2, KP_DTYPE_F32, 3, (int64_t[]){2, 27, 31});
    EXPECT(kp_im2col(stream, &bad, &src, &w), KP_ERR_INVALID_ARGUMENT,
           "dst has shape [2, 27, 31] but must be [2, 27, 30]");
    bad = tensor(buf2, KP_DTYPE_F16, 3, (int64_t[]){2, 27, 30});
    EXPECT(kp_im2col(stream, &bad, &src, &w), KP_ERR_INVALID_ARGUMENT, "f16");
    bad = tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){6, 30});
    EXPECT(kp_im2col(stream, &dst, &bad, &w), KP_ERR_INVALID_ARGUMENT, "rank 2 but must be 4");
    kp_window bad_w = w;
    bad_w.stride[1] = 0;
    EXPECT(kp_im2col(stream, &dst, &src, &bad_w), KP_ERR_INVALID_ARGUMENT, "stride 0,");
    bad_w = w;
    bad_w.padding[0] = -1;
    EXPECT(kp_im2col(stream, &dst, &src, &bad_w), KP_ERR_INVALID_ARGUMENT, "padding -1,");
    bad_w = w;
    bad_w.dilation[0] = 0;
    EXPECT(kp_im2col(stream, &dst, &src, &bad_w), KP_ERR_INVALID_ARGUMENT, "dilation 0");
    bad_w = WINDOW(9, 1, 1, 1);  /* extent 9 > 5 + 2 */
    EXPECT(kp_im2col(stream, &dst, &src, &bad_w), KP_ERR_INVALID_ARGUMENT,
           "larger than the padded input 7");
    bad = tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 0, 5, 6});
    EXPECT(kp_im2col(stream, &dst, &bad, &w), KP_ERR_INVALID_ARGUMENT, "a size below 1");
    bad = dst;
    bad.buffer = buf;  /* the same bytes as src */
    EXPECT(kp_im2col(stream, &bad, &src, &w), KP_ERR_INVALID_ARGUMENT, "overlaps");
    bad = src;
    bad.buffer = foreign;
    EXPECT(kp_im2col(stream, &dst, &bad, &w), KP_ERR_DEVICE_MISMATCH, "src buffer belongs");
    ck_assert_int_eq(atomic_load(&fake.launches), 0);

    ck_assert_int_eq(kp_im2col(stream, &dst, &src, &w), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "im2col_x32");
    /* 1-d: (N, C, L) with element [0] of the window */
    kp_window w1 = {{3, 99}, {2, 99}, {1, 99}, {1, 99}};
    kp_tensor s1 = tensor(buf, KP_DTYPE_BF16, 3, (int64_t[]){2, 4, 9});
    kp_tensor d1 = tensor(buf2, KP_DTYPE_BF16, 3, (int64_t[]){2, 12, 5});
    ck_assert_int_eq(kp_im2col(stream, &d1, &s1, &w1), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "im2col_x16");
    ck_assert_int_eq(last_args.h, 1);
    ck_assert_int_eq(last_args.w_out, 5);
    /* N = 0: checked, nothing launched */
    int before = atomic_load(&fake.launches);
    kp_tensor s0 = tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){0, 3, 5, 6});
    kp_tensor d0 = tensor(buf2, KP_DTYPE_F32, 3, (int64_t[]){0, 27, 30});
    ck_assert_int_eq(kp_im2col(stream, &d0, &s0, &w), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
}
END_TEST

START_TEST(test_col2im_checks)
{
    kp_window w = WINDOW(3, 2, 1, 1);
    kp_tensor img = tensor(buf, KP_DTYPE_U8, 4, (int64_t[]){1, 2, 7, 8});
    kp_tensor cols = tensor(buf2, KP_DTYPE_U8, 3, (int64_t[]){1, 18, 16});
    ck_assert_int_eq(kp_col2im(stream, &img, &cols, &w), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "col2im_u8");
    int before = atomic_load(&fake.launches);
    kp_tensor bad = tensor(buf2, KP_DTYPE_U8, 3, (int64_t[]){1, 18, 15});
    EXPECT(kp_col2im(stream, &img, &bad, &w), KP_ERR_INVALID_ARGUMENT,
           "src has shape [1, 18, 15] but must be [1, 18, 16]");
    EXPECT(kp_col2im(stream, &img, &cols, NULL), KP_ERR_INVALID_ARGUMENT, "window is NULL");
    ck_assert_int_eq(atomic_load(&fake.launches), before);
}
END_TEST

START_TEST(test_pool_checks)
{
    kp_window w = WINDOW(3, 2, 1, 1);
    kp_tensor src = tensor(buf, KP_DTYPE_F16, 4, (int64_t[]){2, 3, 6, 6});
    /* floor((6 + 2 - 3) / 2) + 1 = 3; ceil_mode: 4 ((4 - 1) * 2 = 6 < 6 + 1) */
    kp_tensor dst = tensor(buf2, KP_DTYPE_F16, 4, (int64_t[]){2, 3, 3, 3});
    kp_tensor dst_ceil = tensor(buf2, KP_DTYPE_F16, 4, (int64_t[]){2, 3, 4, 4});
    kp_tensor idx = tensor(buf2, KP_DTYPE_U32, 4, (int64_t[]){2, 3, 3, 3});
    idx.layout.offset = 1000;
    ck_assert_int_eq(kp_max_pool2d(stream, &dst, NULL, &src, &w, false), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "max_pool2d_f16");
    ck_assert_int_eq(kp_max_pool2d(stream, &dst, &idx, &src, &w, false), KP_OK);
    ck_assert_int_eq(kp_max_pool2d(stream, &dst_ceil, NULL, &src, &w, true), KP_OK);
    ck_assert_int_eq(kp_avg_pool2d(stream, &dst_ceil, &src, &w, true, false), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "avg_pool2d_f16");
    ck_assert_int_eq(last_args.flags & KP_SPATIAL_COUNT_PAD, 0);
    /* k2 s2 p1 on 5: ceil gives 4, but the 4th window would start at 6 >= 5 + 1 */
    kp_window w2 = WINDOW(2, 2, 1, 1);
    kp_tensor s5 = tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){1, 1, 5, 5});
    kp_tensor d3 = tensor(buf2, KP_DTYPE_F32, 4, (int64_t[]){1, 1, 3, 3});
    ck_assert_int_eq(kp_avg_pool2d(stream, &d3, &s5, &w2, true, true), KP_OK);
    int before = atomic_load(&fake.launches);

    EXPECT(kp_max_pool2d(stream, &dst, NULL, &src, &w, true), KP_ERR_INVALID_ARGUMENT,
           "dst has shape [2, 3, 3, 3] but must be [2, 3, 4, 4]");
    kp_window bad_w = WINDOW(3, 2, 2, 1);
    EXPECT(kp_max_pool2d(stream, &dst, NULL, &src, &bad_w, false), KP_ERR_INVALID_ARGUMENT,
           "more than half the kernel size");
    bad_w = WINDOW(3, 2, 1, 2);
    EXPECT(kp_avg_pool2d(stream, &dst, &src, &bad_w, false, true), KP_ERR_INVALID_ARGUMENT,
           "dilation is (2, 2) but must be 1");
    kp_tensor bad = idx;
    bad.dtype = KP_DTYPE_I64;
    EXPECT(kp_max_pool2d(stream, &dst, &bad, &src, &w, false), KP_ERR_INVALID_ARGUMENT,
           "indices is i64 but must be u32");
    bad = tensor(buf2, KP_DTYPE_U32, 4, (int64_t[]){2, 3, 3, 2});
    bad.layout.offset = 1000;
    EXPECT(kp_max_pool2d(stream, &dst, &bad, &src, &w, false), KP_ERR_INVALID_ARGUMENT,
           "indices has shape [2, 3, 3, 2]");
    bad = idx;
    bad.layout.offset = 0;  /* on top of dst */
    EXPECT(kp_max_pool2d(stream, &dst, &bad, &src, &w, false), KP_ERR_INVALID_ARGUMENT,
           "overlaps");
    kp_tensor ints = tensor(buf, KP_DTYPE_U8, 4, (int64_t[]){2, 3, 6, 6});
    kp_tensor ints_dst = tensor(buf2, KP_DTYPE_U8, 4, (int64_t[]){2, 3, 3, 3});
    EXPECT(kp_avg_pool2d(stream, &ints_dst, &ints, &w, false, true), KP_ERR_UNSUPPORTED,
           "u8 is not supported");
    kp_tensor three_d = tensor(buf, KP_DTYPE_F16, 3, (int64_t[]){2, 3, 6});
    EXPECT(kp_max_pool2d(stream, &dst, NULL, &three_d, &w, false), KP_ERR_INVALID_ARGUMENT,
           "rank 3 but must be 4 (N, C, H, W)");
    ck_assert_int_eq(atomic_load(&fake.launches), before);

    /* u8 max pooling exists; channels-last operands walk rows of channels */
    ck_assert_int_eq(kp_max_pool2d(stream, &ints_dst, NULL, &ints, &w, false), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "max_pool2d_u8");
    ck_assert_int_eq(last_args.order, KP_SPATIAL_ROWS_NCH);
    kp_tensor cl_src = channels_last(buf, KP_DTYPE_F32, (int64_t[]){2, 8, 6, 6});
    kp_tensor cl_dst = channels_last(buf2, KP_DTYPE_F32, (int64_t[]){2, 8, 3, 3});
    ck_assert_int_eq(kp_max_pool2d(stream, &cl_dst, NULL, &cl_src, &w, false), KP_OK);
    ck_assert_int_eq(last_args.order, KP_SPATIAL_ROWS_NHW);
    ck_assert_int_eq(last_args.row_len, 8);
    ck_assert_int_eq(last_args.rows, 2 * 3 * 3);
}
END_TEST

START_TEST(test_upsample_checks)
{
    kp_tensor src = tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 4, 5});
    kp_tensor dst = tensor(buf2, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 8, 10});
    const double scales[2] = {2.0, 2.0}, bad_scales[2] = {2.0, 0.0};
    ck_assert_int_eq(kp_upsample_nearest2d(stream, &dst, &src, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "upsample_nearest2d_x32");
    ck_assert(last_args.scale[0] == 0 && last_args.scale[1] == 0);
    ck_assert_int_eq(kp_upsample_bilinear2d(stream, &dst, &src, true, scales), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "upsample_bilinear2d_f32");
    ck_assert(last_args.scale[0] == 0.5 && last_args.scale[1] == 0.5);
    ck_assert_int_eq(last_args.flags, KP_SPATIAL_ALIGN_CORNERS | KP_SPATIAL_SMALL);
    ck_assert_int_eq(kp_upsample_bilinear2d(stream, &src, &dst, false, NULL), KP_OK);  /* down */
    ck_assert_str_eq(fake.last_kernel, "upsample_bilinear2d_f32");
    /* equal sizes are a copy (PyTorch's too), whatever the scales */
    kp_tensor same = tensor(buf2, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 4, 5});
    ck_assert_int_eq(kp_upsample_bilinear2d(stream, &same, &src, false, scales), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "upsample_nearest2d_x32");
    ck_assert(last_args.scale[0] == 0 && last_args.scale[1] == 0);
    int before = atomic_load(&fake.launches);

    EXPECT(kp_upsample_nearest2d(stream, &dst, &src, bad_scales), KP_ERR_INVALID_ARGUMENT,
           "scales[1] is 0 but must be > 0");
    kp_tensor bad = tensor(buf2, KP_DTYPE_F32, 4, (int64_t[]){2, 4, 8, 10});
    EXPECT(kp_upsample_nearest2d(stream, &bad, &src, NULL), KP_ERR_INVALID_ARGUMENT,
           "dst has shape [2, 4, 8, 10] but must be [2, 3, 8, 10]");
    bad = tensor(buf2, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 0, 10});
    EXPECT(kp_upsample_nearest2d(stream, &bad, &src, NULL), KP_ERR_INVALID_ARGUMENT,
           "a size below 1");
    kp_tensor ints = tensor(buf, KP_DTYPE_U32, 4, (int64_t[]){2, 3, 4, 5});
    kp_tensor ints_dst = tensor(buf2, KP_DTYPE_U32, 4, (int64_t[]){2, 3, 8, 10});
    EXPECT(kp_upsample_bilinear2d(stream, &ints_dst, &ints, false, NULL), KP_ERR_UNSUPPORTED,
           "u32 is not supported");
    ck_assert_int_eq(atomic_load(&fake.launches), before);
    ck_assert_int_eq(kp_upsample_nearest2d(stream, &ints_dst, &ints, NULL), KP_OK);
}
END_TEST

/* The kernels' division by invariant integers against plain division, for
 * every dividend class that matters: 0, small, around multiples of d, and
 * up to 2^31 - 1. */
/* The fast-path flags: contiguous 16-byte rows in NCHW order, the pools'
 * compiled windows, im2col/col2im taps within one column; and the runs of
 * 4 elements of the pools' 16-bit types. */
START_TEST(test_fast_flags)
{
    const int32_t fast = KP_SPATIAL_ROWS16 | KP_SPATIAL_FAST_K2S2 | KP_SPATIAL_FAST_K3S2P1 |
                         KP_SPATIAL_FAST_SHIFT;
    kp_window w = WINDOW(3, 1, 1, 1);
    kp_tensor src = tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 5, 8});
    kp_tensor cols = tensor(buf2, KP_DTYPE_F32, 3, (int64_t[]){2, 27, 40});
    ck_assert_int_eq(kp_im2col(stream, &cols, &src, &w), KP_OK);
    ck_assert_int_eq(last_args.flags & fast, KP_SPATIAL_ROWS16 | KP_SPATIAL_FAST_SHIFT);
    ck_assert_int_eq(last_args.row_len, 8);
    ck_assert_int_eq(kp_col2im(stream, &src, &cols, &w), KP_OK);
    ck_assert_int_eq(last_args.flags & fast, KP_SPATIAL_ROWS16 | KP_SPATIAL_FAST_SHIFT);
    /* 7 columns: rows 28 bytes apart */
    kp_tensor odd = tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 5, 7});
    kp_tensor odd_cols = tensor(buf2, KP_DTYPE_F32, 3, (int64_t[]){2, 27, 35});
    ck_assert_int_eq(kp_im2col(stream, &odd_cols, &odd, &w), KP_OK);
    ck_assert_int_eq(last_args.flags & fast, 0);
    kp_window w5 = WINDOW(5, 1, 2, 1);  /* taps 2 columns away */
    kp_tensor cols5 = tensor(buf2, KP_DTYPE_F32, 3, (int64_t[]){2, 75, 40});
    ck_assert_int_eq(kp_im2col(stream, &cols5, &src, &w5), KP_OK);
    ck_assert_int_eq(last_args.flags & fast, KP_SPATIAL_ROWS16);

    kp_tensor img = tensor(buf, KP_DTYPE_BF16, 4, (int64_t[]){2, 3, 8, 16});
    kp_tensor pooled = tensor(buf2, KP_DTYPE_BF16, 4, (int64_t[]){2, 3, 4, 8});
    kp_window k3 = WINDOW(3, 2, 1, 1), k2 = WINDOW(2, 2, 0, 1);
    ck_assert_int_eq(kp_max_pool2d(stream, &pooled, NULL, &img, &k3, false), KP_OK);
    ck_assert_int_eq(last_args.flags & fast, KP_SPATIAL_ROWS16 | KP_SPATIAL_FAST_K3S2P1);
    uint32_t mul, shift;  /* rows of 8 in runs of 4: the kernel divides by 2 runs a row */
    kp_div_magic(2, &mul, &shift);
    ck_assert_uint_eq(last_args.div_mul[0], mul);
    ck_assert_uint_eq(last_args.div_shift[0], shift);
    ck_assert_int_eq(kp_avg_pool2d(stream, &pooled, &img, &k2, false, true), KP_OK);
    ck_assert_int_eq(last_args.flags & fast, KP_SPATIAL_ROWS16 | KP_SPATIAL_FAST_K2S2);
    kp_window k3d = WINDOW(3, 2, 1, 2);  /* dilation: no compiled window */
    kp_tensor pooled_d = tensor(buf2, KP_DTYPE_BF16, 4, (int64_t[]){2, 3, 3, 7});
    ck_assert_int_eq(kp_max_pool2d(stream, &pooled_d, NULL, &img, &k3d, false), KP_OK);
    ck_assert_int_eq(last_args.flags & fast, KP_SPATIAL_ROWS16);
    kp_tensor up = tensor(buf2, KP_DTYPE_BF16, 4, (int64_t[]){2, 3, 16, 32});
    ck_assert_int_eq(kp_upsample_bilinear2d(stream, &up, &img, false, NULL), KP_OK);
    ck_assert_int_eq(last_args.flags & fast, KP_SPATIAL_ROWS16);
}
END_TEST

START_TEST(test_division_magic)
{
    static const uint32_t divisors[] = {1, 2, 3, 5, 7, 9, 56, 127, 128, 129, 3136, 65535, 65536,
                                        1000003, (1u << 30) - 1, 1u << 30, (1u << 31) - 1};
    uint64_t rng = 88172645463325252ull;
    for (size_t k = 0; k < sizeof(divisors) / sizeof(divisors[0]); k++) {
        uint32_t d = divisors[k], mul, shift;
        kp_div_magic(d, &mul, &shift);
        for (int t = 0; t < 20000; t++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            uint32_t n = t < 4 ? (uint32_t[]){0, 1, 0x7fffffffu, 0x7ffffffeu}[t]
                       : t % 3 ? (uint32_t)(rng % 0x80000000u)
                               : (uint32_t)((rng % (0x80000000u / d)) * d + (t % 2 ? 0 : d - 1));
            if (n > 0x7fffffffu)
                continue;
            uint32_t hi = (uint32_t)(((uint64_t)n * mul) >> 32);
            ck_assert_msg(((hi + n) >> shift) == n / d, "%u / %u", n, d);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("spatial_validation");
    TCase *tc = tcase_create("checks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_im2col_checks);
    tcase_add_test(tc, test_col2im_checks);
    tcase_add_test(tc, test_pool_checks);
    tcase_add_test(tc, test_fast_flags);
    tcase_add_test(tc, test_upsample_checks);
    tcase_add_test(tc, test_division_magic);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

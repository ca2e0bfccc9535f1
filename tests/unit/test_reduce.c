/* kp_reduce, softmax, norms and rope: bad arguments get a clear status and
 * launch nothing; valid calls pick the kernel the plan says. */
#include <math.h>

#include "fake_env.h"

#define BUF_BYTES (2 << 20)  /* four f32 rows longer than a cluster holds */

static void setup(void) { fake_env_setup(BUF_BYTES); }

#define LAUNCHES(call, count, kernel)                                                         \
    do {                                                                                      \
        int before_ = atomic_load(&fake.launches);                                            \
        kp_status st_ = (call);                                                               \
        ck_assert_msg(st_ == KP_OK, "%s: %s", #call, kp_last_error_message());               \
        ck_assert_int_eq(atomic_load(&fake.launches) - before_, (count));                     \
        ck_assert_str_eq(fake.last_kernel, (kernel));                                         \
    } while (0)

START_TEST(test_reduce_rejects_bad_arguments)
{
    kp_tensor src = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 16}, 0);
    kp_tensor dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 1}, 1024);
    kp_tensor idx = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){8, 1}, 1024);
    int last[1] = {1}, both[2] = {0, 1};
    EXPECT(kp_reduce(NULL, KP_REDUCE_SUM, &dst, &src, last, 1), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, NULL, &src, last, 1), KP_ERR_INVALID_ARGUMENT, "dst is NULL");
    EXPECT(kp_reduce(stream, (kp_reduce_op)42, &dst, &src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "op 42 is not");
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &dst, &src, last, 0), KP_ERR_INVALID_ARGUMENT,
           "ndims = 0 is outside 1..2");
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &dst, &src, last, 3), KP_ERR_INVALID_ARGUMENT, "ndims = 3");
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &dst, &src, NULL, 1), KP_ERR_INVALID_ARGUMENT, "dims is NULL");
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &dst, &src, (int[]){2}, 1), KP_ERR_INVALID_ARGUMENT,
           "dims[0] = 2 is outside 0..1");
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &dst, &src, (int[]){-1}, 1), KP_ERR_INVALID_ARGUMENT,
           "dims[0] = -1");
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &dst, &src, (int[]){1, 1}, 2), KP_ERR_INVALID_ARGUMENT,
           "dims[1] = 1 is listed twice");
    kp_tensor idx00 = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){1, 1}, 1024);
    EXPECT(kp_reduce(stream, KP_REDUCE_ARGMAX, &idx00, &src, both, 2), KP_ERR_INVALID_ARGUMENT,
           "argmax reduces exactly one dim");
    kp_tensor u32src = src;
    u32src.dtype = KP_DTYPE_U32;
    EXPECT(kp_reduce(stream, KP_REDUCE_MEAN, &idx, &u32src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "mean needs a float src");
    kp_tensor bad = dst;
    bad.dtype = KP_DTYPE_F16;
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &bad, &src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "must be f32, not f16");
    EXPECT(kp_reduce(stream, KP_REDUCE_ARGMIN, &dst, &src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "must be u32, not f32");
    bad = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){8}, 1024);
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &bad, &src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "keep src's rank 2");
    bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 16}, 1024);
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &bad, &src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "dst shape[1] is 16, expected 1");
    bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){7, 1}, 1024);
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &bad, &src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "dst shape[0] is 7, expected 8");
    kp_tensor empty_src = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 0}, 0);
    EXPECT(kp_reduce(stream, KP_REDUCE_MAX, &dst, &empty_src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "max over an empty set");
    EXPECT(kp_reduce(stream, KP_REDUCE_ARGMIN, &idx, &empty_src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "argmin over an empty set");
    bad = dst;
    bad.layout.offset = 4;  /* inside src */
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &bad, &src, last, 1), KP_ERR_INVALID_ARGUMENT, "overlaps src");
    bad = dst;
    bad.layout.strides[0] = 0;
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &bad, &src, last, 1), KP_ERR_INVALID_ARGUMENT,
           "more than once");
    bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 1}, 0);
    bad.buffer = small;
    EXPECT(kp_reduce(stream, KP_REDUCE_SUM, &bad, &src, last, 1), KP_ERR_BUFFER_TOO_SMALL, "holds 16 bytes");
    fake_env_assert_untouched();
}
END_TEST

START_TEST(test_reduce_plans)
{
    int last[1] = {1}, first[1] = {0};
    /* rows of a contiguous matrix: a group per row over a contiguous run */
    kp_tensor src = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 16}, 0);
    kp_tensor dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 1}, 1024);
    LAUNCHES(kp_reduce(stream, KP_REDUCE_SUM, &dst, &src, last, 1), 1, "reduce_sum_f32");
    LAUNCHES(kp_reduce(stream, KP_REDUCE_MEAN, &dst, &src, last, 1), 1, "reduce_sum_f32");
    LAUNCHES(kp_reduce(stream, KP_REDUCE_MAX, &dst, &src, last, 1), 1, "reduce_max_f32");
    kp_tensor idx = dst;
    idx.dtype = KP_DTYPE_U32;
    LAUNCHES(kp_reduce(stream, KP_REDUCE_ARGMIN, &idx, &src, last, 1), 1, "reduce_argmin_f32");
    /* a transposed view reduced along its last dim: elements 8 apart */
    kp_tensor t = src;
    t.layout.shape[0] = 16;
    t.layout.shape[1] = 8;
    t.layout.strides[0] = 1;
    t.layout.strides[1] = 16;
    kp_tensor tdst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){16, 1}, 1024);
    LAUNCHES(kp_reduce(stream, KP_REDUCE_MIN, &tdst, &t, last, 1), 1, "reduce_strided_min_f32");
    /* over the outer dim of a wide matrix: one thread per column */
    kp_tensor wide = unit_tensor(buf, KP_DTYPE_U8, 2, (int64_t[]){4, 300}, 0);
    kp_tensor wdst = unit_tensor(buf, KP_DTYPE_U8, 2, (int64_t[]){1, 300}, 2000);
    LAUNCHES(kp_reduce(stream, KP_REDUCE_SUM, &wdst, &wide, first, 1), 1, "reduce_cols_sum_u8");
    /* full reduction of a long vector: partials, then the final pass */
    kp_tensor vec = unit_tensor(buf, KP_DTYPE_U8, 1, (int64_t[]){60000}, 0);
    kp_tensor one = unit_tensor(buf, KP_DTYPE_U8, 1, (int64_t[]){1}, 60000);
    LAUNCHES(kp_reduce(stream, KP_REDUCE_SUM, &one, &vec, first, 1), 2, "reduce_final_sum_u8");
    kp_tensor one32 = unit_tensor(buf, KP_DTYPE_U32, 1, (int64_t[]){1}, 15004);
    LAUNCHES(kp_reduce(stream, KP_REDUCE_ARGMAX, &one32, &vec, first, 1), 2, "reduce_final_argmax_u8");
    /* over several dims at once: dims 0 and 2 of (4, 4, 4) do not merge */
    kp_tensor cube = unit_tensor(buf, KP_DTYPE_F64, 3, (int64_t[]){4, 4, 4}, 0);
    kp_tensor cdst = unit_tensor(buf, KP_DTYPE_F64, 3, (int64_t[]){1, 4, 1}, 100);
    LAUNCHES(kp_reduce(stream, KP_REDUCE_SUM, &cdst, &cube, (int[]){0, 2}, 2), 1, "reduce_strided_sum_f64");
    /* dims 1 and 2 merge into one contiguous run */
    kp_tensor cdst2 = unit_tensor(buf, KP_DTYPE_F64, 3, (int64_t[]){4, 1, 1}, 100);
    LAUNCHES(kp_reduce(stream, KP_REDUCE_SUM, &cdst2, &cube, (int[]){2, 1}, 2), 1, "reduce_sum_f64");
    /* an empty output launches nothing */
    kp_tensor esrc = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){0, 5}, 0);
    kp_tensor edst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){0, 1}, 0);
    int before = atomic_load(&fake.launches);
    ck_assert_int_eq(kp_reduce(stream, KP_REDUCE_MAX, &edst, &esrc, last, 1), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
    /* a sum over an empty set is fine (it writes zeros) */
    kp_tensor zsrc = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 0}, 0);
    LAUNCHES(kp_reduce(stream, KP_REDUCE_SUM, &dst, &zsrc, last, 1), 1, "reduce_sum_f32");
}
END_TEST

START_TEST(test_rows_reject_bad_arguments)
{
    kp_tensor src = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 16}, 0);
    kp_tensor dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 16}, 1024);
    kp_tensor w = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){16}, 2048);
    kp_tensor bad = src;
    bad.dtype = KP_DTYPE_U32;
    kp_tensor bad_dst = dst;
    bad_dst.dtype = KP_DTYPE_U32;
    EXPECT(kp_softmax(NULL, &dst, &src), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_softmax(stream, &bad_dst, &bad), KP_ERR_INVALID_ARGUMENT, "src is u32");
    EXPECT(kp_log_softmax(stream, &bad_dst, &src), KP_ERR_INVALID_ARGUMENT, "dst is u32 but src is f32");
    kp_tensor scalar = unit_tensor(buf, KP_DTYPE_F32, 0, NULL, 0), scalar_dst = unit_tensor(buf, KP_DTYPE_F32, 0, NULL, 8);
    EXPECT(kp_softmax(stream, &scalar_dst, &scalar), KP_ERR_INVALID_ARGUMENT, "rank 0");
    kp_tensor short_dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 15}, 1024);
    EXPECT(kp_softmax(stream, &short_dst, &src), KP_ERR_INVALID_ARGUMENT, "src has shape [8, 16] but dst has [8, 15]");
    kp_tensor overlap = dst;
    overlap.layout.offset = 64;
    EXPECT(kp_softmax(stream, &overlap, &src), KP_ERR_INVALID_ARGUMENT, "overlaps");
    kp_tensor bw = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){15}, 2048);
    EXPECT(kp_rmsnorm(stream, &dst, &src, &bw, 1e-5f), KP_ERR_INVALID_ARGUMENT, "weight must have shape (16)");
    bw = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){1, 16}, 2048);
    EXPECT(kp_rmsnorm(stream, &dst, &src, &bw, 1e-5f), KP_ERR_INVALID_ARGUMENT, "weight must have shape");
    bw = w;
    bw.dtype = KP_DTYPE_F16;
    EXPECT(kp_layernorm(stream, &dst, &src, &w, &bw, 1e-5f), KP_ERR_INVALID_ARGUMENT,
           "bias is f16 but src is f32");
    EXPECT(kp_rmsnorm(stream, &dst, &src, &w, -1.0f), KP_ERR_INVALID_ARGUMENT, "eps = -1");
    EXPECT(kp_layernorm(stream, &dst, &src, NULL, NULL, NAN), KP_ERR_INVALID_ARGUMENT, "must be finite");
    kp_tensor wover = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){16}, 1030);  /* inside dst */
    EXPECT(kp_rmsnorm(stream, &dst, &src, &wover, 1e-5f), KP_ERR_INVALID_ARGUMENT, "dst overlaps weight");
    EXPECT(kp_layernorm(stream, &dst, &src, &w, &wover, 1e-5f), KP_ERR_INVALID_ARGUMENT,
           "dst overlaps bias");
    fake_env_assert_untouched();
}
END_TEST

/* Exact fits take groups of whole waves: a multiple of 32 threads where the
 * device's waves are 32 wide and the rows fill its 4 multiprocessors, else
 * of 64 (bf16 rows of 5120: 640 slots, 160 threads of four or 320 of two). */
START_TEST(test_rows_exact_groups_by_wave)
{
    kp_tensor src = unit_tensor(buf, KP_DTYPE_BF16, 2, (int64_t[]){4, 5120}, 0);
    kp_tensor dst = unit_tensor(buf, KP_DTYPE_BF16, 2, (int64_t[]){4, 5120}, 4 * 5120);
    LAUNCHES(kp_softmax(stream, &dst, &src), 1, "softmax_exact_bf16");
    ck_assert_uint_eq(fake.last_dims.block[0], 160);
    ck_assert_uint_eq(fake.last_dims.grid[0], 4);
    kp_tensor few = src, few_dst = dst;
    few.layout.shape[0] = few_dst.layout.shape[0] = 3;
    LAUNCHES(kp_rmsnorm(stream, &few_dst, &few, NULL, 1e-5f), 1, "rmsnorm_exact_bf16");
    ck_assert_uint_eq(fake.last_dims.block[0], 320);

    fake.warp_size = 64;
    kp_device *dev64 = NULL;
    kp_stream *stream64 = NULL;
    kp_buffer *buf64 = NULL;
    ck_assert_int_eq(kp_device_open(0, &dev64), KP_OK);
    ck_assert_int_eq(kp_stream_create(dev64, &stream64), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev64, 8 * 5120 * 2, &buf64), KP_OK);
    src.buffer = dst.buffer = buf64;
    LAUNCHES(kp_layernorm(stream64, &dst, &src, NULL, NULL, 1e-5f), 1, "layernorm_exact_bf16");
    ck_assert_uint_eq(fake.last_dims.block[0], 320);
    kp_buffer_destroy(&buf64);
    kp_stream_destroy(&stream64);
    kp_device_close(&dev64);
}
END_TEST

START_TEST(test_rows_plans)
{
    kp_tensor src = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 16}, 0);
    kp_tensor dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 16}, 1024);
    kp_tensor w = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){16}, 2048);
    /* rows of 16 f32: four 16-byte slots, an exact fit */
    LAUNCHES(kp_softmax(stream, &dst, &src), 1, "softmax_exact_f32");
    LAUNCHES(kp_log_softmax(stream, &src, &src), 1, "softmax_exact_f32");  /* in place */
    LAUNCHES(kp_rmsnorm(stream, &dst, &src, &w, 1e-6f), 1, "rmsnorm_exact_f32");
    LAUNCHES(kp_layernorm(stream, &dst, &src, &w, NULL, 0.0f), 1, "layernorm_exact_f32");
    /* rows of 12 (three slots: exact), 20 (five slots: no group x 1..4 slots
     * makes five), 15 (rows 60 bytes apart: no 16-byte loads) */
    kp_tensor r12 = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 12}, 0);
    kp_tensor r12_dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 12}, 1024);
    LAUNCHES(kp_softmax(stream, &r12_dst, &r12), 1, "softmax_exact_f32");
    kp_tensor r20 = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 20}, 0);
    kp_tensor r20_dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 20}, 1024);
    LAUNCHES(kp_softmax(stream, &r20_dst, &r20), 1, "softmax_f32");
    kp_tensor r15 = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 15}, 0);  /* 15 is no whole slot count */
    kp_tensor r15_dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){8, 15}, 1024);
    LAUNCHES(kp_rmsnorm(stream, &r15_dst, &r15, NULL, 1e-6f), 1, "rmsnorm_strided_f32");
    /* rows of 15 padded 16 apart have 16-byte loads but a cut last slot;
     * so has a single row of 15: <op>_<dtype> caches whole slots only */
    kp_tensor r15_padded = r15;
    r15_padded.layout.strides[0] = 16;
    LAUNCHES(kp_layernorm(stream, &r15_padded, &r15_padded, NULL, NULL, 1e-6f), 1, "layernorm_strided_f32");
    kp_tensor one15 = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){15}, 0);
    LAUNCHES(kp_softmax(stream, &one15, &one15), 1, "softmax_strided_f32");
    kp_tensor t = src;  /* transposed: inner stride 16 */
    t.layout.strides[0] = 1;
    t.layout.strides[1] = 16;
    t.layout.shape[0] = 16;
    t.layout.shape[1] = 8;
    kp_tensor tdst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){16, 8}, 1024);
    LAUNCHES(kp_softmax(stream, &tdst, &t), 1, "softmax_strided_f32");
    kp_tensor odd = unit_tensor(buf, KP_DTYPE_BF16, 2, (int64_t[]){8, 16}, 1);  /* rows not 16-byte aligned */
    kp_tensor odd_dst = unit_tensor(buf, KP_DTYPE_BF16, 2, (int64_t[]){8, 16}, 1000);
    LAUNCHES(kp_rmsnorm(stream, &odd_dst, &odd, NULL, 1e-6f), 1, "rmsnorm_strided_bf16");
    kp_tensor w_gap = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){16}, 2048);
    w_gap.layout.strides[0] = 2;  /* a strided weight */
    LAUNCHES(kp_layernorm(stream, &dst, &src, &w_gap, &w_gap, 1e-5f), 1, "layernorm_strided_f32");
    /* contiguous rows longer than a block's 512 x 4 slots (8192 f32), fewer
     * than the 4 multiprocessors: every row op splits them over blocks in
     * two launches; 4 rows fill the device a block a row */
    kp_tensor wide = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){2, 8200}, 0);
    kp_tensor wide_dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){2, 8200}, 16400);
    kp_tensor wide_w = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){8200}, 65600);
    kp_tensor wide_b = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){8200}, 73800);
    LAUNCHES(kp_softmax(stream, &wide_dst, &wide), 2, "softmax_split_f32");
    LAUNCHES(kp_log_softmax(stream, &wide, &wide), 2, "softmax_split_f32");
    LAUNCHES(kp_rmsnorm(stream, &wide_dst, &wide, NULL, 1e-6f), 2, "rmsnorm_split_f32");
    LAUNCHES(kp_rmsnorm(stream, &wide, &wide, &wide_w, 1e-6f), 2, "rmsnorm_split_f32");
    LAUNCHES(kp_layernorm(stream, &wide_dst, &wide, &wide_w, &wide_b, 1e-6f), 2, "layernorm_split_f32");
    /* chunks of 256 x 4 slots (4096 f32) make 6 blocks, fewer than two a
     * multiprocessor; 128 threads' chunks make 5 a row, 10 blocks */
    ck_assert_uint_eq(fake.last_dims.grid[0], 10);
    ck_assert_uint_eq(fake.last_dims.block[0], 128);
    ck_assert_uint_eq(fake.last_dims.flags, KP_LAUNCH_OVERLAP_PRIOR);
    LAUNCHES(kp_layernorm(stream, &wide, &wide, NULL, NULL, 1e-6f), 2, "layernorm_split_f32");
    /* one bf16 row of 40000: 256 threads' chunks (8192) make 5 blocks,
     * 128's 10 */
    kp_tensor wide16 = unit_tensor(buf, KP_DTYPE_BF16, 1, (int64_t[]){40000}, 0);
    kp_tensor wide16_dst = unit_tensor(buf, KP_DTYPE_BF16, 1, (int64_t[]){40000}, 40000);
    LAUNCHES(kp_rmsnorm(stream, &wide16_dst, &wide16, NULL, 1e-6f), 2, "rmsnorm_split_bf16");
    ck_assert_uint_eq(fake.last_dims.grid[0], 10);
    ck_assert_uint_eq(fake.last_dims.block[0], 128);
    /* rows 8201 apart have no 16-byte loads: no split */
    kp_tensor odd_wide = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){2, 8201}, 0);
    kp_tensor odd_wide_dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){2, 8201}, 16404);
    LAUNCHES(kp_layernorm(stream, &odd_wide_dst, &odd_wide, NULL, NULL, 1e-6f), 1, "layernorm_strided_f32");
    kp_tensor four = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){4, 8200}, 0);
    kp_tensor four_dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){4, 8200}, 32800);
    LAUNCHES(kp_softmax(stream, &four_dst, &four), 1, "softmax_stream_f32");
    LAUNCHES(kp_rmsnorm(stream, &four_dst, &four, NULL, 1e-6f), 1, "rmsnorm_stream_f32");
    LAUNCHES(kp_layernorm(stream, &four_dst, &four, NULL, NULL, 1e-6f), 1, "layernorm_stream_f32");
    /* where the loaded kernels run in clusters of 8 blocks, those rows take
     * a cluster each: 2050 slots make chunks of 257, 43 threads of 6 slots,
     * so 64 */
    fake.function_cluster_blocks = KP_ROWS_CLUSTER;
    LAUNCHES(kp_softmax(stream, &four_dst, &four), 1, "softmax_cluster_f32");
    ck_assert_uint_eq(fake.last_dims.grid[0], 4 * KP_ROWS_CLUSTER);
    ck_assert_uint_eq(fake.last_dims.block[0], 64);
    LAUNCHES(kp_rmsnorm(stream, &four_dst, &four, NULL, 1e-6f), 1, "rmsnorm_cluster_f32");
    /* f32 layernorm stages its chunks in shared memory at any width (8
     * slots a thread: 33, so 64) */
    LAUNCHES(kp_layernorm(stream, &four, &four, NULL, NULL, 1e-6f), 1, "layernorm_staged_f32");
    ck_assert_uint_eq(fake.last_dims.block[0], 64);
    ck_assert_uint_eq(fake.last_dims.shared_bytes, 257 * 16);
    /* f32 rows of 8 blocks x 512 threads x 6 slots x 4 elements fill a
     * cluster's registers; one slot more would be staged in shared memory,
     * 3073 slots a block, more than the fake device's 48 KB */
    const int64_t longest = KP_ROWS_CLUSTER * 512 * 6 * 4;
    kp_tensor vocab = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){4, longest}, 0);
    LAUNCHES(kp_softmax(stream, &vocab, &vocab), 1, "softmax_cluster_f32");
    ck_assert_uint_eq(fake.last_dims.block[0], 512);
    ck_assert_uint_eq(fake.last_dims.shared_bytes, 0);
    kp_tensor too_long = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){4, longest + 4}, 0);
    LAUNCHES(kp_softmax(stream, &too_long, &too_long), 1, "softmax_stream_f32");
    /* 16-bit rows of up to 128 KB stream; longer ones are staged, 8 slots a
     * thread: 8193 slots make chunks of 1025 (16400 bytes), 129 threads, so
     * 192; 8 x 3072 slots fill the 48 KB */
    kp_tensor vocab16 = unit_tensor(buf, KP_DTYPE_BF16, 2, (int64_t[]){4, 65536}, 0);
    LAUNCHES(kp_rmsnorm(stream, &vocab16, &vocab16, NULL, 1e-6f), 1, "rmsnorm_stream_bf16");
    kp_tensor wider16 = unit_tensor(buf, KP_DTYPE_BF16, 2, (int64_t[]){4, 65544}, 0);
    LAUNCHES(kp_rmsnorm(stream, &wider16, &wider16, NULL, 1e-6f), 1, "rmsnorm_staged_bf16");
    ck_assert_uint_eq(fake.last_dims.grid[0], 4 * KP_ROWS_CLUSTER);
    ck_assert_uint_eq(fake.last_dims.block[0], 192);
    ck_assert_uint_eq(fake.last_dims.shared_bytes, 1025 * 16);
    LAUNCHES(kp_softmax(stream, &wider16, &wider16), 1, "softmax_staged_bf16");
    LAUNCHES(kp_layernorm(stream, &wider16, &wider16, NULL, NULL, 1e-6f), 1, "layernorm_staged_bf16");
    kp_tensor widest16 = unit_tensor(buf, KP_DTYPE_F16, 2, (int64_t[]){4, KP_ROWS_CLUSTER * 3072 * 8}, 0);
    LAUNCHES(kp_softmax(stream, &widest16, &widest16), 1, "softmax_staged_f16");
    ck_assert_uint_eq(fake.last_dims.block[0], 384);
    ck_assert_uint_eq(fake.last_dims.shared_bytes, 48 * 1024);
    /* ... unless the kernel's own shared memory leaves no room */
    fake.function_static_shared = 16;
    LAUNCHES(kp_softmax(stream, &widest16, &widest16), 1, "softmax_stream_f16");
    fake.function_static_shared = 0;
    /* aligned rows that are not a whole number of 16-byte slots stream */
    kp_tensor part16 = unit_tensor(buf, KP_DTYPE_F16, 2, (int64_t[]){4, 65548}, 0);
    part16.layout.strides[0] = 65552;
    LAUNCHES(kp_rmsnorm(stream, &part16, &part16, NULL, 1e-6f), 1, "rmsnorm_stream_f16");
    kp_tensor part_slot = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){4, 8202}, 0);
    part_slot.layout.strides[0] = 8204;
    LAUNCHES(kp_rmsnorm(stream, &part_slot, &part_slot, NULL, 1e-6f), 1, "rmsnorm_stream_f32");
    /* two rows still split, clusters or not */
    LAUNCHES(kp_softmax(stream, &wide_dst, &wide), 2, "softmax_split_f32");
    fake.function_cluster_blocks = 1;
    kp_tensor empty = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){0, 16}, 0);
    int before = atomic_load(&fake.launches);
    ck_assert_int_eq(kp_softmax(stream, &empty, &empty), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
}
END_TEST

START_TEST(test_rope)
{
    kp_tensor src = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 5, 8}, 0);
    kp_tensor dst = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 5, 8}, 1000);
    kp_tensor c = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){5, 4}, 2000);
    kp_tensor s = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){5, 4}, 2100);
    EXPECT(kp_rope(NULL, KP_ROPE_HALF, &dst, &src, &c, &s), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_rope(stream, (kp_rope_layout)7, &dst, &src, &c, &s), KP_ERR_INVALID_ARGUMENT,
           "layout 7 is not");
    kp_tensor r3 = unit_tensor(buf, KP_DTYPE_F32, 3, (int64_t[]){6, 5, 8}, 0), r3d = r3;
    r3d.layout.offset = 1000;
    EXPECT(kp_rope(stream, KP_ROPE_HALF, &r3d, &r3, &c, &s), KP_ERR_INVALID_ARGUMENT, "rank 4");
    kp_tensor odd = unit_tensor(buf, KP_DTYPE_F32, 4, (int64_t[]){2, 3, 5, 7}, 0), odd_d = odd;
    odd_d.layout.offset = 1000;
    EXPECT(kp_rope(stream, KP_ROPE_HALF, &odd_d, &odd, &c, &s), KP_ERR_INVALID_ARGUMENT, "must be even");
    EXPECT(kp_rope(stream, KP_ROPE_HALF, &dst, &src, NULL, &s), KP_ERR_INVALID_ARGUMENT,
           "cos_table is NULL");
    kp_tensor c_thd = c;  /* (5, 4) does not fit THD's t = 3 */
    EXPECT(kp_rope(stream, KP_ROPE_THD, &dst, &src, &c_thd, &s), KP_ERR_INVALID_ARGUMENT,
           "cos_table must have shape (3, 4)");
    kp_tensor s16 = s;
    s16.dtype = KP_DTYPE_F16;
    EXPECT(kp_rope(stream, KP_ROPE_HALF, &dst, &src, &c, &s16), KP_ERR_INVALID_ARGUMENT,
           "sin_table is f16");
    kp_tensor c_in_dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){5, 4}, 1010);
    EXPECT(kp_rope(stream, KP_ROPE_HALF, &dst, &src, &c_in_dst, &s), KP_ERR_INVALID_ARGUMENT,
           "dst overlaps cos_table");
    fake_env_assert_untouched();
    LAUNCHES(kp_rope(stream, KP_ROPE_INTERLEAVED, &dst, &src, &c, &s), 1, "rope_f32");
    LAUNCHES(kp_rope(stream, KP_ROPE_HALF, &src, &src, &c, &s), 1, "rope_f32");
    kp_tensor cb = unit_tensor(buf, KP_DTYPE_F32, 3, (int64_t[]){2, 5, 4}, 3000);
    LAUNCHES(kp_rope(stream, KP_ROPE_HALF, &dst, &src, &cb, &cb), 1, "rope_f32");
}
END_TEST

#define EXPECT_DIMS(gx, gy, bx)                                                                  \
    do {                                                                                          \
        ck_assert_uint_eq(fake.last_dims.grid[0], (gx));                                          \
        ck_assert_uint_eq(fake.last_dims.grid[1], (gy));                                          \
        ck_assert_uint_eq(fake.last_dims.block[0], (bx));                                         \
    } while (0)

/* The shapes the performance targets are stated for take the fast paths:
 * sums of rows of 4096 get 32 lanes (f32, 8 rows per block) or 16 lanes
 * (bf16, 16 rows per block) with 32 loads of 16 bytes per lane, a full
 * reduction is split into one block per resident slot (4 multiprocessors x
 * 8 here) and combined by one final block, and the row ops keep a row of
 * 4096 in the registers of one block (4 slots of 16 bytes per thread: 256
 * threads for f32, 128 for bf16) in the exact-fit kernels. */
START_TEST(test_fast_path_geometry)
{
    kp_buffer *big = NULL;
    ck_assert_int_eq(kp_buffer_alloc(dev, ((size_t)1 << 30) + ((size_t)1 << 20), &big), KP_OK);  /* untouched */
    kp_tensor rows = {big, KP_DTYPE_F32, {0}}, sums = {big, KP_DTYPE_F32, {0}};
    ck_assert_int_eq(kp_layout_contiguous(&rows.layout, 2, (int64_t[]){65536, 4096}), KP_OK);
    ck_assert_int_eq(kp_layout_contiguous(&sums.layout, 2, (int64_t[]){65536, 1}), KP_OK);
    rows.layout.shape[0] = 65535;  /* leave room for the outputs at the end */
    sums.layout.shape[0] = 65535;
    sums.layout.offset = 65535 * 4096;
    LAUNCHES(kp_reduce(stream, KP_REDUCE_SUM, &sums, &rows, (int[]){1}, 1), 1, "reduce_sum_f32");
    EXPECT_DIMS(8192, 1, 256);
    LAUNCHES(kp_reduce(stream, KP_REDUCE_MAX, &sums, &rows, (int[]){1}, 1), 1, "reduce_max_f32");
    EXPECT_DIMS(8192, 1, 256);
    kp_tensor brows = rows, bsums = sums;
    brows.dtype = bsums.dtype = KP_DTYPE_BF16;
    LAUNCHES(kp_reduce(stream, KP_REDUCE_SUM, &bsums, &brows, (int[]){1}, 1), 1, "reduce_sum_bf16");
    EXPECT_DIMS(4096, 1, 256);
    /* over the middle dim of (8, 1024, 1024): 16 bytes of outputs a thread,
     * the 1024 reduced elements in 2 slices across the block (16 blocks, 3
     * or more a multiprocessor);
     * over the outer dim of (8, 4096, 64) bf16: outputs enough for 128 blocks */
    kp_tensor cube = {big, KP_DTYPE_F32, {0}}, mid = {big, KP_DTYPE_F32, {0}};
    ck_assert_int_eq(kp_layout_contiguous(&cube.layout, 3, (int64_t[]){8, 1024, 1024}), KP_OK);
    ck_assert_int_eq(kp_layout_contiguous(&mid.layout, 3, (int64_t[]){8, 1, 1024}), KP_OK);
    mid.layout.offset = 8 * 1024 * 1024;
    LAUNCHES(kp_reduce(stream, KP_REDUCE_SUM, &mid, &cube, (int[]){1}, 1), 1, "reduce_cols_sum_f32");
    EXPECT_DIMS(16, 1, 128);
    ck_assert_uint_eq(fake.last_dims.block[1], 2);
    kp_tensor bcube = {big, KP_DTYPE_BF16, {0}}, bfirst = {big, KP_DTYPE_BF16, {0}};
    ck_assert_int_eq(kp_layout_contiguous(&bcube.layout, 3, (int64_t[]){8, 4096, 64}), KP_OK);
    ck_assert_int_eq(kp_layout_contiguous(&bfirst.layout, 3, (int64_t[]){1, 4096, 64}), KP_OK);
    bfirst.layout.offset = 8 * 4096 * 64;
    LAUNCHES(kp_reduce(stream, KP_REDUCE_MAX, &bfirst, &bcube, (int[]){0}, 1), 1, "reduce_cols_max_bf16");
    EXPECT_DIMS(128, 1, 256);
    ck_assert_uint_eq(fake.last_dims.block[1], 1);
    kp_tensor flat = {big, KP_DTYPE_F32, {0}}, one = {big, KP_DTYPE_F32, {0}};
    ck_assert_int_eq(kp_layout_contiguous(&flat.layout, 1, (int64_t[]){(int64_t)1 << 27}), KP_OK);
    ck_assert_int_eq(kp_layout_contiguous(&one.layout, 1, (int64_t[]){1}), KP_OK);
    one.layout.offset = (int64_t)1 << 27;
    int before = atomic_load(&fake.launches);
    ck_assert_int_eq(kp_reduce(stream, KP_REDUCE_SUM, &one, &flat, (int[]){0}, 1), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches) - before, 2);
    ck_assert_str_eq(fake.last_kernel, "reduce_final_sum_f32");
    EXPECT_DIMS(1, 1, 256);
    kp_tensor half = rows;
    half.layout.shape[0] = 32767;
    kp_tensor out = half;
    out.layout.offset = 32768 * 4096;
    LAUNCHES(kp_softmax(stream, &out, &half), 1, "softmax_exact_f32");
    EXPECT_DIMS(32767, 1, 256);
    LAUNCHES(kp_rmsnorm(stream, &out, &half, NULL, 1e-6f), 1, "rmsnorm_exact_f32");
    EXPECT_DIMS(32767, 1, 256);
    kp_tensor bhalf = half, bout = out;
    bhalf.dtype = bout.dtype = KP_DTYPE_BF16;
    LAUNCHES(kp_layernorm(stream, &bout, &bhalf, NULL, NULL, 1e-6f), 1, "layernorm_exact_bf16");
    EXPECT_DIMS(32767, 1, 128);
    kp_buffer_destroy(&big);
}
END_TEST

START_TEST(test_two_pass_scratch_survives_streams)
{
    /* Each stream gets its own scratch area on first use; destroying a
     * stream frees it (no leak or double free under the fake backend). */
    kp_stream *second = NULL;
    ck_assert_int_eq(kp_stream_create(dev, &second), KP_OK);
    kp_tensor vec = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){12000}, 0);
    kp_tensor one = unit_tensor(buf, KP_DTYPE_F32, 1, (int64_t[]){1}, 12000);
    int first[1] = {0};
    LAUNCHES(kp_reduce(second, KP_REDUCE_SUM, &one, &vec, first, 1), 2, "reduce_final_sum_f32");
    LAUNCHES(kp_reduce(second, KP_REDUCE_MIN, &one, &vec, first, 1), 2, "reduce_final_min_f32");
    LAUNCHES(kp_reduce(stream, KP_REDUCE_MAX, &one, &vec, first, 1), 2, "reduce_final_max_f32");
    kp_stream_destroy(&second);
    ck_assert_ptr_null(second);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reduce");
    TCase *tc = tcase_create("core");
    /* test_fast_path_geometry's 1 GiB buffer is host memory that meson's
     * MALLOC_PERTURB_ fills: about a second alone, past Check's default 4 s
     * when the machine is busy compiling. */
    tcase_set_timeout(tc, 30);
    tcase_add_checked_fixture(tc, setup, fake_env_teardown);
    tcase_add_test(tc, test_reduce_rejects_bad_arguments);
    tcase_add_test(tc, test_reduce_plans);
    tcase_add_test(tc, test_rows_reject_bad_arguments);
    tcase_add_test(tc, test_rows_plans);
    tcase_add_test(tc, test_rows_exact_groups_by_wave);
    tcase_add_test(tc, test_rope);
    tcase_add_test(tc, test_fast_path_geometry);
    tcase_add_test(tc, test_two_pass_scratch_survives_streams);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

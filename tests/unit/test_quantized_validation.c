/* The quantized products with the fake backend: which kernels
 * kp_quantized_matmul and kp_quantized_moe launch, on what grid, and that
 * every bad argument is refused with a message before anything launches;
 * and which layouts kp_dequantize streams in tiles. */
#include <stdatomic.h>

#include "unit_util.h"
#include "kp_quant_abi.h"

static kp_device *dev;
static kp_stream *stream;
static kp_buffer *buf, *ws;

static void setup(void)
{
    char arch[64];
    built_arch(arch, sizeof(arch));
    fake_install(arch);  /* 4 multiprocessors */
    ck_assert_int_eq(kp_device_open(0, &dev), KP_OK);
    ck_assert_int_eq(kp_stream_create(dev, &stream), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 1 << 22, &buf), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 1 << 22, &ws), KP_OK);
}

static void teardown(void)
{
    kp_buffer_destroy(&ws);
    kp_buffer_destroy(&buf);
    kp_stream_destroy(&stream);
    kp_device_close(&dev);
    kp_backend_override(NULL);
}

#define W_OFF 0            /* bytes: the quantized matrix */
#define X_OFF 400000       /* elements of f32 from here on */
#define DST_OFF 600000
#define IDS_OFF 900000

static int launches(void)
{
    return atomic_load(&fake.launches);
}

/* dst = w x through kp_quantized_matmul for a Q4_0 w of `rows` x 256: the
 * kernel launched last and the number of launches. */
static void expect_matmul(int64_t rows, int64_t batch, const char *kernel, int n_launches,
                          unsigned grid_x, unsigned grid_y)
{
    kp_qmatrix w;
    ck_assert_int_eq(kp_qmatrix_packed(&w, buf, W_OFF, KP_QFORMAT_Q4_0, rows, 256), KP_OK);
    kp_tensor x = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){batch, 256}, X_OFF);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){batch, rows}, DST_OFF);
    int before = launches();
    ck_assert_int_eq(kp_quantized_matmul(stream, &d, &w, &x, ws), KP_OK);
    ck_assert_int_eq(launches() - before, n_launches);
    ck_assert_str_eq(fake.last_kernel, kernel);
    ck_assert_uint_eq(fake.last_dims.grid[0], grid_x);
    ck_assert_uint_eq(fake.last_dims.grid[1], grid_y);
}

START_TEST(test_matmul_paths)
{
    /* up to 8 batch rows: the activations, then the mat-vec */
    expect_matmul(100, 1, "qmatvec_q4_0_b1", 2, 100 / KP_QMV_ROWS_FOR(KP_QF_Q4_0, 1), 1);
    /* 9..16: the mat-vec 8 rows a launch where the small tiles (32 weight
     * rows x 16 batch rows) would not give each of the 4 multiprocessors two
     * blocks, else the small tile */
    expect_matmul(100, 12, "qmatvec_q4_0_b4", 3, 25, 1);
    expect_matmul(100, 16, "qmatvec_q4_0_b8", 3, 25, 1);
    expect_matmul(300, 9, "qmatmul_q4_0_n16", 2, 10, 1);
    expect_matmul(300, 16, "qmatmul_q4_0_n16", 2, 10, 1);
    /* ... but the dp4a mat-mat (static stages) keeps the mat-vec */
    fake.function_static_shared = 2 * KP_QMM_ACT_STAGE_BYTES(KP_QMM_NB_SMALL);
    expect_matmul(300, 12, "qmatvec_q4_0_b4", 3, 75, 1);
    fake.function_static_shared = 0;
    /* larger: 64 x 64 where those tiles fill three quarters of the
     * multiprocessors (3 of 4), else the small tile */
    expect_matmul(300, 200, "qmatmul_q4_0_n64", 2, 5, 4);
    expect_matmul(300, 20, "qmatmul_q4_0_n64", 2, 5, 1);
    expect_matmul(192, 20, "qmatmul_q4_0_n64", 2, 3, 1);
    expect_matmul(128, 20, "qmatmul_q4_0_n16", 2, 4, 2);  /* 2 large tiles: too few */
    expect_matmul(60, 100, "qmatmul_q4_0_n16", 2, 2, 7);  /* 1 x 2 */
    ck_assert_uint_eq(fake.last_dims.block[0], KP_QMM_BLOCK);
}
END_TEST

/* The activation launch's interleave flag (the first launch of a call). */
static int launches_seen;
static int64_t act_interleave;
static void record_act(void **args)
{
    if (launches_seen++ == 0)
        act_interleave = ((const struct kp_qmv_act_args *)args[0])->interleave;
}

/* The mat-vec kernels' paths through kp_quantized_matmul (which takes up to
 * 16 batch rows there, 8 a launch) for 100 rows of Q4_0: the kernel of the
 * last launch, its block size and grid, and whether the activations were
 * interleaved, when the loaded batch-8 kernel's launch bound is
 * max_threads. The tensor-core kernel (KP_QMV_MMA_BLOCK) takes 16 rows a
 * block of that many threads and interleaved activations; any other,
 * KP_QMV_ROWS_FOR rows a block of KP_QMV_BLOCK threads. */
static void expect_matvec(int max_threads, int64_t batch, const char *kernel, bool mma)
{
    kp_qmatrix w;
    ck_assert_int_eq(kp_qmatrix_packed(&w, buf, W_OFF, KP_QFORMAT_Q4_0, 100, 256), KP_OK);
    kp_tensor x = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){batch, 256}, X_OFF);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){batch, 100}, DST_OFF);
    fake.function_max_threads = max_threads;
    fake.launch_hook = record_act;
    launches_seen = 0;
    act_interleave = -1;
    ck_assert_int_eq(kp_quantized_matmul(stream, &d, &w, &x, ws), KP_OK);
    fake.launch_hook = NULL;
    ck_assert_int_eq(act_interleave, mma ? 1 : 0);
    ck_assert_str_eq(fake.last_kernel, kernel);
    ck_assert_uint_eq(fake.last_dims.block[0], mma ? KP_QMV_MMA_BLOCK : KP_QMV_BLOCK);
    ck_assert_uint_eq(fake.last_dims.grid[0], mma ? (100 + KP_QMV_MMA_ROWS - 1) / KP_QMV_MMA_ROWS
                                                  : 100 / KP_QMV_ROWS_FOR(KP_QF_Q4_0, 8));
}

START_TEST(test_matvec_b8_paths)
{
    expect_matvec(1024, 8, "qmatvec_q4_0_b8", false);
    expect_matvec(KP_QMV_BLOCK, 5, "qmatvec_q4_0_b8", false);
    expect_matvec(KP_QMV_MMA_BLOCK, 8, "qmatvec_q4_0_b8", true);
    expect_matvec(KP_QMV_MMA_BLOCK, 6, "qmatvec_q4_0_b8", true);
    expect_matvec(KP_QMV_MMA_BLOCK, 16, "qmatvec_q4_0_b8", true);  /* two launches of 8 */
    /* 4 rows or fewer take the b4 kernel: nothing is interleaved */
    expect_matvec(KP_QMV_MMA_BLOCK, 4, "qmatvec_q4_0_b4", false);
}
END_TEST

START_TEST(test_matmul_rejects)
{
    kp_qmatrix w;
    ck_assert_int_eq(kp_qmatrix_packed(&w, buf, W_OFF, KP_QFORMAT_Q4_0, 100, 256), KP_OK);
    kp_tensor x = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){40, 256}, X_OFF);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){40, 100}, DST_OFF);
    int before = launches();
    EXPECT(kp_quantized_matmul(stream, &d, &w, &x, NULL), KP_ERR_INVALID_ARGUMENT,
           "see kp_quantized_matmul_workspace_size");
    kp_tensor bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){40, 99}, DST_OFF);
    EXPECT(kp_quantized_matmul(stream, &bad, &w, &x, ws), KP_ERR_INVALID_ARGUMENT, "do not fit w");
    bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){40, 100}, X_OFF + 5000);  /* overlaps x */
    EXPECT(kp_quantized_matmul(stream, &bad, &w, &x, ws), KP_ERR_INVALID_ARGUMENT, "x");
    size_t bytes;
    EXPECT(kp_quantized_matmul_workspace_size(0, 256, &bytes), KP_ERR_INVALID_ARGUMENT, "outside 1..");
    EXPECT(kp_quantized_matmul_workspace_size(KP_QMATMUL_MAX_BATCH + 1, 256, &bytes),
           KP_ERR_INVALID_ARGUMENT, "outside 1..");
    /* the kernels number a row's 32-element items with 32-bit integers */
    const int64_t widest = (int64_t)INT32_MAX * 32;
    ck_assert_int_eq(kp_quantized_matvec_workspace_size(1, widest, &bytes), KP_OK);
    EXPECT(kp_quantized_matvec_workspace_size(1, widest + 32, &bytes), KP_ERR_INVALID_ARGUMENT,
           "at most 68719476704 are supported");
    EXPECT(kp_quantized_moe_workspace_size(1, 1, 1, widest + 32, &bytes), KP_ERR_INVALID_ARGUMENT,
           "at most 68719476704 are supported");
    ck_assert_int_eq(launches(), before);
    ck_assert_int_eq(kp_quantized_matmul_workspace_size(40, 256, &bytes), KP_OK);
    ck_assert_uint_ge(bytes, 40 * 256);
}
END_TEST

/* kp_quantized_moe with n_experts Q4_0 experts of 8 x 256, tokens x k u32
 * ids and x per token. */
static kp_status moe(int64_t tokens, int64_t k, int64_t n_experts, kp_buffer *workspace)
{
    kp_qmatrix e;
    ck_assert_int_eq(kp_qmatrix_packed(&e, buf, W_OFF, KP_QFORMAT_Q4_0, 8 * n_experts, 256), KP_OK);
    kp_tensor ids = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){tokens, k}, IDS_OFF);
    kp_tensor x = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){tokens, 256}, X_OFF);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F32, 3, (int64_t[]){tokens, k, 8}, DST_OFF);
    return kp_quantized_moe(stream, &d, &e, n_experts, &ids, &x, workspace, NULL);
}

START_TEST(test_moe_paths)
{
    /* few pairs per expert: the activations, then a pair a block row */
    int before = launches();
    ck_assert_int_eq(moe(1, 2, 4, ws), KP_OK);
    ck_assert_int_eq(launches() - before, 2);
    ck_assert_str_eq(fake.last_kernel, "qmoe_q4_0");
    ck_assert_uint_eq(fake.last_dims.grid[0], 8 / KP_QMOE_ROWS);  /* 8 rows, KP_QMOE_ROWS a block */
    ck_assert_uint_eq(fake.last_dims.grid[1], 2);
    /* 4+ pairs per expert: activations, the lists, then the tiles of pairs
     * (at most pairs / 16 + experts of them) */
    before = launches();
    ck_assert_int_eq(moe(40, 2, 4, ws), KP_OK);
    ck_assert_int_eq(launches() - before, 3);
    ck_assert_str_eq(fake.last_kernel, "qmoe_mm_q4_0_n16");
    ck_assert_uint_eq(fake.last_dims.grid[1], 80 / 16 + 4);
    /* more than 32 a expert: the large tile */
    ck_assert_int_eq(moe(300, 2, 4, ws), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "qmoe_mm_q4_0_n64");
    ck_assert_uint_eq(fake.last_dims.grid[1], (600 + 63) / 64 + 4);
    /* no tokens: nothing */
    before = launches();
    ck_assert_int_eq(moe(0, 2, 4, ws), KP_OK);
    ck_assert_int_eq(launches(), before);
}
END_TEST

/* The mat-mat's dynamic shared memory follows the loaded kernel: the
 * tensor-core form, with too little static shared memory for its stages,
 * gets KP_QMM_SHARED_BYTES for its format and tile; the dp4a form, whose
 * stages are static, none. So does the mixture-of-experts tile's. */
START_TEST(test_matmul_shared_memory)
{
    const unsigned q4_0_large = KP_QMM_SHARED_BYTES(32, 18, KP_QMM_NB_LARGE);
    const unsigned q4_0_small = KP_QMM_SHARED_BYTES(32, 18, KP_QMM_NB_SMALL);
    ck_assert_uint_eq(q4_0_large, 2 * (KP_QMM_ITEMS * 64 * 40 + 64 * 80));  /* 80-byte rows of 72-byte units */
    fake.function_static_shared = 0;
    expect_matmul(300, 200, "qmatmul_q4_0_n64", 2, 5, 4);
    ck_assert_uint_eq(fake.last_dims.shared_bytes, q4_0_large);
    expect_matmul(100, 20, "qmatmul_q4_0_n16", 2, 4, 2);
    ck_assert_uint_eq(fake.last_dims.shared_bytes, q4_0_small);
    fake.function_static_shared = 1024;  /* the MoE tile's own lists of its pairs */
    ck_assert_int_eq(moe(300, 2, 4, ws), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "qmoe_mm_q4_0_n64");
    ck_assert_uint_eq(fake.last_dims.shared_bytes, q4_0_large);
    /* the least a dp4a kernel has: its large tile runs small tiles' stages */
    fake.function_static_shared = 2 * KP_QMM_ACT_STAGE_BYTES(KP_QMM_NB_SMALL);
    expect_matmul(300, 200, "qmatmul_q4_0_n64", 2, 5, 4);
    ck_assert_uint_eq(fake.last_dims.shared_bytes, 0);
    ck_assert_int_eq(moe(300, 2, 4, ws), KP_OK);
    ck_assert_uint_eq(fake.last_dims.shared_bytes, 0);
    fake.function_static_shared = 0;
}
END_TEST

/* kp_dequantize of a 64 x 512 matrix of format f at byte `off` past a
 * 16-byte boundary of the buffer, rows `pad` bytes apart beyond their own,
 * into f16 dst (contiguous or transposed): the tiled kernel takes a block a
 * tile of KP_DEQUANT_TILE elements and the tile's quantized bytes of
 * dynamic shared memory; the per-group kernel none. */
static int32_t deq_tiled;
static void record_deq(void **args)
{
    deq_tiled = ((const struct kp_qdequant_args *)args[0])->tiled;
}

static void expect_dequant(kp_qformat f, size_t off, size_t pad, bool transposed, bool tiled)
{
    const int64_t rows = 64, cols = 512;
    kp_qformat_info info;
    ck_assert_int_eq(kp_qformat_get_info(f, &info), KP_OK);
    const size_t row_bytes = (size_t)cols / info.block_elems * info.block_bytes;
    const size_t base = (16 - (uintptr_t)buf->ptr % 16) % 16;
    kp_qmatrix w = {buf, base + off, f, rows, cols, row_bytes + pad};
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F16, 2, (int64_t[]){rows, cols}, (int64_t)(DST_OFF + base / 2));
    if (transposed) {
        d.layout.strides[0] = 1;
        d.layout.strides[1] = rows;
    }
    fake.launch_hook = record_deq;
    deq_tiled = -1;
    ck_assert_int_eq(kp_dequantize(stream, &d, &w), KP_OK);
    fake.launch_hook = NULL;
    ck_assert_int_eq(deq_tiled, tiled);
    ck_assert_uint_eq(fake.last_dims.block[0], KP_QUANT_BLOCK);
    if (tiled) {
        ck_assert_uint_eq(fake.last_dims.grid[0], rows * cols / KP_DEQUANT_TILE);
        ck_assert_uint_eq(fake.last_dims.shared_bytes, KP_DEQUANT_TILE_BYTES(info.block_elems, info.block_bytes));
    } else {
        ck_assert_uint_eq(fake.last_dims.shared_bytes, 0);
    }
}

START_TEST(test_dequantize_paths)
{
    expect_dequant(KP_QFORMAT_Q4_0, 0, 0, false, true);
    expect_dequant(KP_QFORMAT_Q6_K, 0, 0, false, true);
    expect_dequant(KP_QFORMAT_Q6_K, 32, 0, false, true);   /* still on a 16-byte boundary */
    expect_dequant(KP_QFORMAT_Q4_0, 2, 0, false, false);   /* src off the boundary */
    expect_dequant(KP_QFORMAT_Q4_0, 0, 16, false, false);  /* rows not back to back */
    expect_dequant(KP_QFORMAT_Q4_0, 0, 0, true, false);    /* dst transposed */
}
END_TEST

START_TEST(test_moe_rejects)
{
    int before = launches();
    kp_qmatrix e;
    ck_assert_int_eq(kp_qmatrix_packed(&e, buf, W_OFF, KP_QFORMAT_Q4_0, 32, 256), KP_OK);
    kp_tensor ids = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){3, 2}, IDS_OFF);
    kp_tensor x = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){3, 256}, X_OFF);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F32, 3, (int64_t[]){3, 2, 8}, DST_OFF);
    EXPECT(kp_quantized_moe(stream, &d, &e, 3, &ids, &x, ws, NULL), KP_ERR_INVALID_ARGUMENT,
           "do not divide evenly");
    EXPECT(kp_quantized_moe(stream, &d, &e, 0, &ids, &x, ws, NULL), KP_ERR_INVALID_ARGUMENT,
           "do not divide evenly");
    kp_tensor bad = ids;
    bad.dtype = KP_DTYPE_F32;
    EXPECT(kp_quantized_moe(stream, &d, &e, 4, &bad, &x, ws, NULL), KP_ERR_INVALID_ARGUMENT,
           "must be u32 or i64");
    bad = unit_tensor(buf, KP_DTYPE_U32, 1, (int64_t[]){6}, IDS_OFF);
    EXPECT(kp_quantized_moe(stream, &d, &e, 4, &bad, &x, ws, NULL), KP_ERR_INVALID_ARGUMENT,
           "must be (tokens, k)");
    bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){2, 256}, X_OFF);
    EXPECT(kp_quantized_moe(stream, &d, &e, 4, &ids, &bad, ws, NULL), KP_ERR_INVALID_ARGUMENT,
           "x has shape [2, 256]");
    bad = unit_tensor(buf, KP_DTYPE_F32, 3, (int64_t[]){3, 2, 256}, X_OFF);
    bad.layout.strides[0] = 2 * 256 + 4;  /* tokens apart by more than k slots */
    EXPECT(kp_quantized_moe(stream, &d, &e, 4, &ids, &bad, ws, NULL), KP_ERR_INVALID_ARGUMENT,
           "token stride");
    bad = unit_tensor(buf, KP_DTYPE_F32, 3, (int64_t[]){3, 2, 7}, DST_OFF);
    EXPECT(kp_quantized_moe(stream, &bad, &e, 4, &ids, &x, ws, NULL), KP_ERR_INVALID_ARGUMENT, "dst");
    EXPECT(kp_quantized_moe(stream, &d, &e, 4, &ids, &x, NULL, NULL), KP_ERR_INVALID_ARGUMENT,
           "see kp_quantized_moe_workspace_size");
    ck_assert_int_eq(launches(), before);

    size_t bytes, act;
    EXPECT(kp_quantized_moe_workspace_size(3, 2, 0, 256, &bytes), KP_ERR_INVALID_ARGUMENT,
           "experts >= 1");
    EXPECT(kp_quantized_moe_workspace_size(3, 2, 4, 100, &bytes), KP_ERR_INVALID_ARGUMENT,
           "multiple of 32");
    ck_assert_int_eq(kp_quantized_moe_workspace_size(3, 2, 4, 256, &bytes), KP_OK);
    ck_assert_int_eq(kp_quantized_matmul_workspace_size(6, 256, &act), KP_OK);
    /* the activations of every pair, then the lists */
    ck_assert_uint_ge(bytes, act + 4 * (size_t)KP_QMOE_GROUP_INTS(4, 6));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("quantized_validation");
    TCase *tc = tcase_create("host");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_matmul_paths);
    tcase_add_test(tc, test_matvec_b8_paths);
    tcase_add_test(tc, test_matmul_rejects);
    tcase_add_test(tc, test_moe_paths);
    tcase_add_test(tc, test_matmul_shared_memory);
    tcase_add_test(tc, test_moe_rejects);
    tcase_add_test(tc, test_dequantize_paths);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

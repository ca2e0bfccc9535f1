/* Index ops with the fake backend: bad arguments get a clear status and
 * launch nothing; valid ones launch the kernel their layouts call for; the
 * status object round-trips its device word. */
#include "fake_env.h"
#include "index_status.h"

static void setup(void)
{
    fake_env_setup(8192);
}

/* src 10x8 f32 at 0, dst 4x8 f32 at 512, ids 4 u32 at 1024 (element offsets in their dtype). */
static kp_tensor src_t(void) { return unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){10, 8}, 0); }
static kp_tensor dst_t(void) { return unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){4, 8}, 512); }
static kp_tensor ids_t(void) { return unit_tensor(buf, KP_DTYPE_U32, 1, (int64_t[]){4}, 1024); }

START_TEST(test_index_select_rejects_bad_arguments)
{
    kp_tensor s = src_t(), d = dst_t(), x = ids_t(), bad;
    EXPECT(kp_index_select(NULL, &d, &s, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_index_select(stream, NULL, &s, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT, "dst is NULL");
    EXPECT(kp_index_select(stream, &d, NULL, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT, "src is NULL");
    EXPECT(kp_index_select(stream, &d, &s, NULL, 0, NULL), KP_ERR_INVALID_ARGUMENT, "ids is NULL");
    EXPECT(kp_index_select(stream, &d, &s, &x, 2, NULL), KP_ERR_INVALID_ARGUMENT,
           "dim 2 is not a dimension of src (rank 2)");
    EXPECT(kp_index_select(stream, &d, &s, &x, -1, NULL), KP_ERR_INVALID_ARGUMENT, "dim -1");
    bad = x;
    bad.dtype = KP_DTYPE_F32;
    EXPECT(kp_index_select(stream, &d, &s, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "ids are f32; they must be u8, u32 or i64");
    bad = x;
    bad.dtype = KP_DTYPE_F16;
    EXPECT(kp_index_select(stream, &d, &s, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT, "ids are f16");
    bad = d;
    bad.dtype = KP_DTYPE_F64;
    EXPECT(kp_index_select(stream, &bad, &s, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "dst is f64 but src is f32");
    bad = unit_tensor(buf, KP_DTYPE_U32, 2, (int64_t[]){2, 2}, 1024);
    EXPECT(kp_index_select(stream, &d, &s, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "ids must have rank 1, not 2");
    bad = unit_tensor(buf, KP_DTYPE_U32, 1, (int64_t[]){5}, 1024);
    EXPECT(kp_index_select(stream, &d, &s, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "dst shape must be src's with the ids' length 5 at dim 0");
    bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){4, 7}, 512);
    EXPECT(kp_index_select(stream, &bad, &s, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "dst shape must be src's");
    bad = unit_tensor(buf, KP_DTYPE_F32, 3, (int64_t[]){4, 8, 1}, 512);
    EXPECT(kp_index_select(stream, &bad, &s, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "dst has rank 3 but src has rank 2");
    bad = x;
    bad.buffer = small;
    EXPECT(kp_index_select(stream, &d, &s, &bad, 0, NULL), KP_ERR_BUFFER_TOO_SMALL, "ids reaches");
    bad = s;
    bad.buffer = foreign;
    EXPECT(kp_index_select(stream, &d, &bad, &x, 0, NULL), KP_ERR_DEVICE_MISMATCH, "src buffer belongs");
    bad = x;
    bad.layout.strides[0] = -1;
    EXPECT(kp_index_select(stream, &d, &s, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT, "negative");
    /* overlaps */
    bad = d;
    bad.layout.offset = 40;  /* inside src */
    EXPECT(kp_index_select(stream, &bad, &s, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT, "dst overlaps src");
    kp_tensor ids_in_dst = unit_tensor(buf, KP_DTYPE_U32, 1, (int64_t[]){4}, 514);  /* inside d's bytes */
    EXPECT(kp_index_select(stream, &d, &s, &ids_in_dst, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "dst overlaps ids");
    bad = d;
    bad.layout.strides[0] = 0;
    EXPECT(kp_index_select(stream, &bad, &s, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT, "more than once");
    fake_env_assert_untouched();
}
END_TEST

START_TEST(test_gather_and_scatter_shapes)
{
    /* gather: ids 3x8 pick rows of the 10x8 src; dst has ids' shape */
    kp_tensor s = src_t(), x = unit_tensor(buf, KP_DTYPE_I64, 2, (int64_t[]){3, 8}, 512);
    kp_tensor d = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){3, 8}, 1536);
    kp_tensor bad = unit_tensor(buf, KP_DTYPE_I64, 2, (int64_t[]){3, 7}, 512);
    EXPECT(kp_gather(stream, &d, &s, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "ids shape must equal src's except at dim 0");
    bad = unit_tensor(buf, KP_DTYPE_I64, 1, (int64_t[]){3}, 512);
    EXPECT(kp_gather(stream, &d, &s, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT, "ids shape must equal");
    bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){4, 8}, 1536);
    EXPECT(kp_gather(stream, &bad, &s, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT, "dst and ids shapes differ");
    EXPECT(kp_gather(stream, &d, &s, &x, 1, NULL), KP_ERR_INVALID_ARGUMENT, "except at dim 1");

    /* scatter family: dst 10x8 is indexed; src and ids 3x8 */
    kp_tensor dst = src_t(), src = d;
    EXPECT(kp_scatter(stream, &dst, &src, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT, "ids are f32");
    bad = unit_tensor(buf, KP_DTYPE_I64, 2, (int64_t[]){2, 8}, 512);
    EXPECT(kp_scatter_add(stream, &dst, &src, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "src and ids shapes differ");
    bad = unit_tensor(buf, KP_DTYPE_I64, 2, (int64_t[]){3, 9}, 512);
    EXPECT(kp_scatter(stream, &dst, &src, &bad, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "ids shape must equal dst's except at dim 0");
    EXPECT(kp_scatter(stream, &dst, &src, &x, 3, NULL), KP_ERR_INVALID_ARGUMENT,
           "dim 3 is not a dimension of dst");
    kp_tensor src_in_ids = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){3, 8}, 1030);  /* x spans f32 1024..1071 */
    kp_tensor far_dst = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){10, 8}, 1200);
    ck_assert_int_eq(kp_scatter(stream, &far_dst, &src_in_ids, &x, 0, NULL), KP_OK);  /* inputs may overlap */
    kp_tensor dst_on_ids = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){10, 8}, 1000);
    EXPECT(kp_scatter(stream, &dst_on_ids, &src, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT, "dst overlaps ids");

    /* index_add: rank-1 ids; src has dst's shape with the ids' length at dim */
    kp_tensor ids4 = ids_t(), src4 = dst_t();
    bad = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){5, 8}, 512);
    EXPECT(kp_index_add(stream, &dst, &bad, &ids4, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "src shape must be dst's with the ids' length 4 at dim 0");
    EXPECT(kp_index_add(stream, &dst, &src4, &x, 0, NULL), KP_ERR_INVALID_ARGUMENT,
           "ids must have rank 1, not 2");
    ck_assert_int_eq(atomic_load(&fake.launches), 1);
}
END_TEST

START_TEST(test_kernel_choice)
{
    kp_tensor s = src_t(), d = dst_t(), x = ids_t();
    ck_assert_int_eq(kp_index_select(stream, &d, &s, &x, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "copy_rows_u32_x32");
    /* dim 1: rows of one element, still the row path */
    kp_tensor d1 = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){10, 4}, 512);
    ck_assert_int_eq(kp_index_select(stream, &d1, &s, &x, 1, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "copy_rows_u32_x32");
    /* strided ids and a padded dst keep the row path */
    kp_tensor xs = x;
    xs.layout.strides[0] = 3;
    kp_tensor dp = d;
    dp.layout.strides[0] = 9;
    ck_assert_int_eq(kp_index_select(stream, &dp, &s, &xs, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "copy_rows_u32_x32");
    /* a transposed src does not: element-wise gather */
    kp_tensor st = s;
    st.layout.strides[0] = 1;
    st.layout.strides[1] = 10;
    ck_assert_int_eq(kp_index_select(stream, &d, &st, &x, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "gather_u32_x32");
    /* 3-D with dims before dim that do not collapse */
    kp_tensor s3 = unit_tensor(buf, KP_DTYPE_BF16, 3, (int64_t[]){3, 4, 5}, 0);
    kp_tensor d3 = unit_tensor(buf, KP_DTYPE_BF16, 3, (int64_t[]){3, 4, 2}, 2048);
    kp_tensor x8 = unit_tensor(buf, KP_DTYPE_U8, 1, (int64_t[]){2}, 6000);
    s3.layout.strides[0] = 21;
    ck_assert_int_eq(kp_index_select(stream, &d3, &s3, &x8, 2, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "gather_u8_x16");
    s3.layout.strides[0] = 20;
    ck_assert_int_eq(kp_index_select(stream, &d3, &s3, &x8, 2, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "copy_rows_u8_x16");

    kp_tensor g_ids = unit_tensor(buf, KP_DTYPE_I64, 2, (int64_t[]){3, 8}, 512);
    kp_tensor g_dst = unit_tensor(buf, KP_DTYPE_F64, 2, (int64_t[]){3, 8}, 768);
    kp_tensor g_src = unit_tensor(buf, KP_DTYPE_F64, 2, (int64_t[]){10, 8}, 0);
    ck_assert_int_eq(kp_gather(stream, &g_dst, &g_src, &g_ids, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "gather_i64_x64");
    /* gather with ids constant along rows (stride 0 after dim): row copies */
    kp_tensor g_rows = g_ids;
    g_rows.layout.strides[0] = 1;
    g_rows.layout.strides[1] = 0;
    ck_assert_int_eq(kp_gather(stream, &g_dst, &g_src, &g_rows, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "copy_rows_i64_x64");
    kp_tensor g_cols = g_src;  /* a column-major src: no rows to copy */
    g_cols.layout.strides[0] = 1;
    g_cols.layout.strides[1] = 10;
    ck_assert_int_eq(kp_gather(stream, &g_dst, &g_cols, &g_rows, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "gather_i64_x64");
    ck_assert_int_eq(kp_scatter(stream, &g_src, &g_dst, &g_ids, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "scatter_i64_x64");
    ck_assert_int_eq(kp_scatter(stream, &g_src, &g_dst, &g_rows, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "copy_rows_i64_x64");
    ck_assert_int_eq(kp_scatter_add(stream, &g_src, &g_dst, &g_rows, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "add_rows_i64_f64");  /* row additions */
    ck_assert_int_eq(kp_scatter_add(stream, &g_src, &g_dst, &g_ids, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "scatter_add_i64_f64");
    kp_tensor u8_dst = unit_tensor(buf, KP_DTYPE_U8, 2, (int64_t[]){10, 8}, 0);
    kp_tensor u8_src = unit_tensor(buf, KP_DTYPE_U8, 2, (int64_t[]){4, 8}, 200);
    ck_assert_int_eq(kp_index_add(stream, &u8_dst, &u8_src, &x, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "add_rows_u32_u8");
    kp_tensor u8_cols = u8_src;  /* a column-major src: element-wise additions */
    u8_cols.layout.strides[0] = 1;
    u8_cols.layout.strides[1] = 4;
    ck_assert_int_eq(kp_index_add(stream, &u8_dst, &u8_cols, &x, 0, NULL), KP_OK);
    ck_assert_str_eq(fake.last_kernel, "scatter_add_u32_u8");

    /* empty work launches nothing */
    int before = atomic_load(&fake.launches);
    kp_tensor x0 = unit_tensor(buf, KP_DTYPE_U32, 1, (int64_t[]){0}, 1024);
    kp_tensor d0 = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){0, 8}, 512);
    ck_assert_int_eq(kp_index_select(stream, &d0, &s, &x0, 0, NULL), KP_OK);
    ck_assert_int_eq(kp_index_add(stream, &s, &d0, &x0, 0, NULL), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), before);
    /* an empty indexed dim with ids still launches: every id is out of range */
    kp_tensor s0 = unit_tensor(buf, KP_DTYPE_F32, 2, (int64_t[]){0, 8}, 0);
    ck_assert_int_eq(kp_index_select(stream, &d, &s0, &x, 0, NULL), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), before + 1);
}
END_TEST

START_TEST(test_status_object)
{
    kp_index_status *status = NULL, *foreign_status = NULL;
    kp_index_report r = {true, 7};
    EXPECT(kp_index_status_create(NULL, &status), KP_ERR_INVALID_ARGUMENT, "device is NULL");
    EXPECT(kp_index_status_create(dev, NULL), KP_ERR_INVALID_ARGUMENT, "out is NULL");
    ck_assert_int_eq(kp_index_status_create(dev, &status), KP_OK);
    ck_assert_int_eq(kp_index_status_create(other_dev, &foreign_status), KP_OK);
    ck_assert_int_eq(kp_index_status_read(stream, status, &r), KP_OK);
    ck_assert(!r.out_of_range);
    ck_assert_uint_eq(r.first_position, 0);

    /* The kernels store ~position; position 0 must still read as an error. */
    uint64_t *word = kp_index_status_word(status);
    *word = ~(uint64_t)0;
    ck_assert_int_eq(kp_index_status_read(stream, status, &r), KP_OK);
    ck_assert(r.out_of_range);
    ck_assert_uint_eq(r.first_position, 0);
    *word = ~(uint64_t)12345;
    ck_assert_int_eq(kp_index_status_read(stream, status, &r), KP_OK);
    ck_assert(r.out_of_range);
    ck_assert_uint_eq(r.first_position, 12345);
    ck_assert_int_eq(kp_index_status_clear(stream, status), KP_OK);
    ck_assert_uint_eq(*word, 0);

    EXPECT(kp_index_status_read(stream, NULL, &r), KP_ERR_INVALID_ARGUMENT, "status is NULL");
    EXPECT(kp_index_status_read(stream, status, NULL), KP_ERR_INVALID_ARGUMENT, "report is NULL");
    EXPECT(kp_index_status_clear(NULL, status), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    EXPECT(kp_index_status_clear(stream, foreign_status), KP_ERR_DEVICE_MISMATCH, "status belongs");
    kp_tensor s = src_t(), d = dst_t(), x = ids_t();
    EXPECT(kp_index_select(stream, &d, &s, &x, 0, foreign_status), KP_ERR_DEVICE_MISMATCH,
           "kp_index_select: status belongs");
    ck_assert_int_eq(kp_index_select(stream, &d, &s, &x, 0, status), KP_OK);
    kp_index_status_destroy(&status);
    kp_index_status_destroy(&foreign_status);
    ck_assert_ptr_null(status);
    kp_index_status_destroy(&status);  /* NULL is a no-op */
    kp_index_status_destroy(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("indexing");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, fake_env_teardown);
    tcase_add_test(tc, test_index_select_rejects_bad_arguments);
    tcase_add_test(tc, test_gather_and_scatter_shapes);
    tcase_add_test(tc, test_kernel_choice);
    tcase_add_test(tc, test_status_object);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

/* index_select bandwidth: 32768 random rows of a 65536 x 4096 f32 table
 * (16 KiB rows) must move data at >= 85% of the speed of a device-to-device
 * copy of the same size, measured in the same run. Both move 2 x 512 MiB
 * (the selected rows read, the output written). Best of several timed runs
 * each, after a warm-up. Needs about 1.6 GiB of device memory; skips if the
 * device has less. Also checks a sample of the output. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define TABLE_ROWS 65536
#define COLS 4096
#define PICKS 32768
#define RUNS 5
#define MIN_RATIO 0.85

static float best_ms(kp_event *start, kp_event *stop, int which, kp_tensor *dst, kp_tensor *table,
                     kp_tensor *ids, kp_buffer *out, kp_buffer *in, size_t bytes)
{
    float best = 1e30f;
    for (int run = -1; run < RUNS; run++) {  /* run -1 warms up */
        CK_OK(kp_event_record(start, gpu_stream));
        if (which == 0)
            CK_OK(kp_index_select(gpu_stream, dst, table, ids, 0, NULL));
        else
            CK_OK(kp_memcpy_d2d(gpu_stream, out, 0, in, 0, bytes));
        CK_OK(kp_event_record(stop, gpu_stream));
        CK_OK(kp_event_synchronize(stop));
        float ms = 0;
        CK_OK(kp_event_elapsed_ms(start, stop, &ms));
        if (run >= 0 && ms < best)
            best = ms;
    }
    return best;
}

START_TEST(test_index_select_bandwidth)
{
    const size_t row_bytes = COLS * sizeof(float);
    const size_t table_bytes = (size_t)TABLE_ROWS * row_bytes, out_bytes = (size_t)PICKS * row_bytes;
    /* Also skipped in the sanitizer runs, where no timing means anything. */
    if (gpu_skip_big("test_index_select_bandwidth", table_bytes + out_bytes + (256u << 20)))
        return;
    kp_buffer *table = NULL, *out = NULL, *ids_buf = NULL;
    CK_OK(kp_buffer_alloc(gpu_dev, table_bytes, &table));
    CK_OK(kp_buffer_alloc(gpu_dev, out_bytes, &out));
    CK_OK(kp_buffer_alloc(gpu_dev, PICKS * sizeof(uint32_t), &ids_buf));

    /* Row r of the table holds the value r everywhere, so the output is easy to check. */
    enum { CHUNK = 1024 };
    float *chunk = malloc(CHUNK * row_bytes), *row = malloc(row_bytes);
    ck_assert_ptr_nonnull(chunk);
    for (uint32_t r0 = 0; r0 < TABLE_ROWS; r0 += CHUNK) {
        for (size_t i = 0; i < (size_t)CHUNK * COLS; i++)
            chunk[i] = (float)(r0 + i / COLS);
        CK_OK(kp_memcpy_h2d(gpu_stream, table, r0 * row_bytes, chunk, CHUNK * row_bytes));
        CK_OK(kp_stream_synchronize(gpu_stream));
    }
    free(chunk);
    uint32_t *ids = malloc(PICKS * sizeof(uint32_t));
    rng_seed(5);
    for (int i = 0; i < PICKS; i++)
        ids[i] = (uint32_t)(rng_next() % TABLE_ROWS);
    CK_OK(kp_memcpy_h2d(gpu_stream, ids_buf, 0, ids, PICKS * sizeof(uint32_t)));

    kp_tensor t = {table, KP_DTYPE_F32, {0}}, d = {out, KP_DTYPE_F32, {0}};
    kp_tensor x = {ids_buf, KP_DTYPE_U32, {0}};
    CK_OK(kp_layout_contiguous(&t.layout, 2, (int64_t[]){TABLE_ROWS, COLS}));
    CK_OK(kp_layout_contiguous(&d.layout, 2, (int64_t[]){PICKS, COLS}));
    CK_OK(kp_layout_contiguous(&x.layout, 1, (int64_t[]){PICKS}));
    kp_event *start = NULL, *stop = NULL;
    CK_OK(kp_event_create(gpu_dev, &start));
    CK_OK(kp_event_create(gpu_dev, &stop));

    float select_ms = best_ms(start, stop, 0, &d, &t, &x, out, table, out_bytes);
    /* check a few rows of the index_select output before the copy overwrites it */
    for (int i = 0; i < PICKS; i += 4099) {
        CK_OK(kp_memcpy_d2h(gpu_stream, row, out, (size_t)i * row_bytes, row_bytes));
        CK_OK(kp_stream_synchronize(gpu_stream));
        for (int c = 0; c < COLS; c++)
            ck_assert_msg(row[c] == (float)ids[i], "row %d col %d: got %g want %u", i, c, row[c], ids[i]);
    }
    float copy_ms = best_ms(start, stop, 1, &d, &t, &x, out, table, out_bytes);
    double moved = 2.0 * (double)out_bytes;
    double select_gbs = moved / (select_ms * 1e-3) / 1e9, copy_gbs = moved / (copy_ms * 1e-3) / 1e9;
    double ratio = copy_ms / select_ms;
    printf("index_select %d of %d rows x %d f32: %.3f ms, %.1f GB/s; copy: %.3f ms, %.1f GB/s; "
           "ratio %.3f (need >= %.2f)\n", PICKS, TABLE_ROWS, COLS, select_ms, select_gbs, copy_ms,
           copy_gbs, ratio, MIN_RATIO);
    ck_assert_msg(ratio >= MIN_RATIO, "index_select reaches %.1f%% of copy bandwidth (%.1f vs %.1f GB/s)",
                  100 * ratio, select_gbs, copy_gbs);

    kp_event_destroy(&start);
    kp_event_destroy(&stop);
    free(row);
    free(ids);
    kp_buffer_destroy(&table);
    kp_buffer_destroy(&out);
    kp_buffer_destroy(&ids_buf);
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("indexing_perf");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_index_select_bandwidth);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}

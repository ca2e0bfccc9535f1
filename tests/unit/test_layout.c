/* Layout helpers: contiguity and dimension merging. */
#include "unit_util.h"

static kp_layout make(int rank, const int64_t *shape, const int64_t *strides)
{
    kp_layout l = {rank, {0}, {0}, 0};
    for (int d = 0; d < rank; d++) {
        l.shape[d] = shape[d];
        l.strides[d] = strides[d];
    }
    return l;
}

START_TEST(test_contiguous)
{
    kp_layout l;
    int64_t shape[3] = {2, 3, 4};
    ck_assert_int_eq(kp_layout_contiguous(&l, 3, shape), KP_OK);
    ck_assert_int_eq(l.strides[0], 12);
    ck_assert_int_eq(l.strides[2], 1);
    ck_assert(kp_layout_is_contiguous(&l));
    l.strides[0] = 13;
    ck_assert(!kp_layout_is_contiguous(&l));
    int64_t ones[2] = {1, 5};
    kp_layout odd = make(2, ones, (int64_t[]){999, 1});
    ck_assert(kp_layout_is_contiguous(&odd));  /* size-1 dims' strides don't matter */
    int64_t huge[3] = {INT64_MAX / 2, 2, 2};
    ck_assert_int_eq(kp_layout_contiguous(&l, 3, huge), KP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(kp_layout_contiguous(&l, 9, shape), KP_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_merge)
{
    int64_t shape[3] = {4, 5, 6};
    kp_layout c = make(3, shape, (int64_t[]){30, 6, 1});
    kp_layout t = make(3, shape, (int64_t[]){1, 4, 20});  /* permuted */
    kp_layout b = make(3, shape, (int64_t[]){0, 6, 1});   /* broadcast outer */
    struct kp_strided m;
    const kp_layout *one[] = {&c};
    kp_layout_merge(1, one, &m);
    ck_assert_int_eq(m.rank, 1);
    ck_assert_int_eq(m.shape[0], 120);
    const kp_layout *cb[] = {&c, &b};
    kp_layout_merge(2, cb, &m);
    ck_assert_int_eq(m.rank, 2);
    ck_assert_int_eq(m.shape[0], 4);
    ck_assert_int_eq(m.shape[1], 30);
    ck_assert_int_eq(m.stride[1][0], 0);
    const kp_layout *ct[] = {&c, &t};
    kp_layout_merge(2, ct, &m);
    ck_assert_int_eq(m.rank, 3);
    int64_t with_ones[4] = {1, 4, 1, 30};
    kp_layout u = make(4, with_ones, (int64_t[]){7, 30, 9, 1});
    const kp_layout *uu[] = {&u};
    kp_layout_merge(1, uu, &m);
    ck_assert_int_eq(m.rank, 1);
    ck_assert_int_eq(m.shape[0], 120);
}
END_TEST

START_TEST(test_dtype_names)
{
    ck_assert_str_eq(kp_dtype_name(KP_DTYPE_BF16), "bf16");
    ck_assert_uint_eq(kp_dtype_size(KP_DTYPE_I64), 8);
    ck_assert_ptr_null(kp_dtype_name(KP_DTYPE_COUNT));
    ck_assert_uint_eq(kp_dtype_size((kp_dtype)-1), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_contiguous);
    tcase_add_test(tc, test_merge);
    tcase_add_test(tc, test_dtype_names);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

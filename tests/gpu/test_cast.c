/* kp_cast on the GPU for all 49 dtype pairs and several layouts, against the
 * CPU reference of cast_ref.c. Casts are deterministic, so every element must
 * match the reference bit for bit. Sources start with special values (NaN,
 * Inf, signed zeros, rounding ties, subnormals, integer limits) followed by
 * pseudo-random ones; outputs are poisoned first and everything outside the
 * written view must keep the poison. */
#include <stdlib.h>
#include <string.h>

#include "cast_ref.h"
#include "harness.h"
#include "operands.h"

#define POISON 0xA5
#define N_DTYPES KP_DTYPE_COUNT
#define MAX_REPORTED 8

static const struct dst_src_case cases[] = {
    /* aligned bases: the 16-byte vector path plus a scalar tail */
    {"contiguous odd", 1, {20011}, {0}, {0}, 0, 0},
    /* odd offsets: unaligned, so the scalar path of the contiguous kernel */
    {"contiguous offset", 2, {33, 65}, {0}, {0}, 3, 1},
    /* src 16 bytes past a 32-byte boundary where 4-byte: narrowing casts
     * take 16-byte vectors of the input instead of 32 */
    {"contiguous half-vector offset", 1, {4099}, {0}, {0}, 8, 4},
    {"transposed src", 2, {67, 129}, {0}, {1, 67}, 0, 0},
    {"transposed dst", 2, {53, 41}, {1, 53}, {0}, 2, 0},
    {"broadcast src", 3, {4, 5, 131}, {0}, {0, 131, 1}, 0, 5},
    {"row gaps both", 3, {3, 7, 9}, {100, 12, 1}, {70, 10, 1}, 2, 7},
    {"scalar", 0, {0}, {0}, {0}, 4, 9},
    {"empty", 2, {0, 17}, {0}, {0}, 0, 0},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static void run_case(kp_dtype from, kp_dtype to, const struct dst_src_case *c)
{
    size_t es = kp_dtype_size(from), ed = kp_dtype_size(to);
    struct gpu_buf src, dst;
    kp_tensor shape_d = case_dst_tensor(&(struct gpu_buf){0}, to, c);
    kp_tensor shape_s = case_src_tensor(&(struct gpu_buf){0}, from, c);
    size_t dst_elems = (size_t)tensor_extent(&shape_d), src_elems = (size_t)tensor_extent(&shape_s);
    gpu_buf_alloc(&src, src_elems * es);
    gpu_buf_alloc(&dst, dst_elems * ed);
    size_t specials = cast_special_inputs(from, src.host, src_elems);
    cast_random_inputs(from, (unsigned char *)src.host + specials * es, src_elems - specials);
    memset(dst.host, POISON, dst.bytes);
    gpu_buf_upload(&src);
    gpu_buf_upload(&dst);
    kp_tensor s = case_src_tensor(&src, from, c);
    kp_tensor d = case_dst_tensor(&dst, to, c);

    CK_OK(kp_cast(gpu_stream, &d, &s));
    gpu_buf_download(&dst);

    unsigned char *written = calloc(dst_elems ? dst_elems : 1, 1);
    ck_assert_ptr_nonnull(written);
    unsigned char want[8];
    uint64_t n = tensor_numel(&d), bad = 0, first_bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        size_t di = tensor_offset(&d, i), si = tensor_offset(&s, i);
        written[di] = 1;
        cast_ref(to, want, from, (const unsigned char *)src.host + si * es);
        if (memcmp((const unsigned char *)dst.host + di * ed, want, ed) == 0)
            continue;
        if (bad++ == 0)
            first_bad = i;
        if (bad <= MAX_REPORTED)
            printf("MISMATCH cast %s -> %s, %s, element #%llu (src element %zu): src bits 0x%llx (%.17g), "
                   "got bits 0x%llx (%.17g), want bits 0x%llx (%.17g)\n",
                   kp_dtype_name(from), kp_dtype_name(to), c->name, (unsigned long long)i, si,
                   (unsigned long long)cast_bits(from, src.host, si), cast_value(from, src.host, si),
                   (unsigned long long)cast_bits(to, dst.host, di), cast_value(to, dst.host, di),
                   (unsigned long long)cast_bits(to, want, 0), cast_value(to, want, 0));
    }
    ck_assert_msg(bad == 0, "cast %s -> %s, %s: %llu of %llu elements differ from the reference "
                  "(first #%llu; details printed above)", kp_dtype_name(from), kp_dtype_name(to),
                  c->name, (unsigned long long)bad, (unsigned long long)n, (unsigned long long)first_bad);
    char context[96];
    snprintf(context, sizeof(context), "cast %s -> %s, %s, dst", kp_dtype_name(from), kp_dtype_name(to),
             c->name);
    check_untouched(&dst, written, ed, POISON, context);
    free(written);
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}

/* _i enumerates (layout case, source, destination). */
START_TEST(test_cast)
{
    int pair = _i % (N_DTYPES * N_DTYPES);
    const struct dst_src_case *c = &cases[_i / (N_DTYPES * N_DTYPES)];
    rng_seed(5000 + (uint64_t)_i);
    run_case((kp_dtype)(pair / N_DTYPES), (kp_dtype)(pair % N_DTYPES), c);
}
END_TEST

/* A large contiguous tensor: thousands of blocks of the covering grid, and a
 * last vector cut short (2^23 + 5 elements). */
START_TEST(test_cast_large)
{
    static const struct dst_src_case large = {"contiguous large", 1, {(1 << 23) + 5}, {0}, {0}, 0, 0};
    static const kp_dtype pairs[][2] = {{KP_DTYPE_F32, KP_DTYPE_BF16}, {KP_DTYPE_F64, KP_DTYPE_F16},
                                        {KP_DTYPE_BF16, KP_DTYPE_F32}, {KP_DTYPE_I64, KP_DTYPE_U8}};
    rng_seed(9000 + (uint64_t)_i);
    run_case(pairs[_i][0], pairs[_i][1], &large);
}
END_TEST

/* A few conversions spelled out by hand, so the rules are checked without
 * trusting the reference: the documented examples of ops.h. */
START_TEST(test_documented_examples)
{
    const double in[] = {-3.7, 300.0, 2.5, -0.0, 65520.0, 1.0 + 0x1p-11 + 0x1p-40};
    const size_t n = sizeof(in) / sizeof(in[0]);
    struct gpu_buf src, u8, i64, f16, f32;
    gpu_buf_alloc(&src, sizeof(in));
    gpu_buf_alloc(&u8, n);
    gpu_buf_alloc(&i64, n * 8);
    gpu_buf_alloc(&f16, n * 2);
    gpu_buf_alloc(&f32, n * 4);
    memcpy(src.host, in, sizeof(in));
    gpu_buf_upload(&src);
    int64_t shape[1] = {(int64_t)n};
    kp_tensor s = gpu_tensor(&src, KP_DTYPE_F64, 1, shape, NULL, 0);
    kp_tensor tu8 = gpu_tensor(&u8, KP_DTYPE_U8, 1, shape, NULL, 0);
    kp_tensor ti64 = gpu_tensor(&i64, KP_DTYPE_I64, 1, shape, NULL, 0);
    kp_tensor tf16 = gpu_tensor(&f16, KP_DTYPE_F16, 1, shape, NULL, 0);
    kp_tensor tf32 = gpu_tensor(&f32, KP_DTYPE_F32, 1, shape, NULL, 0);
    CK_OK(kp_cast(gpu_stream, &tu8, &s));
    CK_OK(kp_cast(gpu_stream, &ti64, &s));
    CK_OK(kp_cast(gpu_stream, &tf16, &s));
    CK_OK(kp_cast(gpu_stream, &tf32, &s));
    gpu_buf_download(&u8);
    gpu_buf_download(&i64);
    gpu_buf_download(&f16);
    gpu_buf_download(&f32);
    const uint8_t *r8 = u8.host;
    const int64_t *r64 = i64.host;
    const uint16_t *rh = f16.host;
    const float *rf = f32.host;
    const uint8_t want8[] = {0, 255, 2, 0, 255, 1};          /* negative -> 0, saturate, truncate */
    const int64_t want64[] = {-3, 300, 2, 0, 65520, 1};       /* truncate toward zero */
    const uint16_t want16[] = {0xc366, 0x5cb0, 0x4100, 0x8000, 0x7c00, 0x3c01};  /* 0x3c01: one rounding */
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(r8[i] == want8[i], "f64 %.17g -> u8: got %u want %u", in[i], r8[i], want8[i]);
        ck_assert_msg(r64[i] == want64[i], "f64 %.17g -> i64: got %lld want %lld", in[i],
                      (long long)r64[i], (long long)want64[i]);
        ck_assert_msg(rh[i] == want16[i], "f64 %.17g -> f16: got 0x%04x want 0x%04x", in[i], rh[i], want16[i]);
        ck_assert_msg(rf[i] == (float)in[i], "f64 %.17g -> f32: got %.9g want %.9g", in[i], rf[i], (float)in[i]);
    }
    gpu_buf_free(&src);
    gpu_buf_free(&u8);
    gpu_buf_free(&i64);
    gpu_buf_free(&f16);
    gpu_buf_free(&f32);
}
END_TEST

START_TEST(test_module_preload)
{
    CK_OK(kp_device_load_module(gpu_dev, "cast"));
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("cast");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_module_preload);
    tcase_add_test(tc, test_documented_examples);
    tcase_add_loop_test(tc, test_cast, 0, (int)(N_DTYPES * N_DTYPES * N_CASES));
    tcase_add_loop_test(tc, test_cast_large, 0, 4);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}

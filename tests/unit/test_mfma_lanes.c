/* The lane roles of the mat-mat's AMD matrix-core products
 * (kernels/common/kp_mfma_lanes.h, used by kp_mma.cuh and kp_qmatmul.cuh),
 * checked on the host against the instructions' own definition, since no
 * AMD GPU runs them here: operands placed as the kernel places them, fed to
 * an emulation of v_mfma_i32_16x16x16i8 (CDNA1/2) and
 * v_mfma_i32_16x16x32_i8 (CDNA3) that reads and writes each lane's
 * registers as AMD's register layouts state, must give every item's sums
 * (whole, and per 16-byte half) in the lanes the kernel reads them from. */
#include "unit_util.h"
#include "kp_mfma_lanes.h"

#define WAVE KP_MFMA_WAVE

/* The instructions, from AMD's register layouts (CDNA ISA; the matrix
 * instruction calculator prints the same): for 16x16x16i8, A[m][k] is byte
 * k % 4 of lane m + 16 (k / 4)'s register, B[k][n] byte k % 4 of lane
 * n + 16 (k / 4)'s; for 16x16x32_i8, A[m][k] is byte k % 4 of register
 * (k / 4) % 2 of lane m + 16 (k / 8), B likewise; for both, D[m][n] is
 * register m % 4 of lane n + 16 (m / 4). Each register is 32 bits. */
static int8_t byte_of(uint32_t word, int k) { return (int8_t)(word >> (8 * (k % 4))); }

static void mfma_16x16x16(const uint32_t a[WAVE], const uint32_t b[WAVE], const int32_t c[WAVE][4],
                          int32_t d[WAVE][4])
{
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++) {
            int32_t sum = c[n + 16 * (m / 4)][m % 4];
            for (int k = 0; k < 16; k++)
                sum += byte_of(a[m + 16 * (k / 4)], k) * byte_of(b[n + 16 * (k / 4)], k);
            d[n + 16 * (m / 4)][m % 4] = sum;
        }
}

static void mfma_16x16x32(const uint32_t a[WAVE][2], const uint32_t b[WAVE][2],
                          const int32_t c[WAVE][4], int32_t d[WAVE][4])
{
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++) {
            int32_t sum = c[n + 16 * (m / 4)][m % 4];
            for (int k = 0; k < 32; k++)
                sum += byte_of(a[m + 16 * (k / 8)][(k / 4) % 2], k) *
                       byte_of(b[n + 16 * (k / 8)][(k / 4) % 2], k);
            d[n + 16 * (m / 4)][m % 4] = sum;
        }
}

/* One item: 16 weight rows and 16 activation rows of 32 signed bytes. */
struct item {
    int8_t w[16][32], x[16][32];
};

static uint32_t word_at(const int8_t *row, int half, int word)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++)
        v |= (uint32_t)(uint8_t)row[16 * half + 4 * word + k] << (8 * k);
    return v;
}

/* Each lane's words of one half (or of both), as the kernel loads them. */
static void lane_words(const struct item *it, int half, uint32_t a[WAVE], uint32_t b[WAVE])
{
    for (int l = 0; l < WAVE; l++) {
        a[l] = word_at(it->w[KP_MFMA_IN(l)], half, KP_MFMA_WORD(l));
        b[l] = word_at(it->x[KP_MFMA_IN(l)], half, KP_MFMA_WORD(l));
    }
}

/* The sum of row m times activation row n over k0 .. k0 + len - 1. */
static int32_t dot(const struct item *it, int m, int n, int k0, int len)
{
    int32_t s = 0;
    for (int k = k0; k < k0 + len; k++)
        s += it->w[m][k] * it->x[n][k];
    return s;
}

/* The results lane by lane where the kernel reads them: rows
 * KP_MFMA_OUT_ROW(l, r) x batch row KP_MFMA_OUT_COL(l), plus c. */
static void check_lanes(const struct item *it, int32_t d[WAVE][4], int k0, int len, int32_t c)
{
    for (int l = 0; l < WAVE; l++)
        for (int r = 0; r < 4; r++)
            ck_assert_int_eq(d[l][r], c + dot(it, KP_MFMA_OUT_ROW(l, r), KP_MFMA_OUT_COL(l), k0, len));
}

/* Bytes of a fixed pseudo-random sequence (xorshift32), weights over the
 * whole int8 range, activations over Q8_1's -127..127. */
static void random_item(struct item *it, uint32_t seed)
{
    uint32_t v = seed | 1u;
    for (int r = 0; r < 16; r++)
        for (int k = 0; k < 32; k++) {
            v ^= v << 13, v ^= v >> 17, v ^= v << 5;
            it->w[r][k] = (int8_t)(v & 0xff);
            it->x[r][k] = (int8_t)((v >> 8) % 255 - 127);
        }
}

/* Every lane role appears once: 16 rows x 4 words in, 16 rows x 16 columns out. */
START_TEST(test_lanes_cover_the_tile)
{
    int in[16][4] = {{0}}, out[16][16] = {{0}};
    for (int l = 0; l < WAVE; l++) {
        in[KP_MFMA_IN(l)][KP_MFMA_WORD(l)]++;
        for (int r = 0; r < 4; r++)
            out[KP_MFMA_OUT_ROW(l, r)][KP_MFMA_OUT_COL(l)]++;
    }
    for (int i = 0; i < 16; i++) {
        for (int w = 0; w < 4; w++)
            ck_assert_int_eq(in[i][w], 1);
        for (int j = 0; j < 16; j++)
            ck_assert_int_eq(out[i][j], 1);
    }
}
END_TEST

/* CDNA1/2 (kp_mfma_s8_k16 once a half; kp_mfma_s8_k32 chains the two). */
START_TEST(test_cdna2_products)
{
    struct item it;
    random_item(&it, 1234u + (unsigned)_i);
    uint32_t a[2][WAVE], b[2][WAVE];
    int32_t c[WAVE][4], lo[WAVE][4], whole[WAVE][4];
    for (int l = 0; l < WAVE; l++)
        for (int r = 0; r < 4; r++)
            c[l][r] = 1000 * _i + 7;
    for (int h = 0; h < 2; h++)
        lane_words(&it, h, a[h], b[h]);
    mfma_16x16x16(a[0], b[0], c, lo);
    check_lanes(&it, lo, 0, 16, 1000 * _i + 7);
    int32_t hi[WAVE][4];
    mfma_16x16x16(a[1], b[1], c, hi);
    check_lanes(&it, hi, 16, 16, 1000 * _i + 7);
    mfma_16x16x16(a[1], b[1], lo, whole);
    check_lanes(&it, whole, 0, 32, 1000 * _i + 7);
}
END_TEST

/* CDNA3: kp_mfma_s8_k32 puts the lane's lo word in register 0 and its hi
 * word in register 1 of A and B alike; kp_mfma_s8_k16 zeroes register 1. */
START_TEST(test_cdna3_products)
{
    struct item it;
    random_item(&it, 99u + (unsigned)_i);
    uint32_t a[2][WAVE], b[2][WAVE], a2[WAVE][2], b2[WAVE][2];
    int32_t c[WAVE][4], d[WAVE][4];
    for (int l = 0; l < WAVE; l++)
        for (int r = 0; r < 4; r++)
            c[l][r] = -3 * _i;
    for (int h = 0; h < 2; h++)
        lane_words(&it, h, a[h], b[h]);
    for (int l = 0; l < WAVE; l++) {
        a2[l][0] = a[0][l], a2[l][1] = a[1][l];
        b2[l][0] = b[0][l], b2[l][1] = b[1][l];
    }
    mfma_16x16x32(a2, b2, c, d);
    check_lanes(&it, d, 0, 32, -3 * _i);
    for (int h = 0; h < 2; h++) {
        for (int l = 0; l < WAVE; l++) {
            a2[l][0] = a[h][l], a2[l][1] = 0;
            b2[l][0] = b[h][l], b2[l][1] = 0;
        }
        mfma_16x16x32(a2, b2, c, d);
        check_lanes(&it, d, 16 * h, 16, -3 * _i);
    }
}
END_TEST

/* The emulations themselves: a lane layout that is not the kernel's (row
 * and word swapped) must fail the comparison, or the checks above prove
 * nothing. */
START_TEST(test_wrong_layout_is_caught)
{
    struct item it;
    random_item(&it, 5u);
    uint32_t a[WAVE], b[WAVE];
    int32_t c[WAVE][4] = {{0}}, d[WAVE][4];
    for (int l = 0; l < WAVE; l++) {
        a[l] = word_at(it.w[l / 4], 0, l % 4);
        b[l] = word_at(it.x[l / 4], 0, l % 4);
    }
    mfma_16x16x16(a, b, c, d);
    int mismatches = 0;
    for (int l = 0; l < WAVE; l++)
        for (int r = 0; r < 4; r++)
            mismatches += d[l][r] != dot(&it, KP_MFMA_OUT_ROW(l, r), KP_MFMA_OUT_COL(l), 0, 16);
    ck_assert_int_gt(mismatches, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mfma_lanes");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_lanes_cover_the_tile);
    tcase_add_loop_test(tc, test_cdna2_products, 0, 4);
    tcase_add_loop_test(tc, test_cdna3_products, 0, 4);
    tcase_add_test(tc, test_wrong_layout_is_caught);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

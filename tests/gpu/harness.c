#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

kp_device *gpu_dev;
kp_stream *gpu_stream;

int gpu_setup(void)
{
    int count = 0;
    kp_status st = kp_device_count(&count);
    if (st == KP_ERR_NO_DRIVER || (st == KP_OK && count == 0)) {
        printf("SKIP: no %s device: %s\n", kp_backend_name(),
               st == KP_OK ? "the driver reports 0 devices" : kp_last_error_message());
        return 77;
    }
    if (st == KP_OK)
        st = kp_device_open(0, &gpu_dev);
    if (st == KP_OK)
        st = kp_stream_create(gpu_dev, &gpu_stream);
    if (st != KP_OK) {
        printf("FAIL: device setup: %s: %s\n", kp_status_string(st), kp_last_error_message());
        return 1;
    }
    kp_device_info info;
    kp_device_get_info(gpu_dev, &info);
    printf("device 0: %s (%s)\n", info.name, info.arch);
    return 0;
}

void gpu_teardown(void)
{
    kp_stream_destroy(&gpu_stream);
    kp_device_close(&gpu_dev);
}

int gpu_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f)
        return u2f(sign | 0x7f800000u | (man << 13));
    if (exp == 0)
        return (sign ? -1.0f : 1.0f) * ldexpf((float)man, -24);
    return u2f(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t f32_to_f16(float f)
{
    uint32_t u = f2u(f), sign = (u >> 16) & 0x8000;
    float a = fabsf(f);
    if (isnan(f))
        return (uint16_t)(sign | 0x7e00);
    if (a >= 65520.0f)
        return (uint16_t)(sign | 0x7c00);
    if (a < 6.103515625e-05f) {  /* subnormal: units of 2^-24, ties to even */
        return (uint16_t)(sign | (uint32_t)nearbyintf(a * 16777216.0f));
    }
    uint32_t m = u & 0x7fffffff;
    m += 0xfff + ((m >> 13) & 1);  /* round to nearest even at bit 13 */
    return (uint16_t)(sign | ((m >> 13) - (112 << 10)));
}

float bf16_to_f32(uint16_t b) { return u2f((uint32_t)b << 16); }

uint16_t f32_to_bf16(float f)
{
    uint32_t u = f2u(f);
    if (isnan(f))
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
void rng_seed(uint64_t seed) { rng_state = seed * 0x9E3779B97F4A7C15ull + 1; }
uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng_next() >> 11) / 9007199254740992.0;
}

double host_get(kp_dtype dtype, const void *base, size_t i)
{
    switch (dtype) {
    case KP_DTYPE_F32: return ((const float *)base)[i];
    case KP_DTYPE_F64: return ((const double *)base)[i];
    case KP_DTYPE_F16: return f16_to_f32(((const uint16_t *)base)[i]);
    case KP_DTYPE_BF16: return bf16_to_f32(((const uint16_t *)base)[i]);
    case KP_DTYPE_U8: return ((const uint8_t *)base)[i];
    case KP_DTYPE_U32: return ((const uint32_t *)base)[i];
    case KP_DTYPE_I64: return (double)((const int64_t *)base)[i];
    default: return NAN;
    }
}

void host_set(kp_dtype dtype, void *base, size_t i, double v)
{
    switch (dtype) {
    case KP_DTYPE_F32: ((float *)base)[i] = (float)v; break;
    case KP_DTYPE_F64: ((double *)base)[i] = v; break;
    case KP_DTYPE_F16: ((uint16_t *)base)[i] = f32_to_f16((float)v); break;
    case KP_DTYPE_BF16: ((uint16_t *)base)[i] = f32_to_bf16((float)v); break;
    case KP_DTYPE_U8: ((uint8_t *)base)[i] = (uint8_t)(int64_t)v; break;
    case KP_DTYPE_U32: ((uint32_t *)base)[i] = (uint32_t)(int64_t)v; break;
    case KP_DTYPE_I64: ((int64_t *)base)[i] = (int64_t)v; break;
    default: break;
    }
}

void host_random(kp_dtype dtype, void *base, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (dtype) {
        case KP_DTYPE_U8: host_set(dtype, base, i, (double)(rng_next() % 256)); break;
        case KP_DTYPE_U32: ((uint32_t *)base)[i] = (uint32_t)rng_next(); break;
        case KP_DTYPE_I64: ((int64_t *)base)[i] = (int64_t)(rng_next() >> 20) - (1ll << 43); break;
        default: host_set(dtype, base, i, rng_uniform(-8.0, 8.0)); break;
        }
    }
}

void gpu_buf_alloc(struct gpu_buf *b, size_t bytes)
{
    b->bytes = bytes;
    b->host = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(b->host);
    CK_OK(kp_buffer_alloc(gpu_dev, bytes, &b->dev));
}

void gpu_buf_free(struct gpu_buf *b)
{
    kp_buffer_destroy(&b->dev);
    free(b->host);
    b->host = NULL;
}

void gpu_buf_upload(struct gpu_buf *b)
{
    CK_OK(kp_memcpy_h2d(gpu_stream, b->dev, 0, b->host, b->bytes));
}

void gpu_buf_download(struct gpu_buf *b)
{
    CK_OK(kp_memcpy_d2h(gpu_stream, b->host, b->dev, 0, b->bytes));
    CK_OK(kp_stream_synchronize(gpu_stream));
}

kp_tensor gpu_tensor(struct gpu_buf *b, kp_dtype dtype, int rank, const int64_t *shape,
                     const int64_t *strides, int64_t offset)
{
    kp_tensor t = {b->dev, dtype, {0}};
    CK_OK(kp_layout_contiguous(&t.layout, rank, shape));
    for (int d = 0; strides && d < rank; d++)
        t.layout.strides[d] = strides[d];
    t.layout.offset = offset;
    return t;
}

uint64_t tensor_numel(const kp_tensor *t)
{
    uint64_t n = 1;
    for (int d = 0; d < t->layout.rank; d++)
        n *= (uint64_t)t->layout.shape[d];
    return n;
}

uint64_t tensor_extent(const kp_tensor *t)
{
    uint64_t last = (uint64_t)t->layout.offset;
    for (int d = 0; d < t->layout.rank; d++) {
        if (t->layout.shape[d] == 0)
            return (uint64_t)t->layout.offset + 1;
        last += (uint64_t)(t->layout.shape[d] - 1) * (uint64_t)t->layout.strides[d];
    }
    return last + 1;
}

const int64_t *case_strides(const int64_t *strides, int rank)
{
    for (int d = 0; d < rank; d++)
        if (strides[d])
            return strides;
    return NULL;
}

size_t tensor_offset(const kp_tensor *t, uint64_t i)
{
    size_t off = (size_t)t->layout.offset;
    for (int d = t->layout.rank - 1; d >= 0; d--) {
        uint64_t s = (uint64_t)t->layout.shape[d];
        off += (size_t)(i % s) * (size_t)t->layout.strides[d];
        i /= s;
    }
    return off;
}

int gpu_skip_big(const char *test, uint64_t needed)
{
    if (getenv("KP_TEST_SKIP_BIG")) {
        printf("%s: skipped (KP_TEST_SKIP_BIG is set)\n", test);
        return 1;
    }
    kp_device_info info;
    CK_OK(kp_device_get_info(gpu_dev, &info));
    if (info.total_memory < needed) {
        printf("%s: skipped, the device has %llu bytes, it needs %llu\n", test,
               (unsigned long long)info.total_memory, (unsigned long long)needed);
        return 1;
    }
    return 0;
}

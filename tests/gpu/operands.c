#include <inttypes.h>
#include <string.h>

#include "operands.h"

size_t operand_extent(int rank, const int64_t *shape, const struct operand_layout *l)
{
    kp_tensor t = operand_tensor(&(struct gpu_buf){0}, KP_DTYPE_U8, rank, shape, l);
    int64_t last = t.layout.offset;
    for (int d = 0; d < rank; d++)
        if (shape[d] > 0)
            last += (shape[d] - 1) * t.layout.strides[d];
    return (size_t)last + 1;
}

kp_tensor operand_tensor(struct gpu_buf *b, kp_dtype dtype, int rank, const int64_t *shape,
                         const struct operand_layout *l)
{
    return gpu_tensor(b, dtype, rank, shape, l->strided ? l->strides : NULL, l->offset);
}

kp_tensor case_dst_tensor(struct gpu_buf *b, kp_dtype dtype, const struct dst_src_case *c)
{
    return gpu_tensor(b, dtype, c->rank, c->shape, case_strides(c->dst_strides, c->rank), c->dst_offset);
}

kp_tensor case_src_tensor(struct gpu_buf *b, kp_dtype dtype, const struct dst_src_case *c)
{
    return gpu_tensor(b, dtype, c->rank, c->shape, case_strides(c->src_strides, c->rank), c->src_offset);
}

void check_untouched(const struct gpu_buf *b, const unsigned char *written, size_t es,
                     unsigned char poison, const char *context)
{
    const unsigned char *h = b->host;
    for (size_t i = 0; i < b->bytes; i++)
        if (!written || !written[i / es])
            ck_assert_msg(h[i] == poison,
                          "%s: byte %zu (element %zu) outside the output view was overwritten: 0x%02x",
                          context, i, i / es, h[i]);
}

const char *format_element(kp_dtype dtype, const void *base, size_t i, char *out, size_t size)
{
    switch (dtype) {
    case KP_DTYPE_F32: {
        uint32_t bits;
        memcpy(&bits, (const float *)base + i, 4);
        snprintf(out, size, "%.9g (0x%08" PRIx32 ")", ((const float *)base)[i], bits);
        break;
    }
    case KP_DTYPE_F64: {
        uint64_t bits;
        memcpy(&bits, (const double *)base + i, 8);
        snprintf(out, size, "%.17g (0x%016" PRIx64 ")", ((const double *)base)[i], bits);
        break;
    }
    case KP_DTYPE_F16:
    case KP_DTYPE_BF16:
        snprintf(out, size, "%.9g (0x%04x)", host_get(dtype, base, i),
                 (unsigned)((const uint16_t *)base)[i]);
        break;
    case KP_DTYPE_U8: snprintf(out, size, "%u", (unsigned)((const uint8_t *)base)[i]); break;
    case KP_DTYPE_U32: snprintf(out, size, "%" PRIu32, ((const uint32_t *)base)[i]); break;
    case KP_DTYPE_I64: snprintf(out, size, "%" PRId64, ((const int64_t *)base)[i]); break;
    default: snprintf(out, size, "?"); break;
    }
    return out;
}

/* Device buffers, copies and memset. */
#include <stdlib.h>

#include "internal.h"

static kp_status new_buffer(kp_device *dev, void *ptr, size_t bytes, bool owned, kp_buffer **out)
{
    kp_buffer *b = malloc(sizeof(*b));
    if (!b)
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "out of host memory");
    *b = (kp_buffer){dev, ptr, bytes, owned};
    *out = b;
    return KP_OK;
}

kp_status kp_buffer_alloc(kp_device *device, size_t bytes, kp_buffer **out)
{
    KP_CHECK_NOT_NULL(out);
    *out = NULL;
    KP_CHECK_NOT_NULL(device);
    void *ptr = NULL;
    if (bytes) {
        kp_status st = device->be->mem_alloc(device->native, bytes, &ptr);
        if (st != KP_OK)
            return st;
    }
    kp_status st = new_buffer(device, ptr, bytes, true, out);
    if (st != KP_OK && ptr)
        device->be->mem_free(device->native, ptr);
    return st;
}

kp_status kp_buffer_wrap(kp_device *device, void *device_ptr, size_t bytes, kp_buffer **out)
{
    KP_CHECK_NOT_NULL(out);
    *out = NULL;
    KP_CHECK_NOT_NULL(device);
    if (!device_ptr && bytes)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_buffer_wrap: device_ptr is NULL but bytes is %zu", bytes);
    return new_buffer(device, device_ptr, bytes, false, out);
}

void kp_buffer_destroy(kp_buffer **buffer)
{
    if (!buffer || !*buffer)
        return;
    kp_buffer *b = *buffer;
    if (b->owned && b->ptr)
        b->device->be->mem_free(b->device->native, b->ptr);
    free(b);
    *buffer = NULL;
}

void *kp_buffer_device_ptr(const kp_buffer *buffer)
{
    return buffer ? buffer->ptr : NULL;
}

size_t kp_buffer_size(const kp_buffer *buffer)
{
    return buffer ? buffer->size : 0;
}

static kp_status check_range(const char *fn, const char *what, const kp_buffer *b,
                             size_t offset, size_t bytes)
{
    if (offset > b->size || bytes > b->size - offset)
        return kp_fail(KP_ERR_BUFFER_TOO_SMALL, "%s: %s range [%zu, +%zu) exceeds its %zu-byte buffer",
                       fn, what, offset, bytes, b->size);
    return KP_OK;
}

kp_status kp_memcpy_h2d(kp_stream *stream, kp_buffer *dst, size_t dst_offset,
                        const void *src, size_t bytes)
{
    kp_status st = kp_check_stream(__func__, stream);
    if (st == KP_OK)
        st = kp_check_buffer(__func__, "dst", dst, stream->device);
    if (st == KP_OK)
        st = check_range(__func__, "dst", dst, dst_offset, bytes);
    if (st == KP_OK && bytes && !src)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src is NULL", __func__);
    if (st != KP_OK || !bytes)
        return st;
    kp_device *dev = stream->device;
    return dev->be->memcpy_h2d(dev->native, stream->native, (char *)dst->ptr + dst_offset, src, bytes);
}

kp_status kp_memcpy_d2h(kp_stream *stream, void *dst, const kp_buffer *src,
                        size_t src_offset, size_t bytes)
{
    kp_status st = kp_check_stream(__func__, stream);
    if (st == KP_OK)
        st = kp_check_buffer(__func__, "src", src, stream->device);
    if (st == KP_OK)
        st = check_range(__func__, "src", src, src_offset, bytes);
    if (st == KP_OK && bytes && !dst)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst is NULL", __func__);
    if (st != KP_OK || !bytes)
        return st;
    kp_device *dev = stream->device;
    return dev->be->memcpy_d2h(dev->native, stream->native, dst, (const char *)src->ptr + src_offset, bytes);
}

kp_status kp_memcpy_d2d(kp_stream *stream, kp_buffer *dst, size_t dst_offset,
                        const kp_buffer *src, size_t src_offset, size_t bytes)
{
    kp_status st = kp_check_stream(__func__, stream);
    if (st == KP_OK)
        st = kp_check_buffer(__func__, "dst", dst, stream->device);
    if (st == KP_OK)
        st = kp_check_buffer(__func__, "src", src, stream->device);
    if (st == KP_OK)
        st = check_range(__func__, "dst", dst, dst_offset, bytes);
    if (st == KP_OK)
        st = check_range(__func__, "src", src, src_offset, bytes);
    if (st != KP_OK || !bytes)
        return st;
    kp_device *dev = stream->device;
    return dev->be->memcpy_d2d(dev->native, stream->native, (char *)dst->ptr + dst_offset,
                               (const char *)src->ptr + src_offset, bytes);
}

kp_status kp_memset(kp_stream *stream, kp_buffer *dst, size_t dst_offset, uint8_t value, size_t bytes)
{
    kp_status st = kp_check_stream(__func__, stream);
    if (st == KP_OK)
        st = kp_check_buffer(__func__, "dst", dst, stream->device);
    if (st == KP_OK)
        st = check_range(__func__, "dst", dst, dst_offset, bytes);
    if (st != KP_OK || !bytes)
        return st;
    kp_device *dev = stream->device;
    return dev->be->memset_d8(dev->native, stream->native, (char *)dst->ptr + dst_offset, value, bytes);
}

kp_status kp_memcpy_peer(kp_stream *stream, kp_buffer *dst, size_t dst_offset,
                         const kp_buffer *src, size_t src_offset, size_t bytes)
{
    kp_status st = kp_check_stream(__func__, stream);
    if (st != KP_OK)
        return st;
    KP_CHECK_NOT_NULL(dst);
    KP_CHECK_NOT_NULL(src);
    kp_device *dev = stream->device;
    if (dst->device != dev && src->device != dev)
        return kp_fail(KP_ERR_DEVICE_MISMATCH,
                       "%s: the stream is on device %d, but dst is on device %d and src on device %d",
                       __func__, dev->info.ordinal, dst->device->info.ordinal, src->device->info.ordinal);
    if ((st = check_range(__func__, "dst", dst, dst_offset, bytes)) != KP_OK ||
        (st = check_range(__func__, "src", src, src_offset, bytes)) != KP_OK || !bytes)
        return st;
    char *d = (char *)dst->ptr + dst_offset;
    const char *s = (const char *)src->ptr + src_offset;
    if (dst->device == src->device)
        return dev->be->memcpy_d2d(dev->native, stream->native, d, s, bytes);
    return dev->be->memcpy_peer(dev->native, stream->native, dst->device->native, d,
                                src->device->native, s, bytes);
}

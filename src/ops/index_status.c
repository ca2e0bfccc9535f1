/* kp_index_status: the out-of-range record of the index ops. */
#include <stdlib.h>

#include "index_status.h"

kp_status kp_index_status_create(kp_device *device, kp_index_status **out)
{
    KP_CHECK_NOT_NULL(out);
    *out = NULL;
    KP_CHECK_NOT_NULL(device);
    kp_index_status *s = calloc(1, sizeof(*s));
    if (!s)
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "kp_index_status_create: out of host memory");
    s->device = device;
    kp_status st = kp_buffer_alloc(device, sizeof(uint64_t), &s->word);
    /* Cleared on the default stream and waited for, so the status is ready
     * for any stream the caller uses next. */
    if (st == KP_OK)
        st = device->be->memset_d8(device->native, NULL, s->word->ptr, 0, sizeof(uint64_t));
    if (st == KP_OK)
        st = device->be->device_synchronize(device->native);
    if (st != KP_OK) {
        kp_buffer_destroy(&s->word);
        free(s);
        return st;
    }
    *out = s;
    return KP_OK;
}

void kp_index_status_destroy(kp_index_status **status)
{
    if (!status || !*status)
        return;
    kp_buffer_destroy(&(*status)->word);
    free(*status);
    *status = NULL;
}

static kp_status check_status(const char *fn, kp_stream *stream, const kp_index_status *status)
{
    kp_status st = kp_check_stream(fn, stream);
    if (st == KP_OK && !status)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: status is NULL", fn);
    if (st == KP_OK && status->device != stream->device)
        st = kp_fail(KP_ERR_DEVICE_MISMATCH, "%s: status belongs to device %d, the stream to device %d",
                     fn, status->device->info.ordinal, stream->device->info.ordinal);
    return st;
}

kp_status kp_index_status_clear(kp_stream *stream, kp_index_status *status)
{
    kp_status st = check_status(__func__, stream, status);
    if (st != KP_OK)
        return st;
    kp_device *dev = stream->device;
    return dev->be->memset_d8(dev->native, stream->native, status->word->ptr, 0, sizeof(uint64_t));
}

kp_index_report kp_index_status_decode(uint64_t word)
{
    kp_index_report r = {word != 0, word ? ~word : 0};
    return r;
}

kp_status kp_index_status_read(kp_stream *stream, kp_index_status *status, kp_index_report *report)
{
    kp_status st = check_status(__func__, stream, status);
    if (st == KP_OK && !report)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: report is NULL", __func__);
    if (st != KP_OK)
        return st;
    kp_device *dev = stream->device;
    uint64_t word = 0;
    st = dev->be->memcpy_d2h(dev->native, stream->native, &word, status->word->ptr, sizeof(word));
    if (st == KP_OK)
        st = dev->be->stream_synchronize(dev->native, stream->native);
    if (st == KP_OK)
        *report = kp_index_status_decode(word);
    return st;
}

void *kp_index_status_word(const kp_index_status *status)
{
    return status ? status->word->ptr : NULL;
}

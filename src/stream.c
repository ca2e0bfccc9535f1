/* Streams and events. */
#include <stdlib.h>

#include "internal.h"

static kp_status new_stream(const char *fn, kp_device *device, kp_stream **out, kp_stream **s)
{
    KP_CHECK_NOT_NULL(out);
    *out = NULL;
    KP_CHECK_NOT_NULL(device);
    *s = calloc(1, sizeof(**s));
    if (!*s)
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    (*s)->device = device;
    if (pthread_mutex_init(&(*s)->scratch_lock, NULL) != 0) {
        free(*s);
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "%s: cannot create a mutex", fn);
    }
    return KP_OK;
}

kp_status kp_stream_create(kp_device *device, kp_stream **out)
{
    kp_stream *s = NULL;
    kp_status st = new_stream(__func__, device, out, &s);
    if (st != KP_OK)
        return st;
    st = device->be->stream_create(device->native, &s->native);
    if (st != KP_OK) {
        pthread_mutex_destroy(&s->scratch_lock);
        free(s);
        return st;
    }
    s->owned = true;
    *out = s;
    return KP_OK;
}

kp_status kp_stream_wrap(kp_device *device, void *native_stream, kp_stream **out)
{
    kp_stream *s = NULL;
    kp_status st = new_stream(__func__, device, out, &s);
    if (st != KP_OK)
        return st;
    s->native = native_stream;
    s->owned = false;
    *out = s;
    return KP_OK;
}

void *kp_stream_native_handle(const kp_stream *stream)
{
    return stream ? stream->native : NULL;
}

void kp_stream_destroy(kp_stream **stream)
{
    if (!stream || !*stream)
        return;
    kp_stream *s = *stream;
    /* Wait even for a wrapped stream: its queued work may use the scratch
     * area freed below. */
    s->device->be->stream_synchronize(s->device->native, s->native);
    if (s->scratch)
        s->device->be->mem_free(s->device->native, s->scratch);
    if (s->owned)
        s->device->be->stream_destroy(s->device->native, s->native);
    pthread_mutex_destroy(&s->scratch_lock);
    free(s);
    *stream = NULL;
}

kp_status kp_stream_scratch_acquire(kp_stream *stream, void **scratch)
{
    pthread_mutex_lock(&stream->scratch_lock);
    if (!stream->scratch) {
        kp_device *dev = stream->device;
        kp_status st = dev->be->mem_alloc(dev->native, KP_STREAM_SCRATCH_BYTES, &stream->scratch);
        if (st != KP_OK) {
            stream->scratch = NULL;
            pthread_mutex_unlock(&stream->scratch_lock);
            return st;
        }
    }
    *scratch = stream->scratch;
    return KP_OK;
}

void kp_stream_scratch_release(kp_stream *stream)
{
    pthread_mutex_unlock(&stream->scratch_lock);
}

kp_status kp_stream_synchronize(kp_stream *stream)
{
    KP_CHECK_NOT_NULL(stream);
    return stream->device->be->stream_synchronize(stream->device->native, stream->native);
}

kp_status kp_event_create(kp_device *device, kp_event **out)
{
    KP_CHECK_NOT_NULL(out);
    *out = NULL;
    KP_CHECK_NOT_NULL(device);
    kp_event *e = calloc(1, sizeof(*e));
    if (!e)
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "kp_event_create: out of host memory");
    e->device = device;
    kp_status st = device->be->event_create(device->native, &e->native);
    if (st != KP_OK) {
        free(e);
        return st;
    }
    *out = e;
    return KP_OK;
}

void kp_event_destroy(kp_event **event)
{
    if (!event || !*event)
        return;
    (*event)->device->be->event_destroy((*event)->device->native, (*event)->native);
    free(*event);
    *event = NULL;
}

kp_status kp_event_record(kp_event *event, kp_stream *stream)
{
    KP_CHECK_NOT_NULL(event);
    KP_CHECK_NOT_NULL(stream);
    if (event->device != stream->device)
        return kp_fail(KP_ERR_DEVICE_MISMATCH, "kp_event_record: event and stream are on different devices");
    return event->device->be->event_record(event->device->native, event->native, stream->native);
}

kp_status kp_event_synchronize(kp_event *event)
{
    KP_CHECK_NOT_NULL(event);
    return event->device->be->event_synchronize(event->device->native, event->native);
}

kp_status kp_event_elapsed_ms(const kp_event *start, const kp_event *end, float *ms)
{
    KP_CHECK_NOT_NULL(start);
    KP_CHECK_NOT_NULL(end);
    KP_CHECK_NOT_NULL(ms);
    if (start->device != end->device)
        return kp_fail(KP_ERR_DEVICE_MISMATCH, "kp_event_elapsed_ms: events are on different devices");
    return start->device->be->event_elapsed_ms(start->device->native, start->native, end->native, ms);
}

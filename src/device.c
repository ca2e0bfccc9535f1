/* Devices: open/close, info, synchronisation. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

kp_status kp_device_count(int *count)
{
    KP_CHECK_NOT_NULL(count);
    *count = 0;
    kp_status st;
    const struct kp_backend *be = kp_backend_get(&st);
    if (!be)
        return st;
    return be->device_count(count);
}

kp_status kp_device_open(int ordinal, kp_device **out)
{
    KP_CHECK_NOT_NULL(out);
    *out = NULL;
    kp_status st;
    const struct kp_backend *be = kp_backend_get(&st);
    if (!be)
        return st;
    int count = 0;
    st = be->device_count(&count);
    if (st != KP_OK)
        return st;
    if (ordinal < 0 || ordinal >= count)
        return kp_fail(KP_ERR_NO_DEVICE, "kp_device_open: no device %d (%d %s device%s present)",
                       ordinal, count, be->name, count == 1 ? "" : "s");
    kp_device *dev = calloc(1, sizeof(*dev));
    if (!dev)
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "kp_device_open: out of host memory");
    dev->be = be;
    st = be->device_open(ordinal, &dev->native, &dev->info, &dev->limits);
    if (st != KP_OK) {
        free(dev);
        return st;
    }
    dev->info.ordinal = ordinal;
    pthread_mutex_init(&dev->cache_lock, NULL);
    *out = dev;
    return KP_OK;
}

void kp_device_close(kp_device **device)
{
    if (!device || !*device)
        return;
    kp_device *dev = *device;
    dev->be->device_synchronize(dev->native);
    kp_module_cache_release(dev);
    kp_user_modules_release(dev);
    dev->be->device_close(dev->native);
    pthread_mutex_destroy(&dev->cache_lock);
    free(dev);
    *device = NULL;
}

kp_status kp_device_get_info(const kp_device *device, kp_device_info *info)
{
    KP_CHECK_NOT_NULL(device);
    KP_CHECK_NOT_NULL(info);
    *info = device->info;
    return KP_OK;
}

kp_status kp_device_synchronize(kp_device *device)
{
    KP_CHECK_NOT_NULL(device);
    return device->be->device_synchronize(device->native);
}

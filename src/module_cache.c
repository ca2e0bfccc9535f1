/* Per-device cache of loaded modules and their function handles. Each module
 * is loaded at most once per device, on first use, under the device's lock;
 * later lookups read an atomic flag and take no lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int compare_name(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const kp_kernel_desc *)elem)->name);
}

long kp_module_kernel_index(const struct kp_module_desc *desc, const char *kernel)
{
    const kp_kernel_desc *hit = bsearch(kernel, desc->kernels, desc->kernel_count,
                                     sizeof(desc->kernels[0]), compare_name);
    return hit ? (long)(hit - desc->kernels) : -1;
}

kp_status kp_module_load_code(kp_device *dev, const struct kp_module_desc *desc, void **module,
                              void **functions)
{
    const struct kp_code_object *code = kp_select_code_object(desc, dev->info.arch);
    if (!code) {
        char built[512] = "";
        for (size_t i = 0; i < desc->object_count; i++) {
            size_t used = strlen(built);
            snprintf(built + used, sizeof(built) - used, "%s%s", i ? "," : "", desc->objects[i].archs);
        }
        return kp_fail(KP_ERR_NO_CODE_FOR_ARCH,
                       "module '%s' has no code object for device %d (%s, arch %s); built for %s",
                       desc->name, dev->info.ordinal, dev->info.name, dev->info.arch, built);
    }
    *module = NULL;
    kp_status st = dev->be->module_load(dev->native, code, module);
    for (size_t i = 0; st == KP_OK && i < desc->kernel_count; i++)
        st = dev->be->module_function(dev->native, *module, desc->kernels[i].name, &functions[i]);
    if (st != KP_OK) {
        if (*module)
            dev->be->module_unload(dev->native, *module);
        *module = NULL;
        return st;
    }
    kp_log(KP_LOG_DEBUG, "loaded module '%s' (%s, %zu kernels) on device %d", desc->name,
           kp_code_format_name(code->format), desc->kernel_count, dev->info.ordinal);
    return KP_OK;
}

static kp_status load_locked(kp_device *dev, const struct kp_module_desc *desc,
                             struct kp_module_slot *slot)
{
    void **functions = calloc(desc->kernel_count, sizeof(*functions));
    if (!functions)
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "module '%s': out of host memory", desc->name);
    void *module = NULL;
    kp_status st = kp_module_load_code(dev, desc, &module, functions);
    if (st != KP_OK) {
        free(functions);
        return st;
    }
    slot->module = module;
    slot->functions = functions;
    atomic_store_explicit(&slot->ready, 1, memory_order_release);
    return KP_OK;
}

kp_status kp_module_load(kp_device *dev, enum kp_module_id id)
{
    struct kp_module_slot *slot = &dev->modules[id];
    if (atomic_load_explicit(&slot->ready, memory_order_acquire))
        return KP_OK;
    pthread_mutex_lock(&dev->cache_lock);
    kp_status st = KP_OK;
    if (!atomic_load_explicit(&slot->ready, memory_order_relaxed))
        st = load_locked(dev, kp_builtin_modules[id], slot);
    pthread_mutex_unlock(&dev->cache_lock);
    return st;
}

kp_status kp_module_function(kp_device *dev, enum kp_module_id id, const char *kernel, void **fn)
{
    const struct kp_module_desc *desc = kp_builtin_modules[id];
    long index = kp_module_kernel_index(desc, kernel);
    if (index < 0)
        return kp_fail(KP_ERR_INTERNAL, "kernel '%s' is not in module '%s'", kernel, desc->name);
    kp_status st = kp_module_load(dev, id);
    if (st != KP_OK)
        return st;
    *fn = dev->modules[id].functions[index];
    return KP_OK;
}

void kp_module_cache_release(kp_device *dev)
{
    for (int i = 0; i < KP_MODULE_COUNT; i++) {
        struct kp_module_slot *slot = &dev->modules[i];
        if (atomic_load(&slot->ready)) {
            dev->be->module_unload(dev->native, slot->module);
            free(slot->functions);
            slot->functions = NULL;
            slot->module = NULL;
            atomic_store(&slot->ready, 0);
        }
    }
}

kp_status kp_device_load_module(kp_device *device, const char *module)
{
    KP_CHECK_NOT_NULL(device);
    KP_CHECK_NOT_NULL(module);
    for (int i = 0; i < KP_MODULE_COUNT; i++)
        if (strcmp(kp_builtin_modules[i]->name, module) == 0)
            return kp_module_load(device, (enum kp_module_id)i);
    return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_device_load_module: no module named '%s'", module);
}

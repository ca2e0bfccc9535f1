/* Users' own kernel modules (include/kernelpack/user_kernels.h): checked,
 * loaded once per device on first use and kept in the device's list until it
 * is closed; their kernels are launched after every argument is checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A descriptor comes from generated code the library did not build, maybe
 * from another kernelpack version: check what the cache and lookup rely on. */
static kp_status check_desc(const char *fn, const kp_module_desc *m)
{
    if (m->version != KP_MODULE_DESC_VERSION)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: module descriptor version %u, this kernelpack reads version %u "
                       "(regenerate it with this kernelpack's kp-build-module)",
                       fn, m->version, KP_MODULE_DESC_VERSION);
    const char *name = m->name ? m->name : "(unnamed)";
    if (!m->name || !m->objects || m->object_count == 0 || !m->kernels || m->kernel_count == 0)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: module '%s' lacks a name, code objects or kernels", fn, name);
    for (size_t i = 0; i < m->object_count; i++)
        if (!m->objects[i].data || !m->objects[i].archs || !kp_code_format_name(m->objects[i].format))
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: module '%s': code object %zu is malformed",
                           fn, name, i);
    for (size_t i = 0; i < m->kernel_count; i++) {
        const kp_kernel_desc *k = &m->kernels[i];
        if (!k->name || (k->param_count && !k->param_sizes))
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: module '%s': kernel %zu is malformed",
                           fn, name, i);
        if (i && strcmp(m->kernels[i - 1].name, k->name) >= 0)
            return kp_fail(KP_ERR_INVALID_ARGUMENT,
                           "%s: module '%s': kernels are not sorted by name ('%s' before '%s')",
                           fn, name, m->kernels[i - 1].name, k->name);
    }
    return KP_OK;
}

static void free_entry(kp_device *dev, struct kp_user_module *e)
{
    if (e->module)
        dev->be->module_unload(dev->native, e->module);
    free(e->kernels);
    free(e);
}

static kp_status load_locked(kp_device *dev, const kp_module_desc *m, struct kp_user_module **out)
{
    struct kp_user_module *e = calloc(1, sizeof(*e));
    void **functions = calloc(m->kernel_count, sizeof(*functions));
    if (e)
        e->kernels = calloc(m->kernel_count, sizeof(*e->kernels));
    if (!e || !functions || !e->kernels) {
        free(functions);
        if (e)
            free(e->kernels);
        free(e);
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "module '%s': out of host memory", m->name);
    }
    e->desc = m;
    kp_status st = kp_module_load_code(dev, m, &e->module, functions);
    for (size_t i = 0; st == KP_OK && i < m->kernel_count; i++) {
        struct kp_kernel *k = &e->kernels[i];
        *k = (struct kp_kernel){dev, m, &m->kernels[i], functions[i], 0, 0, 1};
        st = dev->be->function_limits(dev->native, k->function, &k->max_threads, &k->static_shared,
                                      &k->cluster_blocks);
    }
    free(functions);
    if (st != KP_OK) {
        free_entry(dev, e);
        return st;
    }
    e->next = dev->user_modules;
    dev->user_modules = e;
    *out = e;
    return KP_OK;
}

/* The device's entry for `m` (checked by the caller), loading it on first use. */
static kp_status get_module(kp_device *dev, const kp_module_desc *m, struct kp_user_module **out)
{
    kp_status st = KP_OK;
    pthread_mutex_lock(&dev->cache_lock);
    struct kp_user_module *e = dev->user_modules;
    while (e && e->desc != m)
        e = e->next;
    if (!e)
        st = load_locked(dev, m, &e);
    pthread_mutex_unlock(&dev->cache_lock);
    *out = e;
    return st;
}

void kp_user_modules_release(kp_device *dev)
{
    while (dev->user_modules) {
        struct kp_user_module *e = dev->user_modules;
        dev->user_modules = e->next;
        free_entry(dev, e);
    }
}

kp_status kp_device_load_user_module(kp_device *device, const kp_module_desc *module)
{
    KP_CHECK_NOT_NULL(device);
    KP_CHECK_NOT_NULL(module);
    kp_status st = check_desc(__func__, module);
    if (st != KP_OK)
        return st;
    struct kp_user_module *e;
    return get_module(device, module, &e);
}

kp_status kp_device_get_kernel(kp_device *device, const kp_module_desc *module, const char *name,
                               kp_kernel **out)
{
    KP_CHECK_NOT_NULL(out);
    *out = NULL;
    KP_CHECK_NOT_NULL(device);
    KP_CHECK_NOT_NULL(module);
    KP_CHECK_NOT_NULL(name);
    kp_status st = check_desc(__func__, module);
    if (st != KP_OK)
        return st;
    long index = kp_module_kernel_index(module, name);
    if (index < 0) {
        char names[1024] = "";
        for (size_t i = 0; i < module->kernel_count; i++) {
            size_t used = strlen(names);
            if (used + 8 >= sizeof(names)) {
                snprintf(names + used, sizeof(names) - used, ", ...");
                break;
            }
            snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", module->kernels[i].name);
        }
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: module '%s' has no kernel '%s'; its kernels: %s",
                       __func__, module->name, name, names);
    }
    struct kp_user_module *e;
    st = get_module(device, module, &e);
    if (st != KP_OK)
        return st;
    *out = &e->kernels[index];
    return KP_OK;
}

const char *kp_kernel_get_name(const kp_kernel *kernel)
{
    return kernel ? kernel->desc->name : NULL;
}

size_t kp_kernel_get_param_count(const kp_kernel *kernel)
{
    return kernel ? kernel->desc->param_count : 0;
}

/* ---- launching */

static kp_status check_config(const char *fn, const kp_kernel *k, const kp_launch_config *c)
{
    const struct kp_device_limits *lim = &k->device->limits;
    static const char axis[3] = {'x', 'y', 'z'};
    uint64_t threads = 1;
    for (int i = 0; i < 3; i++) {
        if (c->grid[i] == 0 || c->grid[i] > lim->max_grid[i])
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s: grid %c = %u, the device allows 1..%u",
                           fn, k->desc->name, axis[i], c->grid[i], lim->max_grid[i]);
        if (c->block[i] == 0 || c->block[i] > lim->max_block[i])
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s: block %c = %u, the device allows 1..%u",
                           fn, k->desc->name, axis[i], c->block[i], lim->max_block[i]);
        threads *= c->block[i];
    }
    if (k->cluster_blocks > 1 && c->grid[0] % (unsigned)k->cluster_blocks != 0)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s: grid x = %u; the kernel runs in clusters of %d blocks, so it must be "
                       "a multiple of %d", fn, k->desc->name, c->grid[0], k->cluster_blocks,
                       k->cluster_blocks);
    uint64_t max_threads = (uint64_t)k->device->info.max_threads_per_block;
    if (k->max_threads > 0 && (uint64_t)k->max_threads < max_threads)
        max_threads = (uint64_t)k->max_threads;
    if (threads > max_threads)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s: a block of %u x %u x %u = %llu threads; the kernel allows %llu on "
                       "device %d (%s)", fn, k->desc->name, c->block[0], c->block[1], c->block[2],
                       (unsigned long long)threads, (unsigned long long)max_threads,
                       k->device->info.ordinal, k->device->info.arch);
    uint64_t shared = (uint64_t)c->shared_bytes + (uint64_t)(k->static_shared > 0 ? k->static_shared : 0);
    if (shared > lim->max_shared_bytes)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s: %u bytes of dynamic shared memory plus %d static = %llu, the device "
                       "allows %zu per block", fn, k->desc->name, c->shared_bytes, k->static_shared,
                       (unsigned long long)shared, lim->max_shared_bytes);
    return KP_OK;
}

static kp_status check_args(const char *fn, const kp_kernel *k, const kp_stream *stream,
                            const kp_kernel_arg *args, size_t count)
{
    const kp_kernel_desc *d = k->desc;
    if (count != d->param_count)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s takes %u arguments, got %zu", fn, d->name,
                       d->param_count, count);
    if (count && !args)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s: args is NULL", fn, d->name);
    for (size_t i = 0; i < count; i++) {
        const kp_kernel_arg *a = &args[i];
        if (a->size != d->param_sizes[i])
            return kp_fail(KP_ERR_INVALID_ARGUMENT,
                           "%s: %s: argument %zu is %zu bytes, the kernel's parameter %zu is %u bytes",
                           fn, d->name, i, a->size, i, d->param_sizes[i]);
        if (a->buffer) {
            if (a->buffer->device != stream->device)
                return kp_fail(KP_ERR_DEVICE_MISMATCH,
                               "%s: %s: argument %zu is a buffer of device %d, the stream is on device %d",
                               fn, d->name, i, a->buffer->device->info.ordinal,
                               stream->device->info.ordinal);
            if (a->offset > a->buffer->size)
                return kp_fail(KP_ERR_BUFFER_TOO_SMALL,
                               "%s: %s: argument %zu: offset %zu is past the end of its %zu-byte buffer",
                               fn, d->name, i, a->offset, a->buffer->size);
        } else if (!a->value) {
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s: argument %zu has no value", fn, d->name, i);
        }
    }
    return KP_OK;
}

/* Most parameters a kernel may take here; CUDA allows 32 KiB of them, but
 * generated kernels take a handful. */
#define KP_MAX_KERNEL_ARGS 64

kp_status kp_kernel_launch(kp_stream *stream, const kp_kernel *kernel, const kp_launch_config *config,
                           const kp_kernel_arg *args, size_t arg_count)
{
    kp_status st = kp_check_stream(__func__, stream);
    if (st != KP_OK)
        return st;
    KP_CHECK_NOT_NULL(kernel);
    KP_CHECK_NOT_NULL(config);
    if (kernel->device != stream->device)
        return kp_fail(KP_ERR_DEVICE_MISMATCH,
                       "%s: kernel %s was loaded on device %d, the stream is on device %d", __func__,
                       kernel->desc->name, kernel->device->info.ordinal, stream->device->info.ordinal);
    if ((st = check_config(__func__, kernel, config)) != KP_OK ||
        (st = check_args(__func__, kernel, stream, args, arg_count)) != KP_OK)
        return st;
    if (arg_count > KP_MAX_KERNEL_ARGS)
        return kp_fail(KP_ERR_UNSUPPORTED, "%s: %s takes %zu arguments, kernelpack passes at most %d",
                       __func__, kernel->desc->name, arg_count, KP_MAX_KERNEL_ARGS);
    /* Buffer arguments become device addresses, held here for the launch. */
    void *pointers[KP_MAX_KERNEL_ARGS], *values[KP_MAX_KERNEL_ARGS];
    for (size_t i = 0; i < arg_count; i++) {
        if (args[i].buffer) {
            pointers[i] = (char *)args[i].buffer->ptr + args[i].offset;
            values[i] = &pointers[i];
        } else {
            values[i] = (void *)args[i].value;
        }
    }
    struct kp_launch_dims dims = {
        {config->grid[0], config->grid[1], config->grid[2]},
        {config->block[0], config->block[1], config->block[2]},
        config->shared_bytes};
    kp_device *dev = stream->device;
    return dev->be->launch(dev->native, kernel->function, &dims, stream->native, values);
}

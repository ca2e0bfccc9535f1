#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_backend.h"

struct fake_state fake;

static kp_status f_init(void) { return KP_OK; }
static kp_status f_device_count(int *count) { *count = 1; return KP_OK; }
static kp_status f_device_open(int ordinal, void **dev, kp_device_info *info,
                               struct kp_device_limits *limits)
{
    (void)ordinal;
    *limits = (struct kp_device_limits){{1024, 1024, 64}, {0x7fffffffu, 65535, 65535}, 48 * 1024};
    *dev = &fake;
    snprintf(info->name, sizeof(info->name), "fake device");
    snprintf(info->arch, sizeof(info->arch), "%s", fake.arch);
    info->multiprocessors = fake.multiprocessors;
    info->warp_size = fake.warp_size;
    info->max_threads_per_block = 1024;
    info->total_memory = 1u << 30;
    return KP_OK;
}
static void f_device_close(void *dev) { (void)dev; }
static kp_status f_sync(void *dev) { (void)dev; return KP_OK; }
static kp_status f_mem_alloc(void *dev, size_t bytes, void **ptr)
{
    (void)dev;
    *ptr = malloc(bytes);
    return *ptr ? KP_OK : KP_ERR_OUT_OF_MEMORY;
}
static void f_mem_free(void *dev, void *ptr) { (void)dev; free(ptr); }
static kp_status f_copy(void *dev, void *stream, void *dst, const void *src, size_t n)
{
    (void)dev; (void)stream;
    memmove(dst, src, n);
    return KP_OK;
}
static kp_status f_copy_peer(void *dev, void *stream, void *dst_dev, void *dst, void *src_dev,
                             const void *src, size_t n)
{
    (void)dev; (void)stream; (void)dst_dev; (void)src_dev;
    memmove(dst, src, n);
    return KP_OK;
}
static kp_status f_memset(void *dev, void *stream, void *dst, uint8_t v, size_t n)
{
    (void)dev; (void)stream;
    memset(dst, v, n);
    return KP_OK;
}
static kp_status f_stream_create(void *dev, void **s) { (void)dev; *s = malloc(1); return KP_OK; }
static void f_stream_destroy(void *dev, void *s)
{
    (void)dev;
    atomic_fetch_add(&fake.stream_destroys, 1);
    free(s);
}
static kp_status f_stream_sync(void *dev, void *s) { (void)dev; (void)s; return KP_OK; }
static kp_status f_event_create(void *dev, void **e) { (void)dev; *e = malloc(1); return KP_OK; }
static void f_event_destroy(void *dev, void *e) { (void)dev; free(e); }
static kp_status f_event_record(void *dev, void *e, void *s) { (void)dev; (void)e; (void)s; return KP_OK; }
static kp_status f_event_sync(void *dev, void *e) { (void)dev; (void)e; return KP_OK; }
static kp_status f_elapsed(void *dev, void *a, void *b, float *ms) { (void)dev; (void)a; (void)b; *ms = 0; return KP_OK; }
static kp_status f_module_load(void *dev, const struct kp_code_object *code, void **module)
{
    (void)dev;
    if (fake.load_delay_us)
        usleep((useconds_t)fake.load_delay_us);
    atomic_fetch_add(&fake.module_loads, 1);
    *module = (void *)code;
    return KP_OK;
}
static void f_module_unload(void *dev, void *module) { (void)dev; (void)module; }
static kp_status f_module_function(void *dev, void *module, const char *name, void **fn)
{
    (void)dev; (void)module;
    *fn = (void *)name;  /* the descriptor's string: lives as long as the library */
    return KP_OK;
}
static kp_status f_function_limits(void *dev, void *fn, int *max_threads, int *static_shared,
                                   int *cluster_blocks)
{
    (void)dev; (void)fn;
    *max_threads = fake.function_max_threads;
    *static_shared = fake.function_static_shared;
    *cluster_blocks = fake.function_cluster_blocks > 1 ? fake.function_cluster_blocks : 1;
    return KP_OK;
}
static kp_status f_launch(void *dev, void *fn, const struct kp_launch_dims *d, void *s, void **args)
{
    (void)dev; (void)s;
    atomic_fetch_add(&fake.launches, 1);
    if (fake.launch_hook)
        fake.launch_hook(args);
    fake.last_dims = *d;
    snprintf(fake.last_kernel, sizeof(fake.last_kernel), "%s", (const char *)fn);
    return KP_OK;
}

const struct kp_backend fake_backend = {
    .name = "fake",
    .init = f_init,
    .device_count = f_device_count,
    .device_open = f_device_open,
    .device_close = f_device_close,
    .device_synchronize = f_sync,
    .mem_alloc = f_mem_alloc,
    .mem_free = f_mem_free,
    .memcpy_h2d = f_copy,
    .memcpy_d2h = f_copy,
    .memcpy_d2d = f_copy,
    .memset_d8 = f_memset,
    .memcpy_peer = f_copy_peer,
    .stream_create = f_stream_create,
    .stream_destroy = f_stream_destroy,
    .stream_synchronize = f_stream_sync,
    .event_create = f_event_create,
    .event_destroy = f_event_destroy,
    .event_record = f_event_record,
    .event_synchronize = f_event_sync,
    .event_elapsed_ms = f_elapsed,
    .module_load = f_module_load,
    .module_unload = f_module_unload,
    .module_function = f_module_function,
    .function_limits = f_function_limits,
    .launch = f_launch,
};

void fake_install(const char *arch)
{
    snprintf(fake.arch, sizeof(fake.arch), "%s", arch);
    fake.multiprocessors = 4;
    fake.warp_size = 32;
    atomic_store(&fake.module_loads, 0);
    atomic_store(&fake.launches, 0);
    fake.last_kernel[0] = '\0';
    fake.load_delay_us = 0;
    fake.function_max_threads = 1024;
    fake.function_static_shared = 0;
    fake.function_cluster_blocks = 1;
    fake.launch_hook = NULL;
    atomic_store(&fake.stream_destroys, 0);
    kp_backend_override(&fake_backend);
}

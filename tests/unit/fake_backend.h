/* A backend that runs on the host, for unit tests: memory is malloc'ed,
 * copies are memcpy, modules and launches are only counted and recorded. */
#ifndef KP_FAKE_BACKEND_H
#define KP_FAKE_BACKEND_H

#include <stdatomic.h>
#include "internal.h"

struct fake_state {
    char arch[64];              /* reported device arch */
    int multiprocessors;
    int warp_size;              /* reported wave size (32 unless a test sets it) */
    atomic_int module_loads;
    atomic_int launches;
    char last_kernel[64];       /* name of the last launched kernel */
    struct kp_launch_dims last_dims;  /* and its grid and block */
    int load_delay_us;          /* widen the race window in module_load */
    int function_max_threads;   /* what function_limits reports for every kernel */
    int function_static_shared;
    int function_cluster_blocks;  /* > 1: every kernel reports a cluster of that many blocks */
    void (*launch_hook)(void **args);  /* called by each launch with its argument array */
    atomic_int stream_destroys;
};

extern struct fake_state fake;
extern const struct kp_backend fake_backend;

/* Installs the fake backend with the given device arch and resets counters. */
void fake_install(const char *arch);

#endif

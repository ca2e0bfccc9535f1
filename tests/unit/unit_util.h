/* Helpers shared by the unit tests. */
#ifndef KP_UNIT_UTIL_H
#define KP_UNIT_UTIL_H

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "fake_backend.h"

/* A device arch that the built code objects run on ("sm_90", "gfx90a"). */
static inline void built_arch(char *out, size_t size)
{
    char first[256];
    snprintf(first, sizeof(first), "%s", KP_BUILT_TARGETS);
    char *comma = strchr(first, ',');
    if (comma)
        *comma = '\0';
    snprintf(out, size, KP_BACKEND_CUDA ? "sm_%s" : "%s", first);
}

/* Runs one suite; returns the process exit status. */
static inline int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif

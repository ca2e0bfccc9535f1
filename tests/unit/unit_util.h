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
    const char *prefix = KP_BACKEND_CUDA ? "sm_" : "";
    size_t p = strlen(prefix), len = strcspn(KP_BUILT_TARGETS, ",");
    if (p + len + 1 > size)
        len = size - p - 1;
    memcpy(out, prefix, p);
    memcpy(out + p, KP_BUILT_TARGETS, len);
    out[p + len] = '\0';
}

/* A contiguous tensor of `shape` on buffer b (may be NULL), starting
 * `offset` elements in. */
static inline kp_tensor unit_tensor(kp_buffer *b, kp_dtype dtype, int rank, const int64_t *shape,
                                    int64_t offset)
{
    kp_tensor t = {b, dtype, {0}};
    ck_assert_int_eq(kp_layout_contiguous(&t.layout, rank, shape), KP_OK);
    t.layout.offset = offset;
    return t;
}

/* The call returns `status` and the thread's error message holds `fragment`. */
#define EXPECT(call, status, fragment)                                                        \
    do {                                                                                      \
        ck_assert_int_eq((call), (status));                                                   \
        ck_assert_msg(strstr(kp_last_error_message(), (fragment)), "message '%s' lacks '%s'", \
                      kp_last_error_message(), (fragment));                                   \
    } while (0)

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

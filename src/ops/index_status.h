/* The object behind kp_index_status: one 64-bit device word. The kernels
 * record an invalid id at position p as word = max(word, ~p), so zero means
 * "no invalid id" and ~word is the smallest offending position. */
#ifndef KP_INDEX_STATUS_H
#define KP_INDEX_STATUS_H

#include "internal.h"

struct kp_index_status {
    kp_device *device;
    kp_buffer *word;
};

/* Device pointer to pass to the kernels: the word, or NULL for no status. */
void *kp_index_status_word(const kp_index_status *status);
/* Decodes a word read back from the device. */
kp_index_report kp_index_status_decode(uint64_t word);

#endif

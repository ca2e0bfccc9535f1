/* The fixture most validation tests share: a fake device with a stream and
 * three buffers: buf (buf_bytes, filled with 0x5a), small (16 bytes) and
 * foreign (4096 bytes on a second device). */
#ifndef KP_FAKE_ENV_H
#define KP_FAKE_ENV_H

#include "unit_util.h"

extern kp_device *dev, *other_dev;
extern kp_stream *stream;
extern kp_buffer *buf, *small, *foreign;

void fake_env_setup(size_t buf_bytes);
void fake_env_teardown(void);
/* Fails unless nothing was launched and every byte of buf still holds 0x5a
 * (naming the first byte written). */
void fake_env_assert_untouched(void);

#endif

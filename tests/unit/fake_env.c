/* The fixture most validation tests share. */
#include "fake_env.h"

kp_device *dev, *other_dev;
kp_stream *stream;
kp_buffer *buf, *small, *foreign;
static size_t buf_size;

void fake_env_setup(size_t buf_bytes)
{
    char arch[64];
    built_arch(arch, sizeof(arch));
    fake_install(arch);
    ck_assert_int_eq(kp_device_open(0, &dev), KP_OK);
    ck_assert_int_eq(kp_device_open(0, &other_dev), KP_OK);
    ck_assert_int_eq(kp_stream_create(dev, &stream), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, buf_bytes, &buf), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 16, &small), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(other_dev, 4096, &foreign), KP_OK);
    memset(kp_buffer_device_ptr(buf), 0x5a, buf_bytes);
    buf_size = buf_bytes;
}

/* A plain loop, then one check: a check a byte costs Check a message to its
 * parent process each, seconds for a buffer of megabytes. */
void fake_env_assert_untouched(void)
{
    ck_assert_int_eq(atomic_load(&fake.launches), 0);
    const unsigned char *p = kp_buffer_device_ptr(buf);
    size_t i = 0;
    while (i < buf_size && p[i] == 0x5a)
        i++;
    ck_assert_msg(i == buf_size, "byte %zu of the buffer was written", i);
}

void fake_env_teardown(void)
{
    kp_buffer_destroy(&buf);
    ck_assert_ptr_null(buf);  /* destroy clears the caller's pointer */
    kp_buffer_destroy(&small);
    kp_buffer_destroy(&foreign);
    kp_stream_destroy(&stream);
    kp_device_close(&dev);
    kp_device_close(&other_dev);
    kp_backend_override(NULL);
}

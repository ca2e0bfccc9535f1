/* The fixture most validation tests share. */
#include "fake_env.h"

kp_device *dev, *other_dev;
kp_stream *stream;
kp_buffer *buf, *small, *foreign;

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
}

void fake_env_teardown(void)
{
    kp_buffer_destroy(&buf);
    kp_buffer_destroy(&small);
    kp_buffer_destroy(&foreign);
    kp_stream_destroy(&stream);
    kp_device_close(&dev);
    kp_device_close(&other_dev);
    kp_backend_override(NULL);
}

/* y = 2x + 1 on the GPU for 1024 floats. */
#include <stdio.h>
#include <kernelpack/kernelpack.h>

int main(void)
{
    float host[1024];
    for (int i = 0; i < 1024; i++)
        host[i] = (float)i;

    kp_device *dev = NULL;
    kp_stream *stream = NULL;
    kp_buffer *buf = NULL;
    kp_status st = kp_device_open(0, &dev);
    if (st == KP_ERR_NO_DRIVER || st == KP_ERR_NO_DEVICE) {
        printf("no GPU: %s\n", kp_last_error_message());
        return 77;
    }
    if (st == KP_OK) st = kp_stream_create(dev, &stream);
    if (st == KP_OK) st = kp_buffer_alloc(dev, sizeof(host), &buf);
    if (st == KP_OK) st = kp_memcpy_h2d(stream, buf, 0, host, sizeof(host));

    kp_tensor x = {buf, KP_DTYPE_F32, {0}};
    int64_t shape[1] = {1024};
    if (st == KP_OK) st = kp_layout_contiguous(&x.layout, 1, shape);
    if (st == KP_OK) st = kp_affine(stream, &x, &x, 2.0, 1.0);  /* in place */
    if (st == KP_OK) st = kp_memcpy_d2h(stream, host, buf, 0, sizeof(host));
    if (st == KP_OK) st = kp_stream_synchronize(stream);

    if (st == KP_OK)
        printf("host[10] = %g (expected 21)\n", host[10]);
    else
        printf("error: %s: %s\n", kp_status_string(st), kp_last_error_message());
    kp_buffer_destroy(&buf);
    kp_stream_destroy(&stream);
    kp_device_close(&dev);
    return st == KP_OK && host[10] == 21.0f ? 0 : 1;
}

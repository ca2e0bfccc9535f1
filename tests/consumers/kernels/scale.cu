// The consumer projects' own kernel, written once for CUDA and ROCm with
// kernelpack's portability header and built by kp-build-module.
#include "kp_device.cuh"

// y[i] = a * x[i] + b for i < n (a grid-stride loop, 64-bit count).
KP_KERNEL void scale_f32(float *y, const float *x, float a, float b, unsigned long long n)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride)
        y[i] = a * x[i] + b;
}

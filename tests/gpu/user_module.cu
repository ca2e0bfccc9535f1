// A module of "user" kernels for the GPU tests of kp_device_get_kernel and
// kp_kernel_launch, built by kp-build-module like a consumer's own module.
#include "kp_device.cuh"

// y = a * x + b over n elements (grid-stride, 64-bit count).
KP_KERNEL void test_axpb_f32(float *y, const float *x, float a, float b, unsigned long long n)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride)
        y[i] = a * x[i] + b;
}

// out[row] = sum of row `blockIdx.y` of a rows x cols matrix: one block per
// row, partial sums in dynamic shared memory (blockDim.x floats, a power of two).
KP_KERNEL void test_row_sum_f32(float *out, const float *in, unsigned cols)
{
    extern __shared__ float partial[];
    const float *row = in + (unsigned long long)blockIdx.y * cols;
    float sum = 0.0f;
    for (unsigned c = threadIdx.x; c < cols; c += blockDim.x)
        sum += row[c];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.y] = partial[0];
}

/* The two conversions of the FP16 cuDNN reference (conv_cudnn_fp16.h): the
 * float x and w to half once at set-up, the half y back to float after a
 * run. Neither is inside a timed region. One thread per element, in a
 * grid-stride loop (step 02). */
#include <cuda_fp16.h>

#include "conv_cuda.h"
#include "conv_cudnn_fp16.h"

#define CONVERT_THREADS    256
#define CONVERT_MAX_BLOCKS 4096

__global__ void conv_float_to_half_kernel(const float *in, __half *out, size_t count)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        out[i] = __float2half_rn(in[i]); /* to nearest, ties to even */
}

__global__ void conv_half_to_float_kernel(const __half *in, float *out, size_t count)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        out[i] = __half2float(in[i]);
}

/* Enough blocks for one element per thread, at most CONVERT_MAX_BLOCKS (the
 * loop takes the rest). */
static unsigned convert_blocks(size_t count)
{
    const size_t blocks = (count + CONVERT_THREADS - 1) / CONVERT_THREADS;
    return (unsigned)(blocks < CONVERT_MAX_BLOCKS ? blocks : CONVERT_MAX_BLOCKS);
}

conv_status conv_fp16_from_float(uint16_t *d_half, const float *d_float, size_t count,
                                 cudaStream_t stream, conv_msg *msg)
{
    if (count == 0)
        return CONV_OK;
    conv_float_to_half_kernel<<<convert_blocks(count), CONVERT_THREADS, 0, stream>>>(
        d_float, (__half *)d_half, count);
    CONV_CHECK_LAUNCH("conv_float_to_half_kernel", msg);
    return CONV_OK;
}

conv_status conv_fp16_to_float(float *d_float, const uint16_t *d_half, size_t count,
                               cudaStream_t stream, conv_msg *msg)
{
    if (count == 0)
        return CONV_OK;
    conv_half_to_float_kernel<<<convert_blocks(count), CONVERT_THREADS, 0, stream>>>(
        (const __half *)d_half, d_float, count);
    CONV_CHECK_LAUNCH("conv_half_to_float_kernel", msg);
    return CONV_OK;
}

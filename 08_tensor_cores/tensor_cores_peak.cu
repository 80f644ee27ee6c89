/* mma.sync's TF32 rate on this GPU, measured: the ceiling of 8b and of any
 * kernel built on mma.sync.m16n8k8.
 *
 * Every warp issues TC_PEAK_CHAINS independent m16n8k8 products in a loop,
 * on operands already in its registers: nothing is loaded and nothing waits
 * but the tensor cores. A real kernel also loads, converts and stores, so it
 * runs below this rate; how far below is what its profile explains. On an
 * A100 mma.sync is the tensor cores' full TF32 rate; on an H100 or H200 it
 * is not, wgmma (8d, 8e) is: the libraries' TF32 rows of the same run, faster
 * there than this rate allows, show by how much.
 *
 * The operands are all 1.0, exact in TF32, so every product adds exactly 8
 * (a k-step of 8 ones) to each accumulator: each thread's sum of its
 * TC_PEAK_CHAINS x 4 accumulators is TC_PEAK_CHAINS * 4 * 8 * iters, which
 * the caller can check (tc_mma_peak_expected). */
#include "tensor_cores.h"

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_ptx.cuh"

#define TC_PEAK_CHAINS  8   /* independent accumulator tiles per warp */
#define TC_PEAK_THREADS 128 /* 4 warps a block */
static_assert(TC_PEAK_CHAINS * 4 * 8 * (long long)TC_PEAK_ITERS_MAX <= (1 << 24),
              "a thread's sum past 2^24 is no longer exact in float: lower TC_PEAK_ITERS_MAX "
              "(tensor_cores.h) for this many chains");

/* excerpt: mma peak */
__global__ void __launch_bounds__(TC_PEAK_THREADS) tc_mma_peak_kernel(float *sink, int iters)
{
#if __CUDA_ARCH__ >= 800
    const unsigned one = to_tf32(1.0f);
    const unsigned a[4] = {one, one, one, one}, b[2] = {one, one};
    float c[TC_PEAK_CHAINS][4] = {};
    for (int it = 0; it < iters; ++it)
#pragma unroll
        for (int q = 0; q < TC_PEAK_CHAINS; ++q) /* each product needs its chain's last */
            mma_m16n8k8_tf32(c[q], a, b);
    float sum = 0.0f;
#pragma unroll
    for (int q = 0; q < TC_PEAK_CHAINS; ++q)
        sum += c[q][0] + c[q][1] + c[q][2] + c[q][3];
    sink[blockIdx.x * TC_PEAK_THREADS + threadIdx.x] = sum;
#endif
}
/* excerpt end: mma peak */

extern "C" int tc_mma_peak_threads(void)
{
    return TC_PEAK_THREADS;
}

extern "C" double tc_mma_peak_flop(int blocks, int iters)
{
    /* per warp and iteration: TC_PEAK_CHAINS products of 16 x 8 x 8 */
    return 2.0 * 16 * 8 * 8 * TC_PEAK_CHAINS * (TC_PEAK_THREADS / 32) * (double)blocks * iters;
}

extern "C" float tc_mma_peak_expected(int iters)
{
    return 4.0f * TC_PEAK_CHAINS * 8.0f * (float)iters;
}

extern "C" conv_status tc_mma_peak(float *d_sink, int blocks, int iters, cudaStream_t stream,
                                   conv_msg *msg)
{
    if (d_sink == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "mma.sync peak: the sink is NULL");
    if (blocks < 1 || iters < 1 || iters > TC_PEAK_ITERS_MAX)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "mma.sync peak: blocks must be positive and iters in [1, %d] (got "
                         "blocks=%d, iters=%d)",
                         TC_PEAK_ITERS_MAX, blocks, iters);
    conv_status st = conv_tf32_available((const void *)tc_mma_peak_kernel, "mma.sync peak", msg);
    if (st == CONV_OK)
        st = conv_kernel_fits((const void *)tc_mma_peak_kernel, "tc_mma_peak_kernel",
                              TC_PEAK_THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    tc_mma_peak_kernel<<<blocks, TC_PEAK_THREADS, 0, stream>>>(d_sink, iters);
    CONV_CHECK_LAUNCH("tc_mma_peak_kernel", msg);
    return CONV_OK;
}

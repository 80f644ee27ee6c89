/* mma.sync's rates on this GPU, measured: in TF32, the ceiling of 8b and of
 * any kernel built on mma.sync.m16n8k8; in FP16, that of 8b-fp16 and of any
 * kernel built on m16n8k16 (two m16n8k8 on compute capability 7.5).
 *
 * Every warp issues TC_PEAK_CHAINS independent products in a loop, on
 * operands already in its registers: nothing is loaded and nothing waits
 * but the tensor cores. A real kernel also loads, converts and stores, so it
 * runs below this rate; how far below is what its profile explains. On an
 * A100 mma.sync is the tensor cores' full rate; on an H100 or H200 it is
 * not, wgmma (step 09) is: the libraries' rows of the same run, faster
 * there than this rate allows, show by how much.
 *
 * The operands are all 1.0, exact in TF32 and in FP16, so every product adds
 * exactly its k to each accumulator: 8 in TF32 (a k-step of 8 ones), 16 in
 * FP16. Each thread's sum of its TC_PEAK_CHAINS x 4 accumulators is
 * TC_PEAK_CHAINS * 4 * k * iters, which the caller can check
 * (tc_mma_peak_expected). */
#include "tensor_cores.h"

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_ptx.cuh"

#define TC_PEAK_CHAINS  8   /* independent accumulator tiles per warp */
#define TC_PEAK_THREADS 128 /* 4 warps a block */
/* a thread's largest sum: TC_PEAK_CHAINS x 4 accumulators, each gaining
 * FP16's k of 16 a product (TF32's is 8), TC_PEAK_ITERS_MAX times */
static_assert(TC_PEAK_CHAINS * 4 * 16 * (long long)TC_PEAK_ITERS_MAX <= (1 << 24),
              "a thread's sum past 2^24 is no longer exact in float: lower TC_PEAK_ITERS_MAX "
              "(tensor_cores.h) for this many chains");

/* excerpt: mma peak */
/* A thread's accumulators, summed into its place in sink. */
__device__ __forceinline__ void tc_peak_store(float *sink, const float c[TC_PEAK_CHAINS][4])
{
    float sum = 0.0f;
#pragma unroll
    for (int q = 0; q < TC_PEAK_CHAINS; ++q)
        sum += c[q][0] + c[q][1] + c[q][2] + c[q][3];
    sink[blockIdx.x * TC_PEAK_THREADS + threadIdx.x] = sum;
}

/* TF32: m16n8k8, each product adding 8 to every accumulator */
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
    tc_peak_store(sink, c);
#endif
}

/* FP16: m16n8k16 (on 7.5 two m16n8k8), each product adding 16 */
__global__ void __launch_bounds__(TC_PEAK_THREADS) tc_mma_peak_fp16_kernel(float *sink, int iters)
{
#if __CUDA_ARCH__ >= 750
    const unsigned one = 0x3c003c00u; /* two halves of 1.0 (0x3c00) in a register */
    const unsigned a[4] = {one, one, one, one}, b[2] = {one, one};
    float c[TC_PEAK_CHAINS][4] = {};
    for (int it = 0; it < iters; ++it)
#pragma unroll
        for (int q = 0; q < TC_PEAK_CHAINS; ++q)
            mma_fp16(c[q], a, b);
    tc_peak_store(sink, c);
#endif
}
/* excerpt end: mma peak */

/* The k of one product: 8 in TF32, 16 in FP16 */
static int peak_k(tc_peak_precision prec)
{
    return prec == TC_PEAK_FP16 ? 16 : 8;
}

extern "C" int tc_mma_peak_threads(void)
{
    return TC_PEAK_THREADS;
}

extern "C" double tc_mma_peak_flop(tc_peak_precision prec, int blocks, int iters)
{
    /* per warp and iteration: TC_PEAK_CHAINS products of 16 x 8 x k */
    return 2.0 * 16 * 8 * peak_k(prec) * TC_PEAK_CHAINS * (TC_PEAK_THREADS / 32) * (double)blocks *
           iters;
}

extern "C" float tc_mma_peak_expected(tc_peak_precision prec, int iters)
{
    return 4.0f * TC_PEAK_CHAINS * (float)peak_k(prec) * (float)iters;
}

/* CONV_OK when the TF32 kernel runs here (conv_tf32_available, then its
 * block); else why not, in one line. */
static conv_status tf32_runs(conv_msg *msg)
{
    const void *kernel = (const void *)tc_mma_peak_kernel;
    conv_status st = conv_tf32_available(kernel, "mma.sync peak", msg);
    return st != CONV_OK ? st
                         : conv_kernel_fits(kernel, "tc_mma_peak_kernel", TC_PEAK_THREADS, 0, msg);
}

/* The same for the FP16 kernel: a GPU of compute capability 7.5 or newer,
 * code for it in this build (conv_kernel_fits says which is missing),
 * compiled for compute_75 or newer (below, the kernel's body is empty). */
static conv_status fp16_runs(conv_msg *msg)
{
    int major = 0, minor = 0;
    const int device = conv_current_device();
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), msg);
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), msg);
    if (major * 10 + minor < 75)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "mma.sync peak: FP16 mma.sync needs compute capability 7.5 or newer; "
                         "this GPU is sm_%d%d",
                         major, minor);
    const void *kernel = (const void *)tc_mma_peak_fp16_kernel;
    conv_status st = conv_kernel_fits(kernel, "tc_mma_peak_fp16_kernel", TC_PEAK_THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    struct cudaFuncAttributes attr;
    CONV_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel), msg);
    if (attr.ptxVersion < 75)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "mma.sync peak: this build runs compute_%d code on this sm_%d%d GPU, "
                         "which has no FP16 mma.sync: rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d%d "
                         "(or native)",
                         attr.ptxVersion, major, minor, major, minor);
    return CONV_OK;
}

extern "C" conv_status tc_mma_peak(tc_peak_precision prec, float *d_sink, int blocks, int iters,
                                   cudaStream_t stream, conv_msg *msg)
{
    if (prec != TC_PEAK_TF32 && prec != TC_PEAK_FP16)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "mma.sync peak: precision %d is neither TC_PEAK_TF32 nor TC_PEAK_FP16",
                         (int)prec);
    if (d_sink == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "mma.sync peak: the sink is NULL");
    if (blocks < 1 || iters < 1 || iters > TC_PEAK_ITERS_MAX)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "mma.sync peak: blocks must be positive and iters in [1, %d] (got "
                         "blocks=%d, iters=%d)",
                         TC_PEAK_ITERS_MAX, blocks, iters);
    if (prec == TC_PEAK_FP16) {
        conv_status st = fp16_runs(msg);
        if (st != CONV_OK)
            return st;
        tc_mma_peak_fp16_kernel<<<blocks, TC_PEAK_THREADS, 0, stream>>>(d_sink, iters);
        CONV_CHECK_LAUNCH("tc_mma_peak_fp16_kernel", msg);
        return CONV_OK;
    }
    conv_status st = tf32_runs(msg);
    if (st != CONV_OK)
        return st;
    tc_mma_peak_kernel<<<blocks, TC_PEAK_THREADS, 0, stream>>>(d_sink, iters);
    CONV_CHECK_LAUNCH("tc_mma_peak_kernel", msg);
    return CONV_OK;
}

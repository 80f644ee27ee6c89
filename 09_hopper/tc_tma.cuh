/* Step 09. Versions: 9b (and 9c, 9b with its sum split) and 9b-fp16.
 *
 * What both TMA kernels (9b: hopper_tma_9b.cu, 9b-fp16: hopper_tma_fp16.cu)
 * share: the mbarriers that hand a stage from the producer to the consumers
 * and back, the two TMA copies (x in im2col mode, the weights as tiles), and
 * the driver's tensor-map encoders on the host. The box a copy moves, its
 * element type and its swizzle are the tensor map's, made on the host. Device
 * code compiled for sm_90a only. */
#ifndef TC_TMA_CUH
#define TC_TMA_CUH

#include <cuda.h>
#include <cudaTypedefs.h>

#include "conv_cuda.h"
#include "conv_device.h"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* excerpt: mbarrier */
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/* One arrival that also announces `bytes` still to come from TMA copies. */
__device__ __forceinline__ void mbar_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/* Wait until the barrier's phase of the given parity (0, 1, 0, ...) has
 * completed: all its arrivals and all its bytes. */
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    unsigned done;
    do
        asm volatile("{\n .reg .pred p;\n"
                     " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    while (!done);
}
/* excerpt end: mbarrier */

/* The ring's barriers, by thread 0 before the block's first __syncthreads():
 * per stage a "full" one (the producer's one arrival, plus the bytes) and an
 * "empty" one (one arrival per consumer warp). */
__device__ __forceinline__ void mbar_init_ring(unsigned full, unsigned empty, int stages,
                                               unsigned consumer_warps)
{
    for (int st = 0; st < stages; ++st) {
        mbar_init(full + 8 * st, 1);
        mbar_init(empty + 8 * st, consumer_warps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* excerpt: TMA copies */
/* A box of pixels x channels from x in im2col mode (its sizes: the map's):
 * the pixels from (n, h, w) on, as the map walks them (w by stride_w, then h,
 * then n), each moved by the tap's offset (dw, dh); channels from c on. */
__device__ __forceinline__ void tma_im2col(unsigned dst, const CUtensorMap *map, unsigned bar,
                                           int c, int w, int h, int n, int dw, int dh)
{
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n" ::"r"(dst),
        "l"((unsigned long long)map), "r"(bar), "r"(c), "r"(w), "r"(h), "r"(n),
        "h"((unsigned short)dw), "h"((unsigned short)dh)
        : "memory");
}
/* A box of a 3-D tensor from coordinates (i0, i1, i2), innermost first (its
 * sizes: the map's): 9b's weights seen as w[tap][c][k], a box of 32 k x 32 c
 * of one tap; 9b-fp16's as wk[k][tap][c], 64 c x 128 k of one tap. */
__device__ __forceinline__ void tma_tile(unsigned dst, const CUtensorMap *map, unsigned bar, int i0,
                                         int i1, int i2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                 "l"((unsigned long long)map), "r"(bar), "r"(i0), "r"(i1), "r"(i2)
                 : "memory");
}
/* excerpt end: TMA copies */
#endif

/* The driver's tensor-map encoders, found through the runtime (so the
 * program needs no link to the driver library). */
static conv_status tma_encoders(PFN_cuTensorMapEncodeIm2col_v12000 *im2col,
                                PFN_cuTensorMapEncodeTiled_v12000 *tiled, const char *who,
                                conv_msg *msg)
{
    cudaDriverEntryPointQueryResult q1 = cudaDriverEntryPointSymbolNotFound, q2 = q1;
    CONV_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", (void **)im2col,
                                                     12000, cudaEnableDefault, &q1),
                    msg);
    CONV_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)tiled,
                                                     12000, cudaEnableDefault, &q2),
                    msg);
    if (q1 != cudaDriverEntryPointSuccess || q2 != cudaDriverEntryPointSuccess || !*im2col ||
        !*tiled)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "%s: this driver has no tensor-map encoder (CUDA 12.0 or newer "
                         "needed)",
                         who);
    return CONV_OK;
}

/* Persistent blocks: as many as the GPU holds at once (of `kernel` with
 * this block), at most `tiles`, each taking every gridDim.x-th tile. */
static conv_status tma_persistent_grid(const void *kernel, int threads, size_t smem,
                                       long long tiles, dim3 *grid, conv_msg *msg)
{
    int sms = 0, per_sm = 0;
    CONV_CUDA_CHECK(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, conv_current_device()), msg);
    CONV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem),
                    msg);
    const long long resident = (long long)sms * (per_sm > 0 ? per_sm : 1);
    *grid = dim3((unsigned)(tiles < resident ? tiles : resident));
    return CONV_OK;
}

#endif /* TC_TMA_CUH */

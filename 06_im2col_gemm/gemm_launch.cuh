/* Step 06: the launch every GEMM launcher of 6a ... 6e makes, written once.
 * Their kernels take the same arguments (M, N, K, A, B, C and the blocks per
 * block row), so one function can check, launch and check the launch for
 * each; a launcher only picks its kernel, its block and its variant. */
#ifndef GEMM_LAUNCH_CUH
#define GEMM_LAUNCH_CUH

#include "conv_cuda.h"
#include "gemm.h"

/* gemm_prepare (the checks, the grid, whether `kernel` fits), then `kernel`
 * over the grid with `block` threads, then the launch's check as
 * CONV_CHECK_LAUNCH_OF makes it ("<name> launch failed at ..."). */
static inline conv_status
gemm_run(gemm_variant v, int m, int n, int k, const float *d_a, const float *d_b, float *d_c,
         void (*kernel)(int, int, int, const float *, const float *, float *, int),
         const char *name, dim3 block, cudaStream_t stream, conv_msg *msg)
{
    const gemm_launch l = gemm_prepare(v, m, n, k, d_a, d_b, d_c, (const void *)kernel, name,
                                       (int)(block.x * block.y), msg);
    if (l.status != CONV_OK)
        return l.status;
    kernel<<<l.blocks, block, 0, stream>>>(m, n, k, d_a, d_b, d_c, l.tiles_n);
    CONV_CHECK_LAUNCH_OF(name, msg);
    return CONV_OK;
}

#endif /* GEMM_LAUNCH_CUH */

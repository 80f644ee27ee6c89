/* Step 07 on the GPU, the non-fused Winograd convolution: four launches,
 * each one stage of the algorithm, with the transformed tensors in global
 * memory between them (winograd.cu):
 *
 *   1. filter transform  U[e][k][c] = (G g_kc G^T)[e]           K*C threads
 *   2. input transform   V[e][c][t] = (B^T d_ct B)[e]           C*T threads
 *   3. alpha^2 GEMMs     M[e] = U[e] (K x C) * V[e] (C x T)     one batched launch of
 *                                                               step 06's 6e kernel
 *   4. output transform  y tile (k, t) = A^T M[.][k][t] A       K*T threads
 *
 * (the NCHW layouts; in NHWC, so that neighbouring threads touch neighbouring
 * channels, U[e] is C x K, V[e] is T x C and the GEMM is M[e] = V[e] U[e],
 * T x K: winograd.cu)
 *
 * e runs over the alpha x alpha positions of a tile (16 for F(2x2, 3x3), 36
 * for F(4x4, 3x3)), t over the T = N * ceil(P/m) * ceil(Q/m) output tiles of
 * the batch (n-major, then tile row, then tile column), d_ct is input tile t
 * of channel c (alpha x alpha, zeros outside the image). The multiplications
 * of the convolution are all in stage 3: alpha^2 * K * C * T of them against
 * 9 * K * C * N * P * Q for the direct method, 2.25 times fewer for F(2x2)
 * and 4 times fewer for F(4x4) (on whole tiles).
 *
 * Both layouts, any N, C, K, H, W and padding; 3x3 filters, stride 1 and
 * dilation 1 only (wino_supports). Every launcher validates all its
 * arguments before it touches the device. Device pointers d_. */
#ifndef WINOGRAD_H
#define WINOGRAD_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"
#include "winograd_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of workspace conv2d_winograd needs: U, V and M,
 * alpha^2 * (K*C + C*T + K*T). */
size_t wino_workspace_elems(const conv_params *p, wino_tile t);

/* Checks a problem before anything runs: wino_supports, the GEMM sizes
 * within step 06's limits, and the workspace plus the tensors within
 * device_bytes (pass the device's free memory). No CUDA call. */
conv_status wino_check(const conv_params *p, wino_tile t, size_t device_bytes, conv_msg *msg);

/* y = conv(x, w) by Winograd tile t, with d_work holding work_elems floats
 * (at least wino_workspace_elems). */
conv_status conv2d_winograd(const conv_params *p, wino_tile t, const float *d_x, const float *d_w,
                            float *d_y, float *d_work, size_t work_elems, cudaStream_t stream,
                            conv_msg *msg);

/* The four stages above, in order. */
typedef enum {
    WINO_STAGE_FILTER = 0,
    WINO_STAGE_INPUT,
    WINO_STAGE_GEMM,
    WINO_STAGE_OUTPUT,
    WINO_STAGE_COUNT
} wino_stage;
/* "filter transform", "input transform", "GEMMs", "output transform". */
const char *wino_stage_name(wino_stage s);

/* Stages first..last only, on the same workspace (the stages before first
 * must have run on it): how each stage is timed alone. conv2d_winograd is
 * stages FILTER..OUTPUT. */
conv_status conv2d_winograd_stages(const conv_params *p, wino_tile t, wino_stage first,
                                   wino_stage last, const float *d_x, const float *d_w, float *d_y,
                                   float *d_work, size_t work_elems, cudaStream_t stream,
                                   conv_msg *msg);

/* ---- 7c: the fused F(4x4, 3x3) (winograd_fused_7c.cu) ----
 * The filter transform, then one kernel for the input transform, the
 * products summed over the channels and the output transform, with V and M
 * in shared memory and registers only. */

/* Floats of workspace conv2d_winograd_fused needs: U, 36 * K * C. */
size_t wino_fused_workspace_elems(const conv_params *p);

/* As wino_check, for the fused kernel. No CUDA call. */
conv_status wino_fused_check(const conv_params *p, size_t device_bytes, conv_msg *msg);

/* y = conv(x, w) by the fused F(4x4, 3x3), d_work holding at least
 * wino_fused_workspace_elems floats. */
conv_status conv2d_winograd_fused(const conv_params *p, const float *d_x, const float *d_w,
                                  float *d_y, float *d_work, size_t work_elems, cudaStream_t stream,
                                  conv_msg *msg);

/* Its two launches one by one (for timing each): the filter transform when
 * `filter` is non-zero, the fused kernel when `rest` is (it needs the
 * transformed filters in d_work). */
conv_status conv2d_winograd_fused_stages(const conv_params *p, int filter, int rest,
                                         const float *d_x, const float *d_w, float *d_y,
                                         float *d_work, size_t work_elems, cudaStream_t stream,
                                         conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* WINOGRAD_H */

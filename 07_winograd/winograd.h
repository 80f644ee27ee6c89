/* Step 07 on the GPU. Versions: 7a (F(2x2, 3x3)) and 7b (F(4x4, 3x3)): the
 * non-fused convolution, conv2d_winograd(), four launches with the transformed
 * tensors in global memory between them (winograd.cu):
 *
 *   1. filter transform  U[e][k][c] = (G g_kc G^T)[e]           K*C threads
 *   2. input transform   V[e][c][t] = (B^T d_ct B)[e]           C*T threads
 *   3. alpha^2 GEMMs     M[e] = U[e] (K x C) * V[e] (C x T)     one batched launch of
 *                                                               step 06's 6e kernel
 *   4. output transform  y tile (k, t) = A^T M[.][k][t] A       K*T threads
 *
 * (NCHW layouts; NHWC stores U, V and M transposed), e running over the
 * alpha x alpha positions of a tile, t over the output tiles of the batch.
 * 7c, conv2d_winograd_fused(): F(4x4, 3x3) in one fused kernel after the
 * filter transform (winograd_fused_7c.cu).
 *
 * Both layouts, any N, C, K, H, W and padding; 3x3 filters, stride 1 and
 * dilation 1 only (wino_supports). Every launcher validates all its
 * arguments before it touches the device. Device pointers d_.
 *
 * Lesson: docs/07_winograd.md, section "The non-fused pipeline on the GPU (7a, 7b)". */
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

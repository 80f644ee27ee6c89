/* Step 10: the backward pass on the GPU.
 * 10a (conv_backward_10a.cu), one thread per element of the gradient:
 *   conv2d_backward_data_naive()   dgrad, one thread per element of dx: the
 *                                  taps that reach it and every output channel;
 *   conv2d_backward_filter_naive() wgrad, one thread per element of dw: the
 *                                  whole batch and every output position.
 * 10b (conv_backward_10b_data.cu, _filter.cu), the same sums as tiled
 * implicit GEMMs in FP32:
 *   conv2d_backward_data_igemm()   dgrad, one dense GEMM per stride phase;
 *   conv2d_backward_filter_igemm() wgrad, split-K with a deterministic sum.
 * 10c (conv_backward_10c.cu), both GEMMs on TF32 tensor cores (NHWC):
 *   conv2d_backward_data_tf32(), conv2d_backward_filter_tf32().
 * 10d (conv_backward_10d.cu), dgrad at stride 1 as a forward convolution of
 *   dy with the flipped filter, run by step 06's 6f, step 07's 7b, step
 *   08's 8b or step 09's 9b:
 *   conv2d_backward_data_forward().
 * Both layouts, batch, padding, stride and dilation; device pointers and a
 * stream; every argument validated before any CUDA call, with one line naming
 * the parameter. Lesson: docs/10_backward.md, sections "On the GPU: one
 * thread per gradient element", "dgrad and wgrad as implicit GEMMs",
 * "Tensor cores for the gradients" and "dgrad as a forward convolution (10d)". */
#ifndef CONV_BACKWARD_H
#define CONV_BACKWARD_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of both kernels, and the cap of their grid-stride grids. */
#define CONV_BACKWARD_THREADS    256
#define CONV_BACKWARD_MAX_BLOCKS 65535

/* dx from dy (the output's shape) and w. max_blocks <= 0: one thread per
 * element of dx, up to CONV_BACKWARD_MAX_BLOCKS blocks; a positive value caps
 * the grid lower (the tests make every thread loop). */
conv_status conv2d_backward_data_naive(const conv_params *p, const float *d_dy, const float *d_w,
                                       float *d_dx, int max_blocks, cudaStream_t stream,
                                       conv_msg *msg);

/* dw from x and dy; max_blocks as above, over the elements of dw. */
conv_status conv2d_backward_filter_naive(const conv_params *p, const float *d_x, const float *d_dy,
                                         float *d_dw, int max_blocks, cudaStream_t stream,
                                         conv_msg *msg);

/* 10b dgrad's block tile: TILE x TILE outputs, DEPTH deep, THREADS threads
 * (4 x 4 outputs each). */
#define CONV_BACKWARD_IGEMM_TILE    64
#define CONV_BACKWARD_IGEMM_DEPTH   16
#define CONV_BACKWARD_IGEMM_THREADS 256

/* 10b wgrad's, step 06's 6f shape: WGRAD_BM (rows, k) x WGRAD_BN (columns,
 * (r, s, c)) outputs, WGRAD_DEPTH deep, WGRAD_THREADS threads (8 x 8 outputs
 * each), WGRAD_BLOCKS_PER_SM blocks per SM promised to the compiler. The
 * split rule asks for two waves of blocks, at most RULE_MAX_SPLITS slices,
 * each at least MIN_SLICE_TILES tiles of WGRAD_DEPTH deep; a caller may ask
 * for up to MAX_SPLITS. */
#define CONV_BACKWARD_IGEMM_WGRAD_BM            64
#define CONV_BACKWARD_IGEMM_WGRAD_BN            128
#define CONV_BACKWARD_IGEMM_WGRAD_DEPTH         16
#define CONV_BACKWARD_IGEMM_WGRAD_THREADS       128
#define CONV_BACKWARD_IGEMM_WGRAD_BLOCKS_PER_SM 3
#define CONV_BACKWARD_IGEMM_RULE_MAX_SPLITS     64
#define CONV_BACKWARD_IGEMM_MIN_SLICE_TILES     8
#define CONV_BACKWARD_IGEMM_MAX_SPLITS          4096

/* What conv2d_backward_data_igemm() refuses about the problem itself
 * (CONV_ERR_INVALID for a bad or NULL p, CONV_ERR_UNSUPPORTED for a GEMM or
 * grid too large), the same one line; no CUDA call. Likewise for each
 * launcher below: a rule (library/conv_auto.h) asks these before it picks. */
conv_status conv2d_backward_data_igemm_check(const conv_params *p, conv_msg *msg);
conv_status conv2d_backward_filter_igemm_check(const conv_params *p, conv_msg *msg);

/* dx from dy and w as stride_h * stride_w implicit GEMMs, one per phase of
 * the stride (M = the phase's inputs, N = C, depth = its taps x K). Only
 * enqueues on stream: no allocation, no synchronisation. */
conv_status conv2d_backward_data_igemm(const conv_params *p, const float *d_dy, const float *d_w,
                                       float *d_dx, cudaStream_t stream, conv_msg *msg);

/* The workspace wgrad needs for `splits` slices of its depth, in bytes: one
 * K x C*R*S partial tile per slice; 0 for splits <= 1 (or a NULL p). */
size_t conv2d_backward_filter_igemm_workspace(const conv_params *p, int splits);

/* The number of slices the rule picks for p on a GPU with sm_count SMs:
 * enough blocks for two waves of WGRAD_BLOCKS_PER_SM per SM, at most
 * RULE_MAX_SPLITS slices, each at least MIN_SLICE_TILES tiles deep; 1 when
 * the output tiles alone fill the GPU (or for a NULL p, sm_count < 1). */
int conv2d_backward_filter_igemm_splits(const conv_params *p, int sm_count);

/* dw from x and dy as an implicit GEMM (M = K, N = C*R*S, depth = N*P*Q),
 * its depth split into `splits` slices (<= 0: the rule on the current
 * device) whose partial tiles go to d_workspace and are then added in slice
 * order into dw: the same bits on every run. splits == 1 writes dw directly
 * and needs no workspace. Only enqueues on stream. */
conv_status conv2d_backward_filter_igemm(const conv_params *p, const float *d_x, const float *d_dy,
                                         float *d_dw, int splits, float *d_workspace,
                                         size_t workspace_bytes, cudaStream_t stream,
                                         conv_msg *msg);

/* ---- 10c: the gradients on TF32 tensor cores (conv_backward_10c.cu) ----
 * Both as implicit GEMMs on mma.sync (TF32 inputs rounded to nearest, float
 * sums), NHWC only (NCHW: CONV_ERR_UNSUPPORTED); compute capability 8.0 and
 * newer (older GPUs, or a build without code for one: CONV_ERR_UNSUPPORTED).
 * Lesson: docs/10_backward.md, section "Tensor cores for the gradients". */

/* The problem's checks of the two launchers below (NHWC, the grid); the
 * GPU's compute capability is the launchers' to check. No CUDA call. */
conv_status conv2d_backward_data_tf32_check(const conv_params *p, conv_msg *msg);
conv_status conv2d_backward_filter_tf32_check(const conv_params *p, conv_msg *msg);

/* dx from dy and w: each stride phase of dx a GEMM over its own taps. */
conv_status conv2d_backward_data_tf32(const conv_params *p, const float *d_dy, const float *d_w,
                                      float *d_dx, cudaStream_t stream, conv_msg *msg);

/* How many parts wgrad's sum over N*P*Q is split into on a GPU of sm_count
 * SMs (1 for an invalid problem), and the workspace in bytes those parts
 * take (0 for one split: it writes dw directly). */
int conv2d_backward_filter_tf32_splits(const conv_params *p, int sm_count);
size_t conv2d_backward_filter_tf32_workspace(const conv_params *p, int splits);

/* dw from x and dy in `splits` parts (1 <= splits <= 65535) written to
 * d_workspace (workspace_bytes of it, at least what
 * conv2d_backward_filter_tf32_workspace() says), then added in a fixed order:
 * the same bits on every run for the same splits. */
conv_status conv2d_backward_filter_tf32(const conv_params *p, const float *d_x, const float *d_dy,
                                        float *d_dw, int splits, float *d_workspace,
                                        size_t workspace_bytes, cudaStream_t stream, conv_msg *msg);

/* ---- 10d: dgrad as a forward convolution (conv_backward_10d.cu) ----
 * At stride 1, dx = conv(dy, w') with w' the filter flipped in both spatial
 * axes and its channel axes swapped, padded by pad' = dil*(R-1) - pad per
 * axis, the same dilation, stride 1. Lesson: docs/10_backward.md, section
 * "dgrad as a forward convolution (10d)". */

/* The forward kernel that runs it: step 06's 6f (FP32, NHWC), step 07's 7b
 * (Winograd F(4x4, 3x3), FP32 data, 3x3 filters without dilation, both
 * layouts), step 08's 8b (mma.sync TF32, NHWC, compute capability 8.0) or
 * step 09's 9b (wgmma fed by TMA, dy truncated to TF32 as 9b truncates x;
 * NHWC, compute capability 9.0 and sm_90a code). */
typedef enum {
    CONV_BACKWARD_FORWARD_6F = 0,
    CONV_BACKWARD_FORWARD_8B,
    CONV_BACKWARD_FORWARD_9B,
    CONV_BACKWARD_FORWARD_7B,
    CONV_BACKWARD_FORWARD_COUNT
} conv_backward_forward_kernel;

/* The forward problem whose output is p's dx, into *fwd: n, c = K, h = P,
 * w = Q, k = C, the same filter size, padding dil*(filter-1) - pad, stride 1,
 * the same dilation and layout, the forward pass. CONV_ERR_INVALID for an
 * invalid p; CONV_ERR_UNSUPPORTED with one line for a stride > 1 or a
 * padding larger than dil*(filter-1) on either axis. No CUDA call. */
conv_status conv2d_backward_data_forward_params(const conv_params *p, conv_params *fwd,
                                                conv_msg *msg);

/* The workspace conv2d_backward_data_forward() needs with kernel `which`, in
 * bytes: the flipped filter (K*C*R*S floats, rounded up to 64), then for 8b
 * its copy as KRSC, for 7b Winograd's U, V and M (wino_workspace_elems of
 * the forward problem); 0 for an invalid (or NULL) p or an unknown which,
 * and 7b's flipped filter alone where the forward problem is no convolution
 * 7b runs. */
size_t conv2d_backward_data_forward_workspace(const conv_params *p,
                                              conv_backward_forward_kernel which);

/* w' of p's filter into d_wf (K*C*R*S floats, not d_w), in p's layout:
 * NCHW w'[c][k][r][s] = w[k][c][R-1-r][S-1-s], NHWC w'[r][s][k][c] =
 * w[R-1-r][S-1-s][c][k], the forward problem's filter. Only enqueues. */
conv_status conv2d_backward_data_flip_filter(const conv_params *p, const float *d_w, float *d_wf,
                                             cudaStream_t stream, conv_msg *msg);

/* dx from dy and w: w' into d_workspace (workspace_bytes of it, at least
 * what conv2d_backward_data_forward_workspace() says), then the forward
 * kernel `which` on the forward problem, both on stream. Everything the
 * forward kernel would refuse is refused before the first launch. */
conv_status conv2d_backward_data_forward(const conv_params *p, conv_backward_forward_kernel which,
                                         const float *d_dy, const float *d_w, float *d_dx,
                                         float *d_workspace, size_t workspace_bytes,
                                         cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_BACKWARD_H */

/* Step 06, the convolution as a matrix product: im2col (im2col.h) lowers the
 * input into a column buffer, a GEMM of the progression (gemm.h) multiplies it
 * with the filter, and for NCHW with a batch a permutation puts the result in
 * y's layout; 6f, the implicit GEMM, does the same product with no column
 * buffer (conv_implicit_gemm_6f.cu).
 *
 *   NCHW: y' = w[K][C*R*S] * col[C*R*S][N*P*Q]  is [K][N*P*Q], then permuted to
 *         y[N][K][P][Q] (for N == 1 it is y already);
 *   NHWC: y[N*P*Q][K] = col[N*P*Q][R*S*C] * w[R*S*C][K]  is already y[N][P][Q][K].
 *
 * Every launcher validates all its arguments before it touches the device, so
 * a bad argument is one line in msg and nothing runs. Device pointers d_. */
#ifndef CONV_IM2COL_GEMM_H
#define CONV_IM2COL_GEMM_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_cublas.h"
#include "conv_params.h"
#include "conv_status.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device bytes the im2col pipeline needs besides x, w, y: the column buffer,
 * plus a [K][N*P*Q] GEMM output for NCHW with N > 1 (permuted into y after). */
size_t conv2d_im2col_gemm_workspace_elems(const conv_params *p);

/* Checks the step's own limits on a valid problem: GEMM sizes (rows N*P*Q,
 * depth C*R*S, K) within GEMM_MAX_DIM, and the workspace plus the tensors
 * within `device_bytes` (pass the device's free memory). No CUDA call. */
conv_status conv2d_im2col_gemm_check(const conv_params *p, size_t device_bytes, conv_msg *msg);

/* y = conv(x, w): im2col into d_work, GEMM with variant g (cublas for
 * GEMM_CUBLAS), and for NCHW with N > 1 the permutation into y. d_work must
 * hold conv2d_im2col_gemm_workspace_elems(p) floats (work_elems says how many
 * it holds). */
conv_status conv2d_im2col_gemm(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                               float *d_work, size_t work_elems, gemm_variant g,
                               conv_cublas *cublas, cudaStream_t stream, conv_msg *msg);

/* The stages of conv2d_im2col_gemm one by one, for the stage timings:
 * the GEMM on an already-filled column buffer, and the NCHW permutation
 * (a no-op returning CONV_OK when the layout needs none). */
conv_status conv2d_im2col_gemm_stage_gemm(const conv_params *p, const float *d_w, float *d_y,
                                          float *d_work, size_t work_elems, gemm_variant g,
                                          conv_cublas *cublas, cudaStream_t stream, conv_msg *msg);
conv_status conv2d_im2col_gemm_stage_permute(const conv_params *p, float *d_y, float *d_work,
                                             size_t work_elems, cudaStream_t stream, conv_msg *msg);

/* 6f: implicit GEMM for NHWC (x[N][H][W][C], w[R][S][C][K], y[N][P][Q][K]):
 * 6e's kernel whose A-tile loader computes (n, p, q) and (r, s, c) for each
 * element and reads x directly (zero outside the image). No workspace. NCHW is
 * rejected (CONV_ERR_UNSUPPORTED). In conv_implicit_gemm_6f.cu. */
conv_status conv2d_implicit_gemm(const conv_params *p, const float *d_x, const float *d_w,
                                 float *d_y, cudaStream_t stream, conv_msg *msg);

/* The pipelines behind the conv_gpu_conv signature of common/conv_harness.h
 * (for the step program, the tests and conv_bench): ctx is a conv2d_pipeline. */
typedef struct {
    gemm_variant g; /* the GEMM of the im2col pipeline */
    int implicit;   /* 1: 6f, conv2d_implicit_gemm (g, d_work unused) */
    float *d_work;  /* conv2d_im2col_gemm_workspace_elems(p) floats */
    size_t work_elems;
    conv_cublas *cublas; /* for GEMM_CUBLAS */
} conv2d_pipeline;

conv_status conv2d_pipeline_conv(void *ctx, const conv_params *p, const float *d_x,
                                 const float *d_w, float *d_y, cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_IM2COL_GEMM_H */

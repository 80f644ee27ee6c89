/* Step 02: the first GPU convolutions, one thread per output element.
 *
 * Versions 2a and 2b, the keys of the program's --variant:
 *   2a conv2d_naive()    1D grid-stride loop over all N*K*P*Q outputs (the
 *                        MXNet/Caffe CUDA_KERNEL_LOOP idiom): any problem
 *                        size with a bounded grid.
 *   2b conv2d_naive_2d() 16x16 thread blocks over the output plane (x = q,
 *                        y = p) and the grid's z over the N*K planes: the
 *                        "natural" mapping of a 2D problem to a 2D grid.
 *
 * Both handle batch, padding, stride and dilation, and both layouts (NCHW,
 * and NHWC with the filter as R*S*C*K). They take device pointers and a
 * stream, validate everything before any CUDA call, and return a conv_status
 * with one line naming the parameter. */
#ifndef CONV_NAIVE_H
#define CONV_NAIVE_H

#include <cuda_runtime_api.h>

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of the grid-stride kernel. */
#define CONV2D_NAIVE_THREADS 256
/* Default grid cap of the grid-stride kernel (MXNet's kMaxGridNum): larger
 * problems are covered by the loop, each thread then computes several outputs. */
#define CONV2D_NAIVE_MAX_BLOCKS 65535
/* The 2D kernel's block: CONV2D_NAIVE_2D_BLOCK x CONV2D_NAIVE_2D_BLOCK threads. */
#define CONV2D_NAIVE_2D_BLOCK 16

/* The launchers' checks of the problem (no pointers, no CUDA call): any valid
 * problem whose per-axis window coordinates fit an int. */
conv_status conv2d_naive_check(const conv_params *p, conv_msg *msg);

/* Grid-stride kernel. max_blocks <= 0 launches ceil(N*K*P*Q / 256) blocks,
 * capped at CONV2D_NAIVE_MAX_BLOCKS; a positive max_blocks caps the grid lower
 * (the tests use 1 and 3 to make every thread loop). */
conv_status conv2d_naive(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                         int max_blocks, cudaStream_t stream, conv_msg *msg);

/* 2D-block kernel. The grid's y and z are capped at 65535 (the hardware
 * limit); taller outputs and more than 65535 N*K planes are covered by loops. */
conv_status conv2d_naive_2d(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                            cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_NAIVE_H */

/* Step 10: the backward pass on the GPU, first in its naive form: one thread
 * per element of the gradient it computes, each gathering its whole sum.
 *   conv2d_backward_data_naive()   dgrad, one thread per element of dx: the
 *                                  taps that reach it and every output channel;
 *   conv2d_backward_filter_naive() wgrad, one thread per element of dw: the
 *                                  whole batch and every output position.
 * Both layouts, batch, padding, stride and dilation; device pointers and a
 * stream; every argument validated before any CUDA call, with one line naming
 * the parameter. Lesson: docs/10_backward.md, section "On the GPU: one thread
 * per gradient element". */
#ifndef CONV_BACKWARD_H
#define CONV_BACKWARD_H

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

#ifdef __cplusplus
}
#endif

#endif /* CONV_BACKWARD_H */

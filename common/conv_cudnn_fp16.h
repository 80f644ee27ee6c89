/* The cuDNN references of the FP16 class (conv_verify.h): what the FP16 rows
 * of steps 08 and 09 are compared with. x, w and y in half precision
 * (CUDNN_DATA_HALF), the convolution's compute type CUDNN_DATA_FLOAT (the
 * products and sums in float, as 8a-fp16 does them), tensor cores allowed.
 * Two searches, as for the FP32 and TF32 references: the legacy API's
 * (conv_cudnn.h: CUDNN_TENSOR_OP_MATH, the fastest algorithm that
 * cudnnFindConvolutionForwardAlgorithm measures) or the graph API's
 * (conv_cudnn_graph.h: every engine of the FP16 class, timed). Forward pass
 * only.
 *
 * The problem's tensors are float: x and w are rounded to half once, at
 * set-up (conv_cudnn_fp16_set_inputs; the filter first reordered to KRSC in
 * NHWC, as conv_cudnn_set_filter does), and the half y is converted back to
 * float after a run (conv_cudnn_fp16_output), outside the timed region:
 * conv_cudnn_fp16_forward, the cudnnConvolutionForward call alone, is what
 * gets timed. The two conversions are the kernels of
 * conv_cudnn_fp16_convert.cu.
 *
 * Without cuDNN at build time the plan functions return
 * CONV_ERR_UNAVAILABLE; the host logic (the check, the bound) is always
 * there. */
#ifndef CONV_CUDNN_FP16_H
#define CONV_CUDNN_FP16_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "conv_cudnn_graph.h"
#include "conv_params.h"
#include "conv_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- host logic, no CUDA call ---- */

/* CONV_OK for a forward problem; CONV_ERR_UNSUPPORTED with one line for a
 * backward pass (the FP16 reference computes the forward pass only). */
conv_status conv_cudnn_fp16_check(const conv_params *p, conv_msg *msg);

/* CONV_OK when x (nx values) and w (nw) fit in half (conv_fp16_check_range)
 * and, where the double reference of y is given (ref, ny values; NULL: not
 * checked), every exact output does too; else CONV_ERR_UNSUPPORTED with one
 * line naming the tensor and the first value beyond. */
conv_status conv_cudnn_fp16_check_values(const float *x, size_t nx, const float *w, size_t nw,
                                         const double *ref, size_t ny, conv_msg *msg);

/* The bound of the FP16 reference: the bound of the FP16 class
 * (conv_fp16_bound: inputs rounded to half, sums in float) times
 * algo_factor (conv_cudnn_bound_factor: 1 for the dot-product algorithms),
 * plus the rounding of the output to half. Derived in conv_cudnn_fp16.c. */
conv_verify_opts conv_cudnn_fp16_bound(size_t depth, const float *x, size_t nx, const float *w,
                                       size_t nw, double algo_factor);

/* ---- the conversions (conv_cudnn_fp16_convert.cu), enqueued on stream ---- */

/* d_half[i] = d_float[i] rounded to the nearest half (ties to even); a half
 * is held as its 16 bits. */
conv_status conv_fp16_from_float(uint16_t *d_half, const float *d_float, size_t count,
                                 cudaStream_t stream, conv_msg *msg);
/* d_float[i] = d_half[i] (exact: every half is a float). */
conv_status conv_fp16_to_float(float *d_float, const uint16_t *d_half, size_t count,
                               cudaStream_t stream, conv_msg *msg);

/* ---- the plan ---- */

typedef struct conv_cudnn_fp16_plan conv_cudnn_fp16_plan;

/* The half copies of x, w and y and the search: with graph NULL, the legacy
 * API's over every forward algorithm (fastest kept, with its workspace);
 * else the graph API's within graph's limits, on the stream, over the half
 * copies. CONV_ERR_UNSUPPORTED with one line when cuDNN runs nothing for the
 * problem, or for a backward pass. */
conv_status conv_cudnn_fp16_plan_create(conv_cudnn_fp16_plan **plan, const conv_params *p,
                                        const conv_cudnn_graph_opts *graph, cudaStream_t stream,
                                        conv_msg *msg);
/* Set-up, not timed: the plan's half copies of the float x and w (p's
 * layout; the filter RSCK in NHWC), finished before it returns. */
conv_status conv_cudnn_fp16_set_inputs(conv_cudnn_fp16_plan *plan, const float *d_x,
                                       const float *d_w, cudaStream_t stream, conv_msg *msg);
/* The timed call: y (half, in the plan) = conv(x, w) on the stream. */
conv_status conv_cudnn_fp16_forward(conv_cudnn_fp16_plan *plan, cudaStream_t stream, conv_msg *msg);
/* Not timed: the plan's half y into the float d_y, on the stream. */
conv_status conv_cudnn_fp16_output(const conv_cudnn_fp16_plan *plan, float *d_y,
                                   cudaStream_t stream, conv_msg *msg);
/* The chosen algorithm, named as conv_cudnn_algo_name names the forward
 * ones (e.g. "IMPLICIT_PRECOMP_GEMM"), or the graph engine's tag ("engine
 * 28, knobs 2=3"); "unknown" without a plan. */
const char *conv_cudnn_fp16_algo_name(const conv_cudnn_fp16_plan *plan);
/* The math type the search reported for it, by cuDNN's name ("none"
 * without a plan); for a graph engine "tensor core" or "default". */
const char *conv_cudnn_fp16_math_type(const conv_cudnn_fp16_plan *plan);
/* The factor of its transforms for conv_cudnn_fp16_bound: FFT and Winograd
 * (CONV_CUDNN_TRANSFORM_FACTOR), 1 for the dot-product algorithms. */
double conv_cudnn_fp16_algo_factor(const conv_cudnn_fp16_plan *plan);
/* The graph API's plan inside (its engine, notes and search statistics);
 * NULL for the legacy API's. */
const conv_cudnn_graph_plan *conv_cudnn_fp16_graph(const conv_cudnn_fp16_plan *plan);
/* The graph API's plan: its next fastest engine, as conv_cudnn_graph_plan_next
 * (an engine whose answer failed verification is left out). The legacy API's
 * plan has none: CONV_ERR_UNSUPPORTED. */
conv_status conv_cudnn_fp16_next_engine(conv_cudnn_fp16_plan *plan, conv_msg *msg);
void conv_cudnn_fp16_plan_destroy(conv_cudnn_fp16_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* CONV_CUDNN_FP16_H */

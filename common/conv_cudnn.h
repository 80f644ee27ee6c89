/* The cuDNN reference: the forward convolution every step is compared with.
 *
 * Fair by construction: FP32 data and compute with CUDNN_FMA_MATH (no TF32
 * tensor cores), the fastest algorithm that cudnnFindConvolutionForwardAlgorithm
 * measures for this exact problem, its workspace allocated once at plan time.
 * Plan creation (handle, descriptors, the search, the workspace) is set-up and
 * is never inside a timed region; conv_cudnn_forward is what gets timed.
 *
 * Without cuDNN at build time every function returns CONV_ERR_UNAVAILABLE. */
#ifndef CONV_CUDNN_H
#define CONV_CUDNN_H

#include <cuda_runtime_api.h>

#include "conv_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct conv_cudnn_plan conv_cudnn_plan;

/* 1 when the project was built with cuDNN. */
int conv_cudnn_compiled(void);
/* cuDNN's version as major*10000 + minor*100 + patch (0 when unavailable). */
long conv_cudnn_version(void);

/* The arithmetic cuDNN may use: plain FP32 (CUDNN_FMA_MATH, the reference of
 * every table), or TF32 tensor cores allowed (CUDNN_TENSOR_OP_MATH: what
 * frameworks do by default on Ampere and newer), a labelled extra row. */
typedef enum { CONV_CUDNN_FP32 = 0, CONV_CUDNN_TF32 } conv_cudnn_math;

/* Creates the plan: both layouts (NCHW, and NHWC with the RSCK filter of
 * conv_params.h), padding, stride and dilation; FP32 arithmetic. */
conv_status conv_cudnn_plan_create(conv_cudnn_plan **plan, const conv_params *p, conv_msg *msg);
/* The same with the given arithmetic; TF32 keeps the fastest algorithm that
 * runs on tensor cores (CONV_ERR_UNSUPPORTED when there is none, as below
 * compute capability 8.0). */
conv_status conv_cudnn_plan_create_math(conv_cudnn_plan **plan, const conv_params *p,
                                        conv_cudnn_math math, conv_msg *msg);
/* Hands the plan the device filter. For NCHW it is used in place; for NHWC it
 * is reordered once (RSCK -> cuDNN's KRSC) into a buffer the plan owns. */
conv_status conv_cudnn_set_filter(conv_cudnn_plan *plan, const float *d_w, conv_msg *msg);
/* NHWC: copies the RSCK filter d_w (conv_params.h) as KRSC, the order cuDNN
 * reads with NHWC data, into *d_krsc (allocated when NULL). Set-up, through
 * the host; both APIs' references use it. */
conv_status conv_cudnn_filter_krsc(const conv_params *p, const float *d_w, float **d_krsc,
                                   conv_msg *msg);
/* y = conv(x, filter) on the stream; the timed call. */
conv_status conv_cudnn_forward(conv_cudnn_plan *plan, const float *d_x, float *d_y,
                               cudaStream_t stream, conv_msg *msg);
/* The chosen algorithm's name (e.g. "IMPLICIT_PRECOMP_GEMM") and workspace size. */
const char *conv_cudnn_algo_name(const conv_cudnn_plan *plan);
size_t conv_cudnn_workspace_bytes(const conv_cudnn_plan *plan);
/* The verification bound factor for an algorithm's results: 1 for the
 * GEMM-like ones (plain dot products). FFT and Winograd are not dot products:
 * their transforms' constants amplify the rounding error, the more the
 * larger the tile (Lavin and Gray, "Fast Algorithms for Convolutional Neural
 * Networks"; note 07 derives the bound of its own tiles), and cuDNN does not
 * say which tiles it uses. cuDNN's WINOGRAD_NONFUSED on a 5x5 filter with one
 * channel was measured at 260 times the dot-product bound on an H100 and at
 * about 1,100 times on an H200 (its choice of tile varies with the GPU and
 * the run): CONV_CUDNN_TRANSFORM_FACTOR for them. The check then still
 * catches a wrong layout or filter where the sums are shallow (the step
 * programs' small problems), but on deep sums only gross errors: it checks
 * how a reference row was set up, it is no bound for a kernel of this
 * course. */
#define CONV_CUDNN_TRANSFORM_FACTOR 4096.0
double conv_cudnn_bound_factor(const char *algo_name);
void conv_cudnn_plan_destroy(conv_cudnn_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* CONV_CUDNN_H */

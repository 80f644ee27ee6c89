/* The cuDNN reference: the convolution every step is compared with, for
 * each of a layer's three passes (conv_pass, conv_params.h): the forward
 * convolution, dgrad (the gradient of the input) and wgrad (the gradient of
 * the filter).
 *
 * Fair by construction: FP32 data and compute with CUDNN_FMA_MATH (no TF32
 * tensor cores), the fastest algorithm that cuDNN's search
 * (cudnnFindConvolutionForwardAlgorithm, ...BackwardDataAlgorithm,
 * ...BackwardFilterAlgorithm) measures for this exact problem and pass, its
 * workspace allocated once at plan time. Plan creation (handle, descriptors,
 * the search, the workspace) is set-up and is never inside a timed region;
 * conv_cudnn_run (conv_cudnn_forward) is what gets timed.
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

/* Creates the forward plan: both layouts (NCHW, and NHWC with the RSCK
 * filter of conv_params.h), padding, stride and dilation; FP32 arithmetic. */
conv_status conv_cudnn_plan_create(conv_cudnn_plan **plan, const conv_params *p, conv_msg *msg);
/* The same with the given arithmetic; TF32 keeps the fastest algorithm that
 * runs on tensor cores (CONV_ERR_UNSUPPORTED when there is none, as below
 * compute capability 8.0). */
conv_status conv_cudnn_plan_create_math(conv_cudnn_plan **plan, const conv_params *p,
                                        conv_cudnn_math math, conv_msg *msg);
/* The plan of any pass, with the given arithmetic (the two above are its
 * forward cases). The pass reads two of the tensors (x, w, y) of p and
 * writes the third:
 *   CONV_PASS_FORWARD  y  from x and w   (cudnnConvolutionForward)
 *   CONV_PASS_DGRAD    dx from dy and w  (cudnnConvolutionBackwardData)
 *   CONV_PASS_WGRAD    dw from x and dy  (cudnnConvolutionBackwardFilter)
 * dx has x's shape, dy y's and dw w's, in p's layout. A pass out of range is
 * CONV_ERR_INVALID before any CUDA call. */
conv_status conv_cudnn_plan_create_pass(conv_cudnn_plan **plan, const conv_params *p,
                                        conv_pass pass, conv_cudnn_math math, conv_msg *msg);
/* Hands a forward or dgrad plan the device filter it reads. For NCHW it is
 * used in place; for NHWC it is reordered once (RSCK -> cuDNN's KRSC) into a
 * buffer the plan owns: call it again after the filter changed. A wgrad
 * plan takes no filter (it writes one): nothing happens. */
conv_status conv_cudnn_set_filter(conv_cudnn_plan *plan, const float *d_w, conv_msg *msg);
/* NHWC: copies the RSCK filter d_w (conv_params.h) as KRSC, the order cuDNN
 * reads with NHWC data, into *d_krsc (allocated when NULL). Set-up, through
 * the host; both APIs' references use it. */
conv_status conv_cudnn_filter_krsc(const conv_params *p, const float *d_w, float **d_krsc,
                                   conv_msg *msg);
/* The reverse, for wgrad's result: copies the KRSC filter d_krsc (what cuDNN
 * writes with NHWC data) as RSCK into d_w, after the work queued on the
 * stream has finished. Not timed, through the host; both APIs use it. */
conv_status conv_cudnn_filter_rsck(const conv_params *p, const float *d_krsc, float *d_w,
                                   cudaStream_t stream, conv_msg *msg);
/* The finish of a plan of either API, by its problem p and pass: a wgrad
 * plan in NHWC copies its KRSC result d_krsc into d_w as RSCK
 * (conv_cudnn_filter_rsck); every other plan does nothing and returns
 * CONV_OK. api names the API in the one line of a missing d_w. */
conv_status conv_cudnn_finish_pass(const conv_params *p, conv_pass pass, const float *d_krsc,
                                   float *d_w, cudaStream_t stream, const char *api, conv_msg *msg);
/* The check of a forward call of either API: CONV_ERR_INVALID with one line
 * ("<api> forward called with a dgrad plan") unless the plan's pass is the
 * forward one. */
conv_status conv_cudnn_check_forward(conv_pass pass, const char *api, conv_msg *msg);
/* The plan's pass on the stream; the timed call. The three tensors of the
 * problem, of which the pass writes one and reads the others:
 *   FORWARD  writes d_y;
 *   DGRAD    writes d_x (dx), reads d_y (dy);
 *   WGRAD    writes d_w (dw), reads d_x and d_y (dy).
 * Forward and dgrad read the filter given to conv_cudnn_set_filter (NHWC: its
 * KRSC copy): d_w is then NULL or that same pointer. WGRAD in NHWC writes
 * cuDNN's KRSC order into a buffer of the plan; conv_cudnn_finish puts it
 * into d_w. */
conv_status conv_cudnn_run(conv_cudnn_plan *plan, float *d_x, float *d_w, float *d_y,
                           cudaStream_t stream, conv_msg *msg);
/* After the timed calls, untimed: a wgrad plan in NHWC copies its KRSC result
 * into d_w as RSCK (conv_cudnn_filter_rsck); every other plan does nothing
 * and returns CONV_OK. */
conv_status conv_cudnn_finish(conv_cudnn_plan *plan, float *d_w, cudaStream_t stream,
                              conv_msg *msg);
/* y = conv(x, filter) on the stream: conv_cudnn_run of a forward plan. */
conv_status conv_cudnn_forward(conv_cudnn_plan *plan, const float *d_x, float *d_y,
                               cudaStream_t stream, conv_msg *msg);
/* The plan's pass (CONV_PASS_FORWARD for NULL). */
conv_pass conv_cudnn_plan_pass(const conv_cudnn_plan *plan);
/* The math type cuDNN's search reported for the chosen algorithm, by
 * cuDNN's name: "CUDNN_FMA_MATH" for every FP32 plan, "CUDNN_TENSOR_OP_MATH"
 * for a TF32 one ("none" without a plan). */
const char *conv_cudnn_math_type(const conv_cudnn_plan *plan);
/* The chosen algorithm's name, cuDNN's without its prefix: the forward
 * ones without CUDNN_CONVOLUTION_FWD_ALGO_ (e.g. "IMPLICIT_PRECOMP_GEMM"),
 * the backward ones without CUDNN_CONVOLUTION_ (e.g. "BWD_DATA_ALGO_1",
 * "BWD_FILTER_ALGO_FFT_TILING"); and its workspace size. */
const char *conv_cudnn_algo_name(const conv_cudnn_plan *plan);
/* The name of a forward algorithm by its number (a cudnnConvolutionFwdAlgo_t),
 * as above; "unknown" out of range. Also the FP16 reference's. */
const char *conv_cudnn_forward_algo_name(int algo);
/* The name of a cudnnMathType_t by its number (cuDNN's enumerator's name);
 * "unknown" out of range. */
const char *conv_cudnn_math_name(int math_type);
size_t conv_cudnn_workspace_bytes(const conv_cudnn_plan *plan);
/* The verification bound factor for an algorithm's results: 1 for the
 * GEMM-like ones (plain dot products). FFT and Winograd are not dot products:
 * their transforms' constants amplify the rounding error, the more the
 * larger the tile (Lavin and Gray, "Fast Algorithms for Convolutional Neural
 * Networks"; note 07 derives the bound of its own tiles), and cuDNN does not
 * say which tiles it uses. cuDNN's WINOGRAD_NONFUSED on a 5x5 filter with one
 * channel was measured at 260 times the dot-product bound on an H100 and at
 * about 1,100 times on an H200 (its choice of tile varies with the GPU and
 * the run): CONV_CUDNN_TRANSFORM_FACTOR for them, in every pass (the
 * backward ones: BWD_DATA_ALGO_FFT, _FFT_TILING, _WINOGRAD,
 * _WINOGRAD_NONFUSED, BWD_FILTER_ALGO_FFT, _FFT_TILING, _WINOGRAD_NONFUSED;
 * the numbered ones are dot products). The check then still
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

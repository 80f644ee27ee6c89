#include "conv_cudnn.h"

#include <stdlib.h>
#include <string.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_tensor.h"

#ifndef CONV_HAVE_CUDNN

int conv_cudnn_compiled(void)
{
    return 0;
}
long conv_cudnn_version(void)
{
    return 0;
}

static conv_status unavailable(conv_msg *msg)
{
    return conv_fail(msg, CONV_ERR_UNAVAILABLE,
                     "cuDNN reference unavailable: cuDNN was not "
                     "found when the project was configured");
}

conv_status conv_cudnn_plan_create_pass(conv_cudnn_plan **plan, const conv_params *p,
                                        conv_pass pass, conv_cudnn_math math, conv_msg *msg)
{
    (void)p;
    (void)pass;
    (void)math;
    *plan = NULL;
    return unavailable(msg);
}

conv_status conv_cudnn_plan_create_math(conv_cudnn_plan **plan, const conv_params *p,
                                        conv_cudnn_math math, conv_msg *msg)
{
    return conv_cudnn_plan_create_pass(plan, p, CONV_PASS_FORWARD, math, msg);
}

conv_status conv_cudnn_plan_create(conv_cudnn_plan **plan, const conv_params *p, conv_msg *msg)
{
    return conv_cudnn_plan_create_pass(plan, p, CONV_PASS_FORWARD, CONV_CUDNN_FP32, msg);
}

conv_status conv_cudnn_set_filter(conv_cudnn_plan *plan, const float *d_w, conv_msg *msg)
{
    (void)plan;
    (void)d_w;
    return unavailable(msg);
}

conv_status conv_cudnn_run(conv_cudnn_plan *plan, float *d_x, float *d_w, float *d_y,
                           cudaStream_t stream, conv_msg *msg)
{
    (void)plan;
    (void)d_x;
    (void)d_w;
    (void)d_y;
    (void)stream;
    return unavailable(msg);
}

conv_status conv_cudnn_finish(conv_cudnn_plan *plan, float *d_w, cudaStream_t stream, conv_msg *msg)
{
    (void)plan;
    (void)d_w;
    (void)stream;
    return unavailable(msg);
}

conv_pass conv_cudnn_plan_pass(const conv_cudnn_plan *plan)
{
    (void)plan;
    return CONV_PASS_FORWARD;
}

const char *conv_cudnn_math_type(const conv_cudnn_plan *plan)
{
    (void)plan;
    return "none";
}

const char *conv_cudnn_algo_name(const conv_cudnn_plan *plan)
{
    (void)plan;
    return "unavailable";
}

size_t conv_cudnn_workspace_bytes(const conv_cudnn_plan *plan)
{
    (void)plan;
    return 0;
}

void conv_cudnn_plan_destroy(conv_cudnn_plan *plan)
{
    (void)plan;
}

#else /* CONV_HAVE_CUDNN */

#include <cudnn.h>

struct conv_cudnn_plan {
    conv_params params;
    conv_pass pass;
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t x_desc, y_desc; /* also dx's and dy's */
    cudnnFilterDescriptor_t w_desc;         /* also dw's */
    cudnnConvolutionDescriptor_t conv_desc;
    int algo;                  /* a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t, by pass */
    cudnnMathType_t math_type; /* what the search reported for it */
    conv_cudnn_math math;
    void *workspace;
    size_t workspace_bytes;
    const float *d_w;       /* forward, dgrad: the filter cuDNN reads */
    const float *d_w_given; /* the filter conv_cudnn_set_filter was given */
    float *d_w_krsc;        /* NHWC: the reordered filter, or wgrad's KRSC result */
};

#define CONV_CUDNN_CHECK(expr, msg)                                                                \
    do {                                                                                           \
        cudnnStatus_t conv_st_ = (expr);                                                           \
        if (conv_st_ != CUDNN_STATUS_SUCCESS)                                                      \
            return conv_fail((msg),                                                                \
                             conv_st_ == CUDNN_STATUS_ALLOC_FAILED ? CONV_ERR_OUT_OF_MEMORY        \
                                                                   : CONV_ERR_CUDA,                \
                             "%s failed at %s:%d: %s", #expr, "conv_cudnn.c", __LINE__,            \
                             cudnnGetErrorString(conv_st_));                                       \
    } while (0)

int conv_cudnn_compiled(void)
{
    return 1;
}
long conv_cudnn_version(void)
{
    return (long)cudnnGetVersion();
}

/* cuDNN's algorithm names per pass, in the order of its enums (the forward
 * ones: conv_cudnn_forward_algo_name, after the #endif). */
static const char *const bwd_data_names[] = {
    "BWD_DATA_ALGO_0",          "BWD_DATA_ALGO_1",        "BWD_DATA_ALGO_FFT",
    "BWD_DATA_ALGO_FFT_TILING", "BWD_DATA_ALGO_WINOGRAD", "BWD_DATA_ALGO_WINOGRAD_NONFUSED",
};
static const char *const bwd_filter_names[] = {
    "BWD_FILTER_ALGO_0",          "BWD_FILTER_ALGO_1",        "BWD_FILTER_ALGO_FFT",
    "BWD_FILTER_ALGO_3",          "BWD_FILTER_ALGO_WINOGRAD", "BWD_FILTER_ALGO_WINOGRAD_NONFUSED",
    "BWD_FILTER_ALGO_FFT_TILING",
};

const char *conv_cudnn_algo_name(const conv_cudnn_plan *plan)
{
    if (plan == NULL || plan->algo < 0)
        return "unknown";
    size_t a = (size_t)plan->algo;
    switch (plan->pass) {
    case CONV_PASS_FORWARD: return conv_cudnn_forward_algo_name(plan->algo);
    case CONV_PASS_DGRAD:
        return a < sizeof bwd_data_names / sizeof bwd_data_names[0] ? bwd_data_names[a] : "unknown";
    case CONV_PASS_WGRAD:
        return a < sizeof bwd_filter_names / sizeof bwd_filter_names[0] ? bwd_filter_names[a]
                                                                        : "unknown";
    default: return "unknown";
    }
}

size_t conv_cudnn_workspace_bytes(const conv_cudnn_plan *plan)
{
    return plan ? plan->workspace_bytes : 0;
}

conv_pass conv_cudnn_plan_pass(const conv_cudnn_plan *plan)
{
    return plan ? plan->pass : CONV_PASS_FORWARD;
}

const char *conv_cudnn_math_type(const conv_cudnn_plan *plan)
{
    if (plan == NULL || plan->algo < 0)
        return "none";
    return conv_cudnn_math_name((int)plan->math_type);
}

/* The descriptors of x, w, y and the convolution: the same for every pass
 * (dgrad writes x's shape from y's, wgrad w's from x's and y's). */
static conv_status describe(conv_cudnn_plan *plan, conv_msg *msg)
{
    const conv_params *p = &plan->params;
    int nhwc = p->layout == CONV_LAYOUT_NHWC;
    cudnnTensorFormat_t fmt = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    CONV_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->x_desc), msg);
    CONV_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->y_desc), msg);
    CONV_CUDNN_CHECK(cudnnCreateFilterDescriptor(&plan->w_desc), msg);
    CONV_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv_desc), msg);
    CONV_CUDNN_CHECK(
        cudnnSetTensor4dDescriptor(plan->x_desc, fmt, CUDNN_DATA_FLOAT, p->n, p->c, p->h, p->w),
        msg);
    /* NHWC filters in cuDNN are KRSC ("NHWC" over K, C, R, S). */
    CONV_CUDNN_CHECK(
        cudnnSetFilter4dDescriptor(plan->w_desc, CUDNN_DATA_FLOAT, fmt, p->k, p->c, p->r, p->s),
        msg);
    CONV_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(plan->conv_desc, p->pad_h, p->pad_w,
                                                     p->stride_h, p->stride_w, p->dil_h, p->dil_w,
                                                     CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                     msg);
    CONV_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv_desc, plan->math == CONV_CUDNN_TF32
                                                                      ? CUDNN_TENSOR_OP_MATH
                                                                      : CUDNN_FMA_MATH),
                     msg);
    int n, c, h, w;
    CONV_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(plan->conv_desc, plan->x_desc,
                                                           plan->w_desc, &n, &c, &h, &w),
                     msg);
    if (n != p->n || c != p->k || h != conv_out_h(p) || w != conv_out_w(p))
        return conv_fail(msg, CONV_ERR_CUDA, "cuDNN output shape %dx%dx%dx%d differs from ours", n,
                         c, h, w);
    CONV_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->y_desc, fmt, CUDNN_DATA_FLOAT, n, c, h, w),
                     msg);
    return CONV_OK;
}

/* Keeps a measured algorithm when it ran and in the plan's arithmetic: plain
 * FP32, or (TF32) on tensor cores. 1 when kept. */
static int keep_algorithm(conv_cudnn_plan *plan, int algo, cudnnStatus_t status, size_t memory,
                          cudnnMathType_t math_type)
{
    const cudnnMathType_t want =
        plan->math == CONV_CUDNN_TF32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
    if (status != CUDNN_STATUS_SUCCESS || math_type != want)
        return 0;
    plan->algo = algo;
    plan->math_type = math_type;
    plan->workspace_bytes = memory;
    return 1;
}

/* Measures every algorithm of the plan's pass (cuDNN's search allocates its
 * own buffers) and keeps the fastest that keep_algorithm accepts. */
static conv_status choose_algorithm(conv_cudnn_plan *plan, conv_msg *msg)
{
    int returned = 0, kept = 0;
    if (plan->pass == CONV_PASS_FORWARD) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        CONV_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(
                             plan->handle, plan->x_desc, plan->w_desc, plan->conv_desc,
                             plan->y_desc, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
                         msg);
        for (int i = 0; i < returned && !kept; ++i) /* sorted fastest first */
            kept = keep_algorithm(plan, (int)perf[i].algo, perf[i].status, perf[i].memory,
                                  perf[i].mathType);
    } else if (plan->pass == CONV_PASS_DGRAD) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        CONV_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(
                             plan->handle, plan->w_desc, plan->y_desc, plan->conv_desc,
                             plan->x_desc, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf),
                         msg);
        for (int i = 0; i < returned && !kept; ++i)
            kept = keep_algorithm(plan, (int)perf[i].algo, perf[i].status, perf[i].memory,
                                  perf[i].mathType);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        CONV_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(
                             plan->handle, plan->x_desc, plan->y_desc, plan->conv_desc,
                             plan->w_desc, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned,
                             perf),
                         msg);
        for (int i = 0; i < returned && !kept; ++i)
            kept = keep_algorithm(plan, (int)perf[i].algo, perf[i].status, perf[i].memory,
                                  perf[i].mathType);
    }
    if (kept)
        return CONV_OK;
    return plan->math == CONV_CUDNN_TF32
               ? conv_fail(msg, CONV_ERR_UNSUPPORTED,
                           "cuDNN found no TF32 tensor-core (CUDNN_TENSOR_OP_MATH) %s algorithm "
                           "for this problem on this GPU",
                           conv_pass_name(plan->pass))
               : conv_fail(msg, CONV_ERR_UNSUPPORTED,
                           "cuDNN found no FP32 (CUDNN_FMA_MATH) %s algorithm for this problem",
                           conv_pass_name(plan->pass));
}

void conv_cudnn_plan_destroy(conv_cudnn_plan *plan)
{
    if (plan == NULL)
        return;
    if (plan->x_desc)
        cudnnDestroyTensorDescriptor(plan->x_desc);
    if (plan->y_desc)
        cudnnDestroyTensorDescriptor(plan->y_desc);
    if (plan->w_desc)
        cudnnDestroyFilterDescriptor(plan->w_desc);
    if (plan->conv_desc)
        cudnnDestroyConvolutionDescriptor(plan->conv_desc);
    if (plan->handle)
        cudnnDestroy(plan->handle);
    cudaFree(plan->workspace); /* NULL: no operation */
    conv_device_free(plan->d_w_krsc);
    free(plan);
}

static conv_status create(conv_cudnn_plan *plan, const conv_params *p, conv_pass pass,
                          conv_cudnn_math math, conv_msg *msg)
{
    if ((int)pass < 0 || pass >= CONV_PASS_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID, "pass must be forward, dgrad or wgrad, got %d",
                         (int)pass);
    if (math != CONV_CUDNN_FP32 && math != CONV_CUDNN_TF32)
        return conv_fail(msg, CONV_ERR_INVALID, "math must be CONV_CUDNN_FP32 or CONV_CUDNN_TF32");
    conv_status st = conv_cuda_require_device(msg);
    if (st == CONV_OK)
        st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    plan->params = *p;
    plan->pass = pass;
    plan->math = math;
    plan->algo = -1;
    CONV_CUDNN_CHECK(cudnnCreate(&plan->handle), msg);
    if ((st = describe(plan, msg)) != CONV_OK || (st = choose_algorithm(plan, msg)) != CONV_OK)
        return st;
    if (plan->workspace_bytes > 0) {
        cudaError_t e = cudaMalloc(&plan->workspace, plan->workspace_bytes);
        if (e != cudaSuccess) {
            plan->workspace = NULL;
            return conv_cuda_fail(msg, e, "cudaMalloc (cuDNN workspace)", __FILE__, __LINE__);
        }
    }
    /* wgrad in NHWC: cuDNN writes dw as KRSC, into this buffer. */
    if (pass == CONV_PASS_WGRAD && p->layout == CONV_LAYOUT_NHWC)
        st = conv_device_alloc(&plan->d_w_krsc, conv_filter_elems(p), "cuDNN KRSC dw", msg);
    return st;
}

conv_status conv_cudnn_plan_create(conv_cudnn_plan **out, const conv_params *p, conv_msg *msg)
{
    return conv_cudnn_plan_create_pass(out, p, CONV_PASS_FORWARD, CONV_CUDNN_FP32, msg);
}

conv_status conv_cudnn_plan_create_math(conv_cudnn_plan **out, const conv_params *p,
                                        conv_cudnn_math math, conv_msg *msg)
{
    return conv_cudnn_plan_create_pass(out, p, CONV_PASS_FORWARD, math, msg);
}

conv_status conv_cudnn_plan_create_pass(conv_cudnn_plan **out, const conv_params *p, conv_pass pass,
                                        conv_cudnn_math math, conv_msg *msg)
{
    *out = NULL;
    conv_cudnn_plan *plan = calloc(1, sizeof *plan);
    if (plan == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the cuDNN plan");
    conv_status st = create(plan, p, pass, math, msg);
    if (st != CONV_OK) {
        conv_cudnn_plan_destroy(plan);
        return st;
    }
    *out = plan;
    return CONV_OK;
}

conv_status conv_cudnn_set_filter(conv_cudnn_plan *plan, const float *d_w, conv_msg *msg)
{
    if (plan == NULL || d_w == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "cuDNN set_filter: the plan and d_w must be given");
    if (plan->pass == CONV_PASS_WGRAD)
        return CONV_OK; /* its filter is its output */
    const conv_params *p = &plan->params;
    plan->d_w_given = d_w;
    if (p->layout == CONV_LAYOUT_NCHW) {
        plan->d_w = d_w;
        return CONV_OK;
    }
    conv_status st = conv_cudnn_filter_krsc(p, d_w, &plan->d_w_krsc, msg);
    plan->d_w = st == CONV_OK ? plan->d_w_krsc : NULL;
    return st;
}

conv_status conv_cudnn_run(conv_cudnn_plan *plan, float *d_x, float *d_w, float *d_y,
                           cudaStream_t stream, conv_msg *msg)
{
    if (plan == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "cuDNN plan missing (NULL)");
    const char *pass = conv_pass_name(plan->pass);
    if (d_x == NULL || d_y == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "cuDNN %s: d_x and d_y must be given", pass);
    int nhwc = plan->params.layout == CONV_LAYOUT_NHWC;
    if (plan->pass != CONV_PASS_WGRAD) {
        if (plan->d_w == NULL)
            return conv_fail(msg, CONV_ERR_INVALID,
                             "cuDNN plan has no filter (call conv_cudnn_set_filter)");
        if (d_w != NULL && d_w != plan->d_w_given)
            return conv_fail(msg, CONV_ERR_INVALID,
                             "cuDNN %s reads the filter given to conv_cudnn_set_filter: d_w must "
                             "be that one or NULL",
                             pass);
    } else if (d_w == NULL && !nhwc) {
        return conv_fail(msg, CONV_ERR_INVALID, "cuDNN wgrad: d_w (its output) must be given");
    }
    const float alpha = 1.0f, beta = 0.0f; /* beta 0: the output is written, never read */
    CONV_CUDNN_CHECK(cudnnSetStream(plan->handle, stream), msg);
    switch (plan->pass) {
    case CONV_PASS_FORWARD:
        CONV_CUDNN_CHECK(cudnnConvolutionForward(
                             plan->handle, &alpha, plan->x_desc, d_x, plan->w_desc, plan->d_w,
                             plan->conv_desc, (cudnnConvolutionFwdAlgo_t)plan->algo,
                             plan->workspace, plan->workspace_bytes, &beta, plan->y_desc, d_y),
                         msg);
        break;
    case CONV_PASS_DGRAD:
        CONV_CUDNN_CHECK(cudnnConvolutionBackwardData(
                             plan->handle, &alpha, plan->w_desc, plan->d_w, plan->y_desc, d_y,
                             plan->conv_desc, (cudnnConvolutionBwdDataAlgo_t)plan->algo,
                             plan->workspace, plan->workspace_bytes, &beta, plan->x_desc, d_x),
                         msg);
        break;
    default: /* CONV_PASS_WGRAD */
        CONV_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
                             plan->handle, &alpha, plan->x_desc, d_x, plan->y_desc, d_y,
                             plan->conv_desc, (cudnnConvolutionBwdFilterAlgo_t)plan->algo,
                             plan->workspace, plan->workspace_bytes, &beta, plan->w_desc,
                             nhwc ? plan->d_w_krsc : d_w),
                         msg);
        break;
    }
    return CONV_OK;
}

conv_status conv_cudnn_finish(conv_cudnn_plan *plan, float *d_w, cudaStream_t stream, conv_msg *msg)
{
    if (plan == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "cuDNN plan missing (NULL)");
    return conv_cudnn_finish_pass(&plan->params, plan->pass, plan->d_w_krsc, d_w, stream, "cuDNN",
                                  msg);
}

#endif /* CONV_HAVE_CUDNN */

const char *conv_cudnn_forward_algo_name(int algo)
{
    static const char *const fwd_names[] = {
        "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
        "WINOGRAD",      "WINOGRAD_NONFUSED",
    };
    return algo >= 0 && (size_t)algo < sizeof fwd_names / sizeof fwd_names[0] ? fwd_names[algo]
                                                                              : "unknown";
}

const char *conv_cudnn_math_name(int math_type)
{
    static const char *const math_names[] = {
        "CUDNN_DEFAULT_MATH",
        "CUDNN_TENSOR_OP_MATH",
        "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION",
        "CUDNN_FMA_MATH",
    };
    return math_type >= 0 && (size_t)math_type < sizeof math_names / sizeof math_names[0]
               ? math_names[math_type]
               : "unknown";
}

conv_status conv_cudnn_check_forward(conv_pass pass, const char *api, conv_msg *msg)
{
    if (pass != CONV_PASS_FORWARD)
        return conv_fail(msg, CONV_ERR_INVALID, "%s forward called with a %s plan", api,
                         conv_pass_name(pass));
    return CONV_OK;
}

/* Without cuDNN, the plan's pass is CONV_PASS_FORWARD and conv_cudnn_run says why it cannot run. */
conv_status conv_cudnn_forward(conv_cudnn_plan *plan, const float *d_x, float *d_y,
                               cudaStream_t stream, conv_msg *msg)
{
    conv_status st = conv_cudnn_check_forward(conv_cudnn_plan_pass(plan), "cuDNN", msg);
    /* The forward pass only reads x. */
    return st != CONV_OK ? st : conv_cudnn_run(plan, (float *)d_x, NULL, d_y, stream, msg);
}

/* The filter d_src (conv_filter_elems(p) floats) downloaded and reordered
 * on the host into a new buffer *h_dst (the caller frees it, also on
 * failure): RSCK -> KRSC (to_krsc 1) or KRSC -> RSCK (to_krsc 0). */
static conv_status reorder_on_host(const conv_params *p, const float *d_src, int to_krsc,
                                   float **h_dst, conv_msg *msg)
{
    size_t count = conv_filter_elems(p);
    float *h_src = malloc(count * sizeof(float));
    *h_dst = malloc(count * sizeof(float));
    conv_status st = CONV_OK;
    if (h_src == NULL || *h_dst == NULL)
        st = conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory reordering the filter");
    if (st == CONV_OK)
        st = conv_device_download(h_src, d_src, count, msg);
    if (st == CONV_OK) {
        for (int k = 0; k < p->k; ++k)
            for (int r = 0; r < p->r; ++r)
                for (int s = 0; s < p->s; ++s)
                    for (int c = 0; c < p->c; ++c) {
                        size_t krsc = (((size_t)k * p->r + r) * p->s + s) * p->c + c;
                        size_t rsck = conv_filter_offset(p, k, c, r, s);
                        if (to_krsc)
                            (*h_dst)[krsc] = h_src[rsck];
                        else
                            (*h_dst)[rsck] = h_src[krsc];
                    }
    }
    free(h_src);
    return st;
}

conv_status conv_cudnn_filter_krsc(const conv_params *p, const float *d_w, float **d_krsc,
                                   conv_msg *msg)
{
    /* Set-up, not timed: RSCK -> KRSC through the host. */
    float *h_krsc = NULL;
    conv_status st = reorder_on_host(p, d_w, 1, &h_krsc, msg);
    if (st == CONV_OK && *d_krsc == NULL)
        st = conv_device_alloc(d_krsc, conv_filter_elems(p), "cuDNN KRSC filter", msg);
    if (st == CONV_OK)
        st = conv_device_upload(*d_krsc, h_krsc, conv_filter_elems(p), msg);
    free(h_krsc);
    return st;
}

conv_status conv_cudnn_filter_rsck(const conv_params *p, const float *d_krsc, float *d_w,
                                   cudaStream_t stream, conv_msg *msg)
{
    /* Not timed: KRSC -> RSCK through the host, once the stream's work is done. */
    CONV_CUDA_CHECK(cudaStreamSynchronize(stream), msg);
    float *h_rsck = NULL;
    conv_status st = reorder_on_host(p, d_krsc, 0, &h_rsck, msg);
    if (st == CONV_OK)
        st = conv_device_upload(d_w, h_rsck, conv_filter_elems(p), msg);
    free(h_rsck);
    /* The upload from pageable memory may still be in flight when cudaMemcpy
     * returns: finished before any stream reads d_w. */
    if (st == CONV_OK)
        CONV_CUDA_CHECK(cudaDeviceSynchronize(), msg);
    return st;
}

conv_status conv_cudnn_finish_pass(const conv_params *p, conv_pass pass, const float *d_krsc,
                                   float *d_w, cudaStream_t stream, const char *api, conv_msg *msg)
{
    if (pass != CONV_PASS_WGRAD || p->layout != CONV_LAYOUT_NHWC)
        return CONV_OK;
    if (d_w == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "%s wgrad finish: d_w (its output) must be given",
                         api);
    return conv_cudnn_filter_rsck(p, d_krsc, d_w, stream, msg);
}

double conv_cudnn_bound_factor(const char *algo_name)
{
    if (algo_name == NULL)
        return 1.0;
    return strstr(algo_name, "FFT") != NULL || strstr(algo_name, "WINOGRAD") != NULL
               ? CONV_CUDNN_TRANSFORM_FACTOR
               : 1.0;
}

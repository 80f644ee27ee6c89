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

conv_status conv_cudnn_plan_create_math(conv_cudnn_plan **plan, const conv_params *p,
                                        conv_cudnn_math math, conv_msg *msg)
{
    (void)p;
    (void)math;
    *plan = NULL;
    return unavailable(msg);
}

conv_status conv_cudnn_plan_create(conv_cudnn_plan **plan, const conv_params *p, conv_msg *msg)
{
    (void)p;
    *plan = NULL;
    return unavailable(msg);
}

conv_status conv_cudnn_set_filter(conv_cudnn_plan *plan, const float *d_w, conv_msg *msg)
{
    (void)plan;
    (void)d_w;
    return unavailable(msg);
}

conv_status conv_cudnn_forward(conv_cudnn_plan *plan, const float *d_x, float *d_y,
                               cudaStream_t stream, conv_msg *msg)
{
    (void)plan;
    (void)d_x;
    (void)d_y;
    (void)stream;
    return unavailable(msg);
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
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t x_desc, y_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv_desc;
    cudnnConvolutionFwdAlgo_t algo;
    conv_cudnn_math math;
    void *workspace;
    size_t workspace_bytes;
    const float *d_w; /* the filter cuDNN reads */
    float *d_w_krsc;  /* NHWC only: the reordered copy the plan owns */
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

static const char *algo_names[] = {
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
    "WINOGRAD",      "WINOGRAD_NONFUSED",
};

const char *conv_cudnn_algo_name(const conv_cudnn_plan *plan)
{
    if (plan == NULL || (int)plan->algo < 0 ||
        (size_t)plan->algo >= sizeof algo_names / sizeof algo_names[0])
        return "unknown";
    return algo_names[plan->algo];
}

size_t conv_cudnn_workspace_bytes(const conv_cudnn_plan *plan)
{
    return plan ? plan->workspace_bytes : 0;
}

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

/* Measures every algorithm and keeps the fastest that succeeded in the plan's
 * arithmetic: plain FP32, or (TF32) on tensor cores. */
static conv_status choose_algorithm(conv_cudnn_plan *plan, conv_msg *msg)
{
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    CONV_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(
                         plan->handle, plan->x_desc, plan->w_desc, plan->conv_desc, plan->y_desc,
                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
                     msg);
    const cudnnMathType_t want =
        plan->math == CONV_CUDNN_TF32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
    for (int i = 0; i < returned; ++i) /* sorted fastest first */
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType == want) {
            plan->algo = perf[i].algo;
            plan->workspace_bytes = perf[i].memory;
            return CONV_OK;
        }
    return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                     plan->math == CONV_CUDNN_TF32
                         ? "cuDNN found no TF32 tensor-core (CUDNN_TENSOR_OP_MATH) algorithm for "
                           "this problem on this GPU"
                         : "cuDNN found no FP32 (CUDNN_FMA_MATH) algorithm for this problem");
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

static conv_status create(conv_cudnn_plan *plan, const conv_params *p, conv_cudnn_math math,
                          conv_msg *msg)
{
    conv_status st = conv_cuda_require_device(msg);
    if (st == CONV_OK)
        st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    plan->params = *p;
    plan->math = math;
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
    return CONV_OK;
}

conv_status conv_cudnn_plan_create(conv_cudnn_plan **out, const conv_params *p, conv_msg *msg)
{
    return conv_cudnn_plan_create_math(out, p, CONV_CUDNN_FP32, msg);
}

conv_status conv_cudnn_plan_create_math(conv_cudnn_plan **out, const conv_params *p,
                                        conv_cudnn_math math, conv_msg *msg)
{
    *out = NULL;
    conv_cudnn_plan *plan = calloc(1, sizeof *plan);
    if (plan == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the cuDNN plan");
    conv_status st = create(plan, p, math, msg);
    if (st != CONV_OK) {
        conv_cudnn_plan_destroy(plan);
        return st;
    }
    *out = plan;
    return CONV_OK;
}

conv_status conv_cudnn_set_filter(conv_cudnn_plan *plan, const float *d_w, conv_msg *msg)
{
    const conv_params *p = &plan->params;
    if (p->layout == CONV_LAYOUT_NCHW) {
        plan->d_w = d_w;
        return CONV_OK;
    }
    conv_status st = conv_cudnn_filter_krsc(p, d_w, &plan->d_w_krsc, msg);
    if (st == CONV_OK)
        plan->d_w = plan->d_w_krsc;
    return st;
}

conv_status conv_cudnn_forward(conv_cudnn_plan *plan, const float *d_x, float *d_y,
                               cudaStream_t stream, conv_msg *msg)
{
    if (plan == NULL || plan->d_w == NULL)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "cuDNN plan has no filter (call conv_cudnn_set_filter)");
    const float alpha = 1.0f, beta = 0.0f;
    CONV_CUDNN_CHECK(cudnnSetStream(plan->handle, stream), msg);
    CONV_CUDNN_CHECK(cudnnConvolutionForward(plan->handle, &alpha, plan->x_desc, d_x, plan->w_desc,
                                             plan->d_w, plan->conv_desc, plan->algo,
                                             plan->workspace, plan->workspace_bytes, &beta,
                                             plan->y_desc, d_y),
                     msg);
    return CONV_OK;
}

#endif /* CONV_HAVE_CUDNN */

conv_status conv_cudnn_filter_krsc(const conv_params *p, const float *d_w, float **d_krsc,
                                   conv_msg *msg)
{
    /* Set-up, not timed: RSCK -> KRSC through the host. */
    size_t count = conv_filter_elems(p);
    float *h_rsck = malloc(count * sizeof(float)), *h_krsc = malloc(count * sizeof(float));
    conv_status st = CONV_OK;
    if (h_rsck == NULL || h_krsc == NULL)
        st = conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory reordering the filter");
    if (st == CONV_OK)
        st = conv_device_download(h_rsck, d_w, count, msg);
    if (st == CONV_OK) {
        for (int k = 0; k < p->k; ++k)
            for (int r = 0; r < p->r; ++r)
                for (int s = 0; s < p->s; ++s)
                    for (int c = 0; c < p->c; ++c)
                        h_krsc[(((size_t)k * p->r + r) * p->s + s) * p->c + c] =
                            h_rsck[conv_filter_offset(p, k, c, r, s)];
        if (*d_krsc == NULL)
            st = conv_device_alloc(d_krsc, count, "cuDNN KRSC filter", msg);
    }
    if (st == CONV_OK)
        st = conv_device_upload(*d_krsc, h_krsc, count, msg);
    free(h_rsck);
    free(h_krsc);
    return st;
}

double conv_cudnn_bound_factor(const char *algo_name)
{
    if (algo_name == NULL)
        return 1.0;
    return strstr(algo_name, "FFT") != NULL || strstr(algo_name, "WINOGRAD") != NULL
               ? CONV_CUDNN_TRANSFORM_FACTOR
               : 1.0;
}

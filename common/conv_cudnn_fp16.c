#include "conv_cudnn_fp16.h"

#include <math.h>
#include <stdlib.h>

#include "conv_cuda.h"
#include "conv_cudnn.h"
#include "conv_cudnn_graph.h"
#include "conv_device.h"
#include "conv_fp16.h"

/* ---- host logic ---- */

conv_status conv_cudnn_fp16_check(const conv_params *p, conv_msg *msg)
{
    if (p->pass != CONV_PASS_FORWARD)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "the FP16 cuDNN reference computes the forward pass only, not %s",
                         conv_pass_name(p->pass));
    return CONV_OK;
}

conv_status conv_cudnn_fp16_check_values(const float *x, size_t nx, const float *w, size_t nw,
                                         const double *ref, size_t ny, conv_msg *msg)
{
    conv_status st = conv_fp16_check_range(x, nx, "x", msg);
    if (st == CONV_OK)
        st = conv_fp16_check_range(w, nw, "w", msg);
    for (size_t i = 0; st == CONV_OK && ref != NULL && i < ny; ++i)
        if (!(fabs(ref[i]) <= CONV_FP16_MAX))
            st = conv_fail(msg, CONV_ERR_UNSUPPORTED,
                           "y[%zu] = %g is beyond FP16's range (+-65504): the FP16 reference "
                           "cannot hold the output",
                           i, ref[i]);
    return st;
}

/* The bound, derived.
 *
 * Let y be the exact output, S = sum |x w| its sum of magnitudes and n the
 * depth. conv_fp16_bound bounds the float result y_f of inputs rounded to
 * half, multiplied exactly and summed in float:
 *     |y_f - y| <= B = c S + A,    c = factor * gamma_n,  A = its abs_term;
 * an FFT or Winograd algorithm multiplies it by algo_factor (conv_cudnn.h).
 * cuDNN then stores y_f in half: y_h = fl16(y_f). With u = 2^-11, the
 * rounding is off by at most u |y_f| where |y_f| >= 2^-14 (11 significant
 * bits) and by at most half the subnormals' spacing 2^-24 below it:
 *     |y_h - y_f| <= u |y_f| + 2^-25.
 * Since |y| <= S, |y_f| <= |y| + B <= S + B, so
 *     |y_h - y| <= B + u (S + B) + 2^-25
 *               = ((1 + u) c + u) S + (1 + u) A + 2^-25.
 * In conv_verify_opts' form (factor * gamma_n * S + abs_term): the factor
 * ((1 + u) c + u) / gamma_n and the abs_term (1 + u) A + 2^-25. The u S
 * term is the one the output's rounding adds: on a deep sum it is about
 * the size of the inputs' rounding terms already in c. */
conv_verify_opts conv_cudnn_fp16_bound(size_t depth, const float *x, size_t nx, const float *w,
                                       size_t nw, double algo_factor)
{
    const double u = ldexp(1.0, -11), gamma = conv_gamma(depth);
    conv_verify_opts o = conv_fp16_bound(depth, x, nx, w, nw);
    const double c = algo_factor * o.bound_factor * gamma, a = algo_factor * o.abs_term;
    o.bound_factor = ((1.0 + u) * c + u) / gamma;
    o.abs_term = (1.0 + u) * a + ldexp(1.0, -25);
    return o;
}

#ifndef CONV_HAVE_CUDNN

static conv_status unavailable(conv_msg *msg)
{
    return conv_fail(msg, CONV_ERR_UNAVAILABLE,
                     "cuDNN reference unavailable: cuDNN was not "
                     "found when the project was configured");
}

conv_status conv_cudnn_fp16_plan_create(conv_cudnn_fp16_plan **plan, const conv_params *p,
                                        const conv_cudnn_graph_opts *graph, cudaStream_t stream,
                                        conv_msg *msg)
{
    (void)p, (void)graph, (void)stream;
    *plan = NULL;
    return unavailable(msg);
}

conv_status conv_cudnn_fp16_set_inputs(conv_cudnn_fp16_plan *plan, const float *d_x,
                                       const float *d_w, cudaStream_t stream, conv_msg *msg)
{
    (void)plan;
    (void)d_x;
    (void)d_w;
    (void)stream;
    return unavailable(msg);
}

conv_status conv_cudnn_fp16_forward(conv_cudnn_fp16_plan *plan, cudaStream_t stream, conv_msg *msg)
{
    (void)plan;
    (void)stream;
    return unavailable(msg);
}

conv_status conv_cudnn_fp16_output(const conv_cudnn_fp16_plan *plan, float *d_y,
                                   cudaStream_t stream, conv_msg *msg)
{
    (void)plan;
    (void)d_y;
    (void)stream;
    return unavailable(msg);
}

const char *conv_cudnn_fp16_algo_name(const conv_cudnn_fp16_plan *plan)
{
    (void)plan;
    return "unknown";
}

const char *conv_cudnn_fp16_math_type(const conv_cudnn_fp16_plan *plan)
{
    (void)plan;
    return "none";
}

double conv_cudnn_fp16_algo_factor(const conv_cudnn_fp16_plan *plan)
{
    (void)plan;
    return 1.0;
}

const conv_cudnn_graph_plan *conv_cudnn_fp16_graph(const conv_cudnn_fp16_plan *plan)
{
    (void)plan;
    return NULL;
}

conv_status conv_cudnn_fp16_next_engine(conv_cudnn_fp16_plan *plan, conv_msg *msg)
{
    (void)plan;
    return unavailable(msg);
}

void conv_cudnn_fp16_plan_destroy(conv_cudnn_fp16_plan *plan)
{
    (void)plan;
}

#else /* CONV_HAVE_CUDNN */

#include <cudnn.h>

struct conv_cudnn_fp16_plan {
    conv_params params;
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t x_desc, y_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv_desc;
    int algo;                  /* a cudnnConvolutionFwdAlgo_t; -1 before the search */
    cudnnMathType_t math_type; /* what the search reported for it */
    void *workspace;
    size_t workspace_bytes;
    uint16_t *d_x, *d_w, *d_y;    /* the half tensors (w as KRSC in NHWC) */
    int have_inputs;              /* conv_cudnn_fp16_set_inputs was called */
    conv_cudnn_graph_plan *graph; /* the graph API's fastest engine, instead of algo */
};

#define FP16_CHECK(expr, msg)                                                                      \
    do {                                                                                           \
        cudnnStatus_t fp16_st_ = (expr);                                                           \
        if (fp16_st_ != CUDNN_STATUS_SUCCESS)                                                      \
            return conv_fail((msg),                                                                \
                             fp16_st_ == CUDNN_STATUS_ALLOC_FAILED ? CONV_ERR_OUT_OF_MEMORY        \
                                                                   : CONV_ERR_CUDA,                \
                             "%s failed at %s:%d: %s", #expr, "conv_cudnn_fp16.c", __LINE__,       \
                             cudnnGetErrorString(fp16_st_));                                       \
    } while (0)

const char *conv_cudnn_fp16_algo_name(const conv_cudnn_fp16_plan *plan)
{
    if (plan != NULL && plan->graph != NULL)
        return conv_cudnn_graph_engine(plan->graph);
    return plan != NULL ? conv_cudnn_forward_algo_name(plan->algo) : "unknown";
}

const char *conv_cudnn_fp16_math_type(const conv_cudnn_fp16_plan *plan)
{
    if (plan != NULL && plan->graph != NULL)
        return conv_cudnn_graph_notes(plan->graph) & CONV_NOTE_TENSOR_CORE ? "tensor core"
                                                                           : "default";
    if (plan == NULL || plan->algo < 0)
        return "none";
    return conv_cudnn_math_name((int)plan->math_type);
}

double conv_cudnn_fp16_algo_factor(const conv_cudnn_fp16_plan *plan)
{
    if (plan != NULL && plan->graph != NULL) /* FFT, Winograd: the transforms' factor */
        return conv_cudnn_graph_notes(plan->graph) & (CONV_NOTE_FFT | CONV_NOTE_WINOGRAD)
                   ? CONV_CUDNN_TRANSFORM_FACTOR
                   : 1.0;
    return conv_cudnn_bound_factor(conv_cudnn_fp16_algo_name(plan));
}

const conv_cudnn_graph_plan *conv_cudnn_fp16_graph(const conv_cudnn_fp16_plan *plan)
{
    return plan != NULL ? plan->graph : NULL;
}

conv_status conv_cudnn_fp16_next_engine(conv_cudnn_fp16_plan *plan, conv_msg *msg)
{
    if (plan == NULL || plan->graph == NULL)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "cuDNN FP16: the legacy plan has one algorithm");
    return conv_cudnn_graph_plan_next(plan->graph, msg);
}

/* x, w and y in half, in p's layout (NHWC's filter is KRSC to cuDNN); the
 * convolution in float ("pseudo half": half data, float products and sums),
 * tensor cores allowed. */
static conv_status describe(conv_cudnn_fp16_plan *plan, conv_msg *msg)
{
    const conv_params *p = &plan->params;
    const cudnnTensorFormat_t fmt =
        p->layout == CONV_LAYOUT_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    FP16_CHECK(cudnnCreateTensorDescriptor(&plan->x_desc), msg);
    FP16_CHECK(cudnnCreateTensorDescriptor(&plan->y_desc), msg);
    FP16_CHECK(cudnnCreateFilterDescriptor(&plan->w_desc), msg);
    FP16_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv_desc), msg);
    FP16_CHECK(
        cudnnSetTensor4dDescriptor(plan->x_desc, fmt, CUDNN_DATA_HALF, p->n, p->c, p->h, p->w),
        msg);
    FP16_CHECK(
        cudnnSetFilter4dDescriptor(plan->w_desc, CUDNN_DATA_HALF, fmt, p->k, p->c, p->r, p->s),
        msg);
    FP16_CHECK(cudnnSetConvolution2dDescriptor(plan->conv_desc, p->pad_h, p->pad_w, p->stride_h,
                                               p->stride_w, p->dil_h, p->dil_w,
                                               CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
               msg);
    FP16_CHECK(cudnnSetConvolutionMathType(plan->conv_desc, CUDNN_TENSOR_OP_MATH), msg);
    FP16_CHECK(cudnnSetTensor4dDescriptor(plan->y_desc, fmt, CUDNN_DATA_HALF, p->n, p->k,
                                          conv_out_h(p), conv_out_w(p)),
               msg);
    return CONV_OK;
}

/* Measures every forward algorithm (cuDNN's search allocates its own
 * buffers) and keeps the fastest that ran: the list comes sorted. Each
 * result names the math type it was measured with; the descriptor takes
 * the kept one's (an algorithm run under another math type than it was
 * found with may be refused, CUDNN_STATUS_BAD_PARAM). */
static conv_status choose_algorithm(conv_cudnn_fp16_plan *plan, conv_msg *msg)
{
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    FP16_CHECK(cudnnFindConvolutionForwardAlgorithm(
                   plan->handle, plan->x_desc, plan->w_desc, plan->conv_desc, plan->y_desc,
                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
               msg);
    for (int i = 0; i < returned; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) {
            plan->algo = (int)perf[i].algo;
            plan->math_type = perf[i].mathType;
            plan->workspace_bytes = perf[i].memory;
            FP16_CHECK(cudnnSetConvolutionMathType(plan->conv_desc, perf[i].mathType), msg);
            return CONV_OK;
        }
    return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                     "cuDNN found no FP16 forward algorithm (half data, float compute) for this "
                     "problem on this GPU");
}

/* A half buffer of count values; NaN (all bits 1) until written. */
static conv_status alloc_half(uint16_t **d_buf, size_t count, const char *what, conv_msg *msg)
{
    cudaError_t e = cudaMalloc((void **)d_buf, count * sizeof(uint16_t));
    if (e != cudaSuccess) {
        *d_buf = NULL;
        return conv_cuda_fail(msg, e, what, __FILE__, __LINE__);
    }
    CONV_CUDA_CHECK(cudaMemset(*d_buf, 0xFF, count * sizeof(uint16_t)), msg);
    return CONV_OK;
}

void conv_cudnn_fp16_plan_destroy(conv_cudnn_fp16_plan *plan)
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
    conv_cudnn_graph_plan_destroy(plan->graph); /* NULL: no operation */
    if (plan->handle)
        cudnnDestroy(plan->handle);
    cudaFree(plan->workspace); /* NULL: no operation */
    cudaFree(plan->d_x);
    cudaFree(plan->d_w);
    cudaFree(plan->d_y);
    free(plan);
}

static conv_status create(conv_cudnn_fp16_plan *plan, const conv_params *p,
                          const conv_cudnn_graph_opts *graph, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = conv_cuda_require_device(msg);
    if (st == CONV_OK)
        st = conv_params_validate(p, msg);
    if (st == CONV_OK)
        st = conv_cudnn_fp16_check(p, msg);
    if (st != CONV_OK)
        return st;
    plan->params = *p;
    plan->algo = -1;
    if (graph == NULL) { /* the legacy API's search */
        FP16_CHECK(cudnnCreate(&plan->handle), msg);
        if ((st = describe(plan, msg)) != CONV_OK || (st = choose_algorithm(plan, msg)) != CONV_OK)
            return st;
    }
    if (plan->workspace_bytes > 0) {
        cudaError_t e = cudaMalloc(&plan->workspace, plan->workspace_bytes);
        if (e != cudaSuccess) {
            plan->workspace = NULL;
            return conv_cuda_fail(msg, e, "cudaMalloc (cuDNN workspace)", __FILE__, __LINE__);
        }
    }
    if ((st = alloc_half(&plan->d_x, conv_input_elems(p), "cudaMalloc (half x)", msg)) != CONV_OK ||
        (st = alloc_half(&plan->d_w, conv_filter_elems(p), "cudaMalloc (half w)", msg)) !=
            CONV_OK ||
        (st = alloc_half(&plan->d_y, conv_output_elems(p), "cudaMalloc (half y)", msg)) != CONV_OK)
        return st;
    /* The graph API's search runs its candidates on the plan's half tensors
     * (still NaN: the values do not change an engine's speed). */
    if (graph != NULL)
        st = conv_cudnn_graph_plan_create_half(&plan->graph, p, graph, plan->d_x, plan->d_w,
                                               plan->d_y, stream, msg);
    return st;
}

conv_status conv_cudnn_fp16_plan_create(conv_cudnn_fp16_plan **out, const conv_params *p,
                                        const conv_cudnn_graph_opts *graph, cudaStream_t stream,
                                        conv_msg *msg)
{
    *out = NULL;
    conv_cudnn_fp16_plan *plan = calloc(1, sizeof *plan);
    if (plan == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY, "out of host memory for the cuDNN plan");
    conv_status st = create(plan, p, graph, stream, msg);
    if (st != CONV_OK) {
        conv_cudnn_fp16_plan_destroy(plan);
        return st;
    }
    *out = plan;
    return CONV_OK;
}

conv_status conv_cudnn_fp16_set_inputs(conv_cudnn_fp16_plan *plan, const float *d_x,
                                       const float *d_w, cudaStream_t stream, conv_msg *msg)
{
    if (plan == NULL || d_x == NULL || d_w == NULL)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "cuDNN FP16 set_inputs: the plan, d_x and d_w must be given");
    const conv_params *p = &plan->params;
    float *d_krsc = NULL; /* NHWC: the RSCK filter as cuDNN reads it, KRSC */
    conv_status st = CONV_OK;
    if (p->layout == CONV_LAYOUT_NHWC) {
        st = conv_cudnn_filter_krsc(p, d_w, &d_krsc, msg);
        /* its upload from pageable memory finished before another stream reads it */
        cudaError_t e = st == CONV_OK ? cudaDeviceSynchronize() : cudaSuccess;
        if (e != cudaSuccess)
            st = conv_cuda_fail(msg, e, "cudaDeviceSynchronize", __FILE__, __LINE__);
    }
    if (st == CONV_OK)
        st = conv_fp16_from_float(plan->d_x, d_x, conv_input_elems(p), stream, msg);
    if (st == CONV_OK)
        st = conv_fp16_from_float(plan->d_w, d_krsc != NULL ? d_krsc : d_w, conv_filter_elems(p),
                                  stream, msg);
    if (st == CONV_OK) {
        cudaError_t e = cudaStreamSynchronize(stream); /* before d_krsc goes */
        if (e != cudaSuccess)
            st = conv_cuda_fail(msg, e, "cudaStreamSynchronize", __FILE__, __LINE__);
    }
    conv_device_free(d_krsc);
    plan->have_inputs = st == CONV_OK;
    return st;
}

conv_status conv_cudnn_fp16_forward(conv_cudnn_fp16_plan *plan, cudaStream_t stream, conv_msg *msg)
{
    if (plan == NULL || !plan->have_inputs)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "cuDNN FP16 forward: no plan, or no inputs (call "
                         "conv_cudnn_fp16_set_inputs)");
    if (plan->graph != NULL)
        return conv_cudnn_graph_run_half(plan->graph, stream, msg);
    const float alpha = 1.0f, beta = 0.0f; /* float scalars: the compute type's */
    FP16_CHECK(cudnnSetStream(plan->handle, stream), msg);
    FP16_CHECK(cudnnConvolutionForward(plan->handle, &alpha, plan->x_desc, plan->d_x, plan->w_desc,
                                       plan->d_w, plan->conv_desc,
                                       (cudnnConvolutionFwdAlgo_t)plan->algo, plan->workspace,
                                       plan->workspace_bytes, &beta, plan->y_desc, plan->d_y),
               msg);
    return CONV_OK;
}

conv_status conv_cudnn_fp16_output(const conv_cudnn_fp16_plan *plan, float *d_y,
                                   cudaStream_t stream, conv_msg *msg)
{
    if (plan == NULL || d_y == NULL)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "cuDNN FP16 output: the plan and d_y must be given");
    return conv_fp16_to_float(d_y, plan->d_y, conv_output_elems(&plan->params), stream, msg);
}

#endif /* CONV_HAVE_CUDNN */

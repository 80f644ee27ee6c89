#include "tc_rows.h"

#include "conv_cublas.h"
#include "conv_cuda.h"
#include "conv_fp16.h"
#include "im2col_gemm_rows.h"
#include "tensor_cores.h"

/* What a row runs: the WMMA kernel (8a; in FP16, 8a-fp16) or the mma.sync
 * kernel in one of its precisions (8b; 8b with x truncated, 8b-xt; 8c; in
 * FP16, 8b-fp16). */
enum { TC_WMMA, TC_MMA, TC_WMMA_FP16, TC_MMA_FP16 };
typedef struct {
    tc_precision precision; /* TC_WMMA_FP16: unused (conv_fp16.h holds its bound) */
    int kernel;             /* TC_WMMA, TC_MMA, TC_WMMA_FP16 or TC_MMA_FP16 */
    float *d_work;          /* TC_MMA: the filter as KRSC; TC_MMA_FP16: FP16 copies (setup) */
    size_t work_elems;
} tc_variant;

static tc_variant variants[TC_ROW_COUNT] = {
    {TC_TF32, TC_WMMA, NULL, 0},       {TC_TF32, TC_MMA, NULL, 0},
    {TC_TF32_XTRUNC, TC_MMA, NULL, 0}, {TC_3XTF32, TC_MMA, NULL, 0},
    {TC_TF32, TC_WMMA_FP16, NULL, 0},  {TC_TF32, TC_MMA_FP16, NULL, 0}};
static const char *const names[TC_ROW_COUNT] = {
    "8a WMMA TF32",       "8b mma.sync TF32",  "8b-xt mma.sync TF32, x truncated",
    "8c mma.sync 3xTF32", "8a-fp16 WMMA FP16", "8b-fp16 mma.sync FP16"};
static const char *const keys[TC_ROW_COUNT] = {"8a", "8b", "8b-xt", "8c", "8a-fp16", "8b-fp16"};

conv_status conv2d_tc_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                           float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const tc_variant *v = ctx;
    if (v->kernel == TC_MMA)
        return conv2d_tc_mma(p, v->precision, d_x, d_w, d_y, v->d_work, v->work_elems, stream, msg);
    if (v->kernel == TC_WMMA_FP16)
        return conv2d_tc_wmma_fp16(p, d_x, d_w, d_y, stream, msg);
    if (v->kernel == TC_MMA_FP16) /* on the FP16 copies setup made, as cuDNN FP16 */
        return conv2d_tc_mma_fp16_run(p, d_x, v->d_work, v->work_elems, d_y, stream, msg);
    return conv2d_tc_wmma(p, d_x, d_w, d_y, stream, msg);
}

/* The problem: a row that cannot run it is skipped with the reason. */
static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    const tc_variant *v = ctx;
    return v->kernel == TC_MMA ? tc_check_mma(p, msg) : tc_check(p, msg);
}

/* 8b and 8c: the workspace for the filter as KRSC, before the measurement. */
static conv_status setup(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    tc_variant *v = ctx;
    v->work_elems = conv2d_tc_mma_workspace_elems(&pb->p);
    return conv_device_alloc(&v->d_work, v->work_elems, "8b's filter as KRSC", msg);
}

conv_status tc_fp16_row_inputs(conv_gpu_problem *pb, float **d_work, size_t *work_elems,
                               const char *what, conv_msg *msg)
{
    conv_status st = conv_fp16_check_range(pb->h_x, conv_input_elems(&pb->p), "x", msg);
    if (st == CONV_OK)
        st = conv_fp16_check_range(pb->h_w, conv_filter_elems(&pb->p), "w", msg);
    if (st != CONV_OK || d_work == NULL)
        return st;
    *work_elems = conv2d_tc_fp16_workspace_elems(&pb->p);
    st = conv_device_alloc(d_work, *work_elems, what, msg);
    if (st == CONV_OK)
        st = conv2d_tc_fp16_copies(&pb->p, pb->d_x, pb->d_w, *d_work, *work_elems, pb->stream, msg);
    if (st == CONV_OK)
        CONV_CUDA_CHECK(cudaStreamSynchronize(pb->stream), msg);
    return st;
}

/* 8a-fp16 and 8b-fp16: inputs FP16 can hold; 8b-fp16's copies. */
static conv_status setup_fp16(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    tc_variant *v = ctx;
    return tc_fp16_row_inputs(pb, v->kernel == TC_MMA_FP16 ? &v->d_work : NULL, &v->work_elems,
                              "8b-fp16's FP16 copies", msg);
}

static void teardown(void *ctx)
{
    tc_variant *v = ctx;
    conv_device_free(v->d_work);
    v->d_work = NULL;
    v->work_elems = 0;
}

/* Within the bound of its precision: a factor of the dot product's. */
static conv_status tolerance(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                             conv_msg *msg)
{
    (void)msg;
    const conv_params *p = &pb->p;
    const tc_variant *v = ctx;
    const size_t depth = (size_t)p->c * p->r * p->s;
    const int fp16 = v->kernel == TC_WMMA_FP16 || v->kernel == TC_MMA_FP16;
    *opts =
        fp16 ? conv_fp16_bound(depth, pb->h_x, conv_input_elems(p), pb->h_w, conv_filter_elems(p))
             : conv_verify_bound(tc_bound_factor(v->precision, depth));
    return CONV_OK;
}

int conv_tc_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    int n = 0;
    for (; n < TC_ROW_COUNT && n < max_rows; ++n) {
        rows[n] = conv_row_device(names[n], keys[n], conv2d_tc_conv, &variants[n]);
        rows[n].check = check;
        rows[n].tolerance = tolerance;
        rows[n].cls = variants[n].precision == TC_3XTF32 ? CONV_CLASS_FP32 : CONV_CLASS_TF32;
        if (variants[n].kernel == TC_MMA) {
            rows[n].setup = setup;
            rows[n].teardown = teardown;
        }
        if (variants[n].kernel == TC_WMMA_FP16 || variants[n].kernel == TC_MMA_FP16) {
            rows[n].setup = setup_fp16;
            rows[n].teardown = teardown;
            rows[n].cls = CONV_CLASS_FP16;
        }
    }
    return n;
}

/* ---- the GEMM alone: cuBLAS with TF32 allowed ---- */

static conv_cublas *cublas_tf32;

static conv_status cublas_tf32_conv(void *ctx, const conv_params *p, const float *d_x,
                                    const float *d_w, float *d_y, cudaStream_t stream,
                                    conv_msg *msg)
{
    (void)ctx;
    long long m, n, k;
    gemm_of_conv_params(p, &m, &n, &k);
    return conv_cublas_sgemm(cublas_tf32, (int)m, (int)n, (int)k, d_x, d_w, d_y, stream, msg);
}

static conv_status cublas_tf32_check(void *ctx, const conv_params *p, conv_msg *msg)
{
    (void)ctx;
    if (p->layout != CONV_LAYOUT_NHWC || p->r != 1 || p->s != 1 || p->pad_h || p->pad_w ||
        p->stride_h != 1 || p->stride_w != 1 || p->dil_h != 1 || p->dil_w != 1)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "a GEMM row runs a 1x1 NHWC problem only");
    return CONV_OK;
}

static conv_status cublas_tf32_setup(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    (void)ctx;
    (void)pb;
    return conv_cublas_create_tf32(&cublas_tf32, msg);
}

static void cublas_tf32_teardown(void *ctx)
{
    (void)ctx;
    conv_cublas_destroy(cublas_tf32);
    cublas_tf32 = NULL;
}

static const tc_variant cublas_variant = {TC_TF32, TC_WMMA, NULL, 0}; /* for its bound */

int conv_tc_gemm_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    if (max_rows < 1)
        return 0;
    rows[0] =
        conv_row_device("cuBLAS TF32", "cublas-tf32", cublas_tf32_conv, (void *)&cublas_variant);
    rows[0].check = cublas_tf32_check;
    rows[0].setup = cublas_tf32_setup;
    rows[0].teardown = cublas_tf32_teardown;
    rows[0].tolerance = tolerance;
    rows[0].cls = CONV_CLASS_TF32;
    return 1 + conv_tc_rows(p, select, rows + 1, max_rows - 1);
}

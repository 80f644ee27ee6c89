#include "hopper_rows.h"

#include <string.h>

#include "conv_cuda.h"
#include "conv_fp16.h"
#include "tc_check.h"
#include "tc_host.h"
#include "tc_rows.h"
#include "tensor_cores.h"

/* What a row runs: the wgmma kernel fed by cp.async (9a) or by TMA (9b),
 * 9b with its sum split (9c), in TF32, or in FP16 on the FP16 copies its
 * setup makes (9a-fp16, 9b-fp16). */
typedef enum {
    HOPPER_WGMMA,
    HOPPER_TMA,
    HOPPER_TMA_SPLIT,
    HOPPER_WGMMA_FP16,
    HOPPER_TMA_FP16
} hopper_kernel;
typedef struct {
    hopper_kernel kernel;
    float *d_work;     /* the FP16 kernels: the FP16 copies of x and w; 9c: its slices (setup) */
    size_t work_elems; /* floats of d_work */
    int splits;        /* 9c: the rule's slices on this GPU (setup) */
} hopper_variant;

static hopper_variant variants[HOPPER_ROW_COUNT] = {{HOPPER_WGMMA, NULL, 0, 0},
                                                    {HOPPER_TMA, NULL, 0, 0},
                                                    {HOPPER_TMA_SPLIT, NULL, 0, 0},
                                                    {HOPPER_WGMMA_FP16, NULL, 0, 0},
                                                    {HOPPER_TMA_FP16, NULL, 0, 0}};
static const char *const names[HOPPER_ROW_COUNT] = {
    "9a wgmma TF32", "9b wgmma TF32, TMA", "9c wgmma TF32, TMA, split-K", "9a-fp16 wgmma FP16",
    "9b-fp16 wgmma FP16, TMA"};
static const char *const keys[HOPPER_ROW_COUNT] = {"9a", "9b", "9c", "9a-fp16", "9b-fp16"};

static int is_fp16(const hopper_variant *v)
{
    return v->kernel == HOPPER_WGMMA_FP16 || v->kernel == HOPPER_TMA_FP16;
}

conv_status conv2d_hopper_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                               float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const hopper_variant *v = ctx;
    /* the FP16 rows: on the FP16 copies setup made, as cuDNN FP16 */
    if (v->kernel == HOPPER_TMA_FP16)
        return conv2d_tc_tma_fp16_run(p, d_x, v->d_work, v->work_elems, d_y, stream, msg);
    if (v->kernel == HOPPER_WGMMA_FP16)
        return conv2d_tc_wgmma_fp16_run(p, d_x, v->d_work, v->work_elems, d_y, stream, msg);
    if (v->kernel == HOPPER_TMA)
        return conv2d_tc_tma(p, d_x, d_w, d_y, stream, msg);
    if (v->kernel == HOPPER_TMA_SPLIT)
        return conv2d_tc_tma_split(p, d_x, d_w, d_y, v->splits, v->d_work,
                                   v->work_elems * sizeof(float), stream, msg);
    return conv2d_tc_wgmma(p, d_x, d_w, d_y, stream, msg);
}

/* The problem, with no CUDA call (the program asks before it opens the
 * device): step 08's checks. Where the GPU or the build has no wgmma, the
 * launcher refuses before any launch and the row is skipped with its
 * reason. */
static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    (void)ctx;
    return tc_check(p, msg);
}

/* 9a-fp16 and 9b-fp16: a GPU and a build they run on, inputs FP16 can
 * hold, then the FP16 copies (step 08's tc_fp16_row_inputs(): made before
 * the measurement, as cuDNN FP16's). */
static conv_status setup_fp16(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    hopper_variant *v = ctx;
    const int tma = v->kernel == HOPPER_TMA_FP16;
    conv_status st = tma ? tc_tma_fp16_available(msg) : tc_wgmma_fp16_available(msg);
    if (st == CONV_OK)
        st = tc_fp16_row_inputs(pb, &v->d_work, &v->work_elems,
                                tma ? "9b-fp16's FP16 copies" : "9a-fp16's FP16 copies", msg);
    return st;
}

/* 9c: a GPU it runs on, then the slices the rule picks for this GPU's SMs
 * and their workspace (made before the measurement, as 10b's). */
static conv_status setup_split(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    hopper_variant *v = ctx;
    conv_status st = tc_tma_available(msg);
    if (st != CONV_OK)
        return st;
    int sms = 0;
    CONV_CUDA_CHECK(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, conv_current_device()), msg);
    v->splits = conv2d_tc_tma_splits(&pb->p, sms);
    const size_t bytes = conv2d_tc_tma_split_workspace(&pb->p, v->splits);
    if (bytes == 0)
        return CONV_OK;
    v->work_elems = bytes / sizeof(float);
    return conv_device_alloc(&v->d_work, v->work_elems, "9c's slices", msg);
}

static void teardown(void *ctx)
{
    hopper_variant *v = ctx;
    conv_device_free(v->d_work);
    v->d_work = NULL;
    v->work_elems = 0;
}

/* Within the bound of the inputs' precision: x truncated to TF32 and w
 * rounded (a factor of the dot product's), or both rounded to FP16. */
static conv_status tolerance(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                             conv_msg *msg)
{
    (void)msg;
    const hopper_variant *v = ctx;
    const conv_params *p = &pb->p;
    const size_t depth = (size_t)p->c * p->r * p->s;
    if (is_fp16(v))
        *opts = conv_fp16_bound(depth, pb->h_x, conv_input_elems(p), pb->h_w, conv_filter_elems(p));
    else
        *opts = conv_verify_bound(tc_bound_factor(TC_TF32_XTRUNC, depth));
    return CONV_OK;
}

int conv_hopper_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)p;
    (void)select;
    int n = 0;
    for (; n < HOPPER_ROW_COUNT && n < max_rows; ++n) {
        rows[n] = conv_row_device(names[n], keys[n], conv2d_hopper_conv, &variants[n]);
        rows[n].check = check;
        rows[n].tolerance = tolerance;
        rows[n].cls = CONV_CLASS_TF32;
        if (variants[n].kernel == HOPPER_TMA_SPLIT) {
            rows[n].setup = setup_split;
            rows[n].teardown = teardown;
        }
        if (is_fp16(&variants[n])) {
            rows[n].setup = setup_fp16;
            rows[n].teardown = teardown;
            rows[n].cls = CONV_CLASS_FP16;
        }
    }
    return n;
}

int conv_hopper_gemm_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    /* step 08's GEMM rows, of which cuBLAS TF32 and 8b stay */
    int n = 0;
    const int listed = conv_tc_gemm_rows(p, NULL, rows, max_rows);
    for (int i = 0; i < listed; ++i)
        if (strcmp(rows[i].key, "cublas-tf32") == 0 || strcmp(rows[i].key, "8b") == 0)
            rows[n++] = rows[i];
    return n + conv_hopper_rows(p, select, rows + n, max_rows - n);
}

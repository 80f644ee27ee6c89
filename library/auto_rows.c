#include "auto_rows.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backward_rows.h"
#include "conv_cuda.h"
#include "conv_fp16.h"
#include "conv_verify_backward.h"
#include "tc_host.h"
#include "winograd_host.h"

typedef struct {
    conv_class cls;
    int chosen; /* choice is set (after setup) */
    conv_auto_choice choice;
    float *d_work;
    size_t work_bytes;
    wino_tolerance wino;                /* 7a's or 7b's tolerance (as step 07's rows) */
    conv_backward_wino_tolerance dgrad; /* 10d via 7b's (as step 10's rows) */
} auto_row;

static auto_row contexts[AUTO_ROW_COUNT] = {
    {.cls = CONV_CLASS_FP32}, {.cls = CONV_CLASS_TF32}, {.cls = CONV_CLASS_FP16}};
static const char *const names[AUTO_ROW_COUNT] = {"auto FP32", "auto TF32", "auto FP16"};
static const char *const keys[AUTO_ROW_COUNT] = {"auto", "auto-tf32", "auto-fp16"};

static conv_status run(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                       float *d_y, cudaStream_t stream, conv_msg *msg)
{
    auto_row *r = ctx; /* the choice as it ran: what the verdict and the tolerance name */
    /* the forward pass only reads x and w */
    return conv2d_auto(p, r->cls, (float *)d_x, (float *)d_w, d_y, r->d_work, r->work_bytes, stream,
                       &r->choice, msg);
}

/* A backward pass: the harness's buffers, as conv2d_auto takes them. */
static conv_status run_grad(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                            cudaStream_t stream, conv_msg *msg)
{
    auto_row *r = ctx;
    return conv2d_auto(p, r->cls, d_x, d_w, d_y, r->d_work, r->work_bytes, stream, &r->choice, msg);
}

/* The problem and the class (the device is asked in setup). No CUDA call. */
static conv_status check(void *ctx, const conv_params *p, conv_msg *msg)
{
    const auto_row *r = ctx;
    const conv_auto_device any = {9, 0, 1, SIZE_MAX, SIZE_MAX, SIZE_MAX, 1, 1, 1};
    conv_auto_choice c;
    return conv_auto_choose(p, r->cls, &any, &c, msg);
}

/* The choice on this device with its free memory (the tensors exist
 * already), and the workspace it needs. */
static conv_status setup(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    auto_row *r = ctx;
    r->chosen = 0;
    conv_auto_device d;
    conv_status st = conv_auto_device_query(&d, msg);
    if (st != CONV_OK)
        return st;
    const size_t tensors =
        (conv_input_elems(&pb->p) + conv_filter_elems(&pb->p) + conv_output_elems(&pb->p)) *
        sizeof(float);
    d.free_bytes = d.free_bytes > SIZE_MAX - tensors ? SIZE_MAX : d.free_bytes + tensors;
    if ((st = conv_auto_choose(&pb->p, r->cls, &d, &r->choice, msg)) != CONV_OK)
        return st;
    if (r->choice.cls == CONV_CLASS_FP16) { /* values FP16 holds, as step 08's FP16 rows */
        if ((st = conv_fp16_check_range(pb->h_x, conv_input_elems(&pb->p), "x", msg)) != CONV_OK ||
            (st = conv_fp16_check_range(pb->h_w, conv_filter_elems(&pb->p), "w", msg)) != CONV_OK)
            return st;
    }
    r->chosen = 1;
    r->work_bytes = r->choice.workspace_bytes;
    if (r->work_bytes == 0)
        return CONV_OK;
    return conv_device_alloc(&r->d_work, r->work_bytes / sizeof(float), "conv2d_auto's workspace",
                             msg);
}

static void teardown(void *ctx)
{
    auto_row *r = ctx;
    conv_device_free(r->d_work);
    r->d_work = NULL;
    r->work_bytes = 0;
    wino_tolerance_free(&r->wino);
    conv_backward_wino_tolerance_free(&r->dgrad);
}

/* The bound of the chosen backward kernel, as step 10's rows verify it. */
static conv_status backward_tolerance(auto_row *r, const conv_gpu_problem *pb,
                                      conv_verify_opts *opts, conv_msg *msg)
{
    const size_t depth = conv_pass_depth(&pb->p);
    switch (r->choice.kernel) {
    case CONV_AUTO_10C:
    case CONV_AUTO_10D_8B: *opts = conv_verify_bound(conv_tf32_bound_factor(depth)); return CONV_OK;
    case CONV_AUTO_10D_9B: /* dy truncated to TF32, as 9b truncates x */
        *opts = conv_verify_bound(tc_bound_factor(TC_TF32_XTRUNC, depth));
        return CONV_OK;
    case CONV_AUTO_10D_7B: return conv_backward_wino_tolerance_prepare(&r->dgrad, pb, opts, msg);
    default: *opts = conv_verify_bound(1.0); return CONV_OK;
    }
}

/* The bound of the chosen kernel, as its own step's rows verify it. */
static conv_status tolerance(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                             conv_msg *msg)
{
    auto_row *r = ctx;
    if (pb->p.pass != CONV_PASS_FORWARD)
        return backward_tolerance(r, pb, opts, msg);
    const size_t depth = (size_t)pb->p.c * pb->p.r * pb->p.s;
    switch (r->choice.kernel) {
    case CONV_AUTO_7A:
    case CONV_AUTO_7B:
        return wino_tolerance_prepare(&r->wino, &pb->p,
                                      r->choice.kernel == CONV_AUTO_7A ? WINO_F2 : WINO_F4, pb->h_x,
                                      pb->h_w, pb->full_verify, opts, msg);
    case CONV_AUTO_8B: *opts = conv_verify_bound(tc_bound_factor(TC_TF32, depth)); return CONV_OK;
    case CONV_AUTO_8C: *opts = conv_verify_bound(tc_bound_factor(TC_3XTF32, depth)); return CONV_OK;
    case CONV_AUTO_9B:
    case CONV_AUTO_9C: /* 9b's arithmetic: x truncated to TF32 */
        *opts = conv_verify_bound(tc_bound_factor(TC_TF32_XTRUNC, depth));
        return CONV_OK;
    case CONV_AUTO_8B_FP16:
    case CONV_AUTO_9A_FP16:
    case CONV_AUTO_9B_FP16: /* x and w rounded to FP16, sums in float */
        *opts = conv_fp16_bound(depth, pb->h_x, conv_input_elems(&pb->p), pb->h_w,
                                conv_filter_elems(&pb->p));
        return CONV_OK;
    default: *opts = conv_verify_bound(1.0); return CONV_OK;
    }
}

static conv_status annotate(void *ctx, conv_gpu_problem *pb, const conv_run_opts *o, char *note,
                            size_t len, conv_msg *msg)
{
    (void)pb;
    (void)o;
    (void)msg;
    const auto_row *r = ctx;
    snprintf(note, len, "; chose %s: %s", r->choice.key, r->choice.reason);
    return CONV_OK;
}

int conv_auto_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)select;
    const conv_pass pass = p != NULL ? p->pass : CONV_PASS_FORWARD;
    int n = 0;
    for (; n < AUTO_ROW_COUNT && n < max_rows; ++n) {
        rows[n] = pass == CONV_PASS_FORWARD
                      ? conv_row_device(names[n], keys[n], run, &contexts[n])
                      : conv_row_grad(names[n], keys[n], pass, run_grad, &contexts[n]);
        rows[n].cls = contexts[n].cls;
        rows[n].check = check;
        rows[n].setup = setup;
        rows[n].teardown = teardown;
        rows[n].tolerance = tolerance;
        rows[n].annotate = annotate;
    }
    return n;
}

const conv_auto_choice *conv_auto_row_choice(const conv_row *row)
{
    for (int i = 0; i < AUTO_ROW_COUNT; ++i)
        if (row->ctx == &contexts[i])
            return contexts[i].chosen ? &contexts[i].choice : NULL;
    return NULL;
}

#include "backward_rows.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_backward.h"
#include "conv_backward_cpu.h"
#include "conv_cuda.h"
#include "conv_verify_backward.h"
#include "hopper.h"
#include "tc_host.h"
#include "tensor_cores.h"
#include "winograd.h"

/* The adapters the rows hand to the harness (conv_gpu_grad; ctx unused):
 * dgrad writes d_x from dy (in d_y) and d_w, wgrad d_w from d_x and dy. */
static conv_status dgrad_naive(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                               cudaStream_t stream, conv_msg *msg)
{
    (void)ctx;
    return conv2d_backward_data_naive(p, d_y, d_w, d_x, 0, stream, msg);
}

static conv_status wgrad_naive(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                               cudaStream_t stream, conv_msg *msg)
{
    (void)ctx;
    return conv2d_backward_filter_naive(p, d_x, d_y, d_w, 0, stream, msg);
}

static conv_status dgrad_igemm(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                               cudaStream_t stream, conv_msg *msg)
{
    (void)ctx;
    return conv2d_backward_data_igemm(p, d_y, d_w, d_x, stream, msg);
}

/* wgrad's split-K: the slices the rule picks on this GPU and their
 * workspace, allocated before the measurement (never inside the timed
 * call) and freed after it. */
typedef struct {
    int (*rule)(const conv_params *p, int sm_count); /* the version's split rule */
    size_t (*workspace)(const conv_params *p, int splits);
    int splits;
    float *d_workspace;
    size_t bytes;
} split_k;

static split_k igemm_split = {conv2d_backward_filter_igemm_splits,
                              conv2d_backward_filter_igemm_workspace, 0, NULL, 0};
static split_k tf32_split = {conv2d_backward_filter_tf32_splits,
                             conv2d_backward_filter_tf32_workspace, 0, NULL, 0};

static conv_status split_setup(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    split_k *sk = ctx;
    int device = 0, sms = 0;
    CONV_CUDA_CHECK(cudaGetDevice(&device), msg);
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), msg);
    sk->splits = sk->rule(&pb->p, sms);
    sk->bytes = sk->workspace(&pb->p, sk->splits);
    sk->d_workspace = NULL;
    if (sk->bytes > 0)
        return conv_device_alloc(&sk->d_workspace, sk->bytes / sizeof(float),
                                 "the split-K workspace", msg);
    return CONV_OK;
}

static void split_teardown(void *ctx)
{
    split_k *sk = ctx;
    conv_device_free(sk->d_workspace);
    sk->d_workspace = NULL;
}

static conv_status split_annotate(void *ctx, conv_gpu_problem *pb, const conv_run_opts *o,
                                  char *note, size_t len, conv_msg *msg)
{
    (void)pb, (void)o, (void)msg;
    const split_k *sk = ctx;
    snprintf(note, len, "; depth split in %d slice%s", sk->splits, sk->splits == 1 ? "" : "s");
    return CONV_OK;
}

static conv_status wgrad_igemm(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                               cudaStream_t stream, conv_msg *msg)
{
    const split_k *sk = ctx;
    return conv2d_backward_filter_igemm(p, d_x, d_y, d_w, sk->splits, sk->d_workspace, sk->bytes,
                                        stream, msg);
}

static conv_status dgrad_tf32(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                              cudaStream_t stream, conv_msg *msg)
{
    (void)ctx;
    return conv2d_backward_data_tf32(p, d_y, d_w, d_x, stream, msg);
}

static conv_status wgrad_tf32(void *ctx, const conv_params *p, float *d_x, float *d_w, float *d_y,
                              cudaStream_t stream, conv_msg *msg)
{
    const split_k *sk = ctx;
    return conv2d_backward_filter_tf32(p, d_x, d_y, d_w, sk->splits, sk->d_workspace, sk->bytes,
                                       stream, msg);
}

/* 10c reads NHWC tensors only (no CUDA call: the GPU's compute capability
 * is the launcher's to check). */
static conv_status nhwc_only(void *ctx, const conv_params *p, conv_msg *msg)
{
    (void)ctx;
    if (p->layout != CONV_LAYOUT_NHWC)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "10c takes NHWC tensors only, got NCHW");
    return CONV_OK;
}

/* TF32's bound: each product's inputs rounded to TF32 (conv_verify.h), over
 * the depth of the pass's sums. */
static conv_status tf32_bound(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                              conv_msg *msg)
{
    (void)ctx, (void)msg;
    *opts = conv_verify_bound(conv_tf32_bound_factor(conv_pass_depth(&pb->p)));
    return CONV_OK;
}

/* 10d: dgrad as a forward convolution, run by one forward kernel, with the
 * workspace for the flipped filter allocated before the measurement (the
 * flip itself is part of the timed call). */
typedef struct {
    conv_backward_forward_kernel which;
    float *d_workspace;
    size_t bytes;
    conv_backward_wino_tolerance wino; /* 7b's tolerance */
} flip_run;

static flip_run flip_6f = {.which = CONV_BACKWARD_FORWARD_6F};
static flip_run flip_7b = {.which = CONV_BACKWARD_FORWARD_7B};
static flip_run flip_8b = {.which = CONV_BACKWARD_FORWARD_8B};
static flip_run flip_9b = {.which = CONV_BACKWARD_FORWARD_9B};

static conv_status dgrad_forward(void *ctx, const conv_params *p, float *d_x, float *d_w,
                                 float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const flip_run *f = ctx;
    return conv2d_backward_data_forward(p, f->which, d_y, d_w, d_x, f->d_workspace, f->bytes,
                                        stream, msg);
}

static conv_status flip_setup(void *ctx, conv_gpu_problem *pb, conv_msg *msg)
{
    flip_run *f = ctx;
    f->bytes = conv2d_backward_data_forward_workspace(&pb->p, f->which);
    f->d_workspace = NULL;
    return conv_device_alloc(&f->d_workspace, f->bytes / sizeof(float), "10d's workspace", msg);
}

static void flip_teardown(void *ctx)
{
    flip_run *f = ctx;
    conv_device_free(f->d_workspace);
    f->d_workspace = NULL;
    f->bytes = 0;
    conv_backward_wino_tolerance_free(&f->wino);
}

/* Stride 1, a padding the flipped filter can take, and the forward kernel's
 * own limits: 7b's Winograd tile (either layout), NHWC for 6f, 8b and 9b (no
 * CUDA call but 9b's, which asks for Hopper, once per device; 8b's launcher
 * refuses a GPU without TF32 with the reason). */
static conv_status flip_check(void *ctx, const conv_params *p, conv_msg *msg)
{
    const flip_run *f = ctx;
    conv_params fwd;
    conv_status st = conv2d_backward_data_forward_params(p, &fwd, msg);
    if (st != CONV_OK)
        return st;
    if (f->which == CONV_BACKWARD_FORWARD_7B) /* either layout; memory: the setup's to find */
        return wino_check(&fwd, WINO_F4, SIZE_MAX, msg);
    if (p->layout != CONV_LAYOUT_NHWC)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "10d runs the NHWC forward kernels of steps 06, 08 and 09, got NCHW");
    if (f->which == CONV_BACKWARD_FORWARD_6F)
        return CONV_OK;
    st = tc_check(&fwd, msg);
    if (st == CONV_OK && f->which == CONV_BACKWARD_FORWARD_9B)
        st = tc_tma_available(msg);
    return st;
}

/* 9b truncates dy to TF32 (it is 9b's x) and rounds w': step 08's bound
 * of that arithmetic over dgrad's depth. */
static conv_status xtrunc_bound(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                                conv_msg *msg)
{
    (void)ctx, (void)msg;
    *opts = conv_verify_bound(tc_bound_factor(TC_TF32_XTRUNC, conv_pass_depth(&pb->p)));
    return CONV_OK;
}

conv_status conv_backward_wino_tolerance_prepare(conv_backward_wino_tolerance *tol,
                                                 const conv_gpu_problem *pb, conv_verify_opts *opts,
                                                 conv_msg *msg)
{
    conv_backward_wino_tolerance_free(tol);
    conv_params f;
    conv_status st = conv2d_backward_data_forward_params(&pb->p, &f, msg);
    if (st != CONV_OK)
        return st;
    tol->h_wf = malloc(conv_filter_elems(&pb->p) * sizeof *tol->h_wf);
    if (tol->h_wf == NULL)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY,
                         "out of host memory for Winograd's error bound");
    conv2d_backward_data_flip_filter_cpu(&pb->p, &f, pb->h_w, tol->h_wf);
    /* dgrad's dy lives in y's buffer */
    return wino_tolerance_prepare(&tol->wino, &f, WINO_F4, pb->h_y, tol->h_wf, pb->full_verify,
                                  opts, msg);
}

void conv_backward_wino_tolerance_free(conv_backward_wino_tolerance *tol)
{
    wino_tolerance_free(&tol->wino);
    free(tol->h_wf);
    tol->h_wf = NULL;
}

static conv_status wino_bound(void *ctx, const conv_gpu_problem *pb, conv_verify_opts *opts,
                              conv_msg *msg)
{
    flip_run *f = ctx;
    return conv_backward_wino_tolerance_prepare(&f->wino, pb, opts, msg);
}

static conv_row flip_row(const char *name, flip_run *f)
{
    conv_row r = conv_row_grad(name, "10d", CONV_PASS_DGRAD, dgrad_forward, f);
    r.check = flip_check;
    r.setup = flip_setup;
    r.teardown = flip_teardown;
    if (f->which == CONV_BACKWARD_FORWARD_7B)
        r.tolerance = wino_bound;
    else if (f->which != CONV_BACKWARD_FORWARD_6F) {
        r.cls = CONV_CLASS_TF32;
        r.tolerance = f->which == CONV_BACKWARD_FORWARD_8B ? tf32_bound : xtrunc_bound;
    }
    return r;
}

/* A wgrad row with its split-K workspace. */
static conv_row split_row(const char *name, const char *key, conv_gpu_grad grad, split_k *sk)
{
    conv_row r = conv_row_grad(name, key, CONV_PASS_WGRAD, grad, sk);
    r.setup = split_setup;
    r.teardown = split_teardown;
    r.annotate = split_annotate;
    return r;
}

int conv_backward_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows)
{
    (void)select;
    conv_row all[] = {
        conv_row_grad("10a dgrad naive", "10a", CONV_PASS_DGRAD, dgrad_naive, NULL),
        conv_row_grad("10a wgrad naive", "10a", CONV_PASS_WGRAD, wgrad_naive, NULL),
        conv_row_grad("10b dgrad implicit GEMM", "10b", CONV_PASS_DGRAD, dgrad_igemm, NULL),
        split_row("10b wgrad implicit GEMM, split-K", "10b", wgrad_igemm, &igemm_split),
        conv_row_grad("10c dgrad TF32 tensor cores", "10c", CONV_PASS_DGRAD, dgrad_tf32, NULL),
        split_row("10c wgrad TF32 tensor cores, split-K", "10c", wgrad_tf32, &tf32_split),
        flip_row("10d dgrad = forward 6f", &flip_6f),
        flip_row("10d dgrad = forward 7b", &flip_7b),
        flip_row("10d dgrad = forward 8b", &flip_8b),
        flip_row("10d dgrad = forward 9b", &flip_9b),
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && n < max_rows; ++i)
        if (all[i].pass == p->pass) {
            rows[n] = all[i];
            if (strcmp(rows[n].key, "10c") == 0) {
                rows[n].cls = CONV_CLASS_TF32;
                rows[n].check = nhwc_only;
                rows[n].tolerance = tf32_bound;
            }
            ++n;
        }
    return n;
}

#include "backward_rows.h"

#include <stdio.h>
#include <string.h>

#include "conv_backward.h"
#include "conv_cuda.h"
#include "conv_verify_backward.h"

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

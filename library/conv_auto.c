#include "conv_auto.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "conv_backward.h"
#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_im2col_gemm.h"
#include "conv_naive.h"
#include "conv_prefetch.h"
#include "conv_tiled_2d.h"
#include "hopper.h"
#include "tensor_cores.h"
#include "winograd.h"

/* 4a's configuration "32x64, 16 outputs/thread" (04_tiled_2d/conv_tiled_2d_configs.c). */
#define AUTO_4A_CONFIG 3

static const char *const keys[CONV_AUTO_KERNEL_COUNT] = {
    "2a",      "4a",  "5b",  "6b",     "6e",     "6f",      "7a",
    "7b",      "8b",  "8c",  "9b",     "9c",     "8b-fp16", "9a-fp16",
    "9b-fp16", "10b", "10c", "10d-6f", "10d-7b", "10d-8b",  "10d-9b"};

const char *conv_auto_kernel_key(conv_auto_kernel k)
{
    return k >= 0 && k < CONV_AUTO_KERNEL_COUNT ? keys[k] : "?";
}

int conv_auto_kernel_runs(conv_auto_kernel k, conv_pass pass)
{
    if (k < 0 || k >= CONV_AUTO_KERNEL_COUNT)
        return 0;
    if (k == CONV_AUTO_10B || k == CONV_AUTO_10C)
        return pass == CONV_PASS_DGRAD || pass == CONV_PASS_WGRAD;
    if (k >= CONV_AUTO_10D_6F)
        return pass == CONV_PASS_DGRAD;
    return pass == CONV_PASS_FORWARD;
}

conv_class conv_auto_kernel_class(conv_auto_kernel k)
{
    if (k == CONV_AUTO_8B_FP16 || k == CONV_AUTO_9A_FP16 || k == CONV_AUTO_9B_FP16)
        return CONV_CLASS_FP16;
    return k == CONV_AUTO_8B || k == CONV_AUTO_9B || k == CONV_AUTO_9C || k == CONV_AUTO_10C ||
                   k == CONV_AUTO_10D_8B || k == CONV_AUTO_10D_9B
               ? CONV_CLASS_TF32
               : CONV_CLASS_FP32;
}

static size_t add_sat(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t tensor_bytes(const conv_params *p)
{
    return add_sat(add_sat(conv_input_elems(p), conv_filter_elems(p)), conv_output_elems(p)) *
           sizeof(float);
}

/* Floats of workspace kernel k needs on p (a problem its check accepted);
 * 9c's for the slices its rule picks on d's SMs. */
static size_t workspace_elems(conv_auto_kernel k, const conv_params *p, const conv_auto_device *d)
{
    switch (k) {
    case CONV_AUTO_9C:
        return conv2d_tc_tma_split_workspace(p, conv2d_tc_tma_splits(p, d->sm_count)) /
               sizeof(float);
    case CONV_AUTO_6B:
    case CONV_AUTO_6E: return conv2d_im2col_gemm_workspace_elems(p);
    case CONV_AUTO_7A: return wino_workspace_elems(p, WINO_F2);
    case CONV_AUTO_7B: return wino_workspace_elems(p, WINO_F4);
    case CONV_AUTO_8B:
    case CONV_AUTO_8C: return conv2d_tc_mma_workspace_elems(p);
    case CONV_AUTO_8B_FP16:
    case CONV_AUTO_9A_FP16:
    case CONV_AUTO_9B_FP16: return conv2d_tc_fp16_workspace_elems(p);
    default: return 0;
    }
}

/* The forward kernel that runs 10d kernel k, its step 10 name and ours. */
static conv_backward_forward_kernel forward_of_10d(conv_auto_kernel k)
{
    switch (k) {
    case CONV_AUTO_10D_7B: return CONV_BACKWARD_FORWARD_7B;
    case CONV_AUTO_10D_8B: return CONV_BACKWARD_FORWARD_8B;
    case CONV_AUTO_10D_9B: return CONV_BACKWARD_FORWARD_9B;
    default: return CONV_BACKWARD_FORWARD_6F;
    }
}

static conv_auto_kernel forward_kernel_of_10d(conv_auto_kernel k)
{
    switch (k) {
    case CONV_AUTO_10D_7B: return CONV_AUTO_7B;
    case CONV_AUTO_10D_8B: return CONV_AUTO_8B;
    case CONV_AUTO_10D_9B: return CONV_AUTO_9B;
    default: return CONV_AUTO_6F;
    }
}

static conv_status accepts(conv_auto_kernel k, const conv_params *p, const conv_auto_device *d,
                           conv_msg *msg);

/* 10d: stride 1 and a padding the flipped filter takes (step 10's own
 * check), the forward kernel's check on the forward problem, and the
 * tensors with 10d's workspace within the memory given. */
static conv_status accepts_10d(conv_auto_kernel k, const conv_params *p, const conv_auto_device *d,
                               conv_msg *msg)
{
    if (p->pass != CONV_PASS_DGRAD)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "%s computes dgrad only", keys[k]);
    conv_params f;
    conv_status st = conv2d_backward_data_forward_params(p, &f, msg);
    if (st != CONV_OK)
        return st;
    conv_auto_device any_memory = *d; /* 10d's own workspace is checked below */
    any_memory.free_bytes = SIZE_MAX;
    if ((st = accepts(forward_kernel_of_10d(k), &f, &any_memory, msg)) != CONV_OK)
        return st;
    if (add_sat(tensor_bytes(p), conv2d_backward_data_forward_workspace(p, forward_of_10d(k))) >
        d->free_bytes)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "%s: the tensors and the flipped filter's workspace exceed the memory "
                         "given",
                         keys[k]);
    return CONV_OK;
}

/* Kernel k's own checks on p and d: CONV_OK or the reason it refuses. No CUDA call. */
static conv_status accepts(conv_auto_kernel k, const conv_params *p, const conv_auto_device *d,
                           conv_msg *msg)
{
    conv_status st;
    switch (k) {
    case CONV_AUTO_2A: return conv2d_naive_check(p, msg);
    case CONV_AUTO_4A: {
        const conv_tiled_choice c = {CONV_TILED_S1, AUTO_4A_CONFIG, CONV_TILED_WEIGHTS_AUTO};
        return conv2d_tiled_check(&c, p, msg);
    }
    case CONV_AUTO_5B: {
        conv_prefetch_plan plan;
        return conv2d_prefetch_plan(CONV_PREFETCH_5B, p, d->smem_per_block, &plan, msg);
    }
    case CONV_AUTO_6B:
    case CONV_AUTO_6E: return conv2d_im2col_gemm_check(p, d->free_bytes, msg);
    case CONV_AUTO_6F: /* the check of 6f's row (06_im2col_gemm/im2col_gemm_rows.c) */
        if (p->layout != CONV_LAYOUT_NHWC)
            return conv_fail(msg, CONV_ERR_UNSUPPORTED, "6f implicit GEMM needs NHWC");
        return conv2d_im2col_gemm_check(p, SIZE_MAX, msg);
    case CONV_AUTO_7A: return wino_check(p, WINO_F2, d->free_bytes, msg);
    case CONV_AUTO_7B: return wino_check(p, WINO_F4, d->free_bytes, msg);
    case CONV_AUTO_8B:
    case CONV_AUTO_8C:
    case CONV_AUTO_9B:
    case CONV_AUTO_9C:
        if (k == CONV_AUTO_9B || k == CONV_AUTO_9C ? !d->hopper_wgmma : !d->tf32_tensor_cores)
            return conv_fail(msg, CONV_ERR_UNSUPPORTED, "%s does not run on sm_%d%d here", keys[k],
                             d->cc_major, d->cc_minor);
        /* 8b and 8c take NCHW too */
        st = k == CONV_AUTO_8B || k == CONV_AUTO_8C ? tc_check_mma(p, msg) : tc_check(p, msg);
        if (st != CONV_OK)
            return st;
        /* y from cudaMalloc (conv2d_auto checks the real one) */
        if (k == CONV_AUTO_9C && !tc_tma_fits(p, NULL, NULL, NULL))
            return conv_fail(msg, CONV_ERR_UNSUPPORTED, "9c: no tensor map describes it");
        if (add_sat(tensor_bytes(p), workspace_elems(k, p, d) * sizeof(float)) > d->free_bytes)
            return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                             "%s: the tensors and its workspace exceed the memory given", keys[k]);
        return CONV_OK;
    case CONV_AUTO_8B_FP16:
    case CONV_AUTO_9A_FP16:
    case CONV_AUTO_9B_FP16:
        if (k == CONV_AUTO_8B_FP16 ? 10 * d->cc_major + d->cc_minor < 75 : !d->hopper_wgmma_fp16)
            return conv_fail(msg, CONV_ERR_UNSUPPORTED, "%s does not run on sm_%d%d here", keys[k],
                             d->cc_major, d->cc_minor);
        if ((st = tc_check(p, msg)) != CONV_OK)
            return st;
        /* y from cudaMalloc (conv2d_auto checks the real one) */
        if (k == CONV_AUTO_9B_FP16 && !tc_tma_fp16_fits(p, NULL))
            return conv_fail(msg, CONV_ERR_UNSUPPORTED, "9b-fp16: no tensor map describes it");
        if (k == CONV_AUTO_9A_FP16 && !tc_wgmma_fp16_fits(p))
            return conv_fail(msg, CONV_ERR_UNSUPPORTED, "9a-fp16: C is not a multiple of 8");
        if (add_sat(tensor_bytes(p), workspace_elems(k, p, d) * sizeof(float)) > d->free_bytes)
            return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                             "%s: the tensors and the FP16 copies exceed the memory given",
                             keys[k]);
        return CONV_OK;
    case CONV_AUTO_10B:
        return p->pass == CONV_PASS_DGRAD ? conv2d_backward_data_igemm_check(p, msg)
                                          : conv2d_backward_filter_igemm_check(p, msg);
    case CONV_AUTO_10C:
        if (!d->tf32_tensor_cores)
            return conv_fail(msg, CONV_ERR_UNSUPPORTED, "10c does not run on sm_%d%d here",
                             d->cc_major, d->cc_minor);
        return p->pass == CONV_PASS_DGRAD ? conv2d_backward_data_tf32_check(p, msg)
                                          : conv2d_backward_filter_tf32_check(p, msg);
    case CONV_AUTO_10D_6F:
    case CONV_AUTO_10D_7B:
    case CONV_AUTO_10D_8B:
    case CONV_AUTO_10D_9B: return accepts_10d(k, p, d, msg);
    default: return conv_fail(msg, CONV_ERR_INVALID, "unknown kernel %d", (int)k);
    }
}

/* The rule's state: the choice so far and what fell through on the way. */
typedef struct {
    const conv_params *p;
    const conv_auto_device *d;
    conv_auto_choice *out;
    char fell[CONV_MSG_LEN]; /* "7b refused (why); " ... */
} rule;

/* wgrad's slices of its sum: the kernel's own rule for the SM count, fewer
 * where their workspace (one K x C*R*S partial tile each) and the tensors
 * would exceed the memory given, down to 1 (no workspace). */
static void wgrad_splits(rule *r)
{
    const conv_params *p = r->p;
    conv_auto_choice *c = r->out;
    const int tf32 = c->kernel == CONV_AUTO_10C;
    int splits = tf32 ? conv2d_backward_filter_tf32_splits(p, r->d->sm_count)
                      : conv2d_backward_filter_igemm_splits(p, r->d->sm_count);
    const int wanted = splits;
    const size_t tensors = tensor_bytes(p);
    const size_t room = r->d->free_bytes > tensors ? r->d->free_bytes - tensors : 0;
    const size_t part = conv_filter_elems(p) * sizeof(float);
    if (splits > 1 && (size_t)splits > room / part)
        splits = room / part < 2 ? 1 : (int)(room / part);
    c->splits = splits;
    c->workspace_bytes = tf32 ? conv2d_backward_filter_tf32_workspace(p, splits)
                              : conv2d_backward_filter_igemm_workspace(p, splits);
    const size_t used = strlen(c->reason);
    if (splits == wanted)
        snprintf(c->reason + used, sizeof c->reason - used, "; its sum in %d slices", splits);
    else
        snprintf(c->reason + used, sizeof c->reason - used,
                 "; its sum in %d slices (the rule's %d need more workspace than given)", splits,
                 wanted);
}

/* Picks k with `reason` when its check accepts p; else notes why and returns 0. */
static int take(rule *r, conv_auto_kernel k, const char *reason)
{
    conv_msg why;
    conv_msg_clear(&why);
    if (accepts(k, r->p, r->d, &why) != CONV_OK) {
        size_t used = strlen(r->fell);
        snprintf(r->fell + used, sizeof r->fell - used, "%s refused: %s; ", keys[k], why.text);
        return 0;
    }
    r->out->kernel = k;
    r->out->key = keys[k];
    r->out->cls = conv_auto_kernel_class(k);
    r->out->workspace_bytes = workspace_elems(k, r->p, r->d) * sizeof(float);
    r->out->splits = k == CONV_AUTO_9C ? conv2d_tc_tma_splits(r->p, r->d->sm_count) : 0;
    if (k >= CONV_AUTO_10D_6F)
        r->out->workspace_bytes = conv2d_backward_data_forward_workspace(r->p, forward_of_10d(k));
    snprintf(r->out->reason, sizeof r->out->reason, "%s%s", r->fell, reason);
    if (r->p->pass == CONV_PASS_WGRAD)
        wgrad_splits(r);
    return 1;
}

/* Output tiles of side x side the GEMM view (N*P*Q outputs by K filters)
 * has: 128 for 8b's and 8c's blocks (6f's 64 x 128 tiles are twice as
 * many), 32 for 6b's. */
static long long gemm_tiles(const conv_params *p, int side)
{
    const long long m = (long long)p->n * conv_out_h(p) * conv_out_w(p);
    return (m + side - 1) / side * ((p->k + side - 1) / side);
}

/* F(4x4, 3x3)'s output tiles of 4 x 4 pixels (7b's unit of work, per filter
 * group); 7a's 2 x 2 tiles are four times as many. */
static long long wino_f4_tiles(const conv_params *p)
{
    return (long long)p->n * ((conv_out_h(p) + 3) / 4) * ((conv_out_w(p) + 3) / 4);
}

/* excerpt: auto_rule */
static void choose_nhwc(rule *r, conv_class cls)
{
    const conv_params *p = r->p;
    const int wino = p->r == 3 && p->s == 3 && p->stride_h == 1 && p->stride_w == 1 &&
                     p->dil_h == 1 && p->dil_w == 1;
    if (conv_class_allows(cls, CONV_CLASS_TF32)) {
        if (p->c >= CONV_AUTO_9B_MIN_C && conv2d_tc_tma_splits(p, r->d->sm_count) > 1 &&
            take(r, CONV_AUTO_9C,
                 "NHWC, TF32 on Hopper, 9b's tiles fill less than half the SMs: 9c, 9b with "
                 "its sum split"))
            return;
        if (p->c >= CONV_AUTO_9B_MIN_C &&
            take(r, CONV_AUTO_9B,
                 "NHWC, TF32 on Hopper, C fills 9b's 32-channel slices: 9b wgmma fed by TMA"))
            return;
        if (take(r, CONV_AUTO_8B, "NHWC, TF32: 8b mma.sync on the tensor cores"))
            return;
    }
    if (wino && wino_f4_tiles(p) < 2 * r->d->sm_count &&
        take(r, CONV_AUTO_7A,
             "NHWC 3x3 stride 1, F(4x4) tiles for fewer than twice the SMs: "
             "Winograd F(2x2, 3x3), four times the tiles"))
        return;
    if (wino && take(r, CONV_AUTO_7B, "NHWC 3x3 stride 1: Winograd F(4x4, 3x3)"))
        return;
    if (2 * gemm_tiles(p, 128) >= r->d->sm_count &&
        take(r, CONV_AUTO_8C, "NHWC, 128x128 tiles for half the SMs or more: 8c 3xTF32"))
        return;
    if (gemm_tiles(p, 32) <= r->d->sm_count &&
        take(r, CONV_AUTO_6B, "NHWC, 32x32 tiles for no more than the SMs: im2col + 6b GEMM"))
        return;
    if (take(r, CONV_AUTO_6F, "NHWC: 6f implicit GEMM"))
        return;
    take(r, CONV_AUTO_2A, "NHWC, nothing faster takes it: 2a naive");
}

/* FP16, NHWC: Hopper's wgmma fed by TMA, or by cp.async where no tensor map
 * describes the problem, else mma.sync; where none takes it (the FP16
 * copies do not fit), the FP32 rule. */
static void choose_fp16(rule *r)
{
    if (take(r, CONV_AUTO_9B_FP16, "NHWC, FP16 on Hopper: 9b-fp16 wgmma fed by TMA"))
        return;
    if (take(r, CONV_AUTO_9A_FP16, "NHWC, FP16 on Hopper: 9a-fp16 wgmma fed by cp.async"))
        return;
    if (take(r, CONV_AUTO_8B_FP16, "NHWC, FP16: 8b-fp16 mma.sync on the tensor cores"))
        return;
    choose_nhwc(r, CONV_CLASS_FP32);
}

static void choose_nchw(rule *r, conv_class cls)
{
    const conv_params *p = r->p;
    const int wino = p->r == 3 && p->s == 3 && p->stride_h == 1 && p->stride_w == 1 &&
                     p->dil_h == 1 && p->dil_w == 1;
    if (wino && take(r, CONV_AUTO_7B, "NCHW 3x3 stride 1: Winograd F(4x4, 3x3)"))
        return;
    if (p->c == 1 && p->k == 1 && conv_out_h(p) >= 64 && conv_out_w(p) >= 32 &&
        take(r, CONV_AUTO_4A, "NCHW, one channel, an image of whole 32x64 tiles: 4a tiled"))
        return;
    if (p->k <= 32 && take(r, CONV_AUTO_5B, "NCHW, at most 32 filters: 5b direct"))
        return;
    if (conv_class_allows(cls, CONV_CLASS_TF32) &&
        take(r, CONV_AUTO_8B, "NCHW, TF32: 8b mma.sync, x's pixels side by side in its stages"))
        return;
    const int wide = tc_nchw_copies16(p); /* 8c's 16-byte copies of x */
    if (wide && 2 * gemm_tiles(p, 128) >= r->d->sm_count &&
        take(r, CONV_AUTO_8C,
             "NCHW, a 1x1 layer 8c copies 16 bytes at a time, 128x128 tiles for "
             "half the SMs or more: 8c 3xTF32"))
        return;
    if (take(r, CONV_AUTO_6E, "NCHW: im2col + 6e GEMM"))
        return;
    take(r, CONV_AUTO_2A, "NCHW, nothing faster takes it: 2a naive");
}
/* excerpt end: auto_rule */

/* excerpt: auto_rule_backward */
/* dgrad: at stride 1 a forward convolution of dy (10d) by the fastest
 * forward kernel that takes it, else the stride phases of 10b (10c in TF32). */
static void choose_dgrad(rule *r, conv_class cls)
{
    const conv_params *p = r->p;
    const int nhwc = p->layout == CONV_LAYOUT_NHWC, tf32 = conv_class_allows(cls, CONV_CLASS_TF32);
    const int wino = p->r == 3 && p->s == 3 && p->dil_h == 1 && p->dil_w == 1;
    if (p->stride_h == 1 && p->stride_w == 1) {
        if (tf32 && nhwc && conv_flops(p) >= CONV_AUTO_9B_FLOP_PER_SM * r->d->sm_count &&
            take(r, CONV_AUTO_10D_9B, "dgrad stride 1, NHWC, TF32, large on Hopper: 10d via 9b"))
            return;
        if (tf32 && nhwc && take(r, CONV_AUTO_10D_8B, "dgrad stride 1, NHWC, TF32: 10d via 8b"))
            return;
        if (wino && take(r, CONV_AUTO_10D_7B, "dgrad stride 1, 3x3: 10d via 7b Winograd"))
            return;
        if (nhwc && take(r, CONV_AUTO_10D_6F, "dgrad stride 1, NHWC: 10d via 6f"))
            return;
    }
    if (tf32 && nhwc && take(r, CONV_AUTO_10C, "dgrad, NHWC, TF32: 10c on the tensor cores"))
        return;
    take(r, CONV_AUTO_10B, "dgrad: 10b implicit GEMM per stride phase");
}

/* wgrad: split-K implicit GEMMs, on the tensor cores in TF32 (NHWC). */
static void choose_wgrad(rule *r, conv_class cls)
{
    if (conv_class_allows(cls, CONV_CLASS_TF32) && r->p->layout == CONV_LAYOUT_NHWC &&
        take(r, CONV_AUTO_10C, "wgrad, NHWC, TF32: 10c split-K on the tensor cores"))
        return;
    take(r, CONV_AUTO_10B, "wgrad: 10b implicit GEMM, split-K");
}
/* excerpt end: auto_rule_backward */

/* The problem and the class, as both entry points check them first. */
static conv_status validate(const conv_params *p, conv_class cls, conv_msg *msg)
{
    if (p == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: p is NULL");
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if ((int)cls < 0 || cls >= CONV_CLASS_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid class: %d", (int)cls);
    return CONV_OK;
}

conv_status conv_auto_choose(const conv_params *p, conv_class cls, const conv_auto_device *d,
                             conv_auto_choice *out, conv_msg *msg)
{
    conv_status st = validate(p, cls, msg);
    if (st != CONV_OK || (st = conv_check_pointers(d, "d", out, "out", d, "d", msg)) != CONV_OK)
        return st;
    if (d->cc_major < 1 || d->cc_minor < 0)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid device: compute capability %d.%d",
                         d->cc_major, d->cc_minor);
    if (d->sm_count < 1)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid device: sm_count %d", d->sm_count);
    memset(out, 0, sizeof *out);
    rule r = {p, d, out, ""};
    if (cls == CONV_CLASS_FP16 && (p->pass != CONV_PASS_FORWARD || p->layout != CONV_LAYOUT_NHWC)) {
        /* no FP16 kernel: the FP32 rule's, which is more accurate */
        snprintf(r.fell, sizeof r.fell, "FP16: no FP16 kernel for %s, the FP32 rule; ",
                 p->pass != CONV_PASS_FORWARD ? "the backward passes" : "NCHW");
        cls = CONV_CLASS_FP32;
    }
    if (p->pass == CONV_PASS_DGRAD)
        choose_dgrad(&r, cls);
    else if (p->pass == CONV_PASS_WGRAD)
        choose_wgrad(&r, cls);
    else if (cls == CONV_CLASS_FP16)
        choose_fp16(&r);
    else if (p->layout == CONV_LAYOUT_NHWC)
        choose_nhwc(&r, cls);
    else
        choose_nchw(&r, cls);
    if (out->key == NULL) /* 2a (10b) refused too: its reason */
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "conv2d_auto: no kernel takes it: %s", r.fell);
    return CONV_OK;
}

size_t conv2d_auto_workspace(const conv_params *p, conv_class cls, const conv_auto_device *d)
{
    conv_auto_choice c;
    return conv_auto_choose(p, cls, d, &c, NULL) == CONV_OK ? c.workspace_bytes : 0;
}

conv_status conv_auto_device_query(conv_auto_device *d, conv_msg *msg)
{
    if (d == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: d is NULL");
    memset(d, 0, sizeof *d);
    conv_status st = conv_cuda_require_device(msg);
    if (st != CONV_OK)
        return st;
    const int dev = conv_current_device();
    int smem_sm = 0;
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&d->cc_major, cudaDevAttrComputeCapabilityMajor, dev),
                    msg);
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&d->cc_minor, cudaDevAttrComputeCapabilityMinor, dev),
                    msg);
    CONV_CUDA_CHECK(cudaDeviceGetAttribute(&d->sm_count, cudaDevAttrMultiProcessorCount, dev), msg);
    CONV_CUDA_CHECK(
        cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev), msg);
    d->smem_per_sm = (size_t)smem_sm;
    d->smem_per_block = conv_smem_limit();
    size_t total = 0;
    CONV_CUDA_CHECK(cudaMemGetInfo(&d->free_bytes, &total), msg);
    d->tf32_tensor_cores = tc_available(NULL) == CONV_OK;
    d->hopper_wgmma = tc_tma_available(NULL) == CONV_OK;
    d->hopper_wgmma_fp16 =
        tc_wgmma_fp16_available(NULL) == CONV_OK && tc_tma_fp16_available(NULL) == CONV_OK;
    return CONV_OK;
}

/* The facts of each device, asked once (the free memory is not kept: it
 * changes, and conv2d_auto counts the memory its caller gave instead).
 * Several host threads may ask at once: one mutex guards the table. The
 * query runs outside it (two threads may both ask a device the first time;
 * both get the same facts), so a slow first query never blocks the other
 * devices. */
#define AUTO_MAX_DEVICES 64
static conv_auto_device known[AUTO_MAX_DEVICES];
static int known_set[AUTO_MAX_DEVICES];
static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;

conv_status conv_auto_device_facts(conv_auto_device *d, int free_now, conv_msg *msg)
{
    if (d == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: d is NULL");
    const int dev = conv_current_device();
    const int cached = dev >= 0 && dev < AUTO_MAX_DEVICES;
    int found = 0;
    if (cached) {
        pthread_mutex_lock(&known_lock);
        if ((found = known_set[dev]) != 0)
            *d = known[dev];
        pthread_mutex_unlock(&known_lock);
    }
    if (!found) {
        conv_status st = conv_auto_device_query(d, msg);
        if (st != CONV_OK)
            return st;
        d->free_bytes = 0;
        if (cached) {
            pthread_mutex_lock(&known_lock);
            known[dev] = *d;
            known_set[dev] = 1;
            pthread_mutex_unlock(&known_lock);
        }
    }
    if (free_now) {
        size_t total = 0;
        CONV_CUDA_CHECK(cudaMemGetInfo(&d->free_bytes, &total), msg);
    }
    return CONV_OK;
}

/* The backward kernels, with the harness's buffers: dgrad dx into d_x from
 * dy in d_y and d_w, wgrad dw into d_w from d_x and dy in d_y. */
static conv_status run_backward(const conv_auto_choice *c, const conv_params *p, float *d_x,
                                float *d_w, float *d_y, float *d_work, size_t work_bytes,
                                cudaStream_t stream, conv_msg *msg)
{
    if (p->pass == CONV_PASS_WGRAD)
        return c->kernel == CONV_AUTO_10C
                   ? conv2d_backward_filter_tf32(p, d_x, d_y, d_w, c->splits, d_work, work_bytes,
                                                 stream, msg)
                   : conv2d_backward_filter_igemm(p, d_x, d_y, d_w, c->splits, d_work, work_bytes,
                                                  stream, msg);
    switch (c->kernel) {
    case CONV_AUTO_10C: return conv2d_backward_data_tf32(p, d_y, d_w, d_x, stream, msg);
    case CONV_AUTO_10D_6F:
    case CONV_AUTO_10D_7B:
    case CONV_AUTO_10D_8B:
    case CONV_AUTO_10D_9B:
        return conv2d_backward_data_forward(p, forward_of_10d(c->kernel), d_y, d_w, d_x, d_work,
                                            work_bytes, stream, msg);
    default: return conv2d_backward_data_igemm(p, d_y, d_w, d_x, stream, msg);
    }
}

/* excerpt: auto_run */
static conv_status run(const conv_auto_choice *c, const conv_params *p, const float *d_x,
                       const float *d_w, float *d_y, float *d_work, size_t work_elems,
                       cudaStream_t stream, conv_msg *msg)
{
    switch (c->kernel) {
    case CONV_AUTO_4A: return conv2d_tiled_s1(p, AUTO_4A_CONFIG, d_x, d_w, d_y, stream, msg);
    case CONV_AUTO_5B: return conv2d_prefetch_5b(p, d_x, d_w, d_y, stream, msg);
    case CONV_AUTO_6B:
    case CONV_AUTO_6E:
        return conv2d_im2col_gemm(p, d_x, d_w, d_y, d_work, work_elems,
                                  c->kernel == CONV_AUTO_6B ? GEMM_6B_SHARED : GEMM_6E_DBUF, NULL,
                                  stream, msg);
    case CONV_AUTO_6F: return conv2d_implicit_gemm(p, d_x, d_w, d_y, stream, msg);
    case CONV_AUTO_7A:
    case CONV_AUTO_7B:
        return conv2d_winograd(p, c->kernel == CONV_AUTO_7A ? WINO_F2 : WINO_F4, d_x, d_w, d_y,
                               d_work, work_elems, stream, msg);
    case CONV_AUTO_8B:
    case CONV_AUTO_8C:
        return conv2d_tc_mma(p, c->kernel == CONV_AUTO_8B ? TC_TF32 : TC_3XTF32, d_x, d_w, d_y,
                             d_work, work_elems, stream, msg);
    case CONV_AUTO_9B: return conv2d_tc_tma(p, d_x, d_w, d_y, stream, msg);
    case CONV_AUTO_9C:
        return conv2d_tc_tma_split(p, d_x, d_w, d_y, c->splits, d_work, work_elems * sizeof(float),
                                   stream, msg);
    case CONV_AUTO_8B_FP16:
        return conv2d_tc_mma_fp16(p, d_x, d_w, d_y, d_work, work_elems, stream, msg);
    case CONV_AUTO_9A_FP16:
        return conv2d_tc_wgmma_fp16(p, d_x, d_w, d_y, d_work, work_elems, stream, msg);
    case CONV_AUTO_9B_FP16:
        return conv2d_tc_tma_fp16(p, d_x, d_w, d_y, d_work, work_elems, stream, msg);
    default: return conv2d_naive(p, d_x, d_w, d_y, 0, stream, msg);
    }
}
/* excerpt end: auto_run */

conv_status conv2d_auto(const conv_params *p, conv_class cls, float *d_x, float *d_w, float *d_y,
                        float *d_workspace, size_t workspace_bytes, cudaStream_t stream,
                        conv_auto_choice *chosen, conv_msg *msg)
{
    conv_status st = conv_check_pointers(d_x, "d_x", d_w, "d_w", d_y, "d_y", msg);
    if (st != CONV_OK)
        return st;
    if (workspace_bytes > 0 && d_workspace == NULL)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid pointer: d_workspace is NULL with workspace_bytes %zu",
                         workspace_bytes);
    if ((st = validate(p, cls, msg)) != CONV_OK) /* before the device is asked */
        return st;
    conv_auto_device d;
    conv_auto_choice c;
    if ((st = conv_auto_device_facts(&d, 0, msg)) != CONV_OK)
        return st;
    /* x, w and y exist already: the workspace must fit in what the caller gave */
    d.free_bytes = add_sat(tensor_bytes(p), workspace_bytes);
    if ((st = conv_auto_choose(p, cls, &d, &c, msg)) != CONV_OK)
        return st;
    if (c.kernel == CONV_AUTO_9B_FP16 && !tc_tma_fp16_fits(p, d_y)) {
        /* the rule took y as cudaMalloc's; this one is not 16-byte aligned.
         * The same workspace serves the next FP16 kernel. */
        c.kernel = tc_wgmma_fp16_fits(p) ? CONV_AUTO_9A_FP16 : CONV_AUTO_8B_FP16;
        c.key = keys[c.kernel];
        const size_t used = strlen(c.reason);
        snprintf(c.reason + used, sizeof c.reason - used,
                 "; y is not 16-byte aligned for 9b-fp16's tensor map: %s", c.key);
    }
    if (chosen != NULL)
        *chosen = c;
    if (p->pass != CONV_PASS_FORWARD)
        return run_backward(&c, p, d_x, d_w, d_y, d_workspace, workspace_bytes, stream, msg);
    return run(&c, p, d_x, d_w, d_y, d_workspace, workspace_bytes / sizeof(float), stream, msg);
}

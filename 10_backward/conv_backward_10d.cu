/* Step 10, 10d: dgrad as a forward convolution. With stride 1, dx is the
 * forward convolution of dy with the filter turned by 180 degrees (flipped in
 * both spatial axes) and with its two channel axes swapped:
 *   dx = conv(dy, w'),   w'[c][k][r][s] = w[k][c][R-1-r][S-1-s]   (KCRS names)
 * padded by pad' = dil*(R-1) - pad per axis, with the same dilation and
 * stride 1; its output is exactly H x W. So the fastest forward kernels of
 * the course compute dgrad unchanged: step 06's 6f (FP32 implicit GEMM),
 * step 07's 7b (Winograd F(4x4, 3x3)), step 08's 8b (mma.sync TF32) and
 * step 09's 9b (wgmma fed by TMA, Hopper). The price
 * is one pass over the filter (K*C*R*S floats) into a workspace before each
 * run. A stride > 1 does not fit: dx is then no convolution of dy but the
 * interleaving of one per stride phase (10b). Lesson: docs/10_backward.md,
 * section "dgrad as a forward convolution (10d)". */
#include "conv_backward.h"

#include <stdint.h>

#include "conv_backward_shape.cuh"
#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_im2col_gemm.h"
#include "gemm.h"
#include "hopper.h"
#include "tensor_cores.h"
#include "winograd.h"

/* w' from w, one element of w' per thread (a grid-stride loop), walked in
 * w''s memory order so that the writes are coalesced. The forward problem's
 * filter has K_fwd = C output and C_fwd = K input channels:
 *   NCHW: w'[c][k][r][s] (C x K x R x S)  =  w[k][c][R-1-r][S-1-s] (K x C x R x S)
 *   NHWC: w'[r][s][k][c] (R x S x K x C)  =  w[R-1-r][S-1-s][c][k] (R x S x C x K) */
__global__ void conv2d_backward_data_flip_filter_kernel(const float *__restrict__ w,
                                                        float *__restrict__ wf, int k, int c, int r,
                                                        int s, int nhwc, long long total)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
        long long t = e;
        long long src;
        if (nhwc) { /* e = ((rf*S + sf)*K + kk)*C + cc */
            /* excerpt: flip nhwc */
            const int cc = (int)(t % c);
            t /= c;
            const int kk = (int)(t % k);
            t /= k;
            const int sf = (int)(t % s), rf = (int)(t / s);
            src = (((long long)(r - 1 - rf) * s + (s - 1 - sf)) * c + cc) * k + kk;
            /* excerpt end: flip nhwc */
        } else { /* e = ((cc*K + kk)*R + rf)*S + sf */
            const int sf = (int)(t % s);
            t /= s;
            const int rf = (int)(t % r);
            t /= r;
            const int kk = (int)(t % k), cc = (int)(t / k);
            src = (((long long)kk * c + cc) * r + (r - 1 - rf)) * s + (s - 1 - sf);
        }
        wf[e] = w[src];
    }
}

/* excerpt: forward params */
extern "C" conv_status conv2d_backward_data_forward_params(const conv_params *p, conv_params *fwd,
                                                           conv_msg *msg)
{
    if (p == NULL || fwd == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: %s is NULL",
                         p == NULL ? "p" : "fwd");
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if (p->stride_h != 1 || p->stride_w != 1)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "10d needs stride 1 (got %dx%d); 10b handles strides by phases",
                         p->stride_h, p->stride_w);
    /* the reach of the filter beyond its first tap, dil*(R-1), per axis */
    const long long reach_h = (long long)p->dil_h * (p->r - 1),
                    reach_w = (long long)p->dil_w * (p->s - 1);
    if (p->pad_h > reach_h || p->pad_w > reach_w)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "10d needs pad <= dil*(filter-1) per axis (got pad %dx%d, reach "
                         "%lldx%lld): the flipped filter's padding would be negative",
                         p->pad_h, p->pad_w, reach_h, reach_w);
    conv_params f = *p;
    f.c = p->k, f.k = p->c;                   /* the channels swap roles */
    f.h = conv_out_h(p), f.w = conv_out_w(p); /* the input is dy, P x Q */
    f.pad_h = (int)(reach_h - p->pad_h);      /* pad' = dil*(R-1) - pad */
    f.pad_w = (int)(reach_w - p->pad_w);      /* the output: P + 2 pad' - reach = H */
    f.pass = CONV_PASS_FORWARD;
    if ((st = conv_params_validate(&f, msg)) != CONV_OK)
        return st;
    *fwd = f;
    return CONV_OK;
}
/* excerpt end: forward params */

/* w' first, then what the kernel needs after it (8b: its own copy of w' as
 * KRSC; 7b: U, V and M), 256 bytes on so that both start 16-byte aligned. */
static size_t flip_elems(const conv_params *p)
{
    const size_t n = conv_filter_elems(p);
    return (n + 63) / 64 * 64;
}

/* The floats after w' that `which` needs: 8b's copy of it as KRSC, 7b's U,
 * V and M (for a forward problem 7b runs). */
static size_t extra_elems(const conv_params *p, conv_backward_forward_kernel which)
{
    conv_params f;
    conv_msg msg;
    if (which == CONV_BACKWARD_FORWARD_8B)
        return conv_filter_elems(p);
    if (which == CONV_BACKWARD_FORWARD_7B &&
        conv2d_backward_data_forward_params(p, &f, &msg) == CONV_OK &&
        wino_supports(&f, WINO_F4, &msg) == CONV_OK)
        return wino_workspace_elems(&f, WINO_F4);
    return 0;
}

extern "C" size_t conv2d_backward_data_forward_workspace(const conv_params *p,
                                                         conv_backward_forward_kernel which)
{
    conv_msg msg;
    if (p == NULL || conv_params_validate(p, &msg) != CONV_OK || (int)which < 0 ||
        which >= CONV_BACKWARD_FORWARD_COUNT)
        return 0;
    const size_t n = flip_elems(p), extra = extra_elems(p, which);
    if (extra > SIZE_MAX / sizeof(float) - n)
        return SIZE_MAX;
    return (n + extra) * sizeof(float);
}

/* The transform's launch, for a p whose filter has been checked. */
static conv_status flip_launch(const conv_params *p, const float *d_w, float *d_wf,
                               cudaStream_t stream, conv_msg *msg)
{
    const long long total = (long long)conv_filter_elems(p);
    long long blocks = (total + CONV_BACKWARD_THREADS - 1) / CONV_BACKWARD_THREADS;
    blocks = blocks < CONV_BACKWARD_MAX_BLOCKS ? blocks : CONV_BACKWARD_MAX_BLOCKS;
    conv_status st =
        conv_kernel_fits((const void *)conv2d_backward_data_flip_filter_kernel,
                         "conv2d_backward_data_flip_filter_kernel", CONV_BACKWARD_THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    conv2d_backward_data_flip_filter_kernel<<<(unsigned)blocks, CONV_BACKWARD_THREADS, 0, stream>>>(
        d_w, d_wf, p->k, p->c, p->r, p->s, p->layout == CONV_LAYOUT_NHWC, total);
    CONV_CHECK_LAUNCH("conv2d_backward_data_flip_filter_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_backward_data_flip_filter(const conv_params *p, const float *d_w,
                                                        float *d_wf, cudaStream_t stream,
                                                        conv_msg *msg)
{
    conv_status st = conv_check_pointers(p, "p", d_w, "d_w", d_wf, "d_wf", msg);
    if (st == CONV_OK)
        st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if (d_w == d_wf)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "d_wf is d_w: the flipped filter needs a buffer of its own");
    return flip_launch(p, d_w, d_wf, stream, msg);
}

static const char *const kernel_names[CONV_BACKWARD_FORWARD_COUNT] = {
    "6f implicit GEMM", "8b mma.sync TF32", "9b wgmma TF32, TMA", "7b Winograd F(4x4, 3x3)"};

/* Whether the forward kernel runs the forward problem f here, asked before
 * anything is launched (what its own launcher would refuse). */
static conv_status forward_runs(const conv_params *f, conv_backward_forward_kernel which,
                                const float *d_dy, const float *d_wf, const float *d_dx,
                                conv_msg *msg)
{
    if (which == CONV_BACKWARD_FORWARD_7B) /* either layout; 3x3, no dilation */
        return wino_check(f, WINO_F4, SIZE_MAX, msg);
    if (f->layout != CONV_LAYOUT_NHWC)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "10d runs the NHWC forward kernel %s (dy[N][P][Q][K], w[R][S][C][K]): "
                         "--layout nhwc",
                         kernel_names[which]);
    if (which == CONV_BACKWARD_FORWARD_6F) /* 6f: 6e's GEMM, M = N*H*W, N = C, depth K*R*S */
        return gemm_validate(GEMM_6E_DBUF, (long long)f->n * conv_out_h(f) * conv_out_w(f), f->k,
                             (long long)f->c * f->r * f->s, d_dy, d_wf, d_dx, NULL, msg);
    conv_status st = tc_check(f, msg);
    if (st != CONV_OK)
        return st;
    if (which == CONV_BACKWARD_FORWARD_8B)
        return tc_available(msg);
    if ((st = tc_tma_available(msg)) != CONV_OK)
        return st;
    /* 9b runs 9a where no tensor map describes the problem */
    return tc_tma_fits(f, d_dy, d_wf, d_dx) ? CONV_OK : tc_wgmma_available(msg);
}

extern "C" conv_status
conv2d_backward_data_forward(const conv_params *p, conv_backward_forward_kernel which,
                             const float *d_dy, const float *d_w, float *d_dx, float *d_workspace,
                             size_t workspace_bytes, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = bwd_validate(p, d_dy, "d_dy", d_w, "d_w", d_dx, "d_dx", msg);
    if (st != CONV_OK)
        return st;
    if ((int)which < 0 || which >= CONV_BACKWARD_FORWARD_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "which must be 6f, 8b, 9b or 7b (0, 1, 2 or 3), got %d", (int)which);
    conv_params f;
    if ((st = conv2d_backward_data_forward_params(p, &f, msg)) != CONV_OK)
        return st;
    const size_t need = conv2d_backward_data_forward_workspace(p, which);
    if (d_workspace == NULL)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid pointer: d_workspace is NULL; 10d needs %zu bytes for the "
                         "flipped filter",
                         need);
    if (workspace_bytes < need)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "workspace_bytes (%zu) is below the %zu bytes 10d needs", workspace_bytes,
                         need);
    float *d_wf = d_workspace;
    if ((st = forward_runs(&f, which, d_dy, d_wf, d_dx, msg)) != CONV_OK)
        return st;
    /* the timed work: the flip, then the forward kernel on the same stream */
    if ((st = flip_launch(p, d_w, d_wf, stream, msg)) != CONV_OK)
        return st;
    if (which == CONV_BACKWARD_FORWARD_6F)
        return conv2d_implicit_gemm(&f, d_dy, d_wf, d_dx, stream, msg);
    if (which == CONV_BACKWARD_FORWARD_7B) /* U, V and M after w' */
        return conv2d_winograd(&f, WINO_F4, d_dy, d_wf, d_dx, d_workspace + flip_elems(p),
                               wino_workspace_elems(&f, WINO_F4), stream, msg);
    if (which == CONV_BACKWARD_FORWARD_8B) /* 8b copies w' as KRSC after it */
        return conv2d_tc_mma(&f, TC_TF32, d_dy, d_wf, d_dx, d_workspace + flip_elems(p),
                             conv2d_tc_mma_workspace_elems(&f), stream, msg);
    return conv2d_tc_tma(&f, d_dy, d_wf, d_dx, stream, msg);
}

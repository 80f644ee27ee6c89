/* Step 10: what the GPU versions 10a (conv_backward_10a.cu) and 10b
 * (conv_backward_10b_*.cu) share on the host: the problem as their kernels
 * read it (each tensor's strides, whatever the layout) and the checks every
 * launcher makes before its first CUDA call, which 10c
 * (conv_backward_10c.cu) makes too. */
#ifndef CONV_BACKWARD_SHAPE_CUH
#define CONV_BACKWARD_SHAPE_CUH

#include <limits.h>

#include "conv_params.h"
#include "conv_status.h"

/* The problem as the kernels read it, by value. Each tensor's four strides
 * are those of its indices in the order (n, c, h, w) for x and dx,
 * (k, c, r, s) for w and dw and (n, k, oh, ow) for dy: whatever the layout,
 * element (a, b, c, d) lives at a*s[0] + b*s[1] + c*s[2] + d*s[3]. */
typedef struct {
    int n, c, h, w, k, r, s, p, q;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    long long xs[4], ws[4], ys[4];
    int nhwc; /* the order of the elements in memory: 0 NCHW/KCRS, 1 NHWC/RSCK */
} bwd_shape;

/* An offset function of conv_params.h is linear in the indices, so the
 * offset of each unit index is that index's stride. */
static inline void strides_of(size_t (*offset)(const conv_params *, int, int, int, int),
                              const conv_params *p, long long st[4])
{
    st[0] = (long long)offset(p, 1, 0, 0, 0);
    st[1] = (long long)offset(p, 0, 1, 0, 0);
    st[2] = (long long)offset(p, 0, 0, 1, 0);
    st[3] = (long long)offset(p, 0, 0, 0, 1);
}

static inline bwd_shape make_shape(const conv_params *p)
{
    bwd_shape sh;
    sh.n = p->n, sh.c = p->c, sh.h = p->h, sh.w = p->w, sh.k = p->k, sh.r = p->r, sh.s = p->s;
    sh.p = conv_out_h(p), sh.q = conv_out_w(p);
    sh.pad_h = p->pad_h, sh.pad_w = p->pad_w, sh.stride_h = p->stride_h, sh.stride_w = p->stride_w;
    sh.dil_h = p->dil_h, sh.dil_w = p->dil_w;
    strides_of(conv_input_offset, p, sh.xs);
    strides_of(conv_filter_offset, p, sh.ws);
    strides_of(conv_output_offset, p, sh.ys);
    sh.nhwc = p->layout == CONV_LAYOUT_NHWC;
    return sh;
}

/* The problem's half of those checks: a valid problem whose window
 * coordinates fit an int (the launchers' checks without pointers, which the
 * version checks of conv_backward.h start with). */
static inline conv_status bwd_check_problem(const conv_params *p, conv_msg *msg)
{
    if (p == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: p is NULL");
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if ((long long)p->h + 2LL * p->pad_h + (long long)p->dil_h * p->r > INT_MAX ||
        (long long)p->w + 2LL * p->pad_w + (long long)p->dil_w * p->s > INT_MAX)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "unsupported image (--h, --w, --pad, --dilation): a window coordinate "
                         "exceeds 2^31-1");
    return CONV_OK;
}

/* Everything both launchers check before touching the device: the pointers,
 * the problem, and window coordinates that fit an int. */
static inline conv_status bwd_validate(const conv_params *p, const float *a, const char *a_name,
                                       const float *b, const char *b_name, const float *out,
                                       const char *out_name, conv_msg *msg)
{
    conv_status st = conv_check_pointers(a, a_name, b, b_name, out, out_name, msg);
    return st == CONV_OK ? bwd_check_problem(p, msg) : st;
}

#endif /* CONV_BACKWARD_SHAPE_CUH */

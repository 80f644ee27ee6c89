/* Step 08's kernels share the GEMM view of an NHWC convolution (as 6f):
 * C[m][k] = sum_j A[m][j] B[j][k] with m = (n*P + p)*Q + q, j = (r*S + s)*C + c,
 * A[m][j] = x[n][p*sh - ph + r*dh][q*sw - pw + s*dw][c] (0 outside the image),
 * B[j][k] = w[j*K + k], C[m][k] = y[m*K + k]. What their loaders need of it. */
#ifndef TC_GEOM_CUH
#define TC_GEOM_CUH

#include "conv_params.h"

typedef struct {
    int c, h, w, r, s, p, q, k;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    long long m; /* N*P*Q */
    int j;       /* R*S*C */
} tc_geom;

static inline tc_geom tc_make_geom(const conv_params *p)
{
    tc_geom g;
    g.c = p->c, g.h = p->h, g.w = p->w, g.r = p->r, g.s = p->s, g.k = p->k;
    g.p = conv_out_h(p), g.q = conv_out_w(p);
    g.pad_h = p->pad_h, g.pad_w = p->pad_w, g.stride_h = p->stride_h, g.stride_w = p->stride_w;
    g.dil_h = p->dil_h, g.dil_w = p->dil_w;
    g.m = (long long)p->n * g.p * g.q;
    g.j = p->r * p->s * p->c;
    return g;
}

#endif /* TC_GEOM_CUH */

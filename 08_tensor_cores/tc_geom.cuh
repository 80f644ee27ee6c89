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

#ifdef __CUDACC__
/* Where a column j of A lies in the filter: channel c of tap (r, s), and
 * what that tap adds to a row's (h0, w0) and px: dh = r dil_h, dw = s dil_w
 * and off = (dh W + dw) C + c elements (of x, or of its FP16 copy). */
typedef struct {
    int c, dh, dw;
    long long off;
} tc_tap;

/* t moved on by n columns, tap after tap, with additions only (as 6f's
 * (c, s, r)): c past C is the next s, s past S the next r. */
__device__ __forceinline__ void tap_advance(tc_tap &t, int n, const tc_geom &g)
{
    t.c += n, t.off += n;
    while (t.c >= g.c) {
        t.c -= g.c, t.dw += g.dil_w;
        t.off += (long long)(g.dil_w - 1) * g.c; /* + dil_w C for s + 1, - C for c */
        if (t.dw == g.s * g.dil_w) {             /* s = S: r + 1, s = 0 */
            t.dw = 0, t.dh += g.dil_h;
            t.off += ((long long)g.dil_h * g.w - (long long)g.s * g.dil_w) * g.c;
        }
    }
}

/* In NCHW (8b and 8c), A's columns go j = (c R + r) S + s: column j is
 * channel c at tap (r, s), dh = r dil_h, dw = s dil_w, and off = c H W + dh
 * W + dw elements of x. From j by division (a 1x1 filter: c = j). */
__device__ __forceinline__ tc_tap tap_nchw(int j, const tc_geom &g)
{
    tc_tap t;
    const int rs = g.r * g.s;
    t.c = rs == 1 ? j : j / rs;
    const int tap = j - t.c * rs, r = g.s == 1 ? tap : tap / g.s;
    t.dh = r * g.dil_h, t.dw = (tap - r * g.s) * g.dil_w;
    t.off = (long long)t.c * g.h * g.w + (long long)t.dh * g.w + t.dw;
    return t;
}
#endif

#endif /* TC_GEOM_CUH */

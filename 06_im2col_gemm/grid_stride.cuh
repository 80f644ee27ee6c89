/* Step 06: what the grid-stride kernels of this step share (im2col and col2im
 * in im2col.cu, the NCHW permutation in conv_im2col_gemm.cu, the device fill in
 * gemm_check.cu): the launch size, a division that stays 32-bit whenever it
 * can, and the convolution geometry passed to the kernels by value.
 *
 * All these kernels are grid-stride loops (MXNet's CUDA_KERNEL_LOOP) over a
 * 64-bit index: the lab problem's column buffer has 1.47e9 floats (5.9 GB), and
 * a larger batch passes 2^31. Index decomposition uses 32-bit division whenever
 * both operands fit, which is almost always (a 64-bit division is a ~70
 * instruction subroutine; the fast path is ~20). */
#ifndef GRID_STRIDE_CUH
#define GRID_STRIDE_CUH

#include <stddef.h>

#include "conv_params.h"

#define GS_THREADS    256
#define GS_MAX_BLOCKS 65536

/* Blocks of GS_THREADS for `total` items, at most GS_MAX_BLOCKS (the loop
 * strides over the rest). */
static inline unsigned grid_for(size_t total)
{
    size_t blocks = (total + GS_THREADS - 1) / GS_THREADS;
    return (unsigned)(blocks < GS_MAX_BLOCKS ? blocks : GS_MAX_BLOCKS);
}

/* q = a / b, r = a % b, through 32-bit division when both fit. */
__device__ __forceinline__ size_t divmod(size_t a, size_t b, size_t *r)
{
    if ((a | b) <= 0xffffffffu) {
        unsigned q = (unsigned)a / (unsigned)b;
        *r = (unsigned)a - q * (unsigned)b;
        return q;
    }
    size_t q = a / b;
    *r = a - q * b;
    return q;
}

/* Conv geometry for the kernels, all in one by-value struct. */
typedef struct {
    int n, c, h, w, k, r, s, p, q;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
} geom;

static inline geom make_geom(const conv_params *p)
{
    geom g;
    g.n = p->n, g.c = p->c, g.h = p->h, g.w = p->w, g.k = p->k, g.r = p->r, g.s = p->s;
    g.p = conv_out_h(p), g.q = conv_out_w(p);
    g.pad_h = p->pad_h, g.pad_w = p->pad_w, g.stride_h = p->stride_h, g.stride_w = p->stride_w;
    g.dil_h = p->dil_h, g.dil_w = p->dil_w;
    return g;
}

#endif /* GRID_STRIDE_CUH */

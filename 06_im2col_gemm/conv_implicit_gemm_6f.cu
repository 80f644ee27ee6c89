/* Step 06, 6f: implicit GEMM - convolution without the column buffer (the
 * handbook's "GEMM convolution without extra storage"). What it adds to 6e
 * (gemm_6e.cu): the same kernel body (dbuf_gemm_body, gemm_dbuf.cuh), but its
 * A-tile loader computes where A[m][j] lives in the NHWC image instead of
 * reading a column buffer written by im2col. NHWC only: its (r, s, c) order
 * makes 4 consecutive k 4 contiguous channels.
 *
 * Launch: 6e's shape, DBUF_BM x DBUF_BN = 64 x 128 outputs (pixels x output
 * channels) per block of DBUF_THREADS = 128 threads, a 1D grid of
 * ceil(N*P*Q / 64) * ceil(K / 128) blocks (gemm_grid_blocks). */
#include "conv_im2col_gemm.h"

#include <stdint.h>

#include "conv_cuda.h"
#include "gemm_dbuf.cuh"

/* 6f: the same kernel, A = the virtual column matrix of an NHWC image:
 * A[(n*P + p)*Q + q][(r*S + s)*C + c] = x[n][p*sh - ph + r*dh][q*sw - pw + s*dw][c].
 * Each thread computes its row's (n, p, q) once; along K it steps (c, s, r)
 * by additions. The column buffer's write and re-read (2 * 4*N*P*Q*C*R*S
 * bytes) disappear; x's re-reads (R*S times each element) hit L1/L2. */
template <bool VEC>
__global__ void __launch_bounds__(DBUF_THREADS, DBUF_MINB)
    conv2d_implicit_gemm_kernel(int m, int n, int k, const float *__restrict__ x,
                                const float *__restrict__ w, float *__restrict__ y, int tiles_n,
                                implicit_geom g)
{
    dbuf_gemm_body<DBUF_BM, DBUF_TM, DBUF_WR, DBUF_BK, VEC, true>(m, n, k, x, w, y, tiles_n, g);
}

/* 6f's launcher: checks, then the GEMM view of the NHWC convolution. */
extern "C" conv_status conv2d_implicit_gemm(const conv_params *p, const float *d_x,
                                            const float *d_w, float *d_y, cudaStream_t stream,
                                            conv_msg *msg)
{
    conv_status st = conv_params_validate_layout(
        p, CONV_LAYOUT_NHWC,
        "6f implicit GEMM supports --layout nhwc only (x[N][H][W][C], w[R][S][C][K]); got nchw",
        msg);
    if (st != CONV_OK)
        return st;
    st = conv_check_pointers(d_x, "d_x", d_w, "d_w", d_y, "d_y", msg);
    if (st != CONV_OK)
        return st;
    long long P = conv_out_h(p), Q = conv_out_w(p);
    long long m = (long long)p->n * P * Q, k = (long long)p->c * p->r * p->s, n = p->k;
    /* Vector path: 4 consecutive channels are contiguous and 16-byte aligned. */
    int vec = p->c % 4 == 0 && p->k % 4 == 0 && ((uintptr_t)d_x % 16) == 0 &&
              ((uintptr_t)d_w % 16) == 0 && ((uintptr_t)d_y % 16) == 0;
    /* 6e's checks: the same kernel body, tile and grid */
    const gemm_launch l = gemm_prepare(GEMM_6E_DBUF, m, n, k, d_x, d_w, d_y,
                                       vec ? (const void *)conv2d_implicit_gemm_kernel<true>
                                           : (const void *)conv2d_implicit_gemm_kernel<false>,
                                       "conv2d_implicit_gemm_kernel", DBUF_THREADS, msg);
    if (l.status != CONV_OK)
        return l.status;
    implicit_geom g;
    g.c = p->c, g.h = p->h, g.w = p->w, g.r = p->r, g.s = p->s, g.p = (int)P, g.q = (int)Q;
    g.pad_h = p->pad_h, g.pad_w = p->pad_w, g.stride_h = p->stride_h, g.stride_w = p->stride_w;
    g.dil_h = p->dil_h, g.dil_w = p->dil_w;
    if (vec)
        conv2d_implicit_gemm_kernel<true><<<l.blocks, DBUF_THREADS, 0, stream>>>(
            (int)m, (int)n, (int)k, d_x, d_w, d_y, l.tiles_n, g);
    else
        conv2d_implicit_gemm_kernel<false><<<l.blocks, DBUF_THREADS, 0, stream>>>(
            (int)m, (int)n, (int)k, d_x, d_w, d_y, l.tiles_n, g);
    CONV_CHECK_LAUNCH("conv2d_implicit_gemm_kernel", msg);
    return CONV_OK;
}

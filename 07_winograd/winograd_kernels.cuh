/* Step 07's kernels shared by the non-fused pipeline (winograd.cu) and the
 * fused kernel (winograd_fused_7c.cu): the problem's strides and tiling, the 2D
 * transforms by tile size, and stage 1, the filter transform. Versions: 7a, 7b,
 * 7c. */
#ifndef WINOGRAD_KERNELS_CUH
#define WINOGRAD_KERNELS_CUH

#include "conv_params.h"
#include "winograd_transforms.h"

#define WINO_THREADS 256

/* Element strides of x, w and y in the problem's layout, and the tiling. */
typedef struct {
    long long xs_n, xs_c, xs_h, xs_w; /* x[n][c][h][w] or x[n][h][w][c] */
    long long ws_k, ws_c, ws_r, ws_s; /* w[k][c][r][s] or w[r][s][c][k] */
    long long ys_n, ys_k, ys_p, ys_q; /* y[n][k][p][q] or y[n][p][q][k] */
    int c, h, w, k, pad_h, pad_w, p, q;
    int nhwc;            /* 1: V[e] is T x C, M[e] T x K (tile-major); 0: C x T, K x T */
    int tiles_w;         /* output tiles per tile row */
    long long tiles_img; /* output tiles per image */
    long long tiles;     /* T: output tiles of the batch */
} wino_geom;

static inline wino_geom make_geom(const conv_params *p, int m)
{
    wino_geom g;
    const long long C = p->c, H = p->h, W = p->w, K = p->k;
    g.c = p->c, g.h = p->h, g.w = p->w, g.k = p->k;
    g.pad_h = p->pad_h, g.pad_w = p->pad_w;
    g.p = conv_out_h(p), g.q = conv_out_w(p);
    const long long P = g.p, Q = g.q;
    g.nhwc = p->layout == CONV_LAYOUT_NHWC;
    if (g.nhwc) {
        g.xs_n = H * W * C, g.xs_h = W * C, g.xs_w = C, g.xs_c = 1;
        g.ws_r = 3 * C * K, g.ws_s = C * K, g.ws_c = K, g.ws_k = 1;
        g.ys_n = P * Q * K, g.ys_p = Q * K, g.ys_q = K, g.ys_k = 1;
    } else {
        g.xs_n = C * H * W, g.xs_c = H * W, g.xs_h = W, g.xs_w = 1;
        g.ws_k = C * 9, g.ws_c = 9, g.ws_r = 3, g.ws_s = 1;
        g.ys_n = K * P * Q, g.ys_k = P * Q, g.ys_p = Q, g.ys_q = 1;
    }
    g.tiles_w = (g.q + m - 1) / m;
    g.tiles_img = (long long)((g.p + m - 1) / m) * g.tiles_w;
    g.tiles = g.tiles_img * p->n;
    return g;
}

/* The 2D transforms of tile size M (2 or 4). */
template <int M> __device__ __forceinline__ void filter_2d(const float *g, float *u)
{
    if (M == 4)
        wino_f4_filter_2d(g, u);
    else
        wino_f2_filter_2d(g, u);
}

template <int M> __device__ __forceinline__ void input_2d(const float *d, float *v)
{
    if (M == 4)
        wino_f4_input_2d(d, v);
    else
        wino_f2_input_2d(d, v);
}

template <int M> __device__ __forceinline__ void output_2d(const float *mt, float *y)
{
    if (M == 4)
        wino_f4_output_2d(mt, y);
    else
        wino_f2_output_2d(mt, y);
}

/* Stage 1: U[e][k][c] = (G g_kc G^T)[e] (or U[e][c][k] with CK), one thread
 * per (k, c). */
template <int M, bool CK>
__global__ void __launch_bounds__(WINO_THREADS)
    wino_filter_kernel(const float *__restrict__ w, float *__restrict__ u, wino_geom g)
{
    constexpr int A2 = (M + 2) * (M + 2);
    const long long total = (long long)g.k * g.c;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int k = (int)(i / g.c), c = (int)(i % g.c);
        const float *wk = w + k * g.ws_k + c * g.ws_c;
        float taps[9], ut[A2];
#pragma unroll
        for (int r = 0; r < 3; ++r)
#pragma unroll
            for (int s = 0; s < 3; ++s)
                taps[r * 3 + s] = wk[r * g.ws_r + s * g.ws_s];
        filter_2d<M>(taps, ut);
        /* U[e] is K x C, row-major (the NCHW GEMM's A), or C x K with CK (the
         * NHWC GEMM's B, and the fused kernel's) */
        const long long at = CK ? (long long)c * g.k + k : i;
#pragma unroll
        for (int e = 0; e < A2; ++e)
            u[e * total + at] = ut[e];
    }
}

/* Blocks of WINO_THREADS for `total` threads' work; grid-stride beyond 2^20
 * blocks. */
static inline unsigned grid_for(long long total)
{
    const long long blocks = (total + WINO_THREADS - 1) / WINO_THREADS;
    return (unsigned)(blocks < (1LL << 20) ? blocks : (1LL << 20)); /* grid-stride beyond */
}

#endif /* WINOGRAD_KERNELS_CUH */

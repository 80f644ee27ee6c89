/* Step 10, version 10c: dgrad and wgrad on TF32 tensor cores (mma.sync
 * m16n8k8, as step 08's 8b), each an implicit GEMM on NHWC tensors.
 *   dgrad: dx[pixel][c] = sum over (tap, k) of dy[the pixel's output][k] w[tap][c][k]:
 *          M = N*H*W, N = C, K = K*R*S. With a stride, the pixels of one phase,
 *          ((ih + pad_h) mod stride_h, (iw + pad_w) mod stride_w), are reached
 *          by the same taps; each phase is a GEMM of its own (blockIdx.z) over
 *          its taps alone, so no product is a product by zero.
 *   wgrad: dw[tap][c][k] = sum over (n, oh, ow) of dy[n][oh][ow][k] x[..][c]:
 *          M = K, N = C*R*S, K = N*P*Q. The long sum is split over blockIdx.z
 *          into a workspace, whose parts a second kernel adds in a fixed order:
 *          the same result on every run, without atomics.
 * A dgrad block computes 64 x 64 outputs with 4 warps of 32 x 32, a wgrad
 * block 128 x 128 with 8 warps of 64 x 32, in steps of 16 along the sum:
 * each thread loads its part of step i + 1 into registers
 * (guarded loads of 4 floats where the channel counts allow, else of one)
 * while the warps multiply step i from shared memory, then stores it into
 * the other of two buffers, rounded to TF32 (cvt.rna).
 * TF32 needs compute capability 8.0: the device code is compiled for it only
 * and the launchers refuse older GPUs. Lesson: docs/10_backward.md, section
 * "Tensor cores for the gradients". */
#include "conv_backward.h"

#include <limits.h>
#include <stdint.h>

#include "conv_backward_shape.cuh"
#include "conv_cuda.h"
#include "conv_device.h"

#define BWD_BM      64 /* a block's rows of the GEMM */
#define BWD_BN      64 /* its columns */
#define BWD_BK      16 /* a step along the sum */
#define BWD_THREADS 128
/* the elements of A (and of B) a thread loads per step */
#define BWD_PER (BWD_BM * BWD_BK / BWD_THREADS)
/* A tile in shared memory: dgrad's as tile[row][k], rows of BWD_BK + 4 (its
 * loads run along k); wgrad's as tile[k][row], rows of WG_BM + 8 below (its
 * loads run along the rows). Both pads make the fragment reads below
 * conflict-free. */
#define BWD_LD_ROW   (BWD_BK + 4)
#define BWD_TILE     (BWD_BM * BWD_LD_ROW)
#define BWD_MAX_GRID 65535 /* gridDim.y and gridDim.z */
/* wgrad's block: 128 x 128 outputs, 8 warps of 64 x 32 (its M = K and N =
 * C*R*S are small and its sum long, so fewer, larger tiles pay: each value
 * brought into shared memory serves twice as many products) */
#define WG_BM      128
#define WG_THREADS 256
#define WG_PER     (WG_BM * BWD_BK / WG_THREADS) /* elements of A (and B) a thread loads per step */
#define WG_LD      (WG_BM + 8)                   /* a tile[k][row]: rows of WG_BM + 8 */

/* What both kernels read of the problem, by value. */
typedef struct {
    int n, c, h, w, k, r, s, p, q;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    int period_h, period_w; /* taps r and r + period_h reach the same phase */
    long long crs, npq;     /* C*R*S and N*P*Q */
    long long chunk;        /* wgrad: the terms of one split, a multiple of BWD_BK */
} tc_shape;

/* A row of dgrad's GEMM, a pixel of the block's phase: i, j its row and column
 * within the phase (i < 0: past the phase's last pixel), dy_off where
 * dy[n][i][j][0] would be, dx_off where dx[n][ih][iw][0] is. */
typedef struct {
    long long dy_off, dx_off;
    int i, j;
} tc_pixel;

#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned to_tf32(float v)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
    return r;
}

/* c += a b for one warp: a 16 x 8 (a0..a3), b 8 x 8 (b0, b1), c 16 x 8 (c0..c3);
 * lane 4g + t holds a[g][t], a[g+8][t], a[g][t+4], a[g+8][t+4], b[t][g],
 * b[t+4][g], c[g][2t], c[g][2t+1], c[g+8][2t], c[g+8][2t+1]. */
__device__ __forceinline__ void mma_tf32(float c[4], const unsigned a[4], const unsigned b[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* One step from shared memory: the warp's 16 MI x 8 NJ outputs (rows wm..,
 * columns wn..) += A[rows][16] B[16][columns]. Element (row, k) of a tile lies at
 * row * rs + k * ks (rs, ks: the tile's layout). */
template <int MI, int NJ>
__device__ __forceinline__ void mma_step(float acc[MI][NJ][4], const unsigned *as,
                                         const unsigned *bs, int wm, int wn, int lane, int rs,
                                         int ks)
{
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int k8 = 0; k8 < BWD_BK; k8 += 8) {
        unsigned a[MI][4], b[NJ][2];
#pragma unroll
        for (int i = 0; i < MI; ++i) {
            const unsigned *p = as + (wm + 16 * i + g) * rs + (k8 + t) * ks;
            a[i][0] = p[0], a[i][1] = p[8 * rs], a[i][2] = p[4 * ks], a[i][3] = p[8 * rs + 4 * ks];
        }
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            const unsigned *p = bs + (wn + 8 * j + g) * rs + (k8 + t) * ks;
            b[j][0] = p[0], b[j][1] = p[4 * ks];
        }
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
                mma_tf32(acc[i][j], a[i], b[j]);
    }
}

/* A thread's PER loaded elements into a tile, rounded to TF32: its loads of
 * V consecutive elements each, load e at first + e * step (with V = 4 one
 * 16-byte store each: first and step are multiples of 4). */
template <int V, int PER>
__device__ __forceinline__ void store_tf32(unsigned *tile, const float v[PER], int first, int step)
{
#pragma unroll
    for (int e = 0; e < PER / V; ++e) {
        if (V == 4) {
            const uint4 q = make_uint4(to_tf32(v[4 * e]), to_tf32(v[4 * e + 1]),
                                       to_tf32(v[4 * e + 2]), to_tf32(v[4 * e + 3]));
            *(uint4 *)(tile + first + e * step) = q;
        } else {
#pragma unroll
            for (int i = 0; i < V; ++i)
                tile[first + e * step + i] = to_tf32(v[e * V + i]);
        }
    }
}
#endif

/* V floats from src (V = 4: one 16-byte load), or zeros where !ok. */
template <int V> __device__ __forceinline__ void load_vec(float *v, const float *src, bool ok)
{
    if (V == 4) {
        const float4 f = ok ? __ldg((const float4 *)src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
    } else {
        v[0] = ok ? __ldg(src) : 0.0f;
    }
}

/* The first position >= 0 of a phase along one axis: (pos + pad) % stride == ph. */
__device__ __forceinline__ int phase_first(int ph, int pad, int stride)
{
    return ((ph - pad) % stride + stride) % stride;
}

/* The first tap r of a phase (r dil = ph mod stride), or taps if it has none. */
__device__ __forceinline__ int phase_tap(int ph, int taps, int dil, int stride)
{
    for (int r = 0; r < taps && r < stride; ++r)
        if ((long long)r * dil % stride == ph)
            return r;
    return taps;
}

/* What a dgrad block knows of its phase: its first pixel (ih0, iw0), its
 * first taps (r0, s0) and their count along s (ns), the steps along K per
 * tap (ktiles), the block's first channel c0. */
typedef struct {
    int ih0, iw0, r0, s0, ns, ktiles, c0;
} tc_phase;

/* dgrad's step st into registers: tap number st / ktiles of the phase, the
 * 16 output channels from 16 (st % ktiles); this thread's columns kk ..
 * kk + V - 1 of them, rows row + e RS of A (pixels) and of B (channels). */
template <int V>
__device__ __forceinline__ void
dgrad_load(float va[BWD_PER], float vb[BWD_PER], const float *__restrict__ dy,
           const float *__restrict__ w, const tc_shape &g, const tc_phase &f, const tc_pixel *pix,
           int st, int kk, int row)
{
    const int tap = st / f.ktiles, k = (st % f.ktiles) * BWD_BK + kk;
    const int r = f.r0 + g.period_h * (tap / f.ns), s = f.s0 + g.period_w * (tap % f.ns);
    /* the output of pixel (i, j) is (ohb + i, owb + j): exact divisions, the phase's taps */
    const int ohb = (f.ih0 + g.pad_h - r * g.dil_h) / g.stride_h;
    const int owb = (f.iw0 + g.pad_w - s * g.dil_w) / g.stride_w;
    const long long tap_off = ((long long)ohb * g.q + owb) * g.k + k;
    const long long w_off = ((long long)(r * g.s + s) * g.c + f.c0 + row) * g.k + k;
    constexpr int RS = BWD_THREADS * V / BWD_BK;
#pragma unroll
    for (int e = 0; e < BWD_PER / V; ++e) {
        const tc_pixel px = pix[row + RS * e];
        const unsigned oh = ohb + px.i, ow = owb + px.j;
        const bool ok = px.i >= 0 && oh < (unsigned)g.p && ow < (unsigned)g.q && k < g.k;
        load_vec<V>(va + V * e, dy + px.dy_off + tap_off, ok);
        load_vec<V>(vb + V * e, w + w_off + (long long)RS * e * g.k,
                    f.c0 + row + RS * e < g.c && k < g.k);
    }
}

/* dgrad, phase blockIdx.z = ph stride_w + pw: pixels 64 blockIdx.x .. of the
 * phase by channels 64 blockIdx.y .., a sum over the phase's taps (outer)
 * and K in steps of 16 (inner). */
template <int V>
__global__ void __launch_bounds__(BWD_THREADS)
    conv2d_backward_data_tf32_kernel(const float *__restrict__ dy, const float *__restrict__ w,
                                     float *__restrict__ dx, tc_shape g)
{
#if __CUDA_ARCH__ >= 800
    __shared__ __align__(16) unsigned tiles[2][2][BWD_TILE]; /* [buffer][A, B] */
    __shared__ tc_pixel pix[BWD_BM];
    const int ph = (int)blockIdx.z / g.stride_w, pw = (int)blockIdx.z % g.stride_w;
    tc_phase f;
    f.ih0 = phase_first(ph, g.pad_h, g.stride_h), f.iw0 = phase_first(pw, g.pad_w, g.stride_w);
    const int hp = f.ih0 < g.h ? (g.h - 1 - f.ih0) / g.stride_h + 1 : 0; /* the phase's rows */
    const int wp = f.iw0 < g.w ? (g.w - 1 - f.iw0) / g.stride_w + 1 : 0; /* and columns */
    const long long m_all = (long long)g.n * hp * wp, m0 = (long long)blockIdx.x * BWD_BM;
    if (m0 >= m_all)
        return; /* the whole block: this phase has fewer pixels than the grid's largest */
    const int tid = threadIdx.x;
    /* the phase's taps: r0, r0 + period_h, ... (nr of them), likewise s */
    f.r0 = phase_tap(ph, g.r, g.dil_h, g.stride_h), f.s0 = phase_tap(pw, g.s, g.dil_w, g.stride_w);
    const int nr = f.r0 < g.r ? (g.r - 1 - f.r0) / g.period_h + 1 : 0;
    f.ns = f.s0 < g.s ? (g.s - 1 - f.s0) / g.period_w + 1 : 0;
    f.ktiles = (g.k + BWD_BK - 1) / BWD_BK, f.c0 = blockIdx.y * BWD_BN;
    const int steps = nr * f.ns * f.ktiles;
    if (tid < BWD_BM) { /* the table of the block's pixels */
        tc_pixel e = {0, 0, -1, 0};
        const long long m = m0 + tid;
        if (m < m_all) {
            const long long n = m / ((long long)hp * wp);
            const int rem = (int)(m % ((long long)hp * wp));
            e.i = rem / wp, e.j = rem % wp;
            e.dy_off = ((n * g.p + e.i) * g.q + e.j) * g.k;
            e.dx_off = ((n * g.h + f.ih0 + (long long)g.stride_h * e.i) * g.w + f.iw0 +
                        (long long)g.stride_w * e.j) *
                       g.c;
        }
        pix[tid] = e;
    }
    __syncthreads();
    /* this thread's loads: columns kk .., rows row + e RS */
    constexpr int RS = BWD_THREADS * V / BWD_BK;
    const int kk = tid % (BWD_BK / V) * V, row = tid / (BWD_BK / V);
    const int warp = tid / 32, lane = tid % 32, wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    float va[BWD_PER], vb[BWD_PER], acc[2][4][4] = {};
    if (steps > 0) {
        dgrad_load<V>(va, vb, dy, w, g, f, pix, 0, kk, row);
        store_tf32<V, BWD_PER>(tiles[0][0], va, row * BWD_LD_ROW + kk, RS * BWD_LD_ROW);
        store_tf32<V, BWD_PER>(tiles[0][1], vb, row * BWD_LD_ROW + kk, RS * BWD_LD_ROW);
    }
    __syncthreads();
    for (int st = 0; st < steps; ++st) {
        const bool more = st + 1 < steps;
        if (more) /* step st + 1's loads in flight while the tensor cores work */
            dgrad_load<V>(va, vb, dy, w, g, f, pix, st + 1, kk, row);
        mma_step<2, 4>(acc, tiles[st & 1][0], tiles[st & 1][1], wm, wn, lane, BWD_LD_ROW, 1);
        if (more) {
            store_tf32<V, BWD_PER>(tiles[(st + 1) & 1][0], va, row * BWD_LD_ROW + kk,
                                   RS * BWD_LD_ROW);
            store_tf32<V, BWD_PER>(tiles[(st + 1) & 1][1], vb, row * BWD_LD_ROW + kk,
                                   RS * BWD_LD_ROW);
        }
        __syncthreads();
    }
    /* c0, c1: pixel g of the tile, channels 2t, 2t + 1; c2, c3: pixel g + 8.
     * A phase without taps stores zeros. */
    const int gq = lane >> 2, tq = lane & 3;
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const tc_pixel px = pix[wm + 16 * i + 8 * h + gq];
            if (px.i < 0)
                continue;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = f.c0 + wn + 8 * j + 2 * tq;
                if (c < g.c)
                    dx[px.dx_off + c] = acc[i][j][2 * h];
                if (c + 1 < g.c)
                    dx[px.dx_off + c + 1] = acc[i][j][2 * h + 1];
            }
        }
#endif
}

/* What a wgrad thread loads: columns col .. col + V - 1 of both tiles
 * (output channels k0 + col .. of A; columns j0 + col .. of B: tap offsets
 * dh, dw and channels c ..), terms kt + 2 V e of each step, below t1. */
typedef struct {
    long long t1;
    int col, kt, k0, c, dh, dw;
    bool k_ok, j_ok;
} tc_wload;

/* A term of wgrad's sum: its number t = (n P + oh) Q + ow, and n, oh, ow. */
typedef struct {
    long long t, n;
    int oh, ow;
} tc_term;

/* wgrad's next step into registers: A = dy^T, B = the input under tap (r, s);
 * u, this thread's first term of the step, leaves as the next step's (16 on). */
template <int V>
__device__ __forceinline__ void
wgrad_load(float va[WG_PER], float vb[WG_PER], const float *__restrict__ x,
           const float *__restrict__ dy, const tc_shape &g, const tc_wload &l, tc_term &u)
{
    constexpr int KS = WG_THREADS * V / WG_BM; /* 2 V terms between a thread's loads */
#pragma unroll
    for (int e = 0; e < WG_PER / V; ++e) {
        const unsigned ih = u.oh * g.stride_h + l.dh, iw = u.ow * g.stride_w + l.dw;
        load_vec<V>(va + V * e, dy + u.t * g.k + l.k0 + l.col, u.t < l.t1 && l.k_ok);
        load_vec<V>(vb + V * e, x + ((u.n * g.h + ih) * g.w + iw) * g.c + l.c,
                    u.t < l.t1 && l.j_ok && ih < (unsigned)g.h && iw < (unsigned)g.w);
        u.t += KS; /* the thread's next term: ow + KS, carried */
        for (u.ow += KS; u.ow >= g.q; ++u.oh)
            u.ow -= g.q;
        for (; u.oh >= g.p; ++u.n)
            u.oh -= g.p;
    }
}

/* wgrad, split blockIdx.z: output channels 128 blockIdx.y .. by columns
 * 128 blockIdx.x .. of (r, s, c), a sum over the terms (n, oh, ow) of
 * [z chunk, (z + 1) chunk), into part z of out (dw itself for one split). */
template <int V>
__global__ void __launch_bounds__(WG_THREADS)
    conv2d_backward_filter_tf32_kernel(const float *__restrict__ x, const float *__restrict__ dy,
                                       float *__restrict__ out, tc_shape g)
{
#if __CUDA_ARCH__ >= 800
    __shared__ __align__(16) unsigned tiles[2][2][BWD_BK * WG_LD];
    const int tid = threadIdx.x;
    const long long j0 = (long long)blockIdx.x * WG_BM;
    const long long t0 = blockIdx.z * g.chunk;
    tc_wload l;
    l.t1 = t0 + g.chunk < g.npq ? t0 + g.chunk : g.npq;
    l.col = tid % (WG_BM / V) * V, l.kt = tid / (WG_BM / V), l.k0 = blockIdx.y * WG_BM;
    l.k_ok = l.k0 + l.col < g.k, l.j_ok = j0 + l.col < g.crs;
    const int rs = l.j_ok ? (int)((j0 + l.col) / g.c) : 0; /* the tap, r S + s */
    l.c = (int)((j0 + l.col) % g.c);
    l.dh = (rs / g.s) * g.dil_h - g.pad_h, l.dw = (rs % g.s) * g.dil_w - g.pad_w;
    const long long steps = t0 < l.t1 ? (l.t1 - t0 + BWD_BK - 1) / BWD_BK : 0;
    tc_term u; /* the thread's first term */
    u.t = t0 + l.kt, u.n = u.t / ((long long)g.p * g.q);
    u.oh = (int)(u.t % ((long long)g.p * g.q) / g.q), u.ow = (int)(u.t % g.q);
    /* 8 warps, 2 along K by 4 along C*R*S, each 64 x 32 */
    const int warp = tid / 32, lane = tid % 32, wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
    constexpr int KS = WG_THREADS * V / WG_BM; /* the terms between a thread's loads */
    float va[WG_PER], vb[WG_PER], acc[4][4][4] = {};
    if (steps > 0) {
        wgrad_load<V>(va, vb, x, dy, g, l, u);
        store_tf32<V, WG_PER>(tiles[0][0], va, l.kt * WG_LD + l.col, KS * WG_LD);
        store_tf32<V, WG_PER>(tiles[0][1], vb, l.kt * WG_LD + l.col, KS * WG_LD);
    }
    __syncthreads();
    for (long long st = 0; st < steps; ++st) {
        const bool more = st + 1 < steps;
        if (more)
            wgrad_load<V>(va, vb, x, dy, g, l, u);
        mma_step<4, 4>(acc, tiles[st & 1][0], tiles[st & 1][1], wm, wn, lane, 1, WG_LD);
        if (more) {
            store_tf32<V, WG_PER>(tiles[(st + 1) & 1][0], va, l.kt * WG_LD + l.col, KS * WG_LD);
            store_tf32<V, WG_PER>(tiles[(st + 1) & 1][1], vb, l.kt * WG_LD + l.col, KS * WG_LD);
        }
        __syncthreads();
    }
    /* c0..c3: output channel g (c2, c3: g + 8), columns 2t, 2t + 1; column
     * jj of (r, s, c) and channel k at jj K + k, as in dw[r][s][c][k] */
    float *part = out + blockIdx.z * g.crs * g.k;
    const int gq = lane >> 2, tq = lane & 3;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int jt = 0; jt < 4; ++jt)
#pragma unroll
            for (int v = 0; v < 4; ++v) {
                const int k = l.k0 + wm + 16 * i + gq + 8 * (v >> 1);
                const long long jj = j0 + wn + 8 * jt + 2 * tq + (v & 1);
                if (k < g.k && jj < g.crs)
                    part[jj * g.k + k] = acc[i][jt][v];
            }
#endif
}

/* wgrad's second pass: dw[i] = the splits' parts of element i, added in the
 * order 0, 1, .. (the same on every run). */
__global__ void conv2d_backward_filter_reduce_kernel(const float *__restrict__ parts,
                                                     float *__restrict__ dw, long long total,
                                                     int splits)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        float sum = 0.0f;
        for (int z = 0; z < splits; ++z)
            sum += parts[z * total + i];
        dw[i] = sum;
    }
}

/* ---- the launchers ---- */

static int gcd_of(int a, int b)
{
    while (b != 0) {
        const int t = a % b;
        a = b, b = t;
    }
    return a;
}

/* The problem as the kernels read it; wgrad's terms cut into `splits` chunks. */
static tc_shape make_shape(const conv_params *p, int splits)
{
    tc_shape g;
    g.n = p->n, g.c = p->c, g.h = p->h, g.w = p->w, g.k = p->k, g.r = p->r, g.s = p->s;
    g.p = conv_out_h(p), g.q = conv_out_w(p);
    g.pad_h = p->pad_h, g.pad_w = p->pad_w, g.stride_h = p->stride_h, g.stride_w = p->stride_w;
    g.dil_h = p->dil_h, g.dil_w = p->dil_w;
    g.period_h = p->stride_h / gcd_of(p->stride_h, p->dil_h);
    g.period_w = p->stride_w / gcd_of(p->stride_w, p->dil_w);
    g.crs = (long long)p->c * p->r * p->s;
    g.npq = (long long)p->n * g.p * g.q;
    g.chunk = ((g.npq + BWD_BK - 1) / BWD_BK + splits - 1) / splits * BWD_BK;
    return g;
}

/* The problem's half of 10a's and 10b's checks (conv_backward_shape.cuh),
 * and the layout. */
static conv_status check_problem(const conv_params *p, conv_msg *msg)
{
    conv_status st = bwd_check_problem(p, msg);
    if (st != CONV_OK)
        return st;
    if (p->layout != CONV_LAYOUT_NHWC)
        return conv_fail(
            msg, CONV_ERR_UNSUPPORTED,
            "10c takes NHWC tensors only (x[N][H][W][C], w[R][S][C][K]): --layout nhwc");
    return CONV_OK;
}

/* What both launchers check before touching the device: the pointers, then
 * the problem. */
static conv_status validate(const conv_params *p, const float *a, const char *a_name,
                            const float *b, const char *b_name, const float *out,
                            const char *out_name, conv_msg *msg)
{
    conv_status st = conv_check_pointers(a, a_name, b, b_name, out, out_name, msg);
    return st == CONV_OK ? check_problem(p, msg) : st;
}

/* The kernel fits this GPU and can run TF32 here (compute capability 8.0
 * and code compiled for it: conv_tf32_available). */
static conv_status tf32_available(const void *kernel, const char *name, int threads, conv_msg *msg)
{
    conv_status st = conv_kernel_fits(kernel, name, threads, 0, msg);
    return st == CONV_OK ? conv_tf32_available(kernel, "10c", msg) : st;
}

/* dgrad's grid: the largest phase, ceil(H / stride_h) x ceil(W / stride_w)
 * pixels per image, in tiles of BWD_BM; C in tiles of BWD_BN; the phases. */
static void dgrad_grid(const conv_params *p, long long *m_tiles, long long *c_tiles,
                       long long *phases)
{
    const long long hp = (p->h + p->stride_h - 1) / p->stride_h,
                    wp = (p->w + p->stride_w - 1) / p->stride_w;
    *m_tiles = (p->n * hp * wp + BWD_BM - 1) / BWD_BM;
    *c_tiles = (p->c + BWD_BN - 1) / BWD_BN;
    *phases = (long long)p->stride_h * p->stride_w;
}

extern "C" conv_status conv2d_backward_data_tf32_check(const conv_params *p, conv_msg *msg)
{
    conv_status st = check_problem(p, msg);
    if (st != CONV_OK)
        return st;
    long long m_tiles, c_tiles, phases;
    dgrad_grid(p, &m_tiles, &c_tiles, &phases);
    if (m_tiles > INT_MAX || c_tiles > BWD_MAX_GRID || phases > BWD_MAX_GRID ||
        (long long)p->r * p->s * ((p->k + BWD_BK - 1) / BWD_BK) > INT_MAX)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "10c dgrad: %lld pixel tiles, %lld channel tiles or %lld phases (stride "
                         "h x w) exceed the grid",
                         m_tiles, c_tiles, phases);
    return CONV_OK;
}

extern "C" conv_status conv2d_backward_data_tf32(const conv_params *p, const float *d_dy,
                                                 const float *d_w, float *d_dx, cudaStream_t stream,
                                                 conv_msg *msg)
{
    conv_status st = validate(p, d_dy, "d_dy", d_w, "d_w", d_dx, "d_dx", msg);
    if (st == CONV_OK)
        st = conv2d_backward_data_tf32_check(p, msg);
    if (st != CONV_OK)
        return st;
    long long m_tiles, c_tiles, phases;
    dgrad_grid(p, &m_tiles, &c_tiles, &phases);
    /* 16-byte loads along k where K % 4 == 0 and the tensors are aligned */
    const bool vec = p->k % 4 == 0 && ((uintptr_t)d_dy | (uintptr_t)d_w) % 16 == 0;
    void (*kernel)(const float *, const float *, float *, tc_shape) =
        vec ? conv2d_backward_data_tf32_kernel<4> : conv2d_backward_data_tf32_kernel<1>;
    if ((st = tf32_available((const void *)kernel, "conv2d_backward_data_tf32_kernel", BWD_THREADS,
                             msg)) != CONV_OK)
        return st;
    kernel<<<dim3((unsigned)m_tiles, (unsigned)c_tiles, (unsigned)phases), BWD_THREADS, 0,
             stream>>>(d_dy, d_w, d_dx, make_shape(p, 1));
    CONV_CHECK_LAUNCH("conv2d_backward_data_tf32_kernel", msg);
    return CONV_OK;
}

/* Enough blocks to fill every SM twice, each split at least 8 steps (128
 * terms) long, at most 64 splits. */
extern "C" int conv2d_backward_filter_tf32_splits(const conv_params *p, int sm_count)
{
    conv_msg msg;
    if (p == NULL || sm_count < 1 || conv_params_validate(p, &msg) != CONV_OK)
        return 1;
    const tc_shape g = make_shape(p, 1);
    const long long tiles = (g.k + WG_BM - 1) / WG_BM * ((g.crs + WG_BM - 1) / WG_BM);
    const long long most = (g.npq + 8 * BWD_BK - 1) / (8 * BWD_BK);
    long long splits = (2LL * sm_count + tiles - 1) / tiles;
    splits = splits < most ? splits : most;
    return (int)(splits < 1 ? 1 : splits > 64 ? 64 : splits);
}

extern "C" size_t conv2d_backward_filter_tf32_workspace(const conv_params *p, int splits)
{
    conv_msg msg;
    if (p == NULL || splits <= 1 || conv_params_validate(p, &msg) != CONV_OK)
        return 0;
    const size_t part = conv_filter_elems(p) * sizeof(float);
    return part > SIZE_MAX / (size_t)splits ? SIZE_MAX : part * (size_t)splits;
}

extern "C" conv_status conv2d_backward_filter_tf32_check(const conv_params *p, conv_msg *msg)
{
    conv_status st = check_problem(p, msg);
    if (st != CONV_OK)
        return st;
    const long long j_tiles = ((long long)p->c * p->r * p->s + WG_BM - 1) / WG_BM,
                    k_tiles = ((long long)p->k + WG_BM - 1) / WG_BM;
    if (j_tiles > INT_MAX || k_tiles > BWD_MAX_GRID)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "10c wgrad: %lld tiles of C*R*S or %lld of K exceed the grid", j_tiles,
                         k_tiles);
    return CONV_OK;
}

extern "C" conv_status conv2d_backward_filter_tf32(const conv_params *p, const float *d_x,
                                                   const float *d_dy, float *d_dw, int splits,
                                                   float *d_workspace, size_t workspace_bytes,
                                                   cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(p, d_x, "d_x", d_dy, "d_dy", d_dw, "d_dw", msg);
    if (st != CONV_OK)
        return st;
    if (splits < 1 || splits > BWD_MAX_GRID)
        return conv_fail(msg, CONV_ERR_INVALID, "splits must lie in [1, %d], got %d", BWD_MAX_GRID,
                         splits);
    const size_t need = conv2d_backward_filter_tf32_workspace(p, splits);
    if (splits > 1 && d_workspace == NULL)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "invalid pointer: d_workspace is NULL; %d splits need %zu bytes", splits,
                         need);
    if (workspace_bytes < need)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "workspace_bytes (%zu) is below the %zu bytes that %d splits need",
                         workspace_bytes, need, splits);
    if ((st = conv2d_backward_filter_tf32_check(p, msg)) != CONV_OK)
        return st;
    const tc_shape g = make_shape(p, splits);
    const long long j_tiles = (g.crs + WG_BM - 1) / WG_BM, k_tiles = (g.k + WG_BM - 1) / WG_BM;
    /* 16-byte loads along k and c where both are multiples of 4, aligned */
    const bool vec = p->k % 4 == 0 && p->c % 4 == 0 && ((uintptr_t)d_x | (uintptr_t)d_dy) % 16 == 0;
    void (*kernel)(const float *, const float *, float *, tc_shape) =
        vec ? conv2d_backward_filter_tf32_kernel<4> : conv2d_backward_filter_tf32_kernel<1>;
    if ((st = tf32_available((const void *)kernel, "conv2d_backward_filter_tf32_kernel", WG_THREADS,
                             msg)) != CONV_OK ||
        (st = conv_kernel_fits((const void *)conv2d_backward_filter_reduce_kernel,
                               "conv2d_backward_filter_reduce_kernel", CONV_BACKWARD_THREADS, 0,
                               msg)) != CONV_OK)
        return st;
    kernel<<<dim3((unsigned)j_tiles, (unsigned)k_tiles, (unsigned)splits), WG_THREADS, 0, stream>>>(
        d_x, d_dy, splits > 1 ? d_workspace : d_dw, g);
    CONV_CHECK_LAUNCH("conv2d_backward_filter_tf32_kernel", msg);
    if (splits == 1)
        return CONV_OK;
    const long long total = (long long)conv_filter_elems(p);
    long long blocks = (total + CONV_BACKWARD_THREADS - 1) / CONV_BACKWARD_THREADS;
    blocks = blocks < CONV_BACKWARD_MAX_BLOCKS ? blocks : CONV_BACKWARD_MAX_BLOCKS;
    conv2d_backward_filter_reduce_kernel<<<(unsigned)blocks, CONV_BACKWARD_THREADS, 0, stream>>>(
        d_workspace, d_dw, total, splits);
    CONV_CHECK_LAUNCH("conv2d_backward_filter_reduce_kernel", msg);
    return CONV_OK;
}

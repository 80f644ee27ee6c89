/* Step 02: direct convolution on the GPU, one thread per output element.
 *
 * Versions: 2a, 2b (key: launcher <- kernel):
 *   2a conv2d_naive()    <- conv2d_naive_kernel     grid-stride loop over all outputs
 *   2b conv2d_naive_2d() <- conv2d_naive_2d_kernel  16x16 blocks over (q, p), grid z over N*K
 *
 * Napkin math for the lecture problem (N=1, C=6, 768x512, K=6, 6x6): each
 * output reads C*R*S = 216 inputs and 216 weights and does 432 FLOPs: two
 * 4-byte loads per fused multiply-add, 0.25 FLOP per byte loaded. From DRAM
 * the problem needs only ~19 MB for 1 GFLOP (every input is reused by up to
 * K*R*S = 216 outputs, and the caches catch that), so the limit is not DRAM
 * but the load path: an SM issues about one warp-wide load per cycle against
 * four warp-wide FMAs, so two loads per FMA cap these kernels near 1/8 of
 * the FP32 peak before any index arithmetic is counted. */
#include "conv_naive.h"

#include <limits.h>

#include "conv_cuda.h"
#include "conv_device.h"

/* Everything a kernel needs about the problem, passed by value (kernel
 * parameters live in constant memory: every thread reads them for free).
 * Strides are in elements and 64-bit: N*C*H*W may exceed 2^31. */
typedef struct {
    int n, c, h, w, k, r, s, p, q;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    int nhwc;                         /* output index order: 0 = n,k,p,q; 1 = n,p,q,k */
    long long xs_n, xs_c, xs_h, xs_w; /* input strides */
    long long ws_k, ws_c, ws_r, ws_s; /* filter strides */
    long long ys_n, ys_k, ys_p, ys_q; /* output strides */
    long long total;                  /* N*K*P*Q */
} naive_shape;

/* One output element y[n][k][p][q]: the sum over c, r, s of the input under
 * the (strided, dilated) filter window, with zeros outside the image. The
 * loop order c -> r -> s is step 01's. Shared by both kernels. */
__device__ __forceinline__ float conv_point(const float *__restrict__ x,
                                            const float *__restrict__ w, const naive_shape *sh,
                                            int n, int k, int p, int q)
{
    /* excerpt: conv_point loops */
    /* exercise 02-window begin: one output's window, with padding, stride and dilation */
    const float *xn = x + n * sh->xs_n;
    const float *wk = w + k * sh->ws_k;
    const int h0 = p * sh->stride_h - sh->pad_h; /* top-left corner of the window */
    const int w0 = q * sh->stride_w - sh->pad_w;
    float acc = 0.0f;
    for (int c = 0; c < sh->c; ++c) {
        const float *xc = xn + c * sh->xs_c;
        const float *wc = wk + c * sh->ws_c;
        for (int r = 0; r < sh->r; ++r) {
            const int ih = h0 + r * sh->dil_h;
            if (ih < 0 || ih >= sh->h)
                continue; /* a padding row: contributes zero */
            const float *xrow = xc + ih * sh->xs_h;
            const float *wrow = wc + r * sh->ws_r;
            for (int s = 0; s < sh->s; ++s) {
                const int iw = w0 + s * sh->dil_w;
                if (iw >= 0 && iw < sh->w)
                    acc += xrow[iw * sh->xs_w] * wrow[s * sh->ws_s];
            }
        }
    }
    return acc;
    /* exercise 02-window stub
    // TODO(exercise 02-window): return the sum over c, r, s of x[n][c][ih][iw] * w[k][c][r][s],
    // ih = p*stride_h - pad_h + r*dil_h and iw likewise, leaving out the taps outside the
    // image (the padding). Offsets from the strides in sh (sh->xs_n, ..., sh->ws_s), so that
    // one function serves both layouts. Graded by tests/test_02_naive_gpu.c
    // (suites gpu_conv2d_naive and gpu_conv2d_naive_2d).
    return 0.0f;
       exercise 02-window end */
    /* excerpt end: conv_point loops */
}

/* 2a: the grid-stride loop. Thread i computes outputs i, i + G, i + 2G,
 * ... (G = all threads of the grid), so any problem runs on a bounded grid.
 * i is the output's linear offset in memory, hence consecutive threads write
 * consecutive addresses (coalesced stores) in both layouts. In NCHW the
 * threads of a warp share n and k (the same filter: one broadcast load per
 * weight) and read neighbouring inputs; in NHWC they share the input pixel
 * and read neighbouring filters. The index is 64-bit: N*K*P*Q may exceed 2^31. */
__global__ void conv2d_naive_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                    float *__restrict__ y, naive_shape sh)
{
    /* excerpt: grid-stride loop */
    /* exercise 02-gridstride begin: the grid-stride loop over every output */
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < sh.total; i += step) {
        /* exercise 02-gridstride stub
        // TODO(exercise 02-gridstride): i starts at this thread's index in the whole grid and
        // advances by the number of threads in the grid while i < sh.total (64-bit: N*K*P*Q may
        // exceed 2^31). Graded by tests/test_02_naive_gpu.c (suite gpu_conv2d_naive).
        for (long long i = 0; i < 0; ++i) {
           exercise 02-gridstride end */
        int n, k, p, q;
        /* exercise 02-index begin: the flat index i -> (n, k, p, q), in both layouts */
        long long t = i;
        if (sh.nhwc) {
            k = (int)(t % sh.k), t /= sh.k;
            q = (int)(t % sh.q), t /= sh.q;
            p = (int)(t % sh.p), n = (int)(t / sh.p);
        } else {
            q = (int)(t % sh.q), t /= sh.q;
            p = (int)(t % sh.p), t /= sh.p;
            k = (int)(t % sh.k), n = (int)(t / sh.k);
        }
        /* exercise 02-index stub
        // TODO(exercise 02-index): i is the output's offset in memory: decompose it into
        // (n, k, p, q), the fastest index first (q in NCHW, k in NHWC: sh.nhwc says which).
        // Graded by tests/test_02_naive_gpu.c (suite gpu_conv2d_naive).
        n = k = p = q = 0;
           exercise 02-index end */
        y[i] = conv_point(x, w, &sh, n, k, p, q);
    }
    /* excerpt end: grid-stride loop */
}

/* 2b: a 2D block of 16x16 threads covers a 16x16 patch of one output
 * plane (threadIdx.x -> q, threadIdx.y -> p) and blockIdx.z picks the plane
 * (n, k). No division per output any more, and in NCHW a half-warp writes 16
 * consecutive floats of one row (64 bytes, coalesced), while its input window
 * slides along the same row. In NHWC the same mapping writes addresses K
 * floats apart: the mapping is only natural for the layout it follows.
 * Grid y and z are limited to 65535, so both loop. */
__global__ void conv2d_naive_2d_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                       float *__restrict__ y, naive_shape sh)
{
    /* excerpt: 2d mapping */
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= sh.q)
        return; /* no barrier in this kernel, so an early exit is safe */
    const long long planes = (long long)sh.n * sh.k;
    for (int p = blockIdx.y * blockDim.y + threadIdx.y; p < sh.p; p += gridDim.y * blockDim.y)
        for (long long nk = blockIdx.z; nk < planes; nk += gridDim.z) {
            const int n = (int)(nk / sh.k), k = (int)(nk % sh.k);
            y[n * sh.ys_n + k * sh.ys_k + p * sh.ys_p + q * sh.ys_q] =
                conv_point(x, w, &sh, n, k, p, q);
        }
    /* excerpt end: 2d mapping */
}

extern "C" conv_status conv2d_naive_check(const conv_params *p, conv_msg *msg)
{
    if (p == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid parameters: NULL pointer");
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    /* Per-axis index arithmetic is int: every window coordinate lies in
     * [-pad, H + pad), which must fit. */
    if ((long long)p->h + 2LL * p->pad_h > INT_MAX)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "unsupported height (--h/--pad-h): H + 2*pad_h = %lld exceeds 2^31-1",
                         (long long)p->h + 2LL * p->pad_h);
    if ((long long)p->w + 2LL * p->pad_w > INT_MAX)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "unsupported width (--w/--pad-w): W + 2*pad_w = %lld exceeds 2^31-1",
                         (long long)p->w + 2LL * p->pad_w);
    return CONV_OK;
}

/* Everything both launchers check before touching the device. */
static conv_status validate(const conv_params *p, const float *d_x, const float *d_w,
                            const float *d_y, conv_msg *msg)
{
    conv_status st = conv_check_pointers(d_x, "d_x", d_w, "d_w", d_y, "d_y", msg);
    return st != CONV_OK ? st : conv2d_naive_check(p, msg);
}

static naive_shape make_shape(const conv_params *p)
{
    naive_shape sh;
    sh.n = p->n, sh.c = p->c, sh.h = p->h, sh.w = p->w, sh.k = p->k, sh.r = p->r, sh.s = p->s;
    sh.p = conv_out_h(p), sh.q = conv_out_w(p);
    sh.pad_h = p->pad_h, sh.pad_w = p->pad_w;
    sh.stride_h = p->stride_h, sh.stride_w = p->stride_w;
    sh.dil_h = p->dil_h, sh.dil_w = p->dil_w;
    const long long C = p->c, H = p->h, W = p->w, K = p->k, R = p->r, S = p->s, P = sh.p, Q = sh.q;
    if (p->layout == CONV_LAYOUT_NHWC) { /* x[N][H][W][C], w[R][S][C][K], y[N][P][Q][K] */
        sh.nhwc = 1;
        sh.xs_n = H * W * C, sh.xs_h = W * C, sh.xs_w = C, sh.xs_c = 1;
        sh.ws_r = S * C * K, sh.ws_s = C * K, sh.ws_c = K, sh.ws_k = 1;
        sh.ys_n = P * Q * K, sh.ys_p = Q * K, sh.ys_q = K, sh.ys_k = 1;
    } else { /* x[N][C][H][W], w[K][C][R][S], y[N][K][P][Q] */
        sh.nhwc = 0;
        sh.xs_n = C * H * W, sh.xs_c = H * W, sh.xs_h = W, sh.xs_w = 1;
        sh.ws_k = C * R * S, sh.ws_c = R * S, sh.ws_r = S, sh.ws_s = 1;
        sh.ys_n = K * P * Q, sh.ys_k = P * Q, sh.ys_p = Q, sh.ys_q = 1;
    }
    sh.total = (long long)p->n * K * P * Q;
    return sh;
}

extern "C" conv_status conv2d_naive(const conv_params *p, const float *d_x, const float *d_w,
                                    float *d_y, int max_blocks, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(p, d_x, d_w, d_y, msg);
    if (st != CONV_OK)
        return st;
    const naive_shape sh = make_shape(p);
    long long cap = max_blocks > 0 ? max_blocks : CONV2D_NAIVE_MAX_BLOCKS;
    long long blocks = (sh.total + CONV2D_NAIVE_THREADS - 1) / CONV2D_NAIVE_THREADS;
    if (blocks > cap)
        blocks = cap;
    st = conv_kernel_fits((const void *)conv2d_naive_kernel, "conv2d_naive_kernel",
                          CONV2D_NAIVE_THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    conv2d_naive_kernel<<<(unsigned)blocks, CONV2D_NAIVE_THREADS, 0, stream>>>(d_x, d_w, d_y, sh);
    CONV_CHECK_LAUNCH("conv2d_naive_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_naive_2d(const conv_params *p, const float *d_x, const float *d_w,
                                       float *d_y, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = validate(p, d_x, d_w, d_y, msg);
    if (st != CONV_OK)
        return st;
    const naive_shape sh = make_shape(p);
    const long long b = CONV2D_NAIVE_2D_BLOCK, grid_max = 65535;
    long long gx = (sh.q + b - 1) / b, gy = (sh.p + b - 1) / b, gz = (long long)sh.n * sh.k;
    if (gy > grid_max)
        gy = grid_max;
    if (gz > grid_max)
        gz = grid_max;
    const dim3 block(CONV2D_NAIVE_2D_BLOCK, CONV2D_NAIVE_2D_BLOCK);
    const dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)gz);
    st = conv_kernel_fits((const void *)conv2d_naive_2d_kernel, "conv2d_naive_2d_kernel",
                          CONV2D_NAIVE_2D_BLOCK * CONV2D_NAIVE_2D_BLOCK, 0, msg);
    if (st != CONV_OK)
        return st;
    conv2d_naive_2d_kernel<<<grid, block, 0, stream>>>(d_x, d_w, d_y, sh);
    CONV_CHECK_LAUNCH("conv2d_naive_2d_kernel", msg);
    return CONV_OK;
}

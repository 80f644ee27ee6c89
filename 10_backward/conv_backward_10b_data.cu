/* Step 10, 10b: dgrad as an implicit GEMM in FP32, M = N*H*W (one row per
 * element of dx), N = C, depth K*R*S. Each block computes a 64 x 64 tile of
 * dx, 16 steps of the sum at a time through shared memory, 4 x 4 outputs per
 * thread, as step 06 tiles the forward pass; A is read where it lies in dy,
 * B in w. A stride cuts the GEMM into stride_h * stride_w phases (a grid
 * dimension): the inputs of one phase are reached by the same taps, so each
 * phase is a dense GEMM over its own taps only, and no product with a zero
 * inserted between dy's elements is ever computed; a phase that no tap
 * reaches has depth 0 and writes zeros. Dilation with stride is exact: the
 * taps of a phase are those with (i + pad - tap*dil) a multiple of the stride.
 * Both layouts, through each tensor's strides; the loads are coalesced in
 * NHWC, where the depth (k) runs along memory. GEMM dimensions are ints
 * (checked), tensor offsets 64-bit. Lesson: docs/10_backward.md, section
 * "dgrad and wgrad as implicit GEMMs". */
#include "conv_backward.h"

#include "conv_backward_10b.cuh"
#include "conv_backward_shape.cuh"
#include "conv_cuda.h"
#include "conv_device.h"

/* excerpt: dgrad phase */
/* One axis of a dgrad phase `ph` (0 <= ph < stride): the inputs i with
 * (i + pad) % stride == ph are first, first + stride, ... (count of them),
 * and the taps t with t*dil % stride == ph, tap0, tap0 + tap_step, ... (taps
 * of them), are exactly those for which (i + pad - t*dil) is a multiple of
 * the stride. Both sets are arithmetic progressions: t*dil % stride repeats
 * with period stride / gcd(dil, stride). */
typedef struct {
    int first, count, tap0, tap_step, taps;
} phase_axis;

__device__ phase_axis phase_axis_of(int ph, int size, int filter, int pad, int stride, int dil)
{
    phase_axis a;
    a.first = ((ph - pad) % stride + stride) % stride;
    a.count = a.first < size ? (size - 1 - a.first) / stride + 1 : 0;
    int g = stride, d = dil % stride; /* gcd(dil, stride) */
    while (d != 0) {
        const int t = g % d;
        g = d, d = t;
    }
    a.tap_step = stride / g;
    a.tap0 = -1;
    for (int t = 0; t < a.tap_step && t < filter && a.tap0 < 0; ++t)
        if ((long long)t * dil % stride == ph)
            a.tap0 = t;
    a.taps = a.tap0 < 0 ? 0 : (filter - 1 - a.tap0) / a.tap_step + 1;
    return a;
}
/* excerpt end: dgrad phase */

/* dgrad, phase blockIdx.z: A[m][(t*K) + k] = dy[n][oh][ow][k] for the m-th
 * input (n, ih, iw) of the phase and its t-th tap (r, s), where
 * oh = (ih + pad_h - r*dil_h) / stride_h is exact by construction (zero where
 * it falls outside [0, P)); B[(t*K) + k][c] = w[k][c][r][s]. Phases with no
 * tap have depth 0 and write zeros. */
__global__ void __launch_bounds__(THREADS)
    conv2d_backward_data_igemm_kernel(const float *__restrict__ dy, const float *__restrict__ w,
                                      float *__restrict__ dx, bwd_shape sh)
{
    __shared__ float as[DEPTH][TILE + 1], bs[DEPTH][TILE + 1];
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    const phase_axis ah =
        phase_axis_of((int)blockIdx.z / sh.stride_w, sh.h, sh.r, sh.pad_h, sh.stride_h, sh.dil_h);
    const phase_axis aw =
        phase_axis_of((int)blockIdx.z % sh.stride_w, sh.w, sh.s, sh.pad_w, sh.stride_w, sh.dil_w);
    const int rows = sh.n * ah.count * aw.count; /* this phase's M */
    const int row0 = (int)blockIdx.x * TILE, col0 = (int)blockIdx.y * TILE;
    if (row0 >= rows)
        return; /* the grid covers the largest phase; this one is smaller */
    const int depth = ah.taps * aw.taps * sh.k;

    /* The 4 rows this thread loads (A) and stores (dx): ty + 16*l, the input
     * (n, ih, iw), kept as n and ih + pad_h, iw + pad_w. */
    int img[4], ihp[4], iwp[4];
    bool ok[4];
#pragma unroll
    for (int l = 0; l < 4; ++l) {
        const int m = row0 + ty + 16 * l;
        ok[l] = m < rows;
        const int pix = ah.count * aw.count, rem = ok[l] ? m % pix : 0;
        img[l] = ok[l] ? m / pix : 0;
        ihp[l] = ah.first + rem / aw.count * sh.stride_h + sh.pad_h;
        iwp[l] = aw.first + rem % aw.count * sh.stride_w + sh.pad_w;
    }

    float acc[4][4] = {};
    for (int k0 = 0; k0 < depth; k0 += DEPTH) {
        /* This thread's column of A and row of B: kidx = t*K + k, k fastest
         * (contiguous in NHWC's dy and RSCK's w). */
        const int kidx = k0 + tx;
        const bool in = kidx < depth;
        const int k = in ? kidx % sh.k : 0, t = in ? kidx / sh.k : 0;
        const int r = ah.tap0 + t / aw.taps * ah.tap_step;
        const int s = aw.tap0 + t % aw.taps * aw.tap_step;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            float v = 0.0f;
            if (in && ok[l]) {
                /* excerpt: dgrad exact division */
                const int oh = (ihp[l] - r * sh.dil_h) / sh.stride_h; /* exact division */
                const int ow = (iwp[l] - s * sh.dil_w) / sh.stride_w;
                if (oh >= 0 && oh < sh.p && ow >= 0 && ow < sh.q)
                    v = dy[img[l] * sh.ys[0] + k * sh.ys[1] + oh * sh.ys[2] + ow * sh.ys[3]];
                /* excerpt end: dgrad exact division */
            }
            as[tx][ty + 16 * l] = v;
            const int c = col0 + ty + 16 * l;
            bs[tx][ty + 16 * l] = in && c < sh.c
                                      ? w[k * sh.ws[0] + c * sh.ws[1] + r * sh.ws[2] + s * sh.ws[3]]
                                      : 0.0f;
        }
        __syncthreads();
        tile_fma(acc, as, bs, ty, tx);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const long long at =
            img[i] * sh.xs[0] + (ihp[i] - sh.pad_h) * sh.xs[2] + (iwp[i] - sh.pad_w) * sh.xs[3];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int c = col0 + tx + 16 * j;
            if (ok[i] && c < sh.c)
                dx[at + c * sh.xs[1]] = acc[i][j];
        }
    }
}

extern "C" conv_status conv2d_backward_data_igemm_check(const conv_params *p, conv_msg *msg)
{
    conv_status st = bwd_check_problem(p, msg);
    if (st != CONV_OK)
        return st;
    return check_dims(p, (long long)p->n * p->h * p->w, p->c, (long long)p->k * p->r * p->s,
                      tiles_of(p->c), (long long)p->stride_h * p->stride_w, msg);
}

extern "C" conv_status conv2d_backward_data_igemm(const conv_params *p, const float *d_dy,
                                                  const float *d_w, float *d_dx,
                                                  cudaStream_t stream, conv_msg *msg)
{
    conv_status st = bwd_validate(p, d_dy, "d_dy", d_w, "d_w", d_dx, "d_dx", msg);
    if (st == CONV_OK)
        st = conv2d_backward_data_igemm_check(p, msg);
    if (st != CONV_OK)
        return st;
    /* The largest phase: ceil(H / stride_h) x ceil(W / stride_w) inputs per image. */
    const long long rows = (long long)p->n * ((p->h + p->stride_h - 1) / p->stride_h) *
                           ((p->w + p->stride_w - 1) / p->stride_w);
    const long long phases = (long long)p->stride_h * p->stride_w;
    st = conv_kernel_fits((const void *)conv2d_backward_data_igemm_kernel,
                          "conv2d_backward_data_igemm_kernel", THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    const dim3 grid((unsigned)tiles_of(rows), (unsigned)tiles_of(p->c), (unsigned)phases);
    conv2d_backward_data_igemm_kernel<<<grid, THREADS, 0, stream>>>(d_dy, d_w, d_dx, make_shape(p));
    CONV_CHECK_LAUNCH("conv2d_backward_data_igemm_kernel", msg);
    return CONV_OK;
}

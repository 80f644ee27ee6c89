/* Step 07c, the fused Winograd convolution F(4x4, 3x3) (winograd.h): the
 * filter transform first (U, 36 * K * C floats, the only transformed tensor
 * in global memory), then one kernel that does the rest for a block of
 * FUSED_BK output channels and FUSED_BT output tiles:
 *
 *   for each chunk of BC input channels:
 *     gather the 6x6 input tiles (zeros outside the image) and transform them
 *       into shared memory, V_s[e][c][t] = (B^T d B)[e];
 *     load U_s[e][c][k] for the chunk;
 *     36 x 8 threads: the 8 threads of position e accumulate
 *       M[e][k][t] += U_s[e][c][k] * V_s[e][c][t] in 8 x 8 register tiles;
 *   then, in passes through shared memory, one thread per (k, t) gathers the
 *   36 values of M[.][k][t] and writes A^T M A, cut to P x Q at the edges.
 *
 * V and M never leave the chip. BC is 8 where the device gives a block 54 KB
 * of shared memory and 4 (27 KB) where it does not. */
#include "winograd.h"

#include <stdint.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_kernel_util.cuh"
#include "winograd_kernels.cuh"

#define FUSED_BK      32             /* output channels per block */
#define FUSED_BT      16             /* output tiles per block */
#define FUSED_A2      36             /* tile positions e of F(4x4, 3x3) */
#define FUSED_THREADS 288            /* 8 threads per position */
#define FUSED_TP      (FUSED_BT + 1) /* row stride of the output passes (no bank conflicts) */

/* Shared floats of the kernel with chunk BC: U_s and V_s. */
#define FUSED_SMEM_FLOATS(BC) (FUSED_A2 * (BC) * (FUSED_BK + FUSED_BT))
/* Output channels per pass of the epilogue, so that 36 x KP x FUSED_TP floats
 * fit in the same shared memory: 16 with BC = 8, 8 with BC = 4. */
#define FUSED_KP(BC) ((BC) >= 8 ? 16 : 8)

template <int BC>
__global__ void __launch_bounds__(FUSED_THREADS)
    wino_fused_kernel(const float *__restrict__ x, const float *__restrict__ u,
                      float *__restrict__ y, wino_geom g)
{
    constexpr int KP = FUSED_KP(BC);
    static_assert(FUSED_A2 * KP * FUSED_TP <= FUSED_SMEM_FLOATS(BC), "epilogue must fit");
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    float *us = smem;                            /* [36][BC][BK] */
    float *vs = smem + FUSED_A2 * BC * FUSED_BK; /* [36][BC][BT] */
    const int tid = threadIdx.x;
    const int e = tid >> 3;        /* this thread's tile position */
    const int kq = (tid & 7) >> 1; /* its 8 output channels: kq * 8 .. */
    const int tq = tid & 1;        /* its 8 tiles: tq * 8 .. */
    const int k0 = blockIdx.y * FUSED_BK;
    const long long t0 = (long long)blockIdx.x * FUSED_BT;
    const bool nhwc = g.xs_c == 1;

    float acc[8][8];
    zero_tile(acc);

    for (int c0 = 0; c0 < g.c; c0 += BC) {
        /* U_s[e][c][k] = U[e][c0 + c][k0 + k] (U[e] is C x K), 0 past C or K */
        for (int i = tid; i < FUSED_A2 * BC * FUSED_BK; i += FUSED_THREADS) {
            const int kk = i % FUSED_BK, cc = (i / FUSED_BK) % BC, ee = i / (FUSED_BK * BC);
            const int c = c0 + cc, k = k0 + kk;
            us[i] = c < g.c && k < g.k ? u[((long long)ee * g.c + c) * g.k + k] : 0.0f;
        }
        /* V_s[e][c][t] in three steps, all threads taking part: the 6x6 input
         * tiles (zeros outside the image) into V_s, element (a, b) of tile
         * (c, t) at e = 6a + b; then B^T d column by column and B row by row,
         * each thread transforming its own six values in place. */
        for (int i = tid; i < FUSED_A2 * BC * FUSED_BT; i += FUSED_THREADS) {
            int cc, tt, ab; /* consecutive threads: consecutive tiles (NCHW) or channels (NHWC) */
            if (nhwc)
                cc = i % BC, tt = (i / BC) % FUSED_BT, ab = i / (BC * FUSED_BT);
            else
                tt = i % FUSED_BT, cc = (i / FUSED_BT) % BC, ab = i / (FUSED_BT * BC);
            const int c = c0 + cc;
            const long long t = t0 + tt;
            float d = 0.0f;
            if (c < g.c && t < g.tiles) {
                const int n = (int)(t / g.tiles_img), tile = (int)(t % g.tiles_img);
                const int h = (tile / g.tiles_w) * 4 - g.pad_h + ab / 6;
                const int wi = (tile % g.tiles_w) * 4 - g.pad_w + ab % 6;
                if (h >= 0 && h < g.h && wi >= 0 && wi < g.w)
                    d = x[n * g.xs_n + c * g.xs_c + h * g.xs_h + wi * g.xs_w];
            }
            vs[(ab * BC + cc) * FUSED_BT + tt] = d;
        }
        __syncthreads();
        for (int pass = 0; pass < 2; ++pass) { /* 0: columns (B^T d), 1: rows (. B) */
            for (int i = tid; i < 6 * BC * FUSED_BT; i += FUSED_THREADS) {
                const int ct = i % (BC * FUSED_BT), line = i / (BC * FUSED_BT);
                /* pass 0: column `line`, elements e = 6a + line; pass 1: row `line` */
                float *at = vs + (pass == 0 ? line : 6 * line) * BC * FUSED_BT + ct;
                const int step = (pass == 0 ? 6 : 1) * BC * FUSED_BT;
                wino_f4_input_1d(at, step, at, step);
            }
            __syncthreads();
        }

        /* M[e][k][t] += U[e][c][k] V[e][c][t] over the chunk, 8 x 8 per thread */
        const float *ue = us + e * BC * FUSED_BK + kq * 8;
        const float *ve = vs + e * BC * FUSED_BT + tq * 8;
#pragma unroll
        for (int cc = 0; cc < BC; ++cc) {
            const float4 a0 = *(const float4 *)(ue + cc * FUSED_BK);
            const float4 a1 = *(const float4 *)(ue + cc * FUSED_BK + 4);
            const float4 b0 = *(const float4 *)(ve + cc * FUSED_BT);
            const float4 b1 = *(const float4 *)(ve + cc * FUSED_BT + 4);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    /* Output transform, KP output channels per pass: the threads holding them
     * store M[e][k][t] as ms[e][k][t]; A^T M goes column by column in place
     * (rows 0..3 of each column), then . A row by row into y, cut to P x Q. */
    float *ms = smem;
    for (int kbase = 0; kbase < FUSED_BK; kbase += KP) {
        const int kr = kq * 8 - kbase; /* this thread's first channel within the pass */
        if (kr >= 0 && kr < KP) {
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    ms[(e * KP + kr + i) * FUSED_TP + tq * 8 + j] = acc[i][j];
        }
        __syncthreads();
        for (int i = tid; i < 6 * KP * FUSED_BT; i += FUSED_THREADS) {
            const int tt = i % FUSED_BT, kk = (i / FUSED_BT) % KP, b = i / (FUSED_BT * KP);
            float *col = ms + (b * KP + kk) * FUSED_TP + tt; /* e = 6a + b */
            const int step = 6 * KP * FUSED_TP;
            wino_f4_output_1d(col, step, col, step);
        }
        __syncthreads();
        for (int i = tid; i < 4 * KP * FUSED_BT; i += FUSED_THREADS) {
            int tt, kk, row; /* consecutive threads: consecutive tiles (NCHW) or channels (NHWC) */
            if (nhwc)
                kk = i % KP, tt = (i / KP) % FUSED_BT, row = i / (KP * FUSED_BT);
            else
                tt = i % FUSED_BT, kk = (i / FUSED_BT) % KP, row = i / (FUSED_BT * KP);
            const int k = k0 + kbase + kk;
            const long long t = t0 + tt;
            if (k >= g.k || t >= g.tiles)
                continue;
            float yr[4];
            const float *line = ms + (6 * row * KP + kk) * FUSED_TP + tt; /* e = 6 row + b */
            wino_f4_output_1d(line, KP * FUSED_TP, yr, 1);
            const int n = (int)(t / g.tiles_img), tile = (int)(t % g.tiles_img);
            const int p = (tile / g.tiles_w) * 4 + row, q0 = (tile % g.tiles_w) * 4;
            if (p >= g.p)
                continue;
            float *yp = y + n * g.ys_n + k * g.ys_k + p * g.ys_p;
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (q0 + j < g.q)
                    yp[(q0 + j) * g.ys_q] = yr[j];
        }
        __syncthreads();
    }
}

/* ---- launcher ----------------------------------------------------------- */

extern "C" size_t wino_fused_workspace_elems(const conv_params *p)
{
    return (size_t)FUSED_A2 * (size_t)p->k * (size_t)p->c;
}

extern "C" conv_status wino_fused_check(const conv_params *p, size_t device_bytes, conv_msg *msg)
{
    conv_status st = wino_supports(p, WINO_F4, msg);
    if (st != CONV_OK)
        return st;
    const long long tiles = (long long)p->n * wino_tiles(p, WINO_F4);
    const long long blocks_k = ((long long)p->k + FUSED_BK - 1) / FUSED_BK;
    const long long blocks_t = (tiles + FUSED_BT - 1) / FUSED_BT;
    if (blocks_k > 65535 || blocks_t > 0x7fffffffLL)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "--k %d: fused Winograd needs %lld x %lld blocks, more than a grid holds",
                         p->k, blocks_t, blocks_k);
    const double bytes = ((double)wino_fused_workspace_elems(p) + (double)conv_input_elems(p) +
                          (double)conv_filter_elems(p) + (double)conv_output_elems(p)) *
                         sizeof(float);
    if (bytes > (double)device_bytes)
        return conv_fail(msg, CONV_ERR_OUT_OF_MEMORY,
                         "fused Winograd: needs %.1f MB of device memory (tensors and the "
                         "transformed filters), %.1f MB free",
                         bytes / 1e6, device_bytes / 1e6);
    return CONV_OK;
}

/* The kernel with chunk BC if it fits this device (shared memory, registers). */
template <int BC> static conv_status fused_fits(conv_msg *msg)
{
    return conv_kernel_fits((const void *)wino_fused_kernel<BC>, "wino_fused_kernel", FUSED_THREADS,
                            FUSED_SMEM_FLOATS(BC) * sizeof(float), msg);
}

extern "C" conv_status conv2d_winograd_fused_stages(const conv_params *p, int filter, int rest,
                                                    const float *d_x, const float *d_w, float *d_y,
                                                    float *d_work, size_t work_elems,
                                                    cudaStream_t stream, conv_msg *msg)
{
    conv_status st = conv_check_pointers(d_x, "x", d_w, "w", d_y, "y", msg);
    if (st == CONV_OK && d_work == NULL)
        st = conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: work is NULL");
    if (st == CONV_OK)
        st = wino_fused_check(p, SIZE_MAX, msg);
    if (st != CONV_OK)
        return st;
    if (work_elems < wino_fused_workspace_elems(p))
        return conv_fail(msg, CONV_ERR_INVALID,
                         "fused Winograd: the workspace holds %zu floats, %zu needed", work_elems,
                         wino_fused_workspace_elems(p));
    /* the larger chunk where it fits, else the smaller; neither: skipped with the reason */
    int bc = 8;
    conv_msg why8 = {{0}};
    st = conv_kernel_fits((const void *)wino_filter_kernel<4, true>, "wino_filter_kernel",
                          WINO_THREADS, 0, msg);
    if (st == CONV_OK && fused_fits<8>(&why8) != CONV_OK) {
        bc = 4;
        st = fused_fits<4>(msg);
    }
    if (st != CONV_OK)
        return st;
    const wino_geom g = make_geom(p, 4);
    if (filter) {
        wino_filter_kernel<4, true>
            <<<grid_for((long long)g.k * g.c), WINO_THREADS, 0, stream>>>(d_w, d_work, g);
        CONV_CHECK_LAUNCH("wino_filter_kernel", msg);
    }
    if (rest) {
        const dim3 grid((unsigned)((g.tiles + FUSED_BT - 1) / FUSED_BT),
                        (unsigned)((g.k + FUSED_BK - 1) / FUSED_BK));
        if (bc == 8)
            wino_fused_kernel<8>
                <<<grid, FUSED_THREADS, FUSED_SMEM_FLOATS(8) * sizeof(float), stream>>>(d_x, d_work,
                                                                                        d_y, g);
        else
            wino_fused_kernel<4>
                <<<grid, FUSED_THREADS, FUSED_SMEM_FLOATS(4) * sizeof(float), stream>>>(d_x, d_work,
                                                                                        d_y, g);
        CONV_CHECK_LAUNCH("wino_fused_kernel", msg);
    }
    return CONV_OK;
}

extern "C" conv_status conv2d_winograd_fused(const conv_params *p, const float *d_x,
                                             const float *d_w, float *d_y, float *d_work,
                                             size_t work_elems, cudaStream_t stream, conv_msg *msg)
{
    return conv2d_winograd_fused_stages(p, 1, 1, d_x, d_w, d_y, d_work, work_elems, stream, msg);
}

/* Step 05b: the tuned direct convolution.
 *
 *   conv2d_prefetch_5b()  <-  conv2d_prefetch_5b_kernel<F, KC, OW>
 *
 * A thread computes OW neighbouring outputs of a row for KC output channels
 * (OW x KC accumulators in registers). Per filter row it reads its input
 * segment (OW + S - 1 floats) once, as float4, and per filter tap KC weights
 * as float4 broadcasts, so each weight feeds OW FMAs and each input KC FMAs:
 * fewer shared loads per FMA than 5a, whose pace the shared-memory pipe sets.
 *
 * Compile-time versions for 3x3, 5x5, 6x6 and 7x7 filters (F, every filter
 * loop unrolled, the input segment and the weights in register arrays) and a
 * generic path (F = 0) for any R x S up to the maximum. KC is one of 4, 6, 8,
 * 16 (the host picks the one that wastes the fewest accumulators for K); the
 * grid covers ceil(K / KC) channel chunks.
 *
 * The lesson: docs/05_prefetch_float4.md, "5b: more outputs per thread" (its
 * napkin math in "The problems, and napkin math first"). */
#include "conv_prefetch.h"

#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_kernel_util.cuh"
#include "prefetch_tile.cuh"

/* Pieces of the equal split each thread stages in registers (more are loaded
 * without overlap, which only happens for very narrow outputs). The KC = 16
 * versions stage 2 (layer 2 needs 276 pieces for 153 threads) to save the
 * registers for their 64 accumulators. */
#define PREFETCH_5B_ITEMS 4

/* One input channel: acc[k][j] += sum_{r,s} in[ty + r][tx*OW + j + s] * w[k][r][s].
 * `in` points at this thread's first input (row ty, column tx*OW of the tile). */
template <int F, int KC, int OW>
__device__ __forceinline__ void compute_5b(float (&acc)[KC][OW], const float *in, int stride,
                                           const float *ws, int R, int S)
{
    constexpr int KCP = (KC + 3) / 4 * 4;
    if (F > 0) {
        /* the input segment of one filter row, rounded up to whole float4 */
        /* excerpt: 5b-filter-row */
        constexpr int V = (OW + F - 1 + 3) / 4 * 4;
        /* the row loop is unrolled while the body stays under about 2000 FMAs
         * per channel: unrolling the 3136 of 7x7 x 16 channels x 4 outputs
         * made ECE408 layer 2 26% slower on an H100 (2.73 vs 2.16 ms) */
        constexpr int UNROLL_R = (F * F * KC * OW <= 2048) ? (F > 0 ? F : 1) : 1;
#pragma unroll UNROLL_R
        for (int r = 0; r < (F > 0 ? F : 1); ++r) {
            float v[V];
            load_float4s(v, in + r * stride);
#pragma unroll
            for (int s = 0; s < F; ++s) {
                float wv[KCP];
                load_float4s(wv, ws + (r * F + s) * KCP);
#pragma unroll
                for (int k = 0; k < KC; ++k)
#pragma unroll
                    for (int j = 0; j < OW; ++j)
                        acc[k][j] = fmaf(v[j + s], wv[k], acc[k][j]);
            }
        }
        /* excerpt end: 5b-filter-row */
    } else {
        for (int r = 0; r < R; ++r) {
            const float *row = in + r * stride;
            for (int s = 0; s < S; ++s) {
                float wv[KCP];
                load_float4s(wv, ws + (r * S + s) * KCP);
                float v[OW];
#pragma unroll
                for (int j = 0; j < OW; ++j)
                    v[j] = row[s + j];
#pragma unroll
                for (int k = 0; k < KC; ++k)
#pragma unroll
                    for (int j = 0; j < OW; ++j)
                        acc[k][j] = fmaf(v[j], wv[k], acc[k][j]);
            }
        }
    }
}

/* Block (tx, ty) threads covers bw = tx*OW columns and bh = ty rows of the
 * output, for one image n and one chunk of KC output channels (the block
 * index is decoded chunk-fastest, so the blocks that read the same input tile
 * run close together and find it in L2). A block at the right or bottom edge
 * loads only the tile its remaining outputs need; threads without outputs
 * still load and synchronise, and skip the arithmetic. */
/* Registers: with 64 accumulators (KC = 16) the compiler took 160 registers,
 * which let only 2 blocks of 153 threads share an SM on layer 2; capping them
 * at 128 (2 blocks of 256 threads, no spills) lets 3 run and cut layer 2 from
 * 2.73 to 2.16 ms on an H100. Splitting K = 16 into two chunks of 8 (OW = 4,
 * 118 registers) measured 2.66 ms: twice the weight loads per FMA. */
/* That cap fits Hopper and Blackwell; on Turing and Ampere ptxas cannot keep
 * the 64 accumulators in 128 registers without spilling (132 to 268 bytes),
 * so there the cap is lifted (one block of 256 threads per SM promised). */
/* excerpt: 5b-launch-bounds */
#if __CUDA_ARCH__ >= 900 || !defined(__CUDA_ARCH__)
#define PREFETCH_5B_MIN_BLOCKS_KC16 2
#else
#define PREFETCH_5B_MIN_BLOCKS_KC16 1
#endif

template <int F, int KC, int OW>
__global__ void __launch_bounds__(256, KC == 16 ? PREFETCH_5B_MIN_BLOCKS_KC16 : 1)
    conv2d_prefetch_5b_kernel(const float *__restrict__ x, const float *__restrict__ w,
                              float *__restrict__ y, prefetch_args a)
/* excerpt end: 5b-launch-bounds */
{
    constexpr int KCP = (KC + 3) / 4 * 4;
    constexpr int ITEMS = KC == 16 ? 2 : PREFETCH_5B_ITEMS;
    extern __shared__ __align__(16) float smem[];
    const int R = F > 0 ? F : a.r;
    const int S = F > 0 ? F : a.s;
    const int nt = blockDim.x * blockDim.y;
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;

    int b = blockIdx.x;
    const int chunk = b % a.k_chunks;
    b /= a.k_chunks;
    const int bx = b % a.col_blocks;
    b /= a.col_blocks;
    const int by = b % a.row_blocks;
    const int n = b / a.row_blocks;

    const int oy0 = by * a.bh, ox0 = bx * a.bw;
    const int orows = min(a.bh, a.p - oy0);
    const int ocols = min(a.bw, a.q - ox0);
    const int k0 = chunk * KC;
    const int kcount = min(KC, a.k - k0);
    const tile_geom g =
        tile_make(oy0 - a.pad_h, ox0 - a.pad_w, orows + R - 1, ocols + S - 1, a.tile_stride);

    const int in_floats = a.tile_rows * a.tile_stride;
    const int w_floats = R * S * KCP;
    float *s_in = smem;                /* two input buffers */
    float *s_w = smem + 2 * in_floats; /* two weight buffers */

    const size_t plane = (size_t)a.h * a.w_;
    const float *xn = x + (size_t)n * a.c * plane;

    /* prologue: channel 0 into buffer 0 */
    float4 stage[ITEMS];
    int soff[ITEMS];
    tile_stage<ITEMS>(stage, soff, xn, a.h, a.w_, &g, tid, nt);
    weights_fetch_async(s_w, w, a.c, R * S, 0, k0, kcount, KCP, tid, nt);
    tile_commit<ITEMS>(stage, soff, s_in, xn, a.h, a.w_, &g, tid, nt);
    cp_async_wait_all();
    __syncthreads();

    float acc[KC][OW];
    zero_tile(acc);

    const int tx = threadIdx.x, ty = threadIdx.y;
    const bool active = ty < orows && tx * OW < ocols;
    const int my_in = ty * a.tile_stride + 4 + tx * OW;

    /* exercise 05-prefetch begin: two buffers, the next channel in flight, one barrier */
    for (int c = 0; c < a.c; ++c) {
        const int cur = c & 1;
        const bool more = c + 1 < a.c;
        const float *next = xn + (size_t)(c + 1) * plane;
        /* 1. start reading channel c+1: input pieces into registers, weights
         *    straight into the other shared buffers (both were last read in
         *    iteration c-1, before its barrier) */
        if (more) {
            tile_stage<ITEMS>(stage, soff, next, a.h, a.w_, &g, tid, nt);
            weights_fetch_async(s_w + (cur ^ 1) * w_floats, w, a.c, R * S, c + 1, k0, kcount, KCP,
                                tid, nt);
        }
        /* 2. compute channel c while those loads are in flight */
        if (active)
            compute_5b<F, KC, OW>(acc, s_in + cur * in_floats + my_in, a.tile_stride,
                                  s_w + cur * w_floats, R, S);
        /* 3. park channel c+1 in shared memory; one barrier per channel */
        if (more) {
            tile_commit<ITEMS>(stage, soff, s_in + (cur ^ 1) * in_floats, next, a.h, a.w_, &g, tid,
                               nt);
            cp_async_wait_all();
        }
        __syncthreads();
    }
    /* exercise 05-prefetch stub
    // TODO(exercise 05-prefetch): channel 0 is in buffer 0 (the prologue above). For each
    // channel c, buffer cur = c & 1: if there is a channel c + 1, start reading it (input
    // pieces into registers with tile_stage, its weights into the other weight buffer with
    // weights_fetch_async); compute channel c from buffer cur (compute_5b, active threads
    // only); then park channel c + 1 in the other input buffer (tile_commit) and wait for the
    // weight copies (cp_async_wait_all); one __syncthreads() per channel.
    // Graded by tests/test_05_prefetch_float4.c (suite gpu_conv2d_prefetch).
    (void)stage, (void)soff, (void)my_in, (void)w_floats, (void)in_floats, (void)plane;
       exercise 05-prefetch end */

    if (!active)
        return;
    const int oy = oy0 + ty;
    const int ox = ox0 + tx * OW;
    const int valid = min(OW, a.q - ox);
#pragma unroll
    for (int k = 0; k < KC; ++k) {
        if (k >= kcount)
            break;
        float *yp = y + (((size_t)n * a.k + k0 + k) * a.p + oy) * a.q + ox;
        if (valid == OW && ((uintptr_t)yp & 15) == 0) {
#pragma unroll
            for (int j = 0; j < OW; j += 4)
                *reinterpret_cast<float4 *>(yp + j) =
                    make_float4(acc[k][j], acc[k][j + 1], acc[k][j + 2], acc[k][j + 3]);
        } else {
#pragma unroll
            for (int j = 0; j < OW; ++j)
                if (j < valid)
                    yp[j] = acc[k][j];
        }
    }
}

template <int F, int KC, int OW> static conv_status launch(const prefetch_launch *l, conv_msg *msg)
{
    const dim3 block(l->plan.tx, l->plan.ty);
    conv_status st = conv_kernel_fits((const void *)conv2d_prefetch_5b_kernel<F, KC, OW>,
                                      "conv2d_prefetch_5b_kernel", l->plan.tx * l->plan.ty,
                                      l->plan.smem_bytes, msg);
    if (st != CONV_OK)
        return st;
    conv2d_prefetch_5b_kernel<F, KC, OW>
        <<<(unsigned)l->plan.blocks, block, l->plan.smem_bytes, l->stream>>>(l->d_x, l->d_w, l->d_y,
                                                                             l->args);
    return CONV_OK;
}

template <int F> static conv_status launch_chunk(const prefetch_launch *l, conv_msg *msg)
{
    switch (l->plan.kc) {
    case 4: return launch<F, 4, 8>(l, msg);
    case 6: return launch<F, 6, 8>(l, msg);
    case 8: return launch<F, 8, 8>(l, msg);
    default: return launch<F, 16, 4>(l, msg);
    }
}

extern "C" conv_status conv2d_prefetch_5b(const conv_params *p, const float *d_x, const float *d_w,
                                          float *d_y, cudaStream_t stream, conv_msg *msg)
{
    prefetch_launch l;
    conv_status st = prefetch_prepare(CONV_PREFETCH_5B, p, d_x, d_w, d_y, stream, &l, msg);
    if (st != CONV_OK)
        return st;
    const conv_prefetch_plan *pl = &l.plan;
    if (pl->ow != (pl->kc == 16 ? 4 : 8) ||
        (pl->kc != 4 && pl->kc != 6 && pl->kc != 8 && pl->kc != 16))
        return conv_fail(msg, CONV_ERR_UNSUPPORTED, "conv2d_prefetch_5b: no kernel for KC=%d",
                         pl->kc);
    switch (pl->filter) {
    case 3: st = launch_chunk<3>(&l, msg); break;
    case 5: st = launch_chunk<5>(&l, msg); break;
    case 6: st = launch_chunk<6>(&l, msg); break;
    case 7: st = launch_chunk<7>(&l, msg); break;
    default: st = launch_chunk<0>(&l, msg); break;
    }
    if (st != CONV_OK)
        return st;
    CONV_CHECK_LAUNCH("conv2d_prefetch_5b_kernel", msg);
    return CONV_OK;
}

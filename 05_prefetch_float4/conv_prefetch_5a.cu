/* Step 05a: the blog article's kernel, made correct for every shape.
 *
 *   conv2d_prefetch_5a()               <-  conv2d_prefetch_5a_kernel<F, 8>
 *   conv2d_prefetch_5a_lecture_order() <-  conv2d_prefetch_5a_kernel<F, 1>
 *
 * One warp per block (8 x 4 threads over the output plane); the input tile
 * and halo of one channel loaded by the "equal split" into 16-byte pieces
 * (prefetch_tile.cuh); the last block of each row and column grown to take
 * the remainder (up to 2 x 2 outputs per thread); the filter of the current
 * channel in shared memory and the accumulators of KC output channels in
 * registers; the next channel fetched while the current one is computed (two
 * buffers, one barrier per channel). KC = 1 is the article's loop order
 * (oc -> ic, every input tile loaded K times); KC = 8 turns it around (ic ->
 * oc, one load per chunk of 8 output channels).
 *
 * The lesson, the loop orders and the measurements: docs/05_prefetch_float4.md,
 * "5a: the article's kernel, made correct". */
#include "conv_prefetch.h"

#include "conv_cuda.h"
#include "conv_device.h"
#include "conv_kernel_util.cuh"
#include "prefetch_tile.cuh"

/* Pieces of the equal split each thread stages in registers. A regular
 * block's tile for a 6x6 filter is 9 rows x 4 pieces = 36 pieces (2 for
 * threads 0-3, 1 for the others); an edge block of 7 x 15 outputs needs
 * 12 x 6 = 72 (3 for threads 0-7). Larger filters load the rest without
 * overlap (tile_commit). */
#define PREFETCH_5A_ITEMS 3

/* Registers: with __launch_bounds__(32) alone, ptxas gave the 6x6 version 128
 * registers and a 4-byte spill on sm_90. Promising 16 resident blocks (one
 * warp each) keeps the 128 registers without the spill from sm_80 on; on
 * Turing the 5x5 version then spills, so there it promises 12 (up to 170
 * registers). scripts/check-device-code.sh checks every architecture. */
/* excerpt: 5a-launch-bounds */
#if __CUDA_ARCH__ >= 800 || !defined(__CUDA_ARCH__)
#define PREFETCH_5A_MIN_BLOCKS 16
#else
#define PREFETCH_5A_MIN_BLOCKS 12
#endif

template <int F, int KC>
__global__ void __launch_bounds__(32, PREFETCH_5A_MIN_BLOCKS)
    conv2d_prefetch_5a_kernel(const float *__restrict__ x, const float *__restrict__ w,
                              float *__restrict__ y, prefetch_args a)
/* excerpt end: 5a-launch-bounds */
{
    constexpr int KCP = KC == 1 ? 1 : (KC + 3) / 4 * 4;
    constexpr int ITEMS = PREFETCH_5A_ITEMS;
    extern __shared__ __align__(16) float smem[];
    const int R = F > 0 ? F : a.r;
    const int S = F > 0 ? F : a.s;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * CONV_PREFETCH_5A_BW + tx;
    const int nt = CONV_PREFETCH_5A_BW * CONV_PREFETCH_5A_BH;

    int b = blockIdx.x;
    const int bx = b % a.col_blocks;
    b /= a.col_blocks;
    const int by = b % a.row_blocks;
    const int n = b / a.row_blocks;

    /* edge-block resizing: the last block takes the remainder too */
    /* excerpt: edge-blocks */
    const int ox0 = bx * CONV_PREFETCH_5A_BW, oy0 = by * CONV_PREFETCH_5A_BH;
    const int ocols = bx == a.col_blocks - 1 ? a.q - ox0 : CONV_PREFETCH_5A_BW;
    const int orows = by == a.row_blocks - 1 ? a.p - oy0 : CONV_PREFETCH_5A_BH;
    const tile_geom g =
        tile_make(oy0 - a.pad_h, ox0 - a.pad_w, orows + R - 1, ocols + S - 1, a.tile_stride);
    /* excerpt end: edge-blocks */

    const int in_floats = a.tile_rows * a.tile_stride;
    const int w_floats = R * S * KCP;
    float *s_in = smem;
    float *s_w = smem + 2 * in_floats;
    const size_t plane = (size_t)a.h * a.w_;
    const float *xn = x + (size_t)n * a.c * plane;
    const int steps = a.k_chunks * a.c; /* (chunk, channel) pairs, channel fastest */

    float4 stage[ITEMS];
    int soff[ITEMS];
    tile_stage<ITEMS>(stage, soff, xn, a.h, a.w_, &g, tid, nt);
    weights_fetch_async(s_w, w, a.c, R * S, 0, 0, min(KC, a.k), KCP, tid, nt);
    tile_commit<ITEMS>(stage, soff, s_in, xn, a.h, a.w_, &g, tid, nt);
    cp_async_wait_all();
    __syncthreads();

    float acc[2][2][KC];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int k = 0; k < KC; ++k)
                acc[i][j][k] = 0.0f;

    int c = 0, chunk = 0;
    /* excerpt: 5a-issue-next */
    for (int t = 0; t < steps; ++t) {
        const int cur = t & 1;
        const bool more = t + 1 < steps;
        const int c1 = c + 1 == a.c ? 0 : c + 1;
        const int chunk1 = c + 1 == a.c ? chunk + 1 : chunk;
        const float *next = xn + (size_t)c1 * plane;
        /* exercise 05-prefetch begin: 5a: start reading step t + 1 */
        if (more) {
            tile_stage<ITEMS>(stage, soff, next, a.h, a.w_, &g, tid, nt);
            weights_fetch_async(s_w + (cur ^ 1) * w_floats, w, a.c, R * S, c1, chunk1 * KC,
                                min(KC, a.k - chunk1 * KC), KCP, tid, nt);
        }
        /* exercise 05-prefetch stub
        // TODO(exercise 05-prefetch): if there is a step t + 1 (channel c1 of chunk chunk1):
        // its input pieces into registers (tile_stage, from `next`) and its weights, output
        // channels chunk1 * KC .. (at most KC, at most a.k in all), into the other weight
        // buffer (weights_fetch_async). As in 5b's loop, which has one chunk only.
           exercise 05-prefetch end */
        /* excerpt end: 5a-issue-next */

        const float *in = s_in + cur * in_floats;
        const float *ws = s_w + cur * w_floats;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int oy = ty + i * CONV_PREFETCH_5A_BH, ox = tx + j * CONV_PREFETCH_5A_BW;
                if (oy >= orows || ox >= ocols)
                    continue;
                /* excerpt: 5a-taps */
                const float *ip = in + oy * a.tile_stride + 4 + ox;
#pragma unroll(F > 0 ? F : 1)
                for (int r = 0; r < (F > 0 ? F : R); ++r) {
#pragma unroll(F > 0 ? F : 1)
                    for (int s = 0; s < (F > 0 ? F : S); ++s) {
                        const float xv = ip[r * a.tile_stride + s];
                        const float *wp = ws + (r * S + s) * KCP;
                        float wv[KCP];
                        if (KCP % 4 == 0) {
                            load_float4s(wv, wp);
                        } else {
#pragma unroll
                            for (int k = 0; k < KCP; ++k)
                                wv[k] = wp[k];
                        }
#pragma unroll
                        for (int k = 0; k < KC; ++k)
                            acc[i][j][k] = fmaf(xv, wv[k], acc[i][j][k]);
                    }
                }
                /* excerpt end: 5a-taps */
            }
        }

        if (c == a.c - 1) { /* the chunk is complete: write it, start the next */
            const int k0 = chunk * KC;
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    const int oy = ty + i * CONV_PREFETCH_5A_BH, ox = tx + j * CONV_PREFETCH_5A_BW;
#pragma unroll
                    for (int k = 0; k < KC; ++k) {
                        if (oy < orows && ox < ocols && k0 + k < a.k)
                            y[(((size_t)n * a.k + k0 + k) * a.p + oy0 + oy) * a.q + ox0 + ox] =
                                acc[i][j][k];
                        acc[i][j][k] = 0.0f;
                    }
                }
        }
        /* excerpt: 5a-park-next */
        /* exercise 05-prefetch begin: 5a: park step t + 1, one barrier */
        if (more) {
            tile_commit<ITEMS>(stage, soff, s_in + (cur ^ 1) * in_floats, next, a.h, a.w_, &g, tid,
                               nt);
            cp_async_wait_all();
        }
        __syncthreads();
        /* exercise 05-prefetch stub
        // TODO(exercise 05-prefetch): step t + 1's input pieces into the other input buffer
        // (tile_commit), its weight copies complete (cp_async_wait_all), then the one barrier
        // of the step.
        (void)more, (void)next;
           exercise 05-prefetch end */
        /* excerpt end: 5a-park-next */
        c = c1;
        chunk = chunk1;
    }
}

template <int F, int KC> static conv_status launch(const prefetch_launch *l, conv_msg *msg)
{
    const dim3 block(CONV_PREFETCH_5A_BW, CONV_PREFETCH_5A_BH);
    conv_status st = conv_kernel_fits((const void *)conv2d_prefetch_5a_kernel<F, KC>,
                                      "conv2d_prefetch_5a_kernel", (int)(block.x * block.y),
                                      l->plan.smem_bytes, msg);
    if (st != CONV_OK)
        return st;
    conv2d_prefetch_5a_kernel<F, KC>
        <<<(unsigned)l->plan.blocks, block, l->plan.smem_bytes, l->stream>>>(l->d_x, l->d_w, l->d_y,
                                                                             l->args);
    return CONV_OK;
}

template <int KC> static conv_status launch_filter(const prefetch_launch *l, conv_msg *msg)
{
    switch (l->plan.filter) {
    case 3: return launch<3, KC>(l, msg);
    case 5: return launch<5, KC>(l, msg);
    case 6: return launch<6, KC>(l, msg);
    case 7: return launch<7, KC>(l, msg);
    default: return launch<0, KC>(l, msg);
    }
}

/* Both launchers: validate once (the plan), launch, check the launch. */
static conv_status run_5a(conv_prefetch_variant v, const conv_params *p, const float *d_x,
                          const float *d_w, float *d_y, cudaStream_t stream, conv_msg *msg)
{
    prefetch_launch l;
    conv_status st = prefetch_prepare(v, p, d_x, d_w, d_y, stream, &l, msg);
    if (st != CONV_OK)
        return st;
    st = v == CONV_PREFETCH_5A_OC_OUTER ? launch_filter<1>(&l, msg)
                                        : launch_filter<CONV_PREFETCH_5A_KC>(&l, msg);
    if (st != CONV_OK)
        return st;
    CONV_CHECK_LAUNCH("conv2d_prefetch_5a_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_prefetch_5a(const conv_params *p, const float *d_x, const float *d_w,
                                          float *d_y, cudaStream_t stream, conv_msg *msg)
{
    return run_5a(CONV_PREFETCH_5A, p, d_x, d_w, d_y, stream, msg);
}

extern "C" conv_status conv2d_prefetch_5a_lecture_order(const conv_params *p, const float *d_x,
                                                        const float *d_w, float *d_y,
                                                        cudaStream_t stream, conv_msg *msg)
{
    return run_5a(CONV_PREFETCH_5A_OC_OUTER, p, d_x, d_w, d_y, stream, msg);
}

/* Step 05. Versions: 5a, 5b.
 *
 * The device side shared by kernels 5a and 5b: the arguments, the
 * "equal split" loader of one input channel's tile (float4 pieces spread
 * evenly over the block's threads, staged in registers so that the load of
 * the next channel overlaps the computation of the current one), and the
 * asynchronous copy of one channel's weights into shared memory.
 *
 * Shared input tile layout (one buffer; each kernel has two):
 *   row i of the tile = image row gy0 + i, at smem + i*stride;
 *   column j          = image column gx0 + j, at smem + i*stride + 4 + j.
 * Each row has 4 floats of margin on both sides, so a float4 piece whose
 * first or last floats fall outside the columns the block needs can be
 * stored whole without a test (the margins are never read). Images are zero
 * outside their bounds: the loader writes zeros there (that is the padding). */
#ifndef PREFETCH_TILE_CUH
#define PREFETCH_TILE_CUH

#include <stdint.h>

#include "conv_device.h"
#include "conv_prefetch.h"

/* The problem and the geometry, by value (kernel parameters live in constant
 * memory); the tensors are separate kernel arguments. p, q are the output
 * height and width, w_ the image width. */
typedef struct {
    int n, c, h, w_, k, r, s, pad_h, pad_w, p, q;
    int col_blocks, row_blocks, k_chunks;
    int bw, bh;                 /* output tile of a regular block */
    int tile_rows, tile_stride; /* shared input buffer: rows x stride floats */
} prefetch_args;

/* Host side: everything one launch needs. */
typedef struct {
    conv_prefetch_plan plan;
    prefetch_args args;
    const float *d_x, *d_w;
    float *d_y;
    cudaStream_t stream;
} prefetch_launch;

/* The arguments of a launch from the problem and its plan. */
static inline prefetch_args prefetch_args_make(const conv_params *p, const conv_prefetch_plan *pl)
{
    prefetch_args a;
    a.n = p->n, a.c = p->c, a.h = p->h, a.w_ = p->w, a.k = p->k, a.r = p->r, a.s = p->s;
    a.pad_h = p->pad_h, a.pad_w = p->pad_w, a.p = conv_out_h(p), a.q = conv_out_w(p);
    a.col_blocks = pl->col_blocks, a.row_blocks = pl->row_blocks, a.k_chunks = pl->k_chunks;
    a.bw = pl->bw, a.bh = pl->bh, a.tile_rows = pl->tile_rows, a.tile_stride = pl->tile_stride;
    return a;
}

/* What both launchers do before their launch: check the pointers, plan for
 * this device's shared memory (conv_smem_limit), fill the kernel's
 * arguments. */
static inline conv_status prefetch_prepare(conv_prefetch_variant v, const conv_params *p,
                                           const float *d_x, const float *d_w, float *d_y,
                                           cudaStream_t stream, prefetch_launch *l, conv_msg *msg)
{
    conv_status st = conv2d_prefetch_check_pointers(d_x, d_w, d_y, msg);
    if (st == CONV_OK)
        st = conv2d_prefetch_plan(v, p, conv_smem_limit(), &l->plan, msg);
    if (st != CONV_OK)
        return st;
    l->args = prefetch_args_make(p, &l->plan);
    l->d_x = d_x, l->d_w = d_w, l->d_y = d_y, l->stream = stream;
    return CONV_OK;
}

/* One channel's tile for one block. */
typedef struct {
    int gy0, gx0; /* image coordinates of tile element (0, 0) */
    int ppr;      /* float4 pieces per row */
    int total;    /* rows * ppr: the pieces the block loads per channel */
    int stride;   /* floats per shared row, margins included */
} tile_geom;

/* The tile of `rows` x `cols` input elements starting at (gy0, gx0). A row's
 * pieces start on a 16-byte boundary of the image row, 0 to 3 floats before
 * gx0 (the shift), so covering cols floats takes ceil((cols + 3) / 4) pieces:
 * 4 * ppr >= cols + shift for every shift. */
__device__ __forceinline__ tile_geom tile_make(int gy0, int gx0, int rows, int cols, int stride)
{
    tile_geom g;
    g.gy0 = gy0;
    g.gx0 = gx0;
    /* exercise 05-tile begin: the pieces of one row, and of the tile */
    g.ppr = (cols + 6) / 4;
    g.total = rows * g.ppr;
    /* exercise 05-tile stub
    // TODO(exercise 05-tile): how many float4 pieces cover a row of cols floats whose
    // pieces may start up to 3 floats before gx0 (for every shift 0..3), and how many
    // pieces the whole tile of `rows` rows has. Graded by tests/test_05_prefetch_float4.c
    // (suite gpu_conv2d_prefetch).
    g.ppr = 0;
    g.total = 0;
       exercise 05-tile end */
    g.stride = stride;
    return g;
}

/* Reads piece i of the tile from the channel `plane` (H x W) and returns it;
 * *soff receives where its first float goes in the shared buffer.
 *
 * The piece boundaries of a row are those of 16-byte addresses: with m the
 * row start's misalignment in floats (0..3), the pieces start at image column
 * first = gx0 - shift, shift = (gx0 + m) mod 4, so &row[first + 4*piece] is
 * 16-byte aligned for every row, any W, any padding and any base pointer
 * offset. A piece wholly inside the row is one 16-byte load; a piece that
 * crosses the left or right edge of the image is read float by float with
 * zeros outside; a row outside the image is zeros. */
__device__ __forceinline__ float4 tile_fetch(const float *__restrict__ plane, int H, int W,
                                             const tile_geom *g, int i, int *soff)
{
    /* excerpt: tile-fetch */
    /* exercise 05-tile begin: piece i: its 16-byte aligned load and its place in the tile */
    const int row = i / g->ppr;
    const int piece = i - row * g->ppr;
    const int gy = g->gy0 + row;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    int shift = 0;
    if (gy >= 0 && gy < H) {
        const float *rp = plane + (size_t)gy * W;
        const int m = (int)(((uintptr_t)rp >> 2) & 3);
        shift = (g->gx0 + m) & 3;
        const int col = g->gx0 - shift + 4 * piece;
        if (col >= 0 && col + 3 < W) {
            v = *reinterpret_cast<const float4 *>(rp + col);
        } else {
            if (col >= 0 && col < W)
                v.x = rp[col];
            if (col + 1 >= 0 && col + 1 < W)
                v.y = rp[col + 1];
            if (col + 2 >= 0 && col + 2 < W)
                v.z = rp[col + 2];
            if (col + 3 >= 0 && col + 3 < W)
                v.w = rp[col + 3];
        }
    }
    *soff = row * g->stride + 4 - shift + 4 * piece;
    return v;
    /* exercise 05-tile stub
    // TODO(exercise 05-tile): piece i is piece (i mod ppr) of tile row (i / ppr), image
    // row gy0 + row (zeros outside [0, H)). Its first column is gx0 - shift + 4 * piece,
    // shift chosen so that the address is 16-byte aligned (the row start's own
    // misalignment counts: (uintptr_t)rp). Inside [0, W) it is one float4 load, across an
    // edge four guarded scalar loads. *soff: where its first float goes, in row `row` of
    // the buffer (g->stride floats per row, 4 floats of margin on the left, so image column
    // gx0 sits at offset 4). Graded by tests/test_05_prefetch_float4.c (suite gpu_conv2d_prefetch).
    *soff = 0;
    return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
       exercise 05-tile end */
    /* excerpt end: tile-fetch */
}

__device__ __forceinline__ void tile_put(float *s, int soff, float4 v)
{
    s[soff] = v.x;
    s[soff + 1] = v.y;
    s[soff + 2] = v.z;
    s[soff + 3] = v.w;
}

/* The equal split, first half: thread tid takes pieces tid, tid + nt, ...
 * The first ITEMS of them are read into registers (the loads are in flight
 * while the thread goes on to compute). */
template <int ITEMS>
__device__ __forceinline__ void tile_stage(float4 (&v)[ITEMS], int (&soff)[ITEMS],
                                           const float *__restrict__ plane, int H, int W,
                                           const tile_geom *g, int tid, int nt)
{
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        const int i = tid + it * nt;
        if (i < g->total)
            v[it] = tile_fetch(plane, H, W, g, i, &soff[it]);
    }
}

/* Second half: the staged pieces go to the shared buffer `s`; pieces beyond
 * ITEMS per thread (only for tall thin tiles) are read and stored now. */
template <int ITEMS>
__device__ __forceinline__ void tile_commit(const float4 (&v)[ITEMS], const int (&soff)[ITEMS],
                                            float *s, const float *__restrict__ plane, int H, int W,
                                            const tile_geom *g, int tid, int nt)
{
#pragma unroll
    for (int it = 0; it < ITEMS; ++it)
        if (tid + it * nt < g->total)
            tile_put(s, soff[it], v[it]);
    for (int i = tid + ITEMS * nt; i < g->total; i += nt) {
        int off;
        const float4 t = tile_fetch(plane, H, W, g, i, &off);
        tile_put(s, off, t);
    }
}

/* cp.async (sm_80 and later): a global-to-shared copy that needs no register
 * and completes in the background; cp.async.wait_all makes this thread's
 * copies complete, the next __syncthreads() makes them visible to all.
 * Before sm_80 (Turing) there is no such instruction: the fallback is an
 * ordinary load into a register and a store to shared memory, which is just
 * as correct but not asynchronous: the thread waits for the load at the store,
 * so the next channel's weights are no longer fetched in the shadow of the
 * current channel's arithmetic (the input tile still is, through registers). */
/* excerpt: cp-async */
__device__ __forceinline__ void cp_async_f32(float *smem_dst, const float *gmem_src)
{
#if __CUDA_ARCH__ >= 800
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem_dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(gmem_src) : "memory");
#else
    *smem_dst = __ldg(gmem_src);
#endif
}
/* excerpt end: cp-async */

__device__ __forceinline__ void cp_async_commit(void)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void cp_async_wait_all(void)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

/* One channel's weights for output channels k0 .. k0+kcount-1 into the shared
 * layout ws[(r*S + s)*KCP + k] (the KCP channels of one filter tap side by
 * side, so one float4 load gives four output channels' weights); channels past
 * kcount get zeros. Consecutive threads read consecutive global weights. */
__device__ __forceinline__ void weights_fetch_async(float *ws, const float *__restrict__ w, int C,
                                                    int RS, int c, int k0, int kcount, int kcp,
                                                    int tid, int nt)
{
    for (int i = tid; i < kcp * RS; i += nt) {
        const int k = i / RS;
        const int rs = i - k * RS;
        float *dst = ws + rs * kcp + k;
        if (k < kcount)
            cp_async_f32(dst, w + ((size_t)(k0 + k) * C + c) * RS + rs);
        else
            *dst = 0.0f;
    }
    cp_async_commit();
}

#endif /* PREFETCH_TILE_CUH */

/* Step 09, 9b: 9a's wgmma product with its copies made by the Tensor Memory
 * Accelerator (TMA; PTX ISA, "cp.async.bulk.tensor") and its warps split
 * into a producer and consumers (hopper.h).
 *
 * One thread issues a TMA copy of a whole box, described once on the host by
 * a tensor map (for x in im2col mode: 256 output pixels x 32 channels of one
 * filter tap). Warpgroup 2 is the producer, whose first thread issues every
 * copy; warpgroups 0 and 1, the consumers, issue the wgmmas. Two mbarriers per
 * buffer ("full", "empty") hand the stages over, with no __syncthreads() in
 * the main loop; setmaxnreg gives the consumers the producer's registers.
 * The blocks are persistent (one per SM, each taking every gridDim.x-th tile),
 * and the consumers store float4s after a transpose across lanes (shfl.xor).
 *
 * The tile, the products and the error bound are 9a's. A problem no tensor map
 * describes (tc_tma_fits()) runs 9a instead, so conv2d_tc_tma() takes any shape.
 *
 * 9c is the same kernel with its sum split: where the output tiles are fewer
 * than the SMs, each tile's stages are cut into slices, one work item per
 * (tile, slice), each slice's partial tile goes to a workspace, and a second
 * kernel adds the slices in a fixed order (split-K, deterministic).
 *
 * Lessons: docs/09_hopper.md, sections "9b: TMA copies and warps in roles" and
 * "9c: split the sum where tiles are few". */
#include "hopper.h"

#include <stdint.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_check.h"
#include "tc_geom.cuh"
#include "tc_ptx.cuh"
#include "tc_tma.cuh"
#include "tc_wgmma.cuh"

#define TC9B_BM        256 /* pixels per block: wgmma's N */
#define TC9B_BN        128 /* output channels per block: 2 warpgroups x 64 */
#define TC9B_BK        32  /* channels per stage: one 128-byte swizzled row per pixel */
#define TC9B_STAGES    4
#define TC9B_THREADS   384                     /* 2 consumer warpgroups + 1 producer warpgroup */
#define TC9B_ACT_BYTES (TC9B_BM * TC9B_BK * 4) /* 32 KB: 256 pixel rows of 128 bytes */
#define TC9B_WTS_BYTES (TC9B_BK * TC9B_BN * 4) /* 16 KB: 4 boxes of 32 j x 32 channels */
#define TC9B_BOX_BYTES (TC9B_BK * 32 * 4)      /* 4 KB */
/* 1 KB of slack to align the stages to 1024 bytes, the stages, the barriers */
#define TC9B_SMEM (1024 + TC9B_STAGES * (TC9B_ACT_BYTES + TC9B_WTS_BYTES) + 2 * TC9B_STAGES * 8)

/* The stages of one tile's sum: 32 channels of one tap each, rounded up to
 * even (the consumers' loop is unrolled by two; the extra one is padding). */
__host__ __device__ static inline int tma_stages(int r, int s, int c)
{
    return (r * s * ((c + TC9B_BK - 1) / TC9B_BK) + 1) / 2 * 2;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ float lds_f32(unsigned addr)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

/* excerpt: producer */
/* The producer (one thread): for every stage of the block's tiles, wait
 * until its buffer is free, announce its bytes, start its five copies. `it`
 * counts the stages the block has produced, across its tiles: buffer
 * it % TC9B_STAGES, in its (it / TC9B_STAGES)-th use. Stage kt of a tile is
 * tap kt / cch, channels 32 (kt % cch) on; the last stage of an odd count is
 * padding (tap == taps), its boxes wholly outside x and w: zeros. A work
 * item is stages kb .. ke - 1 of one tile (all of them, unless 9c splits
 * the sum). */
__device__ __forceinline__ void produce(const CUtensorMap *xmap, const CUtensorMap *wmap,
                                        unsigned act, unsigned wts, unsigned full, unsigned empty,
                                        const tc_geom &g, long long m0, int k0, int kb, int ke,
                                        int &it)
{
    const long long pq = (long long)g.p * g.q;
    const int n = (int)(m0 / pq), rem = (int)(m0 % pq);
    const int h = (rem / g.q) * g.stride_h - g.pad_h, w = (rem % g.q) * g.stride_w - g.pad_w;
    const int cch = (g.c + TC9B_BK - 1) / TC9B_BK;
    for (int kt = kb; kt < ke; ++kt, ++it) {
        const int st = it % TC9B_STAGES;
        if (it >= TC9B_STAGES) /* the consumers' release of this buffer's last use */
            mbar_wait(empty + 8 * st, (it / TC9B_STAGES - 1) & 1);
        mbar_expect(full + 8 * st, TC9B_ACT_BYTES + TC9B_WTS_BYTES);
        const int tap = kt / cch, taps = g.r * g.s; /* tap == taps: a padding stage, zeros */
        const int c = tap < taps ? (kt % cch) * TC9B_BK : cch * TC9B_BK;
        const int r = tap < taps ? tap / g.s : 0, s = tap < taps ? tap % g.s : 0;
        tma_im2col(act + st * TC9B_ACT_BYTES, xmap, full + 8 * st, c, w, h, n, s * g.dil_w,
                   r * g.dil_h);
#pragma unroll
        for (int b = 0; b < TC9B_BN / 32; ++b)
            tma_tile(wts + st * TC9B_WTS_BYTES + b * TC9B_BOX_BYTES, wmap, full + 8 * st,
                     k0 + 32 * b, c, tap);
    }
}
/* excerpt end: producer */

/* One stage for a consumer warp: wait for its bytes, load the warp's weight
 * fragments (rounded), issue the warpgroup's 4 wgmmas, then wait for the
 * previous stage's wgmmas (one group stays in flight) and release that
 * stage's buffer: its activations were read by those wgmmas, its weights
 * by this warp's loads.
 *
 * The weights arrive as TMA wrote them: box b (channels 32b .. 32b + 31) of
 * 32 rows j, each row 128 bytes, 16-byte chunk c of row j in slot c ^ (j % 8).
 * Lane 4g + t reads rows j = t and t + 4 (of each 8) for two channels. A
 * warp's 32 reads of one fragment register hit 32 different banks when its
 * rows 0-7 of the 16 are the channels of chunks c0 and c0 + 4 and its rows
 * 8-15 those of chunks c0 + 1 and c0 + 5 (c0 even): so the wgmma's row i is
 * a permuted channel, and the stores at the end follow the same map. fa[]
 * holds where the four values of k-step 0 are (the kernel works them out). */
/* A consumer warp's release of a buffer: its one arrival on "empty". */
__device__ __forceinline__ void release(unsigned empty_bar, int lane)
{
    __syncwarp();
    if (lane == 0)
        mbar_arrive(empty_bar);
}

__device__ __forceinline__ void consume(float acc[128], unsigned frag[16], int it, bool first,
                                        unsigned act, unsigned wts, unsigned full, unsigned empty,
                                        const unsigned fa[4], int lane)
{
    const int st = it % TC9B_STAGES;
    mbar_wait(full + 8 * st, (it / TC9B_STAGES) & 1);
    const unsigned wb = wts + st * TC9B_WTS_BYTES;
#pragma unroll
    for (int ks = 0; ks < TC9B_BK / 8; ++ks)
#pragma unroll
        for (int e = 0; e < 4; ++e)
            frag[4 * ks + e] = to_tf32(lds_f32(wb + fa[e] + 1024 * ks));
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < TC9B_BK / 8; ++ks)
        wgmma_m64n256k8(acc, &frag[4 * ks], wgmma_desc(act + st * TC9B_ACT_BYTES + 32 * ks));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    if (!first) /* the stage before, it - 1 */
        release(empty + 8 * ((it + TC9B_STAGES - 1) % TC9B_STAGES), lane);
}
#endif

/* y = conv(x, w) in work items of (tile, slice): slice z of a tile is its
 * stages z span .. z span + span - 1 (span even). With one slice (9b) an
 * item is a whole tile, stored into y; with more (9c) slice z's partial
 * tile goes to part + z M K, laid out as y, for conv2d_tc_tma_reduce_kernel. */
__global__ void __launch_bounds__(TC9B_THREADS, 1)
    conv2d_tc_tma_kernel(const __grid_constant__ CUtensorMap xmap,
                         const __grid_constant__ CUtensorMap wmap, float *__restrict__ y,
                         float *__restrict__ part, tc_geom g, int splits, int span)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ float4 smem4[];
    unsigned char *raw = (unsigned char *)smem4;
    unsigned char *base = raw + ((1024 - (smem_addr(raw) & 1023)) & 1023); /* 1024-aligned */
    const unsigned act = smem_addr(base);
    const unsigned wts = act + TC9B_STAGES * TC9B_ACT_BYTES;
    const unsigned full = smem_addr(base + TC9B_STAGES * (TC9B_ACT_BYTES + TC9B_WTS_BYTES));
    const unsigned empty = full + 8 * TC9B_STAGES;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    /* the block's work items: blockIdx.x, then every gridDim.x-th; item i
     * is tile i % tiles (pixels first), slice i / tiles */
    const int mtiles = (int)((g.m + TC9B_BM - 1) / TC9B_BM);
    const int tiles = mtiles * ((g.k + TC9B_BN - 1) / TC9B_BN);
    const int items = tiles * splits;
    const int kts = tma_stages(g.r, g.s, g.c);

    if (tid == 0)
        mbar_init_ring(full, empty, TC9B_STAGES, 8);
    __syncthreads();

    /* excerpt: roles */
    if (warp >= 8) { /* the producer warpgroup: gives registers back; one thread copies */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (warp == 8 && lane == 0) {
            int it = 0;
            for (int item = blockIdx.x; item < items; item += gridDim.x) {
                const int tile = item % tiles, kb = item / tiles * span;
                produce(&xmap, &wmap, act, wts, full, empty, g,
                        (long long)(tile % mtiles) * TC9B_BM, (tile / mtiles) * TC9B_BN, kb,
                        min(kb + span, kts), it);
            }
        }
        return;
    }

    /* the consumers: warpgroup wg (warps 4 wg .. 4 wg + 3) computes channels
     * 64 wg .. 64 wg + 63 of the block's 128, in weight boxes 2 wg, 2 wg + 1 */
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    /* excerpt end: roles */
    const int wg = warp >> 2, wq = warp & 3, gr = lane >> 2, t = lane & 3;
    const int box = 2 * wg + (wq >> 1);
    const int c0 = 2 * (wq & 1) + 4 * (gr >> 2); /* chunk of rows 0-7; rows 8-15: c0 + 1 */
    /* where lane 4 gr + t's four fragment values of k-step 0 are, from a
     * stage's weights: rows t and t + 4 of the box, chunks c0 and c0 + 1 (as
     * swizzled: XOR the row % 8), float gr % 4 of the chunk */
    const unsigned x = c0 ^ t, at = box * TC9B_BOX_BYTES + t * 128 + 4 * (gr & 3);
    const unsigned fa[4] = {at + (x << 4), at + ((x ^ 1) << 4), at + 512 + ((x ^ 4) << 4),
                            at + 512 + ((x ^ 5) << 4)};
    const bool hi = gr & 1, right = gr & 2; /* this lane's place in its quad: bits of gr % 4 */
    int it = 0;                             /* the stages consumed, as the producer counts */
    for (int item = blockIdx.x; item < items; item += gridDim.x) {
        const int tile = item % tiles, slice = item / tiles;
        const long long m0 = (long long)(tile % mtiles) * TC9B_BM;
        const int k0 = (tile / mtiles) * TC9B_BN;
        const int kb = slice * span, ke = min(kb + span, kts);
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; ++i)
            acc[i] = 0.0f;
        /* two sets of fragment registers, as in 9a: a wgmma may still read one
         * while the next stage's weights go into the other */
        unsigned frag_even[16], frag_odd[16];
        for (int kt = kb; kt < ke; kt += 2, it += 2) {
            consume(acc, frag_even, it, kt == kb, act, wts, full, empty, fa, lane);
            consume(acc, frag_odd, it + 1, false, act, wts, full, empty, fa, lane);
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        release(empty + 8 * ((it - 1) % TC9B_STAGES), lane); /* the tile's last stage */
#pragma unroll
        for (int i = 0; i < 128; ++i)
            asm volatile("" : "+f"(acc[i])::"memory");

        /* excerpt: stores */
        /* acc[4i + v]: pixel 8i + 2t + v % 2, wgmma row 16 wq + gr + 8 (v / 2),
         * which is channel 32 box + 8 (wq % 2) + 16 (gr / 4) + gr % 4 + 4 (v / 2).
         * The quad of lanes gr % 4 = 0 .. 3 (same t, same gr / 4) holds, for
         * each i, 2 pixels x 8 channels: 4 float4s, one per lane after a 4 x 4
         * transpose across the quad (two exchanges with shfl.xor). Lane q
         * then stores pixel 8i + 2t + q / 2, channels kq .. kq + 3. */
        const int kq = k0 + 32 * box + 8 * (wq & 1) + 16 * (gr >> 2) + 4 * (gr & 1);
        float *out = splits > 1 ? part + (long long)slice * g.m * g.k : y; /* 9c: the slice's */
#pragma unroll
        for (int i = 0; i < TC9B_BM / 8; ++i) {
            /* row q of the transpose: v (q's bits swapped), so that lane q'
             * ends with element q' of every row */
            float e0 = acc[4 * i], e1 = acc[4 * i + 2], e2 = acc[4 * i + 1], e3 = acc[4 * i + 3];
            /* exchange 1, with the lane 1 apart in the quad: the 2 x 2 blocks' corners */
            float s0 = __shfl_xor_sync(0xffffffffu, hi ? e0 : e1, 4);
            float s1 = __shfl_xor_sync(0xffffffffu, hi ? e2 : e3, 4);
            e0 = hi ? s0 : e0, e1 = hi ? e1 : s0, e2 = hi ? s1 : e2, e3 = hi ? e3 : s1;
            /* exchange 2, with the lane 2 apart: the off-diagonal 2 x 2 blocks */
            s0 = __shfl_xor_sync(0xffffffffu, right ? e0 : e2, 8);
            s1 = __shfl_xor_sync(0xffffffffu, right ? e1 : e3, 8);
            e0 = right ? s0 : e0, e1 = right ? s1 : e1, e2 = right ? e2 : s0, e3 = right ? e3 : s1;
            const long long m = m0 + 8 * i + 2 * t + (right ? 1 : 0);
            if (m < g.m && kq < g.k)
                *(float4 *)(out + m * g.k + kq) = make_float4(e0, e1, e2, e3);
        }
        /* excerpt end: stores */
    }
#endif
}

/* excerpt: split reduce */
/* 9c's end: y = slice 0 + slice 1 + ... + slice splits - 1, always in that
 * order, so every run gives the same bits whichever block finished first.
 * Four floats a thread (M K is a multiple of 4: K is, for the tensor maps). */
__global__ void conv2d_tc_tma_reduce_kernel(const float4 *__restrict__ part, float4 *__restrict__ y,
                                            long long n4, int splits)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n4; e += step) {
        float4 sum = part[e];
        for (int z = 1; z < splits; ++z) {
            const float4 v = part[z * n4 + e];
            sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
        }
        y[e] = sum;
    }
}
/* excerpt end: split reduce */

/* excerpt: tma fits */
extern "C" int tc_tma_fits(const conv_params *p, const float *d_x, const float *d_w,
                           const float *d_y)
{
    /* a tensor map's rows are 16-byte aligned (and so are the float4 stores
     * of y); a 4-D im2col map holds window corners in [-128, 127] and
     * traversal strides up to 8 */
    const int up_h = p->pad_h - (p->r - 1) * p->dil_h, up_w = p->pad_w - (p->s - 1) * p->dil_w;
    return p->c % 4 == 0 && p->k % 4 == 0 &&
           ((uintptr_t)d_x | (uintptr_t)d_w | (uintptr_t)d_y) % 16 == 0 && p->pad_h <= 128 &&
           p->pad_w <= 128 && up_h >= -128 && up_w >= -128 && up_h <= 127 && up_w <= 127 &&
           p->stride_h <= 8 && p->stride_w <= 8;
}
/* excerpt end: tma fits */

/* excerpt: tensor maps */
/* x as a 4-D tensor {C, W, H, N} (innermost first) read in im2col mode,
 * 32 channels x 256 pixels a copy: the window corners run from -pad to
 * pad - (filter - 1) * dil past the far edge, by the stride. w as a 3-D
 * tensor {K, C, R*S} read in 32 x 32 tiles. Both with the 128-byte swizzle;
 * what lies outside reads as 0. */
static conv_status tma_maps(const conv_params *p, const float *d_x, const float *d_w,
                            CUtensorMap *xmap, CUtensorMap *wmap, conv_msg *msg)
{
    PFN_cuTensorMapEncodeIm2col_v12000 im2col = NULL;
    PFN_cuTensorMapEncodeTiled_v12000 tiled = NULL;
    conv_status st = tma_encoders(&im2col, &tiled, "9b wgmma TF32, TMA", msg);
    if (st != CONV_OK)
        return st;
    const cuuint64_t c = (cuuint64_t)p->c, k = (cuuint64_t)p->k;
    const cuuint64_t xdim[4] = {c, (cuuint64_t)p->w, (cuuint64_t)p->h, (cuuint64_t)p->n};
    const cuuint64_t xstride[3] = {c * 4, c * p->w * 4, c * p->w * p->h * 4};
    const int lower[2] = {-p->pad_w, -p->pad_h};
    const int upper[2] = {p->pad_w - (p->s - 1) * p->dil_w, p->pad_h - (p->r - 1) * p->dil_h};
    const cuuint32_t xstep[4] = {1, (cuuint32_t)p->stride_w, (cuuint32_t)p->stride_h, 1};
    CUresult r =
        im2col(xmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, (void *)d_x, xdim, xstride, lower, upper,
               TC9B_BK, TC9B_BM, xstep, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r == CUDA_SUCCESS) {
        const cuuint64_t wdim[3] = {k, c, (cuuint64_t)p->r * p->s};
        const cuuint64_t wstride[2] = {k * 4, k * c * 4};
        const cuuint32_t box[3] = {32, TC9B_BK, 1}, wstep[3] = {1, 1, 1};
        r = tiled(wmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, (void *)d_w, wdim, wstride, box, wstep,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    }
    if (r != CUDA_SUCCESS)
        return conv_fail(msg, CONV_ERR_CUDA, "9b wgmma TF32, TMA: a tensor map was refused (%d)",
                         (int)r);
    return CONV_OK;
}
/* excerpt end: tensor maps */

extern "C" conv_status tc_tma_available(conv_msg *msg)
{
    return tc_wgmma_runs((const void *)conv2d_tc_tma_kernel, "9b wgmma TF32, TMA",
                         "conv2d_tc_tma_kernel", TC9B_THREADS, TC9B_SMEM, msg);
}

/* The slices 9c cuts a tile's `stages` into when asked for `splits`: each
 * an even span of at least two stages (the last may be shorter), at most
 * TC9C_MAX_SPLITS; 1 means no split. */
static int tma_span(int stages, int splits)
{
    if (splits > TC9C_MAX_SPLITS)
        splits = TC9C_MAX_SPLITS;
    if (splits > stages / 2)
        splits = stages / 2;
    if (splits < 1)
        splits = 1;
    return ((stages + splits - 1) / splits + 1) / 2 * 2;
}

static int tma_slices(const conv_params *p, int splits)
{
    const int stages = tma_stages(p->r, p->s, p->c), span = tma_span(stages, splits);
    return (stages + span - 1) / span;
}

static long long tma_tiles(const conv_params *p)
{
    const long long m = (long long)p->n * conv_out_h(p) * conv_out_w(p);
    return (m + TC9B_BM - 1) / TC9B_BM * ((p->k + TC9B_BN - 1) / TC9B_BN);
}

extern "C" int conv2d_tc_tma_splits(const conv_params *p, int sm_count)
{
    if (p == NULL || sm_count < 1 || conv_params_validate(p, NULL) != CONV_OK)
        return 1;
    /* one wave: as many slices as fit beside the tiles on the SMs, each at
     * least TC9C_MIN_SLICE_STAGES stages deep */
    const long long tiles = tma_tiles(p), fit = sm_count / tiles;
    const int deep = tma_stages(p->r, p->s, p->c) / TC9C_MIN_SLICE_STAGES;
    const long long want = fit < deep ? fit : deep;
    return want > 1 ? tma_slices(p, (int)(want < TC9C_MAX_SPLITS ? want : TC9C_MAX_SPLITS)) : 1;
}

extern "C" size_t conv2d_tc_tma_split_workspace(const conv_params *p, int splits)
{
    if (p == NULL || conv_params_validate(p, NULL) != CONV_OK || !tc_tma_fits(p, NULL, NULL, NULL))
        return 0;
    const int slices = tma_slices(p, splits);
    return slices > 1 ? (size_t)slices * conv_output_elems(p) * sizeof(float) : 0;
}

/* 9b (splits 1, no workspace) and 9c: the tensor maps, the persistent
 * blocks over the work items, then for 9c the slices' sum. */
static conv_status tma_launch(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                              int splits, float *d_part, cudaStream_t stream, conv_msg *msg)
{
    CUtensorMap xmap, wmap;
    conv_status st = tma_maps(p, d_x, d_w, &xmap, &wmap, msg);
    if (st != CONV_OK)
        return st;
    /* persistent blocks: as many as the GPU holds at once, each taking
     * every gridDim.x-th work item */
    tc_geom g = tc_make_geom(p);
    const int stages = tma_stages(p->r, p->s, p->c), span = tma_span(stages, splits);
    splits = (stages + span - 1) / span;
    dim3 grid;
    if ((st = tma_persistent_grid((const void *)conv2d_tc_tma_kernel, TC9B_THREADS, TC9B_SMEM,
                                  tma_tiles(p) * splits, &grid, msg)) != CONV_OK)
        return st;
    float *part = splits > 1 ? d_part : NULL;
    void *args[] = {(void *)&xmap, (void *)&wmap,   (void *)&d_y, (void *)&part,
                    (void *)&g,    (void *)&splits, (void *)&span};
    CONV_CUDA_CHECK(cudaLaunchKernel((const void *)conv2d_tc_tma_kernel, grid, dim3(TC9B_THREADS),
                                     args, TC9B_SMEM, stream),
                    msg);
    CONV_CHECK_LAUNCH("conv2d_tc_tma_kernel", msg);
    if (splits > 1) {
        const long long n4 = (long long)conv_output_elems(p) / 4;
        const long long blocks = (n4 + 255) / 256;
        conv2d_tc_tma_reduce_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(
            (const float4 *)d_part, (float4 *)d_y, n4, splits);
        CONV_CHECK_LAUNCH("conv2d_tc_tma_reduce_kernel", msg);
    }
    return CONV_OK;
}

extern "C" conv_status conv2d_tc_tma(const conv_params *p, const float *d_x, const float *d_w,
                                     float *d_y, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = tc_check_call(p, d_x, d_w, d_y, msg);
    if (st == CONV_OK)
        st = tc_tma_available(msg);
    if (st != CONV_OK)
        return st;
    if (!tc_tma_fits(p, d_x, d_w, d_y)) /* no tensor map for it: 9a's copies */
        return conv2d_tc_wgmma(p, d_x, d_w, d_y, stream, msg);
    return tma_launch(p, d_x, d_w, d_y, 1, NULL, stream, msg);
}

extern "C" conv_status conv2d_tc_tma_split(const conv_params *p, const float *d_x, const float *d_w,
                                           float *d_y, int splits, float *d_work, size_t work_bytes,
                                           cudaStream_t stream, conv_msg *msg)
{
    conv_status st = tc_check_call(p, d_x, d_w, d_y, msg);
    if (st == CONV_OK)
        st = tc_tma_available(msg);
    if (st != CONV_OK)
        return st;
    if (!tc_tma_fits(p, d_x, d_w, d_y)) /* no tensor map for it: 9a's copies, unsplit */
        return conv2d_tc_wgmma(p, d_x, d_w, d_y, stream, msg);
    if (splits <= 0) {
        int sms = 0;
        CONV_CUDA_CHECK(
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, conv_current_device()),
            msg);
        splits = conv2d_tc_tma_splits(p, sms);
    }
    const size_t need = conv2d_tc_tma_split_workspace(p, splits);
    if (need > 0 && (d_work == NULL || work_bytes < need))
        return conv_fail(
            msg, CONV_ERR_INVALID, "invalid workspace: 9c's %d slices need %zu bytes, %zu given%s",
            tma_slices(p, splits), need, work_bytes, d_work == NULL ? " (d_work is NULL)" : "");
    if (need > 0 && (uintptr_t)d_work % 16 != 0)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid workspace: d_work is not 16-byte aligned");
    return tma_launch(p, d_x, d_w, d_y, need > 0 ? splits : 1, d_work, stream, msg);
}

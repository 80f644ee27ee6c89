/* Step 09, 9b-fp16: 9b in half precision (hopper.h).
 *
 * The kernel reads step 08's FP16 copies (conv2d_tc_fp16_copies(): x as it
 * is, the filter as KRSC, each rounded to nearest), and both operands of
 * its wgmma come from shared memory: the weights too are K-major now, so a
 * TMA copy lays them out as wgmma reads them and no warp loads a fragment.
 * A stage is 64 channels of one filter tap: one 128-byte row per pixel, as
 * 9b's 32 floats, and one 128-byte row per output channel. Everything else
 * is 9b's: the tile (256 pixels x 128 output channels), a producer
 * warpgroup and two consumers handing four stages over with mbarriers,
 * persistent blocks, float accumulators.
 *
 * The output leaves by TMA too: each consumer warpgroup writes 32 pixels x
 * its 64 channels of floats into one half of its buffer in shared memory,
 * and one thread hands them to the TMA unit, which writes them to y while
 * the warpgroup fills the other half with the next 32 pixels, and goes on
 * to its next tile. A problem no tensor map describes
 * (tc_tma_fp16_fits()) runs 8b-fp16 on the same copies.
 *
 * Lesson: docs/09_hopper.md, section "9b in half precision". */
#include "hopper.h"

#include <limits.h>
#include <stdint.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_check.h"
#include "tc_geom.cuh"
#include "tc_ptx.cuh"
#include "tc_tma.cuh"
#include "tc_wgmma.cuh"
#include "tensor_cores.h"

#define TC9H_BM 256 /* pixels per block: wgmma's N */
#define TC9H_BN 128 /* output channels per block: 2 warpgroups x wgmma's M = 64 */
#define TC9H_BK 64  /* channels per stage: one 128-byte swizzled row of halves */
#ifndef TC9H_STAGES
#define TC9H_STAGES 4
#endif
#define TC9H_THREADS   384                     /* 2 consumer warpgroups + 1 producer warpgroup */
#define TC9H_ACT_BYTES (TC9H_BM * TC9H_BK * 2) /* 32 KB: 256 pixel rows of 128 bytes */
#define TC9H_WTS_BYTES (TC9H_BN * TC9H_BK * 2) /* 16 KB: 128 output-channel rows of 128 bytes */
/* The output's way out: per consumer warpgroup, 32 pixels x its 64 channels
 * of floats at a time, as two TMA boxes of 32 pixel rows x 32 channels
 * (128 bytes, swizzled), into one of two slots of its buffer. A build can
 * set others, e.g. -DTC9H_OUT_PX=16 -DTC9H_OUT_SLOTS=4 (the same 16 KB in
 * four slots of 16 pixels: two stores in flight while a third is written). */
#ifndef TC9H_OUT_PX
#define TC9H_OUT_PX 32
#endif
#ifndef TC9H_OUT_SLOTS
#define TC9H_OUT_SLOTS 2
#endif
#define TC9H_BOX_BYTES (TC9H_OUT_PX * 32 * 4)                /* 4 KB */
#define TC9H_OUT_BYTES (TC9H_OUT_SLOTS * 2 * TC9H_BOX_BYTES) /* 16 KB a warpgroup */
/* 1 KB of slack to align the stages to 1024 bytes, the stages, the output
 * buffers, the barriers: 225 KB of the 227 a block may have */
#define TC9H_SMEM                                                                                  \
    (1024 + TC9H_STAGES * (TC9H_ACT_BYTES + TC9H_WTS_BYTES) + 2 * TC9H_OUT_BYTES +                 \
     2 * TC9H_STAGES * 8)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* excerpt: fp16 producer */
/* The producer (one thread), as 9b's: stage kt of a tile is tap kt / cch,
 * channels 64 (kt % cch) on; two copies a stage, x's box of 256 pixels x
 * 64 channels and the weights' box of 128 output channels x 64 channels
 * (wk seen as {C, R*S, K}, innermost first). */
__device__ __forceinline__ void produce16(const CUtensorMap *xmap, const CUtensorMap *wmap,
                                          unsigned act, unsigned wts, unsigned full, unsigned empty,
                                          const tc_geom &g, long long m0, int k0, int kts, int &it)
{
    const long long pq = (long long)g.p * g.q;
    const int n = (int)(m0 / pq), rem = (int)(m0 % pq);
    const int h = (rem / g.q) * g.stride_h - g.pad_h, w = (rem % g.q) * g.stride_w - g.pad_w;
    const int cch = (g.c + TC9H_BK - 1) / TC9H_BK;
    for (int kt = 0; kt < kts; ++kt, ++it) {
        const int st = it % TC9H_STAGES;
        if (it >= TC9H_STAGES) /* the consumers' release of this buffer's last use */
            mbar_wait(empty + 8 * st, (it / TC9H_STAGES - 1) & 1);
        mbar_expect(full + 8 * st, TC9H_ACT_BYTES + TC9H_WTS_BYTES);
        const int tap = kt / cch, c = (kt % cch) * TC9H_BK, r = tap / g.s, s = tap % g.s;
        tma_im2col(act + st * TC9H_ACT_BYTES, xmap, full + 8 * st, c, w, h, n, s * g.dil_w,
                   r * g.dil_h);
        tma_tile(wts + st * TC9H_WTS_BYTES, wmap, full + 8 * st, c, tap, k0);
    }
}
/* excerpt end: fp16 producer */

/* A consumer warpgroup's release of a buffer: one arrival per warp. */
__device__ __forceinline__ void release16(unsigned empty_bar, int lane)
{
    __syncwarp();
    if (lane == 0)
        mbar_arrive(empty_bar);
}

__device__ __forceinline__ void sts_f32(unsigned addr, float v)
{
    asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
}

/* excerpt: tma store */
/* A TMA copy the other way: a box of y (32 pixels x 32 channels) from
 * shared memory, rows past M and channels past K left out. The thread that
 * starts it then waits only until the box has been read out of shared
 * memory (.read), not until it reaches global memory. */
__device__ __forceinline__ void tma_store(const CUtensorMap *map, unsigned src, int k, long long m)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
            (unsigned long long)map),
        "r"(k), "r"((int)m), "r"(src)
        : "memory");
}
/* excerpt end: tma store */

/* excerpt: fp16 consumer */
/* One stage for consumer warpgroup wg: wait for its bytes, start its 4 wgmmas
 * (16 channels each: 32 bytes further along both operands' rows), then wait
 * for the previous stage's and release its buffer. */
__device__ __forceinline__ void consume16(float acc[128], int it, bool first, unsigned act,
                                          unsigned wts, unsigned full, unsigned empty, int wg,
                                          int lane)
{
    const int st = it % TC9H_STAGES;
    mbar_wait(full + 8 * st, (it / TC9H_STAGES) & 1);
    const unsigned a = wts + st * TC9H_WTS_BYTES + wg * 64 * 128; /* the warpgroup's 64 rows */
    const unsigned b = act + st * TC9H_ACT_BYTES;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < TC9H_BK / 16; ++ks)
        wgmma_m64n256k16_f16(acc, wgmma_desc(a + 32 * ks), wgmma_desc(b + 32 * ks));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    if (!first) /* the stage before, it - 1 */
        release16(empty + 8 * ((it + TC9H_STAGES - 1) % TC9H_STAGES), lane);
}
/* excerpt end: fp16 consumer */
#endif

__global__ void __launch_bounds__(TC9H_THREADS, 1)
    conv2d_tc_tma_fp16_kernel(const __grid_constant__ CUtensorMap xmap,
                              const __grid_constant__ CUtensorMap wmap,
                              const __grid_constant__ CUtensorMap ymap, tc_geom g)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ float4 smem4[];
    unsigned char *raw = (unsigned char *)smem4;
    unsigned char *base = raw + ((1024 - (smem_addr(raw) & 1023)) & 1023); /* 1024-aligned */
    const unsigned act = smem_addr(base);
    const unsigned wts = act + TC9H_STAGES * TC9H_ACT_BYTES;
    const unsigned outs = wts + TC9H_STAGES * TC9H_WTS_BYTES; /* the two output buffers */
    const unsigned full = outs + 2 * TC9H_OUT_BYTES;
    const unsigned empty = full + 8 * TC9H_STAGES;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int mtiles = (int)((g.m + TC9H_BM - 1) / TC9H_BM);
    const int tiles = mtiles * ((g.k + TC9H_BN - 1) / TC9H_BN);
    const int kts = g.r * g.s * ((g.c + TC9H_BK - 1) / TC9H_BK);

    if (tid == 0)
        mbar_init_ring(full, empty, TC9H_STAGES, 8);
    __syncthreads();

    if (warp >= 8) { /* the producer warpgroup: gives registers back; one thread copies */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (warp == 8 && lane == 0) {
            int it = 0;
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x)
                produce16(&xmap, &wmap, act, wts, full, empty, g,
                          (long long)(tile % mtiles) * TC9H_BM, (tile / mtiles) * TC9H_BN, kts, it);
        }
        return;
    }

    /* the consumers: warpgroup wg computes output channels 64 wg .. 64 wg + 63 */
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int wg = warp >> 2, wq = warp & 3, gr = lane >> 2, t = lane & 3;
    const unsigned out = outs + wg * TC9H_OUT_BYTES; /* this warpgroup's */
    int it = 0; /* the stages consumed, as the producer counts */
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const long long m0 = (long long)(tile % mtiles) * TC9H_BM;
        const int k0 = (tile / mtiles) * TC9H_BN;
        float acc[128];
#pragma unroll
        for (int i = 0; i < 128; ++i)
            acc[i] = 0.0f;
        for (int kt = 0; kt < kts; ++kt, ++it)
            consume16(acc, it, kt == 0, act, wts, full, empty, wg, lane);
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        release16(empty + 8 * ((it - 1) % TC9H_STAGES), lane); /* the tile's last stage */
#pragma unroll
        for (int i = 0; i < 128; ++i)
            asm volatile("" : "+f"(acc[i])::"memory");

            /* excerpt: fp16 stores */
            /* acc[4i + v]: pixel 8i + 2t + v % 2, output channel ch = 16 wq + gr
             * + 8 (v / 2) of the warpgroup's 64. Four i at a time (a chunk of 32
             * pixels), every value into one half of the warpgroup's buffer, box
             * ch / 32, row = the pixel, its 16-byte chunk (ch % 32) / 4 moved by
             * the 128-byte swizzle (XOR the row % 8: the 32 lanes of a store hit
             * 32 banks); then one thread sends both boxes to y by TMA, and the
             * warpgroup fills the other half while the TMA unit reads this one.
             * Before a barrier the thread waits until the chunk before has been
             * read out: the half the chunk after the barrier will fill. */
#pragma unroll /* every acc index a constant: the accumulators stay in registers */
        for (int q = 0; q < TC9H_BM / TC9H_OUT_PX; ++q) {
            const unsigned half = out + (q % TC9H_OUT_SLOTS) * 2 * TC9H_BOX_BYTES;
#pragma unroll
            for (int i = 0; i < TC9H_OUT_PX / 8; ++i)
#pragma unroll
                for (int v = 0; v < 4; ++v) {
                    const int px = 8 * i + 2 * t + (v & 1), ch = 16 * wq + gr + 8 * (v >> 1);
                    const int chunk = (ch & 31) >> 2;
                    sts_f32(half + (ch >> 5) * TC9H_BOX_BYTES + px * 128 +
                                ((chunk ^ (px & 7)) << 4) + 4 * (ch & 3),
                            acc[4 * (TC9H_OUT_PX / 8 * q + i) + v]);
                }
            /* the writes seen by the TMA unit; the chunk before read out */
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            if (wq == 0 && lane == 0)
                asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(TC9H_OUT_SLOTS - 2)
                             : "memory");
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory");
            if (wq == 0 && lane == 0) { /* the boxes that hold any of y */
                const long long m = m0 + q * TC9H_OUT_PX;
                const int kb = k0 + 64 * wg;
                if (m < g.m && kb < g.k)
                    tma_store(&ymap, half, kb, m);
                if (m < g.m && kb + 32 < g.k)
                    tma_store(&ymap, half + TC9H_BOX_BYTES, kb + 32, m);
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
        }
        /* excerpt end: fp16 stores */
    }
    if (wq == 0 && lane == 0) /* every store done before the block ends */
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}

/* excerpt: fp16 fits */
extern "C" int tc_tma_fp16_fits(const conv_params *p, const float *d_y)
{
    /* the copies' rows 16-byte aligned (C % 8 == 0 halves), y's too (K % 4
     * == 0 floats, y 16-byte aligned) and its rows counted in an int; the
     * window and the strides within an im2col map's limits, as for 9b */
    const int up_h = p->pad_h - (p->r - 1) * p->dil_h, up_w = p->pad_w - (p->s - 1) * p->dil_w;
    const long long m = (long long)p->n * conv_out_h(p) * conv_out_w(p);
    return p->c % 8 == 0 && p->k % 4 == 0 && (uintptr_t)d_y % 16 == 0 && m <= INT_MAX &&
           p->pad_h <= 128 && p->pad_w <= 128 && up_h >= -128 && up_w >= -128 && up_h <= 127 &&
           up_w <= 127 && p->stride_h <= 8 && p->stride_w <= 8;
}
/* excerpt end: fp16 fits */

/* excerpt: fp16 tensor maps */
/* x's copy as 9b's x, in halves: 64 channels x 256 pixels a copy. The
 * filter's copy wk[k][r][s][c] as a 3-D tensor {C, R*S, K}, read in boxes of
 * 64 channels x 1 tap x 128 output channels: 128 rows of 128 bytes, K-major
 * as wgmma's first operand wants it. Both with the 128-byte swizzle; what
 * lies outside reads as 0. */
static conv_status tma_maps16(const conv_params *p, const void *xh, const void *wk, float *y,
                              CUtensorMap *xmap, CUtensorMap *wmap, CUtensorMap *ymap,
                              conv_msg *msg)
{
    PFN_cuTensorMapEncodeIm2col_v12000 im2col = NULL;
    PFN_cuTensorMapEncodeTiled_v12000 tiled = NULL;
    conv_status st = tma_encoders(&im2col, &tiled, "9b-fp16 wgmma FP16, TMA", msg);
    if (st != CONV_OK)
        return st;
    const cuuint64_t c = (cuuint64_t)p->c, taps = (cuuint64_t)p->r * p->s;
    const cuuint64_t xdim[4] = {c, (cuuint64_t)p->w, (cuuint64_t)p->h, (cuuint64_t)p->n};
    const cuuint64_t xstride[3] = {c * 2, c * p->w * 2, c * p->w * p->h * 2};
    const int lower[2] = {-p->pad_w, -p->pad_h};
    const int upper[2] = {p->pad_w - (p->s - 1) * p->dil_w, p->pad_h - (p->r - 1) * p->dil_h};
    const cuuint32_t xstep[4] = {1, (cuuint32_t)p->stride_w, (cuuint32_t)p->stride_h, 1};
    CUresult r =
        im2col(xmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, (void *)xh, xdim, xstride, lower, upper,
               TC9H_BK, TC9H_BM, xstep, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r == CUDA_SUCCESS) {
        const cuuint64_t wdim[3] = {c, taps, (cuuint64_t)p->k};
        const cuuint64_t wstride[2] = {c * 2, taps * c * 2};
        const cuuint32_t box[3] = {TC9H_BK, 1, TC9H_BN}, wstep[3] = {1, 1, 1};
        r = tiled(wmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, (void *)wk, wdim, wstride, box, wstep,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    }
    if (r == CUDA_SUCCESS) {
        const cuuint64_t ydim[2] = {(cuuint64_t)p->k,
                                    (cuuint64_t)p->n * conv_out_h(p) * conv_out_w(p)};
        const cuuint64_t ystride[1] = {(cuuint64_t)p->k * 4};
        const cuuint32_t box[2] = {32, TC9H_OUT_PX}, ystep[2] = {1, 1};
        r = tiled(ymap, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)y, ydim, ystride, box, ystep,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                  CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    }
    if (r != CUDA_SUCCESS)
        return conv_fail(msg, CONV_ERR_CUDA,
                         "9b-fp16 wgmma FP16, TMA: a tensor map was refused (%d)", (int)r);
    return CONV_OK;
}
/* excerpt end: fp16 tensor maps */

extern "C" conv_status tc_tma_fp16_available(conv_msg *msg)
{
    return tc_wgmma_runs((const void *)conv2d_tc_tma_fp16_kernel, "9b-fp16 wgmma FP16, TMA",
                         "conv2d_tc_tma_fp16_kernel", TC9H_THREADS, TC9H_SMEM, msg);
}

extern "C" conv_status conv2d_tc_tma_fp16_run(const conv_params *p, const float *d_x,
                                              const float *d_work, size_t work_elems, float *d_y,
                                              cudaStream_t stream, conv_msg *msg)
{
    conv_status st = conv2d_tc_fp16_check_work(p, d_work, work_elems, msg);
    if (st == CONV_OK)
        st = tc_check_call(p, d_x, d_work, d_y, msg);
    if (st == CONV_OK)
        st = tc_tma_fp16_available(msg);
    if (st != CONV_OK)
        return st;
    if (!tc_tma_fp16_fits(p, d_y)) /* no tensor map for it: 8b-fp16 on the same copies */
        return conv2d_tc_mma_fp16_run(p, d_x, d_work, work_elems, d_y, stream, msg);
    const uint16_t *xh = (const uint16_t *)d_work, *wk = xh + conv2d_tc_fp16_filter_at(p);
    CUtensorMap xmap, wmap, ymap;
    if ((st = tma_maps16(p, xh, wk, d_y, &xmap, &wmap, &ymap, msg)) != CONV_OK)
        return st;
    /* persistent blocks, as 9b's */
    tc_geom g = tc_make_geom(p);
    const long long tiles = (g.m + TC9H_BM - 1) / TC9H_BM * ((g.k + TC9H_BN - 1) / TC9H_BN);
    dim3 grid;
    if ((st = tma_persistent_grid((const void *)conv2d_tc_tma_fp16_kernel, TC9H_THREADS, TC9H_SMEM,
                                  tiles, &grid, msg)) != CONV_OK)
        return st;
    void *args[] = {(void *)&xmap, (void *)&wmap, (void *)&ymap, (void *)&g};
    CONV_CUDA_CHECK(cudaLaunchKernel((const void *)conv2d_tc_tma_fp16_kernel, grid,
                                     dim3(TC9H_THREADS), args, TC9H_SMEM, stream),
                    msg);
    CONV_CHECK_LAUNCH("conv2d_tc_tma_fp16_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_tc_tma_fp16(const conv_params *p, const float *d_x, const float *d_w,
                                          float *d_y, float *d_work, size_t work_elems,
                                          cudaStream_t stream, conv_msg *msg)
{
    conv_status st = tc_check_call(p, d_x, d_w, d_y, msg);
    if (st == CONV_OK)
        st = conv2d_tc_fp16_check_work(p, d_work, work_elems, msg);
    if (st == CONV_OK)
        st = tc_tma_fp16_available(msg);
    if (st == CONV_OK)
        st = conv2d_tc_fp16_copies(p, d_x, d_w, d_work, work_elems, stream, msg);
    if (st == CONV_OK)
        st = conv2d_tc_tma_fp16_run(p, d_x, d_work, work_elems, d_y, stream, msg);
    return st;
}

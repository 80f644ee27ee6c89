/* Step 09, 9a-fp16: 9a in half precision (hopper.h).
 *
 * The kernel reads step 08's FP16 copies (conv2d_tc_fp16_copies(): x as it
 * is, the filter as KRSC, each rounded to nearest). The filter's copy is
 * K-major (a filter's 64 halves of a stage lie side by side), the form in
 * which wgmma reads its first operand from shared memory too: so here both
 * operands come from shared memory through descriptors, and no warp loads
 * a fragment. Everything else is 9a's: the block (256 pixels x 128 output
 * channels, two warpgroups of 64 channels), four stages copied by cp.async,
 * 128 float accumulators per thread, the output stored from them directly.
 * A stage is 64 columns j of the implicit GEMM: one 128-byte row per pixel
 * and one per output channel, both with the 128-byte swizzle. C must be a
 * multiple of 8, so that 8 columns are 8 channels of one tap, 16 bytes in
 * a row of the copy; other problems run 8b-fp16 on the same copies.
 *
 * Lesson: docs/09_hopper.md, section "9a and 9b in half precision". */
#include "hopper.h"

#include <cuda_fp16.h>
#include <stdint.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_check.h"
#include "tc_geom.cuh"
#include "tc_ptx.cuh"
#include "tc_wgmma.cuh"
#include "tensor_cores.h"

#define TC9AH_BM      256 /* pixels per block: wgmma's N */
#define TC9AH_BN      128 /* output channels per block: 2 warpgroups x wgmma's M = 64 */
#define TC9AH_BK      64  /* j per stage: 64 halves, one 128-byte swizzled row */
#define TC9AH_STAGES  4
#define TC9AH_THREADS 256
#define TC9AH_ACT     (TC9AH_BM * 128) /* 32 KB: 256 pixel rows of 128 bytes */
#define TC9AH_WTS     (TC9AH_BN * 128) /* 16 KB: 128 output-channel rows of 128 bytes */
/* 1 KB of slack to align the stages to 1024 bytes, the stages, one int4 per
 * pixel (where it starts in x's copy, its h0 and w0): 197 KB */
#define TC9AH_SMEM (1024 + TC9AH_STAGES * (TC9AH_ACT + TC9AH_WTS) + TC9AH_BM * 16)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* excerpt: fp16 cp.async stage */
/* Stage j0 .. j0 + 63 by cp.async, 16 bytes (8 columns) a copy. Thread tid
 * takes chunk c = tid % 8 of pixel rows tid / 8 + 32 i and of filter rows
 * tid / 8 + 32 i: one column j = j0 + 8c, so one tap, decoded once. A chunk
 * goes to slot c ^ (row % 8) of its row (the 128-byte swizzle); past J, past
 * K, or outside the image, it is zeros. */
__device__ __forceinline__ void load_stage16(unsigned act, unsigned wts, const int4 *pix,
                                             const __half *__restrict__ xh,
                                             const __half *__restrict__ wk, const tc_geom &g,
                                             int j0, int k0, int tid)
{
    const int c8 = tid & 7, r0 = tid >> 3, j = j0 + 8 * c8;
    const bool jok = j < g.j;
    const int tap = jok ? j / g.c : 0, c = j - tap * g.c, r = tap / g.s, s = tap % g.s;
    const int dh = r * g.dil_h, dw = s * g.dil_w;
    const long long off = ((long long)dh * g.w + dw) * g.c + c;
    const unsigned slot = ((c8 ^ (r0 & 7)) << 4); /* rows r0 + 32 i: the same r0 % 8 */
#pragma unroll
    for (int i = 0; i < TC9AH_BM / 32; ++i) {
        const int4 p = pix[r0 + 32 * i]; /* {offset low, offset high, h0, w0} */
        const long long base = (long long)p.y << 32 | (unsigned)p.x;
        const int h = p.z + dh, w = p.w + dw;
        const bool ok = jok && h >= 0 && h < g.h && w >= 0 && w < g.w;
        cp_async_zfill<16>(act + (r0 + 32 * i) * 128 + slot,
                           (const float *)(ok ? xh + base + off : xh), ok);
    }
#pragma unroll
    for (int i = 0; i < TC9AH_BN / 32; ++i) {
        const int k = k0 + r0 + 32 * i;
        const bool ok = jok && k < g.k;
        cp_async_zfill<16>(wts + (r0 + 32 * i) * 128 + slot,
                           (const float *)(ok ? wk + (long long)k * g.j + j : wk), ok);
    }
}
/* excerpt end: fp16 cp.async stage */

/* Step kt of the main loop, as 9a's: start stage kt's 4 wgmmas (16 columns
 * each: 32 bytes further along both operands' rows), wait for those of
 * stage kt - 1, wait for this thread's copies of stage kt + 1 and publish
 * them, then refill the buffer of stage kt - 1, which no warpgroup reads
 * any more. */
__device__ __forceinline__ void step16(float acc[128], int kt, int kts, unsigned act, unsigned wts,
                                       const int4 *pix, const __half *__restrict__ xh,
                                       const __half *__restrict__ wk, const tc_geom &g, int k0,
                                       int tid, int wg)
{
    const int buf = kt % TC9AH_STAGES;
    const unsigned a = wts + buf * TC9AH_WTS + wg * 64 * 128; /* the warpgroup's 64 rows */
    const unsigned b = act + buf * TC9AH_ACT;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < TC9AH_BK / 16; ++ks)
        wgmma_m64n256k16_f16(acc, wgmma_desc(a + 32 * ks), wgmma_desc(b + 32 * ks));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    asm volatile("cp.async.wait_group %0;\n" ::"n"(TC9AH_STAGES - 3) : "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    const int next = kt + TC9AH_STAGES - 1, nb = next % TC9AH_STAGES;
    if (next < kts)
        load_stage16(act + nb * TC9AH_ACT, wts + nb * TC9AH_WTS, pix, xh, wk, g, next * TC9AH_BK,
                     k0, tid);
    asm volatile("cp.async.commit_group;\n" ::: "memory"); /* empty or not: one group per step */
}
#endif

__global__ void __launch_bounds__(TC9AH_THREADS, 1)
    conv2d_tc_wgmma_fp16_kernel(const __half *__restrict__ xh, const __half *__restrict__ wk,
                                float *__restrict__ y, tc_geom g)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ float4 smem4[];
    unsigned char *raw = (unsigned char *)smem4;
    unsigned char *base = raw + ((1024 - (smem_addr(raw) & 1023)) & 1023); /* 1024-aligned */
    const unsigned act = smem_addr(base);
    const unsigned wts = act + TC9AH_STAGES * TC9AH_ACT;
    int4 *pix = (int4 *)(base + TC9AH_STAGES * (TC9AH_ACT + TC9AH_WTS));

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2;
    const int t = lane & 3;
    const int krow = wg * 64 + (warp & 3) * 16 + (lane >> 2); /* first channel of D */
    const long long m0 = (long long)blockIdx.x * TC9AH_BM;
    const int k0 = blockIdx.y * TC9AH_BN;

    /* each pixel of the block decoded once, as 9a's (wgmma_pixel()) */
    pix[tid] = wgmma_pixel(m0 + tid, g);
    __syncthreads();

    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i)
        acc[i] = 0.0f;
    const int kts = (g.j + TC9AH_BK - 1) / TC9AH_BK;
#pragma unroll
    for (int st = 0; st < TC9AH_STAGES - 1; ++st) {
        if (st < kts)
            load_stage16(act + st * TC9AH_ACT, wts + st * TC9AH_WTS, pix, xh, wk, g, st * TC9AH_BK,
                         k0, tid);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    asm volatile("cp.async.wait_group %0;\n" ::"n"(TC9AH_STAGES - 2) : "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    for (int kt = 0; kt < kts; ++kt)
        step16(acc, kt, kts, act, wts, pix, xh, wk, g, k0, tid, wg);
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    wgmma_store_y<TC9AH_BM>(acc, y, g, m0, k0, krow, t);
#endif
}

extern "C" int tc_wgmma_fp16_fits(const conv_params *p)
{
    return p->c % 8 == 0;
}

extern "C" conv_status tc_wgmma_fp16_available(conv_msg *msg)
{
    return tc_wgmma_runs((const void *)conv2d_tc_wgmma_fp16_kernel, "9a-fp16 wgmma FP16",
                         "conv2d_tc_wgmma_fp16_kernel", TC9AH_THREADS, TC9AH_SMEM, msg);
}

extern "C" conv_status conv2d_tc_wgmma_fp16_run(const conv_params *p, const float *d_x,
                                                const float *d_work, size_t work_elems, float *d_y,
                                                cudaStream_t stream, conv_msg *msg)
{
    conv_status st = conv2d_tc_fp16_check_work(p, d_work, work_elems, msg);
    if (st == CONV_OK)
        st = tc_check_call(p, d_x, d_work, d_y, msg);
    if (st == CONV_OK)
        st = tc_wgmma_fp16_available(msg);
    if (st != CONV_OK)
        return st;
    if (!tc_wgmma_fp16_fits(p)) /* 8 columns not one tap: 8b-fp16 on the same copies */
        return conv2d_tc_mma_fp16_run(p, d_x, d_work, work_elems, d_y, stream, msg);
    const __half *xh = (const __half *)d_work, *wk = xh + conv2d_tc_fp16_filter_at(p);
    tc_geom g = tc_make_geom(p);
    const dim3 grid((unsigned)((g.m + TC9AH_BM - 1) / TC9AH_BM),
                    (unsigned)((g.k + TC9AH_BN - 1) / TC9AH_BN));
    void *args[] = {(void *)&xh, (void *)&wk, (void *)&d_y, (void *)&g};
    CONV_CUDA_CHECK(cudaLaunchKernel((const void *)conv2d_tc_wgmma_fp16_kernel, grid,
                                     dim3(TC9AH_THREADS), args, TC9AH_SMEM, stream),
                    msg);
    CONV_CHECK_LAUNCH("conv2d_tc_wgmma_fp16_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_tc_wgmma_fp16(const conv_params *p, const float *d_x,
                                            const float *d_w, float *d_y, float *d_work,
                                            size_t work_elems, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = tc_check_call(p, d_x, d_w, d_y, msg);
    if (st == CONV_OK)
        st = conv2d_tc_fp16_check_work(p, d_work, work_elems, msg);
    if (st == CONV_OK)
        st = tc_wgmma_fp16_available(msg);
    if (st == CONV_OK)
        st = conv2d_tc_fp16_copies(p, d_x, d_w, d_work, work_elems, stream, msg);
    if (st == CONV_OK)
        st = conv2d_tc_wgmma_fp16_run(p, d_x, d_work, work_elems, d_y, stream, msg);
    return st;
}

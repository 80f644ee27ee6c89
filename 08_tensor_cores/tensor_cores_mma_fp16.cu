/* Step 08. Version: 8b-fp16.
 *
 * 8b's implicit GEMM in half precision with mma.sync, for every GPU of the
 * course. First conv2d_tc_fp16_copies() writes FP16 copies of x
 * (tc16_x_kernel) and of the filter as KRSC (tc_filter_kernel,
 * tc_filter.cuh) into the caller's workspace, as a network keeps its tensors
 * in half precision; cp.async copies bytes as they are and cannot round a
 * float to a half. Then the kernel (conv2d_tc_mma_fp16_run()): a block computes 128 x 128
 * outputs with 4 warps of 64 x 64, fragments loaded by ldmatrix, float
 * accumulators. From compute capability 8.0 one m16n8k16 product per
 * fragment pair and a cp.async pipeline (three stages of 64 columns, or
 * four of 32 where those fit more blocks per SM); on Turing (7.5) the same
 * product as two m16n8k8 and register-staged copies into two buffers, x
 * read as floats and rounded as it is stored (as step 05 prefetches).
 * Note 08, "8b in half precision". */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_filter.cuh"
#include "tc_geom.cuh"
#include "tc_ptx.cuh"
#include "tensor_cores.h"

/* The tile, as measured best on an H200 (lab note 08, "8b-fp16's copies and
 * stages"); a build can set others with CUDA flags, e.g.
 * -DTC16_BM=256 (8 warps of 64 x 64 a block), -DTC16_WN=32 (8 warps of
 * 64 x 32) or -DTC16_DEEP_BK=32 -DTC16_DEEP=4 (the cp.async
 * configuration's columns and stages). */
#ifndef TC16_BM
#define TC16_BM 128 /* outputs (pixels) per block: 128 or 256 */
#endif
#ifndef TC16_DEEP
#define TC16_DEEP 3 /* stages of the cp.async configuration */
#endif
#ifndef TC16_DEEP_BK
#define TC16_DEEP_BK 64 /* and its columns per stage */
#endif
#ifndef TC16_WN
#define TC16_WN 64 /* filters per warp: 64, or 32 (twice the warps, half the accumulators) */
#endif
#define TC16_BN      128                                       /* filters per block */
#define TC16_THREADS (TC16_BM / 64 * (TC16_BN / TC16_WN) * 32) /* warps of 64 x TC16_WN */
/* blocks an SM should hold: the registers a thread may have follow */
#define TC16_MIN_BLOCKS (TC16_WN == 64 ? 256 / TC16_THREADS : 2)
/* A stage: BK halves of TC16_BM rows of A (pixels), then of TC16_BN rows of
 * B (filters), not padded: TC16_STAGE(BK) halves */
#define TC16_STAGE(BK) ((BK) * (TC16_BM + TC16_BN))
/* A row of A, decoded once (as 8b's): px, where its pixel under filter tap
 * (0, 0) has channel 0 (in x or its FP16 copy); (h0, w0), that pixel, which
 * padding may put outside the image; a row past the last output has h0 =
 * TC16_NO_ROW, so that every copy of it is a zero. */
#define TC16_NO_ROW (-(1 << 30))
typedef struct {
    long long px;
    int h0, w0;
} tc16_row;

#if __CUDA_ARCH__ >= 750
__device__ __forceinline__ unsigned tc16_smem(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* Four 8 x 8 matrices of halves from shared memory, one row address a lane
 * (lanes 0-7 the first matrix's rows, 8-15 the second's, ...); lane 4g + t
 * gets elements 2t and 2t + 1 of row g of matrix i in r[i], the layout of
 * mma.sync's fragments. */
__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const __half *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(tc16_smem(row)));
}

/* A 16-byte cp.async to the shared address dst; where ok is false it reads
 * no source bytes and writes zeros. Compute capability 8.0 and newer (the
 * kernels that copy this way are not launched on older GPUs). */
__device__ __forceinline__ void tc16_cp_async(unsigned dst, const void *src, bool ok)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(ok ? 16 : 0)
                 : "memory");
#endif
}

/* excerpt: fp16 swizzle */
/* Where 16-byte chunk `chunk` (8 halves) of row `row` of a stage lies: rows
 * are BK halves, not padded, so 8 / (BK / 8) rows share a 128-byte line of
 * shared memory; XORing the chunk with a few bits of the row puts the 8
 * rows of one ldmatrix matrix in 8 different groups of 4 banks. */
template <int BK> __device__ __forceinline__ int tc16_chunk(int row, int chunk)
{
    constexpr int CPR = BK / 8; /* chunks per row */
    return chunk ^ ((row * CPR / 8) % CPR);
}
/* excerpt end: fp16 swizzle */

/* Element `col` (a multiple of 8) of row `row` of a stage part */
template <int BK> __device__ __forceinline__ int tc16_at(int row, int col)
{
    return row * BK + 8 * tc16_chunk<BK>(row, col / 8);
}

/* Eight floats rounded to FP16, as the 16 bytes of a chunk. */
__device__ __forceinline__ uint4 tc16_pack(float4 lo, float4 hi)
{
    union {
        uint4 u;
        __half2 h[4];
    } v;
    v.h[0] = __floats2half2_rn(lo.x, lo.y), v.h[1] = __floats2half2_rn(lo.z, lo.w);
    v.h[2] = __floats2half2_rn(hi.x, hi.y), v.h[3] = __floats2half2_rn(hi.z, hi.w);
    return v.u;
}

/* How the threads share a stage's copies: thread tid takes chunk column cc
 * = tid % (BK / 8) of rows tid / (BK / 8) + i RSTEP, i < TC16_BM / RSTEP, of
 * A's part, the same rows of B's; neighbouring threads copy neighbouring
 * chunks of a row. */
#define TC16_RSTEP(BK) (TC16_THREADS / ((BK) / 8))
#define TC16_ROWS(BK)  (TC16_BM / TC16_RSTEP(BK))
#define TC16_ROWSB(BK) (TC16_BN / TC16_RSTEP(BK))

/* A chunk column's copies in flight through registers (the staged path): x
 * as floats, w as halves. */
template <int BK> struct tc16_regs {
    float4 a[TC16_ROWS(BK)][2];
    uint4 b[TC16_ROWSB(BK)];
};

/* A's part of the stage of columns j0 .. j0 + BK - 1: with A_ASYNC one
 * cp.async per chunk from xh, x's FP16 copy (VEC: C % 8 == 0, so a chunk is
 * 8 channels of one tap, 16 contiguous bytes); else into registers, read
 * from x as floats (VEC: two float4 loads a chunk; else 8 loads, one tap
 * each). t is the tap of this thread's chunk; it leaves advanced by BK. */
template <int BK, bool VEC, bool A_ASYNC>
__device__ __forceinline__ void tc16_load_a(__half *stage, tc16_regs<BK> &rg,
                                            const float *__restrict__ x,
                                            const __half *__restrict__ xh, const tc_geom &g, int j0,
                                            int tid, const tc16_row *rows, tc_tap &t)
{
    constexpr int RSTEP = TC16_RSTEP(BK), ROWS = TC16_ROWS(BK);
    const int cc = tid % (BK / 8), ar = tid / (BK / 8), j = j0 + 8 * cc;
    const unsigned dst = tc16_smem(stage + tc16_at<BK>(ar, 8 * cc));
    /* every row first, then the copies: a cp.async is an asm that clobbers
     * memory, which the compiler moves no read of memory past, so rows read
     * one at a time would each wait for the copy before them (lab note 08,
     * "8b-fp16's copies and stages") */
    tc16_row rr[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
        rr[i] = rows[ar + i * RSTEP];
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const tc16_row r = rr[i];
        if (VEC) {
            /* 0 <= h < H as one unsigned comparison: a negative h wraps */
            const unsigned h = r.h0 + t.dh, w = r.w0 + t.dw;
            const bool ok = j < g.j && h < (unsigned)g.h && w < (unsigned)g.w;
            const long long at = ok ? r.px + t.off : 0;
            if (A_ASYNC) {
                tc16_cp_async(dst + 2 * i * RSTEP * BK, xh + at, ok);
            } else {
                const float4 z = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                rg.a[i][0] = ok ? *(const float4 *)(x + at) : z;
                rg.a[i][1] = ok ? *(const float4 *)(x + at + 4) : z;
            }
        } else {
            float v[8];
            tc_tap te = t;
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const unsigned h = r.h0 + te.dh, w = r.w0 + te.dw;
                const bool ok = j + e < g.j && h < (unsigned)g.h && w < (unsigned)g.w;
                v[e] = ok ? x[r.px + te.off] : 0.0f;
                tap_advance(te, 1, g);
            }
            rg.a[i][0] = make_float4(v[0], v[1], v[2], v[3]);
            rg.a[i][1] = make_float4(v[4], v[5], v[6], v[7]);
        }
    }
    tap_advance(t, BK, g);
}

/* B's part of the stage: rows k0 .. k0 + 127 of wk (the filter as KRSC, in
 * FP16), columns j0 .. j0 + BK - 1, shared as A's; rows past K and columns
 * past J are zeros. With B_ASYNC (VEC), one cp.async a chunk; else into
 * registers. */
template <int BK, bool VEC, bool B_ASYNC>
__device__ __forceinline__ void tc16_load_b(__half *stage, tc16_regs<BK> &rg,
                                            const __half *__restrict__ wk, const tc_geom &g, int j0,
                                            int k0, int tid)
{
    constexpr int RSTEP = TC16_RSTEP(BK), ROWS = TC16_ROWSB(BK);
    const int cc = tid % (BK / 8), br = tid / (BK / 8), j = j0 + 8 * cc;
    const unsigned dst = tc16_smem(stage + TC16_BM * BK + tc16_at<BK>(br, 8 * cc));
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const int k = k0 + br + i * RSTEP;
        const __half *src = wk + (long long)k * g.j + j;
        if (VEC) {
            const bool ok = k < g.k && j < g.j;
            if (B_ASYNC)
                tc16_cp_async(dst + 2 * i * RSTEP * BK, ok ? src : wk, ok);
            else
                rg.b[i] = ok ? *(const uint4 *)src : make_uint4(0u, 0u, 0u, 0u);
        } else {
            union {
                uint4 u;
                __half h[8];
            } v;
#pragma unroll
            for (int e = 0; e < 8; ++e)
                v.h[e] = k < g.k && j + e < g.j ? src[e] : __float2half_rn(0.0f);
            rg.b[i] = v.u;
        }
    }
}

/* The staged copies, from registers into the stage: A rounded to FP16. */
template <int BK, bool A_ASYNC, bool B_ASYNC>
__device__ __forceinline__ void tc16_store(__half *stage, const tc16_regs<BK> &rg, int tid)
{
    constexpr int RSTEP = TC16_RSTEP(BK), ROWS = TC16_ROWS(BK);
    const int cc = tid % (BK / 8), ar = tid / (BK / 8);
    uint4 *a = (uint4 *)(stage + tc16_at<BK>(ar, 8 * cc));
    uint4 *b = (uint4 *)(stage + TC16_BM * BK + tc16_at<BK>(ar, 8 * cc));
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
        if (!A_ASYNC)
            a[i * RSTEP * BK / 8] = tc16_pack(rg.a[i][0], rg.a[i][1]);
#pragma unroll
    for (int i = 0; i < TC16_ROWSB(BK); ++i)
        if (!B_ASYNC)
            b[i * RSTEP * BK / 8] = rg.b[i];
}

/* The fragments of one k-step of 16 columns at kk: the a fragments of the
 * warp's 4 tiles of 16 pixels, the b fragments of its 8 tiles of 8 filters. */
template <int BK>
__device__ __forceinline__ void tc16_fragments(unsigned (&a)[4][4], unsigned (&b)[TC16_WN / 8][2],
                                               const __half *stage, int kk, int wm, int wn,
                                               int lane)
{
    const __half *as = stage, *bs = stage + TC16_BM * BK;
    /* exercise 08-ldmatrix begin: a k-step's fragments, by ldmatrix */
    /* A: rows wm + 16 i + (lane % 16), columns kk + 8 (lane / 16) */
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int row = wm + 16 * i + (lane & 15);
        ldmatrix_x4(a[i], as + tc16_at<BK>(row, kk + 8 * (lane >> 4)));
    }
    /* B: two n8 tiles a load; filters wn + 16 h + (lane % 8) + 8 (lane / 16),
     * columns kk + 8 ((lane / 8) % 2) */
#pragma unroll
    for (int h = 0; h < TC16_WN / 16; ++h) {
        unsigned r[4];
        const int row = wn + 16 * h + (lane & 7) + 8 * (lane >> 4);
        ldmatrix_x4(r, bs + tc16_at<BK>(row, kk + 8 * ((lane >> 3) & 1)));
        b[2 * h][0] = r[0], b[2 * h][1] = r[1];
        b[2 * h + 1][0] = r[2], b[2 * h + 1][1] = r[3];
    }
    /* exercise 08-ldmatrix stub
    // TODO(exercise 08-ldmatrix): fill a[i], i = 0..3, with the 16 x 16 A
    // tile of rows wm + 16 i, columns kk .. kk + 15 of as, and b[jj], jj =
    // 0..7, with the B tile of filters wn + 8 jj, columns kk .. kk + 15 of
    // bs (two registers: columns 0-7, then 8-15), by ldmatrix_x4: each
    // lane gives the address of one row of one of its four 8 x 8 matrices,
    // tc16_at<BK>(row, col) elements into the stage part (note 08, "8b in
    // half precision"). Graded by tests/test_08_fp16.c on every GPU from
    // compute capability 7.5.
    for (int i = 0; i < 4; ++i)
        a[i][0] = a[i][1] = a[i][2] = a[i][3] = 0u;
    for (int jj = 0; jj < 8; ++jj)
        b[jj][0] = b[jj][1] = 0u;
       exercise 08-ldmatrix end */
}

/* One stage's products on the warp's 64 x 64 tile at (wm, wn), k-step by
 * k-step, 32 mma.sync each; two sets of fragments, the next k-step's
 * loading while this one's products run. */
template <int BK>
__device__ __forceinline__ void tc16_products(float (&acc)[4][TC16_WN / 8][4], const __half *stage,
                                              int wm, int wn, int lane)
{
    unsigned a[2][4][4], b[2][TC16_WN / 8][2];
    tc16_fragments<BK>(a[0], b[0], stage, 0, wm, wn, lane);
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
        if (ks + 1 < BK / 16)
            tc16_fragments<BK>(a[(ks + 1) % 2], b[(ks + 1) % 2], stage, 16 * (ks + 1), wm, wn,
                               lane);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int jj = 0; jj < TC16_WN / 8; ++jj)
                mma_fp16(acc[i][jj], a[ks % 2][i], b[ks % 2][jj]);
    }
}
#endif

/* The kernel: STAGES stages of BK columns; A_ASYNC, B_ASYNC: which parts
 * cp.async copies (from the FP16 copies), the others go through registers;
 * VEC: C % 8 == 0 and x 16-byte aligned. */
template <int BK, int STAGES, bool A_ASYNC, bool B_ASYNC, bool VEC>
__global__ void __launch_bounds__(TC16_THREADS, TC16_MIN_BLOCKS)
    conv2d_tc_mma_fp16_kernel(const float *__restrict__ x, const __half *__restrict__ xh,
                              const __half *__restrict__ wk, float *__restrict__ y, tc_geom g)
{
#if __CUDA_ARCH__ >= 750
    constexpr bool ASYNC = A_ASYNC || B_ASYNC, STAGED = !A_ASYNC || !B_ASYNC;
#if __CUDA_ARCH__ < 800
    if (ASYNC) /* no cp.async before 8.0: the launcher never starts these here */
        return;
#endif
    extern __shared__ uint4 tc16_smem4[];
    __half *smem = (__half *)tc16_smem4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    constexpr int WCOLS = TC16_BN / TC16_WN; /* warps side by side along the filters */
    const int wm = (warp / WCOLS) * 64, wn = (warp % WCOLS) * TC16_WN; /* the warp's tile */
    const long long m0 = (long long)blockIdx.x * TC16_BM;
    const int k0 = blockIdx.y * TC16_BN;

    /* the block's A rows, decoded once into a table after the stages */
    tc16_row *rows = (tc16_row *)(smem + STAGES * TC16_STAGE(BK));
    for (int i = tid; i < TC16_BM; i += TC16_THREADS) {
        const long long pq = (long long)g.p * g.q, m = m0 + i;
        const long long mm = m < g.m ? m : 0;
        const int rem = (int)(mm % pq);
        const int h0 = (rem / g.q) * g.stride_h - g.pad_h, w0 = (rem % g.q) * g.stride_w - g.pad_w;
        tc16_row r;
        r.px = (((mm / pq) * g.h + h0) * g.w + w0) * (long long)g.c;
        r.h0 = m < g.m ? h0 : TC16_NO_ROW;
        r.w0 = w0;
        rows[i] = r;
    }
    tc_tap tap = {0, 0, 0, 0};
    tap_advance(tap, 8 * (tid % (BK / 8)), g); /* this thread's first chunk */
    __syncthreads();

    float acc[4][TC16_WN / 8][4]; /* [16-pixel tile][8-filter tile][c0..c3] */
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int jj = 0; jj < TC16_WN / 8; ++jj)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                acc[i][jj][v] = 0.0f;

    const int steps = (g.j + BK - 1) / BK;
    tc16_regs<BK> rg;
    /* prologue: stages 0 .. STAGES - 2 */
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) {
        if (st < steps) {
            __half *stage = smem + st * TC16_STAGE(BK);
            tc16_load_a<BK, VEC, A_ASYNC>(stage, rg, x, xh, g, st * BK, tid, rows, tap);
            tc16_load_b<BK, VEC, B_ASYNC>(stage, rg, wk, g, st * BK, k0, tid);
            if (STAGED)
                tc16_store<BK, A_ASYNC, B_ASYNC>(stage, rg, tid);
        }
        if (ASYNC)
            asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    if (!ASYNC)
        __syncthreads();
    /* excerpt: fp16 pipeline */
    /* Step s computes stage s % STAGES while the copies of step s + STAGES
     * - 1 are in flight, into the stage step s - 1 computed. */
    for (int s0 = 0; s0 < steps; s0 += STAGES) {
#pragma unroll
        for (int rd = 0; rd < STAGES; ++rd) { /* unrolled: every stage's address a constant */
            const int s = s0 + rd, next = s + STAGES - 1;
            if (s >= steps)
                break;
            __half *refill = smem + ((rd + STAGES - 1) % STAGES) * TC16_STAGE(BK);
            if (ASYNC) {
                /* step s has landed (at most STAGES - 2 groups pending),
                 * and every warp is done with step s - 1's stage */
                asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
                __syncthreads();
            }
            if (next < steps) {
                tc16_load_a<BK, VEC, A_ASYNC>(refill, rg, x, xh, g, next * BK, tid, rows, tap);
                tc16_load_b<BK, VEC, B_ASYNC>(refill, rg, wk, g, next * BK, k0, tid);
            }
            if (ASYNC)
                asm volatile("cp.async.commit_group;\n" ::: "memory");
            tc16_products<BK>(acc, smem + rd * TC16_STAGE(BK), wm, wn, lane);
            if (STAGED) { /* the staged copies land after the products */
                if (next < steps)
                    tc16_store<BK, A_ASYNC, B_ASYNC>(refill, rg, tid);
                __syncthreads();
            }
        }
    }
    /* excerpt end: fp16 pipeline */
    if (ASYNC)
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");

    /* c0, c1: pixel g, filters 2t, 2t + 1 of the 16 x 8 tile; c2, c3: pixel g + 8 */
    const int gq = lane >> 2, tq = lane & 3;
    const bool pair = (g.k & 1) == 0 && ((uintptr_t)y & 7) == 0;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const long long row = m0 + wm + 16 * i + gq + 8 * half;
            if (row >= g.m)
                continue;
#pragma unroll
            for (int jj = 0; jj < TC16_WN / 8; ++jj) {
                const int col = k0 + wn + 8 * jj + 2 * tq;
                float *out = y + row * g.k + col;
                const float c0 = acc[i][jj][2 * half], c1 = acc[i][jj][2 * half + 1];
                if (pair && col < g.k)
                    *(float2 *)out = make_float2(c0, c1);
                if (!pair && col < g.k)
                    out[0] = c0;
                if (!pair && col + 1 < g.k)
                    out[1] = c1;
            }
        }
#endif
}

/* x's FP16 copy, element by element (4 at a time where x is 16-byte aligned). */
__global__ void __launch_bounds__(256)
    tc16_x_kernel(const float *__restrict__ x, __half *__restrict__ xh, long long n, int vec)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = 4 * ((long long)blockIdx.x * blockDim.x + threadIdx.x); i < n;
         i += 4 * stride) {
        if (vec && i + 3 < n) {
            const float4 v = *(const float4 *)(x + i);
            __half2 *out = (__half2 *)(xh + i);
            out[0] = __floats2half2_rn(v.x, v.y), out[1] = __floats2half2_rn(v.z, v.w);
        } else {
            for (long long e = i; e < n && e < i + 4; ++e)
                xh[e] = __float2half_rn(x[e]);
        }
    }
}

/* Halves of each FP16 copy, rounded up to whole 16-byte chunks, so that the
 * filter's copy after x's starts 16-byte aligned. */
static size_t tc16_halves(size_t n)
{
    return (n + 7) / 8 * 8;
}

extern "C" size_t conv2d_tc_fp16_filter_at(const conv_params *p)
{
    return tc16_halves(conv_input_elems(p));
}

extern "C" size_t conv2d_tc_fp16_workspace_elems(const conv_params *p)
{
    return (conv2d_tc_fp16_filter_at(p) + tc16_halves(conv_filter_elems(p))) / 2;
}

extern "C" conv_status conv2d_tc_fp16_check_work(const conv_params *p, const float *d_work,
                                                 size_t work_elems, conv_msg *msg)
{
    if (d_work == NULL)
        return conv_fail(
            msg, CONV_ERR_INVALID,
            "the FP16 versions need a workspace (d_work) for the FP16 copies of x and w");
    if (work_elems < conv2d_tc_fp16_workspace_elems(p))
        return conv_fail(
            msg, CONV_ERR_INVALID,
            "the workspace (work_elems) holds %zu floats; the FP16 copies need %zu here",
            work_elems, conv2d_tc_fp16_workspace_elems(p));
    if ((uintptr_t)d_work % 16 != 0)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "the workspace (d_work) must be 16-byte aligned, as cudaMalloc's are");
    return CONV_OK;
}

/* excerpt: fp16 copies */
extern "C" conv_status conv2d_tc_fp16_copies(const conv_params *p, const float *d_x,
                                             const float *d_w, float *d_work, size_t work_elems,
                                             cudaStream_t stream, conv_msg *msg)
{
    conv_status st = conv2d_tc_fp16_check_work(p, d_work, work_elems, msg);
    if (st == CONV_OK)
        st = tc_check_call(p, d_x, d_w, d_work, msg);
    if (st != CONV_OK)
        return st;
    const tc_geom g = tc_make_geom(p);
    __half *xh = (__half *)d_work, *wk = xh + conv2d_tc_fp16_filter_at(p);
    if ((st = tc_filter(g, false, d_w, wk, stream, "8b-fp16", msg)) != CONV_OK)
        return st;
    const long long n = (long long)conv_input_elems(p), blocks = (n + 1023) / 1024;
    tc16_x_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
        d_x, xh, n, (uintptr_t)d_x % 16 == 0);
    CONV_CHECK_LAUNCH("tc16_x_kernel", msg);
    return CONV_OK;
}
/* excerpt end: fp16 copies */

/* A configuration: the kernel and its shared memory per block. */
typedef struct {
    const void *kernel;
    size_t smem;
} tc16_config;

template <int BK, int STAGES, bool A_ASYNC, bool B_ASYNC, bool VEC>
static tc16_config tc16_cfg(void)
{
    tc16_config c;
    c.kernel = (const void *)conv2d_tc_mma_fp16_kernel<BK, STAGES, A_ASYNC, B_ASYNC, VEC>;
    c.smem = (size_t)STAGES * TC16_STAGE(BK) * sizeof(__half) + TC16_BM * sizeof(tc16_row);
    return c;
}

/* The configuration for this GPU and this build. With cp.async (the code
 * running here compiled for compute_80 or newer: a build for 75 runs its
 * Turing code on any GPU) and C % 8 == 0: three stages of 64 columns (98 KB
 * a block), or four of 32 (66 KB) where those let more blocks share an SM
 * (an A100: 164 KB per SM) or the three do not fit; else, or where neither
 * fits, the register-staged copies, two stages of 32 (34 KB). *async says
 * whether the kernel reads x's FP16 copy (else x itself). */
static conv_status tc16_choose(bool vec, tc16_config *cfg, bool *async, conv_msg *msg)
{
    const tc16_config deep = tc16_cfg<TC16_DEEP_BK, TC16_DEEP, true, true, true>(),
                      four = tc16_cfg<32, 4, true, true, true>();
    struct cudaFuncAttributes attr;
    CONV_CUDA_CHECK(cudaFuncGetAttributes(&attr, deep.kernel), msg);
    *async = false;
    if (vec && attr.ptxVersion >= 80) {
        conv_msg why = {{0}};
        const bool deep_fits = conv_kernel_fits(deep.kernel, "conv2d_tc_mma_fp16_kernel",
                                                TC16_THREADS, deep.smem, &why) == CONV_OK;
        const bool four_fits = conv_kernel_fits(four.kernel, "conv2d_tc_mma_fp16_kernel",
                                                TC16_THREADS, four.smem, &why) == CONV_OK;
        if (deep_fits || four_fits) {
            const bool use_four =
                !deep_fits ||
                (four_fits && conv_blocks_per_sm(four.kernel, TC16_THREADS, four.smem) >
                                  conv_blocks_per_sm(deep.kernel, TC16_THREADS, deep.smem));
            *cfg = use_four ? four : deep;
            *async = true;
            return CONV_OK;
        }
    }
    *cfg = vec ? tc16_cfg<32, 2, false, false, true>() : tc16_cfg<32, 2, false, false, false>();
    return conv_kernel_fits(cfg->kernel, "conv2d_tc_mma_fp16_kernel", TC16_THREADS, cfg->smem, msg);
}

extern "C" conv_status conv2d_tc_mma_fp16_run(const conv_params *p, const float *d_x,
                                              const float *d_work, size_t work_elems, float *d_y,
                                              cudaStream_t stream, conv_msg *msg)
{
    conv_status st = conv2d_tc_fp16_check_work(p, d_work, work_elems, msg);
    if (st == CONV_OK)
        st = tc_check_call(p, d_x, d_work, d_y, msg);
    if (st != CONV_OK)
        return st;
    const tc_geom g = tc_make_geom(p);
    const bool vec = p->c % 8 == 0 && (uintptr_t)d_x % 16 == 0;
    tc16_config cfg = {NULL, 0};
    bool async = false; /* the Turing code reads x itself, as floats */
    if ((st = tc16_choose(vec, &cfg, &async, msg)) != CONV_OK)
        return st;
    const dim3 grid((unsigned)((g.m + TC16_BM - 1) / TC16_BM),
                    (unsigned)((g.k + TC16_BN - 1) / TC16_BN));
    const __half *xh = (const __half *)d_work, *wk = xh + conv2d_tc_fp16_filter_at(p);
    void *args[] = {(void *)&d_x, (void *)&xh, (void *)&wk, (void *)&d_y, (void *)&g};
    CONV_CUDA_CHECK(cudaLaunchKernel(cfg.kernel, grid, dim3(TC16_THREADS), args, cfg.smem, stream),
                    msg);
    CONV_CHECK_LAUNCH("conv2d_tc_mma_fp16_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_tc_mma_fp16(const conv_params *p, const float *d_x, const float *d_w,
                                          float *d_y, float *d_work, size_t work_elems,
                                          cudaStream_t stream, conv_msg *msg)
{
    conv_status st = tc_check_call(p, d_x, d_w, d_y, msg);
    if (st == CONV_OK)
        st = conv2d_tc_fp16_copies(p, d_x, d_w, d_work, work_elems, stream, msg);
    if (st == CONV_OK)
        st = conv2d_tc_mma_fp16_run(p, d_x, d_work, work_elems, d_y, stream, msg);
    return st;
}

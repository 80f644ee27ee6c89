/* Step 08, 8b and 8c: the implicit GEMM of 8a (tensor_cores.cu) with the
 * tensor cores driven by the PTX instruction mma.sync.m16n8k8 (TF32) instead
 * of WMMA, and its tiles brought into shared memory by a cp.async pipeline
 * (tensor_cores.h). 8c, 3xTF32, is the same kernel with THREE true.
 *
 * Why leave WMMA: its fragments' element-to-thread mapping is opaque, so 8a
 * must stage everything through shared memory in WMMA's layout. mma.sync
 * documents the mapping (PTX ISA, "Matrix fragments for mma.m16n8k8"): with
 * lane = 4 g + t (g = lane / 4, t = lane % 4), for one 16 x 8 tile of A, an
 * 8 x 8 tile of B and the 16 x 8 tile of C,
 *   A: a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]
 *   B: b0 = B[t][g], b1 = B[t+4][g]
 *   C: c0 = C[g][2t], c1 = C[g][2t+1], c2 = C[g+8][2t], c3 = C[g+8][2t+1]
 * so each thread loads exactly its elements from shared memory (A's four
 * with one ldmatrix), laid out (padded rows) so that those loads hit 32
 * different banks, and stores its results straight to global memory.
 *
 * A block computes TC8B_BM x TC8B_BN = 128 x 128 outputs. In 8b, 4 warps
 * (2 along m, 2 along n) own 64 x 64 each: 4 x 8 tiles of 16 x 8, 128
 * accumulators per thread, 32 mma.sync per warp and k-step of 8, two blocks
 * per SM. 8c needs registers for its split operands as well, so its warps
 * own 64 x 32 (8 warps, 2 x 4; 64 accumulators; 16 x 3 mma.sync per warp
 * and k-step), one block per SM. The copies run STAGES - 1 steps
 * ahead: while the tensor cores work on one stage of TC8B_BK = 16 along j,
 * cp.async fills the next ones (zero-filled past the edges). They move
 * chunks of 4 consecutive j of an A row (4 consecutive k of a B row),
 * neighbouring threads taking neighbouring chunks, so that a warp's copies
 * cover whole 32-byte sectors of global memory; where C and K are multiples
 * of 4 (VEC) a chunk is one 16-byte copy, else four of 4 bytes. A stage is
 * 18.5 KB: 8b keeps four (74 KB), 8c three (55.5 KB); where the device (or
 * CONV_SMEM_LIMIT_KB) allows less, the same kernel runs with two stages,
 * 37 KB: plain double buffering, the copy of one step under the math of the
 * previous one. */
#include "tensor_cores.h"

#include <stdint.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_geom.cuh"
#include "tc_ptx.cuh"

/* A block's tile: TC8B_BM x TC8B_BN outputs, 2 x WN warps (WN a template
 * parameter), each 64 x (TC8B_BN / WN). */
#define TC8B_BM      128
#define TC8B_BN      128
#define TC8B_BK      16
#define TC8B_LDA     (TC8B_BK + 4) /* A rows of a stage: g*20 + t covers 32 banks */
#define TC8B_LDB     (TC8B_BN + 8) /* B rows: t*136 + g covers 32 banks */
#define TC8B_ACHUNKS (TC8B_BK / 4) /* the copies: 4 chunks of 4 floats per A row */
#define TC8B_BCHUNKS (TC8B_BN / 4) /* 32 per B row */
#define TC8B_STAGE   (TC8B_BM * TC8B_LDA + TC8B_BK * TC8B_LDB) /* floats per stage */

#if __CUDA_ARCH__ >= 800
/* v (raw float bits) as a TF32 operand; with THREE also its remainder
 * v - big, in TF32. */
template <bool THREE>
__device__ __forceinline__ void split(unsigned v, unsigned &big, unsigned &small)
{
    big = to_tf32(__uint_as_float(v));
    if (THREE)
        small = to_tf32(__uint_as_float(v) - __uint_as_float(big));
}

/* excerpt: mma m16n8k8 */
__device__ __forceinline__ void mma_m16n8k8_tf32(float c[4], const unsigned a[4],
                                                 const unsigned b[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
/* excerpt end: mma m16n8k8 */

/* excerpt: ldmatrix */
/* The four registers of one 16 x 8 A tile (rows from `rows`, columns from
 * `col`, in a stage with rows of TC8B_LDA floats) in one instruction.
 * ldmatrix reads four 8 x 8 matrices of 16-bit elements, that is 8 rows of 4
 * floats, lanes 8i .. 8i + 7 giving the row addresses of matrix i, and
 * hands lane 4g + t the 32-bit word t of row g of each: matrix 0 = rows
 * 0-7, columns 0-3 gives a0 = A[g][t]; matrix 1 = rows 8-15 gives a1; 2 and
 * 3, columns 4-7, give a2 and a3. Exactly mma's A fragment. */
__device__ __forceinline__ void ldmatrix_a(unsigned a[4], const float *rows, int col, int lane)
{
    const float *p = rows + ((lane & 7) + 8 * ((lane >> 3) & 1)) * TC8B_LDA + col + 4 * (lane >> 4);
    const unsigned addr = smem_addr(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                 : "r"(addr));
}
/* excerpt end: ldmatrix */

/* This thread's ROWS rows of A, decoded once: where each starts in x, its
 * (h0, w0), and whether it is an output at all. */
template <int ROWS> struct tc_rows_of_a {
    const float *img[ROWS];
    int h0[ROWS], w0[ROWS];
    bool ok[ROWS];
};

/* One stage: A (128 x 16) and B (16 x 128) in chunks of 4 floats, copied
 * by THREADS threads. The thread's A chunk is j = j0 + 4 cc .. + 3 of rows
 * ar, ar + ASTEP, ... (2 rows with 256 threads, 4 with 128); its (c, s, r)
 * arrives in (c, s, r) and leaves advanced by TC8B_BK, by additions (as in
 * 6f). With VEC, C % 4 == 0, so the chunk is 4 channels of one tap:
 * contiguous in x. Its B chunk is k = k0 + 4 cb .. + 3 of rows j0 + br,
 * j0 + br + BSTEP, ...: contiguous in w. */
template <int THREADS, bool VEC>
__device__ __forceinline__ void
load_stage(float *stage, const float *__restrict__ x, const float *__restrict__ wt,
           const tc_geom &g, int j0, int k0, int tid,
           const tc_rows_of_a<TC8B_BM * TC8B_ACHUNKS / THREADS> &rows, int &c, int &s, int &r)
{
    constexpr int E = VEC ? 1 : 4; /* copies per chunk */
    constexpr int ASTEP = THREADS / TC8B_ACHUNKS, AROWS = TC8B_BM / ASTEP;
    constexpr int BSTEP = THREADS / TC8B_BCHUNKS, BROWS = TC8B_BK / BSTEP;
    float *as = stage, *bs = stage + TC8B_BM * TC8B_LDA;
    const int cc = tid % TC8B_ACHUNKS, ar = tid / TC8B_ACHUNKS;
    /* (c, s, r) of each element of the chunk (VEC: of its first) */
    int ce[E], se[E], re[E];
    ce[0] = c, se[0] = s, re[0] = r;
#pragma unroll
    for (int e = 1; e < E; ++e) {
        ce[e] = ce[e - 1] + 1, se[e] = se[e - 1], re[e] = re[e - 1];
        if (ce[e] == g.c) { /* the next tap */
            ce[e] = 0;
            if (++se[e] == g.s)
                se[e] = 0, ++re[e];
        }
    }
    for (c += TC8B_BK; c >= g.c;) { /* the chunk of the next stage */
        c -= g.c;
        if (++s == g.s)
            s = 0, ++r;
    }
    const int j = j0 + 4 * cc;
#pragma unroll
    for (int i = 0; i < AROWS; ++i) {
        float *dst = as + (ar + i * ASTEP) * TC8B_LDA + 4 * cc;
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const int h = rows.h0[i] + re[e] * g.dil_h, w = rows.w0[i] + se[e] * g.dil_w;
            const bool ok = rows.ok[i] && j + e < g.j && h >= 0 && h < g.h && w >= 0 && w < g.w;
            const float *src = ok ? rows.img[i] + ((long long)h * g.w + w) * g.c + ce[e] : x;
            cp_async_zfill<16 / E>(smem_addr(dst + e), src, ok);
        }
    }
    const int cb = tid % TC8B_BCHUNKS, br = tid / TC8B_BCHUNKS;
#pragma unroll
    for (int i = 0; i < BROWS; ++i) {
        const int jb = j0 + br + i * BSTEP;
        float *dst = bs + (br + i * BSTEP) * TC8B_LDB + 4 * cb;
#pragma unroll
        for (int e = 0; e < E; ++e) {
            const int k = k0 + 4 * cb + e;
            const bool ok = jb < g.j && k < g.k;
            cp_async_zfill<16 / E>(smem_addr(dst + e), ok ? wt + (long long)jb * g.k + k : wt, ok);
        }
    }
}
#endif

/* The kernel of 2 x WN warps, MINB blocks per SM (at most 65,536 / (MINB *
 * threads) registers per thread) and STAGES stages. */
template <int WN, int MINB, int STAGES, bool VEC, bool THREE>
__global__ void __launch_bounds__(64 * WN, MINB)
    conv2d_tc_mma_kernel(const float *__restrict__ x, const float *__restrict__ wt,
                         float *__restrict__ y, tc_geom g)
{
#if __CUDA_ARCH__ >= 800
    constexpr int THREADS = 64 * WN, NJ = TC8B_BN / WN / 8; /* 8-wide tiles per warp */
    constexpr int ASTEP = THREADS / TC8B_ACHUNKS, AROWS = TC8B_BM / ASTEP;
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int gq = lane >> 2, tq = lane & 3;                            /* g and t above */
    const int wm = (warp / WN) * 64, wn = (warp % WN) * (TC8B_BN / WN); /* the warp's tile */
    const long long m0 = (long long)blockIdx.x * TC8B_BM;
    const int k0 = blockIdx.y * TC8B_BN;

    /* this thread's A rows, once; (c, s, r) of its first chunk */
    tc_rows_of_a<AROWS> rows;
    const long long pq = (long long)g.p * g.q;
#pragma unroll
    for (int i = 0; i < AROWS; ++i) {
        const long long m = m0 + tid / TC8B_ACHUNKS + i * ASTEP;
        rows.ok[i] = m < g.m;
        const long long mm = rows.ok[i] ? m : 0;
        const int rem = (int)(mm % pq);
        rows.img[i] = x + (mm / pq) * g.h * (long long)g.w * g.c;
        rows.h0[i] = (rem / g.q) * g.stride_h - g.pad_h;
        rows.w0[i] = (rem % g.q) * g.stride_w - g.pad_w;
    }
    const int j_first = 4 * (tid % TC8B_ACHUNKS);
    int c = j_first % g.c, s = (j_first / g.c) % g.s, r = j_first / g.c / g.s;

    float acc[4][NJ][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int jj = 0; jj < NJ; ++jj)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                acc[i][jj][v] = 0.0f;

    const int steps = (g.j + TC8B_BK - 1) / TC8B_BK;
    /* prologue: the first STAGES - 1 stages in flight */
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) {
        if (st < steps)
            load_stage<THREADS, VEC>(smem + st * TC8B_STAGE, x, wt, g, st * TC8B_BK, k0, tid, rows,
                                     c, s, r);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    /* excerpt: mma pipeline */
    for (int step = 0; step < steps; ++step) {
        /* stage `step` has landed (at most STAGES - 2 groups still pending) */
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
        __syncthreads();
        /* refill the stage computed one step ago: every thread is past it */
        const int next = step + STAGES - 1;
        if (next < steps)
            load_stage<THREADS, VEC>(smem + (next % STAGES) * TC8B_STAGE, x, wt, g, next * TC8B_BK,
                                     k0, tid, rows, c, s, r);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        /* excerpt end: mma pipeline */

        const float *as = smem + (step % STAGES) * TC8B_STAGE;
        const float *bs = as + TC8B_BM * TC8B_LDA;
#pragma unroll
        for (int kk = 0; kk < TC8B_BK; kk += 8) {
            unsigned a[4][4], b[NJ][2], a_small[4][4], b_small[NJ][2]; /* small: 8c only */
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                unsigned raw[4];
                ldmatrix_a(raw, as + (wm + 16 * i) * TC8B_LDA, kk, lane);
#pragma unroll
                for (int v = 0; v < 4; ++v)
                    split<THREE>(raw[v], a[i][v], a_small[i][v]);
            }
#pragma unroll
            for (int jj = 0; jj < NJ; ++jj) {
                const float *bp = bs + (kk + tq) * TC8B_LDB + wn + 8 * jj + gq;
                split<THREE>(__float_as_uint(bp[0]), b[jj][0], b_small[jj][0]);
                split<THREE>(__float_as_uint(bp[4 * TC8B_LDB]), b[jj][1], b_small[jj][1]);
            }
            /* excerpt: three products */
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int jj = 0; jj < NJ; ++jj) {
                    if (!THREE) {
                        mma_m16n8k8_tf32(acc[i][jj], a[i], b[jj]);
                        continue;
                    }
                    /* 8c: this k-step's three products on a fresh sum, the
                     * small terms first, then one float addition per
                     * element, rounded to nearest */
                    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    mma_m16n8k8_tf32(t, a_small[i], b[jj]);
                    mma_m16n8k8_tf32(t, a[i], b_small[jj]);
                    mma_m16n8k8_tf32(t, a[i], b[jj]);
#pragma unroll
                    for (int v = 0; v < 4; ++v)
                        acc[i][jj][v] += t[v];
                }
            /* excerpt end: three products */
        }
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");

    /* c0, c1 at row g, columns 2t and 2t + 1; c2, c3 at row g + 8. With VEC,
     * K is even and so is col: the two go as one 8-byte store. */
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const long long row = m0 + wm + 16 * i + gq + 8 * half;
            if (row >= g.m)
                continue;
#pragma unroll
            for (int jj = 0; jj < NJ; ++jj) {
                const int col = k0 + wn + 8 * jj + 2 * tq;
                float *out = y + row * g.k + col;
                if (VEC && col < g.k)
                    *(float2 *)out = make_float2(acc[i][jj][2 * half], acc[i][jj][2 * half + 1]);
                if (!VEC && col < g.k)
                    out[0] = acc[i][jj][2 * half];
                if (!VEC && col + 1 < g.k)
                    out[1] = acc[i][jj][2 * half + 1];
            }
        }
#endif
}

/* The tiles. 8b: 4 warps of 64 x 64,
 * 128 accumulators per thread, two blocks per SM, four stages of 18.5 KB.
 * 8c needs more registers for its split operands and correction sums:
 * 8 warps of 64 x 32, one block per SM, three stages of 18.5 KB. */
#define TC8B_TILE 2, 2, 4 /* WN, blocks per SM, stages */
#define TC8C_TILE 4, 1, 3

/* The kernel of a tile for STAGES, VEC and THREE, as an address. */
template <int WN, int MINB, bool THREE, int STAGES> static const void *mma_kernel(bool vec)
{
    return vec ? (const void *)conv2d_tc_mma_kernel<WN, MINB, STAGES, true, THREE>
               : (const void *)conv2d_tc_mma_kernel<WN, MINB, STAGES, false, THREE>;
}

/* The launch of a tile: STAGES stages where they fit, else two; neither:
 * skipped with the reason. */
template <int WN, int MINB, int STAGES, bool THREE>
static conv_status launch_mma(const conv_params *p, bool vec, const float *d_x, const float *d_w,
                              float *d_y, cudaStream_t stream, conv_msg *msg)
{
    const int threads = 64 * WN;
    int stages = STAGES;
    conv_msg why = {{0}};
    if (conv_kernel_fits(mma_kernel<WN, MINB, THREE, STAGES>(vec), "conv2d_tc_mma_kernel", threads,
                         (size_t)STAGES * TC8B_STAGE * sizeof(float), &why) != CONV_OK)
        stages = 2;
    const void *kernel = stages == STAGES ? mma_kernel<WN, MINB, THREE, STAGES>(vec)
                                          : mma_kernel<WN, MINB, THREE, 2>(vec);
    const size_t smem = (size_t)stages * TC8B_STAGE * sizeof(float);
    conv_status st;
    if ((st = conv_kernel_fits(kernel, "conv2d_tc_mma_kernel", threads, smem, msg)) != CONV_OK ||
        (st = tc_available_for(kernel, THREE ? "8c mma.sync 3xTF32" : "8b mma.sync TF32", msg)) !=
            CONV_OK)
        return st;
    tc_geom g = tc_make_geom(p);
    const dim3 grid((unsigned)((g.m + TC8B_BM - 1) / TC8B_BM),
                    (unsigned)((g.k + TC8B_BN - 1) / TC8B_BN));
    /* one launch for the instantiations: the kernel's address and its arguments */
    void *args[] = {(void *)&d_x, (void *)&d_w, (void *)&d_y, (void *)&g};
    CONV_CUDA_CHECK(cudaLaunchKernel(kernel, grid, dim3(threads), args, smem, stream), msg);
    CONV_CHECK_LAUNCH("conv2d_tc_mma_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_tc_mma(const conv_params *p, tc_precision t, const float *d_x,
                                     const float *d_w, float *d_y, cudaStream_t stream,
                                     conv_msg *msg)
{
    conv_status st = tc_check_call(p, d_x, d_w, d_y, msg);
    if (st == CONV_OK && t != TC_TF32 && t != TC_3XTF32)
        st = conv_fail(msg, CONV_ERR_INVALID, "8b and 8c run TF32 or 3xTF32, not precision %d",
                       (int)t);
    if (st != CONV_OK)
        return st;
    const bool three = t == TC_3XTF32;
    const bool vec = p->c % 4 == 0 && p->k % 4 == 0 &&
                     ((uintptr_t)d_x | (uintptr_t)d_w) % 16 == 0 && (uintptr_t)d_y % 8 == 0;
    return three ? launch_mma<TC8C_TILE, true>(p, vec, d_x, d_w, d_y, stream, msg)
                 : launch_mma<TC8B_TILE, false>(p, vec, d_x, d_w, d_y, stream, msg);
}

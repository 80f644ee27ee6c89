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
 * so each thread loads exactly its elements from shared memory, laid out
 * (padded rows) so that those loads hit 32 different banks, and stores its
 * results straight to global memory.
 *
 * A block computes TC8B_BM x TC8B_BN = 128 x 128 outputs with 8 warps (2 along
 * m, 4 along n); a warp owns 64 x 32: 4 x 4 tiles of 16 x 8, 64 accumulators
 * per thread. Per step of TC8B_BK = 16 along j it issues 2 x 16 mma.sync
 * (3xTF32: 2 x 48). The copies run STAGES - 1 steps ahead: while the tensor
 * cores work on one stage, cp.async fills the next ones (zero-filled past the
 * edges). Where C and K are multiples of 4 (VEC), each copy moves 4 floats
 * (16 bytes) instead of one: four times fewer copies and address
 * computations. Three stages take 55.5 KB of shared memory; where the device
 * (or CONV_SMEM_LIMIT_KB) allows less, the same kernel runs with two stages,
 * 37 KB: plain double buffering, the copy of one step under the math of the
 * previous one. */
#include "tensor_cores.h"

#include <stdint.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_geom.cuh"

#define TC8B_BM      128
#define TC8B_BN      128
#define TC8B_BK      16
#define TC8B_THREADS 256
#define TC8B_STAGES  3             /* where they fit; else 2 (conv2d_tc_mma()) */
#define TC8B_LDA     (TC8B_BK + 4) /* A rows of a stage: g*20 + t covers 32 banks */
#define TC8B_LDB     (TC8B_BN + 8) /* B rows: t*136 + g covers 32 banks */
#define TC8B_STAGE   (TC8B_BM * TC8B_LDA + TC8B_BK * TC8B_LDB) /* floats per stage */

#if __CUDA_ARCH__ >= 800
/* A cp.async of BYTES (4 or 16); where ok is false it copies 0 source bytes,
 * which writes zeros (the source is not read). */
template <int BYTES>
__device__ __forceinline__ void cp_async_zfill(float *smem, const float *gmem, bool ok)
{
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(gmem),
                 "n"(BYTES), "r"(ok ? BYTES : 0)
                 : "memory");
}

__device__ __forceinline__ unsigned to_tf32(float v)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
    return r;
}

/* v as a TF32 operand; with THREE also its remainder v - big, in TF32. */
template <bool THREE> __device__ __forceinline__ void split(float v, unsigned &big, unsigned &small)
{
    big = to_tf32(v);
    if (THREE)
        small = to_tf32(v - __uint_as_float(big));
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

/* The loads of one stage: A (128 x 16) and B (16 x 128), each thread 8
 * consecutive elements of each, V = 4 (VEC) or 1 at a time. The A row of this
 * thread is fixed: (n, h0, w0) computed once by the caller; along j it steps
 * (c, s, r) by additions. With VEC, C % 4 == 0, so 4 consecutive j from a
 * multiple of 4 are 4 channels of one tap: contiguous in x. */
template <bool VEC>
__device__ __forceinline__ void load_stage(float *stage, const float *__restrict__ x,
                                           const float *__restrict__ wt, const tc_geom &g, int j0,
                                           int k0, int tid, bool row_ok, const float *x_img, int h0,
                                           int w0)
{
    constexpr int V = VEC ? 4 : 1;
    float *as = stage, *bs = stage + TC8B_BM * TC8B_LDA;
    /* A: row tid / 2, columns (tid % 2) * 8 .. + 7 */
    const int arow = tid >> 1, acol = (tid & 1) * 8;
    int j = j0 + acol;
    int c = j % g.c, rs = j / g.c, s = rs % g.s, r = rs / g.s;
#pragma unroll
    for (int e = 0; e < 8; e += V, j += V) {
        const int h = h0 + r * g.dil_h, w = w0 + s * g.dil_w;
        const bool ok = row_ok && j < g.j && h >= 0 && h < g.h && w >= 0 && w < g.w;
        cp_async_zfill<4 * V>(as + arow * TC8B_LDA + acol + e,
                              ok ? x_img + ((long long)h * g.w + w) * g.c + c : x, ok);
        if ((c += V) == g.c) { /* the next tap */
            c = 0;
            if (++s == g.s)
                s = 0, ++r;
        }
    }
    /* B: row tid / 16, columns (tid % 16) * 8 .. + 7: contiguous in w */
    const int brow = tid >> 4, bcol = (tid & 15) * 8;
    const int jb = j0 + brow;
#pragma unroll
    for (int e = 0; e < 8; e += V) {
        const int k = k0 + bcol + e;
        const bool ok = jb < g.j && k < g.k;
        cp_async_zfill<4 * V>(bs + brow * TC8B_LDB + bcol + e,
                              ok ? wt + (long long)jb * g.k + k : wt, ok);
    }
}
#endif

template <int STAGES, bool VEC, bool THREE>
__global__ void __launch_bounds__(TC8B_THREADS)
    conv2d_tc_mma_kernel(const float *__restrict__ x, const float *__restrict__ wt,
                         float *__restrict__ y, tc_geom g)
{
#if __CUDA_ARCH__ >= 800
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int gq = lane >> 2, tq = lane & 3;               /* g and t above */
    const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32; /* the warp's 64 x 32 */
    const long long m0 = (long long)blockIdx.x * TC8B_BM;
    const int k0 = blockIdx.y * TC8B_BN;

    /* this thread's A row, once */
    const long long m = m0 + (tid >> 1);
    const bool row_ok = m < g.m;
    const long long pq = (long long)g.p * g.q, mm = row_ok ? m : 0;
    const int rem = (int)(mm % pq);
    const float *x_img = x + (mm / pq) * g.h * (long long)g.w * g.c;
    const int h0 = (rem / g.q) * g.stride_h - g.pad_h, w0 = (rem % g.q) * g.stride_w - g.pad_w;

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                acc[i][jj][v] = 0.0f;

    const int steps = (g.j + TC8B_BK - 1) / TC8B_BK;
    /* prologue: the first STAGES - 1 stages in flight */
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) {
        if (st < steps)
            load_stage<VEC>(smem + st * TC8B_STAGE, x, wt, g, st * TC8B_BK, k0, tid, row_ok, x_img,
                            h0, w0);
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
            load_stage<VEC>(smem + (next % STAGES) * TC8B_STAGE, x, wt, g, next * TC8B_BK, k0, tid,
                            row_ok, x_img, h0, w0);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        /* excerpt end: mma pipeline */

        const float *as = smem + (step % STAGES) * TC8B_STAGE;
        const float *bs = as + TC8B_BM * TC8B_LDA;
#pragma unroll
        for (int kk = 0; kk < TC8B_BK; kk += 8) {
            unsigned a[4][4], b[4][2], a_small[4][4], b_small[4][2]; /* small: 8c only */
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float *ap = as + (wm + 16 * i + gq) * TC8B_LDA + kk + tq;
                split<THREE>(ap[0], a[i][0], a_small[i][0]);
                split<THREE>(ap[8 * TC8B_LDA], a[i][1], a_small[i][1]);
                split<THREE>(ap[4], a[i][2], a_small[i][2]);
                split<THREE>(ap[8 * TC8B_LDA + 4], a[i][3], a_small[i][3]);
            }
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
                const float *bp = bs + (kk + tq) * TC8B_LDB + wn + 8 * jj + gq;
                split<THREE>(bp[0], b[jj][0], b_small[jj][0]);
                split<THREE>(bp[4 * TC8B_LDB], b[jj][1], b_small[jj][1]);
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int jj = 0; jj < 4; ++jj) {
                    if (THREE) { /* the small terms first: they are the smaller sums */
                        mma_m16n8k8_tf32(acc[i][jj], a_small[i], b[jj]);
                        mma_m16n8k8_tf32(acc[i][jj], a[i], b_small[jj]);
                    }
                    mma_m16n8k8_tf32(acc[i][jj], a[i], b[jj]);
                }
        }
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");

    /* c0, c1 at row g, columns 2t and 2t + 1; c2, c3 at row g + 8 */
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const long long row = m0 + wm + 16 * i + gq + 8 * half;
            if (row >= g.m)
                continue;
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
                const int col = k0 + wn + 8 * jj + 2 * tq;
                if (col < g.k)
                    y[row * g.k + col] = acc[i][jj][2 * half];
                if (col + 1 < g.k)
                    y[row * g.k + col + 1] = acc[i][jj][2 * half + 1];
            }
        }
#endif
}

/* Bytes of shared memory of the kernel with `stages` stages. */
static size_t tc_mma_smem(int stages)
{
    return (size_t)stages * TC8B_STAGE * sizeof(float);
}

/* The kernel for STAGES, VEC and THREE, as an address. */
template <int STAGES> static const void *mma_kernel(bool vec, bool three)
{
    if (vec)
        return three ? (const void *)conv2d_tc_mma_kernel<STAGES, true, true>
                     : (const void *)conv2d_tc_mma_kernel<STAGES, true, false>;
    return three ? (const void *)conv2d_tc_mma_kernel<STAGES, false, true>
                 : (const void *)conv2d_tc_mma_kernel<STAGES, false, false>;
}

extern "C" conv_status conv2d_tc_mma(const conv_params *p, tc_precision t, const float *d_x,
                                     const float *d_w, float *d_y, cudaStream_t stream,
                                     conv_msg *msg)
{
    conv_status st = conv_check_pointers(d_x, "x", d_w, "w", d_y, "y", msg);
    if (st == CONV_OK && (unsigned)t >= TC_PRECISION_COUNT)
        st = conv_fail(msg, CONV_ERR_INVALID, "invalid step 08 precision %d", (int)t);
    if (st == CONV_OK)
        st = tc_check(p, msg);
    if (st != CONV_OK)
        return st;
    const bool three = t == TC_3XTF32;
    const bool vec = p->c % 4 == 0 && p->k % 4 == 0 && ((uintptr_t)d_x | (uintptr_t)d_w) % 16 == 0;
    /* TC8B_STAGES stages where they fit, else two; neither: skipped with the reason */
    int stages = TC8B_STAGES;
    conv_msg why = {{0}};
    if (conv_kernel_fits(mma_kernel<TC8B_STAGES>(vec, three), "conv2d_tc_mma_kernel", TC8B_THREADS,
                         tc_mma_smem(TC8B_STAGES), &why) != CONV_OK)
        stages = 2;
    const void *kernel =
        stages == TC8B_STAGES ? mma_kernel<TC8B_STAGES>(vec, three) : mma_kernel<2>(vec, three);
    const size_t smem = tc_mma_smem(stages);
    if ((st = conv_kernel_fits(kernel, "conv2d_tc_mma_kernel", TC8B_THREADS, smem, msg)) !=
            CONV_OK ||
        (st = tc_available_for(kernel, three ? "8c mma.sync 3xTF32" : "8b mma.sync TF32", msg)) !=
            CONV_OK)
        return st;
    tc_geom g = tc_make_geom(p);
    const dim3 grid((unsigned)((g.m + TC8B_BM - 1) / TC8B_BM),
                    (unsigned)((g.k + TC8B_BN - 1) / TC8B_BN));
    /* one launch for the eight instantiations: the kernel's address and its arguments */
    void *args[] = {(void *)&d_x, (void *)&d_w, (void *)&d_y, (void *)&g};
    CONV_CUDA_CHECK(cudaLaunchKernel(kernel, grid, dim3(TC8B_THREADS), args, smem, stream), msg);
    CONV_CHECK_LAUNCH("conv2d_tc_mma_kernel", msg);
    return CONV_OK;
}

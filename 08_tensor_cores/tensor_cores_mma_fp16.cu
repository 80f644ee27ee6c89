/* Step 08. Version: 8b-fp16.
 *
 * 8b's GEMM view in half precision with mma.sync, for every GPU of the
 * course: x and w rounded to FP16 as they are copied to shared memory,
 * fragments loaded by ldmatrix, float accumulators. From compute capability
 * 8.0 one m16n8k16 product per fragment pair, on Turing (7.5) the same as two
 * m16n8k8 products. The copies are register-staged (the next tile's loads in
 * flight while the tensor cores work on this one, then converted and stored
 * into the other of two buffers): cp.async copies bytes as they are and
 * cannot round a float to a half. Note 08, "8b in FP16". */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_geom.cuh"
#include "tensor_cores.h"

#define TC16_BM      128 /* outputs (pixels) per block */
#define TC16_BN      128 /* filters per block */
#define TC16_BK      32  /* terms of the sum per tile */
#define TC16_LD      40  /* a shared row: BK halves and 8 of padding (80 bytes) */
#define TC16_THREADS 256 /* 8 warps: 2 along m of 64 rows, 4 along n of 32 */

#if __CUDA_ARCH__ >= 750
/* Four 8 x 8 matrices of halves from shared memory, one row address a lane
 * (lanes 0-7 the first matrix's rows, 8-15 the second's, ...); each lane gets
 * two neighbours of each matrix, in the layout of mma.sync's fragments. */
__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const __half *row)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

/* excerpt: mma fp16 */
/* c += a * b for one warp: a 16 x 16 tile of halves (a0..a3), a 16 x 8 tile
 * (b0, b1), a 16 x 8 tile of floats (c0..c3). Turing has m16n8k8 only: the
 * same product as two, columns 0-7 of a with b0 and 8-15 with b1. */
__device__ __forceinline__ void mma_fp16(float c[4], const unsigned a[4], const unsigned b[2])
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[2]), "r"(a[3]), "r"(b[1]));
#endif
}
/* excerpt end: mma fp16 */

/* The tile in flight: 16 neighbours along j of one A row and 16 of one B
 * column (a filter), as floats until they are stored. */
typedef struct {
    float a[16], b[16];
} tc16_stage;

/* Thread tid's part of tile j0: A row tid / 2 (an output pixel), terms
 * j0 + 16 * (tid % 2) .. + 15, gathered from x (0 outside the image and past
 * J or M); B column tid % 128 (a filter), terms j0 + 16 * (tid / 128) .. + 15,
 * from w[j * K + k] (0 past J or K). (n, ih0, iw0): the pixel's image and its
 * window's corner, found once per block. */
__device__ __forceinline__ void tc16_load(tc16_stage &st, const float *__restrict__ x,
                                          const float *__restrict__ w, const tc_geom &g, int j0,
                                          bool row_ok, long long img, int ih0, int iw0, int k,
                                          int tid)
{
    int j = j0 + 16 * (tid % 2);
    int c = j % g.c, rs = j / g.c;
    int r = rs / g.s, s = rs % g.s;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        const int ih = ih0 + r * g.dil_h, iw = iw0 + s * g.dil_w;
        const bool in = row_ok && j + i < g.j && ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
        st.a[i] = in ? x[((img * g.h + ih) * g.w + iw) * g.c + c] : 0.0f;
        if (++c == g.c) { /* the next tap of the window */
            c = 0;
            if (++s == g.s)
                s = 0, ++r;
        }
    }
    const int jb = j0 + 16 * (tid / TC16_BN);
#pragma unroll
    for (int i = 0; i < 16; ++i)
        st.b[i] = k < g.k && jb + i < g.j ? w[(long long)(jb + i) * g.k + k] : 0.0f;
}

/* The staged tile into shared memory, rounded to FP16: A as [m][j], B as
 * [k][j] (each filter's terms in a row: the "col" operand of mma.sync). */
__device__ __forceinline__ void tc16_store(const tc16_stage &st, __half *as, __half *bs, int tid)
{
    __half2 *ar = (__half2 *)(as + (tid / 2) * TC16_LD + 16 * (tid % 2));
    __half2 *br = (__half2 *)(bs + (tid % TC16_BN) * TC16_LD + 16 * (tid / TC16_BN));
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        ar[i] = __floats2half2_rn(st.a[2 * i], st.a[2 * i + 1]);
        br[i] = __floats2half2_rn(st.b[2 * i], st.b[2 * i + 1]);
    }
}
#endif

__global__ void __launch_bounds__(TC16_THREADS)
    conv2d_tc_mma_fp16_kernel(const float *__restrict__ x, const float *__restrict__ w,
                              float *__restrict__ y, tc_geom g)
{
#if __CUDA_ARCH__ >= 750
    __shared__ __align__(16) __half as[2][TC16_BM * TC16_LD];
    __shared__ __align__(16) __half bs[2][TC16_BN * TC16_LD];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = (warp / 4) * 64, wn = (warp % 4) * 32; /* the warp's 64 x 32 */
    const long long m0 = (long long)blockIdx.x * TC16_BM;
    const int k0 = blockIdx.y * TC16_BN;

    /* this thread's A row (a pixel) and B column (a filter), once */
    const long long m = m0 + tid / 2;
    const bool row_ok = m < g.m;
    const long long pq = (long long)g.p * g.q;
    const long long img = row_ok ? m / pq : 0;
    const int rem = row_ok ? (int)(m % pq) : 0;
    const int ih0 = (rem / g.q) * g.stride_h - g.pad_h, iw0 = (rem % g.q) * g.stride_w - g.pad_w;
    const int k = k0 + tid % TC16_BN;

    float acc[4][4][4]; /* [m16 tile][n8 tile][c0..c3] */
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                acc[i][jj][v] = 0.0f;

    tc16_stage st;
    tc16_load(st, x, w, g, 0, row_ok, img, ih0, iw0, k, tid);
    tc16_store(st, as[0], bs[0], tid);
    __syncthreads();
    const int tiles = (g.j + TC16_BK - 1) / TC16_BK;
    for (int t = 0; t < tiles; ++t) {
        const int buf = t & 1;
        if (t + 1 < tiles) /* the next tile's loads in flight during the products */
            tc16_load(st, x, w, g, (t + 1) * TC16_BK, row_ok, img, ih0, iw0, k, tid);
#pragma unroll
        for (int kk = 0; kk < TC16_BK; kk += 16) {
            unsigned a[4][4], b[4][2];
            /* exercise 08-ldmatrix begin: a k-step's fragments, by ldmatrix */
            /* A: rows wm + 16i + (lane % 16), columns kk + 8 (lane / 16) */
#pragma unroll
            for (int i = 0; i < 4; ++i)
                ldmatrix_x4(a[i],
                            as[buf] + (wm + 16 * i + (lane & 15)) * TC16_LD + kk + 8 * (lane >> 4));
                /* B: two n8 tiles a load; filters wn + 16h + (lane % 8) + 8 (lane / 16),
                 * terms kk + 8 ((lane / 8) % 2) */
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                unsigned r[4];
                ldmatrix_x4(r, bs[buf] + (wn + 16 * h + (lane & 7) + 8 * (lane >> 4)) * TC16_LD +
                                   kk + 8 * ((lane >> 3) & 1));
                b[2 * h][0] = r[0], b[2 * h][1] = r[1];
                b[2 * h + 1][0] = r[2], b[2 * h + 1][1] = r[3];
            }
            /* exercise 08-ldmatrix stub
            // TODO(exercise 08-ldmatrix): fill a[i], i = 0..3, with the 16 x 16 A
            // tile of rows wm + 16 i, columns kk .. kk + 15 of as[buf], and b[jj],
            // jj = 0..3, with the B tile of filters wn + 8 jj, terms kk .. kk + 15
            // of bs[buf] (two registers: terms 0-7, then 8-15), by ldmatrix_x4:
            // each lane gives the address of one row of one of its four 8 x 8
            // matrices (note 08, "8b in half precision"). Graded by
            // tests/test_08_fp16.c on every GPU from compute capability 7.5.
            for (int i = 0; i < 4; ++i)
                a[i][0] = a[i][1] = a[i][2] = a[i][3] = 0u;
            for (int jj = 0; jj < 4; ++jj)
                b[jj][0] = b[jj][1] = 0u;
               exercise 08-ldmatrix end */
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int jj = 0; jj < 4; ++jj)
                    mma_fp16(acc[i][jj], a[i], b[jj]);
        }
        if (t + 1 < tiles)
            tc16_store(st, as[buf ^ 1], bs[buf ^ 1], tid);
        __syncthreads();
    }

    /* c0, c1: row g, columns 2t, 2t + 1 of the 16 x 8 tile; c2, c3: row g + 8 */
    const int gq = lane >> 2, tq = lane & 3;
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
                float *out = y + row * g.k + col;
                if (col < g.k)
                    out[0] = acc[i][jj][2 * half];
                if (col + 1 < g.k)
                    out[1] = acc[i][jj][2 * half + 1];
            }
        }
#endif
}

extern "C" conv_status conv2d_tc_mma_fp16(const conv_params *p, const float *d_x, const float *d_w,
                                          float *d_y, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = tc_check_call(p, d_x, d_w, d_y, msg);
    if (st == CONV_OK)
        st = conv_kernel_fits((const void *)conv2d_tc_mma_fp16_kernel, "conv2d_tc_mma_fp16_kernel",
                              TC16_THREADS, 0, msg);
    if (st != CONV_OK)
        return st;
    const tc_geom g = tc_make_geom(p);
    const dim3 grid((unsigned)((g.m + TC16_BM - 1) / TC16_BM),
                    (unsigned)((g.k + TC16_BN - 1) / TC16_BN));
    conv2d_tc_mma_fp16_kernel<<<grid, TC16_THREADS, 0, stream>>>(d_x, d_w, d_y, g);
    CONV_CHECK_LAUNCH("conv2d_tc_mma_fp16_kernel", msg);
    return CONV_OK;
}

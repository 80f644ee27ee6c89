/* Step 08, 8a: 6f's implicit GEMM with its inner products on the tensor
 * cores, through WMMA (tensor_cores.h). Also here: tc_available(), whether
 * TF32 tensor cores run on this GPU with this build (conv_tf32_available(),
 * common/conv_device.h); the checks every launcher runs first are in
 * tc_check.c.
 *
 * The GEMM view of an NHWC convolution (as in 6f): C[m][k] = sum_j A[m][j] B[j][k],
 *   m = (n*P + p)*Q + q        the output pixel, M = N*P*Q rows,
 *   j = (r*S + s)*C + c        the filter tap and channel, J = R*S*C,
 *   A[m][j] = x[n][p*sh - ph + r*dh][q*sw - pw + s*dw][c]   (0 outside the image),
 *   B[j][k] = w[r][s][c][k] = w[j*K + k],   C[m][k] = y[m*K + k].
 *
 * A block computes TC_BM x TC_BN = 64 x 64 outputs with 4 warps of 2 x 2
 * accumulator fragments (16 x 16); per step of TC_BK = 16 along j it gathers
 * its A and B tiles into shared memory, then each warp issues mma_sync
 * (m16n16k8, TF32 inputs, float accumulators). TF32 tensor cores exist from
 * compute capability 8.0: the kernel body is compiled for __CUDA_ARCH__ >= 800
 * only, and the launcher refuses a GPU or a build that has none.
 *
 * Lesson: docs/08_tensor_cores.md, section "8a: the implicit GEMM on tensor cores". */
#include "tensor_cores.h"

#include <stdint.h>

#include <cuda_fp16.h>
#include <mma.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_geom.cuh"

#define TC_BM      64
#define TC_BN      64
#define TC_BK      16
#define TC_THREADS 128
#define TC_LDA     (TC_BK + 4) /* shared rows padded by 16 bytes: ldm a multiple of 4 */
#define TC_LDB     (TC_BN + 4)
#define TC_LDC     (TC_BN + 4)
#define TC_LDAH    (TC_BK + 8) /* FP16 rows padded by 16 bytes: ldm a multiple of 8 */
#define TC_LDBH    (TC_BN + 8)
/* tc_check() allows for the grid of the smallest tile, this one */
static_assert(TC_BM >= TC_CHECK_BM && TC_BN >= TC_CHECK_BN, "tc_check's grid is 8a's");

/* A[m][j] of the implicit matrix: the image element, or 0 outside it. */
__device__ __forceinline__ float tc_a(const float *__restrict__ x, const tc_geom &g, long long m,
                                      int j)
{
    if (m >= g.m || j >= g.j)
        return 0.0f;
    const int c = j % g.c, rs = j / g.c, s = rs % g.s, r = rs / g.s;
    const long long pq = (long long)g.p * g.q;
    const long long n = m / pq;
    const int rem = (int)(m % pq), op = rem / g.q, oq = rem % g.q;
    const int h = op * g.stride_h - g.pad_h + r * g.dil_h;
    const int w = oq * g.stride_w - g.pad_w + s * g.dil_w;
    if (h < 0 || h >= g.h || w < 0 || w >= g.w)
        return 0.0f;
    return x[((n * g.h + h) * g.w + w) * g.c + c];
}

/* The block's 64 x 64 outputs, staged in cs by the warps, stored to y
 * under a guard (the edge tiles of the GEMM). */
__device__ __forceinline__ void tc_store_block(const float *cs, float *__restrict__ y,
                                               const tc_geom &g, long long m0, int k0, int tid)
{
    for (int e = tid; e < TC_BM * TC_BN; e += TC_THREADS) {
        const int row = e / TC_BN, col = e % TC_BN;
        const long long m = m0 + row;
        const int k = k0 + col;
        if (m < g.m && k < g.k)
            y[m * g.k + k] = cs[row * TC_LDC + col];
    }
}

/* A warp's 2 x 2 accumulator fragments, m16n16kKF: KF = 8 for TF32, 16
 * for FP16 (the fragment's depth, a compile-time tile size). */
template <int KF>
__device__ __forceinline__ void
tc_zero_acc(nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, KF, float> (&acc)[2][2])
{
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int jj = 0; jj < 2; ++jj)
            nvcuda::wmma::fill_fragment(acc[i][jj], 0.0f);
}

/* The block's outputs through shared memory, so that edge tiles are stored
 * under a guard: each warp stores its fragments into cs, then after a
 * barrier the block's threads copy the tile to y (tc_store_block). */
template <int KF>
__device__ __forceinline__ void
tc_store_acc(nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, KF, float> (&acc)[2][2],
             float *cs, float *__restrict__ y, const tc_geom &g, long long m0, int k0, int tid,
             int wm, int wn)
{
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int jj = 0; jj < 2; ++jj)
            nvcuda::wmma::store_matrix_sync(cs + (wm + 16 * i) * TC_LDC + wn + 16 * jj, acc[i][jj],
                                            TC_LDC, nvcuda::wmma::mem_row_major);
    __syncthreads();
    tc_store_block(cs, y, g, m0, k0, tid);
}

__global__ void __launch_bounds__(TC_THREADS)
    conv2d_tc_wmma_kernel(const float *__restrict__ x, const float *__restrict__ wt,
                          float *__restrict__ y, tc_geom g)
{
#if __CUDA_ARCH__ >= 800
    using namespace nvcuda;
    __shared__ __align__(32) float as[TC_BM * TC_LDA];
    __shared__ __align__(32) float bs[TC_BK * TC_LDB];
    __shared__ __align__(32) float cs[TC_BM * TC_LDC];
    const int tid = threadIdx.x, warp = tid / 32;
    const int wm = (warp / 2) * 32, wn = (warp % 2) * 32; /* the warp's quarter */
    const long long m0 = (long long)blockIdx.x * TC_BM;
    const int k0 = blockIdx.y * TC_BN;

    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
    tc_zero_acc<8>(acc);

    for (int j0 = 0; j0 < g.j; j0 += TC_BK) {
        /* A tile: 64 x 16, consecutive threads along j (channels: contiguous in x) */
        for (int e = tid; e < TC_BM * TC_BK; e += TC_THREADS) {
            const int row = e / TC_BK, col = e % TC_BK;
            as[row * TC_LDA + col] = tc_a(x, g, m0 + row, j0 + col);
        }
        /* B tile: 16 x 64, consecutive threads along k (contiguous in w) */
        for (int e = tid; e < TC_BK * TC_BN; e += TC_THREADS) {
            const int row = e / TC_BN, col = e % TC_BN;
            const int j = j0 + row, k = k0 + col;
            bs[row * TC_LDB + col] = j < g.j && k < g.k ? wt[(long long)j * g.k + k] : 0.0f;
        }
        __syncthreads();
        /* excerpt: wmma k step */
#pragma unroll
        for (int kk = 0; kk < TC_BK; kk += 8) {
            wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b[2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                wmma::load_matrix_sync(a[i], as + (wm + 16 * i) * TC_LDA + kk, TC_LDA);
                wmma::load_matrix_sync(b[i], bs + kk * TC_LDB + wn + 16 * i, TC_LDB);
                /* the loaded floats, rounded to TF32 */
#pragma unroll
                for (int t = 0; t < a[i].num_elements; ++t)
                    a[i].x[t] = wmma::__float_to_tf32(a[i].x[t]);
#pragma unroll
                for (int t = 0; t < b[i].num_elements; ++t)
                    b[i].x[t] = wmma::__float_to_tf32(b[i].x[t]);
            }
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int jj = 0; jj < 2; ++jj)
                    wmma::mma_sync(acc[i][jj], a[i], b[jj], acc[i][jj]);
        }
        /* excerpt end: wmma k step */
        __syncthreads();
    }

    tc_store_acc<8>(acc, cs, y, g, m0, k0, tid, wm, wn);
#endif
}

/* 8a in half precision, for every GPU of the course (FP16 tensor cores exist
 * from compute capability 7.0): the same tiles, each input rounded to FP16
 * as it is gathered (two neighbours per thread, one __half2 store), one
 * m16n16k16 product per pair of fragments, float accumulators. x and w must
 * lie within +-65504, FP16's largest value: beyond it an input rounds to
 * infinity, and so does the output (the rows refuse such inputs). */
__global__ void __launch_bounds__(TC_THREADS)
    conv2d_tc_wmma_fp16_kernel(const float *__restrict__ x, const float *__restrict__ wt,
                               float *__restrict__ y, tc_geom g)
{
#if __CUDA_ARCH__ >= 700
    using namespace nvcuda;
    __shared__ __align__(32) __half as[TC_BM * TC_LDAH];
    __shared__ __align__(32) __half bs[TC_BK * TC_LDBH];
    __shared__ __align__(32) float cs[TC_BM * TC_LDC];
    const int tid = threadIdx.x, warp = tid / 32;
    const int wm = (warp / 2) * 32, wn = (warp % 2) * 32; /* the warp's quarter */
    const long long m0 = (long long)blockIdx.x * TC_BM;
    const int k0 = blockIdx.y * TC_BN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    tc_zero_acc<16>(acc);

    for (int j0 = 0; j0 < g.j; j0 += TC_BK) {
        /* exercise 08-fp16 begin: the tiles, rounded to FP16 */
        /* A tile: 64 x 16, each thread a pair of neighbours along j */
        for (int e = tid; e < TC_BM * TC_BK / 2; e += TC_THREADS) {
            const int row = e / (TC_BK / 2), col = 2 * (e % (TC_BK / 2));
            *(__half2 *)&as[row * TC_LDAH + col] = __floats2half2_rn(
                tc_a(x, g, m0 + row, j0 + col), tc_a(x, g, m0 + row, j0 + col + 1));
        }
        /* B tile: 16 x 64, each thread a pair of neighbours along k */
        for (int e = tid; e < TC_BK * TC_BN / 2; e += TC_THREADS) {
            const int row = e / (TC_BN / 2), col = 2 * (e % (TC_BN / 2));
            const int j = j0 + row, k = k0 + col;
            const long long at = (long long)j * g.k + k;
            *(__half2 *)&bs[row * TC_LDBH + col] = __floats2half2_rn(
                j < g.j && k < g.k ? wt[at] : 0.0f, j < g.j && k + 1 < g.k ? wt[at + 1] : 0.0f);
        }
        /* exercise 08-fp16 stub
        // TODO(exercise 08-fp16): fill as (64 x 16, row stride TC_LDAH) with
        // A[m0 + row][j0 + col] (tc_a) and bs (16 x 64, row stride TC_LDBH)
        // with B[j0 + row][k0 + col] = wt[j * K + k] (0 past J or K), each
        // rounded to FP16 to nearest; a thread may store two neighbours at
        // once as a __half2 (__floats2half2_rn). Graded by
        // tests/test_08_fp16.c (the gpu_tensor_cores_fp16 suite), on every GPU from
        // compute capability 7.0.
        for (int e = tid; e < TC_BM * TC_LDAH; e += TC_THREADS)
            as[e] = __float2half_rn(0.0f);
        for (int e = tid; e < TC_BK * TC_LDBH; e += TC_THREADS)
            bs[e] = __float2half_rn(0.0f);
           exercise 08-fp16 end */
        __syncthreads();
        /* excerpt: wmma fp16 k step */
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            wmma::load_matrix_sync(a[i], as + (wm + 16 * i) * TC_LDAH, TC_LDAH);
            wmma::load_matrix_sync(b[i], bs + wn + 16 * i, TC_LDBH);
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int jj = 0; jj < 2; ++jj)
                wmma::mma_sync(acc[i][jj], a[i], b[jj], acc[i][jj]);
        /* excerpt end: wmma fp16 k step */
        __syncthreads();
    }

    tc_store_acc<16>(acc, cs, y, g, m0, k0, tid, wm, wn);
#endif
}

extern "C" conv_status tc_available(conv_msg *msg)
{
    return conv_tf32_available((const void *)conv2d_tc_wmma_kernel, "step 08", msg);
}

/* 8a in either precision: checks everything, then launches `kernel` (one
 * of the two above) over the 64 x 64 tiles of the GEMM. TF32 also needs a
 * GPU and a build with TF32 tensor cores; FP16, compute capability 7.0,
 * which every GPU of the course has. */
static conv_status wmma_launch(const void *kernel, const char *name, int tf32, const conv_params *p,
                               const float *d_x, const float *d_w, float *d_y, cudaStream_t stream,
                               conv_msg *msg)
{
    conv_status st = tc_check_call(p, d_x, d_w, d_y, msg);
    if (st == CONV_OK)
        st = conv_kernel_fits(kernel, name, TC_THREADS, 0, msg);
    if (st == CONV_OK && tf32)
        st = conv_tf32_available(kernel, "8a WMMA TF32", msg);
    if (st != CONV_OK)
        return st;
    tc_geom g = tc_make_geom(p);
    const dim3 grid((unsigned)((g.m + TC_BM - 1) / TC_BM), (unsigned)((g.k + TC_BN - 1) / TC_BN));
    void *args[] = {(void *)&d_x, (void *)&d_w, (void *)&d_y, (void *)&g};
    CONV_CUDA_CHECK(cudaLaunchKernel(kernel, grid, dim3(TC_THREADS), args, 0, stream), msg);
    CONV_CHECK_LAUNCH_OF(name, msg);
    return CONV_OK;
}

extern "C" conv_status conv2d_tc_wmma(const conv_params *p, const float *d_x, const float *d_w,
                                      float *d_y, cudaStream_t stream, conv_msg *msg)
{
    return wmma_launch((const void *)conv2d_tc_wmma_kernel, "conv2d_tc_wmma_kernel", 1, p, d_x, d_w,
                       d_y, stream, msg);
}

extern "C" conv_status conv2d_tc_wmma_fp16(const conv_params *p, const float *d_x, const float *d_w,
                                           float *d_y, cudaStream_t stream, conv_msg *msg)
{
    return wmma_launch((const void *)conv2d_tc_wmma_fp16_kernel, "conv2d_tc_wmma_fp16_kernel", 0, p,
                       d_x, d_w, d_y, stream, msg);
}

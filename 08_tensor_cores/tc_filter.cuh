/* Step 08. Versions: 8b, 8b-xt, 8c (tensor_cores_mma.cu) and 8b-fp16
 * (tensor_cores_mma_fp16.cu).
 *
 * The filter w[j][k] (RSCK: B of the GEMM) as wk[k][j] (KRSC), the layout
 * whose rows ldmatrix reads as the "col" operand of mma.sync: in floats
 * rounded to TF32 (8b) or left as they are (8c, which splits them), or in
 * FP16 (8b-fp16). Device code and its launch; include from a .cu file. */
#ifndef TC_FILTER_CUH
#define TC_FILTER_CUH

#include <cuda_fp16.h>
#include <limits.h>

#include "conv_cuda.h"
#include "tc_geom.cuh"
#include "tc_ptx.cuh"

/* One value of wk: a float, rounded to TF32 where `round` (code for
 * compute capability 8.0 or newer: TF32 kernels run nowhere else), or a
 * half, rounded to nearest. */
static __device__ __forceinline__ void tc_filter_store(float *out, float v, int round)
{
#if __CUDA_ARCH__ >= 800
    *out = round ? __uint_as_float(to_tf32(v)) : v;
#else
    (void)round;
    *out = v;
#endif
}

static __device__ __forceinline__ void tc_filter_store(__half *out, float v, int round)
{
    (void)round;
    *out = __float2half_rn(v);
}

/* excerpt: the filter as KRSC */
/* Each block transposes one 32 x 32 tile of w, tile blockIdx.x = jt +
 * jtiles kt at j = 32 jt, k = 32 kt, through shared memory, reading rows of
 * w and writing rows of wk, 32 contiguous values each. The tile's rows are
 * 33 floats, so that a warp reading a column of it reads 32 banks. */
template <typename T>
__global__ void __launch_bounds__(256)
    tc_filter_kernel(const float *__restrict__ w, T *__restrict__ wk, int nj, int nk, int jtiles,
                     int round)
{
    __shared__ float tile[32][33];
    const int jb = (int)(blockIdx.x % jtiles) * 32, kb = (int)(blockIdx.x / jtiles) * 32;
    const int tx = threadIdx.x;
    for (int r = threadIdx.y; r < 32; r += 8)
        if (jb + r < nj && kb + tx < nk)
            tile[r][tx] = w[(long long)(jb + r) * nk + kb + tx];
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += 8)
        if (kb + r < nk && jb + tx < nj)
            tc_filter_store(&wk[(long long)(kb + r) * nj + jb + tx], tile[tx][r], round);
}
/* excerpt end: the filter as KRSC */

/* The launch of tc_filter_kernel: all of w into d_wk, 32 x 8 threads a
 * tile; `who` names the version in the refusal of a filter with more tiles
 * than a grid holds. */
template <typename T>
static conv_status tc_filter(const tc_geom &g, bool round, const float *d_w, T *d_wk,
                             cudaStream_t stream, const char *who, conv_msg *msg)
{
    const long long jtiles = (g.j + 31) / 32, tiles = jtiles * ((g.k + 31) / 32);
    if (tiles > INT_MAX)
        return conv_fail(msg, CONV_ERR_INVALID,
                         "the filter (%d x %d) is too large for %s's transpose", g.j, g.k, who);
    tc_filter_kernel<T><<<(unsigned)tiles, dim3(32, 8), 0, stream>>>(d_w, d_wk, g.j, g.k,
                                                                     (int)jtiles, round ? 1 : 0);
    CONV_CHECK_LAUNCH("tc_filter_kernel", msg);
    return CONV_OK;
}

/* In NCHW the filter w[k][c][r][s] is wk already: one copy, rounded to
 * TF32 where `round`, a grid-stride loop (8b and 8c in NCHW). */
static __global__ void __launch_bounds__(256)
    tc_filter_copy_kernel(const float *__restrict__ w, float *__restrict__ wk, long long count,
                          int round)
{
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < count; i += 256LL * gridDim.x)
        tc_filter_store(&wk[i], w[i], round);
}

static inline conv_status tc_filter_copy(const tc_geom &g, bool round, const float *d_w,
                                         float *d_wk, cudaStream_t stream, conv_msg *msg)
{
    const long long count = (long long)g.j * g.k, blocks = (count + 255) / 256;
    tc_filter_copy_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(
        d_w, d_wk, count, round ? 1 : 0);
    CONV_CHECK_LAUNCH("tc_filter_copy_kernel", msg);
    return CONV_OK;
}

#endif /* TC_FILTER_CUH */

/* Step 06, GEMM 6e: double buffering and register prefetch (the handbook's
 * "two-level prefetch"). What it adds to 6d (gemm_6d.cu): the next tile's
 * global loads are in flight while the current tile's FMAs run, two shared
 * buffers need one barrier per tile instead of two, tiles inside the matrices
 * are loaded without guards, and the tile shape was chosen by measurement.
 * All of that lives in dbuf_gemm_body (gemm_dbuf.cuh), which 6f shares; this
 * file instantiates it for a matrix A. Any M, N, K >= 1: with K and N
 * multiples of 4 and 16-byte aligned pointers the kernel takes the float4
 * path (VEC), otherwise the same kernel loads element by element.
 *
 * Launch: DBUF_BM x DBUF_BN = 64 x 128 outputs per block of DBUF_THREADS = 128
 * threads (8x8 each), a 1D grid of ceil(M / 64) * ceil(N / 128) blocks
 * (gemm_grid_blocks); the shape's macros and their measurements are at the
 * end of gemm_dbuf.cuh. */
#include "gemm.h"

#include "conv_cuda.h"
#include "gemm_dbuf.cuh"
#include "gemm_launch.cuh"

extern "C" const gemm_block_tile gemm_6e_tile = {DBUF_BM, DBUF_BN};

template <bool VEC>
__global__ void __launch_bounds__(DBUF_THREADS, DBUF_MINB)
    gemm_6e_dbuf_kernel(int m, int n, int k, const float *__restrict__ a,
                        const float *__restrict__ b, float *__restrict__ c, int tiles_n)
{
    implicit_geom g = {};
    dbuf_gemm_body<DBUF_BM, DBUF_TM, DBUF_WR, DBUF_BK, VEC, false>(m, n, k, a, b, c, tiles_n, g);
}

extern "C" conv_status gemm_6e_dbuf(int m, int n, int k, const float *d_a, const float *d_b,
                                    float *d_c, cudaStream_t stream, conv_msg *msg)
{
    const int vec = gemm_vec_ok(n, k, d_a, d_b, d_c);
    return gemm_run(GEMM_6E_DBUF, m, n, k, d_a, d_b, d_c,
                    vec ? gemm_6e_dbuf_kernel<true> : gemm_6e_dbuf_kernel<false>,
                    "gemm_6e_dbuf_kernel", dim3(DBUF_THREADS), stream, msg);
}

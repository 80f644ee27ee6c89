/* Step 06, GEMM 6c: register tiles. What it adds to 6b (gemm_6b.cu): each
 * thread computes an 8x8 tile of C in registers, so one value loaded from
 * shared memory feeds 8 multiply-adds instead of one. Any M, N, K >= 1 (edge
 * tiles are loaded with zeros and stored under a guard), element offsets in
 * 64 bits.
 *
 * Launch: 128 x 128 outputs per block of 256 threads (16 x 16, 8x8 each), a 1D
 * grid of ceil(M / 128) * ceil(N / 128) blocks (gemm_grid_blocks). */
#include "gemm.h"

#include <stddef.h>

#include "conv_cuda.h"
#include "conv_kernel_util.cuh"
#include "gemm_launch.cuh"

/* ---------------------------------------------------------------------------
 * 6c (and 6d, gemm_6d.cu): 128x128 outputs per block of 256 threads, 8x8 per
 * thread, K consumed RT_BK = 8 at a time (6e/6f keep 8x8 per thread but use a
 * 64x128 tile of 128 threads and DBUF_BK = 16, chosen by measurement, see
 * gemm_dbuf.cuh). Per k step a thread loads 8 values of A and 8 of B from
 * shared memory and does 64 FMAs: 1 shared load per 4 FMAs instead of 2 per
 * FMA. */
#define RT_BM      128
#define RT_BN      128
#define RT_BK      8
#define RT_THREADS 256
#define RT_TM      8
#define RT_TN      8

extern "C" const gemm_block_tile gemm_6c_tile = {RT_BM, RT_BN};

/* 6c: register tiling with scalar loads. Thread (ty, tx) owns rows ty*8..ty*8+7
 * and columns tx*8..tx*8+7. A is kept as loaded, as[row][k]; reading
 * bs[kk][tx*8 + j] puts threads tx and tx+4 in the same bank (stride 8 words):
 * a 4-way conflict that 6d removes. */
__global__ void __launch_bounds__(RT_THREADS)
    gemm_6c_regtile_kernel(int m, int n, int k, const float *__restrict__ a,
                           const float *__restrict__ b, float *__restrict__ c, int tiles_n)
{
    __shared__ float as[RT_BM][RT_BK];
    __shared__ float bs[RT_BK][RT_BN];
    int tile_m = blockIdx.x / tiles_n, tile_n = blockIdx.x % tiles_n;
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    int row0 = tile_m * RT_BM, col0 = tile_n * RT_BN;
    float acc[RT_TM][RT_TN];
    zero_tile(acc);

    for (int k0 = 0; k0 < k; k0 += RT_BK) {
#pragma unroll
        for (int l = 0; l < RT_BM * RT_BK / RT_THREADS; ++l) {
            int e = tid + l * RT_THREADS;
            int r = e / RT_BK, kk = e % RT_BK;
            int row = row0 + r;
            as[r][kk] = (row < m && k0 + kk < k) ? a[(size_t)row * k + k0 + kk] : 0.0f;
        }
#pragma unroll
        for (int l = 0; l < RT_BK * RT_BN / RT_THREADS; ++l) {
            int e = tid + l * RT_THREADS;
            int kk = e / RT_BN, cc = e % RT_BN;
            int col = col0 + cc;
            bs[kk][cc] = (k0 + kk < k && col < n) ? b[(size_t)(k0 + kk) * n + col] : 0.0f;
        }
        __syncthreads();
        /* excerpt: 6c register tile */
        /* exercise 06-regtile begin: the register outer product of one tile */
#pragma unroll
        for (int kk = 0; kk < RT_BK; ++kk) {
            float fa[RT_TM], fb[RT_TN];
#pragma unroll
            for (int i = 0; i < RT_TM; ++i)
                fa[i] = as[ty * RT_TM + i][kk];
#pragma unroll
            for (int j = 0; j < RT_TN; ++j)
                fb[j] = bs[kk][tx * RT_TN + j];
#pragma unroll
            for (int i = 0; i < RT_TM; ++i)
#pragma unroll
                for (int j = 0; j < RT_TN; ++j)
                    acc[i][j] += fa[i] * fb[j];
        }
        /* exercise 06-regtile stub
        // TODO(exercise 06-regtile): for each of the tile's RT_BK k steps, read this
        // thread's RT_TM values of A (rows ty*RT_TM .., column kk of as) and RT_TN values of B
        // (row kk of bs, columns tx*RT_TN ..) into registers, then add their outer product to
        // acc: 64 FMAs per 16 shared loads. Graded by tests/test_06_gemm.c
        // (gpu_gemm/regtile_6c_*).
           exercise 06-regtile end */
        /* excerpt end: 6c register tile */
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < RT_TM; ++i) {
        int row = row0 + ty * RT_TM + i;
        if (row >= m)
            continue;
#pragma unroll
        for (int j = 0; j < RT_TN; ++j) {
            int col = col0 + tx * RT_TN + j;
            if (col < n)
                c[(size_t)row * n + col] = acc[i][j];
        }
    }
}

extern "C" conv_status gemm_6c_regtile(int m, int n, int k, const float *d_a, const float *d_b,
                                       float *d_c, cudaStream_t stream, conv_msg *msg)
{
    return gemm_run(GEMM_6C_REGTILE, m, n, k, d_a, d_b, d_c, gemm_6c_regtile_kernel,
                    "gemm_6c_regtile_kernel", dim3(RT_THREADS), stream, msg);
}

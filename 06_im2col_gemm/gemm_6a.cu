/* Step 06, GEMM 6a: the naive kernel, the starting point of the progression
 * (gemm.h lists the versions). C[M][N] = A[M][K] * B[K][N], row-major FP32,
 * one thread per output; any M, N, K >= 1, element offsets in 64 bits.
 *
 * Launch: 8 x 32 outputs per block (a block of 32 x 8 threads), a 1D grid of
 * ceil(M / 8) * ceil(N / 32) blocks (gemm_grid_blocks). */
#include "gemm.h"

#include <stddef.h>

#include "conv_cuda.h"
#include "gemm_launch.cuh"

/* ---------------------------------------------------------------------------
 * 6a: naive. Each thread walks one row of A and one column of B. A warp covers
 * 32 consecutive columns of one row, so its A reads are one broadcast address
 * and its B reads and C writes are coalesced; but every operand is fetched
 * from memory (L1/L2 at best) once per multiply-add: 2 loads per FMA. */
#define NAIVE_BX 32
#define NAIVE_BY 8

extern "C" const gemm_block_tile gemm_6a_tile = {NAIVE_BY, NAIVE_BX};

__global__ void gemm_6a_naive_kernel(int m, int n, int k, const float *__restrict__ a,
                                     const float *__restrict__ b, float *__restrict__ c,
                                     int tiles_n)
{
    int tile_m = blockIdx.x / tiles_n, tile_n = blockIdx.x % tiles_n;
    int row = tile_m * NAIVE_BY + threadIdx.y;
    int col = tile_n * NAIVE_BX + threadIdx.x;
    if (row >= m || col >= n)
        return;
    const float *a_row = a + (size_t)row * k;
    float acc = 0.0f;
    for (int i = 0; i < k; ++i)
        acc += a_row[i] * b[(size_t)i * n + col];
    c[(size_t)row * n + col] = acc;
}

extern "C" conv_status gemm_6a_naive(int m, int n, int k, const float *d_a, const float *d_b,
                                     float *d_c, cudaStream_t stream, conv_msg *msg)
{
    return gemm_run(GEMM_6A_NAIVE, m, n, k, d_a, d_b, d_c, gemm_6a_naive_kernel,
                    "gemm_6a_naive_kernel", dim3(NAIVE_BX, NAIVE_BY), stream, msg);
}

/* Step 10, 10b: what its two implicit GEMMs share (conv_backward_10b_data.cu,
 * dgrad; conv_backward_10b_filter.cu, wgrad): dgrad's block tile and its
 * inner product over one shared tile (wgrad has its own, step 06's 6f shape,
 * in its file; it shares THREADS for its reduction kernel), and the host's
 * checks of the GEMM's dimensions. Lesson: docs/10_backward.md, section
 * "dgrad and wgrad as implicit GEMMs". */
#ifndef CONV_BACKWARD_10B_CUH
#define CONV_BACKWARD_10B_CUH

#include <limits.h>

#include "conv_backward.h"
#include "conv_status.h"

#define TILE    CONV_BACKWARD_IGEMM_TILE    /* 64 rows and 64 columns per block */
#define DEPTH   CONV_BACKWARD_IGEMM_DEPTH   /* 16 steps of the sum per shared tile */
#define THREADS CONV_BACKWARD_IGEMM_THREADS /* 256: a 16 x 16 grid of threads */

/* Both shared tiles are stored depth-major, as[kk][row] and bs[kk][col], one
 * float of padding per line against bank conflicts on the stores. Thread
 * (ty, tx) owns rows ty + 16*i and columns tx + 16*j, i, j < 4. */
__device__ __forceinline__ void tile_fma(float acc[4][4], const float (*as)[TILE + 1],
                                         const float (*bs)[TILE + 1], int ty, int tx)
{
#pragma unroll
    for (int kk = 0; kk < DEPTH; ++kk) {
        float a[4], b[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            a[i] = as[kk][ty + 16 * i];
            b[i] = bs[kk][tx + 16 * i];
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

/* The GEMM dimensions the kernels hold in ints, and the grid's limits. */
static conv_status check_dims(const conv_params *p, long long rows, long long cols, long long depth,
                              long long grid_y, long long grid_z, conv_msg *msg)
{
    const long long cap = INT_MAX - TILE;
    if (rows > cap || cols > cap || depth > cap || (long long)p->k * p->r * p->s > cap)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "unsupported size: a GEMM dimension of 10b (N*H*W, N*P*Q, C*R*S or "
                         "K*R*S) exceeds 2^31-1");
    if (grid_y > 65535 || grid_z > 65535)
        return conv_fail(
            msg, CONV_ERR_UNSUPPORTED,
            "unsupported size: 10b's grid needs %lld x %lld blocks in y and z (at most "
            "65535; --c, --k or the stride too large)",
            grid_y, grid_z);
    return CONV_OK;
}

static inline long long tiles_of(long long n)
{
    return (n + TILE - 1) / TILE;
}

#endif /* CONV_BACKWARD_10B_CUH */

/* Step 06: what 6d (gemm_6d.cu) and 6e/6f (gemm_dbuf.cuh) do the same way
 * at the two ends of a tile's trip: a thread's 4 values of a matrix A and of
 * B from global memory into registers (one float4 each with VEC), and its
 * TM x 8 outputs from registers into C. */
#ifndef GEMM_TILE_IO_CUH
#define GEMM_TILE_IO_CUH

#include <stddef.h>

/* The four floats of a 16-byte load, into four registers. */
static __device__ __forceinline__ void unpack4(float r[4], float4 v)
{
    r[0] = v.x;
    r[1] = v.y;
    r[2] = v.z;
    r[3] = v.w;
}

/* Loads this thread's 4 A values of a matrix, A[row][kidx .. kidx+3], into
 * ra: row_ptr = &A[row][0], row_ok = row < M, zeros outside A. INSIDE (VEC
 * only): the caller knows the 4 values lie inside A and drops the guards. */
template <bool VEC, bool INSIDE = false>
static __device__ __forceinline__ void load_a_row4(float ra[4], const float *row_ptr, int row_ok,
                                                   int k, int kidx)
{
    if (VEC) {
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (INSIDE || (row_ok && kidx < k)) /* K % 4 == 0, so kidx + 3 < K too */
            v = *reinterpret_cast<const float4 *>(row_ptr + kidx);
        unpack4(ra, v);
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            ra[j] = (row_ok && kidx + j < k) ? row_ptr[kidx + j] : 0.0f;
    }
}

/* Loads this thread's 4 B values (row k0 + bk, columns col .. col+3). */
template <bool VEC>
__device__ __forceinline__ void load_b_tile(float rb[4], const float *__restrict__ b, int n, int k,
                                            int k0, int bk, int col)
{
    int krow = k0 + bk;
    if (VEC) {
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (krow < k && col < n) /* N % 4 == 0, so col + 3 < N too */
            v = *reinterpret_cast<const float4 *>(b + (size_t)krow * n + col);
        unpack4(rb, v);
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            rb[j] = (krow < k && col + j < n) ? b[(size_t)krow * n + col + j] : 0.0f;
    }
}

/* Writes the thread's TM x 8 outputs: 4x4 sub-tiles GS rows and 64 columns
 * apart; with VEC each row of 4 is one 16-byte store. */
template <bool VEC, int BM, int TM>
__device__ __forceinline__ void store_c(float acc[TM][8], float *__restrict__ c, int m, int n,
                                        int row0, int col0, int ty, int tx)
{
    constexpr int GS = BM / (TM / 4); /* as in load_fragments */
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int row = row0 + GS * (i / 4) + ty * 4 + i % 4;
        if (row >= m)
            continue;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            int col = col0 + half * 64 + tx * 4;
            float *dst = c + (size_t)row * n + col;
            if (VEC) {
                if (col < n)
                    *reinterpret_cast<float4 *>(dst) =
                        make_float4(acc[i][half * 4 + 0], acc[i][half * 4 + 1],
                                    acc[i][half * 4 + 2], acc[i][half * 4 + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (col + j < n)
                        dst[j] = acc[i][half * 4 + j];
            }
        }
    }
}

#endif /* GEMM_TILE_IO_CUH */

/* Step 06, GEMM 6d: float4 and A transposed in shared memory. What it adds to
 * 6c (gemm_6c.cu), on the same 128x128 tile of 256 threads: fewer instructions
 * per FMA (16-byte loads, fragment reads and stores; the kernel's comment
 * counts them), and a thread tile split so that the fragment reads are free of
 * bank conflicts. Any M, N, K >= 1: with K and N multiples of 4 and 16-byte
 * aligned pointers the kernel takes the float4 path (VEC), otherwise the same
 * kernel loads element by element.
 *
 * The helpers below are 6d's own, the plain versions of what 6e and 6f
 * generalise in gemm_dbuf.cuh (other tile shapes, a swizzle, an A loader that
 * reads an image): here, one tile shape and A a matrix. The loads of a
 * matrix A and of B and the C store are the same in all three
 * (gemm_tile_io.cuh).
 *
 * Launch: 128 x 128 outputs per block of 256 threads (16 x 16, 8x8 each), a 1D
 * grid of ceil(M / 128) * ceil(N / 128) blocks (gemm_grid_blocks). */
#include "gemm.h"

#include <stddef.h>

#include "conv_cuda.h"
#include "conv_kernel_util.cuh"
#include "gemm_launch.cuh"
#include "gemm_tile_io.cuh"

/* 6c's block tile (gemm_6c.cu): 128x128 outputs, 256 threads, 8x8 per thread,
 * K consumed RT_BK = 8 at a time. */
#define RT_BM      128
#define RT_BN      128
#define RT_BK      8
#define RT_THREADS 256
#define RT_APAD    4 /* A^T rows padded by one float4: the transposed stores hit 32 banks */

extern "C" const gemm_block_tile gemm_6d_tile = {RT_BM, RT_BN};

/* ---------------------------------------------------------------------------
 * Global -> registers: thread t loads 4 consecutive k of A row t/2 (k offset
 * (t%2)*4) and 4 consecutive columns of B row t/32 (column (t%32)*4): with VEC
 * each is one 16-byte load. Registers -> shared: A goes in transposed,
 * as[k][row], so that the compute loop reads 4 consecutive rows as one float4.
 *
 * Thread tile: thread (ty, tx) = (t/16, t%16) owns rows {ty*4 .. ty*4+3} and
 * {64+ty*4 ..} and columns {tx*4 ..} and {64+tx*4 ..}: four 4x4 sub-tiles.
 * Each fragment is two float4 shared loads; a warp's 16 tx values read 256
 * contiguous bytes of bs (two wavefronts, the minimum) and two addresses of as
 * (broadcast). Splitting the 8 rows 64 apart is what makes that possible. */

/* Where this thread's A row starts: a row past M reads row 0 instead (its
 * loads then stay inside A; the guards below zero them anyway). */
typedef struct {
    const float *row_ptr; /* &A[row][0], or &A[0][0] */
    int row_ok;           /* row < M */
} a_row_src;

static __device__ __forceinline__ a_row_src a_row_init(int m, int k, const float *__restrict__ a,
                                                       int row)
{
    a_row_src src;
    src.row_ok = row < m;
    src.row_ptr = a + (size_t)(src.row_ok ? row : 0) * k;
    return src;
}

/* Registers -> shared: A transposed (4 k rows of column arow), B as one float4. */
static __device__ __forceinline__ void store_tiles(float (*as)[RT_BM + RT_APAD], float (*bs)[RT_BN],
                                                   const float ra[4], const float rb[4], int arow,
                                                   int kq, int bk, int bcol)
{
#pragma unroll
    for (int j = 0; j < 4; ++j)
        as[kq + j][arow] = ra[j];
    *reinterpret_cast<float4 *>(&bs[bk][bcol]) = make_float4(rb[0], rb[1], rb[2], rb[3]);
}

/* The fragments of k step kk: 8 rows of A (two float4 groups 64 rows apart)
 * and 8 columns of B (two float4 groups 64 columns apart). */
static __device__ __forceinline__ void load_fragments(float fa[8], float fb[8],
                                                      const float (*as)[RT_BM + RT_APAD],
                                                      const float (*bs)[RT_BN], int kk, int ty,
                                                      int tx)
{
    /* excerpt: 6d fragments */
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        float4 v = *reinterpret_cast<const float4 *>(&as[kk][64 * s + ty * 4]);
        fa[4 * s + 0] = v.x, fa[4 * s + 1] = v.y, fa[4 * s + 2] = v.z, fa[4 * s + 3] = v.w;
    }
    float4 b0 = *reinterpret_cast<const float4 *>(&bs[kk][tx * 4]);
    float4 b1 = *reinterpret_cast<const float4 *>(&bs[kk][64 + tx * 4]);
    fb[0] = b0.x, fb[1] = b0.y, fb[2] = b0.z, fb[3] = b0.w;
    fb[4] = b1.x, fb[5] = b1.y, fb[6] = b1.z, fb[7] = b1.w;
    /* excerpt end: 6d fragments */
}

/* The outer product of the fragments: 64 FMAs. */
static __device__ __forceinline__ void fma_tile(float acc[8][8], const float fa[8],
                                                const float fb[8])
{
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] += fa[i] * fb[j];
}

/* ---------------------------------------------------------------------------
 * 6d: float4 and transposed A. Global loads become one 16-byte load per
 * operand per thread per tile (4x fewer load instructions than 6c), the
 * fragment reads 4 LDS.128 per k step instead of 16 LDS.32, the stores of C
 * STG.128. One shared buffer: load, barrier, compute, barrier. */
template <bool VEC>
__global__ void __launch_bounds__(RT_THREADS, 2)
    gemm_6d_float4_kernel(int m, int n, int k, const float *__restrict__ a,
                          const float *__restrict__ b, float *__restrict__ c, int tiles_n)
{
    __shared__ __align__(16) float as[RT_BK][RT_BM + RT_APAD];
    __shared__ __align__(16) float bs[RT_BK][RT_BN];
    int tile_m = blockIdx.x / tiles_n, tile_n = blockIdx.x % tiles_n;
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    int row0 = tile_m * RT_BM, col0 = tile_n * RT_BN;
    int arow = tid / 2, kq = (tid % 2) * 4;
    int bk = tid / 32, bcol = (tid % 32) * 4;
    a_row_src src = a_row_init(m, k, a, row0 + arow);

    float acc[8][8];
    zero_tile(acc);
    for (int k0 = 0; k0 < k; k0 += RT_BK) {
        float ra[4], rb[4];
        load_a_row4<VEC>(ra, src.row_ptr, src.row_ok, k, k0 + kq);
        load_b_tile<VEC>(rb, b, n, k, k0, bk, col0 + bcol);
        store_tiles(as, bs, ra, rb, arow, kq, bk, bcol);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < RT_BK; ++kk) {
            float fa[8], fb[8];
            load_fragments(fa, fb, as, bs, kk, ty, tx);
            fma_tile(acc, fa, fb);
        }
        __syncthreads();
    }
    store_c<VEC, RT_BM, 8>(acc, c, m, n, row0, col0, ty, tx);
}

extern "C" conv_status gemm_6d_float4(int m, int n, int k, const float *d_a, const float *d_b,
                                      float *d_c, cudaStream_t stream, conv_msg *msg)
{
    const int vec = gemm_vec_ok(n, k, d_a, d_b, d_c);
    return gemm_run(GEMM_6D_FLOAT4, m, n, k, d_a, d_b, d_c,
                    vec ? gemm_6d_float4_kernel<true> : gemm_6d_float4_kernel<false>,
                    "gemm_6d_float4_kernel", dim3(RT_THREADS), stream, msg);
}

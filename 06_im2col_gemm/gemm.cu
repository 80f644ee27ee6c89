/* Step 06, the GEMM progression: C[M][N] = A[M][K] * B[K][N], row-major FP32.
 *
 *   6a gemm_6a_naive_kernel     one thread per output, every operand from global memory
 *   6b gemm_6b_shared_kernel    32x32 tiles of A and B staged in shared memory
 *   6c gemm_6c_regtile_kernel   128x128 block tile, 8x8 outputs per thread (registers)
 *   6d gemm_6d_float4_kernel    + 16-byte loads/stores, A stored transposed in shared
 *   6e gemm_6e_dbuf_kernel      + two shared buffers and the next tile prefetched into
 *                                 registers (the handbook's "two-level prefetch")
 *   6f conv2d_6f_implicit_kernel  6e with an A loader that gathers from the image
 *                                 (implicit GEMM, NHWC; no column buffer)
 *
 * Every kernel handles any M, N, K >= 1: the edge tiles are loaded with zeros
 * outside the matrices and stored under a guard. Element offsets (row*K + k,
 * row*N + col) are computed in 64 bits, so A may hold more than 2^31 floats;
 * row and column numbers themselves are ints (M, N, K <= GEMM_MAX_DIM).
 *
 * The grid is one-dimensional: block b computes tile (b / tiles_n, b % tiles_n),
 * so M is not limited by gridDim.y (65535) and consecutive blocks share a row
 * of A tiles (good for L2 when N is small, as in convolution). */
#include "im2col_gemm.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "conv_cuda.h"

/* ---------------------------------------------------------------------------
 * 6a: naive. Each thread walks one row of A and one column of B. A warp covers
 * 32 consecutive columns of one row, so its A reads are one broadcast address
 * and its B reads and C writes are coalesced; but every operand is fetched
 * from memory (L1/L2 at best) once per multiply-add: 2 loads per FMA. */
#define NAIVE_BX 32
#define NAIVE_BY 8

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

/* ---------------------------------------------------------------------------
 * 6b: shared-memory tiles. A 32x32 block loads a 32x32 tile of A and of B once
 * (one element per thread, coalesced), then every thread reads 32 of each from
 * shared memory: global traffic drops 32-fold. Reads of as[ty][i] are a
 * broadcast within a warp, of bs[i][tx] 32 consecutive words: no bank
 * conflicts. Still 2 shared loads per FMA, which now limits it. */
#define SH_T 32

__global__ void gemm_6b_shared_kernel(int m, int n, int k, const float *__restrict__ a,
                                      const float *__restrict__ b, float *__restrict__ c,
                                      int tiles_n)
{
    __shared__ float as[SH_T][SH_T];
    __shared__ float bs[SH_T][SH_T];
    int tile_m = blockIdx.x / tiles_n, tile_n = blockIdx.x % tiles_n;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = tile_m * SH_T + ty, col = tile_n * SH_T + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += SH_T) {
        as[ty][tx] = (row < m && k0 + tx < k) ? a[(size_t)row * k + k0 + tx] : 0.0f;
        bs[ty][tx] = (k0 + ty < k && col < n) ? b[(size_t)(k0 + ty) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < SH_T; ++i)
            acc += as[ty][i] * bs[i][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        c[(size_t)row * n + col] = acc;
}

/* ---------------------------------------------------------------------------
 * 6c and 6d: 128x128 outputs per block of 256 threads, 8x8 per thread, K
 * consumed RT_BK = 8 at a time (6e/6f keep 8x8 per thread but use a 64x128
 * tile of 128 threads and DBUF_BK = 16, chosen by measurement, see below).
 * Per k step a thread loads 8 values of
 * A and 8 of B from shared memory and does 64 FMAs: 1 shared load per 4 FMAs
 * instead of 2 per FMA. */
#define RT_BM      128
#define RT_BN      128
#define RT_BK      8
#define RT_THREADS 256
#define RT_TM      8
#define RT_TN      8
#define RT_APAD    4 /* A^T rows padded by one float4: the transposed stores hit 32 banks */

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
#pragma unroll
    for (int i = 0; i < RT_TM; ++i)
#pragma unroll
        for (int j = 0; j < RT_TN; ++j)
            acc[i][j] = 0.0f;

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

/* ---------------------------------------------------------------------------
 * The pieces 6d, 6e and 6f share.
 *
 * Global -> registers: thread t loads 4 consecutive k of A row t/2 (k offset
 * (t%2)*4) and 4 consecutive columns of B row t/32 (column (t%32)*4): with VEC
 * each is one 16-byte load. Registers -> shared: A goes in transposed,
 * as[k][row], so that the compute loop reads 4 consecutive rows as one float4.
 *
 * Thread tile (6d): thread (ty, tx) = (t/16, t%16) owns rows {ty*4 .. ty*4+3}
 * and {64+ty*4 ..} and columns {tx*4 ..} and {64+tx*4 ..}: four 4x4 sub-tiles.
 * Each fragment is two float4 shared loads; a warp's 16 tx values read 256
 * contiguous bytes of bs (two wavefronts, the minimum) and two addresses of as
 * (broadcast). Splitting the 8 rows 64 apart is what makes that possible; in
 * general the row groups are BM / (TM / 4) apart (32 for 6e's 64-row tile). */

/* The geometry 6f's loader needs (NHWC). Unused by 6d and 6e. */
typedef struct {
    int c, h, w, r, s, p, q;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
} implicit_geom;

/* Where one thread's A row comes from. */
typedef struct {
    const float *row_ptr; /* GEMM: &A[row][0]; implicit: &x[n][0][0][0] */
    int row_ok;           /* row < M */
    int h0, w0;           /* implicit: top-left of the window (may be negative) */
    int kc, ks, kr;       /* implicit VEC: (c, s, r) of the next k this thread loads */
} a_source;

template <bool IMPLICIT>
__device__ __forceinline__ a_source a_source_init(int m, int k, const float *__restrict__ a,
                                                  const implicit_geom &g, int row, int kq)
{
    a_source src;
    src.row_ok = row < m;
    src.h0 = src.w0 = src.kc = src.ks = src.kr = 0;
    if (!IMPLICIT) {
        src.row_ptr = a + (size_t)(src.row_ok ? row : 0) * k;
        return src;
    }
    int rr = src.row_ok ? row : 0;
    int pq = g.p * g.q;
    int img = rr / pq, rem = rr % pq;
    int op = rem / g.q, oq = rem % g.q;
    src.row_ptr = a + (size_t)img * g.h * g.w * g.c;
    src.h0 = op * g.stride_h - g.pad_h;
    src.w0 = oq * g.stride_w - g.pad_w;
    /* k index kq = (r*S + s)*C + c */
    src.kc = kq % g.c;
    int rs = kq / g.c;
    src.ks = rs % g.s;
    src.kr = rs / g.s;
    return src;
}

/* One element of the implicit A matrix (scalar path): A[row][kidx]. */
__device__ __forceinline__ float implicit_a_element(const a_source &src, const implicit_geom &g,
                                                    int kidx)
{
    int cc = kidx % g.c, rs = kidx / g.c;
    int ss = rs % g.s, rr = rs / g.s;
    int h = src.h0 + rr * g.dil_h, w = src.w0 + ss * g.dil_w;
    if (h < 0 || h >= g.h || w < 0 || w >= g.w)
        return 0.0f;
    return src.row_ptr[((size_t)h * g.w + w) * g.c + cc];
}

/* Loads this thread's 4 A values of the tile starting at k0 into ra.
 * INSIDE (vector paths only): the tile lies wholly inside K, so no k guard and
 * no row guard either (a row past M reads row 0, see a_source_init; its
 * products land in rows of C that store_c skips). */
template <bool VEC, bool IMPLICIT, int BK, bool INSIDE = false>
__device__ __forceinline__ void load_a_tile(float ra[4], a_source &src, const implicit_geom &g,
                                            int k, int k0, int kq)
{
    int kidx = k0 + kq;
    if (IMPLICIT && VEC) {
        /* C % 4 == 0: the 4 values share (r, s) and are contiguous in x. */
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (INSIDE || (src.row_ok && kidx < k)) {
            int h = src.h0 + src.kr * g.dil_h, w = src.w0 + src.ks * g.dil_w;
            if (h >= 0 && h < g.h && w >= 0 && w < g.w)
                v = *reinterpret_cast<const float4 *>(src.row_ptr + ((size_t)h * g.w + w) * g.c +
                                                      src.kc);
        }
        ra[0] = v.x;
        ra[1] = v.y;
        ra[2] = v.z;
        ra[3] = v.w;
        /* Step (c, s, r) forward by BK without dividing. */
        src.kc += BK;
        while (src.kc >= g.c) {
            src.kc -= g.c;
            if (++src.ks == g.s) {
                src.ks = 0;
                ++src.kr;
            }
        }
    } else if (IMPLICIT) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            ra[j] = (src.row_ok && kidx + j < k) ? implicit_a_element(src, g, kidx + j) : 0.0f;
    } else if (VEC) {
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (INSIDE || (src.row_ok && kidx < k)) /* K % 4 == 0, so kidx + 3 < K too */
            v = *reinterpret_cast<const float4 *>(src.row_ptr + kidx);
        ra[0] = v.x;
        ra[1] = v.y;
        ra[2] = v.z;
        ra[3] = v.w;
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            ra[j] = (src.row_ok && kidx + j < k) ? src.row_ptr[kidx + j] : 0.0f;
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
        rb[0] = v.x;
        rb[1] = v.y;
        rb[2] = v.z;
        rb[3] = v.w;
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            rb[j] = (krow < k && col + j < n) ? b[(size_t)krow * n + col + j] : 0.0f;
    }
}

__device__ __forceinline__ void store_tiles(float (*as)[RT_BM + RT_APAD], float (*bs)[RT_BN],
                                            const float ra[4], const float rb[4], int arow, int kq,
                                            int bk, int bcol)
{
#pragma unroll
    for (int j = 0; j < 4; ++j)
        as[kq + j][arow] = ra[j];
    *reinterpret_cast<float4 *>(&bs[bk][bcol]) = make_float4(rb[0], rb[1], rb[2], rb[3]);
}

/* The fragments of k step kk: TM rows of A (TM/4 float4 groups, GS = BM/(TM/4)
 * rows apart: 64 for 6d's 8 rows of 128) and 8 columns of B (two float4
 * groups 64 columns apart). A's columns are swizzled by kk & 8 (see 6e); for
 * BK = 8 (6d) that is 0. */
template <int BM, int TM>
__device__ __forceinline__ void load_fragments(float fa[TM], float fb[8],
                                               const float (*as)[BM + RT_APAD],
                                               const float (*bs)[RT_BN], int kk, int ty, int tx)
{
    constexpr int GS = BM / (TM / 4);
    static_assert(GS % 16 == 0, "the k & 8 swizzle must stay inside one row group");
#pragma unroll
    for (int s = 0; s < TM / 4; ++s) {
        float4 v = *reinterpret_cast<const float4 *>(&as[kk][(GS * s + ty * 4) ^ (kk & 8)]);
        fa[4 * s + 0] = v.x, fa[4 * s + 1] = v.y, fa[4 * s + 2] = v.z, fa[4 * s + 3] = v.w;
    }
    float4 b0 = *reinterpret_cast<const float4 *>(&bs[kk][tx * 4]);
    float4 b1 = *reinterpret_cast<const float4 *>(&bs[kk][64 + tx * 4]);
    fb[0] = b0.x, fb[1] = b0.y, fb[2] = b0.z, fb[3] = b0.w;
    fb[4] = b1.x, fb[5] = b1.y, fb[6] = b1.z, fb[7] = b1.w;
}

template <int TM>
__device__ __forceinline__ void fma_tile(float acc[TM][8], const float fa[TM], const float fb[8])
{
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] += fa[i] * fb[j];
}

/* 6e/6f's order: row by row, every other row backwards (a snake), so that
 * each FMA shares an operand with the one before it - a[i] along a row, b[j]
 * at the turn - and can take it from the operand reuse cache instead of the
 * register file. ptxas keeps this order; at 4096^3 it was 1-2 points of
 * cuBLAS faster than fma_tile's (bench/results/06_tune_6e.txt, "ji2"). */
template <int TM>
__device__ __forceinline__ void fma_tile_snake(float acc[TM][8], const float fa[TM],
                                               const float fb[8])
{
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int jj = 0; jj < 8; ++jj) {
            int j = i % 2 ? 7 - jj : jj;
            acc[i][j] += fa[i] * fb[j];
        }
}

/* Writes the thread's TM x 8 outputs: 4x4 sub-tiles 64 rows and 64 columns
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
    implicit_geom g = {};
    a_source src = a_source_init<false>(m, k, a, g, row0 + arow, kq);

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < k; k0 += RT_BK) {
        float ra[4], rb[4];
        load_a_tile<VEC, false, RT_BK>(ra, src, g, k, k0, kq);
        load_b_tile<VEC>(rb, b, n, k, k0, bk, col0 + bcol);
        store_tiles(as, bs, ra, rb, arow, kq, bk, bcol);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < RT_BK; ++kk) {
            float fa[8], fb[8];
            load_fragments<RT_BM, RT_TM>(fa, fb, as, bs, kk, ty, tx);
            fma_tile<8>(acc, fa, fb);
        }
        __syncthreads();
    }
    store_c<VEC, RT_BM, RT_TM>(acc, c, m, n, row0, col0, ty, tx);
}

/* One tile's arithmetic: BK steps of fragments and TM x 8 FMAs. Fully
 * unrolled: ptxas issues step kk+1's fragment loads while step kk's FMAs run
 * (the shared -> register level of the prefetch). */
template <int BM, int TM, int BK>
__device__ __forceinline__ void dbuf_compute_tile(float acc[TM][8], const float (*as)[BM + RT_APAD],
                                                  const float (*bs)[RT_BN], int ty, int tx)
{
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
        float fa[TM], fb[8];
        load_fragments<BM, TM>(fa, fb, as, bs, kk, ty, tx);
        fma_tile_snake<TM>(acc, fa, fb);
    }
}

/* Stores the staged tile: A transposed into column acol[l] of k rows
 * kq .. kq+3, B as LB float4 of row brow, TPR * 4 columns apart. */
template <int BM, int LA, int LB, int TPR>
__device__ __forceinline__ void dbuf_store_tile(float (*as)[BM + RT_APAD], float (*bs)[RT_BN],
                                                const float ra[LA][4], const float rb[LB][4],
                                                int kq, const int acol[LA], int brow, int bcol)
{
#pragma unroll
    for (int l = 0; l < LA; ++l)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            as[kq + j][acol[l]] = ra[l][j];
#pragma unroll
    for (int l = 0; l < LB; ++l)
        *reinterpret_cast<float4 *>(&bs[brow][bcol + l * TPR * 4]) =
            make_float4(rb[l][0], rb[l][1], rb[l][2], rb[l][3]);
}

/* ---------------------------------------------------------------------------
 * 6e (and 6f): the two-level prefetch.
 *   global -> registers: tile t+1 is loaded into ra/rb at the top of step t and
 *     only stored to shared memory after step t's arithmetic, so the global
 *     latency hides behind the FMAs of a whole tile;
 *   shared -> registers: the fragments for k step kk+1 are read while kk's 64
 *     FMAs run (ptxas does this for the fully unrolled kk loop);
 *   two shared buffers: tile t+1 goes into the buffer step t does not read,
 *     so one barrier per tile suffices (6d needs two).
 * The barrier argument: buffer X is written in step t only after every thread
 * passed step t-1's barrier, and every read of X in step t-1 came before it.
 *
 * Lean loads: per tile a warp issues 1024 FMAs; everything else is overhead.
 * With every load guarded, the loop held about 145 instructions besides the
 * FMAs and the 64 fragment reads, most of them the guards (a 64-bit address,
 * a predicate and a zero fill for every float4). But only the last tile in K
 * and the last block column can reach outside the matrices: rows past M read
 * row 0 instead (their products land in rows store_c skips). So tiles that
 * lie inside K, in blocks whose 128 columns lie inside N, are loaded with no
 * guard: A from its clamped row pointers, B through one pointer stepped by BK
 * rows with its LB loads at immediate offsets. They run in a loop of their
 * own with no branch in its body (about 50 instructions besides the FMAs and
 * the fragment reads); the other tiles in a second, guarded loop.
 * At 4096^3 that cut executed instructions from 2.59 G to 2.40 G (cuBLAS's
 * kernel: 2.43 G) and took 6e from 89% to 96-97% of cuBLAS. (The same lean
 * loads behind a branch inside one loop were slower than the guarded code:
 * ptxas then issued each tile's first fragment reads just before their FMAs.)
 *
 * Compile-time shape: BM (block tile rows), TM (rows per thread; the block is
 * a 16 x BM/TM grid of threads, 8 columns each), BK (the K depth of a tile)
 * and WR, how many rows of the thread grid one warp spans (WR = 2: a warp is
 * 2x16 threads, as in 6d; WR = 4: 4x8 threads, whose A and B fragment reads
 * are one shared-memory wavefront each instead of one and two).
 *
 * A's loader: BK / 4 neighbouring lanes load one row's BK floats (whole
 * 32-byte sectors in one instruction). Their transposed stores as[k][row]
 * land k * (BM + 4) words apart, i.e. 4k banks: with BK = 16 the groups
 * k = 0..3 and 8..11 (and 4..7, 12..15) would share banks, a 2-way conflict
 * on every store (16.8 million extra wavefronts at 4096^3 by ncu). So row r
 * of k row k is stored in column r ^ (k & 8) (the swizzle): for k >= 8 the
 * 8-row groups trade places, and the warp's 32 stores hit 32 banks. The
 * fragment reads undo it with the same XOR; it keeps 4-row groups whole and
 * aligned, so they stay float4 reads. (Loading 16 rows x 2 groups per
 * instruction also avoids the conflict, but split each row's 64 bytes over
 * two loads and made the kernel 38% slower.) */
template <int BM, int TM, int WR, int BK, bool VEC, bool IMPLICIT>
__device__ __forceinline__ void dbuf_gemm_body(int m, int n, int k, const float *__restrict__ a,
                                               const float *__restrict__ b, float *__restrict__ c,
                                               int tiles_n, const implicit_geom &g)
{
    constexpr int THREADS = 16 * (BM / TM); /* 16 x BM/TM threads */
    constexpr int KQ = BK / 4;              /* float4 groups per A row */
    constexpr int LA = BM * KQ / THREADS;   /* A float4 per thread */
    constexpr int TPR = THREADS / BK;       /* threads per B row */
    constexpr int LB = RT_BN / 4 / TPR;     /* B float4 per thread, TPR * 4 columns apart */
    constexpr int WC = 32 / WR, WARPS_PER_ROW = 16 / WC; /* warp layout */
    static_assert(BK == 8 || BK == 16, "the swizzle (k & 8) covers BK = 8 and 16");
    static_assert(LA * THREADS == BM * KQ && LB * TPR * 4 == RT_BN && TPR * BK == THREADS,
                  "tile split");
    constexpr int AROWS = THREADS / KQ; /* A rows one round of loads covers */
    __shared__ __align__(16) float as[2][BK][BM + RT_APAD];
    __shared__ __align__(16) float bs[2][BK][RT_BN];
    int tile_m = blockIdx.x / tiles_n, tile_n = blockIdx.x % tiles_n;
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int ty = (warp / WARPS_PER_ROW) * WR + lane / WC;
    int tx = (warp % WARPS_PER_ROW) * WC + lane % WC;
    int row0 = tile_m * BM, col0 = tile_n * RT_BN;
    int kq = (tid % KQ) * 4;                      /* this thread's k offset in the A tile */
    int brow = tid / TPR, bcol = (tid % TPR) * 4; /* and its B row and first column */
    a_source src[LA];
    int acol[LA]; /* A^T column of each of this thread's rows, swizzled: kq .. kq+3 share k & 8 */
#pragma unroll
    for (int l = 0; l < LA; ++l) {
        src[l] = a_source_init<IMPLICIT>(m, k, a, g, row0 + tid / KQ + l * AROWS, kq);
        acol[l] = (tid / KQ + l * AROWS) ^ (kq & 8);
    }
    /* Tiles that lie wholly inside K, in a block whose 128 columns lie inside
     * N, are loaded without guards: B through one pointer stepped by BK rows
     * (its LB loads are immediate offsets from it), A from the clamped rows. */
    int inside_tiles = VEC && col0 + RT_BN <= n ? k / BK : 0;
    const float *b_next = b + (size_t)brow * n + col0 + bcol; /* read only by the first loop */

    float acc[TM][8];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0.0f;

    float ra[LA][4], rb[LB][4];
#pragma unroll
    for (int l = 0; l < LA; ++l)
        load_a_tile<VEC, IMPLICIT, BK>(ra[l], src[l], g, k, 0, kq);
#pragma unroll
    for (int l = 0; l < LB; ++l)
        load_b_tile<VEC>(rb[l], b, n, k, 0, brow, col0 + bcol + l * TPR * 4);
    dbuf_store_tile<BM, LA, LB, TPR>(as[0], bs[0], ra, rb, kq, acol, brow, bcol);
    __syncthreads();

    /* Two loops, so that the first has no branch at all: ptxas may then move
     * the next tile's loads and the first fragment reads freely among the
     * FMAs. It covers the tiles whose successor loads without guards; the
     * second loop the rest (the edge blocks, and the last tile or two). */
    int ntiles = (k + BK - 1) / BK;
    int buf = 0, t = 0;
    for (; t + 1 < inside_tiles; ++t) {
        b_next += (size_t)BK * n;
#pragma unroll
        for (int l = 0; l < LA; ++l)
            load_a_tile<VEC, IMPLICIT, BK, true>(ra[l], src[l], g, k, (t + 1) * BK, kq);
#pragma unroll
        for (int l = 0; l < LB; ++l) {
            float4 v = *reinterpret_cast<const float4 *>(b_next + l * TPR * 4);
            rb[l][0] = v.x, rb[l][1] = v.y, rb[l][2] = v.z, rb[l][3] = v.w;
        }
        dbuf_compute_tile<BM, TM, BK>(acc, as[buf], bs[buf], ty, tx);
        dbuf_store_tile<BM, LA, LB, TPR>(as[buf ^ 1], bs[buf ^ 1], ra, rb, kq, acol, brow, bcol);
        __syncthreads();
        buf ^= 1;
    }
    for (; t < ntiles; ++t) {
        int has_next = t + 1 < ntiles;
        if (has_next) {
#pragma unroll
            for (int l = 0; l < LA; ++l)
                load_a_tile<VEC, IMPLICIT, BK>(ra[l], src[l], g, k, (t + 1) * BK, kq);
#pragma unroll
            for (int l = 0; l < LB; ++l)
                load_b_tile<VEC>(rb[l], b, n, k, (t + 1) * BK, brow, col0 + bcol + l * TPR * 4);
        }
        dbuf_compute_tile<BM, TM, BK>(acc, as[buf], bs[buf], ty, tx);
        if (has_next) {
            dbuf_store_tile<BM, LA, LB, TPR>(as[buf ^ 1], bs[buf ^ 1], ra, rb, kq, acol, brow,
                                             bcol);
            __syncthreads();
            buf ^= 1;
        }
    }
    store_c<VEC, BM, TM>(acc, c, m, n, row0, col0, ty, tx);
}

/* The shape 6e and 6f use, chosen by measurement (06_im2col_gemm/tune_6e.cu,
 * bench/results/06_tune_6e.txt, H100 80GB HBM3): a 64 x 128 block tile of
 * 128 threads (8 x 8 outputs each), BK = 16, three blocks per SM (159
 * registers, no spills; 12 warps per SM instead of 8). With the lean loads it
 * reached 96.5-96.9% of cuBLAS at 4096^3 and 100.4-102.5% on the lab's
 * M=1,280,000 N=128 K=1152, against 90.2-90.7% and 90.7-92.0% for the 128 x
 * 128 tile with one block per SM: while one block waits at its barrier the
 * other two issue FMAs.
 * Next with the lean loads: a 128 x 128 tile of 16 x 8 outputs per thread,
 * BK = 8, two blocks per SM (93% and 97-98%); cuBLAS's own 256 x 128 shape
 * (88-91%, 81%). Before the lean loads, also slower at 4096^3: BK = 8 (two
 * 128-row blocks: 84-89%; four 64-row blocks: 86-87%), BK = 32 (78-79%), 16
 * x 8 outputs per thread (75-78%), two 128-row blocks with BK = 16 (spills at
 * the 128-register cap: 76-80%), a hand-written second fragment buffer
 * (66-73%). */
#ifndef DBUF_BM
#define DBUF_BM 64
#endif
#ifndef DBUF_TM /* rows per thread (x 8 columns); the block has 16 x DBUF_BM / DBUF_TM threads */
#define DBUF_TM 8
#endif
#define DBUF_THREADS (16 * (DBUF_BM / DBUF_TM))
#ifndef DBUF_WR
#define DBUF_WR 4
#endif
#ifndef DBUF_BK
#define DBUF_BK 16
#endif
#ifndef DBUF_MINB /* blocks per SM promised to ptxas: caps registers at 65536 / (MINB x threads)   \
                   */
#define DBUF_MINB 3
#endif

template <bool VEC>
__global__ void __launch_bounds__(DBUF_THREADS, DBUF_MINB)
    gemm_6e_dbuf_kernel(int m, int n, int k, const float *__restrict__ a,
                        const float *__restrict__ b, float *__restrict__ c, int tiles_n)
{
    implicit_geom g = {};
    dbuf_gemm_body<DBUF_BM, DBUF_TM, DBUF_WR, DBUF_BK, VEC, false>(m, n, k, a, b, c, tiles_n, g);
}

/* 6f: the same kernel, A = the virtual column matrix of an NHWC image:
 * A[(n*P + p)*Q + q][(r*S + s)*C + c] = x[n][p*sh - ph + r*dh][q*sw - pw + s*dw][c].
 * Each thread computes its row's (n, p, q) once; along K it steps (c, s, r)
 * by additions. The column buffer's write and re-read (2 * 4*N*P*Q*C*R*S
 * bytes) disappear; x's re-reads (R*S times each element) hit L1/L2. */
template <bool VEC>
__global__ void __launch_bounds__(DBUF_THREADS, DBUF_MINB)
    conv2d_6f_implicit_kernel(int m, int n, int k, const float *__restrict__ x,
                              const float *__restrict__ w, float *__restrict__ y, int tiles_n,
                              implicit_geom g)
{
    dbuf_gemm_body<DBUF_BM, DBUF_TM, DBUF_WR, DBUF_BK, VEC, true>(m, n, k, x, w, y, tiles_n, g);
}

/* ---------------------------------------------------------------------------
 * Host side. */

static const char *const variant_tags[GEMM_VARIANT_COUNT] = {"6a", "6b", "6c",
                                                             "6d", "6e", "cublas"};
static const char *const variant_names[GEMM_VARIANT_COUNT] = {
    "6a naive",        "6b shared 32x32",    "6c regtile 128x128/8x8",
    "6d float4 + A^T", "6e double buffered", "cuBLAS SGEMM"};

extern "C" const char *gemm_variant_tag(gemm_variant v)
{
    return (unsigned)v < GEMM_VARIANT_COUNT ? variant_tags[v] : "?";
}

extern "C" const char *gemm_variant_name(gemm_variant v)
{
    return (unsigned)v < GEMM_VARIANT_COUNT ? variant_names[v] : "?";
}

extern "C" conv_status gemm_variant_parse(const char *text, gemm_variant *v, conv_msg *msg)
{
    for (int i = 0; i < GEMM_VARIANT_COUNT; ++i)
        if (text != NULL && strcmp(text, variant_tags[i]) == 0) {
            *v = (gemm_variant)i;
            return CONV_OK;
        }
    return conv_fail(msg, CONV_ERR_INVALID,
                     "invalid GEMM variant (--gemm): '%s' (expected 6a..6e or cublas)",
                     text ? text : "(null)");
}

/* Block tile (rows x columns) of each variant. */
static void variant_tile(gemm_variant v, int *tm, int *tn)
{
    switch (v) {
    case GEMM_6A_NAIVE: *tm = NAIVE_BY, *tn = NAIVE_BX; return;
    case GEMM_6B_SHARED: *tm = SH_T, *tn = SH_T; return;
    case GEMM_6E_DBUF: *tm = DBUF_BM, *tn = RT_BN; return;
    default: *tm = RT_BM, *tn = RT_BN; return;
    }
}

static long long ceil_div_ll(long long a, long long b)
{
    return (a + b - 1) / b;
}

/* Thread blocks of variant v over an m x n C, tiles_n of them per block row
 * (n <= GEMM_MAX_DIM, so tiles_n fits an int; the total is checked against
 * the grid limit by gemm_validate). */
static long long variant_grid(gemm_variant v, long long m, long long n, int *tiles_n)
{
    int tm, tn;
    variant_tile(v, &tm, &tn);
    *tiles_n = (int)ceil_div_ll(n, tn);
    return ceil_div_ll(m, tm) * *tiles_n;
}

extern "C" conv_status gemm_validate(gemm_variant v, long long m, long long n, long long k,
                                     const float *d_a, const float *d_b, const float *d_c,
                                     const conv_cublas *cublas, conv_msg *msg)
{
    if ((unsigned)v >= GEMM_VARIANT_COUNT)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid GEMM variant (--gemm): %d", (int)v);
    const struct {
        const char *name;
        long long value;
    } dims[] = {{"GEMM rows M (--m)", m}, {"GEMM columns N (--n)", n}, {"GEMM depth K (--k)", k}};
    for (int i = 0; i < 3; ++i) {
        if (dims[i].value < 1)
            return conv_fail(msg, CONV_ERR_INVALID, "invalid %s: must be >= 1, got %lld",
                             dims[i].name, dims[i].value);
        if (dims[i].value > GEMM_MAX_DIM)
            return conv_fail(msg, CONV_ERR_UNSUPPORTED, "%s = %lld exceeds this step's limit %d",
                             dims[i].name, dims[i].value, GEMM_MAX_DIM);
    }
    if (d_a == NULL || d_b == NULL || d_c == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid GEMM operand: d_%s is NULL",
                         d_a == NULL   ? "a"
                         : d_b == NULL ? "b"
                                       : "c");
    if (v == GEMM_CUBLAS) {
        if (cublas == NULL)
            return conv_fail(msg, CONV_ERR_INVALID,
                             "invalid cuBLAS handle: NULL (create one with conv_cublas_create)");
        return CONV_OK;
    }
    int tm, tn, tiles_n;
    variant_tile(v, &tm, &tn);
    long long tiles = variant_grid(v, m, n, &tiles_n);
    if (tiles > INT_MAX)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "GEMM %lldx%lld needs %lld thread blocks of %dx%d for %s "
                         "(grid limit %d)",
                         m, n, tiles, tm, tn, gemm_variant_tag(v), INT_MAX);
    return CONV_OK;
}

/* The float4 paths need K and N multiples of 4 and 16-byte aligned operands. */
static int vec_ok(int n, int k, const float *a, const float *b, const float *c)
{
    return k % 4 == 0 && n % 4 == 0 && ((uintptr_t)a % 16) == 0 && ((uintptr_t)b % 16) == 0 &&
           ((uintptr_t)c % 16) == 0;
}

extern "C" conv_status gemm_6a_naive(int m, int n, int k, const float *d_a, const float *d_b,
                                     float *d_c, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = gemm_validate(GEMM_6A_NAIVE, m, n, k, d_a, d_b, d_c, NULL, msg);
    if (st != CONV_OK)
        return st;
    int tiles_n;
    long long tiles = variant_grid(GEMM_6A_NAIVE, m, n, &tiles_n);
    gemm_6a_naive_kernel<<<(unsigned)tiles, dim3(NAIVE_BX, NAIVE_BY), 0, stream>>>(
        m, n, k, d_a, d_b, d_c, tiles_n);
    CONV_CHECK_LAUNCH("gemm_6a_naive_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status gemm_6b_shared(int m, int n, int k, const float *d_a, const float *d_b,
                                      float *d_c, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = gemm_validate(GEMM_6B_SHARED, m, n, k, d_a, d_b, d_c, NULL, msg);
    if (st != CONV_OK)
        return st;
    int tiles_n;
    long long tiles = variant_grid(GEMM_6B_SHARED, m, n, &tiles_n);
    gemm_6b_shared_kernel<<<(unsigned)tiles, dim3(SH_T, SH_T), 0, stream>>>(m, n, k, d_a, d_b, d_c,
                                                                            tiles_n);
    CONV_CHECK_LAUNCH("gemm_6b_shared_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status gemm_6c_regtile(int m, int n, int k, const float *d_a, const float *d_b,
                                       float *d_c, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = gemm_validate(GEMM_6C_REGTILE, m, n, k, d_a, d_b, d_c, NULL, msg);
    if (st != CONV_OK)
        return st;
    int tiles_n;
    long long tiles = variant_grid(GEMM_6C_REGTILE, m, n, &tiles_n);
    gemm_6c_regtile_kernel<<<(unsigned)tiles, RT_THREADS, 0, stream>>>(m, n, k, d_a, d_b, d_c,
                                                                       tiles_n);
    CONV_CHECK_LAUNCH("gemm_6c_regtile_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status gemm_6d_float4(int m, int n, int k, const float *d_a, const float *d_b,
                                      float *d_c, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = gemm_validate(GEMM_6D_FLOAT4, m, n, k, d_a, d_b, d_c, NULL, msg);
    if (st != CONV_OK)
        return st;
    int tiles_n;
    long long tiles = variant_grid(GEMM_6D_FLOAT4, m, n, &tiles_n);
    if (vec_ok(n, k, d_a, d_b, d_c))
        gemm_6d_float4_kernel<true>
            <<<(unsigned)tiles, RT_THREADS, 0, stream>>>(m, n, k, d_a, d_b, d_c, tiles_n);
    else
        gemm_6d_float4_kernel<false>
            <<<(unsigned)tiles, RT_THREADS, 0, stream>>>(m, n, k, d_a, d_b, d_c, tiles_n);
    CONV_CHECK_LAUNCH("gemm_6d_float4_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status gemm_6e_dbuf(int m, int n, int k, const float *d_a, const float *d_b,
                                    float *d_c, cudaStream_t stream, conv_msg *msg)
{
    conv_status st = gemm_validate(GEMM_6E_DBUF, m, n, k, d_a, d_b, d_c, NULL, msg);
    if (st != CONV_OK)
        return st;
    int tiles_n;
    long long tiles = variant_grid(GEMM_6E_DBUF, m, n, &tiles_n);
    if (vec_ok(n, k, d_a, d_b, d_c))
        gemm_6e_dbuf_kernel<true>
            <<<(unsigned)tiles, DBUF_THREADS, 0, stream>>>(m, n, k, d_a, d_b, d_c, tiles_n);
    else
        gemm_6e_dbuf_kernel<false>
            <<<(unsigned)tiles, DBUF_THREADS, 0, stream>>>(m, n, k, d_a, d_b, d_c, tiles_n);
    CONV_CHECK_LAUNCH("gemm_6e_dbuf_kernel", msg);
    return CONV_OK;
}

extern "C" conv_status gemm_sgemm(gemm_variant v, int m, int n, int k, const float *d_a,
                                  const float *d_b, float *d_c, conv_cublas *cublas,
                                  cudaStream_t stream, conv_msg *msg)
{
    /* Each launcher validates its own arguments; the rest (cuBLAS, or an
     * invalid v) is checked here. */
    switch (v) {
    case GEMM_6A_NAIVE: return gemm_6a_naive(m, n, k, d_a, d_b, d_c, stream, msg);
    case GEMM_6B_SHARED: return gemm_6b_shared(m, n, k, d_a, d_b, d_c, stream, msg);
    case GEMM_6C_REGTILE: return gemm_6c_regtile(m, n, k, d_a, d_b, d_c, stream, msg);
    case GEMM_6D_FLOAT4: return gemm_6d_float4(m, n, k, d_a, d_b, d_c, stream, msg);
    case GEMM_6E_DBUF: return gemm_6e_dbuf(m, n, k, d_a, d_b, d_c, stream, msg);
    default: {
        conv_status st = gemm_validate(v, m, n, k, d_a, d_b, d_c, cublas, msg);
        if (st != CONV_OK)
            return st;
        return conv_cublas_sgemm(cublas, m, n, k, d_a, d_b, d_c, stream, msg);
    }
    }
}

/* 6f's launcher: checks, then the GEMM view of the NHWC convolution. */
extern "C" conv_status conv2d_implicit_gemm(const conv_params *p, const float *d_x,
                                            const float *d_w, float *d_y, cudaStream_t stream,
                                            conv_msg *msg)
{
    conv_status st = conv_params_validate(p, msg);
    if (st != CONV_OK)
        return st;
    if (p->layout != CONV_LAYOUT_NHWC)
        return conv_fail(msg, CONV_ERR_UNSUPPORTED,
                         "6f implicit GEMM supports --layout nhwc only (x[N][H][W][C], "
                         "w[R][S][C][K]); got nchw");
    if (d_x == NULL || d_w == NULL || d_y == NULL)
        return conv_fail(msg, CONV_ERR_INVALID, "invalid pointer: d_%s is NULL",
                         d_x == NULL   ? "x"
                         : d_w == NULL ? "w"
                                       : "y");
    long long P = conv_out_h(p), Q = conv_out_w(p);
    long long m = (long long)p->n * P * Q, k = (long long)p->c * p->r * p->s, n = p->k;
    st = gemm_validate(GEMM_6E_DBUF, m, n, k, d_x, d_w, d_y, NULL, msg);
    if (st != CONV_OK)
        return st;
    implicit_geom g;
    g.c = p->c, g.h = p->h, g.w = p->w, g.r = p->r, g.s = p->s, g.p = (int)P, g.q = (int)Q;
    g.pad_h = p->pad_h, g.pad_w = p->pad_w, g.stride_h = p->stride_h, g.stride_w = p->stride_w;
    g.dil_h = p->dil_h, g.dil_w = p->dil_w;
    int tiles_n;
    long long tiles = variant_grid(GEMM_6E_DBUF, m, n, &tiles_n);
    /* Vector path: 4 consecutive channels are contiguous and 16-byte aligned. */
    int vec = p->c % 4 == 0 && p->k % 4 == 0 && ((uintptr_t)d_x % 16) == 0 &&
              ((uintptr_t)d_w % 16) == 0 && ((uintptr_t)d_y % 16) == 0;
    if (vec)
        conv2d_6f_implicit_kernel<true><<<(unsigned)tiles, DBUF_THREADS, 0, stream>>>(
            (int)m, (int)n, (int)k, d_x, d_w, d_y, tiles_n, g);
    else
        conv2d_6f_implicit_kernel<false><<<(unsigned)tiles, DBUF_THREADS, 0, stream>>>(
            (int)m, (int)n, (int)k, d_x, d_w, d_y, tiles_n, g);
    CONV_CHECK_LAUNCH("conv2d_6f_implicit_kernel", msg);
    return CONV_OK;
}

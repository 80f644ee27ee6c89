/* Step 06. Versions: 6e, 6f (and step 07's 7a and 7b, whose GEMMs are 6e's
 * body, batched).
 *
 * The device code 6e (gemm_6e.cu) and 6f (conv_implicit_gemm_6f.cu) share,
 * included by both and by the tuning harness (instructor/tuning/tune_6e.cu):
 * one kernel body, dbuf_gemm_body, that adds to 6d (gemm_6d.cu, whose simpler
 * helpers these generalise) two shared buffers with the next tile prefetched
 * into registers, lean loads for the tiles inside the matrices, a swizzle
 * against bank conflicts and a tile shape chosen by measurement (the DBUF_*
 * macros at the end). 6f is the same body with an A loader that gathers from
 * an NHWC image (implicit GEMM): the IMPLICIT template flag and implicit_geom.
 *
 * Any M, N, K >= 1: edge tiles loaded as zeros, stored under a guard; 64-bit
 * element offsets, int rows and columns (M, N, K <= GEMM_MAX_DIM). A thread
 * owns TM rows in float4 groups GS = BM / (TM / 4) apart and 8 columns in two
 * float4 groups 64 apart: 4x4 sub-tiles read as float4 without bank conflicts.
 *
 * Lesson: docs/06_im2col_gemm.md, sections "6e: double buffering and register
 * prefetch" and "6f: implicit GEMM - convolution without the column buffer". */
#ifndef GEMM_DBUF_CUH
#define GEMM_DBUF_CUH

#include <stddef.h>

#include "conv_kernel_util.cuh"
#include "gemm_tile_io.cuh"

/* The block tile's columns (every shape here is 128 wide) and the padding of
 * the transposed A tile's rows: one float4, so that the transposed stores hit
 * 32 banks. */
#define DBUF_BN   128
#define DBUF_APAD 4

/* The geometry 6f's loader needs (NHWC). Unused by 6e. */
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
    /* exercise 06-implicit begin: where row `row` of the implicit A matrix starts */
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
    /* exercise 06-implicit stub
    // TODO(exercise 06-implicit): row = (n*P + p)*Q + q (row 0 for a row past M): row_ptr
    // = image n of x (NHWC), (h0, w0) = the top-left of the window of output (p, q), and
    // (kr, ks, kc) = (r, s, c) of the first k this thread loads, kq = (r*S + s)*C + c.
    // Graded by tests/test_06_conv.c (gpu_conv_implicit_gemm/nhwc_6f_*).
    src.row_ptr = a;
       exercise 06-implicit end */
    return src;
}

/* One element of the implicit A matrix (scalar path): A[row][kidx]. */
__device__ __forceinline__ float implicit_a_element(const a_source &src, const implicit_geom &g,
                                                    int kidx)
{
    /* exercise 06-implicit begin: one element of A, gathered from the image */
    int cc = kidx % g.c, rs = kidx / g.c;
    int ss = rs % g.s, rr = rs / g.s;
    int h = src.h0 + rr * g.dil_h, w = src.w0 + ss * g.dil_w;
    if (h < 0 || h >= g.h || w < 0 || w >= g.w)
        return 0.0f;
    return src.row_ptr[((size_t)h * g.w + w) * g.c + cc];
    /* exercise 06-implicit stub
    // TODO(exercise 06-implicit): A[row][kidx] with kidx = (r*S + s)*C + c: channel c of the
    // input pixel (h0 + r*dil_h, w0 + s*dil_w), 0 outside the image.
    return 0.0f;
       exercise 06-implicit end */
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
        /* excerpt: 6f gather */
        /* exercise 06-implicit begin: 4 channels of one tap as a float4, then step by BK */
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
        /* exercise 06-implicit stub
        // TODO(exercise 06-implicit): C % 4 == 0, so A[row][kidx .. kidx + 3] are 4
        // contiguous channels of one input pixel, the tap (src.kr, src.ks), channel src.kc:
        // one float4 load (zeros outside the image; no load for a row past M or kidx >= k
        // unless INSIDE), into ra[0..3]. Then step (kc, ks, kr) forward by BK k values
        // without dividing, ready for the next tile. Graded by tests/test_06_conv.c
        // (gpu_conv_implicit_gemm/nhwc_6f_*).
        ra[0] = ra[1] = ra[2] = ra[3] = 0.0f;
           exercise 06-implicit end */
        /* excerpt end: 6f gather */
    } else if (IMPLICIT) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            ra[j] = (src.row_ok && kidx + j < k) ? implicit_a_element(src, g, kidx + j) : 0.0f;
    } else {
        load_a_row4<VEC, INSIDE>(ra, src.row_ptr, src.row_ok, k, kidx);
    }
}

/* The fragments of k step kk: TM rows of A (TM/4 float4 groups, GS = BM/(TM/4)
 * rows apart: 32 for 6e's 8 rows of 64) and 8 columns of B (two float4
 * groups 64 columns apart). A's columns are swizzled by kk & 8 (see
 * dbuf_gemm_body); for BK = 8 that is 0. */
template <int BM, int TM>
__device__ __forceinline__ void load_fragments(float fa[TM], float fb[8],
                                               const float (*as)[BM + DBUF_APAD],
                                               const float (*bs)[DBUF_BN], int kk, int ty, int tx)
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

/* 6e/6f's order: row by row, every other row backwards (a snake), so that
 * each FMA shares an operand with the one before it - a[i] along a row, b[j]
 * at the turn - and can take it from the operand reuse cache instead of the
 * register file. ptxas keeps this order; at 4096^3 it was 1-2 points of
 * cuBLAS faster than 6d's row-by-row fma_tile (instructor/logs/06_tune_6e.txt, "ji2"). */
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

/* One tile's arithmetic: BK steps of fragments and TM x 8 FMAs. Fully
 * unrolled: ptxas issues step kk+1's fragment loads while step kk's FMAs run
 * (the shared -> register level of the prefetch). */
template <int BM, int TM, int BK>
__device__ __forceinline__ void dbuf_compute_tile(float acc[TM][8],
                                                  const float (*as)[BM + DBUF_APAD],
                                                  const float (*bs)[DBUF_BN], int ty, int tx)
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
__device__ __forceinline__ void dbuf_store_tile(float (*as)[BM + DBUF_APAD], float (*bs)[DBUF_BN],
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
 * 6e (and 6f): the two-level prefetch. Tile t+1 is loaded from global memory
 * into registers (ra/rb) at the top of step t and stored into the other shared
 * buffer after step t's FMAs; the fully unrolled kk loop lets ptxas read step
 * kk+1's fragments while kk's FMAs run. One barrier per tile.
 * Lean loads: the tiles inside K, in blocks inside N, load without guards in a
 * first loop with no branch in its body; a second, guarded loop takes the rest.
 * On an H100 at 4096^3 that took 6e from 89% to 96-97% of cuBLAS.
 * Shape: BM (block tile rows), TM (rows per thread; the block is a 16 x BM/TM
 * grid of threads, 8 columns each), BK (the K depth of a tile) and WR (rows of
 * the thread grid one warp spans). A's transposed stores go to column
 * r ^ (k & 8), a swizzle against 2-way bank conflicts.
 * Lesson: docs/06_im2col_gemm.md, section "6e: double buffering and register
 * prefetch"; the tuning in "Going further (optional): how 6e was tuned". */
template <int BM, int TM, int WR, int BK, bool VEC, bool IMPLICIT>
__device__ __forceinline__ void dbuf_gemm_body(int m, int n, int k, const float *__restrict__ a,
                                               const float *__restrict__ b, float *__restrict__ c,
                                               int tiles_n, const implicit_geom &g)
{
    constexpr int THREADS = 16 * (BM / TM); /* 16 x BM/TM threads */
    constexpr int KQ = BK / 4;              /* float4 groups per A row */
    constexpr int LA = BM * KQ / THREADS;   /* A float4 per thread */
    constexpr int TPR = THREADS / BK;       /* threads per B row */
    constexpr int LB = DBUF_BN / 4 / TPR;   /* B float4 per thread, TPR * 4 columns apart */
    constexpr int WC = 32 / WR, WARPS_PER_ROW = 16 / WC; /* warp layout */
    static_assert(BK == 8 || BK == 16, "the swizzle (k & 8) covers BK = 8 and 16");
    static_assert(LA * THREADS == BM * KQ && LB * TPR * 4 == DBUF_BN && TPR * BK == THREADS,
                  "tile split");
    constexpr int AROWS = THREADS / KQ; /* A rows one round of loads covers */
    __shared__ __align__(16) float as[2][BK][BM + DBUF_APAD];
    __shared__ __align__(16) float bs[2][BK][DBUF_BN];
    int tile_m = blockIdx.x / tiles_n, tile_n = blockIdx.x % tiles_n;
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int ty = (warp / WARPS_PER_ROW) * WR + lane / WC;
    int tx = (warp % WARPS_PER_ROW) * WC + lane % WC;
    int row0 = tile_m * BM, col0 = tile_n * DBUF_BN;
    int kq = (tid % KQ) * 4;                      /* this thread's k offset in the A tile */
    int brow = tid / TPR, bcol = (tid % TPR) * 4; /* and its B row and first column */
    a_source src[LA];
    int acol[LA]; /* A^T column of each of this thread's rows, swizzled: kq .. kq+3 share k & 8 */
    /* excerpt: 6e swizzled column */
#pragma unroll
    for (int l = 0; l < LA; ++l) {
        src[l] = a_source_init<IMPLICIT>(m, k, a, g, row0 + tid / KQ + l * AROWS, kq);
        acol[l] = (tid / KQ + l * AROWS) ^ (kq & 8);
    }
    /* excerpt end: 6e swizzled column */
    /* exercise 06-dbuf begin: what the lean loop needs */
    /* Tiles that lie wholly inside K, in a block whose 128 columns lie inside
     * N, are loaded without guards: B through one pointer stepped by BK rows
     * (its LB loads are immediate offsets from it), A from the clamped rows. */
    int inside_tiles = VEC && col0 + DBUF_BN <= n ? k / BK : 0;
    const float *b_next = b + (size_t)brow * n + col0 + bcol; /* read only by the first loop */
    /* exercise 06-dbuf stub
       exercise 06-dbuf end */

    float acc[TM][8];
    zero_tile(acc);

    float ra[LA][4], rb[LB][4];
#pragma unroll
    for (int l = 0; l < LA; ++l)
        load_a_tile<VEC, IMPLICIT, BK>(ra[l], src[l], g, k, 0, kq);
#pragma unroll
    for (int l = 0; l < LB; ++l)
        load_b_tile<VEC>(rb[l], b, n, k, 0, brow, col0 + bcol + l * TPR * 4);
    dbuf_store_tile<BM, LA, LB, TPR>(as[0], bs[0], ra, rb, kq, acol, brow, bcol);
    __syncthreads();

    /* excerpt: 6e lean loop */
    /* exercise 06-dbuf begin: the double-buffered loop over the K tiles */
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
    /* exercise 06-dbuf stub
    // TODO(exercise 06-dbuf): tile 0 is in buffer 0 (above). For each of the
    // ntiles = ceil(k / BK) tiles t, the textbook double-buffered loop: if there is a tile
    // t + 1, load it from global memory into the registers ra, rb (load_a_tile for each of
    // the LA rows, with k0 = (t + 1) * BK; load_b_tile for each of the LB float4, at
    // column col0 + bcol + l * TPR * 4); compute tile t from buffer buf
    // (dbuf_compute_tile); then store the registers into buffer buf ^ 1
    // (dbuf_store_tile), one __syncthreads(), and swap the buffers. One guarded loop is
    // correct; the solution adds a second, unguarded loop for the tiles inside the
    // matrices (faster, not needed by the tests). Graded by tests/test_06_gemm.c
    // (gpu_gemm/dbuf_6e_*).
       exercise 06-dbuf end */
    /* excerpt end: 6e lean loop */
    store_c<VEC, BM, TM>(acc, c, m, n, row0, col0, ty, tx);
}

/* The shape 6e and 6f use, chosen by measurement (instructor/tuning/tune_6e.cu,
 * instructor/logs/06_tune_6e.txt, H100 80GB HBM3): a 64 x 128 block tile of
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

#endif /* GEMM_DBUF_CUH */

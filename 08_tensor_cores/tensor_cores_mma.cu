/* Step 08. Versions: 8b, 8b-xt and 8c, one kernel in three precisions.
 *
 * The implicit GEMM of 8a (tensor_cores_wmma_8a.cu) with the tensor cores
 * driven by the PTX instruction mma.sync.m16n8k8 (TF32) instead of WMMA, and
 * its tiles brought into shared memory by a cp.async pipeline
 * (tensor_cores.h). 8c, 3xTF32, is the same kernel with PREC = TC_3XTF32;
 * 8b-xt, with TC_TF32_XTRUNC, hands x to mma.sync unconverted (truncated by
 * the tensor cores, as in step 09's 9a and 9b): the price of rounding.
 *
 * mma.sync documents which lane holds which element, so each thread loads its
 * own fragments from shared memory (ldmatrix) and stores its results straight
 * to y. 8b computes y^T = w^T x^T; the launcher first writes the filter as
 * KRSC into the caller's workspace (tc_filter_kernel, rounded to TF32 for 8b).
 * A block computes 128 x 128 outputs: 8b with 4 warps of 64 x 64 and stages
 * of 32 along j, 8c with 8 warps of 64 x 32 and stages of 16; three stages
 * (two where a block may not have that much shared memory), their rows
 * unpadded and swizzled (stage_col()).
 *
 * Lesson: docs/08_tensor_cores.md, sections "8b: mma.sync and a cp.async
 * pipeline" and "8c: 3xTF32, float's accuracy from TF32 products". */
#include "tensor_cores.h"

#include <stdint.h>

#include "conv_cuda.h"
#include "conv_device.h"
#include "tc_filter.cuh"
#include "tc_geom.cuh"
#include "tc_ptx.cuh"

/* A block's tile: TC8B_BM x TC8B_BN outputs, 2 x WN warps, each 64 x
 * (TC8B_BN / WN); a stage holds BK columns of A and BK rows of B (WN and BK
 * template parameters): TC8B_STAGE(BK, NCHW) floats. In NHWC, TC8B_BM rows
 * of x, then TC8B_BN rows of w, each of BK floats, not padded. In NCHW, A
 * transposed: BK rows of TC8B_NCHW_LDA floats, the block's 128 pixels of
 * one column of A and 8 of padding (pixels are what lie side by side in
 * x), then w's rows as in NHWC. */
#define TC8B_BM              128
#define TC8B_BN              128
#define TC8B_NCHW_LDA        (TC8B_BM + 8)
#define TC8B_APART(BK, NCHW) ((BK) * ((NCHW) ? TC8B_NCHW_LDA : TC8B_BM))
#define TC8B_STAGE(BK, NCHW) (TC8B_APART(BK, NCHW) + (BK)*TC8B_BN)
/* A row of A, decoded once: (h0, w0), the input pixel under its filter tap
 * (0, 0), which padding may put outside the image, and px, where that
 * pixel's channel 0 is or would be in x. A row past the last output has h0
 * = TC_NO_ROW: every h of it is negative, every copy of it a zero fill. 16
 * bytes (on a 64-bit build), one entry of the block's table in shared
 * memory. */
#define TC_NO_ROW (-(1 << 30))
typedef struct {
    const float *px;
    int h0, w0;
} tc_row;
/* After the stages, the table of the block's TC8B_BM rows of A: 2 KB */
#define TC8B_ROWS_BYTES (TC8B_BM * sizeof(tc_row))
/* How THREADS threads share the copies of a stage's rows (BK / 4 chunks
 * per row): thread tid takes chunk column tid % (BK / 4) of rows tid / (BK
 * / 4) + i TC8B_RSTEP, i < TC8B_BM / TC8B_RSTEP of x's part (load_a()), the
 * same of w's (load_b()). */
#define TC8B_RSTEP(THREADS, BK) ((THREADS) / ((BK) / 4))

#if __CUDA_ARCH__ >= 800
/* excerpt: swizzles */
/* Where column col of row `row` of a stage lies (rows of BK floats, x's
 * and w's alike): its 16-byte chunk (col / 4) XORed with a few bits of the
 * row, chunk ^ (row / (32 / BK)) % (BK / 4). Unpadded rows keep each
 * 128-byte line of a copy in one 128-byte line of shared memory (128 / (4
 * BK) rows per line); the XOR gives the 8 rows of an ldmatrix matrix, 16
 * bytes each, 8 different chunks of 4 banks. */
template <int BK> __device__ __forceinline__ int stage_col(int row, int col)
{
    return col ^ (4 * ((row / (32 / BK)) % (BK / 4)));
}
/* excerpt end: swizzles */

/* v (raw float bits) as a TF32 operand; with THREE also its remainder
 * v - big, in TF32. */
template <bool THREE>
__device__ __forceinline__ void split(unsigned v, unsigned &big, unsigned &small)
{
    big = to_tf32(__uint_as_float(v));
    /* exercise 08-split begin: 3xTF32's remainder */
    if (THREE)
        small = to_tf32(__uint_as_float(v) - __uint_as_float(big));
    /* exercise 08-split stub
    // TODO(exercise 08-split): with THREE, small is what big leaves of v,
    // itself rounded to TF32 (8c then adds the products big*small and
    // small*big). Graded by tests/test_08_tensor_cores.c
    // (gpu_tensor_cores/stay_within_their_bounds_on_random_floats,
    // convert_their_inputs_as_their_precision_says).
    if (THREE)
        small = 0u;
       exercise 08-split end */
}

/* excerpt: ldmatrix */
/* ldmatrix reads four 8 x 8 matrices of 16-bit elements, that is 8 rows of
 * 4 floats each, lanes 8i .. 8i + 7 giving the row addresses of matrix i
 * (p), and hands lane 4g + t the 32-bit word t of row g of matrix i in r[i].
 * The two loads below choose which rows and columns the four matrices are. */
__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], const float *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

/* The b operands of two tiles of x^T, pixels (rows of the stage) `rows` ..
 * + 7 and + 8 .. + 15, columns col .. col + 7, in one instruction: matrix 0
 * = pixels 0-7, columns 0-3 gives x[g][t] = b0; matrix 1, columns 4-7,
 * gives x[g][t+4] = b1; matrices 2 and 3 the same for pixels 8-15. So b[0],
 * b[1] and b[2], b[3] are two tiles' b operands, each a pair of consecutive
 * registers, as mma.sync wants them. (`rows` starts at a multiple of 16
 * rows, so the swizzle sees the same row bits.) */
template <int BK>
__device__ __forceinline__ void ldmatrix_x(unsigned b[4], const float *rows, int col, int lane)
{
    const int i = lane >> 3; /* the matrix whose row address this lane gives */
    const int row = (lane & 7) + 8 * (i >> 1);
    ldmatrix_x4(b, rows + row * BK + stage_col<BK>(row, col + 4 * (i & 1)));
}

/* The a operand of a tile of w^T, the 16 channels of rows `rows` .. + 15,
 * columns col .. col + 7: matrix 0 = rows 0-7, columns 0-3 gives w^T[g][t]
 * = a0; matrix 1, rows 8-15, gives w^T[g+8][t] = a1; matrices 2 and 3 the
 * same at columns 4-7 (a2, a3). */
template <int BK>
__device__ __forceinline__ void ldmatrix_w(unsigned a[4], const float *rows, int col, int lane)
{
    const int i = lane >> 3;
    const int row = (lane & 7) + 8 * (i & 1);
    ldmatrix_x4(a, rows + row * BK + stage_col<BK>(row, col + 4 * (i >> 1)));
}
/* excerpt end: ldmatrix */

/* What load_a() needs of the block's A rows m0 .. m0 + 127, decoded once:
 * thread tid decodes row m0 + tid into rows[tid] (the table in shared
 * memory; a barrier must follow before any thread reads it), and every
 * thread the tap of its first chunk (column 4 (tid % (BK / 4))). */
template <int BK, bool NCHW>
__device__ __forceinline__ void load_a_init(const float *__restrict__ x, const tc_geom &g,
                                            long long m0, int tid, tc_row *rows, tc_tap &t)
{
    if (tid < TC8B_BM) {
        const long long pq = (long long)g.p * g.q;
        const long long m = m0 + tid;
        const long long mm = m < g.m ? m : 0;
        const int rem = (int)(mm % pq);
        const int h0 = (rem / g.q) * g.stride_h - g.pad_h, w0 = (rem % g.q) * g.stride_w - g.pad_w;
        tc_row r;
        /* NHWC: x[n][h0][w0][0]; NCHW: x[n][0][h0][w0] */
        r.px = NCHW ? x + ((mm / pq) * g.c * g.h + h0) * g.w + w0
                    : x + (((mm / pq) * g.h + h0) * g.w + w0) * g.c;
        r.h0 = m < g.m ? h0 : TC_NO_ROW;
        r.w0 = w0;
        rows[tid] = r;
    }
    t.c = 0, t.dh = 0, t.dw = 0, t.off = 0;
    tap_advance(t, 4 * (tid % (BK / 4)), g);
}

/* A's part of one stage: 128 rows of BK columns j0 .. j0 + BK - 1, in
 * chunks of 4 floats, copied by THREADS threads: thread tid copies chunk
 * column cc = tid % (BK / 4) of rows ar = tid / (BK / 4), ar + ASTEP, ...;
 * neighbouring threads take neighbouring chunks of a row, so that a warp
 * copies whole rows (whole 32-byte sectors of x where C is large enough).
 * Its chunk's tap arrives in t and leaves advanced by BK. All the thread's
 * rows share that tap, so its part of each address (dh, dw, off) is known
 * once per stage and a row adds its own, read from the table rows: h = h0 +
 * dh, w = w0 + dw, px + off; and they share their swizzle, so their
 * shared-memory addresses are one address plus constants. With VEC, C % 4
 * == 0, so the chunk is 4 channels of one tap: contiguous in x, one 16-byte
 * copy; else four copies of 4 bytes. A copy out of bounds reads no source
 * bytes (cp_async_zfill), so its address is never used. */
template <int THREADS, int BK, bool VEC>
__device__ __forceinline__ void load_a(float *stage, const tc_geom &g, int j0, int tid,
                                       const tc_row *rows, tc_tap &t)
{
    constexpr int E = VEC ? 1 : 4; /* copies per chunk */
    constexpr int ASTEP = TC8B_RSTEP(THREADS, BK), AROWS = TC8B_BM / ASTEP;
    static_assert(AROWS * ASTEP == TC8B_BM, "the threads copy whole rows of A");
    static_assert(ASTEP % 8 == 0, "rows ar + i ASTEP have row ar's swizzle (stage_col)");
    const int cc = tid % (BK / 4), ar = tid / (BK / 4), j = j0 + 4 * cc;
    tc_tap te[E]; /* each element of the chunk (VEC: its first) */
    te[0] = t;
#pragma unroll
    for (int e = 1; e < E; ++e) {
        te[e] = te[e - 1];
        tap_advance(te[e], 1, g);
    }
    const unsigned dst = smem_addr(stage + ar * BK + stage_col<BK>(ar, 4 * cc));
    /* with VEC, all the rows read first, so that their loads overlap; the
     * four taps of a chunk without VEC leave registers for one at a time */
    tc_row rr[AROWS];
#pragma unroll
    for (int i = 0; i < AROWS; ++i)
        if (VEC)
            rr[i] = rows[ar + i * ASTEP];
#pragma unroll
    for (int i = 0; i < AROWS; ++i) {
        const tc_row r = VEC ? rr[i] : rows[ar + i * ASTEP];
#pragma unroll
        for (int e = 0; e < E; ++e) {
            /* 0 <= h < H as one unsigned comparison: a negative h wraps to a
             * large unsigned value */
            const unsigned h = r.h0 + te[e].dh, w = r.w0 + te[e].dw;
            const bool ok = j + e < g.j && h < (unsigned)g.h && w < (unsigned)g.w;
            cp_async_zfill<16 / E>(dst + 4 * (i * ASTEP * BK + e), r.px + te[e].off, ok);
        }
    }
    tap_advance(t, BK, g); /* the chunk of the next stage */
}

/* A's part of one stage in NCHW, stored transposed: row jr of the stage
 * is column j0 + jr of A, the block's 128 pixels side by side (their
 * values of one channel and tap). Thread tid copies chunk cc = tid % 32, pixels
 * 4 cc .. 4 cc + 3, of rows jr = tid / 32, jr + JSTEP, ...; a warp copies
 * one whole row. Column j = (c R + r) S + s is channel c at tap (r, s)
 * (tap_nchw()). With VEC, a 1x1 filter, stride 1 and no padding, and H W
 * and C multiples of 4: a chunk's four pixels are four neighbours in x,
 * x[n][j][pixel], one 16-byte copy (its first pixel's row says where, and
 * whether the chunk is past the last output); else four copies of 4 bytes,
 * each pixel at its own h and w. */
template <int THREADS, int BK, bool VEC>
__device__ __forceinline__ void load_a_nchw(float *stage, const tc_geom &g, int j0, int tid,
                                            const tc_row *rows)
{
    constexpr int JSTEP = THREADS / (TC8B_BM / 4), AJ = BK / JSTEP;
    static_assert(AJ * JSTEP == BK, "the threads copy whole rows of the stage");
    const int cc = tid % (TC8B_BM / 4), jr = tid / (TC8B_BM / 4);
    const unsigned dst = smem_addr(stage + jr * TC8B_NCHW_LDA + 4 * cc);
    const long long hw = (long long)g.h * g.w;
    if (VEC) {
        const tc_row r = rows[4 * cc];
#pragma unroll
        for (int i = 0; i < AJ; ++i) {
            const int j = j0 + jr + i * JSTEP;
            cp_async_zfill<16>(dst + 4 * i * JSTEP * TC8B_NCHW_LDA, r.px + j * hw,
                               j < g.j && r.h0 != TC_NO_ROW);
        }
        return;
    }
    tc_row r[4];
#pragma unroll
    for (int e = 0; e < 4; ++e)
        r[e] = rows[4 * cc + e];
#pragma unroll
    for (int i = 0; i < AJ; ++i) {
        const int j = j0 + jr + i * JSTEP;
        const tc_tap t = tap_nchw(j < g.j ? j : 0, g);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const unsigned h = r[e].h0 + t.dh, w = r[e].w0 + t.dw;
            const bool ok = j < g.j && h < (unsigned)g.h && w < (unsigned)g.w;
            cp_async_zfill<4>(dst + 4 * (i * JSTEP * TC8B_NCHW_LDA + e), r[e].px + t.off, ok);
        }
    }
}

/* B's part of one stage (at bpart): the filter in KRSC (wk[k][j], prepared
 * by tc_filter_kernel; in NCHW, KCRS), rows k0 .. k0 + 127 (output channels), columns j0 ..
 * j0 + BK - 1, in chunks of 4 floats, as A's: thread tid copies chunk
 * column cc = tid % (BK / 4) of rows br = tid / (BK / 4), br + BSTEP, ...
 * Each 16 rows of the stage hold their 16 channels in the order 0, 2, ..,
 * 14, 1, 3, .., 15: ldmatrix_w() then hands lane 4g + t channels 2 g and
 * 2 g + 1 as a0 and a1 (row br holds channel ch). Rows past K and columns
 * past J are zero-filled. */
template <int THREADS, int BK, bool VEC>
__device__ __forceinline__ void load_b(float *bpart, const float *__restrict__ wk, const tc_geom &g,
                                       int j0, int k0, int tid)
{
    constexpr int E = VEC ? 1 : 4; /* copies per chunk */
    constexpr int BSTEP = TC8B_RSTEP(THREADS, BK), BROWS = TC8B_BN / BSTEP;
    static_assert(BROWS * BSTEP == TC8B_BN, "the threads copy whole rows of B");
    static_assert(BSTEP % 16 == 0, "rows br + i BSTEP: the same channel order and swizzle");
    const int cc = tid % (BK / 4), br = tid / (BK / 4), j = j0 + 4 * cc;
    const int ch = (br & ~15) + 2 * (br & 7) + ((br >> 3) & 1); /* row br's channel */
    const int rows_left = g.k - (k0 + ch);
    const float *src = wk + (long long)(k0 + ch) * g.j + j;
    const unsigned dst = smem_addr(bpart + br * BK + stage_col<BK>(br, 4 * cc));
#pragma unroll
    for (int i = 0; i < BROWS; ++i, src += (long long)BSTEP * g.j)
#pragma unroll
        for (int e = 0; e < E; ++e)
            cp_async_zfill<16 / E>(dst + 4 * (i * BSTEP * BK + e), src + e,
                                   i * BSTEP < rows_left && j + e < g.j);
}

/* One stage's copies, A's part then B's: load_a() (or, NCHW, load_a_nchw())
 * and load_b(), columns j0 .. j0 + BK - 1 of A and rows k0 .. k0 + 127 of
 * B; t, load_a()'s tap, is moved on by BK (NCHW needs none). */
template <int THREADS, int BK, bool VEC, bool NCHW>
__device__ __forceinline__ void load_stage(float *stage, const float *__restrict__ wk,
                                           const tc_geom &g, int j0, int k0, int tid,
                                           const tc_row *rows, tc_tap &t)
{
    if (NCHW)
        load_a_nchw<THREADS, BK, VEC>(stage, g, j0, tid, rows);
    else
        load_a<THREADS, BK, VEC>(stage, g, j0, tid, rows, t);
    load_b<THREADS, BK, VEC>(stage + TC8B_APART(BK, NCHW), wk, g, j0, k0, tid);
}

/* The fragments of one k-step, in the registers mma.sync takes them from:
 * w^T's a operands of the warp's MI channel tiles, x^T's b operands of its
 * 8 pixel tiles; with 3xTF32 each also split into a TF32 part and its
 * remainder (small: 8c only). */
template <int MI> struct tc_frags {
    unsigned a[MI][4], b[8][2], a_small[MI][4], b_small[8][2];
};

/* The fragments of k-step kk (columns kk .. kk + 7 of a stage) for the
 * warp's tile at (wm, wn): as and bs are the stage's x and w parts. PREC
 * is the arithmetic (tc_precision): each input rounded (TC_TF32), split
 * (TC_3XTF32), or x left as stored (TC_TF32_XTRUNC). */
template <int BK, int MI, int PREC>
__device__ __forceinline__ void load_fragments(tc_frags<MI> &f, const float *as, const float *bs,
                                               int kk, int wm, int wn, int lane)
{
    constexpr bool THREE = PREC == TC_3XTF32, XTRUNC = PREC == TC_TF32_XTRUNC;
    /* exercise 08-fragments begin: the fragments of one k-step */
    /* w^T, channel tile i: rows wn + 16 i .. + 15 of bs, one ldmatrix;
     * already rounded to TF32 (tc_filter_kernel), but for 3xTF32 split */
#pragma unroll
    for (int i = 0; i < MI; ++i) {
        unsigned raw[4];
        ldmatrix_w<BK>(raw, bs + (wn + 16 * i) * BK, kk, lane);
#pragma unroll
        for (int v = 0; v < 4; ++v) {
            if (THREE)
                split<THREE>(raw[v], f.a[i][v], f.a_small[i][v]);
            else
                f.a[i][v] = raw[v];
        }
    }
    /* x^T: the warp's 64 pixels, two tiles of 8 per ldmatrix */
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        unsigned raw[4];
        ldmatrix_x<BK>(raw, as + (wm + 16 * p) * BK, kk, lane);
#pragma unroll
        for (int v = 0; v < 4; ++v) {
            unsigned &big = f.b[2 * p + v / 2][v % 2], &small = f.b_small[2 * p + v / 2][v % 2];
            if (XTRUNC) /* as stored: the tensor cores ignore the low 13 bits */
                big = raw[v];
            else
                split<THREE>(raw[v], big, small);
        }
    }
    /* exercise 08-fragments stub
    // TODO(exercise 08-fragments): this k-step's fragments in f. w^T,
    // channel tile i < MI: ldmatrix_w<BK> of the 16 rows wn + 16 i of bs
    // hands over f.a[i][0..3], already TF32 (tc_filter_kernel rounded
    // them), except with THREE: then split<THREE>(v, f.a[i][v],
    // f.a_small[i][v]) each. x^T, pixel tiles 2p and 2p + 1 (p < 4):
    // ldmatrix_x<BK> of the 16 rows wm + 16 p of as hands over f.b[2p][0],
    // f.b[2p][1], f.b[2p+1][0], f.b[2p+1][1], each converted with
    // split<THREE>(v, big, small) (with XTRUNC, as loaded). Both at columns
    // kk .. kk + 7.
    // Graded by tests/test_08_tensor_cores.c (suite gpu_tensor_cores).
    for (int i = 0; i < MI; ++i)
        for (int v = 0; v < 4; ++v)
            f.a[i][v] = 0u, f.a_small[i][v] = 0u;
    for (int jj = 0; jj < 8; ++jj)
        for (int v = 0; v < 2; ++v)
            f.b[jj][v] = 0u, f.b_small[jj][v] = 0u;
       exercise 08-fragments end */
}

/* excerpt: NCHW fragments */
/* load_fragments() for a stage in NCHW: w^T's as there; x^T's b operands,
 * b0 = A[pixel g][column t] and b1 = column t + 4, from the transposed
 * rows, one 4-byte load each (ldmatrix reads rows of 16 bytes, and here a
 * pixel's columns are TC8B_NCHW_LDA floats apart). Lane 4g + t reads word
 * t TC8B_NCHW_LDA + g of a row pair: the padding (8 floats) puts the four t
 * eight banks apart, so the 32 lanes hit 32 banks. */
template <int BK, int MI, int PREC>
__device__ __forceinline__ void load_fragments_nchw(tc_frags<MI> &f, const float *as,
                                                    const float *bs, int kk, int wm, int wn,
                                                    int lane)
{
    constexpr bool THREE = PREC == TC_3XTF32, XTRUNC = PREC == TC_TF32_XTRUNC;
#pragma unroll
    for (int i = 0; i < MI; ++i) {
        unsigned raw[4];
        ldmatrix_w<BK>(raw, bs + (wn + 16 * i) * BK, kk, lane);
#pragma unroll
        for (int v = 0; v < 4; ++v) {
            if (THREE)
                split<THREE>(raw[v], f.a[i][v], f.a_small[i][v]);
            else
                f.a[i][v] = raw[v];
        }
    }
    const float *col = as + (kk + (lane & 3)) * TC8B_NCHW_LDA + wm + (lane >> 2);
#pragma unroll
    for (int jj = 0; jj < 8; ++jj)
#pragma unroll
        for (int v = 0; v < 2; ++v) {
            const unsigned raw = __float_as_uint(col[4 * v * TC8B_NCHW_LDA + 8 * jj]);
            if (XTRUNC)
                f.b[jj][v] = raw;
            else
                split<THREE>(raw, f.b[jj][v], f.b_small[jj][v]);
        }
}
/* excerpt end: NCHW fragments */

/* The fragments of k-step kk of the stage at `stage`, in either layout. */
template <int BK, int MI, int PREC, bool NCHW>
__device__ __forceinline__ void stage_fragments(tc_frags<MI> &f, const float *stage, int kk, int wm,
                                                int wn, int lane)
{
    const float *bs = stage + TC8B_APART(BK, NCHW);
    if (NCHW)
        load_fragments_nchw<BK, MI, PREC>(f, stage, bs, kk, wm, wn, lane);
    else
        load_fragments<BK, MI, PREC>(f, stage, bs, kk, wm, wn, lane);
}

/* One k-step's products on the warp's tile: MI x 8 mma.sync (8c: three
 * each) of 16 channels by 8 pixels. */
template <int MI, int PREC>
__device__ __forceinline__ void mma_fragments(float (&acc)[MI][8][4], const tc_frags<MI> &f)
{
    constexpr bool THREE = PREC == TC_3XTF32;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int jj = 0; jj < 8; ++jj) {
            if (!THREE) {
                mma_m16n8k8_tf32(acc[i][jj], f.a[i], f.b[jj]);
                continue;
            }
            /* excerpt: three products */
            /* 8c: this k-step's three products on a fresh sum, the small
             * terms first, then one float addition per element, rounded
             * to nearest */
            float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            mma_m16n8k8_tf32(t, f.a_small[i], f.b[jj]);
            mma_m16n8k8_tf32(t, f.a[i], f.b_small[jj]);
            mma_m16n8k8_tf32(t, f.a[i], f.b[jj]);
#pragma unroll
            for (int v = 0; v < 4; ++v)
                acc[i][jj][v] += t[v];
            /* excerpt end: three products */
        }
}
#endif

/* The outputs in NCHW: pixel m is y[n][.][pq], n = m / (P Q), pq its rest,
 * and channel k lies k P Q floats on. c0 and c1 of tile (i, jj) are pixels
 * 2t and 2t + 1 of channel 16 i + 2 g, c2 and c3 of the next channel: where
 * P Q is even, 2t and 2t + 1 are neighbours in one image (m is even), one
 * 8-byte store; else two stores of 4 bytes. */
template <int MI>
__device__ __forceinline__ void store_nchw(float *__restrict__ y, const float (&acc)[MI][8][4],
                                           const tc_geom &g, long long m0, int k0, int wm, int wn,
                                           int gq, int tq)
{
    const long long pq = (long long)g.p * g.q;
    const bool pairs = pq % 2 == 0 && (uintptr_t)y % 8 == 0;
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
        const long long m = m0 + wm + 8 * jj + 2 * tq;
        if (m >= g.m)
            continue;
        const long long n = m / pq, at = n * g.k * pq + (m - n * pq);
        const long long n1 = (m + 1) / pq, at1 = n1 * g.k * pq + (m + 1 - n1 * pq);
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const long long k = k0 + wn + 16 * i + 2 * gq + h;
                if (k >= g.k)
                    continue;
                if (pairs)
                    *(float2 *)(y + at + k * pq) =
                        make_float2(acc[i][jj][2 * h], acc[i][jj][2 * h + 1]);
                else {
                    y[at + k * pq] = acc[i][jj][2 * h];
                    if (m + 1 < g.m)
                        y[at1 + k * pq] = acc[i][jj][2 * h + 1];
                }
            }
    }
}

/* The kernel of 2 x WN warps, MINB blocks per SM (at most 65,536 / (MINB *
 * threads) registers per thread), STAGES stages of BK, arithmetic PREC, x
 * and y in NHWC or (NCHW) in NCHW. */
template <int WN, int MINB, int STAGES, int BK, bool VEC, int PREC, bool NCHW>
__global__ void __launch_bounds__(64 * WN, MINB)
    conv2d_tc_mma_kernel(const float *__restrict__ x, const float *__restrict__ wk,
                         float *__restrict__ y, tc_geom g)
{
#if __CUDA_ARCH__ >= 800
    constexpr int THREADS = 64 * WN, MI = TC8B_BN / WN / 16; /* 16-channel tiles per warp */
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int gq = lane >> 2, tq = lane & 3;                            /* g and t above */
    const int wm = (warp / WN) * 64, wn = (warp % WN) * (TC8B_BN / WN); /* the warp's tile */
    const long long m0 = (long long)blockIdx.x * TC8B_BM;
    const int k0 = blockIdx.y * TC8B_BN;

    /* the block's A rows, once, into the table after the stages (a row
     * per thread); the tap of this thread's first chunk */
    static_assert(THREADS >= TC8B_BM, "each of the block's A rows has a thread to decode it");
    tc_row *rows = (tc_row *)(smem + STAGES * TC8B_STAGE(BK, NCHW));
    tc_tap tap;
    load_a_init<BK, NCHW>(x, g, m0, tid, rows, tap);
    __syncthreads(); /* the table is written */

    float acc[MI][8][4]; /* [channel tile][pixel tile][c0..c3] */
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int jj = 0; jj < 8; ++jj)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                acc[i][jj][v] = 0.0f;

    const int steps = (g.j + BK - 1) / BK;
    /* prologue: the first STAGES stages in flight, one group each */
#pragma unroll
    for (int st = 0; st < STAGES; ++st) {
        if (st < steps)
            load_stage<THREADS, BK, VEC, NCHW>(smem + st * TC8B_STAGE(BK, NCHW), wk, g, st * BK, k0,
                                               tid, rows, tap);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    /* stage 0 has landed (at most STAGES - 1 groups still pending) */
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 1) : "memory");
    __syncthreads();
    /* excerpt: mma pipeline */
    /* exercise 08-pipeline begin: the steps of the cp.async pipeline */
    /* Fragment sets: 8b has registers for two, f[ks % 2] for k-step ks,
     * the next k-step's loading while this one's products run; 8c's split
     * fragments fill one. */
    constexpr int SETS = PREC == TC_3XTF32 ? 1 : 2, KS = BK / 8;
    static_assert(SETS == 1 || KS % 2 == 0, "the sets alternate over a stage's k-steps");
    tc_frags<MI> f[SETS];
    if (SETS == 2) /* k-step 0 of stage 0 */
        stage_fragments<BK, MI, PREC, NCHW>(f[0], smem, 0, wm, wn, lane);
    /* step = step0 + rd computes stage rd, k-step by k-step. Unrolled by
     * STAGES, so that rd, and with it every shared-memory address of a
     * step, is a constant. */
    for (int step0 = 0; step0 < steps; step0 += STAGES) {
#pragma unroll
        for (int rd = 0; rd < STAGES; ++rd) {
            const int step = step0 + rd;
            if (step >= steps)
                break;
            const float *as = smem + rd * TC8B_STAGE(BK, NCHW);
#pragma unroll
            for (int ks = 0; ks < KS; ++ks) {
                tc_frags<MI> &now = f[ks % SETS];
                if (SETS == 1)
                    stage_fragments<BK, MI, PREC, NCHW>(now, as, 8 * ks, wm, wn, lane);
                else if (ks < KS - 1)
                    stage_fragments<BK, MI, PREC, NCHW>(f[(ks + 1) % SETS], as, 8 * (ks + 1), wm,
                                                        wn, lane);
                if (ks == KS - 1) {
                    /* the last k-step's fragments are in registers: once
                     * every warp is here, stage rd is free. Stage step + 1
                     * has landed (at most STAGES - 2 groups pending). */
                    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
                    __syncthreads();
                    const int next = step + STAGES; /* stage rd's next step */
                    if (next < steps)
                        load_stage<THREADS, BK, VEC, NCHW>(smem + rd * TC8B_STAGE(BK, NCHW), wk, g,
                                                           next * BK, k0, tid, rows, tap);
                    asm volatile("cp.async.commit_group;\n" ::: "memory");
                    if (SETS == 2) /* k-step 0 of the next step's stage, landed */
                        stage_fragments<BK, MI, PREC, NCHW>(
                            f[0], smem + ((rd + 1) % STAGES) * TC8B_STAGE(BK, NCHW), 0, wm, wn,
                            lane);
                }
                mma_fragments<MI, PREC>(acc, now);
            }
        }
    }
    /* exercise 08-pipeline stub
    // TODO(exercise 08-pipeline): stages 0 .. STAGES - 1 are in flight and
    // stage 0 has landed (above). For each step (stage rd = step % STAGES of
    // the ring), for each k-step ks of BK / 8: its fragments, then
    // mma_fragments. With one fragment set (SETS == 1, 8c), stage_fragments
    // of k-step ks into f[0] first. With two (8b), k-step ks's are in
    // f[ks % 2] already: load k-step ks + 1's into the other set (before the
    // products, so that the loads run under them), and load k-step 0 of
    // stage 0 before the loop. At the last k-step, before its products (its
    // fragments are in registers, so stage rd is no longer read): wait
    // until step + 1's copies have landed (cp.async.wait_group with STAGES -
    // 2 groups still allowed), __syncthreads(), refill stage rd with step +
    // STAGES (load_stage, if that step exists), commit the group
    // (always: wait_group counts groups); with two sets, then load k-step 0
    // of the next step's stage into f[0]. Unroll by STAGES so that every
    // stage index is a constant. Graded by tests/test_08_tensor_cores.c
    // (suite gpu_tensor_cores).
       exercise 08-pipeline end */
    /* excerpt end: mma pipeline */
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");

    if (NCHW) {
        store_nchw<MI>(y, acc, g, m0, k0, wm, wn, gq, tq);
        return;
    }
    /* exercise 08-stores begin: the outputs, from the accumulators to y */
    /* c0, c1 of tile (i, jj): channel row g, pixels 2t and 2t + 1 of the
     * tile; c2, c3 the same for row g + 8. Rows g and g + 8 are channels
     * 16 i + 2 g and 16 i + 2 g + 1 (w's loads gave them so): c0 and c2 are
     * two adjacent channels of one pixel, one 8-byte store where K is even
     * (VEC), as are c1 and c3. */
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const long long row = m0 + wm + 8 * jj + 2 * tq + e; /* pixel 2t + e */
            if (row >= g.m)
                continue;
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const int col = k0 + wn + 16 * i + 2 * gq;
                float *out = y + row * g.k + col;
                if (VEC && col < g.k)
                    *(float2 *)out = make_float2(acc[i][jj][e], acc[i][jj][2 + e]);
                if (!VEC && col < g.k)
                    out[0] = acc[i][jj][e];
                if (!VEC && col + 1 < g.k)
                    out[1] = acc[i][jj][2 + e];
            }
        }
    }
    /* exercise 08-stores stub
    // TODO(exercise 08-stores): acc[i][jj][0..3] are c0..c3 of the tile of
    // channels wn + 16 i (rows g, g + 8 of the tile: channels 2 g and 2 g + 1)
    // by pixels wm + 8 jj (columns 2t, 2t + 1). Store each to
    // y[m0 + pixel][k0 + channel], pixels below g.m and channels below g.k
    // only; where VEC, c0 and c2 (c1 and c3) as one float2. Graded by
    // tests/test_08_tensor_cores.c (suite gpu_tensor_cores).
    (void)gq, (void)tq, (void)wm, (void)wn; // the stores use them: delete this line
       exercise 08-stores end */
#endif
}

/* The tiles: warps along n (WN), blocks per SM, stages, BK. 8b: 4 warps of
 * 64 x 64, 128 accumulators per thread, two blocks per SM, three stages of
 * 32 (32 KB each). 8c needs more registers for its split operands and
 * correction sums: 8 warps of 64 x 32, one block per SM, three stages of
 * 16 (16 KB each). */
#define TC8B_TILE 2, 2, 3, 32
#define TC8C_TILE 4, 1, 3, 16

/* The kernel of a tile for STAGES, VEC, PREC and the layout, as an address. */
template <int WN, int MINB, int BK, int PREC, int STAGES>
static const void *mma_kernel(bool vec, bool nchw)
{
    if (nchw)
        return vec ? (const void *)conv2d_tc_mma_kernel<WN, MINB, STAGES, BK, true, PREC, true>
                   : (const void *)conv2d_tc_mma_kernel<WN, MINB, STAGES, BK, false, PREC, true>;
    return vec ? (const void *)conv2d_tc_mma_kernel<WN, MINB, STAGES, BK, true, PREC, false>
               : (const void *)conv2d_tc_mma_kernel<WN, MINB, STAGES, BK, false, PREC, false>;
}

/* The launch of a tile: STAGES stages, or two where STAGES do not fit in a
 * block or two let more blocks share an SM (on a GPU with less shared
 * memory per SM); neither fits: skipped with the reason. */
template <int WN, int MINB, int STAGES, int BK, int PREC>
static conv_status launch_mma(const conv_params *p, bool vec, const float *d_x, const float *d_w,
                              float *d_y, float *d_work, cudaStream_t stream, conv_msg *msg)
{
    const int threads = 64 * WN;
    const bool nchw = p->layout == CONV_LAYOUT_NCHW;
    /* shared memory of a block: its stages, then the table of its rows */
    const size_t stage =
        (size_t)(nchw ? TC8B_STAGE(BK, true) : TC8B_STAGE(BK, false)) * sizeof(float);
    const size_t deep_smem = STAGES * stage + TC8B_ROWS_BYTES,
                 two_smem = 2 * stage + TC8B_ROWS_BYTES;
    const void *deep = mma_kernel<WN, MINB, BK, PREC, STAGES>(vec, nchw);
    const void *two = mma_kernel<WN, MINB, BK, PREC, 2>(vec, nchw);
    conv_msg why = {{0}};
    const bool deep_fits =
        conv_kernel_fits(deep, "conv2d_tc_mma_kernel", threads, deep_smem, &why) == CONV_OK;
    const bool two_fits =
        conv_kernel_fits(two, "conv2d_tc_mma_kernel", threads, two_smem, &why) == CONV_OK;
    const bool use_two =
        !deep_fits || (two_fits && conv_blocks_per_sm(two, threads, two_smem) >
                                       conv_blocks_per_sm(deep, threads, deep_smem));
    const void *kernel = use_two ? two : deep;
    const size_t smem = use_two ? two_smem : deep_smem;
    conv_status st;
    if ((st = conv_kernel_fits(kernel, "conv2d_tc_mma_kernel", threads, smem, msg)) != CONV_OK ||
        (st = conv_tf32_available(kernel,
                                  PREC == TC_3XTF32        ? "8c mma.sync 3xTF32"
                                  : PREC == TC_TF32_XTRUNC ? "8b mma.sync TF32, x truncated"
                                                           : "8b mma.sync TF32",
                                  msg)) != CONV_OK)
        return st;
    tc_geom g = tc_make_geom(p);
    /* the filter as KRSC (in NCHW, KCRS as it is), rounded but for 3xTF32,
     * which splits it */
    st = nchw ? tc_filter_copy(g, PREC != TC_3XTF32, d_w, d_work, stream, msg)
              : tc_filter(g, PREC != TC_3XTF32, d_w, d_work, stream, "8b", msg);
    if (st != CONV_OK)
        return st;
    const float *d_wk = d_work;
    const dim3 grid((unsigned)((g.m + TC8B_BM - 1) / TC8B_BM),
                    (unsigned)((g.k + TC8B_BN - 1) / TC8B_BN));
    /* one launch for the instantiations: the kernel's address and its arguments */
    void *args[] = {(void *)&d_x, (void *)&d_wk, (void *)&d_y, (void *)&g};
    CONV_CUDA_CHECK(cudaLaunchKernel(kernel, grid, dim3(threads), args, smem, stream), msg);
    CONV_CHECK_LAUNCH("conv2d_tc_mma_kernel", msg);
    return CONV_OK;
}

extern "C" size_t conv2d_tc_mma_workspace_elems(const conv_params *p)
{
    return (size_t)p->k * p->r * p->s * p->c;
}

extern "C" conv_status conv2d_tc_mma(const conv_params *p, tc_precision t, const float *d_x,
                                     const float *d_w, float *d_y, float *d_work, size_t work_elems,
                                     cudaStream_t stream, conv_msg *msg)
{
    conv_status st = tc_check_call_mma(p, d_x, d_w, d_y, msg);
    if (st == CONV_OK && t != TC_TF32 && t != TC_3XTF32 && t != TC_TF32_XTRUNC)
        st = conv_fail(msg, CONV_ERR_INVALID,
                       "8b and 8c run TF32, 3xTF32 or TF32 with x truncated, not precision %d",
                       (int)t);
    if (st == CONV_OK && d_work == NULL)
        st = conv_fail(msg, CONV_ERR_INVALID, "8b and 8c need a workspace (d_work) for the filter");
    if (st == CONV_OK && work_elems < conv2d_tc_mma_workspace_elems(p))
        st = conv_fail(msg, CONV_ERR_INVALID,
                       "the workspace (work_elems) holds %zu floats; 8b and 8c need %zu here",
                       work_elems, conv2d_tc_mma_workspace_elems(p));
    if (st != CONV_OK)
        return st;
    /* 16-byte copies: NHWC where C % 4 == 0 (and the float2 stores where K
     * is); NCHW where a chunk of 4 pixels is 4 neighbours in x: a 1x1
     * filter, stride 1, no padding, H W % 4 == 0, and C % 4 == 0 for w */
    const bool aligned = ((uintptr_t)d_x | (uintptr_t)d_work) % 16 == 0;
    const bool vec = p->layout == CONV_LAYOUT_NCHW
                         ? aligned && tc_nchw_copies16(p)
                         : aligned && p->c % 4 == 0 && p->k % 4 == 0 && (uintptr_t)d_y % 8 == 0;
    if (t == TC_3XTF32)
        return launch_mma<TC8C_TILE, TC_3XTF32>(p, vec, d_x, d_w, d_y, d_work, stream, msg);
    if (t == TC_TF32_XTRUNC)
        return launch_mma<TC8B_TILE, TC_TF32_XTRUNC>(p, vec, d_x, d_w, d_y, d_work, stream, msg);
    return launch_mma<TC8B_TILE, TC_TF32>(p, vec, d_x, d_w, d_y, d_work, stream, msg);
}

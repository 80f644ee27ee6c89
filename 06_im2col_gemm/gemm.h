/* Step 06, the GEMM progression: C[M][N] = A[M][K] * B[K][N], row-major, FP32,
 * written five times, each version one idea faster than the one before:
 *
 *   6a gemm_6a.cu  gemm_6a_naive     one thread per output, straight from global memory
 *   6b gemm_6b.cu  gemm_6b_shared    32x32 tiles of A and B in shared memory
 *   6c gemm_6c.cu  gemm_6c_regtile   128x128 block tile, 8x8 outputs per thread in registers
 *   6d gemm_6d.cu  gemm_6d_float4    + float4 loads and stores, A stored transposed in shared
 *   6e gemm_6e.cu  gemm_6e_dbuf      + double-buffered shared memory and register prefetch
 *                                    (its device code, shared with 6f, in gemm_dbuf.cuh)
 *
 * Each launcher validates all its arguments (gemm_prepare, in gemm.c) before it
 * touches the device, so a bad argument is one line in msg and nothing runs;
 * then it launches its kernel (gemm_6a_naive_kernel, ...) and checks the launch.
 * Any M, N, K >= 1 up to GEMM_MAX_DIM; device pointers d_. 6f, 6e's body reading
 * an image, is a convolution: conv2d_implicit_gemm in conv_im2col_gemm.h.
 * cuBLAS SGEMM (plain FP32) is the reference.
 *
 * Lesson: docs/06_im2col_gemm.md, section "The GEMM progression". */
#ifndef GEMM_H
#define GEMM_H

#include <cuda_runtime_api.h>

#include "conv_cublas.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    GEMM_6A_NAIVE = 0, /* one thread per output, straight from global memory */
    GEMM_6B_SHARED,    /* 32x32 tiles of A and B in shared memory */
    GEMM_6C_REGTILE,   /* 128x128 block tile, 8x8 outputs per thread in registers */
    GEMM_6D_FLOAT4,    /* + float4 loads and stores, A stored transposed in shared */
    GEMM_6E_DBUF,      /* + double-buffered shared memory and register prefetch */
    GEMM_CUBLAS,       /* cuBLAS SGEMM, CUBLAS_DEFAULT_MATH (no TF32) */
    GEMM_VARIANT_COUNT
} gemm_variant;

/* "6a".."6e", "cublas"; and a longer description for tables. */
const char *gemm_variant_tag(gemm_variant v);
const char *gemm_variant_name(gemm_variant v);
/* Parses a tag ("6a".."6e", "cublas"); CONV_ERR_INVALID naming --variant otherwise. */
conv_status gemm_variant_parse(const char *text, gemm_variant *v, conv_msg *msg);

/* The largest M, N or K the kernels take: their tile arithmetic is 32-bit for
 * row and column numbers (the element offsets row*K + k are 64-bit). */
#define GEMM_MAX_DIM (2147483647 - 1024)

/* Checks a GEMM before any launch: sizes in [1, GEMM_MAX_DIM], non-null
 * pointers, the number of thread blocks within the grid limit, and a cuBLAS
 * handle for GEMM_CUBLAS. */
conv_status gemm_validate(gemm_variant v, long long m, long long n, long long k, const float *d_a,
                          const float *d_b, const float *d_c, const conv_cublas *cublas,
                          conv_msg *msg);

/* C = A * B on the stream with the chosen variant (cublas may be NULL except
 * for GEMM_CUBLAS). A, B, C row-major with leading dimensions K, N, N. The
 * float4 paths (6d, 6e) are taken when K and N are multiples of 4 and the
 * pointers 16-byte aligned; otherwise the same kernels load element by element. */
conv_status gemm_sgemm(gemm_variant v, int m, int n, int k, const float *d_a, const float *d_b,
                       float *d_c, conv_cublas *cublas, cudaStream_t stream, conv_msg *msg);

/* The individual launchers behind gemm_sgemm (same arguments). */
conv_status gemm_6a_naive(int m, int n, int k, const float *d_a, const float *d_b, float *d_c,
                          cudaStream_t stream, conv_msg *msg);
conv_status gemm_6b_shared(int m, int n, int k, const float *d_a, const float *d_b, float *d_c,
                           cudaStream_t stream, conv_msg *msg);
conv_status gemm_6c_regtile(int m, int n, int k, const float *d_a, const float *d_b, float *d_c,
                            cudaStream_t stream, conv_msg *msg);
conv_status gemm_6d_float4(int m, int n, int k, const float *d_a, const float *d_b, float *d_c,
                           cudaStream_t stream, conv_msg *msg);
conv_status gemm_6e_dbuf(int m, int n, int k, const float *d_a, const float *d_b, float *d_c,
                         cudaStream_t stream, conv_msg *msg);

/* ---- what the launchers share (gemm.c) ---- */

/* The block tile of a kernel: rows x columns of C that one thread block
 * computes. Each kernel file defines its own beside its kernel; gemm_validate
 * and gemm_prepare read them to count thread blocks. */
typedef struct {
    int rows, cols;
} gemm_block_tile;

extern const gemm_block_tile gemm_6a_tile, gemm_6b_tile, gemm_6c_tile, gemm_6d_tile, gemm_6e_tile;

/* Every kernel's grid is one-dimensional: block b computes tile
 * (b / tiles_n, b % tiles_n). Returns the number of blocks over an m x n C
 * and sets tiles_n, the blocks per block row (n <= GEMM_MAX_DIM, so it fits
 * an int; gemm_validate checks the total against the grid limit). */
long long gemm_grid_blocks(gemm_block_tile tile, long long m, long long n, int *tiles_n);

/* What every launcher does before its launch: gemm_validate, the grid over
 * the variant's block tile (gemm_grid_blocks), then whether `kernel` (the
 * instance it is about to launch, `threads` per block, named `name`) fits
 * this device (conv_kernel_fits: registers, shared memory). The launcher
 * launches only when status is CONV_OK (otherwise the message is in msg). */
typedef struct {
    conv_status status;
    unsigned blocks; /* thread blocks */
    int tiles_n;     /* blocks per block row */
} gemm_launch;

gemm_launch gemm_prepare(gemm_variant v, long long m, long long n, long long k, const float *d_a,
                         const float *d_b, const float *d_c, const void *kernel, const char *name,
                         int threads, conv_msg *msg);

/* 1 when the float4 paths may run: K and N multiples of 4 and all three
 * operands 16-byte aligned. */
int gemm_vec_ok(int n, int k, const float *d_a, const float *d_b, const float *d_c);

#ifdef __cplusplus
}
#endif

#endif /* GEMM_H */

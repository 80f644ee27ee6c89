/* Step 06: convolution as a matrix product.
 *
 *   im2col / col2im   the lowering of every filter window into one column (NCHW,
 *                     MXNet/Caffe layout) or one row (NHWC, the HPC101 lab's layout)
 *                     of a matrix, and its adjoint.
 *   GEMM 6a..6e       C[M][N] = A[M][K] * B[K][N], row-major, FP32: naive, shared
 *                     tiles, register tiles, float4 + transposed A, double buffers.
 *                     cuBLAS SGEMM (plain FP32) is the drop-in reference.
 *   pipelines         im2col -> GEMM (-> layout change) for NCHW and NHWC, and
 *                     6f: implicit GEMM (NHWC), whose A-tile loader gathers from
 *                     the image, with no column buffer.
 *
 * Column layouts (cols = C*R*S, rows = N*P*Q output pixels):
 *   NCHW: col[(c*R + r)*S + s][(n*P + p)*Q + q]     a cols x rows matrix;
 *         y' = w[K][cols] * col  is [K][N*P*Q], then permuted to y[N][K][P][Q].
 *   NHWC: col[(n*P + p)*Q + q][(r*S + s)*C + c]     a rows x cols matrix;
 *         y[N*P*Q][K] = col * w[R*S*C][K]  is already y[N][P][Q][K].
 *
 * Every launcher validates all its arguments before it touches the device, so
 * a bad argument is one line in msg and nothing runs. Device pointers d_. */
#ifndef IM2COL_GEMM_H
#define IM2COL_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "conv_cublas.h"
#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the GEMM progression ---- */

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
/* Parses a tag ("6a".."6e", "cublas"); CONV_ERR_INVALID naming --gemm otherwise. */
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

/* ---- im2col and col2im ---- */

/* Floats of the column buffer (C*R*S * N*P*Q, the same for both layouts). */
size_t im2col_col_elems(const conv_params *p);

/* Lowers x (layout p->layout) into d_col (layout above). Grid-stride loops. */
conv_status im2col(const conv_params *p, const float *d_x, float *d_col, cudaStream_t stream,
                   conv_msg *msg);
/* The adjoint: d_x[i] = sum of every column entry im2col copied x[i] into
 * (entries that came from the zero padding are dropped). Each x element is
 * written by one thread (a gather, no atomics). */
conv_status col2im(const conv_params *p, const float *d_col, float *d_x, cudaStream_t stream,
                   conv_msg *msg);

/* ---- the convolution pipelines ---- */

/* Device bytes the im2col pipeline needs besides x, w, y: the column buffer,
 * plus a [K][N*P*Q] GEMM output for NCHW with N > 1 (permuted into y after). */
size_t conv2d_im2col_gemm_workspace_elems(const conv_params *p);

/* Checks the step's own limits on a valid problem: GEMM sizes (rows N*P*Q,
 * depth C*R*S, K) within GEMM_MAX_DIM, and the workspace plus the tensors
 * within `device_bytes` (pass the device's free memory). No CUDA call. */
conv_status conv2d_im2col_gemm_check(const conv_params *p, size_t device_bytes, conv_msg *msg);

/* y = conv(x, w): im2col into d_work, GEMM with variant g (cublas for
 * GEMM_CUBLAS), and for NCHW with N > 1 the permutation into y. d_work must
 * hold conv2d_im2col_gemm_workspace_elems(p) floats (work_elems says how many
 * it holds). */
conv_status conv2d_im2col_gemm(const conv_params *p, const float *d_x, const float *d_w, float *d_y,
                               float *d_work, size_t work_elems, gemm_variant g,
                               conv_cublas *cublas, cudaStream_t stream, conv_msg *msg);

/* The stages of conv2d_im2col_gemm one by one, for the stage timings:
 * the GEMM on an already-filled column buffer, and the NCHW permutation
 * (a no-op returning CONV_OK when the layout needs none). */
conv_status conv2d_im2col_gemm_stage_gemm(const conv_params *p, const float *d_w, float *d_y,
                                          float *d_work, size_t work_elems, gemm_variant g,
                                          conv_cublas *cublas, cudaStream_t stream, conv_msg *msg);
conv_status conv2d_im2col_gemm_stage_permute(const conv_params *p, float *d_y, float *d_work,
                                             size_t work_elems, cudaStream_t stream, conv_msg *msg);

/* 6f: implicit GEMM for NHWC (x[N][H][W][C], w[R][S][C][K], y[N][P][Q][K]):
 * 6e's kernel whose A-tile loader computes (n, p, q) and (r, s, c) for each
 * element and reads x directly (zero outside the image). No workspace. NCHW is
 * rejected (CONV_ERR_UNSUPPORTED). */
conv_status conv2d_implicit_gemm(const conv_params *p, const float *d_x, const float *d_w,
                                 float *d_y, cudaStream_t stream, conv_msg *msg);

/* The pipelines behind the conv_gpu_conv signature of common/conv_gpu_run.h
 * (for the step program and conv_bench): ctx is a conv2d_pipeline. */
typedef struct {
    gemm_variant g; /* the GEMM of the im2col pipeline */
    int implicit;   /* 1: 6f, conv2d_implicit_gemm (g, d_work unused) */
    float *d_work;  /* conv2d_im2col_gemm_workspace_elems(p) floats */
    size_t work_elems;
    conv_cublas *cublas; /* for GEMM_CUBLAS */
} conv2d_pipeline;

conv_status conv2d_pipeline_run(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                                float *d_y, cudaStream_t stream, conv_msg *msg);

/* ---- device-side helpers for large GEMMs (program and tests) ---- */

/* Uniform floats in [lo, hi) from a hash of (seed, index), generated on the
 * device (the lab's A matrix is 5.9 GB: no host copy is made). */
conv_status gemm_fill_uniform(float *d_x, size_t count, uint64_t seed, float lo, float hi,
                              cudaStream_t stream, conv_msg *msg);

/* Sampled check of C = A*B on the device: `samples` entries (the first and the
 * last always among them) computed in double on the host from the rows of A
 * and columns of B they need (downloaded one by one), each compared within
 * gamma_K * sum|a*b|. mismatches and the first bad entry are returned; the
 * description goes to verdict. Returns an error only when a copy failed. */
typedef struct {
    size_t checked, mismatches, nan_count;
    long long first_row, first_col;
    double first_got, first_want, first_tol, max_abs_err;
} gemm_check_report;
conv_status gemm_check_sampled(int m, int n, int k, const float *d_a, const float *d_b,
                               const float *d_c, size_t samples, uint64_t seed,
                               gemm_check_report *rep, char *verdict, size_t verdict_len,
                               conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* IM2COL_GEMM_H */

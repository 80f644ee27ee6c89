/* Step 06's rows (common/conv_rows.h): the convolution through im2col and
 * each GEMM of the progression, and 6f, the implicit GEMM, as the step's
 * program, conv_bench and the tests run them; and the GEMMs alone, each as a
 * 1x1 convolution, for the 06_gemm program. */
#ifndef IM2COL_GEMM_ROWS_H
#define IM2COL_GEMM_ROWS_H

#include "conv_rows.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "<key> im2col + <GEMM>" for 6a..6e (keys "6a".."6e", e.g. "6e im2col +
 * double buffered"), "im2col + cuBLAS SGEMM" (key "cublas") and "6f
 * implicit GEMM" (key "6f", NHWC only). Each im2col row allocates its column
 * buffer (and cuBLAS its handle) around its own measurement, and after a
 * verified run times its stages (im2col, GEMM, permutation) into its
 * verdict. select is unused; returns how many rows were written. */
int conv_im2col_gemm_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The stage times an im2col row measured (0 where not measured). Returns 0
 * for rows that are not step 06 im2col rows. */
typedef struct {
    gemm_variant gemm;
    double im2col_ms, gemm_ms, permute_ms;
} im2col_gemm_stages;
int conv_im2col_gemm_row_stages(const conv_row *row, im2col_gemm_stages *out);

/* A GEMM C[M][N] = A[M][K] * B[K][N] is the 1x1 convolution of an NHWC image
 * of M pixels (N = 1, H = M, W = 1) with C = K channels by K = N filters:
 * x is A, w is B, y is C, in the same row-major order. This gives that
 * problem, so that the GEMMs are measured and verified by the same harness. */
conv_params gemm_as_conv_params(long long m, long long n, long long k);
/* M, N and K of such a problem. */
void gemm_of_conv_params(const conv_params *p, long long *m, long long *n, long long *k);

/* "<key> GEMM <name>" for 6a..6e (keys "6a".."6e", e.g. "6e GEMM double
 * buffered") and "cuBLAS SGEMM" (key "cublas"), each running the GEMM on a
 * problem of gemm_as_conv_params(). */
int conv_gemm_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

#ifdef __cplusplus
}
#endif

#endif /* IM2COL_GEMM_ROWS_H */

/* Step 09's rows (common/conv_rows.h): its kernels as the step's program,
 * conv_bench and the tests run them. */
#ifndef HOPPER_ROWS_H
#define HOPPER_ROWS_H

#include "conv_rows.h"
#include "hopper.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HOPPER_ROW_COUNT 5

/* "9a wgmma TF32", "9b wgmma TF32, TMA" and "9c wgmma TF32, TMA, split-K"
 * (the slices its rule picks for the GPU's SMs), then "9a-fp16 wgmma FP16"
 * and "9b-fp16 wgmma FP16, TMA" (class FP16, 8b-fp16's bound); each row's
 * key is its first word. The TF32 rows are class TF32, each verified within the bound of x
 * truncated to TF32 (step 08's TC_TF32_XTRUNC, tc_host.h); NCHW problems (the rows' check), and
 * GPUs or builds without wgmma (compute capability 9.0, sm_90a code: the launchers' refusal),
 * skipped with the reason. select is unused; returns how many rows were written. */
int conv_hopper_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The GEMM alone, C = A * B as the 1x1 NHWC problem of gemm_as_conv_params
 * (06_im2col_gemm/im2col_gemm_rows.h): step 08's "cuBLAS TF32" (key
 * "cublas-tf32") and "8b mma.sync TF32" (key "8b"), then the rows above.
 * Returns how many rows were written. */
int conv_hopper_gemm_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The adapter the rows hand to the harness: ctx is the row's kernel. */
conv_status conv2d_hopper_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                               float *d_y, cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* HOPPER_ROWS_H */

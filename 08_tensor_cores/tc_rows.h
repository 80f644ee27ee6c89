/* Step 08's rows (common/conv_rows.h): its kernels as the step's program,
 * conv_bench and the tests run them. */
#ifndef TC_ROWS_H
#define TC_ROWS_H

#include <stdio.h>

#include "conv_cli.h"
#include "conv_rows.h"
#include "tc_host.h"
#include "tensor_cores.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_ROW_COUNT 6

/* "8a WMMA TF32", "8b mma.sync TF32", "8b-xt mma.sync TF32, x truncated"
 * (8b with x not rounded: the arithmetic of step 09's wgmma kernels), "8c
 * mma.sync 3xTF32", "8a-fp16 WMMA FP16" and "8b-fp16 mma.sync FP16" (each
 * row's key is its first word), each verified within its own bound
 * (tc_host.h); NCHW problems (but for 8b, 8b-xt and 8c), and GPUs or
 * builds without the tensor cores a row needs, skipped with the reason. select is unused; returns
 * how many rows were written. */
int conv_tc_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The GEMM alone, C = A * B as the 1x1 NHWC problem of gemm_as_conv_params
 * (06_im2col_gemm/im2col_gemm_rows.h): "cuBLAS TF32" (key
 * "cublas-tf32", cuBLAS with TF32 allowed, within the TF32 bound), then the
 * rows above. Returns how many rows were written. */
int conv_tc_gemm_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* mma.sync's rate in precision prec on this GPU in TFLOP/s (tc_peak.c):
 * tc_mma_peak on 4 blocks per SM (16 warps), timed with warmup and repeat
 * as the rows are (the median), every thread's sum checked. */
conv_status tc_mma_peak_tflops(tc_peak_precision prec, int warmup, int repeat, double *tflops,
                               conv_msg *msg);
/* The programs' line for both rates, TF32 and FP16, with the time a problem
 * of `flop` operations would take at each; where one cannot be measured,
 * the reason, and the other. */
void tc_print_mma_peak(FILE *out, const conv_cli_options *opt, double flop);

/* The FP16 rows' preparation (8a-fp16, 8b-fp16, step 09's 9b-fp16): inputs
 * FP16 can hold (else CONV_ERR_UNSUPPORTED naming the tensor: the row is
 * skipped); then, unless d_work is NULL, a workspace for the FP16 copies of
 * x and w (`what` names it, for an allocation's failure) and the copies
 * (conv2d_tc_fp16_copies()), made before the measurement as the cuDNN FP16
 * row converts its inputs before its own: both time the convolution of
 * tensors already in half precision. The caller frees *d_work. */
conv_status tc_fp16_row_inputs(conv_gpu_problem *pb, float **d_work, size_t *work_elems,
                               const char *what, conv_msg *msg);

/* The adapter the rows hand to the harness: ctx is the row's variant. */
conv_status conv2d_tc_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                           float *d_y, cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* TC_ROWS_H */

/* Step 10's rows (common/conv_rows.h): its versions of dgrad and wgrad as the
 * step's program, conv_bench and the tests run them. */
#ifndef BACKWARD_ROWS_H
#define BACKWARD_ROWS_H

#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rows of p->pass (none for the forward pass), each keyed by its version:
 * "10a dgrad naive" or "10a wgrad naive" (key "10a"), "10b dgrad implicit
 * GEMM" or "10b wgrad implicit GEMM, split-K" (key "10b", its workspace
 * allocated by the row's setup), the same on TF32 tensor cores (key "10c",
 * class TF32, NHWC), and dgrad as a forward convolution, "10d dgrad =
 * forward 6f" (FP32), "... 8b" and "... 8e" (TF32; key "10d", stride 1,
 * NHWC, the flipped filter's workspace allocated by the row's setup).
 * select is unused; returns how many rows were written. */
int conv_backward_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

#ifdef __cplusplus
}
#endif

#endif /* BACKWARD_ROWS_H */

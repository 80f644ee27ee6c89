/* Step 03's rows (common/conv_rows.h): the five 1D kernels as the step's
 * program, conv_bench and the tests run them, on the 1D problem written as a
 * 2D one (conv1d_as_conv_params() of common/conv_params.h). */
#ifndef TILED_1D_ROWS_H
#define TILED_1D_ROWS_H

#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "03 naive" (key "naive"), "03 naive x4" ("naive4"), "03 strategy 1" ("1"),
 * "03 strategy 2" ("2"), "03 strategy 3" ("3"). Each row uploads the mask to
 * constant memory before it runs and is skipped on problems that are not 1D.
 * select is unused; returns how many rows were written. */
int conv_tiled_1d_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The adapter the rows hand to the harness: ctx points at a conv1d_strategy;
 * the mask is the one in constant memory (d_w is not read). */
conv_status conv1d_tiled_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                              float *d_y, cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* TILED_1D_ROWS_H */

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

#ifdef __cplusplus
}
#endif

#endif /* TILED_1D_ROWS_H */

/* Step 03's rows (common/conv_rows.h): the five 1D kernels as the step's
 * program, conv_bench and the tests run them, on the 1D problem written as a
 * 2D one (conv1d_as_conv_params() of common/conv_params.h). */
#ifndef TILED_1D_ROWS_H
#define TILED_1D_ROWS_H

#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "3a naive", "3b naive x4", "3c strategy 1", "3d strategy 2" and
 * "3e strategy 3", with the keys 3a to 3e (3c to 3e are the lecture's
 * strategies 1 to 3). Each row uploads the mask to constant memory before it
 * runs and is skipped on problems that are not 1D. select is unused; returns
 * how many rows were written. */
int conv_tiled_1d_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

#ifdef __cplusplus
}
#endif

#endif /* TILED_1D_ROWS_H */

/* Step 02's rows (common/conv_rows.h): its two kernels as the step's program,
 * conv_bench and the tests run them. */
#ifndef NAIVE_ROWS_H
#define NAIVE_ROWS_H

#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "2a naive grid-stride" (key "2a") and "2b naive 16x16 blocks"
 * (key "2b"). select is unused; returns how many rows were written. */
int conv_naive_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

#ifdef __cplusplus
}
#endif

#endif /* NAIVE_ROWS_H */

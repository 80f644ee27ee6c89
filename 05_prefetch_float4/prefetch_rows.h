/* Step 05's rows (common/conv_rows.h): its kernels as the step's program,
 * conv_bench and the tests run them. */
#ifndef PREFETCH_ROWS_H
#define PREFETCH_ROWS_H

#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "5a oc-outer" (the article's loop order, output channel outer) and "5a"
 * (input channel outer, 8 output channels in registers), both with key "5a",
 * and "5b", the tuned kernel (key "5b"). select is unused; returns how many
 * rows were written. */
int conv_prefetch_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The adapter the rows hand to the harness: ctx points at a
 * conv_prefetch_variant, which picks the launcher. */
conv_status conv2d_prefetch_conv(void *ctx, const conv_params *p, const float *d_x,
                                 const float *d_w, float *d_y, cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* PREFETCH_ROWS_H */

/* Step 07's rows (common/conv_rows.h): the non-fused Winograd convolution
 * with each tile size, as the step's program, conv_bench and the tests run
 * them. */
#ifndef WINOGRAD_ROWS_H
#define WINOGRAD_ROWS_H

#include "conv_rows.h"
#include "winograd_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows written by conv_winograd_rows. */
#define WINO_ROW_COUNT 3

/* "7a F(2x2,3x3)" (key "7a") and "7b F(4x4,3x3)" (key "7b"), the
 * non-fused pipeline, and "7c fused F(4x4,3x3)" (key "7c"). Each
 * allocates its workspace (U, V, M; U alone for 7c) around its own
 * measurement, is verified within Winograd's own error bound
 * (winograd_host.h) and, after a verified run, times its stages into its
 * verdict. Problems other than 3x3, stride 1, dilation 1 are skipped with the
 * reason. select is unused; returns how many rows were written. */
int conv_winograd_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The adapter the rows hand to the harness: ctx is the row's context. */
conv_status conv2d_winograd_conv(void *ctx, const conv_params *p, const float *d_x,
                                 const float *d_w, float *d_y, cudaStream_t stream, conv_msg *msg);

/* The stage times a row measured (ms; 0 where not measured): in the order of
 * wino_stage, or for the fused row (*fused = 1) the filter transform and the
 * fused kernel in ms[0] and ms[1]. Returns 0 for rows that are not step 07
 * rows. */
int conv_winograd_row_stages(const conv_row *row, wino_tile *tile, int *fused, double ms[4]);

#ifdef __cplusplus
}
#endif

#endif /* WINOGRAD_ROWS_H */

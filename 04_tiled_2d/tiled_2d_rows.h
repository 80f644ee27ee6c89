/* Step 04's rows (common/conv_rows.h): every tile configuration of its
 * kernels as the step's program, conv_bench and the tests run them. */
#ifndef TILED_2D_ROWS_H
#define TILED_2D_ROWS_H

#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row per configuration, named "<key> <configuration>" with the key of
 * its strategy ("4a", "4b", "4c": the lecture's strategies 1, 2, 3; "4d": the
 * multi-channel kernel), e.g. "4a 32x32, 4 outputs/thread". The
 * single-channel strategies are listed for problems with C = K = 1, or when
 * select names them (then the rows say why they cannot run); the
 * multi-channel kernel twice where its weights fit in constant memory
 * (constant, then global weights, to compare them), else once. Returns how
 * many rows were written. */
int conv_tiled_2d_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The adapter the rows hand to the harness: ctx is a conv_tiled_choice. */
conv_status conv2d_tiled_conv(void *ctx, const conv_params *p, const float *d_x, const float *d_w,
                              float *d_y, cudaStream_t stream, conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* TILED_2D_ROWS_H */

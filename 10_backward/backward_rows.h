/* Step 10's rows (common/conv_rows.h): its versions of dgrad and wgrad as the
 * step's program, conv_bench and the tests run them. */
#ifndef BACKWARD_ROWS_H
#define BACKWARD_ROWS_H

#include "conv_rows.h"
#include "winograd_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rows of p->pass (none for the forward pass), each keyed by its version:
 * "10a dgrad naive" or "10a wgrad naive" (key "10a"), "10b dgrad implicit
 * GEMM" or "10b wgrad implicit GEMM, split-K" (key "10b", its workspace
 * allocated by the row's setup), the same on TF32 tensor cores (key "10c",
 * class TF32, NHWC), and dgrad as a forward convolution, "10d dgrad =
 * forward 6f" (FP32), "... 7b" (FP32, either layout, within Winograd's
 * bound), "... 8b" and "... 9b" (TF32; key "10d", stride 1, NHWC but for
 * 7b, the flipped filter's workspace allocated by the row's setup).
 * select is unused; returns how many rows were written. */
int conv_backward_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

/* The tolerance of dgrad run as a forward convolution by 7b (10d): at
 * dx[n][c][ih][iw], Winograd's bound (step 07, F(4x4, 3x3)) at the output
 * (n, c, ih, iw) of dgrad's forward problem, computed from dy and the
 * flipped filter, which tol keeps on the host. tol starts zeroed. */
typedef struct {
    wino_tolerance wino; /* the forward problem, dy and h_wf */
    float *h_wf;         /* the flipped filter (owned) */
} conv_backward_wino_tolerance;

/* Frees what tol held, then builds the forward problem of pb's dgrad
 * (conv2d_backward_data_forward_params: CONV_ERR_UNSUPPORTED where 10d
 * cannot run it), flips pb's filter into h_wf and sets *opts as
 * wino_tolerance_prepare does, from dy (pb's y buffer), with the whole table
 * when pb verifies every element. CONV_ERR_OUT_OF_MEMORY without host memory. */
conv_status conv_backward_wino_tolerance_prepare(conv_backward_wino_tolerance *tol,
                                                 const conv_gpu_problem *pb, conv_verify_opts *opts,
                                                 conv_msg *msg);

/* Frees the flipped filter and the table; tol may be prepared again. */
void conv_backward_wino_tolerance_free(conv_backward_wino_tolerance *tol);

#ifdef __cplusplus
}
#endif

#endif /* BACKWARD_ROWS_H */

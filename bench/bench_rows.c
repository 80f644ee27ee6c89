#include "bench_rows.h"

#include <stdio.h>

#include "auto_rows.h"
#include "backward_rows.h"
#include "bench_steps.h"
#include "conv_cpu.h"
#include "cpu_rows.h"
#include "im2col_gemm_rows.h"
#include "hopper_rows.h"
#include "naive_rows.h"
#include "prefetch_rows.h"
#include "tiled_1d_rows.h"
#include "tc_rows.h"
#include "tiled_2d_rows.h"
#include "winograd_rows.h"

/* Storage for the reasons of the CPU rows skipped by their estimate. */
static char estimates[4][64];

/* A backward pass: cuDNN's (FP32 and TF32, both APIs), step 10's rows, its
 * naive version as the "naive GPU" column, and conv2d_auto's. */
static int backward_rows(const conv_params *p, unsigned steps, conv_row *rows, int max_rows)
{
    int n = 0;
    if ((steps & BENCH_STEP_CUDNN) && max_rows >= 4) {
        n += conv_rows_add_cudnn(rows, BENCH_REF_CUDNN);
        rows[n++] = conv_row_cudnn_tf32();
        rows[n++] = conv_row_cudnn_graph(CONV_CLASS_TF32);
    }
    if (steps & BENCH_STEP_10) {
        int first = n;
        n += conv_backward_rows(p, NULL, rows + n, max_rows - n);
        conv_rows_mark_ref(rows + first, n - first, "10a", BENCH_REF_NAIVE);
    }
    if (steps & BENCH_STEP_AUTO) /* conv2d_auto's choice for the pass, timed */
        n += conv_auto_rows(p, NULL, rows + n, max_rows - n);
    return n;
}

int bench_rows(const conv_params *p, unsigned steps, conv_row *rows, int max_rows)
{
    if (p->pass != CONV_PASS_FORWARD)
        return backward_rows(p, steps, rows, max_rows);
    int n = 0;
    if (steps & BENCH_STEP_01) {
        int first = n;
        n += conv_cpu_rows(p, NULL, rows + n, max_rows - n);
        conv_rows_mark_ref(rows + first, n - first, "1a", BENCH_REF_SERIAL);
        conv_rows_mark_ref(rows + first, n - first, "1b", BENCH_REF_OPENMP);
        for (int i = first; i < n && i - first < 4; ++i) {
            double s = rows[i].host == conv2d_cpu_openmp
                           ? bench_openmp_seconds(p, conv2d_cpu_openmp_threads())
                           : bench_serial_seconds(p);
            if (s > BENCH_CPU_MAX_SECONDS) {
                snprintf(estimates[i - first], sizeof estimates[0], "estimated %.0f s per run", s);
                conv_row_skip(&rows[i], estimates[i - first]);
            }
        }
    }
    if ((steps & BENCH_STEP_CUDNN) && n + 1 < max_rows)
        n += conv_rows_add_cudnn(rows + n, BENCH_REF_CUDNN); /* the graph API's autotuned */
    if (steps & BENCH_STEP_02) {
        int first = n;
        n += conv_naive_rows(p, NULL, rows + n, max_rows - n);
        conv_rows_mark_ref(rows + first, n - first, "2a", BENCH_REF_NAIVE);
    }
    if ((steps & BENCH_STEP_03) && conv1d_is_1d_problem(p)) /* 1D kernels: the 1D problem */
        n += conv_tiled_1d_rows(p, NULL, rows + n, max_rows - n);
    if (steps & BENCH_STEP_04)
        n += conv_tiled_2d_rows(p, NULL, rows + n, max_rows - n);
    if (steps & BENCH_STEP_05)
        n += conv_prefetch_rows(p, NULL, rows + n, max_rows - n);
    if (steps & BENCH_STEP_06)
        n += conv_im2col_gemm_rows(p, NULL, rows + n, max_rows - n);
    if (steps & BENCH_STEP_07)
        n += conv_winograd_rows(p, NULL, rows + n, max_rows - n);
    if ((steps & (BENCH_STEP_08 | BENCH_STEP_09)) && n + 2 < max_rows) {
        rows[n++] = conv_row_cudnn_tf32(); /* a labelled row: TF32 against TF32 */
        rows[n++] = conv_row_cudnn_graph(CONV_CLASS_TF32);
    }
    if ((steps & (BENCH_STEP_08 | BENCH_STEP_09)) && n + 1 < max_rows) {
        rows[n++] = conv_row_cudnn_fp16(); /* and FP16 (8b-fp16, 9b-fp16) against FP16: */
        rows[n++] = conv_row_cudnn_graph(CONV_CLASS_FP16); /* both APIs, as for FP32 */
    }
    if (steps & BENCH_STEP_08)
        n += conv_tc_rows(p, NULL, rows + n, max_rows - n);
    if (steps & BENCH_STEP_09)
        n += conv_hopper_rows(p, NULL, rows + n, max_rows - n);
    if (steps & BENCH_STEP_AUTO) /* the launcher above the steps: what it picks, timed */
        n += conv_auto_rows(p, NULL, rows + n, max_rows - n);
    return n;
}

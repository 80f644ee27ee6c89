/* The named problems of conv_bench, the --steps filter and the skip rules:
 * plain C with no CUDA, so the tests check them on any machine. */
#ifndef BENCH_PROBLEMS_H
#define BENCH_PROBLEMS_H

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *name;  /* the --problem value */
    const char *about; /* where it comes from */
    conv_params params;
    int fixed_layout; /* 1: the layout is part of the problem (--layout does not change it) */
} bench_problem;

/* The table, in the order `--problem all` runs it. hpc101-nhwc and
 * cutlass-nhwc are hpc101 and cutlass in the lab's NHWC layout (input
 * x[N][H][W][C], filter w[R][S][C][K]), where step 06's implicit GEMM (6f) runs. The 1D problem
 * (conv1d) is a 2D convolution with N = C = K = H = R = 1, width W, mask S and "same" padding pad_w
 * = (S-1)/2, so that cuDNN and every 2D check apply to it. */
const bench_problem *bench_problems(int *count);

/* Looks a --problem value up. "all" gives every problem (first = table,
 * *count = size); a name gives one. Unknown names are CONV_ERR_INVALID with a
 * message listing the known ones. */
conv_status bench_problem_select(const char *name, const bench_problem **first, int *count,
                                 conv_msg *msg);

/* The row groups --steps picks from (a comma-separated list; "all" = every one). */
typedef enum {
    BENCH_STEP_01 = 1u << 0,
    BENCH_STEP_02 = 1u << 1,
    BENCH_STEP_03 = 1u << 2,
    BENCH_STEP_04 = 1u << 3,
    BENCH_STEP_05 = 1u << 4,
    BENCH_STEP_06 = 1u << 5,
    BENCH_STEP_CUDNN = 1u << 6,
    BENCH_STEP_07 = 1u << 7,
    BENCH_STEP_08 = 1u << 8,
    BENCH_STEP_ALL = (1u << 9) - 1
} bench_step;

conv_status bench_parse_steps(const char *list, unsigned *mask, conv_msg *msg);

/* The serial CPU version runs at roughly this rate (measured: 0.6-0.7 GFLOP/s on
 * the build machine and the GPU machine's host; a little lower to be safe). */
#define BENCH_SERIAL_GFLOPS 0.5
/* CPU rows estimated to take longer than this (per run) are skipped. */
#define BENCH_CPU_MAX_SECONDS 5.0

/* Estimated seconds of one run of the serial convolution, and of the OpenMP
 * version on `threads` threads (assumes 80% parallel efficiency). */
double bench_serial_seconds(const conv_params *p);
double bench_openmp_seconds(const conv_params *p, int threads);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_PROBLEMS_H */

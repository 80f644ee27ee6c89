/* What is conv_bench's own: the --steps filter and the estimates that skip
 * the CPU rows of large problems. Plain C with no CUDA, so the tests check
 * them on any machine. The named problems are the course's catalogue
 * (common/conv_problems.h). */
#ifndef BENCH_STEPS_H
#define BENCH_STEPS_H

#include "conv_params.h"
#include "conv_status.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    BENCH_STEP_09 = 1u << 9,
    BENCH_STEP_10 = 1u << 10,   /* the backward pass's versions */
    BENCH_STEP_AUTO = 1u << 11, /* conv2d_auto (library/), one row per class */
    BENCH_STEP_ALL = (1u << 12) - 1
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

#endif /* BENCH_STEPS_H */

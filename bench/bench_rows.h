/* The rows conv_bench measures on a problem: every step's own rows (each
 * step's rows function, the same lists its program and its tests use) beside
 * the references, with conv_bench's one rule of its own: a CPU row estimated
 * to take longer than BENCH_CPU_MAX_SECONDS per run is skipped. */
#ifndef BENCH_ROWS_H
#define BENCH_ROWS_H

#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The "vs" columns of every table. */
enum { BENCH_REF_SERIAL, BENCH_REF_OPENMP, BENCH_REF_NAIVE, BENCH_REF_CUDNN };
#define BENCH_REF_NAMES                                                                            \
    {                                                                                              \
        "serial", "OpenMP", "naive GPU", "cuDNN"                                                   \
    }

/* Fills rows for problem p from the steps in `steps` (a mask of bench_step
 * bits, bench_steps.h). Returns the number of rows. */
int bench_rows(const conv_params *p, unsigned steps, conv_row *rows, int max_rows);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_ROWS_H */

/* The rows conv_bench measures on a problem: step 01 on the CPU, cuDNN and
 * every GPU step's versions, with the skip rules (a CPU row estimated to take
 * longer than BENCH_CPU_MAX_SECONDS; kernels that reject the problem are
 * skipped by conv_rows_run with their launcher's reason). */
#ifndef BENCH_ROWS_H
#define BENCH_ROWS_H

#include "conv_gpu_run.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_MAX_ROWS    64
#define BENCH_HOST_REPEAT 3
/* The "vs" columns of every table. */
enum { BENCH_REF_SERIAL, BENCH_REF_OPENMP, BENCH_REF_NAIVE, BENCH_REF_CUDNN, BENCH_N_REFS };

void bench_ref_names(const char **names);

/* Fills rows for the problem (steps: a mask of bench_step bits; GPU rows only
 * with have_device). Returns the number of rows. */
int bench_rows_for(conv_gpu_problem *pb, unsigned steps, int have_device, conv_row *rows,
                   int max_rows);

/* Frees what bench_rows_for allocated for the rows' contexts. */
void bench_rows_release(conv_row *rows, int n_rows);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_ROWS_H */

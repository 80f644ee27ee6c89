/* Step 01's rows (common/conv_rows.h): the CPU convolutions as the step's
 * program, conv_bench and the tests run them. */
#ifndef CPU_ROWS_H
#define CPU_ROWS_H

#include "conv_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "1a serial (CPU)" (key "1a"), "1b OpenMP (N threads)" (key "1b"),
 * and for a 1D problem (conv1d_is_1d_problem) "1c conv1d_cpu_same (CPU)"
 * (key "1c"). Like every step's rows function: select is the program's
 * selection (NULL: all; unused here), and the return value is how many rows
 * (at most max_rows) were written. */
int conv_cpu_rows(const conv_params *p, const char *select, conv_row *rows, int max_rows);

#ifdef __cplusplus
}
#endif

#endif /* CPU_ROWS_H */

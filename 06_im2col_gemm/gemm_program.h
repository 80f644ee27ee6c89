/* What the two programs of the GEMM alone (06_gemm, 08_gemm) share: the
 * flags of the GEMM's shape and the problem they describe. */
#ifndef GEMM_PROGRAM_H
#define GEMM_PROGRAM_H

#include "conv_program.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --m, --n, --k, the first three flags of such a program (its --variant
 * comes after them): opt->number[GEMM_FLAG_M] is M. */
#define GEMM_SHAPE_FLAGS                                                                           \
    {"m", CONV_FLAG_INT, "M", "rows of A and C", "4096", 1, GEMM_MAX_DIM},                         \
        {"n", CONV_FLAG_INT, "N", "columns of B and C", "4096", 1, GEMM_MAX_DIM},                  \
    {                                                                                              \
        "k", CONV_FLAG_INT, "K", "columns of A, rows of B", "4096", 1, GEMM_MAX_DIM                \
    }
enum { GEMM_FLAG_M, GEMM_FLAG_N, GEMM_FLAG_K };

/* The program's one problem (conv_program.problems): the GEMM of --m, --n,
 * --k as a 1x1 NHWC convolution (gemm_as_conv_params). */
int gemm_program_problem(const conv_cli_options *opt, conv_named_problem *out, int max,
                         conv_msg *msg);

/* Its first line: "problem: GEMM M=.. N=.. K=.., .. GFLOP, A+B+C = .. MB",
 * then `more` (e.g. " (as a 1x1 NHWC convolution: ...)", or "") and the
 * line's end. */
void gemm_program_print_problem(FILE *out, const conv_cli_options *opt, const char *more);

#ifdef __cplusplus
}
#endif

#endif /* GEMM_PROGRAM_H */

/* The named problems of the course: one catalogue, plain C with no CUDA,
 * that every program asks by name. Each program that runs a convolution
 * takes --problem NAME|all (conv_cli.h) instead of a shape given by flags;
 * conv_bench runs them beside every step; steps 07 and 08 take their default
 * problem from here (conv_cli_spec's default_problem). Whole networks, as
 * lists of layers, are conv_models.h. */
#ifndef CONV_PROBLEMS_H
#define CONV_PROBLEMS_H

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
} conv_problem;

/* The catalogue, in the order `--problem all` runs it. "lecture" is the
 * problem of conv_params_default(). hpc101-nhwc and cutlass-nhwc are hpc101
 * and cutlass in the lab's NHWC layout (input x[N][H][W][C], filter
 * w[R][S][C][K]), where step 06's implicit GEMM (6f) and step 08 run. The 1D
 * problem (conv1d) is a 2D convolution with N = C = K = H = R = 1, width W,
 * mask S and "same" padding pad_w = (S-1)/2 (conv1d_as_conv_params), so that
 * cuDNN and every 2D check apply to it. */
const conv_problem *conv_problems(int *count);

/* Every name joined by '|', then "all": the choices of --problem, as --help
 * shows them. */
const char *conv_problem_names(void);

/* The problem called `name`; NULL for a name the catalogue does not have. */
const conv_problem *conv_problem_find(const char *name);

/* Looks a --problem value up. "all" gives every problem (first = the table,
 * *count = its size); a name gives that one. An unknown name is
 * CONV_ERR_INVALID with one line that lists the known ones. */
conv_status conv_problem_select(const char *name, const conv_problem **first, int *count,
                                conv_msg *msg);

#ifdef __cplusplus
}
#endif

#endif /* CONV_PROBLEMS_H */

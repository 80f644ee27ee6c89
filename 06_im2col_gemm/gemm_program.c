#include "gemm_program.h"

#include "im2col_gemm_rows.h"

int gemm_program_problem(const conv_cli_options *opt, conv_named_problem *out, int max,
                         conv_msg *msg)
{
    (void)max;
    out[0] =
        (conv_named_problem){"", "",
                             gemm_as_conv_params(opt->number[GEMM_FLAG_M], opt->number[GEMM_FLAG_N],
                                                 opt->number[GEMM_FLAG_K])};
    return conv_params_validate(&out[0].params, msg) == CONV_OK ? 1 : -1;
}

void gemm_program_print_problem(FILE *out, const conv_cli_options *opt, const char *more)
{
    long long m = opt->number[GEMM_FLAG_M], n = opt->number[GEMM_FLAG_N],
              k = opt->number[GEMM_FLAG_K];
    fprintf(out, "problem: GEMM M=%lld N=%lld K=%lld, %.3f GFLOP, A+B+C = %.1f MB%s\n", m, n, k,
            2.0 * m * n * k / 1e9, 4.0 * ((double)m * k + (double)k * n + (double)m * n) / 1e6,
            more);
}

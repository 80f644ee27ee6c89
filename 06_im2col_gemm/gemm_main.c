/* 06_gemm: the GEMM progression alone, C[M][N] = A[M][K] * B[K][N] (FP32,
 * row-major; default 4096^3), each version beside cuBLAS SGEMM in the same
 * run. The GEMM is measured as what it is, a 1x1 convolution in NHWC
 * (gemm_as_conv_params), so that the harness verifies every version against
 * a double reference (sampled on large sizes) with NaN-poisoned output and a
 * canary, exactly as it does the convolutions. The program body, the
 * measurement flags and the exit status are those of every program
 * (common/conv_program.h). */
#include <stdio.h>

#include "conv_program.h"
#include "im2col_gemm_rows.h"

enum { REF_CUBLAS };
enum { FLAG_M, FLAG_N, FLAG_K, FLAG_GEMM }; /* the order of flags[] */

static int problem(const conv_cli_options *opt, conv_named_problem *out, int max, conv_msg *msg)
{
    (void)max;
    out[0] = (conv_named_problem){
        "", "", gemm_as_conv_params(opt->number[FLAG_M], opt->number[FLAG_N], opt->number[FLAG_K])};
    return conv_params_validate(&out[0].params, msg) == CONV_OK ? 1 : -1;
}

static int rows(const conv_cli_options *opt, const conv_params *p, const char *select, conv_row *r,
                int max)
{
    (void)opt;
    int n = conv_gemm_rows(p, select, r, max);
    conv_rows_mark_ref(r, n, "cublas", REF_CUBLAS);
    return n;
}

static void describe(FILE *out, const conv_cli_options *opt, const conv_params *p)
{
    (void)p;
    long long m = opt->number[FLAG_M], n = opt->number[FLAG_N], k = opt->number[FLAG_K];
    fprintf(out,
            "problem: GEMM M=%lld N=%lld K=%lld, %.3f GFLOP, A+B+C = %.1f MB (as a 1x1 NHWC "
            "convolution: %lld pixels, %lld channels, %lld filters)\n",
            m, n, k, 2.0 * m * n * k / 1e9,
            4.0 * ((double)m * k + (double)k * n + (double)m * n) / 1e6, m, k, n);
}

int main(int argc, char **argv)
{
    static const conv_flag flags[] = {
        {"m", CONV_FLAG_INT, "M", "rows of A and C", "4096", 1, GEMM_MAX_DIM},
        {"n", CONV_FLAG_INT, "N", "columns of B and C", "4096", 1, GEMM_MAX_DIM},
        {"k", CONV_FLAG_INT, "K", "columns of A, rows of B", "4096", 1, GEMM_MAX_DIM},
        {"variant", CONV_FLAG_CHOICE, "6a|6b|6c|6d|6e|cublas|all",
         "which versions to run (6a naive, 6b shared, 6c register tiles, 6d float4, 6e double "
         "buffered; cuBLAS SGEMM always runs: it is the reference)",
         "all", 0, 0},
    };
    static const conv_program prog = {
        .cli = {.program = "06_gemm",
                .summary = "Step 06's GEMMs alone: C = A * B with 6a naive .. 6e double-buffered "
                           "register tiles, against cuBLAS SGEMM (FP32, no TF32).",
                CONV_FLAGS(flags),
                .shape = CONV_CLI_SHAPE_NONE,
                .renamed = "--gemm=--variant"},
        .title = "GEMM C[M][N] = A[M][K] * B[K][N], FP32, row-major",
        .select_flag = "variant",
        .ref_names = {"cuBLAS"},
        .problems = problem,
        .rows = rows,
        .describe = describe,
    };
    return conv_program_main(&prog, argc, argv);
}
